/* sycl_parts.c - a SYCL target's big modules emitted on every job slot:
 * a link's one module, or one of several that holds an eighth of the
 * link's code or more, of at least two parts' worth of instructions
 * (--sycl-part-size=), is cut into parts (devlink/parts.c) in sycl-link,
 * before the workers fork (they leave it out); then
 *   sycl-part   forked from this process, one per part: builds the part's
 *               module and emits it, the process's first SPIR-V (so LLVM
 *               22's back end has no state from an earlier module), checked
 *               as every module is (sycl_emit.c);
 *   sycl-merge  (in process) when every part of the module is made: one
 *               module of them (devlink/spirvmerge.c), checked again, which
 *               then goes on as the module.
 * What is cut, and how, depends on the modules alone, not on
 * --wrapper-jobs: the merged modules are the same however many run at
 * once. The default part, 10,000 instructions: on 2 cores the one-unit
 * program of 2,000 kernels (137,000 instructions) links in 1.28-1.56 s in
 * 13 parts, 1.43-1.52 s in 16, 1.39-1.49 s in 6, 1.75-2.09 s in 3 and
 * 2.36-2.75 s whole; at -j1 in 13 parts 2.18-2.38 s against 2.29-2.50 s
 * whole (the back end's time grows faster than the module); its process's
 * peak 110 MiB against 350 MiB. */
#include "plan/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PARTS = 16, SHARE = 8 /* of the link's code, at least 1/SHARE */ };

int lw__sycl_cut(struct target *t, struct lw_diag *d) {
  const struct lw_options *o = t->plan->o;
  const struct dl_split *s = &t->split;
  size_t part = (size_t)o->part_size, total = 0;
  if (o->dry_run || o->llvm_spirv || !part)
    return 0;
  for (size_t i = 0; i < s->n; i++)
    total += s->g[i].cost;
  for (size_t i = 0; i < s->n; i++) {
    if (s->g[i].cost < 2 * part || SHARE * s->g[i].cost < total)
      continue;
    if (!t->parted && !(t->parted = calloc(s->n, sizeof *t->parted)))
      return lw_error(d, LW_ENOMEM, "out of memory");
    struct sycl_parted *pd = &t->parted[t->nparted];
    const char *why = NULL;
    int rc = dl_parts_make(&t->split, i, part, MAX_PARTS, &pd->parts, &why,
                           d);
    if (rc)
      return rc;
    if (why && o->verbose)
      fprintf(stderr, "fatlink: module %zu of %s emitted whole: %s\n", i,
              t->triple, why);
    if (!pd->parts.n)
      continue;
    pd->index = i;
    if (!(pd->spv = calloc(pd->parts.n, sizeof *pd->spv)))
      return lw_error(d, LW_ENOMEM, "out of memory");
    t->nparted++;
  }
  return 0;
}

const struct sycl_parted *lw__sycl_parted(const struct target *t, size_t i) {
  for (size_t q = 0; q < t->nparted; q++)
    if (t->parted[q].index == i)
      return &t->parted[q];
  return NULL;
}

struct part_job {
  struct target *t;
  struct sycl_parted *pd;
  size_t k; /* the part (for a merge: none) */
  lw__module_fn then; /* a merge's */
};

static int part_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct part_job *pj = j->data;
  const struct target *t = pj->t;
  j->what = lw_xasprintf("SPIR-V code generation at O%d for part %zu of %zu "
                         "of module %zu of %s (%zu kernel(s))",
                         t->plan->o->opt_level, pj->k + 1, pj->pd->parts.n,
                         pj->pd->index, t->triple,
                         pj->pd->parts.kernels[pj->k].n);
  return j->what ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

static int part_run(struct lw_job *j, struct lw_buf *out, struct lw_diag *d) {
  struct part_job *pj = j->data;
  return lw__sycl_emit(pj->t, &pj->pd->parts, pj->k, pj->k + 1,
                       LW__EMIT_ONLY, lw__to_buf, out, d);
}

