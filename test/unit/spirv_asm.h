/* spirv_asm.h - SPIR-V for the unit tests: modules assembled from text by
 * SPIRV-Tools, and checked by its validator (through dl.h). Include after
 * check.h and dl.h, with kDefaultMaxIdBound renamed (libspirv.h defines
 * it, and fatlink's library holds it too). */
#ifndef SPIRV_ASM_H
#define SPIRV_ASM_H
#include <spirv-tools/libspirv.h>
#include <stdio.h>
#include <string.h>

static int assemble(const char *text, struct lw_buf *out) {
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_4);
  spv_binary bin = NULL;
  spv_diagnostic diag = NULL;
  int rc = spvTextToBinary(ctx, text, strlen(text), &bin, &diag) != SPV_SUCCESS;
  if (rc && diag)
    fprintf(stderr, "assemble: %s\n", diag->error);
  if (!rc) {
    out->len = 0;
    rc = lw_buf_append(out, bin->code, bin->wordCount * 4);
  }
  spvBinaryDestroy(bin);
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  return rc;
}

static int valid(const struct lw_buf *b) {
  struct lw_diag d = {0};
  int rc = dl_spirv_validate(b->data, b->len, &d);
  if (rc)
    fprintf(stderr, "validate: %s\n", d.msg);
  return rc == 0;
}
#endif
