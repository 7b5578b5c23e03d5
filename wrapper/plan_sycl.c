/* plan_sycl.c - the SYCL device chain of one target.
 *   sycl-link    (in process) link every bitcode image of the target, then
 *                split the kernels into groups (devlink/split.c). When it
 *                finishes it knows how many modules there are and adds one
 *                sycl-module job for each: the graph grows, and wrap waits.
 *   sycl-module  (in process, one per group, one after the other) build the
 *                group's module and emit its SPIR-V (its property sets were
 *                computed by the split).
 *   sycl-emit    LLVM 22's SPIR-V back end cannot emit two modules at once
 *                in one process, so with N job slots and several modules,
 *                N helper processes (fatlink --fatlink-emit-spirv, emit.c)
 *                make them from the linked bitcode, each every N-th.
 *   llvm-spirv   with --spirv-translator=llvm-spirv, each sycl-module job
 *                writes its module's bitcode and adds a translator job.
 * Modules keep the order of their groups, so the images are the same,
 * byte for byte and in the same order, whatever --wrapper-jobs is. */
#include "plan.h"

#include <llvm/Config/llvm-config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LW_STR2(x) #x
#define LW_STR(x) LW_STR2(x)

static const char *const split_names[] = {"off", "per_source", "per_kernel",
                                          "auto"};

char *lw__sycl_link_what(const struct target *t) {
  struct lw_buf names = {0};
  int rc = 0;
  for (size_t k = 0; !rc && k < t->nimgs; k++) {
    const char *o = t->imgs[k]->origin;
    rc = (k ? lw_buf_append(&names, ", ", 2) : 0) ||
         lw_buf_append(&names, o, strlen(o));
  }
  char *what = rc || lw_buf_append(&names, "", 1)
                   ? NULL
                   : lw_xasprintf("link %zu bitcode image(s) for %s%s and "
                                  "split (%s): %s",
                                  t->nimgs, t->triple,
                                  t->plan->nlibs ? ", then device libraries "
                                                   "only-needed,"
                                                 : "",
                                  split_names[t->plan->o->split_mode],
                                  (char *)names.data);
  lw_buf_free(&names);
  return what;
}

/* ---- sycl-module and sycl-emit ------------------------------------------- */

/* The module's SPIR-V is in m->image: keep and dump copies as asked. */
static int store(struct sycl_module *m, int have_file, struct lw_diag *d) {
  const struct lw_options *o = m->t->plan->o;
  int rc = 0;
  if (m->image.len < 4)
    rc = lw_error(d, LW_ELLVM, "SPIR-V back end produced no module");
  if (!rc && m->spv && !have_file)
    rc = lw__write_file(lw_tmp_path(m->spv), m->image.data, m->image.len, d);
  if (!rc && o->dump_dir) {
    const char *base = strrchr(o->output, '/');
    char *path = lw_xasprintf("%s/%s_%zu.spv", o->dump_dir,
                              base ? base + 1 : o->output, m->index);
    rc = path ? lw__write_file(path, m->image.data, m->image.len, d)
              : lw_error(d, LW_ENOMEM, "out of memory");
    free(path);
  }
  return rc;
}

static int module_prepare(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct sycl_module *m = j->data;
  const struct lw_options *o = m->t->plan->o;
  size_t nk = m->index < m->t->split.n ? m->t->split.g[m->index].kernels.n : 0;
  const char *step = o->llvm_spirv ? "bitcode for llvm-spirv"
                                    : "SPIR-V code generation";
  if (!j->what)
    j->what = o->dry_run
                  ? lw_xasprintf("%s for each split module of %s at O%d", step,
                                 m->t->triple, o->opt_level)
                  : lw_xasprintf("%s for module %zu of %s (%zu kernel(s)) at "
                                 "O%d",
                                 step, m->index, m->t->triple, nk,
                                 o->opt_level);
  if (o->llvm_spirv)
    return lw_tmp_create("sycl-module", "bc", &m->bc, d);
  if (o->save_temps)
    return lw_tmp_create("sycl-spirv64", "spv", &m->spv, d);
  return 0;
}

