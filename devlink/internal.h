/* internal.h - private to devlink/. */
#ifndef DL_INTERNAL_H
#define DL_INTERNAL_H

#include "dl.h"

#include <llvm-c/Core.h>

struct dl_module {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  char *triple;
  int valid;   /* made by the IR linker from verified modules */
};

/* ---- link.c ------------------------------------------------------------- */

/* A context's first error diagnostic, kept instead of printed (LLVM's
 * default handler exits on errors): LLVMContextSetDiagnosticHandler(ctx,
 * dl__capture_diag, &capture). */
struct dl__diag_capture {
  char text[512];
};
void dl__capture_diag(LLVMDiagnosticInfoRef info, void *capture);

/* Bitcode `data` loaded lazily into `ctx` (no function's body read until
 * materialised); 1 when it is not readable bitcode. */
int dl__lazy_module(LLVMContextRef ctx, const void *data, size_t len,
                    const char *name, LLVMModuleRef *out);

/* Input `in` parsed into `ctx` (and verified), its kernels marked with the
 * unit they came from ("sycl-module-id"). */
int dl__parse_unit(LLVMContextRef ctx, const struct dl_input *in,
                   LLVMModuleRef *out, struct dl__diag_capture *cap,
                   struct lw_diag *d);

/* Input `in`, parsed into `ctx`, gives `dst` what it needs of it so far
 * (and what that needs), as a library does; bitcode already `verified`
 * elsewhere is loaded lazily, and only what is taken is read. */
int dl__link_needed(LLVMContextRef ctx, LLVMModuleRef dst,
                    const struct dl_input *in, int verified,
                    struct dl__diag_capture *cap, struct lw_diag *d);

/* ---- nvptxmath.c --------------------------------------------------------- */

/* Calls of math intrinsics that LLVM's NVPTX back end cannot select become
 * calls of CUDA libdevice's functions (__nv_sinf, ...). */
void dl__nvptx_math(LLVMModuleRef m);

/* ---- initarray.c -------------------------------------------------------- */

/* A native ELF object's constructor and destructor lists as .init_array/
 * .fini_array pointers (as clang emits them). LW_ENOMEM on failure. */
int dl__use_init_array(LLVMModuleRef mod, const char *triple);

/* ---- split.c ------------------------------------------------------------ */

/* The batches of s->n groups (s->batch_size, s->nbatches). */
void dl__batches(struct dl_split *s);

/* ---- modules.c ---------------------------------------------------------- */

/* What the sorted names keep[0..keep_n) need of the module whose bitcode
 * is `bc`, in `ctx`: everything else internal (with `declare`, variables
 * of external linkage declared instead), and only what is reached read
 * and moved into the new module. */
int dl__extract(const struct lw_buf *bc, char *const *keep_v, size_t keep_n,
                int declare, LLVMContextRef ctx, LLVMModuleRef *out,
                struct lw_diag *d);

/* ---- callgraph.c: a pointer set and reachability ------------------------ */

struct dl__set {
  LLVMValueRef *v;
  size_t n, cap;
};
/* 1 if added, 0 if present, -1 when out of memory. */
int dl__set_add(struct dl__set *s, LLVMValueRef v);
int dl__set_has(const struct dl__set *s, LLVMValueRef v);
void dl__set_free(struct dl__set *s);

/* The functions of a set in module order: what the property sets of a
 * group look at (once each, not the whole module's list per group). */
struct dl__fns {
  LLVMValueRef *v;
  size_t n;
};
/* Positions of every function of a module. */
struct dl__order {
  LLVMValueRef *fn;
  size_t *pos, cap;
};
int dl__order_init(struct dl__order *o, LLVMModuleRef m); /* 0 or -1 */
void dl__order_free(struct dl__order *o);
/* The functions of `s`, in the order `o` gives; 0 or -1 (memory). */
int dl__fns_of(const struct dl__set *s, const struct dl__order *o,
               struct dl__fns *out);

/* Calls `fn` on every global variable, then every function, then every
 * alias of `m`, until it returns non-zero (which is returned). */
int dl__each_global(LLVMModuleRef m, int (*fn)(LLVMValueRef g, void *ctx),
                    void *ctx);

/* How many instructions function `f` has. */
size_t dl__instructions(LLVMValueRef f);

/* Adds to `out` the roots and every global value and constant they reach
 * (through function bodies, initialisers and aliasees), but not through
 * the code of other images (imports.c): virtual functions, and with
 * `dynamic` importable SYCL_EXTERNAL functions. 0 or -1 (memory). */
