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

/* Names and values: each once, in one global with the others (the
 * 4,000-kernel program's 15,000 such strings are 4,400 distinct ones). */
static LLVMValueRef shared_str(struct wrp__ir *ir, const char *s) {
  return wrp__shared_bytes(ir, s, strlen(s), 1);
}

/* The arrays the images point into: their entries, their property sets
 * and those sets' properties, each kind in one global. */
struct arrays {
  struct wrp__pool entries, props, sets;
};

/* The arrays' globals, once every constant pointing into them is in a
 * global: the constants of a pool not made yet are rebuilt when what they
 * point into is (sets point into properties, so they go first). */
static int finish_arrays(struct wrp__ir *ir, struct arrays *a) {
  int rc = wrp__pool_finish(ir, &a->sets);
  rc |= wrp__pool_finish(ir, &a->props);
  rc |= wrp__pool_finish(ir, &a->entries);
  return rc;
}

static LLVMValueRef prop_sets(struct wrp__ir *ir, struct arrays *a,
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
        addr = wrp__shared_bytes(ir, p->bytes.data, p->bytes.len, 0);
        size = p->bytes.len;
      }
      LLVMValueRef f[4] = {shared_str(ir, p->name), addr,
                           LLVMConstInt(ir->i32, p->type, 0),
                           LLVMConstInt(ir->i64, size, 0)};
      props[i] = LLVMConstNamedStruct(a->props.ty, f, 4);
    }
    LLVMValueRef pend;
    LLVMValueRef pbeg = wrp__pool_add(ir, &a->props, props, ps->n, &pend);
    free(props);
    LLVMValueRef f[3] = {shared_str(ir, ps->name), pbeg, pend};
    sets[s] = LLVMConstNamedStruct(a->sets.ty, f, 3);
  }
  return wrp__pool_add(ir, &a->sets, sets, img->nsets, end);
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

  struct arrays a = {{.name = "__sycl_offload_entries_arr",
                      .ty = ir->entry_ty},
                     {.name = "__sycl_offload_prop_arr", .ty = prop_ty},
                     {.name = "__sycl_offload_prop_sets_arr", .ty = set_ty}};
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
      entries[k] = wrp__entry(ir, OFK_SYCL, NULL,
                              shared_str(ir, img->entries->v[k]), 0);
    LLVMValueRef eend;
    LLVMValueRef ebeg = wrp__pool_add(ir, &a.entries, entries, ne, &eend);
    free(entries);
    LLVMValueRef send;
    LLVMValueRef sbeg = prop_sets(ir, &a, img, &send, d, &rc);
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
    LLVMValueRef target = shared_str(ir, img->target);
    LLVMValueRef copts =
        shared_str(ir, img->compile_opts ? img->compile_opts : "");
    LLVMValueRef lopts = shared_str(ir, img->link_opts ? img->link_opts : "");
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
    finish_arrays(ir, &a);
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
  return finish_arrays(ir, &a) ? lw_error(d, LW_ENOMEM, "out of memory") : 0;
}
