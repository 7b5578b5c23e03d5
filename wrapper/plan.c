/* plan.c - turns the extracted images into jobs, one chain per device
 * target, then one wrap job and the host link:
 *
 *   SYCL   sycl-link (in process: link, then split into groups)
 *            -> sycl-module x N (in process, in parallel: build the group's
 *               module, its property sets, its SPIR-V; added by sycl-link
 *               once it knows N) - plan_sycl.c
 *   OpenMP omp-link (clang -shared: the device objects become a shared
 *            object, as upstream links generic targets) - plan_openmp.c
 *   all    -> wrap (in process: registration module -> host object)
 *          -> host-link (the user's linker into a temporary beside the
 *             output; lw_plan_commit renames it)
 *
 * Targets are grouped by (offload kind, triple, arch) in order of first
 * appearance, so the plan is deterministic. A worker only touches its own
 * target; results are read by later jobs' prepare, on the loop thread. */
#include "plan.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

int lw__write_file(const char *path, const void *p, size_t n,
                   struct lw_diag *d) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return lw_error_path(d, LW_EIO, path, "cannot write");
  size_t w = n ? fwrite(p, 1, n, f) : 0;
  if (fclose(f) != 0 || w != n)
    return lw_error_path(d, LW_EIO, path, "write error");
  return 0;
}

/* ---- wrap and host link ---------------------------------------------------- */

static int wrap_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  /* Every SPIR-V module of this process is emitted by now (wrap waits for
   * all of them): the ones kept for LLVM's SPIR-V back end can go before
   * wrapping allocates anew, and their pages back to the system: without
   * that the wrap's allocations land on fresh pages and raise the peak
   * (off split of 100 units: 90.7 -> 88.5 MB; ~170 madvise calls, 1-2 ms). */
  dl_release();
  malloc_trim(0);
  j->what = lw_xasprintf("wrap the device images of %zu target(s) for %s",
                         p->n, p->o->host_triple);
  int rc = lw_tmp_create("wrapper", "o", &p->wrapper_obj, d);
  if (rc)
    return rc;
  size_t nmod = 0;
  for (size_t i = 0; i < p->n; i++)
    nmod += p->t[i].kind == EX_OFK_SYCL ? p->t[i].nmodules * p->t[i].nouts : 1;
  p->sycl = calloc(nmod ? nmod : 1, sizeof *p->sycl);
  p->omp = calloc(p->n, sizeof *p->omp);
  if (!p->sycl || !p->omp)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < p->n; i++) {
    struct target *t = &p->t[i];
    if (t->kind != EX_OFK_SYCL) {
      p->omp[p->nomp++] = (struct wrp_omp_image){t->image.data, t->image.len,
                                                 t->triple, t->arch};
      continue;
    }
    /* Per module: its JIT SPIR-V and native images side by side, each
     * with the module's kernels and property sets (seed 004). */
    lw__aot_check_coverage(t);
    for (size_t k = 0; k < t->nmodules; k++) {
      struct sycl_module *m = &t->modules[k];
      if (!m->image.len)
        continue; /* a dry run */
      const struct dl_group *gr = &t->split.g[k];
      for (size_t u = 0; u < t->nouts; u++) {
        const struct sycl_out *out = &t->outs[u];
        const struct lw_buf *img =
            out->kind == AOT_JIT ? &m->image : &m->aot[u].image;
        if (out->kind != AOT_JIT && (m->aot[u].dropped || !img->len))
          continue;
        const struct dl_props *props =
            out->kind == AOT_JIT ? &gr->props : &m->aot[u].props;
        p->sycl[p->nsycl++] = (struct wrp_sycl_image){
            img->data,
            img->len,
            aot_runtime_target(out->kind),
            out->kind == AOT_JIT ? WRP_FMT_SPIRV : WRP_FMT_NATIVE,
            "",
            "",
            &gr->kernels,
            props->s,
            props->n};
      }
    }
  }
  return 0;
}

