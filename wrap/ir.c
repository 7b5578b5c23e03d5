/* ir.c - small LLVM-C helpers to build constant data and start-up functions
 * of a registration module. The module is built in its own context
 * (build.c) so a wrap job may run on any thread. */
#include "internal.h"

#include <search.h>
#include <stdlib.h>
#include <string.h>

/* An internal constant global of initializer `init`. */
static LLVMValueRef constant_global(struct wrp__ir *ir, const char *name,
                                    LLVMValueRef init, const char *section,
                                    unsigned align) {
  LLVMValueRef g = LLVMAddGlobal(ir->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  if (section)
    LLVMSetSection(g, section);
  if (align)
    LLVMSetAlignment(g, align);
  return g;
}

LLVMValueRef wrp__bytes(struct wrp__ir *ir, const char *name, const void *data,
                        size_t len, int cstr, const char *section,
                        unsigned align) {
  return constant_global(
      ir, name, LLVMConstStringInContext2(ir->ctx, data, len, cstr ? 0 : 1),
      section, align);
}

/* ---- pools ----------------------------------------------------------------
 * Data that only is pointed at goes in a few globals instead of one global
 * each: the x86 back end spends on every global (its symbol, section and
 * alignment), whatever its size. Until the pool's array exists, pointers
 * into it point into a placeholder, which the array then replaces. */

static LLVMValueRef into(struct wrp__ir *ir, LLVMTypeRef ty, LLVMValueRef ph,
                         uint64_t at) {
  LLVMValueRef idx = LLVMConstInt(ir->i64, at, 0);
  return LLVMConstInBoundsGEP2(ty, ph, &idx, 1);
}

static LLVMValueRef placeholder(struct wrp__ir *ir, LLVMTypeRef ty) {
  return LLVMAddGlobal(ir->mod, ty, "");
}

/* The pool's global, initializer `init`, in place of its placeholder. */
static void settle(struct wrp__ir *ir, const char *name, LLVMValueRef ph,
                   LLVMValueRef init, unsigned align) {
  LLVMReplaceAllUsesWith(ph, constant_global(ir, name, init, NULL, align));
  LLVMDeleteGlobal(ph);
}

LLVMValueRef wrp__pool_add(struct wrp__ir *ir, struct wrp__pool *p,
                           LLVMValueRef *elems, size_t n, LLVMValueRef *end) {
  while (n && !p->failed && p->n + n > p->cap)
    p->failed = lw_grow(&p->v, p->cap, &p->cap, sizeof *p->v, 64) != 0;
  if (n == 0 || p->failed) {
    *end = LLVMConstNull(ir->ptr);
    return LLVMConstNull(ir->ptr); /* (no memory: wrp__pool_finish says) */
  }
  if (!p->ph)
    p->ph = placeholder(ir, p->ty);
  memcpy(p->v + p->n, elems, n * sizeof *elems);
  LLVMValueRef begin = into(ir, p->ty, p->ph, p->n);
  p->n += n;
  *end = into(ir, p->ty, p->ph, p->n);
  return begin;
}

int wrp__pool_finish(struct wrp__ir *ir, struct wrp__pool *p) {
  int rc = p->failed ? LW_ENOMEM : 0;
  /* (When memory ran out, the placeholder, still pointed at, goes with
   * the module, which the error discards.) */
  if (p->ph && !rc)
    settle(ir, p->name, p->ph, LLVMConstArray2(p->ty, p->v, p->n), 0);
  free(p->v);
  *p = (struct wrp__pool){p->name, p->ty, NULL, NULL, 0, 0, 0};
  return rc;
}

/* Byte strings, each once: the tree finds a string's place in the blob
 * by its bytes (a name and a value are never one piece: values are
 * aligned). */
struct piece {
  const struct lw_buf *blob; /* the stored piece's bytes are there... */
  const void *data;          /* ...or here (a piece looked up) */
  size_t at, len;
  int cstr;
};

static const void *piece_bytes(const struct piece *p) {
  return p->data ? p->data : p->blob->data + p->at;
}

static int by_bytes(const void *a, const void *b) {
  const struct piece *x = a, *y = b;
  if (x->len != y->len)
    return x->len < y->len ? -1 : 1;
  if (x->cstr != y->cstr)
    return x->cstr - y->cstr;
  return memcmp(piece_bytes(x), piece_bytes(y), x->len);
}

LLVMValueRef wrp__shared_bytes(struct wrp__ir *ir, const void *data,
                               size_t len, int cstr) {
  cstr = cstr != 0;
  struct piece key = {NULL, data, 0, len + (size_t)cstr, cstr};
  struct piece **found = tfind(&key, &ir->shared, by_bytes);
  if (!ir->blob_ph)
    ir->blob_ph = placeholder(ir, ir->i8);
  if (found)
    return into(ir, ir->i8, ir->blob_ph, (*found)->at);
  /* Values (not names) start at a multiple of 8: a runtime may read a
   * 64-bit size from their first bytes. */
  static const unsigned char zeros[8];
  size_t pad = cstr ? 0 : (8 - ir->blob.len % 8) % 8;
  struct piece *node = malloc(sizeof *node);
  if (!node || lw_buf_append(&ir->blob, zeros, pad) ||
      lw_buf_append(&ir->blob, data, len) ||
      (cstr && lw_buf_append(&ir->blob, "", 1))) {
    free(node);
    ir->blob_failed = 1;
    return LLVMConstNull(ir->ptr);
  }
  *node = (struct piece){&ir->blob, NULL, ir->blob.len - key.len, key.len,
                         cstr};
  if (!tsearch(node, &ir->shared, by_bytes))
    free(node); /* (found again next time: another copy) */
  return into(ir, ir->i8, ir->blob_ph, ir->blob.len - key.len);
}

int wrp__shared_finish(struct wrp__ir *ir) {
  int rc = ir->blob_failed ? LW_ENOMEM : 0;
  if (ir->blob_ph && !rc)
    settle(ir, ".offloading.strings", ir->blob_ph,
           LLVMConstStringInContext2(ir->ctx, (const char *)ir->blob.data,
                                     ir->blob.len, 1),
           8);
  tdestroy(ir->shared, free);
  ir->shared = NULL;
  ir->blob_ph = NULL;
  lw_buf_free(&ir->blob);
  return rc;
}

LLVMValueRef wrp__gep(struct wrp__ir *ir, LLVMValueRef g, uint64_t off,
                      int inbounds) {
  LLVMValueRef idx[2] = {LLVMConstInt(ir->i64, 0, 0),
                         LLVMConstInt(ir->i64, off, 0)};
  return (inbounds ? LLVMConstInBoundsGEP2 : LLVMConstGEP2)(
      LLVMGlobalGetValueType(g), g, idx, 2);
}

LLVMValueRef wrp__array(struct wrp__ir *ir, const char *name, LLVMTypeRef ty,
                        LLVMValueRef *elems, size_t n, LLVMValueRef *end) {
  if (n == 0) {
    *end = LLVMConstNull(ir->ptr);
    return LLVMConstNull(ir->ptr);
  }
  LLVMValueRef init = LLVMConstArray2(ty, elems, n);
  LLVMValueRef g = LLVMAddGlobal(ir->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  *end = wrp__gep(ir, g, n, 1);
  return g;
}

LLVMValueRef wrp__entry(struct wrp__ir *ir, uint16_t kind, LLVMValueRef addr,
                        LLVMValueRef name, uint64_t size) {
  LLVMValueRef f[9] = {
      LLVMConstInt(ir->i64, 0, 0),    LLVMConstInt(ir->i16, 1, 0),
      LLVMConstInt(ir->i16, kind, 0), LLVMConstInt(ir->i32, 0, 0),
      addr ? addr : LLVMConstNull(ir->ptr),
      name,                           LLVMConstInt(ir->i64, size, 0),
      LLVMConstInt(ir->i64, 0, 0),    LLVMConstNull(ir->ptr)};
  return LLVMConstNamedStruct(ir->entry_ty, f, 9);
}

LLVMValueRef wrp__declare(struct wrp__ir *ir, const char *name, LLVMTypeRef ret,
                          LLVMTypeRef *params, unsigned n) {
  LLVMValueRef fn = LLVMGetNamedFunction(ir->mod, name);
  return fn ? fn
            : LLVMAddFunction(ir->mod, name,
                              LLVMFunctionType(ret, params, n, 0));
}

/* Does the host's linker write PE/COFF (Windows, MinGW, Cygwin), which
 * makes no __start_/__stop_ symbols? */
static int coff_host(const char *triple) {
  size_t n = strlen(triple);
  if (n >= 4 && strcmp(triple + n - 4, "-elf") == 0)
    return 0;
  return strstr(triple, "-windows") || strstr(triple, "-mingw") ||
         strstr(triple, "-cygwin") || strstr(triple, "-win32");
}

const char *wrp__entries_section(const struct wrp__ir *ir) {
  return coff_host(LLVMGetTarget(ir->mod)) ? "llvm_offload_entries$OE"
                                          : "llvm_offload_entries";
}

void wrp__entry_bounds(struct wrp__ir *ir, LLVMValueRef *begin,
                       LLVMValueRef *end) {
  static const char sec[] = "llvm_offload_entries";
  *begin = LLVMGetNamedGlobal(ir->mod, "__start_llvm_offload_entries");
  *end = LLVMGetNamedGlobal(ir->mod, "__stop_llvm_offload_entries");
  if (*begin)
    return;
  LLVMTypeRef arr0 = LLVMArrayType2(ir->entry_ty, 0);
  /* A PE/COFF linker makes no __start_/__stop_ symbols but sorts sections
   * by what follows '$': there the bounds are empty arrays of their own in
   * sections that sort first and last. */
  int coff = coff_host(LLVMGetTarget(ir->mod));
  for (int i = 0; i < 2; i++) {
    LLVMValueRef g = LLVMAddGlobal(ir->mod, arr0,
                                   i ? "__stop_llvm_offload_entries"
                                     : "__start_llvm_offload_entries");
    LLVMSetVisibility(g, LLVMHiddenVisibility);
    LLVMSetGlobalConstant(g, 1);
    if (coff) {
      LLVMSetLinkage(g, LLVMWeakODRLinkage);
      LLVMSetInitializer(g, LLVMConstNull(arr0));
      LLVMSetSection(g, i ? "llvm_offload_entries$OZ"
                          : "llvm_offload_entries$OA");
    }
    *(i ? end : begin) = g;
  }
  if (coff)
    return;
  LLVMValueRef dummy =
      LLVMAddGlobal(ir->mod, arr0, "__dummy.llvm_offload_entries");
  LLVMSetInitializer(dummy, LLVMConstNull(arr0));
  LLVMSetGlobalConstant(dummy, 1);
  LLVMSetLinkage(dummy, LLVMInternalLinkage);
  LLVMSetSection(dummy, sec);
  LLVMSetAlignment(dummy, 8);
  LLVMValueRef used_init = LLVMConstArray2(ir->ptr, &dummy, 1);
  LLVMValueRef used =
      LLVMAddGlobal(ir->mod, LLVMTypeOf(used_init), "llvm.compiler.used");
  LLVMSetLinkage(used, LLVMAppendingLinkage);
  LLVMSetSection(used, "llvm.metadata");
  LLVMSetInitializer(used, used_init);
}

LLVMValueRef wrp__call_fn(struct wrp__ir *ir, const char *name,
                          const char *callee, LLVMValueRef *args, unsigned n) {
  LLVMTypeRef void_ty = LLVMVoidTypeInContext(ir->ctx);
  LLVMTypeRef fty = LLVMFunctionType(void_ty, NULL, 0, 0);
  LLVMValueRef fn = LLVMAddFunction(ir->mod, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMSetSection(fn, ".text.startup");
  LLVMTypeRef params[4];
  if (n > LW_ARRAY_SIZE(params))
    LW_BUG("a start-up call of too many arguments");
  for (unsigned i = 0; i < n; i++)
    params[i] = LLVMTypeOf(args[i]);
  LLVMValueRef c = wrp__declare(ir, callee, void_ty, params, n);
  LLVMTypeRef cty = LLVMGlobalGetValueType(c);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ir->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ir->ctx, fn,
                                                            "entry"));
  LLVMBuildCall2(b, cty, c, args, n, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  return fn;
}

void wrp__add_xtor(struct wrp__ir *ir, int dtor, LLVMValueRef fn,
                   int priority) {
  struct wrp__xtors *x = &ir->xtors[dtor ? 1 : 0];
  if (x->n == LW_ARRAY_SIZE(x->fn))
    LW_BUG("too many start-up functions");
  x->fn[x->n] = fn;
  x->prio[x->n++] = priority;
}

/* Writes llvm.global_ctors and llvm.global_dtors from the collected
 * functions. */
void wrp__finish_xtors(struct wrp__ir *ir) {
  LLVMTypeRef fields[3] = {ir->i32, ir->ptr, ir->ptr};
  LLVMTypeRef ty = LLVMStructTypeInContext(ir->ctx, fields, 3, 0);
  for (int k = 0; k < 2; k++) {
    struct wrp__xtors *x = &ir->xtors[k];
    if (!x->n)
      continue;
    LLVMValueRef elems[LW_ARRAY_SIZE(x->fn)];
    for (size_t i = 0; i < x->n; i++) {
      LLVMValueRef f[3] = {LLVMConstInt(ir->i32, (unsigned)x->prio[i], 0),
                           x->fn[i], LLVMConstNull(ir->ptr)};
      elems[i] = LLVMConstNamedStruct(ty, f, 3);
    }
    LLVMValueRef arr = LLVMConstArray2(ty, elems, x->n);
    LLVMValueRef g = LLVMAddGlobal(ir->mod, LLVMTypeOf(arr),
                                   k ? "llvm.global_dtors"
                                     : "llvm.global_ctors");
    LLVMSetLinkage(g, LLVMAppendingLinkage);
    LLVMSetInitializer(g, arr);
  }
}