int dl__reachable(LLVMValueRef const *roots, size_t nroots, int dynamic,
                  struct dl__set *out);

/* ---- metadata.c: DPC++ function metadata, and kinds of functions ------- */

/* Integer operands of metadata `kind` on function `f` (pairs {!"name", i32}
 * give their integer; `names[i]` then points into LLVM's string, else is
 * NULL). Returns the count, -1 when absent; at most `max` are stored. */
int dl__md_ints(LLVMValueRef f, const char *kind, int64_t *out,
                const char **names, int max);
/* Each MDString operand of metadata `kind` on `f`, after a '-', appended
 * to `out`; 0 or LW_ENOMEM. */
int dl__md_strings(LLVMValueRef f, const char *kind, struct lw_buf *out);
/* The first operand of metadata `kind` on `f` if it is a string (its
 * length in *len; owned by the context), else NULL. */
const char *dl__md_string(LLVMValueRef f, const char *kind, unsigned *len);
/* The value of `f`'s string attribute `name` (its length in *len; owned by
 * the context), or NULL when `f` has none. */
const char *dl__fn_attr(LLVMValueRef f, const char *name, unsigned *len);

/* Has `v` internal or private linkage (seen by its module alone)? */
int dl__is_local(LLVMValueRef v);
/* Is `f` a kernel (a definition with the SPIR kernel calling convention)? */
int dl__is_kernel(LLVMValueRef f);
/* Is `f` explicit SIMD (ESIMD) code: DPC++'s !sycl_explicit_simd? */
int dl__is_esimd(LLVMValueRef f);
/* Which of the front end's specialization-constant getters `f` is, if any
 * (DL__NOT_GETTER, 0, when none). */
enum dl__getter {
  DL__NOT_GETTER,
  DL__GETTER_SCALAR,
  DL__GETTER_COMPOSITE,
  DL__GETTER_ALLOCA
};
enum dl__getter dl__spec_getter(LLVMValueRef f);
/* The bytes of `init` when it is a constant string (an array of i8 as
 * constant data), their count in *len; else NULL. */
const char *dl__const_string(LLVMValueRef init, size_t *len);
/* May declaration `f` be defined by another device image, found at run
 * time (dynamic linking)? A SYCL_EXTERNAL function ("sycl-module-id")
 * that is no intrinsic and whose name is not reserved ("__", also as the
 * first name of an Itanium-mangled one), as DPC++ decides. */
int dl__importable(LLVMValueRef f);
/* Is `f` a SYCL_EXTERNAL function: a definition with "sycl-module-id",
 * no intrinsic and no SPIR-V or SYCL builtin (DPC++'s entry points beside
 * kernels)? */
int dl__is_sycl_external(LLVMValueRef f);
/* Is `f` a SYCL_EXTERNAL function other images may import (a visible
 * spir_func one, no virtual function)? */
int dl__is_exportable(LLVMValueRef f);

/* ---- gattrs.c: string attributes of global variables -------------------- */

struct dl__gattr {
  LLVMValueRef g;
  struct lw_strvec kv; /* key, value, key, value, ... ("" for a flag) */
};
struct dl__gattrs {
  struct dl__gattr *v;
  size_t n;
};

/* Reads the string attributes of every global variable of `m` that has
 * any. 0 or LW_ENOMEM. */
int dl__gattrs_read(LLVMModuleRef m, struct dl__gattrs *out);
/* Attribute `key` of variable `g` ("" for a flag), or NULL. */
const char *dl__gattr(const struct dl__gattrs *a, LLVMValueRef g,
                      const char *key);
/* Is device global `g` of device_image_scope? */
int dl__image_scope(const struct dl__gattrs *a, LLVMValueRef g);
void dl__gattrs_free(struct dl__gattrs *a);

/* ---- propset.c: property sets as a value --------------------------------- */

/* The known property set `name[0..len)` (a string that outlives every
 * dl_props), or NULL. */
const char *dl__set_name(const char *name, size_t len);
/* Adds property `name` to set `set_name` (dl__set_name's); NULL when out
 * of memory. */
struct dl_prop *dl__prop_new(struct dl_props *p, const char *set_name,
                             const char *name);
/* Set `name` of `p` (a string that outlives `p`: a literal, or
 * dl__set_name's), added when absent. */
