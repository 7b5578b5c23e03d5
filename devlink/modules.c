/* modules.c - building one group's module after the split (split.c): from
 * the linked module's bitcode, or its batch's (a fraction of it), or after
 * a link in units its unit's (units.c), loaded lazily; everything the group does not keep gets internal linkage, and
 * linking that into an empty module moves - and only then materialises -
 * exactly what the group needs, in a context of its own. Then the module
 * is lowered for its group: internalized (DL_INTERNALIZE), pruned of what
 * other images define (imports.c), its specialization constants lowered
 * (specconst.c), one sub-group size, dead debug information dropped. */
#include "internal.h"

#include <llvm-c/BitWriter.h>
#include <llvm-c/Comdat.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends module `m`'s bitcode to `out`; LW_ENOMEM or 0. */
static int bitcode_of(LLVMModuleRef m, struct lw_buf *out) {
  LLVMMemoryBufferRef mb = LLVMWriteBitcodeToMemoryBuffer(m);
  int rc = !mb || lw_buf_append(out, LLVMGetBufferStart(mb),
                                LLVMGetBufferSize(mb))
               ? LW_ENOMEM
               : 0;
  if (mb)
    LLVMDisposeMemoryBuffer(mb);
  return rc;
}

/* Runs LLVM's pass pipeline `passes` on `m`; `what` names it in an error. */
int dl__run_passes(LLVMModuleRef m, const char *passes, const char *what,
                      struct lw_diag *d) {
  LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = o ? LLVMRunPasses(m, passes, NULL, o) : NULL;
  if (o)
    LLVMDisposePassBuilderOptions(o);
  if (!o)
    return lw_error(d, LW_ENOMEM, "out of memory");
  if (e) {
    char *msg = LLVMGetErrorMessage(e);
    lw_error(d, LW_ELLVM, "cannot %s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return LW_ELLVM;
  }
  return 0;
}

/* Sorted names of what a module keeps. */
struct names {
  char *const *v;
  size_t n;
};

static int kept(const struct names *keep, const char *name) {
  return keep->n &&
         bsearch(&name, keep->v, keep->n, sizeof(char *), cmp_str) != NULL;
}

/* Hides what the module does not need: internal linkage makes the linker
 * skip it unless something moved refers to it. */
struct hiding {
  const struct names *keep;
  int declare; /* variables with external linkage: declared, not hidden */
};

static int hide(LLVMValueRef v, void *ctx) {
  const struct hiding *h = ctx;
  size_t len;
  const char *name = LLVMGetValueName2(v, &len);
  if (LLVMIsDeclaration(v))
    return 0;
  if (kept(h->keep, name)) {
    /* A set's virtual functions are its image's entry points, which no
     * one there may call: the linker must not drop them as unused, and
     * other images import them - external, as DPC++ makes them. */
    if (LLVMIsAFunction(v) && LLVMGetLinkage(v) == LLVMLinkOnceODRLinkage &&
        dl__vf_set(v, &(unsigned){0})) {
      LLVMSetLinkage(v, LLVMExternalLinkage);
      LLVMSetComdat(v, NULL);
    }
    return 0;
  }
  LLVMSetComdat(v, NULL);
  if (h->declare && LLVMIsAGlobalVariable(v) && !dl__is_local(v)) {
    LLVMSetInitializer(v, NULL);
    LLVMSetLinkage(v, LLVMExternalLinkage);
    return 0;
  }
  LLVMSetLinkage(v, LLVMInternalLinkage);
  return 0;
}

/* The part of the module in `bc` that `keep` needs, in context `ctx`: the
 * bitcode is loaded lazily, everything else gets internal linkage, and
 * linking that into an empty module moves - and only then reads - exactly
 * what is needed. */
int dl__extract(const struct lw_buf *bc, char *const *keep_v, size_t keep_n,
                int declare, LLVMContextRef ctx, LLVMModuleRef *out,
                struct lw_diag *d) {
  struct names keep = {keep_v, keep_n};
  struct hiding h = {&keep, declare};
  LLVMModuleRef src = NULL;
  if (dl__lazy_module(ctx, bc->data, bc->len, "split", &src))
    return lw_error(d, LW_ELLVM, "cannot reload the linked device module");
  /* The "used" lists would drag everything along: a split module needs
   * none of them. */
  const char *lists[] = {"llvm.used", "llvm.compiler.used"};
  for (size_t k = 0; k < LW_ARRAY_SIZE(lists); k++) {
    LLVMValueRef u = LLVMGetNamedGlobal(src, lists[k]);
    if (u)
      LLVMDeleteGlobal(u);
  }
  dl__each_global(src, hide, &h);
  LLVMModuleRef dst = LLVMModuleCreateWithNameInContext("device", ctx);
  LLVMSetTarget(dst, LLVMGetTarget(src));
  LLVMSetDataLayout(dst, LLVMGetDataLayoutStr(src));
  if (LLVMLinkModules2(dst, src)) {
    LLVMDisposeModule(dst);
    return lw_error(d, LW_ELLVM, "cannot build a device module");
  }
  *out = dst;
  return 0;
}

/* extract() into `out` as bitcode; the context it needed is gone after. */
static int extract_bitcode(const struct lw_buf *bc, const struct names *keep,
                           struct lw_buf *out, struct lw_diag *d) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = NULL;
  int rc = dl__extract(bc, keep->v, keep->n, 0, ctx, &m, d);
  if (!rc && bitcode_of(m, out))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (m)
    LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  return rc;
}

