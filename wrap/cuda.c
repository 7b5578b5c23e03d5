/* cuda.c - the CUDA and HIP runtimes' registration of relocatable device
 * code (LLVM 22's scheme; HIP is the same with its own names):
 *   - the fatbinary as bytes in .nv_fatbin (.hip_fatbin), and a wrapper
 *     { i32 magic, i32 version=1, ptr fatbinary, ptr null } in
 *     .nvFatBinSegment (.hipFatBinSegment);
 *   - a constructor (priority 101) that passes the wrapper to
 *     __cudaRegisterFatBinary, keeps the handle, registers the globals,
 *     calls __cudaRegisterFatBinaryEnd (CUDA only) and has atexit call
 *     __cudaUnregisterFatBinary (after CUDA 9.2 a global destructor is too
 *     late for the runtime);
 *   - the globals' registration walks, at run time, the offload entries the
 *     compiler put in llvm_offload_entries (every object's, gathered by the
 *     linker) and registers those of its offload kind: size 0 a kernel
 *     (__cudaRegisterFunction), else by the flags' low 3 bits a variable
 *     (__cudaRegisterVar, extern and constant from bits 3 and 4) or a
 *     managed variable (__cudaRegisterManagedVar, its shadow pointer in the
 *     entry's aux address, alignment in data), a surface or a texture
 *     (HIP only: __hipRegisterSurface/Texture with the data as type and
 *     bit 5 as normalized). CUDA's surface and texture entries are skipped,
 *     as upstream does: CUDA 12 removed surface and texture references and
 *     CUDA 13's runtime has no functions to register them; their
 *     declarations stay, unused, so the module reads as upstream's. */
#include "internal.h"

enum { CUDA_FAT_MAGIC = 0x466243b1, HIP_FAT_MAGIC = 0x48495046 };
enum { OFK_CUDA = 2, OFK_HIP = 4 };
enum {
  ENTRY_GLOBAL = 0,
  ENTRY_MANAGED = 1,
  ENTRY_SURFACE = 2,
  ENTRY_TEXTURE = 3,
  FLAG_EXTERN = 1 << 3,
  FLAG_CONSTANT = 1 << 4,
  FLAG_NORMALIZED = 1 << 5
};

/* The names that differ between the two runtimes. */
struct abi {
  unsigned magic, kind;
  int surfaces_and_textures; /* registered (HIP) or skipped (CUDA) */
  const char *image_section, *wrapper_section;
  const char *reg_fn, *unreg_fn, *handle, *globals_fn;
  const char *register_fatbin, *unregister_fatbin;
  const char *register_function, *register_var, *register_managed,
      *register_surface, *register_texture;
};

static const struct abi cuda_abi = {
    .magic = CUDA_FAT_MAGIC,
    .kind = OFK_CUDA,
    .image_section = ".nv_fatbin",
    .wrapper_section = ".nvFatBinSegment",
    .reg_fn = ".cuda.fatbin_reg",
    .unreg_fn = ".cuda.fatbin_unreg",
    .handle = ".cuda.binary_handle",
    .globals_fn = ".cuda.globals_reg",
    .register_fatbin = "__cudaRegisterFatBinary",
    .unregister_fatbin = "__cudaUnregisterFatBinary",
    .register_function = "__cudaRegisterFunction",
    .register_var = "__cudaRegisterVar",
    .register_managed = "__cudaRegisterManagedVar",
    .register_surface = "__cudaRegisterSurface",
    .register_texture = "__cudaRegisterTexture"};

static const struct abi hip_abi = {
    .magic = HIP_FAT_MAGIC,
    .kind = OFK_HIP,
    .surfaces_and_textures = 1,
    .image_section = ".hip_fatbin",
    .wrapper_section = ".hipFatBinSegment",
    .reg_fn = ".hip.fatbin_reg",
    .unreg_fn = ".hip.fatbin_unreg",
    .handle = ".hip.binary_handle",
    .globals_fn = ".hip.globals_reg",
    .register_fatbin = "__hipRegisterFatBinary",
    .unregister_fatbin = "__hipUnregisterFatBinary",
    .register_function = "__hipRegisterFunction",
    .register_var = "__hipRegisterVar",
    .register_managed = "__hipRegisterManagedVar",
    .register_surface = "__hipRegisterSurface",
    .register_texture = "__hipRegisterTexture"};

