/* sycl_llvm22.c - upstream LLVM 22's SYCL registration (clang-linker-wrapper
 * 22, OffloadWrapper's SYCL wrapper): a binaries descriptor
 *   { u16 Version=1, u16 NumDeviceImages, DeviceImages*, null, null }
 * pointing to device images (struct version 3, 12 fields)
 *   { u16 Version=3, u8 OffloadKind=8, u8 Format=0, Arch (the image's
 *     triple), CompileOptions, LinkOptions, ImageStart/End, EntriesBegin/End,
 *     null, null }
 * as LLVM 22 writes it: no property sets; the image bytes in section
 * .llvm.offloading; one offload entry per kernel, each also a weak global of
 * the shared llvm_offload_entries table with its name in
 * .llvm.rodata.offloading, listed in !llvm.offloading.symbols; constructor
 * and destructor of priority 1 calling __sycl_register_lib and
 * __sycl_unregister_lib with the descriptor. Names and order are upstream's,
 * so the module prints as upstream's does (e2e/sycl-abi.test compares). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IMAGE_VERSION = 3, OFK_SYCL = 8 };

/* The entry of kernel `name`: its name string, listed in
 * !llvm.offloading.symbols, and its weak global in the shared table, as
 * LLVM's emitOffloadingEntry makes them. */
static LLVMValueRef entry(struct wrp__ir *ir, const char *name) {
  LLVMValueRef str = wrp__bytes(ir, ".offloading.entry_name", name,
                                strlen(name), 1, ".llvm.rodata.offloading", 1);
  LLVMValueRef init = wrp__entry(ir, OFK_SYCL, NULL, str, 0);
  char *gname = lw_xasprintf(".offloading.entry.%s", name);
  LLVMValueRef g =
      LLVMAddGlobal(ir->mod, ir->entry_ty, gname ? gname : ".offloading.entry");
  free(gname);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMWeakAnyLinkage);
  LLVMSetSection(g, wrp__entries_section(ir));
  LLVMSetAlignment(g, 8);
  LLVMMetadataRef md = LLVMValueAsMetadata(str);
  LLVMAddNamedMetadataOperand(
      ir->mod, "llvm.offloading.symbols",
      LLVMMetadataAsValue(ir->ctx, LLVMMDNodeInContext2(ir->ctx, &md, 1)));
  return init;
}

int wrp__sycl_llvm22(struct wrp__ir *ir, const struct wrp_sycl_image *imgs,
                     size_t n, int relocatable, struct lw_diag *d) {
  if (n > UINT16_MAX)
    return lw_error(d, LW_EINVAL, "too many SYCL device images (%zu)", n);
  LLVMTypeRef img_ty =
      LLVMStructCreateNamed(ir->ctx, "__sycl.tgt_device_image");
  LLVMTypeRef imf[12] = {ir->i16, ir->i8,  ir->i8,  ir->ptr, ir->ptr, ir->ptr,
                         ir->ptr, ir->ptr, ir->ptr, ir->ptr, ir->ptr, ir->ptr};
  LLVMStructSetBody(img_ty, imf, 12, 0);
  LLVMValueRef *wrapped = calloc(n ? n : 1, sizeof *wrapped);
  if (!wrapped)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const struct wrp_sycl_image *img = &imgs[i];
    char name[64];
    snprintf(name, sizeof name, ".sycl_offloading.target.%zu", i);
    const char *arch = img->triple ? img->triple : img->target;
    LLVMValueRef target = wrp__bytes(ir, name, arch, strlen(arch), 1, NULL, 0);
    snprintf(name, sizeof name, ".sycl_offloading.opts.compile.%zu", i);
    const char *co = img->compile_opts ? img->compile_opts : "";
    LLVMValueRef copts = wrp__bytes(ir, name, co, strlen(co), 1, NULL, 0);
    snprintf(name, sizeof name, ".sycl_offloading.opts.link.%zu", i);
    const char *lo = img->link_opts ? img->link_opts : "";
    LLVMValueRef lopts = wrp__bytes(ir, name, lo, strlen(lo), 1, NULL, 0);
    snprintf(name, sizeof name, ".sycl_offloading.%zu.data", i);
    /* (-r takes .llvm.offloading out of its output: the images stay in
     * their constant section there) */
    LLVMValueRef data = wrp__bytes(ir, name, img->data, img->size, 0,
                                   relocatable ? NULL : ".llvm.offloading", 0);
    size_t ne = img->entries ? img->entries->n : 0;
    LLVMValueRef *entries = calloc(ne ? ne : 1, sizeof *entries);
    if (!entries) {
      free(wrapped);
      return lw_error(d, LW_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < ne; k++)
      entries[k] = entry(ir, img->entries->v[k]);
    LLVMValueRef eend;
    LLVMValueRef ebeg = wrp__array(ir, ".sycl_offloading.entries_arr",
                                   ir->entry_ty, entries, ne, &eend);
    if (ne)
      eend = wrp__gep(ir, ebeg, ne, 0); /* as upstream: not inbounds */
    free(entries);
    LLVMValueRef f[12] = {LLVMConstInt(ir->i16, IMAGE_VERSION, 0),
                          LLVMConstInt(ir->i8, OFK_SYCL, 0),
                          LLVMConstInt(ir->i8, 0, 0), /* as LLVM 22 */
                          target,
                          copts,
                          lopts,
                          data,
                          wrp__gep(ir, data, img->size, 0),
                          ebeg,
                          eend,
                          LLVMConstNull(ir->ptr),
                          LLVMConstNull(ir->ptr)};
    wrapped[i] = LLVMConstNamedStruct(img_ty, f, 12);
  }
  LLVMValueRef iend;
  LLVMValueRef images = wrp__array(ir, ".sycl_offloading.device_images",
                                   img_ty, wrapped, n, &iend);
  free(wrapped);
  if (n)
    LLVMSetUnnamedAddress(images, LLVMGlobalUnnamedAddr);
  wrp__sycl_descriptor(ir, images, n);
  return 0;
}
