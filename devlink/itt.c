/* itt.c - DPC++'s device-code instrumentation hooks. Its front end
 * (-fsycl-instrument-device-code, on by default) calls
 * __itt_offload_wi_start_wrapper() and friends in every kernel, for a
 * profiler's sake; DPC++'s device libraries define them, and the stub
 * library among them makes them do nothing. Where no input or library
 * defines one, fatlink does what the stub library does: an empty body. */
#include "internal.h"

#include <string.h>

size_t dl_itt_stubs(struct dl_module *m) {
  static const char prefix[] = "__itt_offload_";
  LLVMContextRef ctx = LLVMGetModuleContext(m->mod);
  size_t n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f;
       f = LLVMGetNextFunction(f)) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    LLVMTypeRef fty = LLVMGlobalGetValueType(f);
    if (!LLVMIsDeclaration(f) || strncmp(name, prefix, sizeof prefix - 1) ||
        LLVMGetTypeKind(LLVMGetReturnType(fty)) != LLVMVoidTypeKind)
      continue;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f, ""));
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    LLVMSetLinkage(f, LLVMInternalLinkage);
    n++;
  }
  return n;
}
