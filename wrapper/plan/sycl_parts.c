/* sycl_parts.c - a SYCL target's one big module emitted on every job slot
 * (devlink/parts.c cuts it, after the split, in sycl-link):
 *   sycl-part   forked from this process, one per part: builds the part's
 *               module and emits it, the process's first SPIR-V (so LLVM
 *               22's back end has no state from an earlier module), checked
 *               as every module is (sycl_emit.c);
 *   sycl-merge  (in process) when every part is made: one module of them
 *               (devlink/spirvmerge.c), checked again, which then goes on
 *               as the target's module 0.
 * The parts depend on the module alone, not on --wrapper-jobs: the merged
 * module is the same however many run at once. */
#include "plan/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct part_job {
  struct target *t;
  size_t k;
};

struct merge_job {
  struct target *t;
  lw__module_fn then;
};

static int part_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct part_job *pj = j->data;
  const struct target *t = pj->t;
  j->what = lw_xasprintf("SPIR-V code generation at O%d for part %zu of %zu "
                         "of module 0 of %s (%zu kernel(s))",
                         t->plan->o->opt_level, pj->k + 1, t->parts.n,
                         t->triple, t->parts.kernels[pj->k].n);
  return j->what ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

static int to_out(void *ctx, size_t i, const unsigned char *spv, size_t n,
                  struct lw_diag *d) {
  (void)i;
  return lw_buf_append(ctx, spv, n) ? lw_error(d, LW_ENOMEM, "out of memory")
                                    : 0;
}

static int part_run(struct lw_job *j, struct lw_buf *out, struct lw_diag *d) {
  struct part_job *pj = j->data;
  return lw__sycl_emit(pj->t, &pj->t->parts, pj->k, pj->k + 1, LW__EMIT_ONLY,
                       to_out, out, d);
}

static int part_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  (void)g;
  struct part_job *pj = j->data;
  if (j->out.len < 20)
    return lw_error(d, LW_EFORMAT, "%s: no SPIR-V came back", j->what);
  pj->t->part_spv[pj->k] = j->out; /* taken */
  j->out = (struct lw_buf){0};
  return 0;
}

static const struct lw_job_kind part_kind = {
    .name = "sycl-part", .prepare = part_prepare, .done = part_done,
    .free_data = free, .fork_run = part_run};

static int merge_prepare(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d) {
  (void)g;
  struct merge_job *mj = j->data;
  j->what = lw_xasprintf("merge the SPIR-V of the %zu parts of module 0 of %s",
                         mj->t->parts.n, mj->t->triple);
  return j->what ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

static int merge_run(struct lw_job *j, struct lw_diag *d) {
  struct merge_job *mj = j->data;
  struct target *t = mj->t;
  struct sycl_module *m = &t->modules[0];
  int rc = dl_spirv_merge(t->part_spv, t->parts.n, &m->image, d);
  if (rc)
    return rc;
  struct lw_diag vd = {0};
  rc = t->plan->o->spirv_validate
           ? dl_spirv_validate(m->image.data, m->image.len, &vd)
           : dl_spirv_check_ids(m->image.data, m->image.len, &vd);
  if (rc)
    return lw_error(d, rc, "the %zu parts of module 0 of %s merged into an "
                           "invalid module (a bug of fatlink's merge): %s",
                    t->parts.n, t->triple, vd.msg);
  return 0;
}

static int merge_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  struct merge_job *mj = j->data;
  struct target *t = mj->t;
  for (size_t k = 0; k < t->parts.n; k++)
    lw_buf_free(&t->part_spv[k]);
  return mj->then(g, &t->modules[0], d);
}

static const struct lw_job_kind merge_kind = {
    .name = "sycl-merge", .prepare = merge_prepare, .run = merge_run,
    .done = merge_done, .free_data = free};

/* What a part's process may take beside what it shares with this one
 * (--wrapper-memory): its module and the back end's state for it. */
static uint64_t part_footprint(const struct target *t) {
  return (UINT64_C(16) << 20) + 1024 * (uint64_t)(t->cost / t->parts.n);
}

int lw__sycl_parts(struct lw_graph *g, struct target *t, lw__module_fn then,
                   struct lw_diag *d) {
  size_t n = t->parts.n;
  struct lw_job **parts = calloc(n, sizeof *parts);
  struct merge_job *mj = calloc(1, sizeof *mj);
  int rc = parts && mj && (t->part_spv = calloc(n, sizeof *t->part_spv))
               ? 0
               : lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t k = 0; !rc && k < n; k++) {
    struct part_job *pj = calloc(1, sizeof *pj);
    if (pj)
      *pj = (struct part_job){t, k};
    if (!pj || !(parts[k] = lw_graph_add(g, &part_kind, pj, NULL, 0)))
      rc = lw_error(d, LW_ENOMEM, "out of memory"); /* pj: the graph's */
    else
      parts[k]->footprint = part_footprint(t);
  }
  struct lw_job *merge = NULL;
  if (!rc) {
    *mj = (struct merge_job){t, then};
    merge = lw_graph_add(g, &merge_kind, mj, parts, n);
    mj = NULL; /* the graph's */
    if (!merge || lw_graph_add_dep(g, t->plan->wrap, merge))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  free(mj);
  free(parts);
  return rc;
}

void lw__sycl_parts_free(struct target *t) {
  for (size_t k = 0; t->part_spv && k < t->parts.n; k++)
    lw_buf_free(&t->part_spv[k]);
  free(t->part_spv);
  t->part_spv = NULL;
  dl_parts_free(&t->parts);
}
