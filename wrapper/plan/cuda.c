/* cuda.c - the device side of CUDA and HIP relocatable device code
 * (-fgpu-rdc --offload-new-driver), as upstream does it. Per architecture,
 * the link's device objects are linked by clang (gpu_link.c): for nvptx64
 * into a cubin (the toolkit's nvlink underneath, through
 * clang-nvlink-wrapper), for amdgcn into a code object (LTO of the bitcode,
 * then lld). Then one
 * fatbinary of every architecture: the toolkit's fatbinary for CUDA,
 * clang-offload-bundler's bundle for HIP. wrap registers it with the
 * runtime (wrap/cuda.c); with --emit-fatbin-only it is the output instead.
 * The fatbinary job is added by a kind's first target and waits for the
 * device links of all. */
#include "plan/planner.h"

#include <stdlib.h>
#include <string.h>

#ifndef LW_OFFLOAD_BUNDLER
#define LW_OFFLOAD_BUNDLER "clang-offload-bundler"
#endif

/* What differs between the two kinds. */
struct gpu_kind {
  unsigned ofk;
  enum lw_fatbin_slot slot;
  const char *triple_prefix, *arch_prefix;
  const char *fatbin_ext;
  /* The fatbinary tool's argv for the targets ts (in upstream's order). */
  int (*fatbin_argv)(struct lw_strvec *a, const struct lw_plan *p,
                     const char *out, struct target *const *ts, size_t n);
};

static int cuda_fatbin_argv(struct lw_strvec *a, const struct lw_plan *p,
                            const char *out, struct target *const *ts,
                            size_t n) {
  char *tool = lw__cuda_tool(p->o, "fatbinary");
  int rc = !tool || lw_strvec_push(a, tool) || lw_strvec_push(a, "-64") ||
           lw_strvec_push(a, "--create") || lw_strvec_push(a, out);
  free(tool);
  for (size_t i = 0; !rc && i < n; i++) {
    const char *arch = ts[i]->arch;
    /* "sm_90a" is sm=90a. */
    rc = lw_strvec_pushf(a, "--image3=kind=elf,sm=%s,file=%s",
                         strncmp(arch, "sm_", 3) == 0 ? arch + 3 : arch,
                         lw_tmp_path(ts[i]->out_tmp));
  }
  return rc;
}

/* A bundle entry's id needs the triple's four parts: "amdgcn-amd-amdhsa"
 * has an empty fourth. */
static const char *triple_gap(const char *triple) {
  int dashes = 0;
  for (const char *c = triple; *c; c++)
    dashes += *c == '-';
  return dashes >= 3 ? "-" : "--";
}

static int hip_fatbin_argv(struct lw_strvec *a, const struct lw_plan *p,
                           const char *out, struct target *const *ts,
                           size_t n) {
  const struct lw_options *o = p->o;
  int rc = lw_strvec_push(a, LW_OFFLOAD_BUNDLER) ||
           lw_strvec_push(a, "-type=o") ||
           lw_strvec_push(a, "-bundle-align=4096") ||
           (o->compress && lw_strvec_push(a, "-compress")) ||
           (o->compression_level_given &&
            lw_strvec_pushf(a, "-compression-level=%d", o->compression_level));
  /* The host entry is empty and the runtime skips it; upstream names it
   * x86_64-unknown-linux-gnu whatever the host, and so do we, so the
   * bundles are the same bytes. */
  char *targets = rc ? NULL : strdup("-targets=host-x86_64-unknown-linux-gnu");
  for (size_t i = 0; targets && i < n; i++) {
    char *more = lw_xasprintf("%s,hip-%s%s%s", targets, ts[i]->triple,
                              triple_gap(ts[i]->triple), ts[i]->arch);
    free(targets);
    targets = more;
  }
  rc = !targets || lw_strvec_push(a, targets) ||
       lw_strvec_push(a, "-input=/dev/null");
  free(targets);
  for (size_t i = 0; !rc && i < n; i++)
    rc = lw_strvec_pushf(a, "-input=%s", lw_tmp_path(ts[i]->out_tmp));
  return rc || lw_strvec_pushf(a, "-output=%s", out);
}

static const struct gpu_kind kinds[] = {
    {EX_OFK_CUDA, LW_FATBIN_CUDA, "nvptx64", "sm_", "fatbin", cuda_fatbin_argv},
    {EX_OFK_HIP, LW_FATBIN_HIP, "amdgcn", "gfx", "hipfb", hip_fatbin_argv},
};

static const struct gpu_kind *kind_of(unsigned ofk) {
  return ofk == EX_OFK_HIP ? &kinds[1] : &kinds[0];
}

