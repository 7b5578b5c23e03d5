/* sycl_llvm23.c - upstream LLVM 23's SYCL registration: the images in one
 * OffloadBinary (version 2, made by the planner), embedded as it is in
 * .llvm.offloading, 8-byte aligned (the runtime's parser refuses it
 * otherwise), and a constructor and destructor of priority 1 passing its
 * start and size to __sycl_register_lib(ptr, i64) and
 * __sycl_unregister_lib(ptr, i64), as LLVM 23's wrapper writes them. */
#include "internal.h"

/* Internal void() function in .text.startup calling callee(blob, size). */
static LLVMValueRef call2(struct wrp__ir *ir, const char *name,
                          const char *callee, LLVMValueRef blob,
                          uint64_t size) {
  LLVMTypeRef void_ty = LLVMVoidTypeInContext(ir->ctx);
  LLVMValueRef fn =
      LLVMAddFunction(ir->mod, name, LLVMFunctionType(void_ty, NULL, 0, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMSetSection(fn, ".text.startup");
  LLVMTypeRef params[2] = {ir->ptr, ir->i64};
  LLVMValueRef c = wrp__declare(ir, callee, void_ty, params, 2);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ir->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ir->ctx, fn,
                                                            "entry"));
  LLVMValueRef args[2] = {blob, LLVMConstInt(ir->i64, size, 0)};
  LLVMBuildCall2(b, LLVMGlobalGetValueType(c), c, args, 2, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  return fn;
}

void wrp__sycl_llvm23(struct wrp__ir *ir, const struct wrp_fatbin *bin,
                      int relocatable) {
  /* (-r takes .llvm.offloading out of its output: the binary stays in its
   * constant section there) */
  LLVMValueRef g = wrp__bytes(ir, ".sycl_offloading.binary", bin->data,
                              bin->size, 0,
                              relocatable ? NULL : ".llvm.offloading", 8);
  wrp__add_xtor(ir, 0,
                call2(ir, "sycl.descriptor_reg", "__sycl_register_lib", g,
                      bin->size),
                1);
  wrp__add_xtor(ir, 1,
                call2(ir, "sycl.descriptor_unreg", "__sycl_unregister_lib", g,
                      bin->size),
                1);
}
