/* sycl_llvm23.c - upstream LLVM 23's SYCL registration: the images in one
 * OffloadBinary (version 2, made by the planner), embedded as it is in
 * .llvm.offloading, 8-byte aligned (the runtime's parser refuses it
 * otherwise), and a constructor and destructor of priority 1 passing its
 * start and size to __sycl_register_lib(ptr, i64) and
 * __sycl_unregister_lib(ptr, i64), as LLVM 23's wrapper writes them. */
#include "internal.h"

void wrp__sycl_llvm23(struct wrp__ir *ir, const struct wrp_fatbin *bin,
                      int relocatable) {
  /* (-r takes .llvm.offloading out of its output: the binary stays in its
   * constant section there) */
  LLVMValueRef g = wrp__bytes(ir, ".sycl_offloading.binary", bin->data,
                              bin->size, 0,
                              relocatable ? NULL : ".llvm.offloading", 8);
  LLVMValueRef args[2] = {g, LLVMConstInt(ir->i64, bin->size, 0)};
  wrp__add_xtor(ir, 0,
                wrp__call_fn(ir, "sycl.descriptor_reg", "__sycl_register_lib",
                             args, 2),
                1);
  wrp__add_xtor(ir, 1,
                wrp__call_fn(ir, "sycl.descriptor_unreg",
                             "__sycl_unregister_lib", args, 2),
                1);
}
