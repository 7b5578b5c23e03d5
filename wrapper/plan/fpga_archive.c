/* fpga_archive.c - --fpga-link-type ("Proposed design for offloading
 * model", its spir64_fpga part): an archive instead of the registration
 * object and the host link, once every device job is done. Its members are
 * the link's fat objects without their SYCL device code, and a device
 * member holding the FPGA binaries of the link's modules (early: aoc's
 * AOCR; image: its AOCX). */
#include "plan/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LW_AR
#define LW_AR "llvm-ar"
#endif

/* One member: a fat object of the link without its SYCL device code (its
 * dependency files stay), or the device member: the FPGA binaries of the
 * link's modules in an object that defines no symbol (made from another
 * member's object with all of that removed), which every later link takes
 * whole, as DPC++'s do. */
struct member {
  struct lw_plan *p;
  const char *input;  /* an object, or "archive(member)" */
  const char *name;   /* the device member's name, else the input's */
  int device;
  struct lw_buf blob; /* OffloadBinaries for its .llvm.offloading */
  struct lw_tmp *blob_file, *dir, *from, *obj;
};

struct archive {
  struct member *m;
  size_t n;
  struct lw_strvec inputs; /* the "archive(member)" names it made up */
};

static void archive_free(void *data) {
  struct archive *a = data;
  for (size_t i = 0; a && i < a->n; i++)
    lw_buf_free(&a->m[i].blob);
  if (a) {
    free(a->m);
    lw_strvec_free(&a->inputs);
  }
  free(a);
}

