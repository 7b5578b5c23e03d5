/* plan_cuda.c - the CUDA device side of relocatable device code
 * (-fgpu-rdc --offload-new-driver): per architecture, the device objects
 * of the link are linked into one cubin by clang for nvptx64 (which runs
 * the toolkit's nvlink through clang-nvlink-wrapper, as upstream does);
 * then the toolkit's fatbinary puts every architecture's cubin into one
 * fatbinary, which wrap registers with the CUDA runtime (wrap/cuda.c).
 * With --emit-fatbin-only the fatbinary is the output instead. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#ifndef LW_CLANG
#define LW_CLANG "clang"
#endif

/* A toolkit program: in --cuda-path's bin/, else on PATH, else in
 * /usr/local/cuda/bin (where clang looks first too). */
static char *cuda_tool(const struct lw_options *o, const char *name) {
  if (o->cuda_path)
    return lw_xasprintf("%s/bin/%s", o->cuda_path, name);
  return lw_on_path(name) ? strdup(name)
                          : lw_xasprintf("/usr/local/cuda/bin/%s", name);
}

/* ---- the device link of one architecture -------------------------------- */

static int cuda_link_prepare(struct lw_graph *g, struct lw_job *j,
                             struct lw_diag *d) {
  (void)g;
  struct target *t = j->data;
  const struct lw_options *o = t->plan->o;
  struct lw_strvec *a = &j->argv;
  /* clang and nvlink leave temporaries when they fail: they get a
   * directory of their own. */
  struct lw_tmp *scratch;
  int rc = lw_tmp_create("cuda-device", "cubin", &t->out_tmp, d);
  if (!rc)
    rc = lw_tmp_create_scratch("cuda-tools", &scratch, d);
  if (rc)
    return rc;
  j->tmpdir = lw_tmp_path(scratch);
  if (lw_strvec_push(a, LW_CLANG) || lw_strvec_push(a, "--no-default-config") ||
      lw_strvec_pushf(a, "--target=%s", t->triple) ||
      lw_strvec_pushf(a, "-march=%s", t->arch) ||
      (o->cuda_path && lw_strvec_pushf(a, "--cuda-path=%s", o->cuda_path)) ||
      lw_strvec_push(a, "-o") || lw_strvec_push(a, lw_tmp_path(t->out_tmp)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  if ((rc = lw__push_device_inputs(a, t, "cuda-input", d)))
    return rc;
  if (lw__push_device_args(a, o, t->triple))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind link_kind = {.name = "cuda-device-link",
                                             .prepare = cuda_link_prepare,
                                             .done = lw__read_device_image};

/* ---- the fatbinary, as the output ---------------------------------------- */

/* Upstream's order: by architecture name, descending ("sm_90" before
 * "sm_80" before "sm_120"), so the fatbinaries are byte for byte equal. */
static int by_arch_descending(const void *a, const void *b) {
  return strcmp((*(const struct target *const *)b)->arch,
                (*(const struct target *const *)a)->arch);
}

static int fatbin_prepare(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  char *tool = cuda_tool(p->o, "fatbinary");
  struct lw_tmp **out =
      p->o->emit_fatbin_only ? &p->out_tmp : &p->cuda_fatbin_tmp;
  int rc = !tool                    ? lw_error(d, LW_ENOMEM, "out of memory")
           : p->o->emit_fatbin_only ? lw_tmp_create_beside(p->o->output, out, d)
                                    : lw_tmp_create("cuda", "fatbin", out, d);
  if (!rc &&
      (lw_strvec_push(&j->argv, tool) || lw_strvec_push(&j->argv, "-64") ||
       lw_strvec_push(&j->argv, "--create") ||
       lw_strvec_push(&j->argv, lw_tmp_path(*out))))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  free(tool);
  struct target **ts = rc ? NULL : calloc(p->n, sizeof *ts);
  if (!rc && !ts)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  size_t n = 0;
  for (size_t i = 0; !rc && i < p->n; i++)
    if (p->t[i].kind == EX_OFK_CUDA)
      ts[n++] = &p->t[i];
  if (!rc)
    qsort(ts, n, sizeof *ts, by_arch_descending);
  for (size_t i = 0; !rc && i < n; i++) {
    const char *arch = ts[i]->arch;
    /* "sm_90a" is sm=90a. */
    if (lw_strvec_pushf(&j->argv, "--image3=kind=elf,sm=%s,file=%s",
                        strncmp(arch, "sm_", 3) == 0 ? arch + 3 : arch,
                        lw_tmp_path(ts[i]->out_tmp)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  free(ts);
  return rc;
}

static int fatbin_done(struct lw_graph *g, struct lw_job *j,
                       struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  if (p->o->dry_run || p->o->emit_fatbin_only)
    return 0;
  return lw_read_file(lw_tmp_path(p->cuda_fatbin_tmp), &p->cuda_fatbin, d);
}

static const struct lw_job_kind fatbin_kind = {
    .name = "fatbinary", .prepare = fatbin_prepare, .done = fatbin_done};

/* ---- the planner --------------------------------------------------------- */

static const char *unsupported(const struct ex_image *img) {
  if (strncmp(img->triple, "nvptx64", 7) != 0)
    return "CUDA device triple";
  if (strncmp(img->arch, "sm_", 3) != 0)
    return "CUDA architecture";
  if (img->image_kind != EX_IMG_OBJECT && img->image_kind != EX_IMG_BITCODE &&
      img->image_kind != EX_IMG_CUBIN)
    return "CUDA device image kind";
  return NULL;
}

/* Each architecture's device link; the first target also adds the
 * fatbinary job, which waits for every one of them. */
static int first_job(struct lw_graph *g, struct target *t, struct lw_job **out,
                     struct lw_diag *d) {
  struct lw_plan *p = t->plan;
  struct lw_job *link = lw_graph_add(g, &link_kind, t, NULL, 0);
  *out = NULL;
  if (link && !p->cuda_fatbin_job)
    *out = p->cuda_fatbin_job = lw_graph_add(g, &fatbin_kind, p, &link, 1);
  else if (link && lw_graph_add_dep(g, p->cuda_fatbin_job, link))
    link = NULL;
  if (!link || !p->cuda_fatbin_job)
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static void free_target(struct target *t) { lw_buf_free(&t->image); }

static void free_plan(struct lw_plan *p) { lw_buf_free(&p->cuda_fatbin); }

const struct lw_planner lw_cuda_planner = {.kind = EX_OFK_CUDA,
                                           .unsupported = unsupported,
                                           .first_job = first_job,
                                           .free = free_target,
                                           .free_plan = free_plan};
