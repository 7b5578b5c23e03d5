/* split.c - the SYCL post-link, a pipeline in a fixed order over one linked
 * module; each step reads what the earlier ones found and adds its own:
 *   1. DPC++'s fix-ups before its split (ctprops.c, imports.c, printf.c),
 *      then the module's checks (checks.c);
 *   2. the entry points, what each reaches and their groups (entries.c,
 *      callgraph.c);
 *   3. the module's facts: global variables' attributes (gattrs.c), the
 *      functions' order (callgraph.c);
 *   4. the features: device globals of image scope, the groups' copies,
 *      each group's property sets (props.c, virtual.c, imports.c) and
 *      specialization-constant layout (specconst.c);
 *   5. batches, from which each group's module is made (modules.c).
 * Facts (metadata.c, gattrs.c, callgraph.c, propset.c) call no feature;
 * no feature calls a later one.
 *
 * Kernels are grouped by the split mode (off: one group; per_source: one per
 * translation unit, the "sycl-module-id" attribute, which dl_link sets from
 * the input a kernel came from when the compiler did not; per_kernel: one
 * each; auto: per_source) and then by their optional features (the design
 * document "Behavior for optional kernel features"):
 * kernels share a module only if the aspects used anywhere in their call
 * graphs, their required work-group and sub-group sizes and their fixed
 * targets are the same; ESIMD kernels (!sycl_explicit_simd) never share a
 * module with SPMD ones. Groups are ordered by their first kernel in module
 * order, so the result is deterministic. A group that reads specialization
 * constants is made once for each way of lowering them that is asked for
 * (specconst.c), and each copy is lowered when its module is built.
 *
 * Each group keeps the closure of its kernels (callgraph.c). With one group
 * the linked module is used as it is. With several, the module is written to
 * bitcode once, and each group's module is made from it (modules.c).
 * Functions reached from several kernels are thereby copied into every
 * module that needs them. Groups come in batches of consecutive groups: a
 * batch's module is made from the linked module, once in each process that
 * builds its groups, and each group's module from its batch's; with many
 * batches, a batch's module is made from its super-batch's. A module is the
 * same whichever process builds it and whatever it built before. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* What emitting the group costs, roughly: the instructions of every
 * function it keeps. */
