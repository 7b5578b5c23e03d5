/* sycl.c - the DPC++ SYCL runtime ABI: a binaries descriptor
 *   { u16 Version=1, u16 NumDeviceBinaries, DeviceBinaries*, HostEntries b/e }
 * pointing to device binaries (struct version 2)
 *   { u16 Version, u8 Kind=4, u8 Format, DeviceTargetSpec, CompileOptions,
 *     LinkOptions, ManifestStart/End (null), BinaryStart/End, EntriesBegin/End,
 *     PropertySetsBegin/End }
 * Each binary has its own offload entry table (one per kernel, by name) and
 * its property sets { Name, PropertiesBegin, PropertiesEnd } of properties
 * { Name, ValAddr, u32 Type, u64 ValSize }. A constructor passes the
 * descriptor to __sycl_register_lib, a destructor to __sycl_unregister_lib. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IMAGE_VERSION = 2, DESC_VERSION = 1, KIND_SYCL = 4, OFK_SYCL = 8 };

static LLVMValueRef str(struct wrp__ir *ir, const char *name, const char *s) {
  return wrp__bytes(ir, name, s, strlen(s), 1, NULL, 0);
}

/* Names and values: one global for each, however many point at it (the
 * 4,000-kernel program's 15,000 such strings are 4,400; the x86 back end
 * writes a third of the globals). */
static LLVMValueRef shared_str(struct wrp__ir *ir, const char *name,
                               const char *s) {
  return wrp__shared_bytes(ir, name, s, strlen(s), 1);
}

static LLVMValueRef prop_sets(struct wrp__ir *ir, LLVMTypeRef prop_ty,
                              LLVMTypeRef set_ty,
                              const struct wrp_sycl_image *img,
                              LLVMValueRef *end, struct lw_diag *d, int *rc) {
  LLVMValueRef sets[32];
  if (img->nsets > LW_ARRAY_SIZE(sets)) {
    *rc = lw_error(d, LW_EINVAL, "too many property sets");
    return NULL;
  }
  for (size_t s = 0; s < img->nsets; s++) {
    const struct dl_propset *ps = &img->sets[s];
    LLVMValueRef *props = calloc(ps->n ? ps->n : 1, sizeof *props);
    if (!props) {
      *rc = lw_error(d, LW_ENOMEM, "out of memory");
      return NULL;
    }
    for (size_t i = 0; i < ps->n; i++) {
      const struct dl_prop *p = &ps->p[i];
      LLVMValueRef addr = LLVMConstNull(ir->ptr);
      uint64_t size = p->u32;
      if (p->type != DL_PROP_UINT32) {
        addr = wrp__shared_bytes(ir, "prop_val", p->bytes.data,
                                 p->bytes.len, 0);
        size = p->bytes.len;
      }
      LLVMValueRef f[4] = {shared_str(ir, "prop", p->name), addr,
                           LLVMConstInt(ir->i32, p->type, 0),
                           LLVMConstInt(ir->i64, size, 0)};
      props[i] = LLVMConstNamedStruct(prop_ty, f, 4);
    }
    LLVMValueRef pend;
    LLVMValueRef pbeg = wrp__array(ir, "__sycl_offload_prop_arr", prop_ty,
                                   props, ps->n, &pend);
    free(props);
    LLVMValueRef f[3] = {shared_str(ir, "SYCL_PropSetName", ps->name), pbeg,
                         pend};
    sets[s] = LLVMConstNamedStruct(set_ty, f, 3);
  }
  return wrp__array(ir, "__sycl_offload_prop_sets_arr", set_ty, sets,
                    img->nsets, end);
}

void wrp__sycl_descriptor(struct wrp__ir *ir, LLVMValueRef images, size_t n) {
  LLVMTypeRef desc_ty = LLVMStructCreateNamed(ir->ctx, "__sycl.tgt_bin_desc");
  LLVMTypeRef df[5] = {ir->i16, ir->i16, ir->ptr, ir->ptr, ir->ptr};
  LLVMStructSetBody(desc_ty, df, 5, 0);
  LLVMValueRef init[5] = {LLVMConstInt(ir->i16, DESC_VERSION, 0),
                          LLVMConstInt(ir->i16, n, 0), images,
                          LLVMConstNull(ir->ptr), LLVMConstNull(ir->ptr)};
  LLVMValueRef desc =
      LLVMAddGlobal(ir->mod, desc_ty, ".sycl_offloading.descriptor");
  LLVMSetInitializer(desc, LLVMConstNamedStruct(desc_ty, init, 5));
  LLVMSetGlobalConstant(desc, 1);
  LLVMSetLinkage(desc, LLVMInternalLinkage);
  wrp__add_xtor(ir, 0,
                wrp__call_fn(ir, "sycl.descriptor_reg", "__sycl_register_lib",
                             &desc, 1),
                1);
  wrp__add_xtor(ir, 1,
                wrp__call_fn(ir, "sycl.descriptor_unreg",
                             "__sycl_unregister_lib", &desc, 1),
                1);
}

