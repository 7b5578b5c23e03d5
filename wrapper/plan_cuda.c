/* plan_cuda.c - the CUDA device side of relocatable device code
 * (-fgpu-rdc --offload-new-driver): per architecture, the device objects
 * of the link are linked into one cubin by clang for nvptx64 (which runs
 * the toolkit's nvlink through clang-nvlink-wrapper, as upstream does);
 * then the toolkit's fatbinary puts every architecture's cubin into one
 * fatbinary. --emit-fatbin-only writes that fatbinary to the output
 * instead of wrapping and linking; registering it in a host program is not
 * supported yet. */
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
  int rc = tool ? lw_tmp_create_beside(p->o->output, &p->out_tmp, d)
                : lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc &&
      (lw_strvec_push(&j->argv, tool) || lw_strvec_push(&j->argv, "-64") ||
       lw_strvec_push(&j->argv, "--create") ||
       lw_strvec_push(&j->argv, lw_tmp_path(p->out_tmp))))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  free(tool);
  struct target **ts = rc ? NULL : calloc(p->n, sizeof *ts);
  if (!rc && !ts)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < p->n; i++)
    ts[i] = &p->t[i];
  if (!rc)
    qsort(ts, p->n, sizeof *ts, by_arch_descending);
  for (size_t i = 0; !rc && i < p->n; i++) {
    struct target *t = ts[i];
    if (t->planner != &lw_cuda_planner) {
      rc = lw_error_path(d, LW_EINVAL, t->imgs[0]->origin,
                         "--emit-fatbin-only takes CUDA device code only, "
                         "not %s code for '%s'",
                         ex_offload_kind_name(t->kind), t->triple);
      break;
    }
    /* "sm_90a" is sm=90a. */
    if (lw_strvec_pushf(&j->argv, "--image3=kind=elf,sm=%s,file=%s",
                        strncmp(t->arch, "sm_", 3) == 0 ? t->arch + 3 : t->arch,
                        lw_tmp_path(t->out_tmp)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  free(ts);
  return rc;
}

const struct lw_job_kind lw__cuda_fatbin_kind = {.name = "fatbinary",
                                                 .prepare = fatbin_prepare};

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

static int first_job(struct lw_graph *g, struct target *t, struct lw_job **out,
                     struct lw_diag *d) {
  if (!t->plan->o->emit_fatbin_only)
    return lw_error_path(d, LW_ENOTSUP, t->imgs[0]->origin,
                         "registering CUDA device code in the host program "
                         "is not supported yet (--emit-fatbin-only writes "
                         "the fatbinary)");
  if (!(*out = lw_graph_add(g, &link_kind, t, NULL, 0)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static void free_target(struct target *t) { lw_buf_free(&t->image); }

const struct lw_planner lw_cuda_planner = {.kind = EX_OFK_CUDA,
                                           .unsupported = unsupported,
                                           .first_job = first_job,
                                           .free = free_target};
