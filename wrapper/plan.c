/* plan.c - turns the extracted images into jobs, one chain per device
 * target, then one wrap job and the host link:
 *
 *   SYCL   sycl-link (in process: parse + LLVMLinkModules2)
 *            -> spirv (in process: SPIR-V back end; added by sycl-link when
 *               it finishes, the way a split will add one job per module)
 *   OpenMP omp-link (clang -shared: the device objects become a shared
 *            object, as upstream links generic targets)
 *   all    -> wrap (in process: registration module -> host object)
 *          -> host-link (the user's linker into a temporary beside the
 *             output; lw_plan_commit renames it)
 *
 * Targets are grouped by (offload kind, triple, arch) in order of first
 * appearance, so the plan is deterministic. A worker only touches its own
 * target; results are read by later jobs' prepare, on the loop thread. */
#include "internal.h"

#include "aot.h"
#include "dl.h"
#include "ex.h"
#include "wrp.h"

#include <stdlib.h>
#include <string.h>

#ifndef LW_CLANG
#define LW_CLANG "clang"
#endif

struct target {
  struct lw_plan *plan;
  unsigned kind;
  const char *triple, *arch;
  const struct ex_image **imgs;
  size_t nimgs;
  enum aot_target aot;
  struct dl_module *mod;  /* sycl-link -> spirv */
  struct lw_strvec kernels;
  struct lw_buf image;    /* the finished device image */
  struct lw_tmp *out_tmp; /* spirv copy (--save-temps) or linked .so */
  struct lw_job *final;   /* the job that fills `image` */
};

struct lw_plan {
  const struct lw_options *o;
  struct target *t;
  size_t n;
  struct lw_job *wrap, *link;
  struct lw_tmp *wrapper_obj, *out_tmp;
  struct dl_module *wrap_mod;
  char *wrapped_ir;
  /* Built in wrap's prepare, used by its run. */
  struct wrp_sycl_image *sycl;
  struct wrp_omp_image *omp;
  size_t nsycl, nomp;
  struct lw_buf aspects;
  struct wrp_prop req_props[1];
  struct wrp_propset req_set;
};

static int write_file(const char *path, const void *p, size_t n,
                      struct lw_diag *d) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return lw_error_path(d, LW_EIO, path, "cannot write");
  size_t w = n ? fwrite(p, 1, n, f) : 0;
  if (fclose(f) != 0 || w != n)
    return lw_error_path(d, LW_EIO, path, "write error");
  return 0;
}

/* ---- SYCL ---------------------------------------------------------------- */

static int spirv_prepare(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d) {
  (void)g;
  struct target *t = j->data;
  if (!j->what)
    j->what = lw_xasprintf("SPIR-V code generation for %s at O%d",
                           t->triple, t->plan->o->opt_level);
  if (t->plan->o->save_temps)
    return lw_tmp_create("sycl-spirv64", "spv", &t->out_tmp, d);
  return 0;
}

static int spirv_run(struct lw_job *j, struct lw_diag *d) {
  struct target *t = j->data;
  int rc = dl_codegen(t->mod, t->plan->o->opt_level, DL_OBJECT, &t->image, d);
  dl_module_free(t->mod);
  t->mod = NULL;
  if (!rc && t->image.len < 4)
    rc = lw_error(d, LW_ELLVM, "SPIR-V back end produced no module");
  if (!rc && t->out_tmp)
    rc = write_file(lw_tmp_path(t->out_tmp), t->image.data, t->image.len, d);
  return rc;
}

static const struct lw_job_kind spirv_kind = {"spirv", spirv_prepare,
                                              spirv_run, NULL, NULL};

static int sycl_link_run(struct lw_job *j, struct lw_diag *d) {
  struct target *t = j->data;
  struct dl_input *in = calloc(t->nimgs, sizeof *in);
  if (!in)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < t->nimgs; i++)
    in[i] = (struct dl_input){t->imgs[i]->data, t->imgs[i]->size,
                              t->imgs[i]->origin};
  int rc = dl_link(in, t->nimgs, "spirv64-unknown-unknown", &t->mod, d);
  free(in);
  if (!rc && dl_kernel_names(t->mod, &t->kernels))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  return rc;
}

/* The linked module goes on to code generation: a new job, and wrap now
 * waits for it too. */
static int sycl_link_done(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  struct target *t = j->data;
  struct lw_job *cg = lw_graph_add(g, &spirv_kind, t, NULL, 0);
  if (!cg || lw_graph_add_dep(g, t->plan->wrap, cg))
    return lw_error(d, LW_ENOMEM, "out of memory");
  t->final = cg;
  return 0;
}

