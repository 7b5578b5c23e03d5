/* emit.c - the helper side of parallel SPIR-V emission: LLVM 22's SPIR-V
 * back end keeps process-wide state, so fatlink emits several modules at once
 * in helper processes of itself:
 *   fatlink --fatlink-emit-spirv -O<n> LINKED.bc GROUPS
 * LINKED.bc is the linked module the parent split; GROUPS lists, for each
 * module this helper makes, its output path and the names it keeps
 * (dl_split_write_groups). Each module is built and emitted exactly as in
 * process. A failure is one line; the parent names the helper. */
#include "internal.h"

#include "dl.h"

#include <stdio.h>
#include <string.h>

int lw_emit_main(int argc, char **argv) {
  struct lw_diag d = {0};
  struct dl_split split = {0};
  struct lw_strvec outputs = {0};
  int rc = 0, level = 2;
  if (argc != 5 || argv[2][0] != '-' || argv[2][1] != 'O' ||
      argv[2][2] < '0' || argv[2][2] > '3')
    rc = lw_error(&d, LW_EINVAL, "usage: fatlink --fatlink-emit-spirv -O<n> "
                                 "LINKED.bc GROUPS");
  else
    level = argv[2][2] - '0';
  if (!rc) {
    dl_init();
    rc = dl_split_read(argv[3], argv[4], &split, &outputs, &d);
  }
  for (size_t i = 0; !rc && i < split.n; i++) {
    struct dl_module *m = NULL;
    struct lw_buf out = {0};
    rc = dl_split_module(&split, i, &m, &d);
    if (!rc)
      rc = dl_codegen(m, level, DL_OBJECT, &out, &d);
    if (!rc) {
      FILE *f = fopen(outputs.v[i], "wb");
      if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f))
        rc = lw_error_path(&d, LW_EIO, outputs.v[i], "cannot write");
    }
    dl_module_free(m);
    lw_buf_free(&out);
  }
  dl_split_free(&split);
  dl_release();
  lw_strvec_free(&outputs);
  if (rc) {
    fprintf(stderr, "fatlink: error: %s\n", d.msg);
    return 1;
  }
  return 0;
}
