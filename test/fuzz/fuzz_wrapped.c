/* fuzz_wrapped.c - libFuzzer harness: the SYCL binaries descriptor of a
 * linked program (extract/wrapped.c: ELF segments, relocations, the
 * descriptor's pointers). */
#include "ex.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  struct ex_wrapped w;
  struct lw_diag d = {0};
  if (ex_wrapped_read(data, n, "fuzz", &w, &d) == 0)
    ex_wrapped_free(&w);
  return 0;
}