/* Loads field `idx` of the entry at `e`. */
static LLVMValueRef field(struct wrp__ir *ir, LLVMBuilderRef b, LLVMValueRef e,
                          unsigned idx, LLVMTypeRef ty, const char *name) {
  LLVMValueRef i[2] = {LLVMConstInt(ir->i32, 0, 0),
                       LLVMConstInt(ir->i32, idx, 0)};
  LLVMValueRef p = LLVMBuildInBoundsGEP2(b, ir->entry_ty, e, i, 2, "");
  return LLVMBuildLoad2(b, ty, p, name);
}

/* (flags & bit) >> shift */
static LLVMValueRef flag(struct wrp__ir *ir, LLVMBuilderRef b, LLVMValueRef f,
                         unsigned bit, unsigned shift, const char *name) {
  LLVMValueRef v = LLVMBuildAnd(b, f, LLVMConstInt(ir->i32, bit, 0), "");
  return LLVMBuildLShr(b, v, LLVMConstInt(ir->i32, shift, 0), name);
}

/* The function that registers every entry of the runtime's kind with the
 * handle it is given. */
static LLVMValueRef globals_fn(struct wrp__ir *ir, const struct abi *a,
                               LLVMValueRef begin, LLVMValueRef end) {
  LLVMTypeRef p = ir->ptr, i32 = ir->i32, i64 = ir->i64;
  LLVMTypeRef vd = LLVMVoidTypeInContext(ir->ctx);
  LLVMTypeRef fn_args[10] = {p, p, p, p, i32, p, p, p, p, p};
  LLVMValueRef reg_fn =
      wrp__declare(ir, a->register_function, i32, fn_args, 10);
  LLVMTypeRef var_args[8] = {p, p, p, p, i32, i64, i32, i32};
  LLVMValueRef reg_var = wrp__declare(ir, a->register_var, vd, var_args, 8);
  LLVMTypeRef managed_args[6] = {p, p, p, p, i64, i32};
  LLVMValueRef reg_managed =
      wrp__declare(ir, a->register_managed, vd, managed_args, 6);
  LLVMTypeRef surface_args[6] = {p, p, p, p, i32, i32};
  LLVMValueRef reg_surface =
      wrp__declare(ir, a->register_surface, vd, surface_args, 6);
  LLVMTypeRef texture_args[7] = {p, p, p, p, i32, i32, i32};
  LLVMValueRef reg_texture =
      wrp__declare(ir, a->register_texture, vd, texture_args, 7);

  LLVMValueRef fn =
      LLVMAddFunction(ir->mod, a->globals_fn, LLVMFunctionType(vd, &p, 1, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMSetSection(fn, ".text.startup");
  LLVMValueRef handle = LLVMGetParam(fn, 0);
  static const char *const names[] = {"entry",      "while.entry", "if.kind",
                                      "if.then",    "if.else",     "sw.global",
                                      "sw.managed", "sw.surface",  "sw.texture",
                                      "if.end",     "while.end"};
  LLVMBasicBlockRef bb[LW_ARRAY_SIZE(names)];
  for (size_t i = 0; i < LW_ARRAY_SIZE(names); i++)
    bb[i] = LLVMAppendBasicBlockInContext(ir->ctx, fn, names[i]);
  enum {
    ENTRY,
    LOOP,
    IF_KIND,
    IF_THEN,
    IF_ELSE,
    SW_GLOBAL,
    SW_MANAGED,
    SW_SURFACE,
    SW_TEXTURE,
    IF_END,
    EXIT
  };

  LLVMBuilderRef b = LLVMCreateBuilderInContext(ir->ctx);
  LLVMPositionBuilderAtEnd(b, bb[ENTRY]);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, begin, end, ""), bb[LOOP],
                  bb[EXIT]);

  LLVMPositionBuilderAtEnd(b, bb[LOOP]);
  LLVMValueRef e = LLVMBuildPhi(b, p, "entry");
  LLVMValueRef addr = field(ir, b, e, 4, p, "addr");
  LLVMValueRef aux = field(ir, b, e, 8, p, "aux_addr");
  LLVMValueRef kind = field(ir, b, e, 2, ir->i16, "kind");
  LLVMValueRef name = field(ir, b, e, 5, p, "name");
  LLVMValueRef size = field(ir, b, e, 6, i64, "size");
  LLVMValueRef flags = field(ir, b, e, 3, i32, "flags");
  LLVMValueRef data =
      LLVMBuildTrunc(b, field(ir, b, e, 7, i64, "data"), i32, "");
  LLVMValueRef type = LLVMBuildAnd(b, flags, LLVMConstInt(i32, 7, 0), "type");
  LLVMValueRef ext = flag(ir, b, flags, FLAG_EXTERN, 3, "extern");
  LLVMValueRef cnst = flag(ir, b, flags, FLAG_CONSTANT, 4, "constant");
  LLVMValueRef norm = flag(ir, b, flags, FLAG_NORMALIZED, 5, "normalized");
  LLVMBuildCondBr(
      b,
      LLVMBuildICmp(b, LLVMIntEQ, kind, LLVMConstInt(ir->i16, a->kind, 0), ""),
      bb[IF_KIND], bb[IF_END]);

  LLVMPositionBuilderAtEnd(b, bb[IF_KIND]);
  LLVMBuildCondBr(
      b, LLVMBuildICmp(b, LLVMIntEQ, size, LLVMConstInt(i64, 0, 0), ""),
      bb[IF_THEN], bb[IF_ELSE]);

  LLVMPositionBuilderAtEnd(b, bb[IF_THEN]);
  LLVMValueRef null = LLVMConstNull(p);
  LLVMValueRef fa[10] = {handle, addr, name, name, LLVMConstAllOnes(i32),
                         null,   null, null, null, null};
  LLVMBuildCall2(b, LLVMGlobalGetValueType(reg_fn), reg_fn, fa, 10, "");
  LLVMBuildBr(b, bb[IF_END]);

  LLVMPositionBuilderAtEnd(b, bb[IF_ELSE]);
  LLVMValueRef sw = LLVMBuildSwitch(b, type, bb[IF_END], 4);
  static const unsigned cases[] = {ENTRY_GLOBAL, ENTRY_MANAGED, ENTRY_SURFACE,
                                   ENTRY_TEXTURE};
  for (size_t i = 0; i < LW_ARRAY_SIZE(cases); i++)
    LLVMAddCase(sw, LLVMConstInt(i32, cases[i], 0), bb[SW_GLOBAL + i]);

  LLVMPositionBuilderAtEnd(b, bb[SW_GLOBAL]);
  LLVMValueRef va[8] = {handle, addr, name, name,
                        ext,    size, cnst, LLVMConstInt(i32, 0, 0)};
  LLVMBuildCall2(b, LLVMGlobalGetValueType(reg_var), reg_var, va, 8, "");
  LLVMBuildBr(b, bb[IF_END]);
  LLVMPositionBuilderAtEnd(b, bb[SW_MANAGED]);
  LLVMValueRef ma[6] = {handle, aux, addr, name, size, data};
  LLVMBuildCall2(b, LLVMGlobalGetValueType(reg_managed), reg_managed, ma, 6,
                 "");
  LLVMBuildBr(b, bb[IF_END]);
  LLVMPositionBuilderAtEnd(b, bb[SW_SURFACE]);
  LLVMValueRef sa[6] = {handle, addr, name, name, data, ext};
  if (a->surfaces_and_textures)
    LLVMBuildCall2(b, LLVMGlobalGetValueType(reg_surface), reg_surface, sa, 6,
                   "");
  LLVMBuildBr(b, bb[IF_END]);
  LLVMPositionBuilderAtEnd(b, bb[SW_TEXTURE]);
  LLVMValueRef ta[7] = {handle, addr, name, name, data, norm, ext};
  if (a->surfaces_and_textures)
    LLVMBuildCall2(b, LLVMGlobalGetValueType(reg_texture), reg_texture, ta, 7,
                   "");
  LLVMBuildBr(b, bb[IF_END]);

  LLVMPositionBuilderAtEnd(b, bb[IF_END]);
  LLVMValueRef one = LLVMConstInt(i64, 1, 0);
  LLVMValueRef next = LLVMBuildInBoundsGEP2(b, ir->entry_ty, e, &one, 1, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, next, end, ""), bb[EXIT],
                  bb[LOOP]);
  LLVMValueRef in_v[2] = {begin, next};
  LLVMBasicBlockRef in_b[2] = {bb[ENTRY], bb[IF_END]};
  LLVMAddIncoming(e, in_v, in_b, 2);

  LLVMPositionBuilderAtEnd(b, bb[EXIT]);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  return fn;
}

