/* aspects.c - SYCL aspects by name and number (cmake/aspects.def, as the
 * DPC++ runtime numbers them): data that the device checks (devlink/) and
 * the device configuration (aot/) both read. */
#include "lw_base.h"

#include <string.h>

static const struct {
  const char *name;
  int value;
} aspects[] = {
#define ASPECT(n, v) {#n, v},
#include "aspects.def"
#undef ASPECT
};

const char *lw_aspect_name(long long value) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(aspects); i++)
    if (aspects[i].value == value)
      return aspects[i].name;
  return NULL;
}

int lw_aspect_number(const char *name, size_t len) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(aspects); i++)
    if (strlen(aspects[i].name) == len &&
        memcmp(aspects[i].name, name, len) == 0)
      return aspects[i].value;
  return -1;
}