static int member_prepare(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct member *m = j->data;
  /* The member keeps its input's name (an archive member's own): a
   * directory of its own holds it. An archive member is read out first. */
  const char *open = strrchr(m->input, '(');
  size_t end = strlen(m->input);
  char *name = open && end && m->input[end - 1] == ')'
                   ? strndup(open + 1, end - (size_t)(open - m->input) - 2)
                   : NULL;
  char *archive = name ? strndup(m->input, (size_t)(open - m->input)) : NULL;
  const char *base = lw_base_name(m->name ? m->name : name ? name : m->input);
  int rc = open && (!name || !archive)
               ? lw_error(d, LW_ENOMEM, "out of memory")
               : lw_tmp_create_dir("fpga-member", &m->dir, d);
  if (!rc)
    rc = lw_tmp_create_in(m->dir, base, &m->obj, d);
  if (!rc && name) {
    struct lw_buf bytes = {0};
    rc = lw_tmp_create("fpga-input", "o", &m->from, d);
    if (!rc && !m->p->o->dry_run &&
        !(rc = ex_archive_member(archive, name, &bytes, d)))
      rc = lw_write_file(lw_tmp_path(m->from), bytes.data, bytes.len, d);
    lw_buf_free(&bytes);
  }
  free(name);
  free(archive);
  if (!rc && m->blob.len &&
      !(rc = lw_tmp_create("fpga-offload", "bin", &m->blob_file, d)) &&
      !m->p->o->dry_run)
    rc = lw_write_file(lw_tmp_path(m->blob_file), m->blob.data, m->blob.len, d);
  if (rc)
    return rc;
  /* Its SYCL device code goes, in either form (DPC++'s bundle sections
   * too, and the descriptors of its FPGA binaries); of the device member's
   * object, everything but the section names goes. */
  if (lw_strvec_push(&j->argv, LW_OBJCOPY) ||
      (m->device &&
       (lw_strvec_push(&j->argv, "--strip-all") ||
        lw_strvec_push(&j->argv, "--remove-section=*") ||
        lw_strvec_push(&j->argv, "--remove-section=!.strtab") ||
        lw_strvec_push(&j->argv, "--remove-section=!.shstrtab"))) ||
      lw_strvec_push(&j->argv, "--remove-section=.llvm.offloading") ||
      lw_strvec_push(&j->argv,
                     "--remove-section=__CLANG_OFFLOAD_BUNDLE__sycl-*") ||
      lw_strvec_push(&j->argv,
                     "--remove-section=__CLANG_OFFLOAD_BUNDLE__host-fpga_*") ||
      (m->blob.len &&
       (lw_strvec_pushf(&j->argv, "--add-section=.llvm.offloading=%s",
                        lw_tmp_path(m->blob_file)) ||
        lw_strvec_push(&j->argv,
                       "--set-section-type=.llvm.offloading=0x6fff4c0b") ||
        lw_strvec_push(&j->argv,
                       "--set-section-flags=.llvm.offloading=exclude"))) ||
      lw_strvec_push(&j->argv, m->from ? lw_tmp_path(m->from) : m->input) ||
      lw_strvec_push(&j->argv, lw_tmp_path(m->obj)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind member_kind = {.name = "fpga-member",
                                               .prepare = member_prepare};

static int ar_prepare(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  (void)g;
  struct archive *a = j->data;
  struct lw_plan *p = a->m[0].p;
  int rc = lw_tmp_create_beside(p->o->output, &p->out_tmp, d);
  if (rc)
    return rc;
  /* llvm-ar makes the archive itself; an empty file is not one. */
  if (!p->o->dry_run)
    unlink(lw_tmp_path(p->out_tmp));
  if (lw_strvec_push(&j->argv, LW_AR) || lw_strvec_push(&j->argv, "qcsD") ||
      lw_strvec_push(&j->argv, lw_tmp_path(p->out_tmp)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < a->n; i++)
    if (lw_strvec_push(&j->argv, lw_tmp_path(a->m[i].obj)))
      return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind ar_kind = {
    .name = "ar", .prepare = ar_prepare, .free_data = archive_free};

static char *joined(const struct lw_strvec *v) {
  struct lw_buf b = {0};
  int rc = 0;
  for (size_t i = 0; !rc && i < v->n; i++)
    rc = (i ? lw_buf_append(&b, " ", 1) : 0) ||
         lw_buf_append(&b, v->v[i], strlen(v->v[i]));
  if (rc || lw_buf_append(&b, "", 1)) {
    lw_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

/* An FPGA binary with its kernels and property sets, as an OffloadBinary
 * appended to `out` (what load_meta reads). */
static int pack_image(const struct lw_strvec *kernel_names,
                      const struct dl_props *props_of,
                      const unsigned char *data, size_t size,
                      const char *triple, struct lw_buf *out) {
  struct lw_buf props = {0};
  char *kernels = joined(kernel_names);
  int rc = !kernels || dl_props_write_text(props_of, &props) ||
           lw_buf_append(&props, "", 1);
  if (!rc) {
    struct ex_string strs[] = {
        {"arch", "", 0},
        {"sycl-kernels", kernels, strlen(kernels)},
        {"sycl-props", (char *)props.data, props.len - 1},
        {"triple", (char *)triple, strlen(triple)}};
    struct ex_write_image wi = {EX_IMG_OBJECT, EX_OFK_SYCL, 0,        strs,
                                LW_ARRAY_SIZE(strs), data, size};
    rc = ex_write_offload_binary(&wi, out, NULL);
  }
  free(kernels);
  lw_buf_free(&props);
  return rc ? LW_ENOMEM : 0;
}

/* The member made from input `in`, or NULL. */
static struct member *member_of(struct archive *a, const char *in) {
  for (size_t i = 0; i < a->n; i++)
    if (!a->m[i].device && strcmp(a->m[i].input, in) == 0)
      return &a->m[i];
  return NULL;
}

static struct member *new_member(struct archive *a, struct lw_plan *p,
                                 const char *in) {
  struct member *n = realloc(a->m, (a->n + 1) * sizeof *n);
  if (!n)
    return NULL;
  a->m = n;
  a->m[a->n] = (struct member){.p = p, .input = in};
  return &a->m[a->n++];
}

static int add_member(struct archive *a, struct lw_plan *p, const char *in) {
  return member_of(a, in) || new_member(a, p, in) ? 0 : LW_ENOMEM;
}

/* The out of a SYCL target that makes FPGA binaries, or t->nouts. */
static size_t fpga_out(const struct target *t) {
  for (size_t u = 0; u < t->nouts; u++)
    if (t->outs[u].kind == AOT_FPGA)
      return u;
  return t->nouts;
}

/* Is `t` a SYCL target whose modules go into the archive? */
static int archived(const struct target *t) {
  return t->kind == EX_OFK_SYCL && !t->planner->fpga_binaries;
}

/* FPGA images that an image archive link puts into the archive: AOCXs as
 * they are, AOCRs finished by aoc. */
static int reimaged(const struct lw_plan *p, const struct target *t) {
  enum fpga_kind fk;
  return p->o->fpga_link == LW_FPGA_IMAGE && t->planner->fpga_binaries &&
         lw__fpga_kind_of(t->triple, &fk) &&
         (fk == FPGA_AOCX || fk == FPGA_AOCR);
}

/* Does input `in` hold nothing but FPGA binaries this link finishes (and
 * their descriptors)? Such an archive member is a device member (fatlink's
 * or DPC++'s): its binaries go to the new one. */
static int device_only(const struct lw_plan *p, const char *in) {
  int seen = 0;
  for (size_t i = 0; i < p->n; i++)
    for (size_t k = 0; k < p->t[i].nimgs; k++) {
      if (strcmp(p->t[i].imgs[k]->origin, in) != 0)
        continue;
      if (!reimaged(p, &p->t[i]) && !p->t[i].planner->fpga_descriptors)
        return 0;
      seen = 1;
    }
  return seen;
}

/* Every member of the archive an input `origin` ("lib.a(member)") is in,
 * in order, the first time one of its members is asked for, but its device
 * members: an image archive made from an archive keeps its host code too
 * (DPC++'s early archives hold it in members of its own). */
static int add_archive(struct archive *a, struct lw_plan *p, const char *origin,
                       struct lw_diag *d) {
  size_t len = lw__origin_file_len(origin);
  if (!origin[len])
    return 0;
  for (size_t i = 0; i < a->n; i++)
    if (strncmp(a->m[i].input, origin, len + 1) == 0)
      return 0;
  char *path = strndup(origin, len);
  struct lw_strvec names = {0};
  int rc = path ? ex_archive_names(path, &names, d)
                : lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < names.n; i++)
    if (lw_strvec_pushf(&a->inputs, "%s(%s)", path, names.v[i]) ||
        (!device_only(p, a->inputs.v[a->inputs.n - 1]) &&
         add_member(a, p, a->inputs.v[a->inputs.n - 1])))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  lw_strvec_free(&names);
  free(path);
  return rc;
}

int lw__fpga_archive_check(const struct lw_plan *p, struct lw_diag *d) {
  size_t objects = 0;
  for (size_t i = 0; i < p->n; i++) {
    const struct target *t = &p->t[i];
    enum fpga_kind fk = FPGA_AOCX;
    if (reimaged(p, t)) {
      objects += t->nimgs;
      continue;
    }
    if (t->planner->fpga_binaries && t->nimgs &&
        !(lw__fpga_kind_of(t->triple, &fk) &&
          (fk == FPGA_DEP || fk == FPGA_AOCO)))
      return lw_error_path(d, LW_ENOTSUP, t->imgs[0]->origin,
                           "an early FPGA archive link of FPGA binaries "
                           "(triple '%s') is not supported",
                           t->triple);
    if (!archived(t))
      continue;
    if (fpga_out(t) == t->nouts)
      return lw_error(d, LW_EINVAL,
                      "--fpga-link-type needs the spir64_fpga "
                      "target (--sycl-targets=spir64_fpga) for "
                      "'%s'",
                      t->triple);
    for (size_t k = 0; k < t->nimgs; k++, objects++)
      if (strchr(t->imgs[k]->origin, '('))
        return lw_error_path(d, LW_ENOTSUP, t->imgs[k]->origin,
                             "an FPGA archive link takes objects, not "
                             "archive members");
  }
  if (!objects)
    return lw_error(d, LW_EINVAL,
                    "--fpga-link-type=%s: no object with SYCL device code to "
                    "archive",
                    p->o->fpga_link == LW_FPGA_EARLY ? "early" : "image");
  return 0;
}

/* Every device job is done (lw__fpga_archive_check passed): one member job
 * per fat object, then ar. */
static int archive_done(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  struct lw_plan *p = j->data;
  const struct lw_options *o = p->o;
  struct archive *a = calloc(1, sizeof *a);
  if (!a)
    return lw_error(d, LW_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t i = 0; !rc && i < p->n; i++)
    for (size_t k = 0; !rc && reimaged(p, &p->t[i]) && k < p->t[i].nimgs; k++) {
      const char *in = p->t[i].imgs[k]->origin;
      rc = add_archive(a, p, in, d);
      if (!rc && !in[lw__origin_file_len(in)] && !device_only(p, in) &&
          add_member(a, p, in))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    }
  for (size_t i = 0; !rc && i < p->n; i++)
    for (size_t k = 0; !rc && archived(&p->t[i]) && k < p->t[i].nimgs; k++)
      if (add_member(a, p, p->t[i].imgs[k]->origin))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
  /* The device member, named after the archive. */
  const char *base = lw_base_name(o->output);
  size_t stem = strlen(base) > 2 && strcmp(base + strlen(base) - 2, ".a") == 0
                    ? strlen(base) - 2
                    : strlen(base);
  /* Its object is made from any input's (the first member's, else the
   * first FPGA binary's). */
  const char *from = a->n ? a->m[0].input : NULL;
  for (size_t i = 0; !from && i < p->n; i++)
    if (reimaged(p, &p->t[i]) && p->t[i].nimgs)
      from = p->t[i].imgs[0]->origin;
  struct member *dev = NULL;
  if (!rc &&
      (lw_strvec_pushf(&a->inputs, "%.*s.%s.o", (int)stem, base,
                       o->fpga_link == LW_FPGA_IMAGE ? "aocx" : "aocr") ||
       !(dev = new_member(a, p, from))))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (dev) {
    dev->name = a->inputs.v[a->inputs.n - 1];
    dev->device = 1;
  }
  /* FPGA binaries that came in, as AOCXs. */
  for (size_t i = 0; !rc && i < p->n; i++) {
    const struct target *t = &p->t[i];
    for (size_t k = 0; !rc && reimaged(p, t) && k < t->nfpga; k++) {
      const struct fpga_image *f = &t->fpga[k];
      if (pack_image(&f->kernels, &f->props,
                     f->aocx.len ? f->aocx.data : f->img->data,
                     f->aocx.len ? f->aocx.len : f->img->size,
                     "fpga_aocx-intel-unknown", &dev->blob))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
  const char *triple = o->fpga_link == LW_FPGA_IMAGE
                           ? "fpga_aocx-intel-unknown"
                           : "fpga_aocr-intel-unknown";
  for (size_t i = 0; !rc && i < p->n; i++) {
    const struct target *t = &p->t[i];
    if (!archived(t))
      continue;
    size_t k = fpga_out(t);
    const char *tr = o->fpga_link == LW_FPGA_EARLY && !t->outs[k].aoc
                         ? "fpga_aocr_emu-intel-unknown"
                         : triple;
    for (size_t m = 0; !rc && m < t->nmodules && m < t->split.n; m++) {
      if (!t->modules[m].aot || !t->modules[m].aot[k].image.len)
        continue;
      const struct aot_image *im = &t->modules[m].aot[k];
      if (pack_image(&t->split.g[m].kernels, &im->props, im->image.data,
                     im->image.len, tr, &dev->blob))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
  /* Dependency files travel with their objects. */
  for (size_t i = 0; !rc && i < p->n; i++) {
    const struct target *t = &p->t[i];
    enum fpga_kind fk;
    if (!t->planner->fpga_binaries || !lw__fpga_kind_of(t->triple, &fk) ||
        fk != FPGA_DEP)
      continue;
    for (size_t k = 0; !rc && k < t->nimgs; k++) {
      const struct ex_image *img = t->imgs[k];
      struct ex_string strs[] = {{"arch", "", 0}, {"triple", "fpga_dep", 8}};
      struct ex_write_image wi = {EX_IMG_NONE, EX_OFK_SYCL, 0,        strs,
                                  2,           img->data,   img->size};
      struct member *mb = member_of(a, img->origin);
      if (ex_write_offload_binary(&wi, mb ? &mb->blob : &dev->blob, NULL))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
  struct lw_job **jobs = rc ? NULL : calloc(a->n, sizeof *jobs);
  if (!rc && !jobs)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < a->n; i++)
    if (!(jobs[i] = lw_graph_add(g, &member_kind, &a->m[i], NULL, 0)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc && !lw_graph_add(g, &ar_kind, a, jobs, a->n))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  free(jobs);
  if (rc)
    archive_free(a);
  return rc;
}

const struct lw_job_kind lw__fpga_archive_kind = {.name = "fpga-archive",
                                                  .done = archive_done};