void wrp__fatbin(struct wrp__ir *ir, const struct wrp_fatbin *fb, int hip) {
  const struct abi *a = hip ? &hip_abi : &cuda_abi;
  LLVMValueRef begin, end;
  wrp__entry_bounds(ir, &begin, &end);

  LLVMValueRef image = wrp__bytes(ir, ".fatbin_image", fb->data, fb->size, 0,
                                  a->image_section, 0);
  LLVMSetUnnamedAddress(image, LLVMNoUnnamedAddr);
  LLVMTypeRef wrapper_ty = LLVMGetTypeByName2(ir->ctx, "fatbin_wrapper");
  if (!wrapper_ty) {
    wrapper_ty = LLVMStructCreateNamed(ir->ctx, "fatbin_wrapper");
    LLVMTypeRef wf[4] = {ir->i32, ir->i32, ir->ptr, ir->ptr};
    LLVMStructSetBody(wrapper_ty, wf, 4, 0);
  }
  LLVMValueRef wi[4] = {LLVMConstInt(ir->i32, a->magic, 0),
                        LLVMConstInt(ir->i32, 1, 0), image,
                        LLVMConstNull(ir->ptr)};
  LLVMValueRef wrapper = LLVMAddGlobal(ir->mod, wrapper_ty, ".fatbin_wrapper");
  LLVMSetInitializer(wrapper, LLVMConstNamedStruct(wrapper_ty, wi, 4));
  LLVMSetGlobalConstant(wrapper, 1);
  LLVMSetLinkage(wrapper, LLVMInternalLinkage);
  LLVMSetSection(wrapper, a->wrapper_section);
  LLVMSetAlignment(wrapper, 8);

  LLVMTypeRef vd = LLVMVoidTypeInContext(ir->ctx);
  LLVMTypeRef void_fn = LLVMFunctionType(vd, NULL, 0, 0);
  LLVMValueRef ctor = LLVMAddFunction(ir->mod, a->reg_fn, void_fn);
  LLVMValueRef dtor = LLVMAddFunction(ir->mod, a->unreg_fn, void_fn);
  for (int i = 0; i < 2; i++) {
    LLVMSetLinkage(i ? dtor : ctor, LLVMInternalLinkage);
    LLVMSetSection(i ? dtor : ctor, ".text.startup");
  }
  LLVMValueRef reg = wrp__declare(ir, a->register_fatbin, ir->ptr, &ir->ptr, 1);
  /* Declared for HIP too, as upstream does. */
  LLVMValueRef reg_end =
      wrp__declare(ir, "__cudaRegisterFatBinaryEnd", vd, &ir->ptr, 1);
  LLVMValueRef unreg = wrp__declare(ir, a->unregister_fatbin, vd, &ir->ptr, 1);
  LLVMValueRef atexit_fn = wrp__declare(ir, "atexit", ir->i32, &ir->ptr, 1);
  LLVMValueRef handle = LLVMAddGlobal(ir->mod, ir->ptr, a->handle);
  LLVMSetInitializer(handle, LLVMConstNull(ir->ptr));
  LLVMSetLinkage(handle, LLVMInternalLinkage);

  LLVMBuilderRef b = LLVMCreateBuilderInContext(ir->ctx);
  LLVMPositionBuilderAtEnd(
      b, LLVMAppendBasicBlockInContext(ir->ctx, ctor, "entry"));
  LLVMValueRef h =
      LLVMBuildCall2(b, LLVMGlobalGetValueType(reg), reg, &wrapper, 1, "");
  LLVMSetAlignment(LLVMBuildStore(b, h, handle), 8);
  LLVMValueRef globals = globals_fn(ir, a, begin, end);
  LLVMBuildCall2(b, LLVMGlobalGetValueType(globals), globals, &h, 1, "");
  if (!hip)
    LLVMBuildCall2(b, LLVMGlobalGetValueType(reg_end), reg_end, &h, 1, "");
  LLVMBuildCall2(b, LLVMGlobalGetValueType(atexit_fn), atexit_fn, &dtor, 1, "");
  LLVMBuildRetVoid(b);

  LLVMPositionBuilderAtEnd(
      b, LLVMAppendBasicBlockInContext(ir->ctx, dtor, "entry"));
  LLVMValueRef hl = LLVMBuildLoad2(b, ir->ptr, handle, "");
  LLVMSetAlignment(hl, 8);
  LLVMBuildCall2(b, LLVMGlobalGetValueType(unreg), unreg, &hl, 1, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  wrp__add_xtor(ir, 0, ctor, 101);
}
