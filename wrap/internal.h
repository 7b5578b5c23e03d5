/* internal.h - private to wrap/: IR building helpers (ir.c) shared by the
 * SYCL, OpenMP and CUDA/HIP registration builders (sycl.c, openmp.c,
 * cuda.c), which build.c puts together. */
#ifndef WRP_INTERNAL_H
#define WRP_INTERNAL_H

#include "wrp.h"

#include <llvm-c/Core.h>

struct wrp__ir {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMTypeRef i8, i16, i32, i64, ptr;
  LLVMTypeRef entry_ty; /* struct __tgt_offload_entry (LLVM >= 20 layout) */
  struct wrp__xtors {
    LLVMValueRef fn[4];
    int prio[4];
    size_t n;
  } xtors[2]; /* [0] constructors, [1] destructors */
  /* wrp__shared_bytes': the bytes, in one global made at the end, a
   * placeholder until then, and a tsearch tree of what they hold */
  struct lw_buf blob;
  LLVMValueRef blob_ph;
  void *shared;
  int blob_failed;
};

/* Constants of one type, in one internal global array (named `name`) that
 * wrp__pool_finish makes; pointers into it point into a placeholder until
 * then. */
struct wrp__pool {
  const char *name;
  LLVMTypeRef ty;
  LLVMValueRef ph;
  LLVMValueRef *v;
  size_t n, cap;
  int failed;
};

/* Internal constant global holding `len` bytes (plus a NUL when `cstr`).
 * Returns the global; `section` may be NULL, `align` 0. */
LLVMValueRef wrp__bytes(struct wrp__ir *ir, const char *name, const void *data,
                        size_t len, int cstr, const char *section,
                        unsigned align);

/* A pointer to `len` bytes (and a NUL when `cstr`) that only are pointed
 * at (names, property values): the same bytes once, all in one global
 * that wrp__shared_finish makes (LW_ENOMEM if memory ran out before). */
LLVMValueRef wrp__shared_bytes(struct wrp__ir *ir, const void *data,
                               size_t len, int cstr);
int wrp__shared_finish(struct wrp__ir *ir);

/* Pointers to the first of `n` constants added to pool `p` and (*end) past
 * its last; NULL pointers when n == 0. */
LLVMValueRef wrp__pool_add(struct wrp__ir *ir, struct wrp__pool *p,
                           LLVMValueRef *elems, size_t n, LLVMValueRef *end);
/* Makes the pool's global; LW_ENOMEM if memory ran out before. */
int wrp__pool_finish(struct wrp__ir *ir, struct wrp__pool *p);

/* Pointer `off` elements into global `g` of array type (inbounds, or not:
 * as LLVM 22's SYCL wrapper writes it). */
LLVMValueRef wrp__gep(struct wrp__ir *ir, LLVMValueRef g, uint64_t off,
                      int inbounds);

/* Internal constant global array of `n` structs of type `ty`; returns the
 * global and sets *end to one-past-the-end. NULL pointers when n == 0. */
LLVMValueRef wrp__array(struct wrp__ir *ir, const char *name, LLVMTypeRef ty,
                        LLVMValueRef *elems, size_t n, LLVMValueRef *end);

/* An offload entry constant {0, 1, kind, 0, addr, name, size, 0, null}. */
LLVMValueRef wrp__entry(struct wrp__ir *ir, uint16_t kind, LLVMValueRef addr,
                        LLVMValueRef name, uint64_t size);

/* The function `name`, declared as ret(params) if the module lacks it. */
LLVMValueRef wrp__declare(struct wrp__ir *ir, const char *name, LLVMTypeRef ret,
                          LLVMTypeRef *params, unsigned n);

/* The section an offload entry goes in: llvm_offload_entries, or on a
 * PE/COFF host its $OE part (between the bounds' $OA and $OZ). */
const char *wrp__entries_section(const struct wrp__ir *ir);

/* The linker-made bounds __start_/__stop_llvm_offload_entries of the
 * section the compilers put host offload entries in, made once per module,
 * with a zero-sized dummy entry that keeps the section alive. */
void wrp__entry_bounds(struct wrp__ir *ir, LLVMValueRef *begin,
                       LLVMValueRef *end);

/* Internal void() function in .text.startup calling `callee(args...)`
 * (its parameters of the arguments' types). Returns the function. */
LLVMValueRef wrp__call_fn(struct wrp__ir *ir, const char *name,
                          const char *callee, LLVMValueRef *args, unsigned n);

/* Adds `fn` to llvm.global_ctors (dtor = 0) or llvm.global_dtors. */
void wrp__add_xtor(struct wrp__ir *ir, int dtor, LLVMValueRef fn,
                   int priority);
/* Writes the constructors and destructors added so far as llvm.global_ctors
 * and llvm.global_dtors. */
void wrp__finish_xtors(struct wrp__ir *ir);

int wrp__sycl(struct wrp__ir *ir, const struct wrp_sycl_image *imgs, size_t n,
              struct lw_diag *d);
/* The descriptor { u16 Version=1, u16 n, images, null, null }, the same in
 * DPC++'s and LLVM 22's layouts, and the constructor and destructor of
 * priority 1 that hand it to __sycl_register_lib and
 * __sycl_unregister_lib (sycl.c). */
void wrp__sycl_descriptor(struct wrp__ir *ir, LLVMValueRef images, size_t n);
/* LLVM 23's: `bin`, the OffloadBinary of every image, registered as it is
 * (sycl_llvm23.c). */
void wrp__sycl_llvm23(struct wrp__ir *ir, const struct wrp_fatbin *bin,
                      int relocatable);
/* The same in upstream LLVM 22's layout (sycl_llvm22.c). */
int wrp__sycl_llvm22(struct wrp__ir *ir, const struct wrp_sycl_image *imgs,
                     size_t n, int relocatable, struct lw_diag *d);
int wrp__openmp(struct wrp__ir *ir, const struct wrp_omp_image *imgs,
                size_t n, int relocatable, struct lw_diag *d);
/* CUDA's registration of a fatbinary, or HIP's when `hip`. */
void wrp__fatbin(struct wrp__ir *ir, const struct wrp_fatbin *fb, int hip);

#endif