size_t dl_split_batch(const struct dl_split *s, size_t i) {
  return s->batch_size ? i / s->batch_size : 0;
}

/* The module of groups [first, end): what they keep, together, taken
 * from `src`. */
static int make_part(const struct dl_split *s, size_t first, size_t end,
                     const struct lw_buf *src, struct lw_buf *out,
                     struct lw_diag *d) {
  if (end > s->n)
    end = s->n;
  size_t total = 0;
  for (size_t i = first; i < end; i++)
    total += s->g[i].keep.n;
  char **all = malloc((total ? total : 1) * sizeof *all);
  if (!all)
    return lw_error(d, LW_ENOMEM, "out of memory");
  size_t n = 0;
  for (size_t i = first; i < end; i++)
    for (size_t k = 0; k < s->g[i].keep.n; k++)
      all[n++] = s->g[i].keep.v[k];
  qsort(all, n, sizeof *all, cmp_str);
  size_t u = 0;
  for (size_t k = 0; k < n; k++)
    if (!u || strcmp(all[u - 1], all[k]) != 0)
      all[u++] = all[k];
  struct names keep = {all, u};
  int rc = extract_bitcode(src, &keep, out, d);
  free(all);
  return rc;
}

int dl_split_make_super(struct dl_split *s, size_t k, struct lw_diag *d) {
  size_t groups = s->super_size * s->batch_size;
  if (k >= s->nsupers || s->super[k].len)
    return 0;
  return make_part(s, k * groups, (k + 1) * groups, &s->bitcode,
                   &s->super[k], d);
}

/* Batch b's module: from its super-batch's, when that was made. */
int dl_split_make_batch(struct dl_split *s, size_t b, struct lw_diag *d) {
  if (s->batch_size <= 1 || s->unit_of || s->batch[b].len)
    return 0;
  const struct lw_buf *src = &s->bitcode;
  if (s->nsupers && s->super[b / s->super_size].len)
    src = &s->super[b / s->super_size];
  return make_part(s, b * s->batch_size, (b + 1) * s->batch_size, src,
                   &s->batch[b], d);
}

/* The group's module keeps only its own code and gets its specialization
 * constants lowered. */
static int is_entry(const struct dl_group *g, const char *name) {
  for (size_t k = 0; k < g->entries.n; k++)
    if (strcmp(g->entries.v[k], name) == 0)
      return 1;
  return 0;
}

/* DL_INTERNALIZE: a split module's functions that are not its own entry
 * points become internal (a SYCL_EXTERNAL function copied in as a callee
 * too), as DPC++'s tool leaves them - except what its address may be taken
 * for elsewhere ("referenced-indirectly"). With dynamic linking
 * (`importable` set) what another image may import stays external too:
 * DPC++'s cleanup then internalizes only the functions that cannot be
 * imported (ModuleSplitter.cpp's mustPreserveGV: no SYCL_EXTERNAL mark, or
 * a reserved name), variables never. */
static void internalize(LLVMModuleRef m, const struct dl_group *g,
                        unsigned flags, int importable) {
  static const char indirect[] = "referenced-indirectly";
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f;
       f = LLVMGetNextFunction(f)) {
    LLVMLinkage l = LLVMGetLinkage(f);
    if (LLVMIsDeclaration(f) || l == LLVMInternalLinkage ||
        l == LLVMPrivateLinkage || l == LLVMAvailableExternallyLinkage ||
        is_entry(g, LLVMGetValueName(f)) ||
        (importable && dl__importable(f)) ||
        dl__foreign(f, g, flags) || /* another image's: declared here */
        LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, indirect,
                                      sizeof indirect - 1))
      continue;
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMSetVisibility(f, LLVMDefaultVisibility);
    LLVMSetComdat(f, NULL);
  }
}

/* Debug information of code the module lost goes with it: compile units
 * none of its functions belongs to, as LLVM's strip-dead-debug-info pass
 * drops them (DPC++'s default after a split). */
