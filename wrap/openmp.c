/* openmp.c - the libomptarget ABI of LLVM 22: each linked device image,
 * which comes packed in a version-1 OffloadBinary, is embedded as such in
 * section .llvm.offloading (so binary tools can still read it;
 * .llvm.offloading.relocatable in a -r link, whose .llvm.offloading is
 * removed afterwards), and a descriptor
 *   { i32 NumDeviceImages, DeviceImages*, HostEntriesBegin, HostEntriesEnd }
 * lists images { ImageStart, ImageEnd, EntriesBegin, EntriesEnd } whose
 * start/end point at the image inside the OffloadBinary. Host entries are the
 * linker-made bounds of the section the compiler put them in
 * (wrp__entry_bounds). A
 * constructor calls __tgt_register_lib and registers the unregister function
 * with atexit. */
#include "internal.h"

int wrp__openmp(struct wrp__ir *ir, const struct wrp_omp_image *imgs,
                size_t n, int relocatable, struct lw_diag *d) {
  LLVMValueRef eb, ee;
  wrp__entry_bounds(ir, &eb, &ee);

  LLVMTypeRef img_ty = LLVMStructCreateNamed(ir->ctx, "__tgt_device_image");
  LLVMTypeRef imf[4] = {ir->ptr, ir->ptr, ir->ptr, ir->ptr};
  LLVMStructSetBody(img_ty, imf, 4, 0);
  LLVMTypeRef desc_ty = LLVMStructCreateNamed(ir->ctx, "__tgt_bin_desc");
  LLVMTypeRef df[4] = {ir->i32, ir->ptr, ir->ptr, ir->ptr};
  LLVMStructSetBody(desc_ty, df, 4, 0);

  LLVMValueRef wrapped[64];
  if (n > LW_ARRAY_SIZE(wrapped))
    return lw_error(d, LW_EINVAL, "too many OpenMP device images (%zu)", n);
  for (size_t i = 0; i < n; i++) {
    LLVMValueRef g = wrp__bytes(
        ir, ".omp_offloading.device_image", imgs[i].binary, imgs[i].size, 0,
        relocatable ? ".llvm.offloading.relocatable" : ".llvm.offloading", 8);
    LLVMValueRef f[4] = {
        wrp__gep(ir, g, imgs[i].image_offset, 0),
        wrp__gep(ir, g, imgs[i].image_offset + imgs[i].image_size, 0), eb,
        ee};
    wrapped[i] = LLVMConstNamedStruct(img_ty, f, 4);
  }
  LLVMValueRef iend;
  LLVMValueRef images = wrp__array(ir, ".omp_offloading.device_images",
                                   img_ty, wrapped, n, &iend);
  LLVMSetUnnamedAddress(images, LLVMGlobalUnnamedAddr);
  LLVMValueRef dinit[4] = {LLVMConstInt(ir->i32, n, 0), images, eb, ee};
  LLVMValueRef desc = LLVMAddGlobal(ir->mod, desc_ty,
                                    ".omp_offloading.descriptor");
  LLVMSetInitializer(desc, LLVMConstNamedStruct(desc_ty, dinit, 4));
  LLVMSetGlobalConstant(desc, 1);
  LLVMSetLinkage(desc, LLVMInternalLinkage);

  /* Register, then have atexit unregister before plugins go away. */
  LLVMValueRef reg = wrp__call_fn(ir, ".omp_offloading.descriptor_reg",
                                  "__tgt_register_lib", &desc, 1);
  LLVMValueRef atexit_fn = wrp__declare(ir, "atexit", ir->i32, &ir->ptr, 1);
  LLVMValueRef unreg = wrp__call_fn(ir, ".omp_offloading.descriptor_unreg",
                                    "__tgt_unregister_lib", &desc, 1);
  LLVMBasicBlockRef bb = LLVMGetEntryBasicBlock(reg);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ir->ctx);
  LLVMPositionBuilderBefore(b, LLVMGetLastInstruction(bb));
  LLVMBuildCall2(b, LLVMGlobalGetValueType(atexit_fn), atexit_fn, &unreg, 1,
                 "");
  LLVMDisposeBuilder(b);
  wrp__add_xtor(ir, 0, reg, 101);
  return 0;
}