/* Its output stays a file: the fatbinary tool reads it. */
static const struct lw_job_kind link_kind = {.name = "gpu-device-link",
                                             .prepare = lw__gpu_link_prepare};

/* ---- the fatbinary ------------------------------------------------------- */

/* Upstream's order: by architecture name, descending ("sm_90" before
 * "sm_80" before "sm_120"; "gfx90a" before "gfx1100"), so the fatbinaries
 * are byte for byte equal. */
static int by_arch_descending(const void *a, const void *b) {
  return strcmp((*(const struct target *const *)b)->arch,
                (*(const struct target *const *)a)->arch);
}

static int fatbin_prepare(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct lw_fatbin *fb = j->data;
  struct lw_plan *p = fb->plan;
  const struct gpu_kind *k = kind_of(fb->ofk);
  /* --emit-fatbin-only: the output itself. */
  struct lw_tmp **out = p->o->emit_fatbin_only ? &p->out_tmp : &fb->tmp;
  int rc = p->o->emit_fatbin_only
               ? lw_tmp_create_beside(p->o->output, out, d)
               : lw_tmp_create(k->fatbin_ext, k->fatbin_ext, out, d);
  if (rc)
    return rc;
  struct target **ts = calloc(p->n, sizeof *ts);
  if (!ts)
    return lw_error(d, LW_ENOMEM, "out of memory");
  size_t n = 0;
  for (size_t i = 0; i < p->n; i++)
    if (p->t[i].kind == fb->ofk)
      ts[n++] = &p->t[i];
  qsort(ts, n, sizeof *ts, by_arch_descending);
  if (k->fatbin_argv(&j->argv, p, lw_tmp_path(*out), ts, n))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  free(ts);
  return rc;
}

static int fatbin_done(struct lw_graph *g, struct lw_job *j,
                       struct lw_diag *d) {
  (void)g;
  struct lw_fatbin *fb = j->data;
  if (fb->plan->o->dry_run || fb->plan->o->emit_fatbin_only)
    return 0;
  return lw_read_file(lw_tmp_path(fb->tmp), &fb->bytes, d);
}

static const struct lw_job_kind fatbin_kind = {
    .name = "fatbinary", .prepare = fatbin_prepare, .done = fatbin_done};

/* ---- the planners -------------------------------------------------------- */

static const char *unsupported(const struct ex_image *img) {
  const struct gpu_kind *k = kind_of(img->offload_kind);
  if (strncmp(img->triple, k->triple_prefix, strlen(k->triple_prefix)) != 0)
    return k->ofk == EX_OFK_HIP ? "HIP device triple" : "CUDA device triple";
  if (strncmp(img->arch, k->arch_prefix, strlen(k->arch_prefix)) != 0)
    return k->ofk == EX_OFK_HIP ? "HIP architecture" : "CUDA architecture";
  if (img->image_kind != EX_IMG_OBJECT && img->image_kind != EX_IMG_BITCODE &&
      (img->image_kind != EX_IMG_CUBIN || k->ofk != EX_OFK_CUDA))
    return k->ofk == EX_OFK_HIP ? "HIP device image kind"
                                : "CUDA device image kind";
  return NULL;
}

/* Each architecture's device link; the kind's first target also adds the
 * fatbinary job, which waits for every one of them. */
static int first_job(struct lw_graph *g, struct target *t, struct lw_job **out,
                     struct lw_diag *d) {
  struct lw_fatbin *fb = &t->plan->fatbin[kind_of(t->kind)->slot];
  struct lw_job *link = lw_graph_add(g, &link_kind, t, NULL, 0);
  *out = NULL;
  if (link && !fb->job) {
    fb->plan = t->plan;
    fb->ofk = t->kind;
    *out = fb->job = lw_graph_add(g, &fatbin_kind, fb, &link, 1);
  } else if (link && lw_graph_add_dep(g, fb->job, link)) {
    link = NULL;
  }
  if (!link || !fb->job)
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static void free_target(struct target *t) { (void)t; }

static void free_plan(struct lw_plan *p) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(p->fatbin); i++)
    lw_buf_free(&p->fatbin[i].bytes);
}

const struct lw_planner lw_cuda_planner = {.kind = EX_OFK_CUDA,
                                           .unsupported = unsupported,
                                           .first_job = first_job,
                                           .free = free_target,
                                           .free_plan = free_plan,
                                           .whole_cache = 1};

/* free_plan frees both kinds' fatbinaries: once is enough. */
const struct lw_planner lw_hip_planner = {.kind = EX_OFK_HIP,
                                          .unsupported = unsupported,
                                          .first_job = first_job,
                                          .free = free_target,
                                          .whole_cache = 1};
