/* sycl_spirv.c - native SPIR-V device code beside the bitcode: SYCL images
 * of image kind SPIR-V and device libraries given as SPIR-V files. The
 * bitcode side is linked, split and emitted as always; then each module is
 * linked with the SPIR-V objects it needs, by SPIRV-Tools' linker
 * (spirv-link: Debian 12's SPIRV-Tools links through its C++ interface
 * only). Which objects a module needs is decided as a linker decides which
 * archive members it takes: those that export a name the module imports,
 * and in turn those that export what they import, first exporter first
 * (the target's images, then the libraries in order). An object with entry
 * points (kernels, made by another toolchain) is a device image already: it
 * is a module of its own after the split's, linked the same way. */
#include "plan/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lw__spv_add(struct spv_objects *v, const unsigned char *data, size_t size,
                const char *name, const char *path, struct lw_diag *d) {
  if (lw_grow(&v->o, v->n, &v->cap, sizeof *v->o, 4))
    return lw_error(d, LW_ENOMEM, "out of memory");
  struct spv_object *ob = &v->o[v->n];
  *ob = (struct spv_object){.data = data, .size = size, .name = name,
                            .path = path};
  struct lw_diag why = {0};
  int rc = dl_spirv_linkage(data, size, &ob->link, &why);
  if (rc)
    return rc == LW_ENOMEM ? lw_error(d, rc, "out of memory")
                           : lw_error_path(d, rc, name, "%s", why.msg);
  v->n++;
  return 0;
}

void lw__spv_free(struct spv_objects *v) {
  for (size_t i = 0; i < v->n; i++)
    dl_spirv_linkage_free(&v->o[i].link);
  free(v->o);
  *v = (struct spv_objects){0};
}

/* Objects a module may take: the target's images without entry points,
 * then the libraries. */
static struct spv_object *candidate(const struct target *t, size_t i) {
  size_t own = t->spv.n;
  if (i < own)
    return t->spv.o[i].link.entries.n ? NULL : &t->spv.o[i];
  i -= own;
  return i < t->plan->spv_libs.n ? &t->plan->spv_libs.o[i] : NULL;
}

static size_t ncandidates(const struct target *t) {
  return t->spv.n + t->plan->spv_libs.n;
}

int lw__spv_exports(const struct target *t, struct lw_strvec *out) {
  for (size_t i = 0; i < ncandidates(t); i++) {
    const struct spv_object *ob = candidate(t, i);
    if (ob && lw_strvec_extend_from(out, &ob->link.exports))
      return LW_ENOMEM;
  }
  return 0;
}

static int has(const struct lw_strvec *v, const char *s) {
  return lw_strvec_find(v, s) < v->n;
}

/* The objects the module needs (taken[i] set), from its linkage. */
static int choose(const struct target *t, const struct spv_object *self,
                  const struct dl_spirv_linkage *mod, unsigned char *taken,
                  size_t *ntaken) {
  struct lw_strvec want = {0}, have = {0};
  int rc = lw_strvec_extend_from(&have, &mod->exports) ||
           lw_strvec_extend_from(&want, &mod->imports);
  for (int more = 1; !rc && more;) {
    more = 0;
    for (size_t i = 0; !rc && i < ncandidates(t); i++) {
      const struct spv_object *ob = candidate(t, i);
      if (!ob || ob == self || taken[i])
        continue;
      int needed = 0;
      for (size_t k = 0; !needed && k < ob->link.exports.n; k++)
        needed = has(&want, ob->link.exports.v[k]) &&
                 !has(&have, ob->link.exports.v[k]);
      if (!needed)
        continue;
      taken[i] = 1;
      ++*ntaken;
      more = 1;
      rc = lw_strvec_extend_from(&have, &ob->link.exports) ||
           lw_strvec_extend_from(&want, &ob->link.imports);
    }
  }
  lw_strvec_free(&want);
  lw_strvec_free(&have);
  return rc ? LW_ENOMEM : 0;
}

/* The module's imports that a taken object exports, with that export's
 * type, given to the module's declarations (linkage.c says why). */
static int retype(struct sycl_module *m, const struct dl_spirv_linkage *mod,
                  const unsigned char *taken, struct lw_diag *d) {
  const struct target *t = m->t;
  struct lw_strvec names = {0}, types = {0};
  int rc = 0;
  for (size_t i = 0; !rc && i < mod->imports.n; i++)
    for (size_t c = 0; c < ncandidates(t); c++) {
      if (!taken[c])
        continue;
      const struct dl_spirv_linkage *l = &candidate(t, c)->link;
      size_t k = lw_strvec_find(&l->exports, mod->imports.v[i]);
      if (k == l->exports.n)
        continue;
      rc = lw_strvec_push(&names, mod->imports.v[i]) ||
           lw_strvec_push(&types, l->export_types.v[k]);
      break;
    }
  size_t n = 0;
  rc = rc ? lw_error(d, LW_ENOMEM, "out of memory")
          : dl_spirv_retype_imports(&m->image, &names, &types, &n, d);
  if (!rc && n && m->t->plan->o->verbose)
    fprintf(stderr,
            "fatlink: module %zu of %s: %zu import(s) given their SPIR-V "
            "exporters' pointer types\n",
            m->index, t->triple, n);
  lw_strvec_free(&names);
  lw_strvec_free(&types);
  return rc;
}