static const struct lw_job_kind sycl_link_kind = {
    "sycl-link", NULL, sycl_link_run, sycl_link_done, NULL};

/* ---- OpenMP -------------------------------------------------------------- */

/* Arguments of `list` ("[triple=]arg") that apply to `triple`. */
static int push_for_triple(struct lw_strvec *argv, const struct lw_strvec *list,
                           const char *triple, const char *prefix) {
  for (size_t i = 0; i < list->n; i++) {
    /* "<triple>=<arg>" names a triple (which never starts with '-');
     * "-opt=value" is an argument for every triple. */
    const char *a = list->v[i], *eq = strchr(a, '=');
    if (eq && a[0] != '-') {
      if (strncmp(a, triple, (size_t)(eq - a)) != 0 || triple[eq - a] != 0)
        continue; /* for another triple */
      a = eq + 1;
    }
    if (lw_strvec_pushf(argv, "%s%s", prefix, a))
      return LW_ENOMEM;
  }
  return 0;
}

static int omp_link_prepare(struct lw_graph *g, struct lw_job *j,
                            struct lw_diag *d) {
  (void)g;
  struct target *t = j->data;
  const struct lw_options *o = t->plan->o;
  struct lw_strvec *a = &j->argv;
  int rc = lw_tmp_create("openmp-device", "so", &t->out_tmp, d);
  if (rc)
    return rc;
  if (lw_strvec_push(a, LW_CLANG) ||
      lw_strvec_push(a, "--no-default-config") ||
      lw_strvec_pushf(a, "--target=%s", t->triple) ||
      (t->arch[0] && strcmp(t->arch, "generic") != 0 &&
       lw_strvec_pushf(a, "-march=%s", t->arch)) ||
      lw_strvec_pushf(a, "-O%d", o->opt_level) ||
      lw_strvec_push(a, "-shared") || lw_strvec_push(a, "-Wl,-Bsymbolic") ||
      lw_strvec_push(a, "-Wl,--no-undefined") || lw_strvec_push(a, "-o") ||
      lw_strvec_push(a, lw_tmp_path(t->out_tmp)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < t->nimgs; i++) {
    const struct ex_image *img = t->imgs[i];
    struct lw_tmp *in;
    const char *ext = img->image_kind == EX_IMG_OBJECT ? "o"
                      : ex_sniff_image_kind(img->data, img->size) ==
                              EX_IMG_BITCODE
                          ? "bc"
                                            : "ll"; /* textual IR */
    if ((rc = lw_tmp_create("openmp-input", ext, &in, d)))
      return rc;
    if (!o->dry_run &&
        (rc = write_file(lw_tmp_path(in), img->data, img->size, d)))
      return rc;
    if (lw_strvec_push(a, lw_tmp_path(in)))
      return lw_error(d, LW_ENOMEM, "out of memory");
  }
  /* The host link's shared libraries serve the device link too (the
   * OpenMP runtime, libm, ...), as upstream; static archives do not: their
   * device code is in the inputs above already. */
  const struct lw_strvec *la = &o->linker_args;
  struct lw_strvec dirs = {0};
  for (size_t i = 0; i < la->n; i++) {
    const char *s = la->v[i];
    int sep = (strcmp(s, "-L") == 0 || strcmp(s, "-l") == 0) && i + 1 < la->n;
    const char *v = sep ? la->v[i + 1] : s + 2;
    if (strncmp(s, "-L", 2) == 0 && (sep || s[2]) &&
        (lw_strvec_push(&dirs, v) || lw_strvec_pushf(a, "-L%s", v)))
      rc = LW_ENOMEM;
    i += (size_t)sep;
  }
  for (size_t i = 0; !rc && i < la->n; i++) {
    const char *s = la->v[i];
    int sep = strcmp(s, "-l") == 0 && i + 1 < la->n;
    if (strncmp(s, "-l", 2) != 0 || (!sep && !s[2])) {
      i += (size_t)(lw_takes_separate_value(s) && i + 1 < la->n);
      continue;
    }
    const char *name = sep ? la->v[++i] : s + 2;
    char *found = lw_find_library(&dirs, name, 0);
    size_t n = found ? strlen(found) : 0;
    if (!(n > 2 && strcmp(found + n - 2, ".a") == 0) &&
        lw_strvec_pushf(a, "-l%s", name))
      rc = LW_ENOMEM;
    free(found);
  }
  lw_strvec_free(&dirs);
  if (rc)
    return lw_error(d, LW_ENOMEM, "out of memory");
  if (push_for_triple(a, &o->device_compiler_args, t->triple, "") ||
      push_for_triple(a, &o->device_linker_args, t->triple, "-Wl,"))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static int omp_link_done(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d) {
  (void)g;
  struct target *t = j->data;
  if (t->plan->o->dry_run)
    return 0;
  return lw_read_file(lw_tmp_path(t->out_tmp), &t->image, d);
}

static const struct lw_job_kind omp_link_kind = {
    "openmp-device-link", omp_link_prepare, NULL, omp_link_done, NULL};

/* ---- wrap and host link ---------------------------------------------------- */

static int wrap_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  j->what = lw_xasprintf("wrap %zu device image(s) for %s", p->n,
                         p->o->host_triple);
  int rc = lw_tmp_create("wrapper", "o", &p->wrapper_obj, d);
  if (rc)
    return rc;
  p->sycl = calloc(p->n, sizeof *p->sycl);
  p->omp = calloc(p->n, sizeof *p->omp);
  if (!p->sycl || !p->omp)
    return lw_error(d, LW_ENOMEM, "out of memory");
  /* "SYCL/device requirements": no aspects are known to be used yet. */
  if (wrp_encode_byte_array(NULL, 0, &p->aspects))
    return lw_error(d, LW_ENOMEM, "out of memory");
  p->req_props[0] = (struct wrp_prop){"aspects", WRP_PROP_BYTE_ARRAY, 0,
                                      p->aspects.data, p->aspects.len};
  p->req_set = (struct wrp_propset){"SYCL/device requirements", p->req_props,
                                    1};
  for (size_t i = 0; i < p->n; i++) {
    struct target *t = &p->t[i];
    if (t->kind == EX_OFK_SYCL)
      p->sycl[p->nsycl++] = (struct wrp_sycl_image){
          t->image.data, t->image.len, aot_runtime_target(t->aot),
          WRP_FMT_SPIRV, "", "", &t->kernels, &p->req_set, 1};
    else
      p->omp[p->nomp++] = (struct wrp_omp_image){t->image.data, t->image.len,
                                                 t->triple, t->arch};
  }
  return 0;
}

static int wrap_run(struct lw_job *j, struct lw_diag *d) {
  struct lw_plan *p = j->data;
  struct wrp_request req = {p->o->host_triple, p->sycl, p->nsycl, p->omp,
                            p->nomp};
  struct dl_module *m;
  int rc = wrp_build(&req, &m, d);
  if (rc)
    return rc;
  if (p->o->print_wrapped && !(p->wrapped_ir = dl_print(m)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  struct lw_buf obj = {0};
  if (!rc)
    rc = dl_codegen(m, 2, DL_OBJECT, &obj, d);
  dl_module_free(m);
  if (!rc)
    rc = write_file(lw_tmp_path(p->wrapper_obj), obj.data, obj.len, d);
  lw_buf_free(&obj);
  return rc;
}

static int wrap_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  (void)g;
  (void)d;
  struct lw_plan *p = j->data;
  if (p->wrapped_ir)
    fputs(p->wrapped_ir, stderr);
  return 0;
}

static const struct lw_job_kind wrap_kind = {"wrap", wrap_prepare, wrap_run,
                                             wrap_done, NULL};

static int host_link_prepare(struct lw_graph *g, struct lw_job *j,
                             struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  int rc = lw_tmp_create_beside(p->o->output, &p->out_tmp, d);
  if (rc)
    return rc;
  j->inherit_stdio = 1;
  if (lw_host_link_argv(p->o, lw_tmp_path(p->out_tmp),
                        p->wrapper_obj ? lw_tmp_path(p->wrapper_obj) : NULL,
                        &j->argv))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind host_link_kind = {"host-link",
                                                  host_link_prepare, NULL,
                                                  NULL, NULL};

/* ---- building the plan ----------------------------------------------------- */

/* An image without an arch (bundles of the old model) is generic code. */
static const char *arch_of(const struct ex_image *img) {
  return img->arch[0] ? img->arch : "generic";
}

static struct target *target_for(struct lw_plan *p, const struct ex_image *img,
                                 struct lw_diag *d) {
  for (size_t i = 0; i < p->n; i++)
    if (p->t[i].kind == img->offload_kind &&
        strcmp(p->t[i].triple, img->triple) == 0 &&
        strcmp(p->t[i].arch, arch_of(img)) == 0)
      return &p->t[i];
  const char *what = NULL;
  enum aot_target aot = AOT_UNKNOWN;
  if (img->offload_kind == EX_OFK_SYCL) {
    aot = aot_classify(img->triple);
    if (strncmp(img->triple, "fpga_", 5) == 0)
      what = "FPGA device code (aocx/aocr/aoco)";
    else if (aot == AOT_UNKNOWN)
      what = "SYCL device triple";
    else if (aot != AOT_JIT)
      what = "SYCL ahead-of-time target";
    else if (img->image_kind != EX_IMG_BITCODE)
      what = "SYCL device image kind";
  } else if (img->offload_kind == EX_OFK_OPENMP) {
    if (strncmp(img->triple, "x86_64-", 7) != 0)
      what = "OpenMP device triple";
    else if (img->image_kind != EX_IMG_OBJECT &&
             img->image_kind != EX_IMG_BITCODE)
      what = "OpenMP device image kind";
  } else {
    what = "offload kind";
  }
  if (what) {
    lw_error_path(d, LW_ENOTSUP, img->origin,
                  "%s is not supported yet (kind %s, image %s, triple '%s')",
                  what, ex_offload_kind_name(img->offload_kind),
                  ex_image_kind_name(img->image_kind), img->triple);
    return NULL;
  }
  struct target *t = &p->t[p->n++];
  t->plan = p;
  t->kind = img->offload_kind;
  t->triple = img->triple;
  t->arch = arch_of(img);
  t->aot = aot;
  return t;
}

int lw_plan_build(struct lw_graph *g, const struct lw_options *o,
                  const struct ex_set *set, struct lw_plan **out,
                  struct lw_diag *d) {
  struct lw_plan *p = calloc(1, sizeof *p);
  if (!p)
    return lw_error(d, LW_ENOMEM, "out of memory");
  *out = p;
  p->o = o;
  p->t = calloc(set->n ? set->n : 1, sizeof *p->t);
  if (!p->t)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < set->n; i++) {
    const struct ex_image *img = &set->images[i];
    /* An executable's or shared object's device code was registered by its
     * own wrapper; linking it again would register it twice. */
    if (img->linked) {
      if (o->verbose)
        fprintf(stderr, "fatlink: skipping %s image for '%s' in linked file "
                        "'%s'\n",
                ex_offload_kind_name(img->offload_kind), img->triple,
                img->origin);
      continue;
    }
    struct target *t = target_for(p, img, d);
    if (!t)
      return d->code;
    if (o->verbose)
      fprintf(stderr, "fatlink: device image %s for '%s' from '%s'\n",
              ex_offload_kind_name(img->offload_kind), img->triple,
              img->origin);
    const struct ex_image **ni =
        realloc(t->imgs, (t->nimgs + 1) * sizeof *ni);
    if (!ni)
      return lw_error(d, LW_ENOMEM, "out of memory");
    t->imgs = ni;
    t->imgs[t->nimgs++] = img;
  }
  struct lw_job **firsts = calloc(p->n ? p->n : 1, sizeof *firsts);
  if (!firsts)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < p->n; i++) {
    struct target *t = &p->t[i];
    const struct lw_job_kind *k =
        t->kind == EX_OFK_SYCL ? &sycl_link_kind : &omp_link_kind;
    struct lw_job *j = lw_graph_add(g, k, t, NULL, 0);
    if (!j) {
      free(firsts);
      return lw_error(d, LW_ENOMEM, "out of memory");
    }
    t->final = firsts[i] = j;
    if (t->kind == EX_OFK_SYCL) {
      struct lw_buf names = {0};
      for (size_t k2 = 0; k2 < t->nimgs; k2++) {
        const char *o2 = t->imgs[k2]->origin;
        lw_buf_append(&names, k2 ? ", " : "", k2 ? 2 : 0);
        lw_buf_append(&names, o2, strlen(o2));
      }
      lw_buf_append(&names, "", 1);
      j->what = lw_xasprintf("link %zu bitcode image(s) for %s: %s",
                             t->nimgs, t->triple,
                             names.data ? (char *)names.data : "");
      lw_buf_free(&names);
    }
  }
  /* wrap waits for every target (and for jobs the targets add later). */
  if (p->n && !(p->wrap = lw_graph_add(g, &wrap_kind, p, firsts, p->n))) {
    free(firsts);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  free(firsts);
  p->link = lw_graph_add(g, &host_link_kind, p, &p->wrap, p->wrap ? 1 : 0);
  if (!p->link)
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

int lw_plan_commit(struct lw_plan *p, struct lw_diag *d) {
  if (p->o->dry_run || !p->out_tmp)
    return 0;
  return lw_tmp_commit(&p->out_tmp, p->o->output, d);
}

void lw_plan_free(struct lw_plan *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->n; i++) {
    dl_module_free(p->t[i].mod);
    lw_strvec_free(&p->t[i].kernels);
    lw_buf_free(&p->t[i].image);
  }
  for (size_t i = 0; i < p->n; i++)
    free(p->t[i].imgs);
  free(p->t);
  free(p->sycl);
  free(p->omp);
  free(p->wrapped_ir);
  lw_buf_free(&p->aspects);
  free(p);
}
