/* target.c - maps a SYCL device triple to its AOT target by the triple's
 * architecture component (before the first '-'), and that target to the
 * name the DPC++ runtime matches device images by. */
#include "aot.h"

#include <string.h>

static const struct {
  const char *arch;
  enum aot_target t;
} arches[] = {
    {"spir64", AOT_JIT},        {"spirv64", AOT_JIT},
    {"spir64_gen", AOT_GEN},    {"spirv64_gen", AOT_GEN},
    {"spir64_x86_64", AOT_CPU}, {"spirv64_x86_64", AOT_CPU},
    {"spir64_fpga", AOT_FPGA},  {"spirv64_fpga", AOT_FPGA},
};

enum aot_target aot_classify(const char *triple) {
  size_t n = strcspn(triple, "-");
  for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
    if (strlen(arches[i].arch) == n && strncmp(triple, arches[i].arch, n) == 0)
      return arches[i].t;
  return AOT_UNKNOWN;
}

const char *aot_runtime_target(enum aot_target t) {
  switch (t) {
  case AOT_JIT: return "spir64";
  case AOT_GEN: return "spir64_gen";
  case AOT_CPU: return "spir64_x86_64";
  case AOT_FPGA: return "spir64_fpga";
  default: return "<unknown>";
  }
}
