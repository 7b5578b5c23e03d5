/* fpga.c - FPGA device binaries that come finished or half-finished ("Proposed
 * design for offloading model", "spir64_fpga support"): images of kind sycl
 * whose triple names the binary, in offload binaries or clang-offload-bundler
 * entries alike.
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
#include "plan/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int claims(const struct ex_image *img) {
  return strncmp(img->triple, "fpga_", 5) == 0;
}

static const char *unsupported(const struct ex_image *img) {
  enum fpga_kind k;
  return lw__fpga_kind_of(img->triple, &k) ? NULL : "FPGA device binary";
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

static int same_file(const struct ex_image *a, const char *file, size_t len) {
  return lw__origin_file_len(a->origin) == len &&
         memcmp(a->origin, file, len) == 0;
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
  size_t len = lw__origin_file_len(file), rank = 0;
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
  return lw__fpga_kind_of(img->triple, &k) && (k == FPGA_AOCX || k == FPGA_AOCR)
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
    size_t len = lw__origin_file_len(file), k = 0, described = 0, images = 0;
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
                                                .fpga_descriptors = 1,
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
  lw__fpga_kind_of(t->triple, &k);
  if (k == FPGA_AOCO || k == FPGA_DEP)
    return 0; /* read by the aoc runs */
  int rc = lw__native_abi_check(t->plan, "spir64_fpga", d);
  if (rc)
    return rc;
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
        "",   &f->kernels, f->props.s, f->props.n,
        "spir64_fpga-unknown-unknown"};
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
                                           .fpga_binaries = 1,
                                           .claims = claims,
                                           .unsupported = unsupported,
                                           .first_job = first_job,
                                           .images = images,
                                           .free = free_target};