static int wrap_run(struct lw_job *j, struct lw_diag *d) {
  struct lw_plan *p = j->data;
  struct wrp_request req = {p->o->host_triple, p->sycl, p->nsycl, p->omp,
                            p->nomp, p->o->relocatable};
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
    rc = lw__write_file(lw_tmp_path(p->wrapper_obj), obj.data, obj.len, d);
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

static const struct lw_job_kind wrap_kind = {
    .name = "wrap", .prepare = wrap_prepare, .run = wrap_run, .done = wrap_done};

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

static const struct lw_job_kind host_link_kind = {
    .name = "host-link", .prepare = host_link_prepare};

/* A relocatable link's output is an object for a later link: its device
 * code is already linked and registered, so the embedded device code goes
 * and its offload entries move to a section of its own (named by a hash of
 * the output, so two such objects do not mix), as upstream does. */
#ifndef LW_OBJCOPY
#define LW_OBJCOPY "llvm-objcopy"
#endif

static int relocate_prepare(struct lw_graph *g, struct lw_job *j,
                            struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  const char *out = lw_tmp_path(p->out_tmp);
  struct lw_buf bytes = {0};
  if (!p->o->dry_run) {
    int rc = lw_read_file(out, &bytes, d);
    if (rc)
      return rc;
  }
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (size_t i = 0; i < bytes.len; i++)
    h = (h ^ bytes.data[i]) * 0x100000001b3ull;
  lw_buf_free(&bytes);
  static const char sec[] = "llvm_offload_entries";
  if (lw_strvec_push(&j->argv, LW_OBJCOPY) || lw_strvec_push(&j->argv, out) ||
      lw_strvec_push(&j->argv, "--remove-section") ||
      lw_strvec_push(&j->argv, ".llvm.offloading") ||
      lw_strvec_push(&j->argv, "--rename-section") ||
      lw_strvec_pushf(&j->argv, "%s=%s_%016llx", sec, sec,
                      (unsigned long long)h) ||
      lw_strvec_push(&j->argv, "--redefine-sym") ||
      lw_strvec_pushf(&j->argv, "__start_%s=__start_%s_%016llx", sec, sec,
                      (unsigned long long)h) ||
      lw_strvec_push(&j->argv, "--redefine-sym") ||
      lw_strvec_pushf(&j->argv, "__stop_%s=__stop_%s_%016llx", sec, sec,
                      (unsigned long long)h))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind relocate_kind = {
    .name = "relocate", .prepare = relocate_prepare};

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
    else if (aot == AOT_FPGA)
      what = "SYCL FPGA target";
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
  for (size_t i = 0; i < p->n; i++)
    if (p->t[i].kind == EX_OFK_SYCL) {
      int rc = lw__sycl_load_libs(p, d);
      if (rc)
        return rc;
      break;
    }
  for (size_t i = 0; i < p->n; i++)
    if (p->t[i].kind == EX_OFK_SYCL) {
      int rc = lw__aot_plan_target(&p->t[i], d);
      if (rc)
        return rc;
    }
  struct lw_job **firsts = calloc(p->n ? p->n : 1, sizeof *firsts);
  if (!firsts)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < p->n; i++) {
    struct target *t = &p->t[i];
    const struct lw_job_kind *k =
        t->kind == EX_OFK_SYCL ? &lw__sycl_link_kind : &lw__omp_link_kind;
    struct lw_job *j = lw_graph_add(g, k, t, NULL, 0);
    if (!j) {
      free(firsts);
      return lw_error(d, LW_ENOMEM, "out of memory");
    }
    firsts[i] = j;
    if (t->kind == EX_OFK_SYCL && !(j->what = lw__sycl_link_what(t))) {
      free(firsts);
      return lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
  /* wrap waits for every target (and for jobs the targets add later). */
  if (p->n && !(p->wrap = lw_graph_add(g, &wrap_kind, p, firsts, p->n))) {
    free(firsts);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  free(firsts);
  p->link = lw_graph_add(g, &host_link_kind, p, &p->wrap, p->wrap ? 1 : 0);
  if (!p->link ||
      (o->relocatable && !lw_graph_add(g, &relocate_kind, p, &p->link, 1)))
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
    lw__aot_free(&p->t[i]);
    lw__sycl_free(&p->t[i]);
    lw_buf_free(&p->t[i].image);
  }
  if (p->have_config)
    aot_config_free(&p->config);
  for (size_t i = 0; i < p->n; i++)
    free(p->t[i].imgs);
  free(p->t);
  lw__sycl_free_libs(p);
  free(p->sycl);
  free(p->omp);
  free(p->wrapped_ir);
  free(p);
}