static int strip_dead_debug(LLVMModuleRef m, struct lw_diag *d) {
  if (!LLVMGetNamedMetadataNumOperands(m, "llvm.dbg.cu"))
    return 0;
  return dl__run_passes(m, "strip-dead-debug-info",
                    "strip dead debug information", d);
}

static int lower(const struct dl_split *s, size_t i, struct dl_module **out,
                 struct lw_diag *d) {
  /* Where images may import from each other at run time (dynamic
   * linking, or undefined functions left for the runtime), only what no
   * image can import becomes internal. */
  int importable = !(s->flags & DL_INTERNALIZE) &&
                   (s->flags & (DL_DYNAMIC_LINKING | DL_ALLOW_UNDEFINED));
  if ((s->flags & DL_INTERNALIZE || importable) && !s->g[i].vf_set &&
      s->g[i].entries.n) {
    internalize((*out)->mod, &s->g[i], s->flags, importable);
    dl__drop_unused((*out)->mod);
  }
  int rc = dl__prune((*out)->mod, &s->g[i], s->flags)
               ? lw_error(d, LW_ENOMEM, "out of memory")
               : 0;
  if (!rc && s->g[i].spec_mode)
    rc = dl__spec_lower((*out)->mod, &s->g[i], d);
  if (!rc && strncmp((*out)->triple, "spir", 4) == 0)
    dl__one_sub_group_size((*out)->mod);
  if (!rc && s->n > 1)
    rc = strip_dead_debug((*out)->mod, d);
  if (!rc && dl__sanitizer_modules((*out)->mod))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (rc) {
    dl_module_free(*out);
    *out = NULL;
  }
  return rc;
}

int dl_split_module(struct dl_split *s, size_t i, struct dl_module **out,
                    struct lw_diag *d) {
  if (s->whole) {
    *out = s->whole;
    s->whole = NULL;
    return lower(s, i, out, d);
  }
  if (i >= s->n || (!s->bitcode.len && !s->unit_of))
    return lw_error(d, LW_EINVAL, "module %zu of the split is gone", i);
  /* From the batch's module (a fraction of the linked one, so loading it
   * costs a fraction), made once per process that needs it. */
  int rc = 0;
  size_t b = dl_split_batch(s, i);
  const struct lw_buf *src =
      s->unit_of ? &s->unit_bitcode[s->unit_of[i]] : &s->bitcode;
  if (s->batch_size > 1 && !s->unit_of) {
    if ((rc = dl_split_make_batch(s, b, d)))
      return rc;
    src = &s->batch[b];
  }
  /* The module gets a context of its own, freed with it. */
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = NULL;
  if ((rc = dl__extract(src, s->g[i].keep.v, s->g[i].keep.n, 0, ctx, &m,
                        d))) {
    LLVMContextDispose(ctx);
    return rc;
  }
  if (dl_module_adopt(ctx, m, s->triple, out))
    return lw_error(d, LW_ENOMEM, "out of memory");
  (*out)->valid = 1; /* a part of the linked module */
  return lower(s, i, out, d);
}

int dl_module_bitcode(struct dl_module *m, struct lw_buf *out) {
  return bitcode_of(m->mod, out);
}

void dl_split_release(struct dl_split *s) {
  dl_module_free(s->linked);
  s->linked = NULL;
}

void dl_split_free(struct dl_split *s) {
  for (size_t i = 0; i < s->n; i++) {
    free(s->g[i].id);
    lw_strvec_free(&s->g[i].kernels);
    lw_strvec_free(&s->g[i].exports);
    lw_strvec_free(&s->g[i].entries);
    lw_strvec_free(&s->g[i].asserts);
    lw_strvec_free(&s->g[i].keep);
    free(s->g[i].vf_set);
    lw_strvec_free(&s->g[i].spec_ids);
    free(s->g[i].spec_at);
    dl_props_free(&s->g[i].props);
  }
  free(s->g);
  lw_buf_free(&s->bitcode);
  lw_strvec_free(&s->warnings);
  free(s->triple);
  dl_module_free(s->whole);
  dl_split_release(s);
  for (size_t b = 0; s->batch && b < s->nbatches; b++)
    lw_buf_free(&s->batch[b]);
  for (size_t k = 0; s->super && k < s->nsupers; k++)
    lw_buf_free(&s->super[k]);
  free(s->super);
  free(s->batch);
  for (size_t k = 0; s->unit_bitcode && k < s->nunits; k++)
    lw_buf_free(&s->unit_bitcode[k]);
  free(s->unit_bitcode);
  free(s->unit_of);
  memset(s, 0, sizeof *s);
}