static int part_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  (void)g;
  struct part_job *pj = j->data;
  if (j->out.len < 20)
    return lw_error(d, LW_EFORMAT, "%s: no SPIR-V came back", j->what);
  pj->pd->spv[pj->k] = j->out; /* taken */
  j->out = (struct lw_buf){0};
  return 0;
}

static const struct lw_job_kind part_kind = {
    .name = "sycl-part", .prepare = part_prepare, .done = part_done,
    .free_data = free, .fork_run = part_run};

static int merge_prepare(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d) {
  (void)g;
  struct part_job *mj = j->data;
  j->what = lw_xasprintf("merge the SPIR-V of the %zu parts of module %zu "
                         "of %s",
                         mj->pd->parts.n, mj->pd->index, mj->t->triple);
  return j->what ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

static int merge_run(struct lw_job *j, struct lw_diag *d) {
  struct part_job *mj = j->data;
  struct target *t = mj->t;
  struct sycl_parted *pd = mj->pd;
  struct sycl_module *m = &t->modules[pd->index];
  int rc = dl_spirv_merge(pd->spv, pd->parts.n, t->plan->o->jobs, &m->image,
                          d);
  if (rc)
    return rc;
  struct lw_diag vd = {0};
  rc = t->plan->o->spirv_validate
           ? dl_spirv_validate(m->image.data, m->image.len, &vd)
           : dl_spirv_check_ids(m->image.data, m->image.len, &vd);
  if (rc)
    return lw_error(d, rc, "the %zu parts of module %zu of %s merged into "
                           "an invalid module (a bug of fatlink's merge): %s",
                    pd->parts.n, pd->index, t->triple, vd.msg);
  return 0;
}

static int merge_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  struct part_job *mj = j->data;
  struct sycl_module *m = &mj->t->modules[mj->pd->index];
  for (size_t k = 0; k < mj->pd->parts.n; k++)
    lw_buf_free(&mj->pd->spv[k]);
  int rc = mj->t->plan->o->save_temps
               ? lw_tmp_create("sycl-spirv64", "spv", &m->spv, d)
               : 0;
  return rc ? rc : mj->then(g, m, d);
}

static const struct lw_job_kind merge_kind = {
    .name = "sycl-merge", .prepare = merge_prepare, .run = merge_run,
    .done = merge_done, .free_data = free};

/* The part jobs of one module and its merge. */
static int add_jobs(struct lw_graph *g, struct target *t,
                    struct sycl_parted *pd, lw__module_fn then,
                    struct lw_diag *d) {
  size_t n = pd->parts.n;
  struct lw_job **parts = calloc(n, sizeof *parts);
  int rc = parts ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t k = 0; !rc && k <= n; k++) {
    struct part_job *pj = calloc(1, sizeof *pj);
    if (pj)
      *pj = (struct part_job){t, pd, k, then};
    struct lw_job *j =
        !pj ? NULL
        : k < n ? lw_graph_add(g, &part_kind, pj, NULL, 0)
                : lw_graph_add(g, &merge_kind, pj, parts, n); /* pj: the
                                                                 graph's */
    if (!j || (k == n && lw_graph_add_dep(g, t->plan->wrap, j)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    else if (k < n)
      (parts[k] = j)->footprint = lw__emit_footprint(
          t->split.g[pd->index].cost / pd->parts.n);
  }
  free(parts);
  return rc;
}

int lw__sycl_parts(struct lw_graph *g, struct target *t, lw__module_fn then,
                   struct lw_diag *d) {
  int rc = 0;
  for (size_t q = 0; !rc && q < t->nparted; q++)
    rc = add_jobs(g, t, &t->parted[q], then, d);
  return rc;
}

void lw__sycl_parts_free(struct target *t) {
  for (size_t q = 0; q < t->nparted; q++) {
    struct sycl_parted *pd = &t->parted[q];
    for (size_t k = 0; pd->spv && k < pd->parts.n; k++)
      lw_buf_free(&pd->spv[k]);
    free(pd->spv);
    dl_parts_free(&pd->parts);
  }
  free(t->parted);
  t->parted = NULL;
  t->nparted = 0;
}