struct spv_link {
  struct sycl_module *m;
  unsigned char *taken; /* by candidate */
  lw__module_fn then;
  struct lw_tmp *out;
};

static void link_free(void *data) {
  struct spv_link *l = data;
  free(l->taken);
  free(l);
}

/* The object's file: its own, or a temporary written the first time. */
static const char *object_file(struct spv_object *ob, int dry_run,
                               struct lw_diag *d) {
  if (ob->path)
    return ob->path;
  if (!ob->tmp && (lw_tmp_create("sycl-spirv-input", "spv", &ob->tmp, d) ||
                   (!dry_run && lw_write_file(lw_tmp_path(ob->tmp), ob->data,
                                              ob->size, d))))
    return NULL;
  return lw_tmp_path(ob->tmp);
}

static int link_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct spv_link *l = j->data;
  struct sycl_module *m = l->m;
  const struct target *t = m->t;
  int dry = t->plan->o->dry_run;
  int rc = 0;
  if (!m->spv)
    rc = lw_tmp_create("sycl-spirv64", "spv", &m->spv, d);
  if (!rc && !m->spv_current && !dry)
    rc = lw_write_file(lw_tmp_path(m->spv), m->image.data, m->image.len, d);
  if (!rc)
    rc = lw_tmp_create("sycl-spirv64-linked", "spv", &l->out, d);
  if (rc)
    return rc;
  /* Imports nothing here defines stay for the runtime, as they would
   * without SPIR-V inputs: the bitcode's check has refused those it must. */
  if (lw_strvec_push(&j->argv, LW_SPIRV_LINK) ||
      lw_strvec_push(&j->argv, "--allow-partial-linkage") ||
      lw_strvec_push(&j->argv, lw_tmp_path(m->spv)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < ncandidates(t); i++) {
    const char *file;
    if (!l->taken[i])
      continue;
    if (!(file = object_file(candidate(t, i), dry, d)))
      return d->code ? d->code : lw_error(d, LW_ENOMEM, "out of memory");
    if (lw_strvec_push(&j->argv, file))
      return lw_error(d, LW_ENOMEM, "out of memory");
  }
  if (lw_strvec_push(&j->argv, "-o") ||
      lw_strvec_push(&j->argv, lw_tmp_path(l->out)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static int link_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  struct spv_link *l = j->data;
  struct sycl_module *m = l->m;
  if (!m->t->plan->o->dry_run) {
    m->image.len = 0;
    int rc = lw_read_file(lw_tmp_path(l->out), &m->image, d);
    if (rc)
      return rc;
    if (m->image.len < 20)
      return lw_error(d, LW_ETOOL, "%s: no SPIR-V came out", j->what);
  }
  m->spv = l->out;
  m->spv_current = 1;
  return l->then(g, m, d);
}

static const struct lw_job_kind link_kind = {.name = "spirv-link",
                                             .prepare = link_prepare,
                                             .done = link_done,
                                             .free_data = link_free};

int lw__spv_link(struct lw_graph *g, struct sycl_module *m, lw__module_fn then,
                 struct lw_diag *d) {
  const struct target *t = m->t;
  size_t n = ncandidates(t), ntaken = 0;
  if (!n)
    return then(g, m, d);
  unsigned char *taken = calloc(n, 1);
  if (!taken)
    return lw_error(d, LW_ENOMEM, "out of memory");
  int rc = 0;
  if (t->plan->o->dry_run) { /* the modules are not known: every object */
    for (size_t i = 0; i < n; i++)
      ntaken += taken[i] = candidate(t, i) && candidate(t, i) != m->obj;
  } else {
    struct dl_spirv_linkage mod;
    struct lw_diag why = {0};
    rc = dl_spirv_linkage(m->image.data, m->image.len, &mod, &why);
    if (rc)
      rc = lw_error(d, rc, "module %zu of %s: %s", m->index, t->triple,
                    why.msg);
    else if (choose(t, m->obj, &mod, taken, &ntaken))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    if (!rc && ntaken)
      rc = retype(m, &mod, taken, d);
    dl_spirv_linkage_free(&mod);
  }
  if (!rc && ntaken && !lw_on_path(LW_SPIRV_LINK))
    rc = lw_error(d, LW_EINVAL,
                  "module %zu of %s needs native SPIR-V inputs linked in, "
                  "and '%s' is not on PATH (it comes with SPIRV-Tools: "
                  "Debian package spirv-tools)",
                  m->index, t->triple, LW_SPIRV_LINK);
  if (rc || !ntaken) {
    free(taken);
    return rc ? rc : then(g, m, d);
  }
  struct spv_link *l = calloc(1, sizeof *l);
  struct lw_job *j = l ? lw_graph_add(g, &link_kind, l, NULL, 0) : NULL;
  if (!j) {
    free(l);
    free(taken);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  *l = (struct spv_link){m, taken, then, NULL};
  j->what = lw_xasprintf("SPIR-V link of module %zu of %s with %zu SPIR-V "
                         "input(s)",
                         m->index, t->triple, ntaken);
  if (!j->what || lw_graph_add_dep(g, t->plan->wrap, j))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}
