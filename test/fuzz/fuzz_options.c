/* fuzz_options.c - libFuzzer harness: the wrapper's argv (options mixed with
 * linker arguments, -Wl and -Xlinker pieces, "--") and, in a memory file,
 * a response file it names (quoting, nesting into itself). The input is
 * NUL-separated arguments; the first one, when it starts with '@', is the
 * response file's text instead. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  char *buf = malloc(n + 1);
  if (!buf)
    return 0;
  memcpy(buf, data, n);
  buf[n] = 0;
  char *argv[66] = {"fatlink"};
  int argc = 1;
  char rsp[64] = "";
  int fd = -1;
  size_t at = 0;
  if (n && buf[0] == '@') {
    size_t len = strnlen(buf, n);
    fd = memfd_create("rsp", 0);
    if (fd >= 0 && write(fd, buf + 1, len - 1) == (ssize_t)(len - 1)) {
      snprintf(rsp, sizeof rsp, "@/proc/self/fd/%d", fd);
      argv[argc++] = rsp;
    }
    at = len + 1;
  }
  while (at < n && argc < 64) {
    argv[argc++] = buf + at;
    at += strlen(buf + at) + 1;
  }
  argv[argc] = NULL;
  struct lw_options o;
  struct lw_diag d = {0};
  lw_options_parse(argc, argv, &o, &d);
  lw_options_free(&o);
  if (fd >= 0)
    close(fd);
  free(buf);
  return 0;
}
