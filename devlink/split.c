/* split.c - the SYCL post-link split: which kernels go into which device
 * module, and building each module on its own.
 *
 * Kernels are grouped by the split mode (off: one group; per_source: one per
 * translation unit, the "sycl-module-id" attribute, which dl_link sets from
 * the input a kernel came from when the compiler did not; per_kernel: one
 * each; auto: per_source, or off when function pointers are used) and then
 * by their optional features (seed 001): kernels share a module only if the
 * aspects used anywhere in their call graphs, their required work-group and
 * sub-group sizes and their fixed targets are the same; ESIMD kernels
 * (!sycl_explicit_simd) never share a module with SPMD ones. Groups are ordered
 * by their first kernel in module order, so the result is deterministic. A
 * group that reads specialization constants is made once for each way of
 * lowering them that is asked for (specconst.c), and each copy is lowered
 * when its module is built.
 *
 * Each group keeps the closure of its kernels (callgraph.c). With one group
 * the linked module is used as it is. With several, the module is written to
 * bitcode once, and a group's module is made from bitcode: loaded lazily,
 * everything the group does not need gets internal linkage, and linking
 * that into an empty module moves - and only then materialises - exactly
 * what the group needs. Functions reached from several kernels are thereby
 * copied into every module that needs them. Groups come in batches of
 * consecutive groups: a batch's module is made that way from the linked
 * module, once in each process that builds its groups, and each group's
 * module from its batch's, in a context of its own; with many batches, a
 * batch's module is made from its super-batch's, made the same way from
 * the linked module. A module is the same whichever process builds it and
 * whatever it built before. */