struct dl_propset *dl__propset(struct dl_props *p, const char *name);
/* Adds property `name` to set `s`; NULL when out of memory. */
struct dl_prop *dl__prop_add(struct dl_propset *s, const char *name);
/* Orders sets and properties by name, as DPC++'s registry writes them. */
void dl__props_sort(struct dl_props *p);

/* ---- props.c: what a module's property sets hold ----------------------- */

/* The property sets of the part of `mod` made of the functions and
 * variables in `only` (its functions `fns`, in module order) whose entry
 * points are group `gr`'s kernels and exports; `ga` are the module's
 * global variable attributes; `flags` dl_split's. */
int dl__props(LLVMModuleRef mod, const struct dl__set *only,
              const struct dl__fns *fns, const struct dl_group *gr,
              int opt_level, const struct dl__gattrs *ga, unsigned flags,
              struct dl_props *out, struct lw_diag *d);

/* ---- specconst.c: SYCL 2020 specialization constants ------------------- */

/* Does anything in `only` read a specialization constant? */
int dl__spec_used(const struct dl__set *only);
/* Lays out the specialization constants of the functions in `only` for
 * gr->spec_mode: gr->spec_ids and spec_at, and their property sets in
 * gr->props. Malformed getter calls are LW_EFORMAT. */
int dl__spec_layout(LLVMModuleRef m, const struct dl__set *only,
                    struct dl_group *gr, struct lw_diag *d);
/* Lowers the getter calls of `m` (the group's module) as its layout says. */
int dl__spec_lower(LLVMModuleRef m, const struct dl_group *gr,
                   struct lw_diag *d);

/* ---- virtual.c: SYCL virtual functions ----------------------------------- */

/* The set of virtual functions `f` belongs to ("indirectly-callable"), or
 * NULL. */
const char *dl__vf_set(LLVMValueRef f, unsigned *len);
/* Is `f` a virtual function of another set than `vf_set` (NULL: of any
 * set)? Such a function is code of another image. */
int dl__vf_foreign(LLVMValueRef f, const char *vf_set);
/* SYCL/virtual functions of group `gr`, whose functions are `fns`, in
 * module order. 0 or LW_ENOMEM. */
int dl__vf_props(const struct dl__fns *fns, const struct dl_group *gr,
                 struct dl_props *out);

/* ---- imports.c: a module keeps only its own code ----------------------- */

/* Is definition `f` another image's code in group `gr`'s module (`flags`
 * dl_split's)? */
int dl__foreign(LLVMValueRef f, const struct dl_group *gr, unsigned flags);
/* In group `gr`'s module (`flags` dl_split's): the functions other images
 * define become declarations (and a dummy image's virtual functions get
 * empty bodies); what only they used goes. 0 or LW_ENOMEM. */
int dl__prune(LLVMModuleRef m, const struct dl_group *gr, unsigned flags);
/* Deletes the local functions and variables nothing uses (constant
 * expressions nothing uses aside), until none is left. */
void dl__drop_unused(LLVMModuleRef m);
/* In a SPIR module: @llvm.used goes, as in DPC++'s post-link (what it
 * names would become function pointers in SPIR-V), and with it the
 * declarations nothing else uses; 1 when there was one. */
int dl__erase_used(LLVMModuleRef m);
/* In a SPIR module: device globals leave @llvm.compiler.used (what else it
 * holds stays), and go when nothing else uses them, as DPC++'s post-link
 * does; 0, or -1 when out of memory. */
int dl__trim_compiler_used(LLVMModuleRef m);

/* ---- ctprops.c ---------------------------------------------------------- */

/* Kernel properties given as "sycl-*" attributes become the metadata clang
 * writes for the same properties (reqd_work_group_size, ...). */
void dl__compile_time_properties(LLVMModuleRef m);

/* ---- sanitizer.c: device code built with a sanitizer --------------------- */

/* The sanitizer ("asan", "msan", "tsan") whose kernel table `g` is, by its
 * name, or NULL; *suffix (when asked): the name's part after the prefix. */
const char *dl__sanitizer_table(LLVMValueRef g, const char **suffix);
/* Before the split: each table made a device global. */
int dl__sanitizer_tables(LLVMModuleRef m, struct lw_diag *d);
/* After it: a module's __sanitizerModule<suffix> kernels. 0 or LW_ENOMEM. */
int dl__sanitizer_modules(LLVMModuleRef m);
/* -host-pipes: each host pipe's HostAccessINTEL decoration. 0 or
 * LW_ENOMEM. */