int wrp__sycl(struct wrp__ir *ir, const struct wrp_sycl_image *imgs, size_t n,
              struct lw_diag *d) {
  if (n > UINT16_MAX)
    return lw_error(d, LW_EINVAL, "too many SYCL device images (%zu)", n);
  LLVMTypeRef prop_ty =
      LLVMStructCreateNamed(ir->ctx, "_pi_device_binary_property_struct");
  LLVMTypeRef pf[4] = {ir->ptr, ir->ptr, ir->i32, ir->i64};
  LLVMStructSetBody(prop_ty, pf, 4, 0);
  LLVMTypeRef set_ty =
      LLVMStructCreateNamed(ir->ctx, "_pi_device_binary_property_set_struct");
  LLVMTypeRef sf[3] = {ir->ptr, ir->ptr, ir->ptr};
  LLVMStructSetBody(set_ty, sf, 3, 0);
  LLVMTypeRef img_ty = LLVMStructCreateNamed(ir->ctx, "__sycl.tgt_device_image");
  LLVMTypeRef imf[14] = {ir->i16, ir->i8,  ir->i8,  ir->ptr, ir->ptr,
                         ir->ptr, ir->ptr, ir->ptr, ir->ptr, ir->ptr,
                         ir->ptr, ir->ptr, ir->ptr, ir->ptr};
  LLVMStructSetBody(img_ty, imf, 14, 0);

  LLVMValueRef *wrapped = calloc(n ? n : 1, sizeof *wrapped);
  LLVMValueRef *records = calloc(n ? n : 1, sizeof *records);
  if (!wrapped || !records) {
    free(wrapped);
    free(records);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const struct wrp_sycl_image *img = &imgs[i];
    char name[64];
    size_t ne = img->entries ? img->entries->n : 0;
    LLVMValueRef *entries = calloc(ne ? ne : 1, sizeof *entries);
    if (!entries) {
      rc = lw_error(d, LW_ENOMEM, "out of memory");
      break;
    }
    for (size_t k = 0; k < ne; k++)
      entries[k] = wrp__entry(
          ir, OFK_SYCL, NULL,
          shared_str(ir, "__sycl_offload_entry_name", img->entries->v[k]),
          0);
    LLVMValueRef eend;
    LLVMValueRef ebeg = wrp__array(ir, "__sycl_offload_entries_arr",
                                   ir->entry_ty, entries, ne, &eend);
    free(entries);
    LLVMValueRef send;
    LLVMValueRef sbeg = prop_sets(ir, prop_ty, set_ty, img, &send, d, &rc);
    if (rc)
      break;
    /* in a section named after the target, with a {address, size} record
     * in .tgtimg that tools find images in a program by, as DPC++'s */
    snprintf(name, sizeof name, ".sycl_offloading.%zu.data", i);
    LLVMValueRef data =
        wrp__bytes(ir, name, img->data, img->size, 0, img->target, 0);
    LLVMValueRef rec[2] = {LLVMConstPtrToInt(data, ir->i64),
                           LLVMConstInt(ir->i64, img->size, 0)};
    records[i] = LLVMConstArray2(ir->i64, rec, 2);
    snprintf(name, sizeof name, ".sycl_offloading.target.%zu", i);
    LLVMValueRef target = str(ir, name, img->target);
    snprintf(name, sizeof name, ".sycl_offloading.opts.compile.%zu", i);
    LLVMValueRef copts =
        str(ir, name, img->compile_opts ? img->compile_opts : "");
    snprintf(name, sizeof name, ".sycl_offloading.opts.link.%zu", i);
    LLVMValueRef lopts = str(ir, name, img->link_opts ? img->link_opts : "");
    LLVMValueRef f[14] = {LLVMConstInt(ir->i16, IMAGE_VERSION, 0),
                          LLVMConstInt(ir->i8, KIND_SYCL, 0),
                          LLVMConstInt(ir->i8, img->format, 0),
                          target,
                          copts,
                          lopts,
                          LLVMConstNull(ir->ptr),
                          LLVMConstNull(ir->ptr),
                          data,
                          wrp__gep(ir, data, img->size, 1),
                          ebeg,
                          eend,
                          sbeg,
                          send};
    wrapped[i] = LLVMConstNamedStruct(img_ty, f, 14);
  }
  if (rc) {
    free(wrapped);
    free(records);
    return rc;
  }
  /* The records, one array of them, stay however the program is linked
   * (a global each is a section and its relocations each, kept apart: 800
   * of the 820 sections of the 4,000-kernel program's object, which cost
   * its code generation 28 ms and the host link 7 ms). */
  if (n) {
    LLVMValueRef init = LLVMConstArray2(LLVMTypeOf(records[0]), records, n);
    LLVMValueRef g =
        LLVMAddGlobal(ir->mod, LLVMTypeOf(init), ".sycl_offloading.info");
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetUnnamedAddress(g, LLVMLocalUnnamedAddr);
    LLVMSetSection(g, ".tgtimg");
    LLVMSetAlignment(g, 16);
    LLVMValueRef uinit = LLVMConstArray2(ir->ptr, &g, 1);
    LLVMValueRef used =
        LLVMAddGlobal(ir->mod, LLVMTypeOf(uinit), "llvm.used");
    LLVMSetLinkage(used, LLVMAppendingLinkage);
    LLVMSetSection(used, "llvm.metadata");
    LLVMSetInitializer(used, uinit);
  }
  free(records);
  LLVMValueRef iend;
  LLVMValueRef images = wrp__array(ir, ".sycl_offloading.device_images",
                                   img_ty, wrapped, n, &iend);
  free(wrapped);
  wrp__sycl_descriptor(ir, images, n);
  return 0;
}
