/* plan_sycl.c - the SYCL device chain of one target.
 *   sycl-link    (in process) link every bitcode image of the target, then
 *                split the kernels into groups (devlink/split.c). When it
 *                finishes it knows how many modules there are and adds one
 *                sycl-module job for each: the graph grows, and wrap waits.
 *   sycl-module  (in process, one per group, in parallel) build the group's
 *                module, compute its property sets, emit its SPIR-V.
 * Modules keep the order of their groups, so the images are the same,
 * byte for byte and in the same order, whatever --wrapper-jobs is. */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                   : lw_xasprintf("link %zu bitcode image(s) for %s and split "
                                  "(%s): %s",
                                  t->nimgs, t->triple,
                                  split_names[t->plan->o->split_mode],
                                  (char *)names.data);
  lw_buf_free(&names);
  return what;
}

/* ---- sycl-module --------------------------------------------------------- */

static int module_prepare(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct sycl_module *m = j->data;
  const struct lw_options *o = m->t->plan->o;
  if (!j->what)
    j->what = o->dry_run
                  ? lw_xasprintf("SPIR-V code generation for each split module "
                                 "of %s at O%d",
                                 m->t->triple, o->opt_level)
                  : lw_xasprintf("SPIR-V code generation for module %zu of %s "
                                 "(%zu kernel(s)) at O%d",
                                 m->index, m->t->triple, m->kernels.n,
                                 o->opt_level);
  if (o->save_temps)
    return lw_tmp_create("sycl-spirv64", "spv", &m->kept, d);
  return 0;
}

static int module_run(struct lw_job *j, struct lw_diag *d) {
  struct sycl_module *m = j->data;
  const struct lw_options *o = m->t->plan->o;
  struct dl_module *mod = NULL;
  int rc = dl_split_module(&m->t->split, m->index, &mod, d);
  if (!rc)
    rc = dl_props_compute(mod, &m->kernels, o->opt_level, &m->props, d);
  if (!rc)
    rc = dl_codegen(mod, o->opt_level, DL_OBJECT, &m->image, d);
  dl_module_free(mod);
  if (!rc && m->image.len < 4)
    rc = lw_error(d, LW_ELLVM, "SPIR-V back end produced no module");
  if (!rc && m->kept)
    rc = lw__write_file(lw_tmp_path(m->kept), m->image.data, m->image.len, d);
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

static const struct lw_job_kind module_kind = {"sycl-module", module_prepare,
                                               module_run, NULL, NULL};

/* ---- sycl-link ----------------------------------------------------------- */

static int link_run(struct lw_job *j, struct lw_diag *d) {
  struct target *t = j->data;
  struct dl_input *in = calloc(t->nimgs, sizeof *in);
  if (!in)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < t->nimgs; i++)
    in[i] = (struct dl_input){t->imgs[i]->data, t->imgs[i]->size,
                              t->imgs[i]->origin};
  int rc = dl_link(in, t->nimgs, "spirv64-unknown-unknown", &t->mod, d);
  free(in);
  if (!rc)
    rc = dl_split(&t->mod, (enum dl_split_mode)t->plan->o->split_mode,
                  &t->split, d);
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
  if (!(t->modules = calloc(n, sizeof *t->modules)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  t->nmodules = n;
  for (size_t i = 0; i < n; i++) {
    struct sycl_module *m = &t->modules[i];
    m->t = t;
    m->index = i;
    if (i < t->split.n &&
        lw_strvec_extend_from(&m->kernels, &t->split.g[i].kernels))
      return lw_error(d, LW_ENOMEM, "out of memory");
    struct lw_job *mj = lw_graph_add(g, &module_kind, m, NULL, 0);
    if (!mj || lw_graph_add_dep(g, t->plan->wrap, mj))
      return lw_error(d, LW_ENOMEM, "out of memory");
  }
  return 0;
}

const struct lw_job_kind lw__sycl_link_kind = {"sycl-link", NULL, link_run,
                                               link_done, NULL};

void lw__sycl_free(struct target *t) {
  dl_module_free(t->mod);
  t->mod = NULL;
  dl_split_free(&t->split);
  for (size_t i = 0; i < t->nmodules; i++) {
    lw_strvec_free(&t->modules[i].kernels);
    dl_props_free(&t->modules[i].props);
    lw_buf_free(&t->modules[i].image);
  }
  free(t->modules);
  t->modules = NULL;
  t->nmodules = 0;
}
