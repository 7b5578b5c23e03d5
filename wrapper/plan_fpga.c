/* plan_fpga.c - FPGA device binaries that come finished or half-finished
 * (seed 003, "spir64_fpga support"): images of kind sycl whose triple names
 * the binary, in offload binaries or clang-offload-bundler entries alike.
 *   fpga_aocx-intel-unknown      an FPGA image (aoc's AOCX, or the
 *   fpga_aocr_emu-intel-unknown  emulator's binary): wrapped as it is;
 *   fpga_aocr-intel-unknown      an early image (aoc -rtl): aoc finishes it
 *                                into an AOCX (one aoc job each), which is
 *                                wrapped;
 *   fpga_aoco-intel-unknown      an FPGA library: every one of the link
 *                                goes, as a file, into a list that every aoc
 *                                run of the link gets (-library-list=);
 *   fpga_dep                     dependency information (-fintelfpga): every
 *                                one goes, as a file, to every aoc run for
 *                                hardware (-dep-files=a,b), and into an FPGA
 *                                archive with its object.
 * An AOCX or AOCR names its kernels in the string "sycl-kernels" (space
 * separated) and may carry its module's property sets in "sycl-props"
 * (dl_props_read_text's form): what fatlink --fpga-link-type writes.
 * DPC++'s own archives carry them beside the binaries instead: bundle
 * entries host-<the binaries' triple> (kind EX_OFK_HOST, the descriptor
 * planner below) hold modules of its clang-offload-wrapper, whose device
 * images (dl_wrapped_read) describe the binaries of their input file in
 * order, as DPC++'s --sym-prop-bc-files pairs them. An image described by
 * neither cannot be registered, and is refused. */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum fpga_kind { FPGA_AOCX, FPGA_AOCR, FPGA_AOCO, FPGA_DEP };

static const struct {
  const char *triple;
  enum fpga_kind kind;
} kinds[] = {
    {"fpga_aocx-intel-unknown", FPGA_AOCX},
    {"fpga_aocr_emu-intel-unknown", FPGA_AOCX},
    {"fpga_aocr-intel-unknown", FPGA_AOCR},
    {"fpga_aoco-intel-unknown", FPGA_AOCO},
    {"fpga_dep", FPGA_DEP},
};

/* Older DPC++ spells the triples with a "-sycldevice" environment. */
static int kind_of(const char *triple, enum fpga_kind *k) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(kinds); i++) {
    size_t n = strlen(kinds[i].triple);
    if (strncmp(triple, kinds[i].triple, n) == 0 &&
        (!triple[n] || strcmp(triple + n, "-sycldevice") == 0)) {
      *k = kinds[i].kind;
      return 1;
    }
  }
  return 0;
}

/* One AOCX or AOCR image of the target. */
struct fpga_image {
  struct target *t;
  const struct ex_image *img;
  size_t index; /* among the target's images */
  struct lw_strvec kernels;
  struct dl_props props;
  struct lw_tmp *in, *out; /* an AOCR's file and aoc's AOCX */
  struct lw_buf aocx;      /* what aoc made */
};

static int claims(const struct ex_image *img) {
  return strncmp(img->triple, "fpga_", 5) == 0;
}

static const char *unsupported(const struct ex_image *img) {
  enum fpga_kind k;
  return kind_of(img->triple, &k) ? NULL : "FPGA device binary";
}

static const char *string_of(const struct ex_image *img, const char *key,
                             size_t *len) {
  for (size_t i = 0; i < img->nstrings; i++)
    if (strcmp(img->strings[i].key, key) == 0) {
      *len = img->strings[i].value_len;
      return img->strings[i].value;
    }
  return NULL;
}

/* ---- DPC++'s descriptors ------------------------------------------------ */

/* The device images one host-<triple> entry describes. */
struct fpga_desc {
  int read;
  struct dl_wrapped_image *w;
  size_t n;
};

