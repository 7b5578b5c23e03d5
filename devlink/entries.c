/* entries.c - the post-link's entry points and their groups: every kernel,
 * exported SYCL_EXTERNAL function (dynamic linking) and set of virtual
 * functions (virtual.c), what each reaches (callgraph.c), and the group
 * each goes to by the split mode and its optional features (split.c says
 * how). Groups are in order of their first entry point, or in DPC++'s
 * order of categories (DL_DPCPP_GROUPS); a group's reach is what all its
 * entry points reach. */
#include "internal.h"

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

int dl__group_entries(LLVMModuleRef mod, enum dl_split_mode mode,
                      unsigned flags, struct dl_split *out,
                      struct dl__set **reachp, struct lw_diag *d) {
  struct dl__set *reach = NULL;
  unsigned anon = 0;
  dl__each_global(mod, name_one, &anon);
  size_t nk = 0, cap = 0;
  struct kernel *ks = NULL;
  int rc = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); !rc && f;
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
      LLVMGetNamedFunction(mod, "__devicelib_assert_fail");
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
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); !rc && f;
         f = LLVMGetNextFunction(f))
      if (dl__set_add(&reach[0], f) < 0)
        rc = LW_ENOMEM;
    for (LLVMValueRef v = LLVMGetFirstGlobal(mod); !rc && v;
         v = LLVMGetNextGlobal(v))
      if (dl__set_add(&reach[0], v) < 0)
        rc = LW_ENOMEM;
    if (!rc && add_names(&out->g[0].keep, &reach[0]))
      rc = LW_ENOMEM;
  }
  /* A sanitizer's kernel table goes with every module (sanitizer.c), which
   * then names the sanitizer: the first of asan, msan, tsan, as DPC++
   * asks. */
  for (LLVMValueRef v = LLVMGetFirstGlobal(mod); !rc && v;
       v = LLVMGetNextGlobal(v)) {
    const char *san = dl__sanitizer_table(v, NULL);
    for (size_t g = 0; !rc && san && g < out->n; g++) {
      const char *had = out->g[g].sanitizer;
      if (!had || strcmp(had, san) > 0) /* "asan" < "msan" < "tsan" */
        out->g[g].sanitizer = san;
      if (dl__set_add(&reach[g], v) < 0 ||
          lw_strvec_push(&out->g[g].keep, LLVMGetValueName(v)))
        rc = LW_ENOMEM;
    }
  }
  *reachp = reach;
  return rc;
}
