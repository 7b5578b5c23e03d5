/* emit.c - the helper side of parallel SPIR-V emission: LLVM 22's SPIR-V
 * back end keeps process-wide state, so fatlink emits several modules at once
 * in helper processes of itself:
 *   fatlink --fatlink-emit-spirv -O<n> LINKED.bc GROUPS OUT [LLVM-OPTION...]
 * LINKED.bc is the linked module the parent split; GROUPS lists the names
 * each module this helper makes keeps (dl_split_write_groups); the LLVM
 * options are the parent's -mllvm list, already checked. Each module
 * is built and emitted exactly as in process; OUT gets their SPIR-V in
 * order, each as an 8-byte little-endian size and the bytes (one file, as
 * creating files is slow on some file systems). A failure is one line; the
 * parent names the helper. */
#include "internal.h"

#include "dl.h"

#include <stdio.h>
#include <string.h>

int lw_emit_main(int argc, char **argv) {
  struct lw_diag d = {0};
  struct dl_split split = {0};
  int rc = 0, level = 2;
  struct lw_strvec llvm_opts = {0};
  if (argc < 6 || argv[2][0] != '-' || argv[2][1] != 'O' ||
      argv[2][2] < '0' || argv[2][2] > '3')
    rc = lw_error(&d, LW_EINVAL, "usage: fatlink --fatlink-emit-spirv -O<n> "
                                 "LINKED.bc GROUPS OUT [LLVM-OPTION...]");
  else
    level = argv[2][2] - '0';
  for (int i = 6; !rc && i < argc; i++)
    if (lw_strvec_push(&llvm_opts, argv[i]))
      rc = lw_error(&d, LW_ENOMEM, "out of memory");
  if (!rc) {
    dl_init();
    rc = dl_set_llvm_options(&llvm_opts, 1, &d);
  }
  lw_strvec_free(&llvm_opts);
  if (!rc)
    rc = dl_split_read(argv[3], argv[4], &split, &d);
  FILE *f = rc ? NULL : fopen(argv[5], "wb");
  if (!rc && !f)
    rc = lw_error_path(&d, LW_EIO, argv[5], "cannot write");
  for (size_t i = 0; !rc && i < split.n; i++) {
    struct lw_buf out = {0};
    rc = dl_split_emit(&split, i, level, &out, &d);
    unsigned char size[8];
    for (int k = 0; k < 8; k++)
      size[k] = (unsigned char)((uint64_t)out.len >> (8 * k));
    if (!rc && (fwrite(size, 1, 8, f) != 8 ||
                fwrite(out.data, 1, out.len, f) != out.len))
      rc = lw_error_path(&d, LW_EIO, argv[5], "write error");
    lw_buf_free(&out);
  }
  if (f && fclose(f) != 0 && !rc)
    rc = lw_error_path(&d, LW_EIO, argv[5], "write error");
  dl_split_free(&split);
  dl_release();
  if (rc) {
    fprintf(stderr, "fatlink: error: %s\n", d.msg);
    return 1;
  }
  return 0;
}
