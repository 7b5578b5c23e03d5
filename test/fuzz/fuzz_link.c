/* fuzz_link.c - libFuzzer harness: the scan and symbol resolution of a
 * whole link line (extract/resolve.c): up to four inputs (the data split at
 * "\n--next--\n"), each in a memory file, in a group when the first byte
 * is odd, with -u of a symbol and --whole-archive on the last when the
 * second byte says. Inputs holding bitcode are left out, as in fuzz_scan. */
#include "ex.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  if (n < 2 || memmem(data, n, "BC\xc0\xde", 4) ||
      memmem(data, n, "\xde\xc0\x17\x0b", 4))
    return 0;
  unsigned flags = data[0] | data[1] << 8;
  data += 2;
  n -= 2;
  static const char sep[] = "\n--next--\n";
  struct ex_link_input in[8];
  char paths[4][64];
  int fds[4], nf = 0;
  size_t k = 0;
  if (flags & 1)
    in[k++] = (struct ex_link_input){EX_LINK_GROUP_START, NULL, 0};
  if (flags & 4)
    in[k++] = (struct ex_link_input){EX_LINK_UNDEFINED, "main", 0};
  while (nf < 4) {
    const unsigned char *end = memmem(data, n, sep, sizeof sep - 1);
    size_t len = end ? (size_t)(end - data) : n;
    if ((fds[nf] = memfd_create("input", 0)) < 0)
      break;
    if (write(fds[nf], data, len) != (ssize_t)len) {
      close(fds[nf]);
      break;
    }
    snprintf(paths[nf], sizeof paths[nf], "/proc/self/fd/%d", fds[nf]);
    in[k++] = (struct ex_link_input){EX_LINK_FILE, paths[nf], 0};
    nf++;
    if (!end)
      break;
    n -= len + sizeof sep - 1;
    data = end + sizeof sep - 1;
  }
  if (nf && (flags & 2))
    in[k - 1].whole_archive = 1;
  if (flags & 1)
    in[k++] = (struct ex_link_input){EX_LINK_GROUP_END, NULL, 0};
  struct ex_set set = {0};
  struct lw_diag d = {0};
  struct lw_strvec always = {0};
  ex_scan_link(&set, in, k, 1, &always, &d);
  ex_set_free(&set);
  for (int i = 0; i < nf; i++)
    close(fds[i]);
  return 0;
}