int dl__host_pipe_decorations(LLVMModuleRef m);
/* intel_reqd_sub_group_size keeps its first value only: SPIR-V's
 * SubgroupSize takes one, and LLVM 22's back end would write them all (an
 * invalid module). After the split, whose categories read them all as
 * DPC++'s do. */
void dl__one_sub_group_size(LLVMModuleRef m);

/* ---- printf.c ----------------------------------------------------------- */

/* In a SPIR module: printf calls whose format is a constant string call
 * the constant-address-space overload with a copy of it there; 0, or -1
 * when out of memory. */
int dl__printf_constant_formats(LLVMModuleRef m);
/* The constant string global `v` points to the start of, through casts of
 * address space and zero-index getelementptrs; NULL for anything else. */
LLVMValueRef dl__string_global(LLVMValueRef v);

/* ---- decorations.c ------------------------------------------------------- */

/* Drops from global variables' !spirv.Decorations those LLVM 22's back
 * end cannot write (decorations.c). 0 or LW_ENOMEM. */
int dl__drop_global_decorations(LLVMModuleRef m);
/* DPC++'s translator's number of the HostAccessINTEL decoration. */
enum { DL__HOST_ACCESS_INTEL = 6147 };
/* Global `g`'s !spirv.Decorations: HostAccessINTEL (`mode`: 0 read, 1
 * write, 2 read-write) by `name`, as DPC++ gives device globals, host pipes
 * and sanitizer tables (decorations.c; dropped again before emission). */
void dl__host_access(LLVMValueRef g, unsigned mode, const char *name);
/* Drops the pointer annotations that carry SYCL compile-time properties
 * ("sycl-properties"), which LLVM 22's back end cannot write
 * (decorations.c); 1 when there were some. */
int dl__drop_property_annotations(LLVMModuleRef m);

/* ---- spirv.c ------------------------------------------------------------- */

/* Renumbers a SPIR-V module's ids in order of first appearance, in place;
 * LW_EBADOUT when an id is defined twice, past the bound or used and never
 * defined (the checks of dl_spirv_check_ids). */
int dl__spirv_canonical_ids(struct lw_buf *spv, struct lw_diag *d);
/* Is an operand of this type (spv_operand_type_t) an id? */
int dl__spirv_is_id(int operand_type);
/* The module from spv->data + at on: integer OpConstantNull made OpConstant
 * 0 (spirv.c). */
int dl__spirv_int_nulls(struct lw_buf *spv, size_t at, struct lw_diag *d);
/* The same: every pointer-to-function type one per function type, of
 * storage class CodeSectionINTEL (spirv.c). */
int dl__spirv_function_pointers(struct lw_buf *spv, size_t at,
                                struct lw_diag *d);

/* ---- entries.c: entry points and their groups ---------------------------- */

/* The entry points of `mod` (kernels; exported SYCL_EXTERNAL functions and
 * sets of virtual functions as `flags` say, dl_split's), each group's in
 * out->g (ids, entry points, what each keeps) and what its entry points
 * reach in (*reach)[g], malloc'd, one set per group. 0, LW_ENOMEM (no text)
 * or a checked error (dl__check_kernel's, with its text). */
int dl__group_entries(LLVMModuleRef mod, enum dl_split_mode mode,
                      unsigned flags, struct dl_split *out,
                      struct dl__set **reach, struct lw_diag *d);

/* ---- modules.c: a group's module ----------------------------------------- */

/* Runs LLVM's pass pipeline `passes` on `m`; `what` names it in an error. */
int dl__run_passes(LLVMModuleRef m, const char *passes, const char *what,
                   struct lw_diag *d);

/* ---- checks.c ------------------------------------------------------------ */

/* Module-wide checks before the split: undefined functions (unless
 * `flags` allow them, dl_split's, or `elsewhere` names them), unknown
 * aspects; warnings (SYCL_EXTERNAL aspects) are appended to `warnings`. */
int dl__check_module(LLVMModuleRef m, unsigned flags,
                     const struct lw_strvec *elsewhere,
                     struct lw_strvec *warnings, struct lw_diag *d);
/* Is `f` a declaration of the bfloat16 device library's conversions, which
 * DPC++'s runtime links in as an image of its own (always an import)? */
int dl__bf16_devicelib(LLVMValueRef f);
/* A kernel's call graph must agree on work-group and sub-group sizes. */
int dl__check_kernel(LLVMValueRef kernel, const struct dl__set *reach,
                     struct lw_diag *d);

#endif
