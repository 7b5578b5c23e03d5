/* bitcode.c - LLVM bitcode files: fat bitcode (clang -fembed-offload-object
 * with -emit-llvm, or LTO inputs) carries OffloadBinary blobs in globals
 * named by the !llvm.embedded.objects metadata, each an MDNode
 * { ptr @global, !"<section>" }; those for section .llvm.offloading hold
 * device code. The module is loaded lazily through the LLVM-C API (function
 * bodies are never materialised), the blobs are copied out, and the module is
 * dropped. A bitcode file without such metadata is a plain host input. */
#include "internal.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int match_bitcode(const unsigned char *head, size_t len) {
  return ex_sniff_image_kind(head, len) == EX_IMG_BITCODE;
}

/* Copies the blob of one embedded-object node and parses it. */
static int take_node(struct ex_set *set, LLVMValueRef node,
                     const char *origin, struct lw_diag *d) {
  unsigned n = LLVMGetMDNodeNumOperands(node);
  if (n < 2)
    return 0;
  LLVMValueRef ops[2];
  LLVMValueRef *all = calloc(n, sizeof *all);
  if (!all)
    return lw_error(d, LW_ENOMEM, "out of memory");
  LLVMGetMDNodeOperands(node, all);
  ops[0] = all[0];
  ops[1] = all[1];
  free(all);
  unsigned slen = 0;
  const char *section = ops[1] ? LLVMGetMDString(ops[1], &slen) : NULL;
  if (!section || slen != 16 || memcmp(section, ".llvm.offloading", 16) != 0)
    return 0;
  if (!ops[0] || !LLVMIsAGlobalVariable(ops[0]))
    return 0;
  LLVMValueRef init = LLVMGetInitializer(ops[0]);
  if (!init || !LLVMIsAConstantDataSequential(init))
    return 0;
  size_t len = 0;
  const char *bytes = LLVMGetRawDataValues(init, &len);
  unsigned char *copy = malloc(len ? len : 1);
  if (!copy)
    return lw_error(d, LW_ENOMEM, "out of memory");
  memcpy(copy, bytes, len);
  if (ex__own(set, copy, len, 0))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return ex__parse_offload_binaries(set, copy, len, origin, "bitcode", d);
}

/* Without a handler LLVM prints a reader error and exits; keep the first
 * error's text for our one-line message instead. */
static void keep_error(LLVMDiagnosticInfoRef info, void *text) {
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || *(char *)text)
    return;
  char *s = LLVMGetDiagInfoDescription(info);
  snprintf(text, 256, "%s", s);
  LLVMDisposeMessage(s);
}

int ex__open_bitcode(const unsigned char *buf, size_t len, const char *origin,
                     LLVMContextRef *ctx, LLVMModuleRef *mod,
                     struct lw_diag *d) {
  char why[256] = "";
  *ctx = LLVMContextCreate();
  *mod = NULL;
  LLVMContextSetDiagnosticHandler(*ctx, keep_error, why);
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(
      (const char *)buf, len, origin, 0);
  int rc = 0;
  if (!mb)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  else if (LLVMGetBitcodeModuleInContext2(*ctx, mb, mod)) {
    /* On success the module owns the buffer (which does not own `buf`). */
    LLVMDisposeMemoryBuffer(mb);
    rc = lw_error_path(d, LW_EFORMAT, origin, "invalid bitcode%s%s",
                       why[0] ? ": " : "", why);
  }
  LLVMContextSetDiagnosticHandler(*ctx, NULL, NULL);
  if (rc) {
    LLVMContextDispose(*ctx);
    *ctx = NULL;
  }
  return rc;
}

static int scan_bitcode(struct ex_set *set, const unsigned char *buf,
                        size_t len, const char *origin, struct lw_diag *d) {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  lw_doing(origin, "reading bitcode");
  int rc = ex__open_bitcode(buf, len, origin, &ctx, &mod, d);
  if (rc) {
    lw_done();
    return rc;
  }
  const char *md = "llvm.embedded.objects";
  unsigned n = LLVMGetNamedMetadataNumOperands(mod, md);
  LLVMValueRef *nodes = n ? calloc(n, sizeof *nodes) : NULL;
  if (n && !nodes)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  else if (n)
    LLVMGetNamedMetadataOperands(mod, md, nodes);
  for (unsigned i = 0; !rc && i < n; i++)
    rc = take_node(set, nodes[i], origin, d);
  free(nodes);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  lw_done();
  return rc;
}

const struct ex__format ex__format_bitcode = {"bitcode", match_bitcode,
                                              scan_bitcode};