static int module_run(struct lw_job *j, struct lw_diag *d) {
  struct sycl_module *m = j->data;
  const struct lw_options *o = m->t->plan->o;
  if (!m->bc) {
    int rc = dl_split_emit(&m->t->split, m->index, o->opt_level, &m->image, d);
    return rc ? rc : store(m, 0, d);
  }
  struct dl_module *mod = NULL;
  int rc = dl_split_module(&m->t->split, m->index, &mod, d);
  if (!rc)
    rc = dl_write_bitcode(mod, lw_tmp_path(m->bc), d);
  dl_module_free(mod);
  return rc;
}

/* ---- llvm-spirv: an external translator for each module's bitcode --------- */

static int translate_prepare(struct lw_graph *g, struct lw_job *j,
                             struct lw_diag *d) {
  (void)g;
  struct sycl_module *m = j->data;
  const struct lw_options *o = m->t->plan->o;
  int rc = lw_tmp_create("sycl-spirv64", "spv", &m->spv, d);
  if (rc)
    return rc;
  j->hint = "llvm-spirv must be built for LLVM " LW_STR(LLVM_VERSION_MAJOR)
            " to read fatlink's bitcode (the default --spirv-translator="
            "backend needs no llvm-spirv)";
  if (lw_strvec_push(&j->argv, o->llvm_spirv) ||
      lw_strvec_extend_from(&j->argv, &o->llvm_spirv_opts) ||
      lw_strvec_push(&j->argv, lw_tmp_path(m->bc)) ||
      lw_strvec_push(&j->argv, "-o") ||
      lw_strvec_push(&j->argv, lw_tmp_path(m->spv)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static int translate_done(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  struct sycl_module *m = j->data;
  int rc = 0;
  if (!m->t->plan->o->dry_run) {
    rc = lw_read_file(lw_tmp_path(m->spv), &m->image, d);
    if (!rc)
      rc = store(m, 1, d);
  }
  return rc ? rc : lw__aot_module_ready(g, m, d);
}

static const struct lw_job_kind translate_kind = {
    "llvm-spirv", translate_prepare, NULL, translate_done, NULL};

/* The module's SPIR-V goes on to its AOT devices; with llvm-spirv, its
 * bitcode goes to a translator job first. */
static int module_done(struct lw_graph *g, struct lw_job *j,
                       struct lw_diag *d) {
  struct sycl_module *m = j->data;
  if (!m->bc)
    return lw__aot_module_ready(g, m, d);
  struct lw_job *tj = lw_graph_add(g, &translate_kind, m, NULL, 0);
  if (!tj || lw_graph_add_dep(g, m->t->plan->wrap, tj))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind module_kind = {"sycl-module", module_prepare,
                                               module_run, module_done, NULL};

struct emit {
  struct target *t;
  size_t first; /* modules first, first + helpers, ... */
  struct lw_tmp *groups, *out;
};

static char *self_path(void) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return NULL;
  buf[n] = 0;
  return strdup(buf);
}

/* A helper builds and emits modules first, first + helpers, ... from the
 * linked bitcode (their groups are written to a file) into one output. */
static int emit_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct emit *e = j->data;
  struct target *t = e->t;
  int rc = lw_tmp_create("sycl-groups", "txt", &e->groups, d);
  if (!rc)
    rc = dl_split_write_groups(&t->split, e->first, (size_t)t->helpers,
                               lw_tmp_path(e->groups), d);
  if (!rc)
    rc = lw_tmp_create("sycl-spirv64", "spvs", &e->out, d);
  if (rc)
    return rc;
  char *self = self_path();
  if (!self || lw_strvec_push(&j->argv, self) ||
      lw_strvec_push(&j->argv, "--fatlink-emit-spirv") ||
      lw_strvec_pushf(&j->argv, "-O%d", t->plan->o->opt_level) ||
      lw_strvec_push(&j->argv, lw_tmp_path(t->linked)) ||
      lw_strvec_push(&j->argv, lw_tmp_path(e->groups)) ||
      lw_strvec_push(&j->argv, lw_tmp_path(e->out)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  const struct lw_strvec *llvm_opts = &t->plan->o->llvm_opts;
  for (size_t i = 0; !rc && i < llvm_opts->n; i++)
    if (lw_strvec_push(&j->argv, llvm_opts->v[i]))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  free(self);
  return rc;
}

/* The helper's output: each module's SPIR-V after its 8-byte size. */
static int emit_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  struct emit *e = j->data;
  struct target *t = e->t;
  struct lw_buf all = {0};
  int rc = lw_read_file(lw_tmp_path(e->out), &all, d);
  size_t at = 0;
  for (size_t i = e->first; !rc && i < t->nmodules;
       i += (size_t)t->helpers) {
    struct sycl_module *m = &t->modules[i];
    uint64_t size = 0;
    for (int k = 0; k < 8 && at + 8 <= all.len; k++)
      size |= (uint64_t)all.data[at + (size_t)k] << (8 * k);
    if (at + 8 > all.len || size > all.len - at - 8) {
      rc = lw_error_path(d, LW_EFORMAT, lw_tmp_path(e->out),
                         "helper output ends before module %zu", i);
      break;
    }
    at += 8;
    if (lw_buf_append(&m->image, all.data + at, (size_t)size))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    at += (size_t)size;
    if (!rc && t->plan->o->save_temps)
      rc = lw_tmp_create("sycl-spirv64", "spv", &m->spv, d);
    if (!rc)
      rc = store(m, 0, d);
    if (!rc)
      rc = lw__aot_module_ready(g, m, d);
  }
  lw_buf_free(&all);
  return rc;
}

static const struct lw_job_kind emit_kind = {"sycl-emit", emit_prepare, NULL,
                                             emit_done, free};

/* ---- device libraries ------------------------------------------------------ */

static int add_lib(struct lw_plan *p, const unsigned char *data, size_t size,
                   const char *name, struct lw_diag *d) {
  struct dl_input *nl = realloc(p->libs, (p->nlibs + 1) * sizeof *nl);
  if (!nl)
    return lw_error(d, LW_ENOMEM, "out of memory");
  p->libs = nl;
  p->libs[p->nlibs++] = (struct dl_input){data, size, name, 1};
  return 0;
}

/* A library is plain device bitcode, or a fat object (or archive) whose SYCL
 * bitcode images are the library; either way its bytes stay in `bc`. */
static int load_lib(struct lw_plan *p, const char *path, struct lw_buf *bc,
                    struct lw_diag *d) {
  size_t before = p->lib_images.n;
  int rc = lw_read_file(path, bc, d);
  if (rc)
    return rc;
  if (ex_sniff_image_kind(bc->data, bc->len) == EX_IMG_BITCODE)
    return add_lib(p, bc->data, bc->len, path, d);
  if ((rc = ex_scan_buffer(&p->lib_images, bc->data, bc->len, path, d)))
    return rc;
  size_t found = 0;
  for (size_t i = before; i < p->lib_images.n; i++) {
    const struct ex_image *img = &p->lib_images.images[i];
    if (img->offload_kind != EX_OFK_SYCL || img->image_kind != EX_IMG_BITCODE)
      continue;
    if ((rc = add_lib(p, img->data, img->size, img->origin, d)))
      return rc;
    found++;
  }
  if (!found)
    return lw_error_path(d, LW_EFORMAT, path,
                         "SYCL device library holds no SYCL device bitcode");
  return 0;
}

int lw__sycl_load_libs(struct lw_plan *p, struct lw_diag *d) {
  const struct lw_options *o = p->o;
  size_t n = o->device_libs.n;
  if (!n)
    return 0;
  p->lib_bitcode = calloc(n, sizeof *p->lib_bitcode);
  if (!p->lib_bitcode)
    return lw_error(d, LW_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    const char *name = o->device_libs.v[i];
    char *path = o->device_lib_dir && name[0] != '/'
                     ? lw_xasprintf("%s/%s", o->device_lib_dir, name)
                     : strdup(name);
    if (!path || lw_strvec_push(&p->lib_paths, path))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    free(path);
    if (rc)
      break;
    path = p->lib_paths.v[p->lib_paths.n - 1];
    if (access(path, R_OK) != 0)
      rc = lw_error_path(d, LW_EIO, path, "SYCL device library not found%s",
                         o->device_lib_dir
                             ? ""
                             : " (no --sycl-device-library-location= given)");
    else
      rc = load_lib(p, path, &p->lib_bitcode[i], d);
  }
  return rc;
}

void lw__sycl_free_libs(struct lw_plan *p) {
  free(p->libs);
  ex_set_free(&p->lib_images); /* points into lib_bitcode */
  for (size_t i = 0; p->lib_bitcode && i < p->o->device_libs.n; i++)
    lw_buf_free(&p->lib_bitcode[i]);
  free(p->lib_bitcode);
  lw_strvec_free(&p->lib_paths);
}

/* ---- sycl-link ----------------------------------------------------------- */

static int link_run(struct lw_job *j, struct lw_diag *d) {
  struct target *t = j->data;
  const struct lw_plan *p = t->plan;
  struct dl_input *in = calloc(t->nimgs + p->nlibs, sizeof *in);
  if (!in)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < t->nimgs; i++)
    in[i] = (struct dl_input){t->imgs[i]->data, t->imgs[i]->size,
                              t->imgs[i]->origin, 0};
  if (p->nlibs)
    memcpy(in + t->nimgs, p->libs, p->nlibs * sizeof *in);
  int rc = dl_link(in, t->nimgs + p->nlibs, "spirv64-unknown-unknown",
                   &t->mod, d);
  free(in);
  if (!rc)
    rc = dl_split(&t->mod, (enum dl_split_mode)t->plan->o->split_mode,
                  t->plan->o->opt_level, t->plan->o->relocatable, &t->split,
                  d);
  return rc;
}

/* One sycl-module job per group; wrap now waits for them too. */
static int link_done(struct lw_graph *g, struct lw_job *j,
                     struct lw_diag *d) {
  struct target *t = j->data;
  for (size_t i = 0; i < t->split.warnings.n; i++)
    fprintf(stderr, "fatlink: warning: %s\n", t->split.warnings.v[i]);
  size_t n = t->plan->o->dry_run ? 1 : t->split.n;
  if (!n) {
    fprintf(stderr, "fatlink: warning: no SYCL kernels in the device code for "
                    "'%s'\n",
            t->triple);
    return 0;
  }
  const struct lw_options *o = t->plan->o;
  if (!(t->modules = calloc(n, sizeof *t->modules)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  t->nmodules = n;
  for (size_t i = 0; i < n; i++) {
    t->modules[i].t = t;
    t->modules[i].index = i;
  }
  /* With two modules and two job slots, emission moves to helpers (this
   * process has built and freed the linked module: LLVM 22's SPIR-V back
   * end then gives wrong ids now and then in it, seen with modules 0, 2, 4
   * made here and 1, 3, 5 by a helper). */
  int slots = o->sycl_jobs && o->sycl_jobs < o->jobs ? o->sycl_jobs : o->jobs;
  if (!o->dry_run && !o->llvm_spirv && n > 1 && slots > 1)
    t->helpers = (int)(n < (size_t)slots ? n : (size_t)slots);
  int rc = 0;
  if (!t->helpers) {
    /* One after the other, in order: the back end is not thread-safe. */
    struct lw_job *prev = NULL;
    for (size_t i = 0; !rc && i < n; i++) {
      struct lw_job *mj = lw_graph_add(g, &module_kind, &t->modules[i], &prev,
                                       prev ? 1 : 0);
      if (!mj || lw_graph_add_dep(g, t->plan->wrap, mj))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
      prev = mj;
    }
    return rc;
  }
  rc = lw_tmp_create("sycl-linked", "bc", &t->linked, d);
  if (!rc)
    rc = lw__write_file(lw_tmp_path(t->linked), t->split.bitcode.data,
                        t->split.bitcode.len, d);
  for (int h = 0; !rc && h < t->helpers; h++) {
    struct emit *e = calloc(1, sizeof *e);
    if (!e)
      return lw_error(d, LW_ENOMEM, "out of memory");
    *e = (struct emit){t, (size_t)h, NULL, NULL};
    struct lw_job *ej = lw_graph_add(g, &emit_kind, e, NULL, 0);
    if (!ej || lw_graph_add_dep(g, t->plan->wrap, ej))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  return rc;
}

const struct lw_job_kind lw__sycl_link_kind = {"sycl-link", NULL, link_run,
                                               link_done, NULL};

void lw__sycl_free(struct target *t) {
  dl_module_free(t->mod);
  t->mod = NULL;
  dl_split_free(&t->split);
  for (size_t i = 0; i < t->nmodules; i++)
    lw_buf_free(&t->modules[i].image);
  free(t->modules);
  t->modules = NULL;
  t->nmodules = 0;
}