/* The input file of an origin: an archive's "lib.a(member)" is lib.a. */
static size_t file_len(const char *origin) { return strcspn(origin, "("); }

static int same_file(const struct ex_image *a, const char *file, size_t len) {
  return file_len(a->origin) == len && memcmp(a->origin, file, len) == 0;
}

/* Does the image name its kernels itself (fatlink's form)? */
static int self_described(const struct ex_image *img) {
  size_t len = 0;
  return string_of(img, "sycl-kernels", &len) != NULL;
}

/* The other planner's target of the same triple, or NULL. */
static struct target *twin(const struct target *t,
                           const struct lw_planner *pl) {
  for (size_t i = 0; i < t->plan->n; i++)
    if (t->plan->t[i].planner == pl &&
        strcmp(t->plan->t[i].triple, t->triple) == 0)
      return &t->plan->t[i];
  return NULL;
}

/* Descriptor target dt's image i, read the first time it is asked for. */
static int desc_at(struct target *dt, size_t i, struct fpga_desc **out,
                   struct lw_diag *d) {
  if (!dt->desc && !(dt->desc = calloc(dt->nimgs, sizeof *dt->desc)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  struct fpga_desc *c = &dt->desc[i];
  int rc = 0;
  if (!c->read) {
    c->read = 1;
    rc = dl_wrapped_read(dt->imgs[i]->data, dt->imgs[i]->size,
                         dt->imgs[i]->origin, &c->w, &c->n, d);
  }
  *out = c;
  return rc;
}

/* An image without kernel names of its own: the descriptor image of its
 * input file at its rank there, whose kernels and property sets it takes. */
static int from_descriptor(struct fpga_image *f, struct lw_diag *d) {
  const struct target *t = f->t;
  const char *file = f->img->origin;
  size_t len = file_len(file), rank = 0;
  for (size_t i = 0; i < f->index; i++)
    rank += same_file(t->imgs[i], file, len) && !self_described(t->imgs[i]);
  struct target *dt = twin(t, &lw_fpga_desc_planner);
  for (size_t i = 0; dt && i < dt->nimgs; i++) {
    struct fpga_desc *c;
    if (!same_file(dt->imgs[i], file, len))
      continue;
    int rc = desc_at(dt, i, &c, d);
    if (rc)
      return rc;
    if (rank < c->n) {
      f->kernels = c->w[rank].kernels;
      f->props = c->w[rank].props;
      memset(&c->w[rank].kernels, 0, sizeof c->w[rank].kernels);
      memset(&c->w[rank].props, 0, sizeof c->w[rank].props);
      return 0;
    }
    rank -= c->n;
  }
  return lw_error_path(d, LW_EFORMAT, f->img->origin,
                       "FPGA image (triple '%s') names no kernels (no "
                       "\"sycl-kernels\" string, no DPC++ descriptor for it "
                       "in a host-%s bundle entry of '%.*s'): it cannot be "
                       "registered",
                       f->img->triple, f->img->triple, (int)len, file);
}

/* The descriptor planner: bundle entries host-<fpga triple>. Before any
 * job, every input file's descriptors must describe as many images as
 * the file has without kernel names of their own. */
static const char *desc_unsupported(const struct ex_image *img) {
  enum fpga_kind k;
  return kind_of(img->triple, &k) && (k == FPGA_AOCX || k == FPGA_AOCR)
             ? NULL
             : "DPC++ descriptor of an FPGA binary";
}

static int desc_first_job(struct lw_graph *g, struct target *dt,
                          struct lw_job **out, struct lw_diag *d) {
  (void)g;
  *out = NULL;
  const struct target *t = twin(dt, &lw_fpga_planner);
  for (size_t i = 0; i < dt->nimgs; i++) {
    const char *file = dt->imgs[i]->origin;
    size_t len = file_len(file), k = 0, described = 0, images = 0;
    while (k < i && !same_file(dt->imgs[k], file, len))
      k++;
    if (k < i)
      continue; /* counted at the file's first descriptor */
    for (k = i; k < dt->nimgs; k++) {
      struct fpga_desc *c;
      if (!same_file(dt->imgs[k], file, len))
        continue;
      int rc = desc_at(dt, k, &c, d);
      if (rc)
        return rc;
      described += c->n;
    }
    for (k = 0; t && k < t->nimgs; k++)
      images += same_file(t->imgs[k], file, len) && !self_described(t->imgs[k]);
    if (described != images)
      return lw_error_path(
          d, LW_EFORMAT, dt->imgs[i]->origin,
          "DPC++ descriptors (host-%s bundle entries) of '%.*s' describe %zu "
          "FPGA image(s), but it has %zu of that triple without kernel names",
          dt->triple, (int)len, file, described, images);
  }
  return 0;
}

static void desc_free(struct target *t) {
  for (size_t i = 0; t->desc && i < t->nimgs; i++)
    dl_wrapped_free(t->desc[i].w, t->desc[i].n);
  free(t->desc);
  t->desc = NULL;
}

const struct lw_planner lw_fpga_desc_planner = {.kind = EX_OFK_HOST,
                                                .claims = claims,
                                                .unsupported = desc_unsupported,
                                                .first_job = desc_first_job,
                                                .free = desc_free};

/* ---- an image's kernels and property sets -------------------------------- */

static int load_meta(struct fpga_image *f, struct lw_diag *d) {
  if (!f->img->size)
    return lw_error_path(d, LW_EFORMAT, f->img->origin,
                         "FPGA image (triple '%s') is empty", f->img->triple);
  size_t len = 0;
  const char *k = string_of(f->img, "sycl-kernels", &len);
  if (!k)
    return from_descriptor(f, d);
  if (!len)
    return lw_error_path(d, LW_EFORMAT, f->img->origin,
                         "FPGA image (triple '%s') names no kernels (its "
                         "\"sycl-kernels\" string is empty): it cannot be "
                         "registered",
                         f->img->triple);
  if (lw_strvec_split(&f->kernels, k, ' '))
    return lw_error(d, LW_ENOMEM, "out of memory");
  const char *props = string_of(f->img, "sycl-props", &len);
  struct lw_diag why = {0};
  if (props && dl_props_read_text(props, len, &f->props, &why))
    return lw_error_path(d, why.code, f->img->origin,
                         "FPGA image property sets: %s", why.msg);
  return 0;
}

/* ---- the AOCO list and the dependency files ------------------------------ */

/* Writes every image of the plan's `kind` targets to a file, their paths
 * into `list`, each followed by `sep`. */
static int write_all(struct lw_plan *p, enum fpga_kind kind, const char *stage,
                     const char *ext, char sep, struct lw_buf *list,
                     struct lw_diag *d) {
  int rc = 0;
  for (size_t i = 0; !rc && i < p->n; i++) {
    enum fpga_kind k;
    if (p->t[i].planner != &lw_fpga_planner || !kind_of(p->t[i].triple, &k) ||
        k != kind)
      continue;
    for (size_t n = 0; !rc && n < p->t[i].nimgs; n++) {
      const struct ex_image *img = p->t[i].imgs[n];
      struct lw_tmp *f = NULL;
      rc = lw_tmp_create(stage, ext, &f, d);
      if (!rc && !p->o->dry_run)
        rc = lw_write_file(lw_tmp_path(f), img->data, img->size, d);
      if (!rc && (lw_buf_append(list, lw_tmp_path(f), strlen(lw_tmp_path(f))) ||
                  lw_buf_append(list, &sep, 1)))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
  return rc;
}

int lw__fpga_dep_files(struct lw_plan *p, const char **files,
                       struct lw_diag *d) {
  if (!p->deps_listed) {
    p->deps_listed = 1;
    int rc = write_all(p, FPGA_DEP, "fpga-dep", "d", ',', &p->dep_files, d);
    if (!rc && p->dep_files.len)
      p->dep_files.data[p->dep_files.len - 1] = 0; /* the last ',' */
    if (rc)
      return rc;
  }
  *files = p->dep_files.len ? (const char *)p->dep_files.data : NULL;
  return 0;
}

int lw__fpga_library_list(struct lw_plan *p, const char **path,
                          struct lw_diag *d) {
  *path = p->aoco_list ? lw_tmp_path(p->aoco_list) : NULL;
  if (p->aoco_listed)
    return 0;
  p->aoco_listed = 1;
  struct lw_buf list = {0};
  int rc = write_all(p, FPGA_AOCO, "fpga-library", "aoco", '\n', &list, d);
  if (!rc && list.len) {
    rc = lw_tmp_create("fpga-libraries", "txt", &p->aoco_list, d);
    if (!rc && !p->o->dry_run)
      rc = lw_write_file(lw_tmp_path(p->aoco_list), list.data, list.len, d);
    if (!rc)
      *path = lw_tmp_path(p->aoco_list);
  }
  lw_buf_free(&list);
  return rc;
}

/* ---- aoc: an AOCR into an AOCX ------------------------------------------- */

static int aocr_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct fpga_image *f = j->data;
  struct lw_plan *p = f->t->plan;
  const struct lw_options *o = p->o;
  j->what =
      lw_xasprintf("aoc for the early FPGA image from %s", f->img->origin);
  if (!j->what)
    return lw_error(d, LW_ENOMEM, "out of memory");
  const char *libs = NULL, *deps = NULL;
  int rc = lw__fpga_library_list(p, &libs, d);
  if (!rc && aot_fpga_for_hardware(&o->fpga_tool_args))
    rc = lw__fpga_dep_files(p, &deps, d);
  if (!rc)
    rc = lw_tmp_create("fpga-early", "aocr", &f->in, d);
  if (!rc && !o->dry_run)
    rc = lw_write_file(lw_tmp_path(f->in), f->img->data, f->img->size, d);
  if (!rc)
    rc = lw_tmp_create("fpga-image", "aocx", &f->out, d);
  if (rc)
    return rc;
  char *report = aot_aoc_report_folder(o->output, f->index, f->t->nimgs);
  struct aot_aoc req = {LW_AOC,
                        lw_tmp_path(f->in),
                        lw_tmp_path(f->out),
                        &o->fpga_tool_args,
                        0,
                        libs,
                        deps,
                        report};
  rc = report ? aot_aoc_argv(&req, &j->argv) : LW_ENOMEM;
  free(report);
  return rc ? lw_error(d, LW_ENOMEM, "out of memory") : 0;
}

static int aocr_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  (void)g;
  struct fpga_image *f = j->data;
  if (f->t->plan->o->dry_run)
    return 0;
  int rc = lw_read_file(lw_tmp_path(f->out), &f->aocx, d);
  if (!rc && !f->aocx.len)
    rc = lw_error(d, LW_ETOOL, "%s: no device binary came out (0 bytes)",
                  j->what);
  return rc;
}

static const struct lw_job_kind aocr_kind = {.name = "aoc",
                                             .prepare = aocr_prepare,
                                             .done = aocr_done,
                                             .long_running = 1};

/* Waits for the target's aoc jobs: wrap, made after the first jobs, waits
 * for it. */
static const struct lw_job_kind gather_kind = {.name = "fpga-images"};

/* ---- the planner --------------------------------------------------------- */

static int first_job(struct lw_graph *g, struct target *t, struct lw_job **out,
                     struct lw_diag *d) {
  *out = NULL;
  enum fpga_kind k = FPGA_AOCO;
  kind_of(t->triple, &k);
  if (k == FPGA_AOCO || k == FPGA_DEP)
    return 0; /* read by the aoc runs */
  if (k == FPGA_AOCR && !t->plan->o->dry_run && !lw_on_path(LW_AOC))
    return lw_error_path(d, LW_ENOTSUP, t->imgs[0]->origin,
                         "an early FPGA image (AOCR) needs Intel's aoc to "
                         "finish it, and %s is not on PATH",
                         LW_AOC);
  struct lw_job **jobs = calloc(t->nimgs, sizeof *jobs);
  if (!jobs || !(t->fpga = calloc(t->nimgs, sizeof *t->fpga))) {
    free(jobs);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  t->nfpga = t->nimgs;
  int rc = 0;
  for (size_t i = 0; !rc && i < t->nimgs; i++) {
    struct fpga_image *f = &t->fpga[i];
    f->t = t;
    f->img = t->imgs[i];
    f->index = i;
    rc = load_meta(f, d);
    if (!rc && k == FPGA_AOCR &&
        !(jobs[i] = lw_graph_add(g, &aocr_kind, f, NULL, 0)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  if (!rc && k == FPGA_AOCR &&
      !(*out = lw_graph_add(g, &gather_kind, NULL, jobs, t->nimgs)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  free(jobs);
  return rc;
}

static int images(struct lw_plan *p, struct target *t, struct lw_diag *d) {
  static const char target[] = "spir64_fpga";
  for (size_t i = 0; i < t->nfpga; i++) {
    struct fpga_image *f = &t->fpga[i];
    const unsigned char *data = f->aocx.len ? f->aocx.data : f->img->data;
    size_t size = f->aocx.len ? f->aocx.len : f->img->size;
    struct dl_props props;
    if (!dl_props_find(&f->props, "SYCL/device requirements",
                       "compile_target")) {
      if (dl_props_with_bytes(&f->props, "SYCL/device requirements",
                              "compile_target", target, strlen(target), &props))
        return lw_error(d, LW_ENOMEM, "out of memory");
      dl_props_free(&f->props);
      f->props = props;
    }
    if (lw_grow(&p->sycl, p->nsycl, &p->capsycl, sizeof *p->sycl, 16))
      return lw_error(d, LW_ENOMEM, "out of memory");
    p->sycl[p->nsycl++] = (struct wrp_sycl_image){
        data, size,        target,     WRP_FMT_NATIVE, "",
        "",   &f->kernels, f->props.s, f->props.n};
  }
  return 0;
}

static void free_target(struct target *t) {
  for (size_t i = 0; i < t->nfpga; i++) {
    lw_strvec_free(&t->fpga[i].kernels);
    dl_props_free(&t->fpga[i].props);
    lw_buf_free(&t->fpga[i].aocx);
  }
  free(t->fpga);
  t->fpga = NULL;
  t->nfpga = 0;
}

const struct lw_planner lw_fpga_planner = {.kind = EX_OFK_SYCL,
                                           .claims = claims,
                                           .unsupported = unsupported,
                                           .first_job = first_job,
                                           .images = images,
                                           .free = free_target};

/* ---- --fpga-link-type: an archive instead of the host link --------------- */

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
  return t->kind == EX_OFK_SYCL && t->planner != &lw_fpga_planner;
}

/* FPGA images that an image archive link puts into the archive: AOCXs as
 * they are, AOCRs finished by aoc. */
static int reimaged(const struct lw_plan *p, const struct target *t) {
  enum fpga_kind fk;
  return p->o->fpga_link == LW_FPGA_IMAGE && t->planner == &lw_fpga_planner &&
         kind_of(t->triple, &fk) && (fk == FPGA_AOCX || fk == FPGA_AOCR);
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
      if (!reimaged(p, &p->t[i]) && p->t[i].planner != &lw_fpga_desc_planner)
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
  size_t len = file_len(origin);
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
    if (t->planner == &lw_fpga_planner && t->nimgs &&
        !(kind_of(t->triple, &fk) && (fk == FPGA_DEP || fk == FPGA_AOCO)))
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
      if (!rc && !in[file_len(in)] && !device_only(p, in) &&
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
    if (t->planner != &lw_fpga_planner || !kind_of(t->triple, &fk) ||
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
