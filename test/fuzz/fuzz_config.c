/* fuzz_config.c - libFuzzer harness: the YAML device configuration
 * (--device-config-file), read from a memory file. */
#include "aot.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  int fd = memfd_create("config", 0);
  if (fd < 0)
    return 0;
  if (write(fd, data, n) == (ssize_t)n) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct aot_config c;
    struct lw_diag d = {0};
    aot_config_load(&c, path, &d);
    aot_config_free(&c); /* what it read, whether or not it failed */
  }
  close(fd);
  return 0;
}
