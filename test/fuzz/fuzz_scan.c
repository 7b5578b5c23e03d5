/* fuzz_scan.c - libFuzzer harness: one input of any container format, found
 * by content as fatlink finds it (ELF, COFF, archives GNU/BSD/thin/nested,
 * OffloadBinary v1-3, bundles binary/text, CCOB v1-3 with zlib or zstd).
 * Inputs holding LLVM bitcode are left out: LLVM's reader is not hardened
 * (fatlink turns its crashes into errors, which a fuzzer cannot see). */
#include "ex.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  if (memmem(data, n, "BC\xc0\xde", 4) ||
      memmem(data, n, "\xde\xc0\x17\x0b", 4))
    return 0;
  struct ex_set set = {0};
  struct lw_diag d = {0};
  ex_scan_buffer(&set, data, n, "fuzz", &d);
  ex_set_free(&set);
  return 0;
}