#include "internal.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Comdat.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An entry point: a kernel, an exported SYCL_EXTERNAL function (dynamic
 * linking) or a virtual function (its set's image, virtual.c). */
enum entry_kind { KERNEL, EXPORTED, VIRTUAL };

struct kernel {
  LLVMValueRef f;
  enum entry_kind kind;
  char *group_id; /* split scope + feature key */
  struct dl__set reach;
  size_t order; /* position in the module, for a stable sort */
  int esimd;    /* an ESIMD kernel in a module of ESIMD kernels: its group's
                   id ends in ESIMD */
  int all_esimd; /* an ESIMD entry point */
};

#define ESIMD "|esimd"

/* DPC++'s order: categories from the greatest down, a category's ESIMD
 * part right after its SPMD part, module order within each. */
static int by_dpcpp_key(const void *a, const void *b) {
  const struct kernel *x = a, *y = b;
  size_t lx = strlen(x->group_id) - (x->esimd ? sizeof ESIMD - 1 : 0);
  size_t ly = strlen(y->group_id) - (y->esimd ? sizeof ESIMD - 1 : 0);
  int c = memcmp(y->group_id, x->group_id, lx < ly ? lx : ly);
  if (!c)
    c = lx < ly ? 1 : lx > ly ? -1 : x->esimd - y->esimd;
  return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

static int append(struct lw_buf *b, const char *s) {
  return lw_buf_append(b, s, strlen(s));
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorted, unique values of metadata `kind` over every function reached. */
static int collect(const struct dl__set *reach, const char *kind,
                   struct lw_buf *key) {
  int64_t vals[256];
  int n = 0;
  for (size_t i = 0; i < reach->cap; i++) {
    LLVMValueRef v = reach->v[i];
    if (!v || !LLVMIsAFunction(v) || dl__vf_foreign(v, NULL))
      continue; /* a virtual function: its set's image has its code */
    int64_t got[64];
    int k = dl__md_ints(v, kind, got, NULL, 64);
    for (int j = 0; j < k && j < 64 && n < 256; j++)
      vals[n++] = got[j];
  }
  if (n > 1)
    qsort(vals, (size_t)n, sizeof *vals, cmp_i64);
  char num[32];
  for (int i = 0; i < n; i++)
    if (i == 0 || vals[i] != vals[i - 1]) {
      snprintf(num, sizeof num, "%lld,", (long long)vals[i]);
      if (append(key, num))
        return LW_ENOMEM;
    }
  return 0;
}

/* The kernel's own values of `kind`, in order. */
static int own(LLVMValueRef f, const char *kind, struct lw_buf *key) {
  int64_t v[8];
  int n = dl__md_ints(f, kind, v, NULL, 8);
  char num[32];
  for (int i = 0; i < n && i < 8; i++) {
    snprintf(num, sizeof num, "%lld,", (long long)v[i]);
    if (append(key, num))
      return LW_ENOMEM;
  }
  return 0;
}

/* Metadata `kind`'s integers on `f` (sorted when asked), each after a '-'. */
static int md_ints(LLVMValueRef f, const char *kind, int sorted,
                   struct lw_buf *key) {
  int64_t v[64];
  int n = dl__md_ints(f, kind, v, NULL, 64);
  if (n > 64)
    n = 64;
  if (sorted && n > 1)
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
  char num[32];
  for (int i = 0; i < n; i++) {
    snprintf(num, sizeof num, "-%llu", (unsigned long long)v[i]);
    if (append(key, num))
      return LW_ENOMEM;
  }
  return 0;
}

/* DPC++'s sycl-post-link category of entry point `f` (DL_DPCPP_GROUPS):
 * per kernel its name; per translation unit the values of its own
 * attributes and metadata in DPC++'s order, each rule's text followed by
 * '-'; everything together without a split. DPC++ gathers entry points by
 * this string and writes the groups from the greatest string down. */
static int dpcpp_key(LLVMValueRef f, enum dl_split_mode mode,
                     struct lw_buf *key) {
  static const char *const str_attrs[] = {"sycl-register-alloc-mode",
                                          "sycl-grf-size"};
  unsigned len = 0;
  const char *a;
  if (mode == DL_SPLIT_OFF)
    return append(key, "-");
  if (mode == DL_SPLIT_PER_KERNEL) {
    size_t n;
    const char *name = LLVMGetValueName2(f, &n);
    return lw_buf_append(key, name, n) || append(key, "-") ? LW_ENOMEM : 0;
  }
  int rc = (a = dl__fn_attr(f, "sycl-module-id", &len)) &&
           lw_buf_append(key, a, len);
  rc = rc || append(key, "-");
  /* a set of virtual functions: one image, whatever optional features */
  rc = rc || ((a = dl__fn_attr(f, "indirectly-callable", &len)) &&
              lw_buf_append(key, a, len)) ||
       append(key, "-");
  for (size_t i = 0; !rc && i < 2; i++)
    rc = ((a = dl__fn_attr(f, str_attrs[i], &len)) &&
          lw_buf_append(key, a, len)) ||
         append(key, "-");
  rc = rc || md_ints(f, "sycl_used_aspects", 1, key) || append(key, "-") ||
       md_ints(f, "reqd_work_group_size", 0, key) || append(key, "-") ||
       md_ints(f, "work_group_num_dim", 0, key) || append(key, "-") ||
       md_ints(f, "intel_reqd_sub_group_size", 0, key) || append(key, "-") ||
       ((a = dl__fn_attr(f, "sycl-optlevel", &len)) &&
        lw_buf_append(key, a, len)) ||
       append(key, "-") || dl__md_strings(f, "sycl_joint_matrix", key) ||
       append(key, "-") || dl__md_strings(f, "sycl_joint_matrix_mad", key) ||
       append(key, "-");
  return rc ? LW_ENOMEM : 0;
}

static int group_id(struct kernel *k, enum dl_split_mode mode,
                    unsigned flags) {
  struct lw_buf key = {0};
  unsigned len = 0;
  const char *scope = "";
  /* a set is one image, whatever the split (DPC++: a category, above) */
  if (k->kind == VIRTUAL && !(flags & DL_DPCPP_GROUPS)) {
    const char *set = dl__vf_set(k->f, &len);
    if (append(&key, "|vf=") || lw_buf_append(&key, set, len) ||
        lw_buf_append(&key, "", 1)) {
      lw_buf_free(&key);
      return LW_ENOMEM;
    }
    k->group_id = (char *)key.data;
    return 0;
  }
  k->esimd = k->kind == KERNEL && dl__is_esimd(k->f) &&
             (flags & (DL_DPCPP_GROUPS | DL_SPLIT_ESIMD)) != DL_DPCPP_GROUPS;
  k->all_esimd = k->kind != VIRTUAL && dl__is_esimd(k->f);
  if (flags & DL_DPCPP_GROUPS) {
    /* DPC++ splits each category's module into its SPMD and ESIMD parts */
    if (dpcpp_key(k->f, mode, &key) || append(&key, k->esimd ? ESIMD : "") ||
        lw_buf_append(&key, "", 1)) {
      lw_buf_free(&key);
      return LW_ENOMEM;
    }
    k->group_id = (char *)key.data;
    return 0;
  }
  if (mode == DL_SPLIT_PER_KERNEL) {
    size_t n;
    scope = LLVMGetValueName2(k->f, &n);
  } else if (mode == DL_SPLIT_PER_SOURCE) {
    scope = dl__fn_attr(k->f, "sycl-module-id", &len);
    if (!scope)
      scope = "";
  }
  int rc =
      lw_buf_append(&key, scope,
                    mode == DL_SPLIT_PER_SOURCE ? len : strlen(scope)) ||
      append(&key, "|a=") || collect(&k->reach, "sycl_used_aspects", &key) ||
      append(&key, "|t=") || collect(&k->reach, "sycl_fixed_targets", &key) ||
      append(&key, "|w=") || own(k->f, "reqd_work_group_size", &key) ||
      append(&key, "|s=") || own(k->f, "intel_reqd_sub_group_size", &key) ||
      append(&key, k->esimd ? ESIMD : "") ||
      lw_buf_append(&key, "", 1);
  if (rc) {
    lw_buf_free(&key);
    return LW_ENOMEM;
  }
  k->group_id = (char *)key.data;
  return 0;
}

/* Gives every unnamed global value a name, so a group can name what it
 * keeps. */
static int name_one(LLVMValueRef g, void *ctx) {
  unsigned *n = ctx;
  size_t len;
  LLVMGetValueName2(g, &len);
  if (!len) {
    char name[48];
    snprintf(name, sizeof name, "__fatlink_anon.%u", (*n)++);
    LLVMSetValueName2(g, name, strlen(name));
  }
  return 0;
}

static int add_names(struct lw_strvec *keep, const struct dl__set *reach) {
  for (size_t i = 0; i < reach->cap; i++) {
    LLVMValueRef v = reach->v[i];
    if (!v || !LLVMIsAGlobalValue(v))
      continue;
    size_t len;
    const char *name = LLVMGetValueName2(v, &len);
    if (len && lw_strvec_push(keep, name))
      return LW_ENOMEM;
  }
  return 0;
}

/* What emitting the group costs, roughly: the instructions of every
 * function it keeps. */
static size_t instructions(const struct dl__set *reach) {
  size_t n = 0;
  for (size_t i = 0; i < reach->cap; i++) {
    LLVMValueRef f = reach->v[i];
    if (!f || !LLVMIsAFunction(f))
      continue;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b;
         b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef in = LLVMGetFirstInstruction(b); in;
           in = LLVMGetNextInstruction(in))
        n++;
  }
  return n;
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

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int copy_group(struct dl_group *to, const struct dl_group *g) {
  memset(to, 0, sizeof *to);
  to->esimd = g->esimd;
  return !(to->id = strdup(g->id)) ||
                 (g->vf_set && !(to->vf_set = strdup(g->vf_set))) ||
                 lw_strvec_extend_from(&to->kernels, &g->kernels) ||
                 lw_strvec_extend_from(&to->exports, &g->exports) ||
                 lw_strvec_extend_from(&to->entries, &g->entries) ||
                 lw_strvec_extend_from(&to->asserts, &g->asserts) ||
                 lw_strvec_extend_from(&to->keep, &g->keep)
             ? LW_ENOMEM
             : 0;
}

/* Does anything in `reach` use an optional feature (an aspect)? */
static int uses_aspects(const struct dl__set *reach) {
  for (size_t i = 0; i < reach->cap; i++) {
    int64_t v[64];
    LLVMValueRef f = reach->v[i];
    int n = f && LLVMIsAFunction(f)
                ? dl__md_ints(f, "sycl_used_aspects", v, NULL, 64)
                : 0;
    for (int k = 0; k < n && k < 64; k++)
      if (v[k] >= 0)
        return 1;
  }
  return 0;
}

/* The copies some groups need, each after its group: one for every way of
 * lowering specialization constants that `flags` ask for (native when
 * none), when it reads any; and for a set of virtual functions that uses
 * optional features, its dummy image. *from gets each group's original
 * index (its reach). */
static int variants(struct dl_split *s, const struct dl__set *reach,
                    unsigned flags, size_t **from) {
  /* in DPC++'s order: the group as asked, then its default-value copy */
  static const unsigned order[] = {DL_SPEC_KEEP, DL_SPEC_NATIVE,
                                   DL_SPEC_EMULATION, DL_SPEC_DEFAULT};
  unsigned modes =
      flags & DL_SPEC_MODES ? flags & DL_SPEC_MODES : DL_SPEC_NATIVE;
  size_t nmodes = 0, total = 0;
  for (size_t m = 0; m < sizeof order / sizeof *order; m++)
    nmodes += (modes & order[m]) != 0;
  for (size_t g = 0; g < s->n; g++)
    total += (dl__spec_used(&reach[g]) ? nmodes : 1) *
             (s->g[g].vf_set && uses_aspects(&reach[g]) ? 2 : 1);
  struct dl_group *ng = calloc(total ? total : 1, sizeof *ng);
  if (!ng || !(*from = calloc(total ? total : 1, sizeof **from))) {
    free(ng);
    return LW_ENOMEM;
  }
  size_t k = 0;
  int rc = 0;
  for (size_t g = 0; g < s->n; g++) {
    int spec = dl__spec_used(&reach[g]);
    int dummies = s->g[g].vf_set && uses_aspects(&reach[g]);
    size_t first = k;
    ng[k] = s->g[g]; /* moved */
    for (int dummy = 0; dummy <= dummies; dummy++)
      for (size_t m = 0; m < sizeof order / sizeof *order; m++) {
        unsigned b = order[m];
        if (spec ? !(modes & b) : b != DL_SPEC_NATIVE)
          continue;
        if (k > first && !rc)
          rc = copy_group(&ng[k], &ng[first]);
        ng[k].spec_mode = spec && b != DL_SPEC_KEEP ? b : 0;
        ng[k].vf_dummy = dummy;
        (*from)[k++] = g;
      }
  }
  free(s->g);
  s->g = ng;
  s->n = total;
  return rc;
}

/* Runs LLVM's pass pipeline `passes` on `m`; `what` names it in an error. */
static int run_passes(LLVMModuleRef m, const char *passes, const char *what,
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

/* A device global of device_image_scope has one copy per image: DPC++
 * refuses one that the entry points of two modules use (a category's ESIMD
 * part is the same module there). */
static int image_scope(const struct dl_split *s, const struct dl__set *reach,
                       const struct dl__gattrs *ga, struct lw_diag *d) {
  for (size_t i = 0; i < ga->n; i++) {
    LLVMValueRef v = ga->v[i].g;
    if (!dl__image_scope(ga, v) || !dl__gattr(ga, v, "sycl-device-global-size"))
      continue;
    size_t users = 0;
    for (size_t g = 0; g < s->n; g++)
      users += dl__set_has(&reach[g], v) &&
               !(s->g[g].esimd_part && dl__set_has(&reach[g - 1], v));
    if (users > 1)
      return lw_error(d, LW_EINVAL,
                      "device_global variable '%s' with property "
                      "\"device_image_scope\" is used in more than one "
                      "device image.",
                      LLVMGetValueName(v));
  }
  return 0;
}

int dl_split(struct dl_module **mp, enum dl_split_mode mode, int opt_level,
             unsigned flags, struct dl_split *out, struct lw_diag *d) {
  struct dl_module *m = *mp;
  memset(out, 0, sizeof *out);
  out->flags = flags;
  /* auto is per translation unit, as DPC++ has it today: function
   * pointers no longer keep everything together, the call graph follows
   * them (callgraph.c). */
  if (mode == DL_SPLIT_AUTO)
    mode = DL_SPLIT_PER_SOURCE;
  /* What DPC++'s post-link does to the module before its split; the rest
   * only for SPIR, whose SPIR-V it shapes. */
  dl__compile_time_properties(m->mod);
  int rc0 = 0;
  if (strncmp(m->triple, "spir", 4) == 0) {
    /* The erased list stays behind as a dead constant that still uses
     * what it named, which LLVM 22's back end takes for a function
     * pointer (it makes a second copy of a declaration so used, and an
     * invalid module); GlobalDCE drops dead constants. */
    if (dl__erase_used(m->mod))
      rc0 = run_passes(m->mod, "globaldce", "drop dead constants", d);
    if (rc0)
      return rc0;
    if (dl__trim_compiler_used(m->mod) ||
        dl__printf_constant_formats(m->mod))
      rc0 = lw_error(d, LW_ENOMEM, "out of memory");
  }
  if (!rc0)
    rc0 = dl__check_module(m->mod, flags, &out->warnings, d);
  if (rc0)
    return rc0;
  unsigned anon = 0;
  dl__each_global(m->mod, name_one, &anon);
  size_t nk = 0, cap = 0;
  struct kernel *ks = NULL;
  int rc = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); !rc && f;
       f = LLVMGetNextFunction(f)) {
    unsigned vlen;
    enum entry_kind kind = dl__is_kernel(f) ? KERNEL
                           : !LLVMIsDeclaration(f) && dl__vf_set(f, &vlen)
                               ? VIRTUAL
                               : EXPORTED;
    if (kind == EXPORTED &&
        !((flags & DL_EXTERNAL_ENTRIES) ? dl__is_sycl_external(f)
                                         : (flags & DL_DYNAMIC_LINKING) &&
                                               dl__is_exportable(f)))
      continue;
    if (lw_grow(&ks, nk, &cap, sizeof *ks, 16)) {
      rc = LW_ENOMEM;
      break;
    }
    struct kernel *k = &ks[nk++];
    memset(k, 0, sizeof *k);
    k->f = f;
    k->kind = kind;
    rc = dl__reachable(&f, 1, (flags & DL_DYNAMIC_LINKING) != 0, &k->reach)
             ? LW_ENOMEM
             : group_id(k, mode, flags);
    if (!rc && !(flags & DL_NO_SIZE_CHECK) &&
        (rc = dl__check_kernel(f, &k->reach, d)))
      break;
  }
  /* DPC++ writes its groups from the greatest category down; its entry
   * points stay in module order within a group. */
  if (!rc && (flags & DL_DPCPP_GROUPS) && nk > 1) {
    for (size_t i = 0; i < nk; i++)
      ks[i].order = i;
    qsort(ks, nk, sizeof *ks, by_dpcpp_key);
  }
  /* Groups in order of their first kernel; each gathers what its kernels
   * reach, for its property sets, and which of its kernels can reach the
   * device library's assert. */
  LLVMValueRef assert_fail =
      LLVMGetNamedFunction(m->mod, "__devicelib_assert_fail");
  struct dl__set *reach = NULL;
  for (size_t i = 0; !rc && i < nk; i++) {
    size_t g;
    for (g = 0; g < out->n; g++)
      if (strcmp(out->g[g].id, ks[i].group_id) == 0)
        break;
    if (g == out->n) {
      struct dl_group *ng = realloc(out->g, (out->n + 1) * sizeof *ng);
      if (!ng) {
        rc = LW_ENOMEM;
        break;
      }
      out->g = ng;
      memset(&out->g[g], 0, sizeof *ng);
      out->g[g].id = ks[i].group_id;
      out->g[g].esimd = 1;
      ks[i].group_id = NULL;
      out->n++;
      unsigned vlen;
      const char *set =
          ks[i].kind == VIRTUAL ? dl__vf_set(ks[i].f, &vlen) : NULL;
      if (set && !(out->g[g].vf_set = strndup(set, vlen))) {
        rc = LW_ENOMEM;
        break;
      }
      struct dl__set *nr = realloc(reach, out->n * sizeof *nr);
      if (!nr) {
        rc = LW_ENOMEM;
        break;
      }
      reach = nr;
      memset(&reach[g], 0, sizeof *reach);
    }
    out->g[g].esimd &= ks[i].all_esimd;
    for (size_t k = 0; !rc && k < ks[i].reach.cap; k++)
      if (ks[i].reach.v[k] && dl__set_add(&reach[g], ks[i].reach.v[k]) < 0)
        rc = LW_ENOMEM;
    size_t len;
    const char *name = LLVMGetValueName2(ks[i].f, &len);
    /* a set's virtual functions are entry points of DPC++'s too (its
     * symbol table lists them) */
    if ((ks[i].kind != VIRTUAL &&
         lw_strvec_push(ks[i].kind == EXPORTED ? &out->g[g].exports
                                               : &out->g[g].kernels,
                        name)) ||
        ((ks[i].kind != VIRTUAL || (flags & DL_DPCPP_GROUPS)) &&
         lw_strvec_push(&out->g[g].entries, name)) ||
        add_names(&out->g[g].keep, &ks[i].reach) ||
        (ks[i].kind == KERNEL && assert_fail &&
         dl__set_has(&ks[i].reach, assert_fail) &&
         lw_strvec_push(&out->g[g].asserts, name)))
      rc = LW_ENOMEM;
  }
  for (size_t i = 0; i < nk; i++) {
    free(ks[i].group_id);
    dl__set_free(&ks[i].reach);
  }
  free(ks);
  /* DPC++'s categories may put virtual functions with kernels (one module
   * without a split): such a group is the kernels' */
  for (size_t g = 0; g < out->n; g++)
    if (out->g[g].vf_set && (out->g[g].kernels.n || out->g[g].exports.n)) {
      free(out->g[g].vf_set);
      out->g[g].vf_set = NULL;
    }
  for (size_t g = 1; g < out->n; g++) {
    const struct dl_group *p = &out->g[g - 1];
    size_t lp = strlen(p->id);
    out->g[g].esimd_part = (flags & DL_SPLIT_ESIMD) && out->g[g].esimd &&
                           !p->esimd && !strncmp(p->id, out->g[g].id, lp) &&
                           !strcmp(out->g[g].id + lp, ESIMD);
  }
  /* DPC++'s tool makes a module without entry points one image all the
   * same, its specialization constants lowered: a group of everything */
  if (!rc && !nk && (flags & DL_DPCPP_GROUPS)) {
    if ((out->g = calloc(1, sizeof *out->g)))
      out->n = 1; /* dl_split_free's from here */
    if (!out->g || !(reach = calloc(1, sizeof *reach)) ||
        !(out->g[0].id = strdup("-")))
      rc = LW_ENOMEM;
    for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); !rc && f;
         f = LLVMGetNextFunction(f))
      if (dl__set_add(&reach[0], f) < 0)
        rc = LW_ENOMEM;
    for (LLVMValueRef v = LLVMGetFirstGlobal(m->mod); !rc && v;
         v = LLVMGetNextGlobal(v))
      if (dl__set_add(&reach[0], v) < 0)
        rc = LW_ENOMEM;
    if (!rc && add_names(&out->g[0].keep, &reach[0]))
      rc = LW_ENOMEM;
  }
  size_t nbase = out->n, *from = NULL;
  struct dl__gattrs ga = {0};
  struct dl__order order = {0};
  if (!rc && out->n &&
      (dl__gattrs_read(m->mod, &ga) || dl__order_init(&order, m->mod)))
    rc = LW_ENOMEM;
  if (!rc && (flags & DL_IMAGE_SCOPE))
    rc = image_scope(out, reach, &ga, d);
  if (!rc)
    rc = variants(out, reach, flags, &from);
  for (size_t g = 0; !rc && g < out->n; g++) {
    const struct dl__set *r = &reach[from[g]];
    struct dl__fns fns = {0};
    out->g[g].cost = instructions(r);
    rc = dl__fns_of(r, &order, &fns)
             ? lw_error(d, LW_ENOMEM, "out of memory")
             : dl__props(m->mod, r, &fns, &out->g[g], opt_level, &ga, flags,
                         &out->g[g].props, d);
    free(fns.v);
    if (!rc && out->g[g].spec_mode)
      rc = dl__spec_layout(m->mod, r, &out->g[g], d);
  }
  for (size_t g = 0; reach && g < nbase; g++)
    dl__set_free(&reach[g]);
  free(reach);
  free(from);
  dl__gattrs_free(&ga);
  dl__order_free(&order);
  if (rc) {
    dl_split_free(out);
    return rc == LW_ENOMEM ? lw_error(d, rc, "out of memory") : rc;
  }
  for (size_t g = 0; g < out->n; g++)
    if (out->g[g].keep.n > 1)
      qsort(out->g[g].keep.v, out->g[g].keep.n, sizeof(char *), cmp_str);
  /* Batches of about sqrt(n)/2 groups: the linked module is loaded once a
   * batch (2 sqrt(n) times in all) and each group's load costs a batch's
   * share; small enough batches that the processes taking them finish
   * together. */
  while (4 * out->batch_size * out->batch_size < out->n)
    out->batch_size++;
  out->nbatches = out->batch_size ? (out->n + out->batch_size - 1) /
                                        out->batch_size
                                  : 0;
  if (out->n <= 1) {
    out->whole = m; /* nothing to split: the module is the one module */
    *mp = NULL;
    return 0;
  }
  /* Super-batches of about sqrt(nbatches) batches, made from the linked
   * module: each batch is then made from its super-batch's (a fraction of
   * the linked module). Loading the linked module costs S + B/S times
   * what loading it once does, instead of B (400 groups in 40 batches:
   * 6 super-batches; the children spent 1.6 s of CPU making batches from
   * the linked module, about 40 ms each). */
  if (out->nbatches >= 8)
    while (out->super_size * out->super_size < out->nbatches)
      out->super_size++;
  out->nsupers = out->super_size ? (out->nbatches + out->super_size - 1) /
                                       out->super_size
                                 : 0;
  if (bitcode_of(m->mod, &out->bitcode) ||
      (out->batch_size > 1 &&
       !(out->batch = calloc(out->nbatches, sizeof *out->batch))) ||
      (out->nsupers &&
       !(out->super = calloc(out->nsupers, sizeof *out->super)))) {
    dl_split_free(out);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  out->triple = strdup(m->triple);
  dl_module_free(m);
  *mp = NULL;
  return out->triple ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

/* ---- building a group's module -------------------------------------------- */

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
static int hide(LLVMValueRef v, void *keep) {
  size_t len;
  const char *name = LLVMGetValueName2(v, &len);
  if (LLVMIsDeclaration(v))
    return 0;
  if (kept(keep, name)) {
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
  LLVMSetLinkage(v, LLVMInternalLinkage);
  return 0;
}

/* The part of the module in `bc` that `keep` needs, in context `ctx`: the
 * bitcode is loaded lazily, everything else gets internal linkage, and
 * linking that into an empty module moves - and only then reads - exactly
 * what is needed. */
static int extract(const struct lw_buf *bc, const struct names *keep,
                   LLVMContextRef ctx, LLVMModuleRef *out,
                   struct lw_diag *d) {
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(
      (const char *)bc->data, bc->len, "split", 0);
  LLVMModuleRef src = NULL;
  if (!mb || LLVMGetBitcodeModuleInContext2(ctx, mb, &src)) {
    if (mb)
      LLVMDisposeMemoryBuffer(mb);
    return lw_error(d, LW_ELLVM, "cannot reload the linked device module");
  }
  /* The "used" lists would drag everything along: a split module needs
   * none of them. */
  const char *lists[] = {"llvm.used", "llvm.compiler.used"};
  for (size_t k = 0; k < LW_ARRAY_SIZE(lists); k++) {
    LLVMValueRef u = LLVMGetNamedGlobal(src, lists[k]);
    if (u)
      LLVMDeleteGlobal(u);
  }
  dl__each_global(src, hide, (void *)keep);
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
  int rc = extract(bc, keep, ctx, &m, d);
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
  if (s->batch_size <= 1 || s->batch[b].len)
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
 * for elsewhere ("referenced-indirectly"). */
static void internalize(LLVMModuleRef m, const struct dl_group *g,
                        unsigned flags) {
  static const char indirect[] = "referenced-indirectly";
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    LLVMLinkage l = LLVMGetLinkage(f);
    if (LLVMIsDeclaration(f) || l == LLVMInternalLinkage ||
        l == LLVMPrivateLinkage || l == LLVMAvailableExternallyLinkage ||
        is_entry(g, LLVMGetValueName(f)) ||
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
  return run_passes(m, "strip-dead-debug-info",
                    "strip dead debug information", d);
}

static int lower(const struct dl_split *s, size_t i, struct dl_module **out,
                 struct lw_diag *d) {
  if ((s->flags & DL_INTERNALIZE) && !s->g[i].vf_set && s->g[i].entries.n) {
    internalize((*out)->mod, &s->g[i], s->flags);
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
  if (i >= s->n || !s->bitcode.len)
    return lw_error(d, LW_EINVAL, "module %zu of the split is gone", i);
  /* From the batch's module (a fraction of the linked one, so loading it
   * costs a fraction), made once per process that needs it. */
  int rc = 0;
  size_t b = dl_split_batch(s, i);
  const struct lw_buf *src = &s->bitcode;
  if (s->batch_size > 1) {
    if ((rc = dl_split_make_batch(s, b, d)))
      return rc;
    src = &s->batch[b];
  }
  /* The module gets a context of its own, freed with it. */
  struct names keep = {s->g[i].keep.v, s->g[i].keep.n};
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = NULL;
  if ((rc = extract(src, &keep, ctx, &m, d))) {
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
  for (size_t b = 0; s->batch && b < s->nbatches; b++)
    lw_buf_free(&s->batch[b]);
  for (size_t k = 0; s->super && k < s->nsupers; k++)
    lw_buf_free(&s->super[k]);
  free(s->super);
  free(s->batch);
  memset(s, 0, sizeof *s);
}