static size_t instructions(const struct dl__set *reach) {
  size_t n = 0;
  for (size_t i = 0; i < reach->cap; i++) {
    LLVMValueRef f = reach->v[i];
    if (f && LLVMIsAFunction(f))
      n += dl__instructions(f);
  }
  return n;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int copy_group(struct dl_group *to, const struct dl_group *g) {
  memset(to, 0, sizeof *to);
  to->esimd = g->esimd;
  to->sanitizer = g->sanitizer;
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

/* A device global of device_image_scope has one copy per image: DPC++
 * refuses one that the entry points of two modules use (a category's ESIMD
 * part is the same module there). A sanitizer's kernel table is in every
 * image by design (sanitizer.c). */
static int image_scope(const struct dl_split *s, const struct dl__set *reach,
                       const struct dl__gattrs *ga, struct lw_diag *d) {
  for (size_t i = 0; i < ga->n; i++) {
    LLVMValueRef v = ga->v[i].g;
    if (!dl__image_scope(ga, v) ||
        !dl__gattr(ga, v, "sycl-device-global-size") ||
        dl__sanitizer_table(v, NULL))
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

/* Step 1: what DPC++'s post-link does to the module before its split (the
 * rest only for SPIR, whose SPIR-V it shapes), then the module's checks. */
static int prepare(struct dl_module *m, unsigned flags,
                   const struct lw_strvec *elsewhere, struct dl_split *out,
                   struct lw_diag *d) {
  dl__compile_time_properties(m->mod);
  if ((flags & DL_HOST_PIPES) && dl__host_pipe_decorations(m->mod))
    return lw_error(d, LW_ENOMEM, "out of memory");
  int rc = dl__sanitizer_tables(m->mod, d);
  if (rc)
    return rc;
  if (strncmp(m->triple, "spir", 4) == 0) {
    /* The erased list stays behind as a dead constant that still uses
     * what it named, which LLVM 22's back end takes for a function
     * pointer (it makes a second copy of a declaration so used, and an
     * invalid module); GlobalDCE drops dead constants. */
    rc = dl__erase_used(m->mod) ? dl__run_passes(m->mod, "globaldce",
                                                 "drop dead constants", d)
                                : 0;
    if (rc)
      return rc;
    if (dl__trim_compiler_used(m->mod) || dl__printf_constant_formats(m->mod))
      return lw_error(d, LW_ENOMEM, "out of memory");
  }
  return dl__check_module(m->mod, flags, elsewhere, &out->warnings, d);
}

/* Batches of about sqrt(n)/2 groups: the linked module is loaded once a
 * batch (2 sqrt(n) times in all) and each group's load costs a batch's
 * share; small enough batches that the processes taking them finish
 * together. Below 30 groups none: each group's module is made from the
 * linked module's bitcode, and the processes share the groups more evenly
 * (2 cores, real_link.py programs, paired, 9 runs, wall and CPU: 10
 * groups of 40 kernels 0.292 -> 0.251 s, 0.428 -> 0.397 s; 20 of 20
 * 0.339 -> 0.304 s, 0.542 -> 0.486 s; 30 of 13 0.385 -> 0.377 s; 40 of
 * 10, where the batches pay, 0.333 s with them, 0.374 s without). The
 * modules are the same either way. */
void dl__batches(struct dl_split *s) {
  s->batch_size = 1;
  while (s->n >= 30 && 4 * s->batch_size * s->batch_size < s->n)
    s->batch_size++;
  s->nbatches = (s->n + s->batch_size - 1) / s->batch_size;
}

int dl_split(struct dl_module **mp, enum dl_split_mode mode, int opt_level,
             unsigned flags, const struct lw_strvec *elsewhere,
             struct dl_split *out, struct lw_diag *d) {
  struct dl_module *m = *mp;
  memset(out, 0, sizeof *out);
  out->flags = flags;
  /* auto is per translation unit, as DPC++ has it today: function
   * pointers no longer keep everything together, the call graph follows
   * them (callgraph.c). */
  if (mode == DL_SPLIT_AUTO)
    mode = DL_SPLIT_PER_SOURCE;
  int rc = prepare(m, flags, elsewhere, out, d);
  if (rc)
    return rc;
  /* Step 2: the entry points, what each reaches, their groups. */
  struct dl__set *reach = NULL;
  rc = dl__group_entries(m->mod, mode, flags, out, &reach, d);
  /* Step 3: the module's facts the features read: its global variables'
   * attributes, its functions' order. */
  size_t nbase = out->n, *from = NULL;
  struct dl__gattrs ga = {0};
  struct dl__order order = {0};
  if (!rc && out->n &&
      (dl__gattrs_read(m->mod, &ga) || dl__order_init(&order, m->mod)))
    rc = LW_ENOMEM;
  /* Step 4: the features, in order: device globals of image scope; the
   * groups' copies (specialization constants, virtual-function dummies);
   * each group's property sets (props.c, with virtual.c and imports.c) and
   * its specialization constants' layout (specconst.c). */
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
  /* Step 5: how the groups' modules are made (modules.c). */
  for (size_t g = 0; g < out->n; g++)
    if (out->g[g].keep.n > 1)
      qsort(out->g[g].keep.v, out->g[g].keep.n, sizeof(char *), cmp_str);
  dl__batches(out);
  if (out->n <= 1) {
    out->whole = m; /* nothing to split: the module is the one module */
    *mp = NULL;
    return 0;
  }
  /* Super-batches of about sqrt(nbatches) batches, made from the linked
   * module: each batch is then made from its super-batch's (a fraction of
   * the linked module). B batches then load the linked module S times
   * instead of B, but each super-batch is also moved and written: they
   * pay from somewhere between 20 and 40 batches (measured on 2 cores,
   * paired, without them: 4,000 groups in 125 batches, per-kernel 400x10,
   * 6% more CPU; 400 in 40, real_link's 400x10, the same to 6% more,
   * within this shape's noise; 100 in 20, its 100x4 with -g, 11% less). */
  if (out->nbatches >= 30)
    while (out->super_size * out->super_size < out->nbatches)
      out->super_size++;
  out->nsupers = out->super_size ? (out->nbatches + out->super_size - 1) /
                                       out->super_size
                                 : 0;
  if (dl_module_bitcode(m, &out->bitcode) ||
      (out->batch_size > 1 &&
       !(out->batch = calloc(out->nbatches, sizeof *out->batch))) ||
      (out->nsupers &&
       !(out->super = calloc(out->nsupers, sizeof *out->super)))) {
    dl_split_free(out);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  out->triple = strdup(m->triple);
  out->linked = m; /* the caller's to free, or now */
  if (!(flags & DL_KEEP_LINKED))
    dl_split_release(out);
  *mp = NULL;
  return out->triple ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}
