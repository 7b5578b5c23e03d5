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
 *                                run of the link gets (-library-list=).
 * An AOCX or AOCR names its kernels in the string "sycl-kernels" (space
 * separated) and may carry its module's property sets in "sycl-props"
 * (dl_props_read_text's form): what fatlink --fpga-link-type writes. Without
 * kernels it cannot be registered, and is refused. */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LW_AOC "aoc"

enum fpga_kind { FPGA_AOCX, FPGA_AOCR, FPGA_AOCO };

static const struct {
  const char *triple;
  enum fpga_kind kind;
} kinds[] = {
    {"fpga_aocx-intel-unknown", FPGA_AOCX},
    {"fpga_aocr_emu-intel-unknown", FPGA_AOCX},
    {"fpga_aocr-intel-unknown", FPGA_AOCR},
    {"fpga_aoco-intel-unknown", FPGA_AOCO},
};

static int kind_of(const char *triple, enum fpga_kind *k) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(kinds); i++)
    if (strcmp(triple, kinds[i].triple) == 0) {
      *k = kinds[i].kind;
      return 1;
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

static int load_meta(struct fpga_image *f, struct lw_diag *d) {
  size_t len = 0;
  const char *k = string_of(f->img, "sycl-kernels", &len);
  if (!k || !len)
    return lw_error_path(d, LW_EFORMAT, f->img->origin,
                         "FPGA image (triple '%s') names no kernels (no "
                         "\"sycl-kernels\" string): it cannot be registered",
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

/* ---- the AOCO list ------------------------------------------------------- */

int lw__fpga_library_list(struct lw_plan *p, const char **path,
                          struct lw_diag *d) {
  *path = p->aoco_list ? lw_tmp_path(p->aoco_list) : NULL;
  if (p->aoco_listed)
    return 0;
  p->aoco_listed = 1;
  struct lw_buf list = {0};
  int rc = 0;
  for (size_t i = 0; !rc && i < p->n; i++) {
    enum fpga_kind k;
    if (p->t[i].planner->kind != EX_OFK_SYCL ||
        !kind_of(p->t[i].triple, &k) || k != FPGA_AOCO)
      continue;
    for (size_t n = 0; !rc && n < p->t[i].nimgs; n++) {
      const struct ex_image *img = p->t[i].imgs[n];
      struct lw_tmp *f = NULL;
      rc = lw_tmp_create("fpga-library", "aoco", &f, d);
      if (!rc && !p->o->dry_run)
        rc = lw_write_file(lw_tmp_path(f), img->data, img->size, d);
      if (!rc && (lw_buf_append(&list, lw_tmp_path(f),
                                strlen(lw_tmp_path(f))) ||
                  lw_buf_append(&list, "\n", 1)))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
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

/* ---- aoc: an AOCR into an AOCX --------------------------------------------- */

static int aocr_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct fpga_image *f = j->data;
  struct lw_plan *p = f->t->plan;
  const struct lw_options *o = p->o;
  j->what = lw_xasprintf("aoc for the early FPGA image from %s",
                         f->img->origin);
  if (!j->what)
    return lw_error(d, LW_ENOMEM, "out of memory");
  const char *libs = NULL;
  int rc = lw__fpga_library_list(p, &libs, d);
  if (!rc)
    rc = lw_tmp_create("fpga-early", "aocr", &f->in, d);
  if (!rc && !o->dry_run)
    rc = lw_write_file(lw_tmp_path(f->in), f->img->data, f->img->size, d);
  if (!rc)
    rc = lw_tmp_create("fpga-image", "aocx", &f->out, d);
  if (rc)
    return rc;
  char *report = aot_aoc_report_folder(o->output, f->index, f->t->nimgs);
  struct aot_aoc req = {LW_AOC,       lw_tmp_path(f->in), lw_tmp_path(f->out),
                        &o->fpga_tool_args, 0, libs, NULL, report};
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

static const struct lw_job_kind aocr_kind = {
    .name = "aoc", .prepare = aocr_prepare, .done = aocr_done};

/* Waits for the target's aoc jobs: wrap, made after the first jobs, waits
 * for it. */
static const struct lw_job_kind gather_kind = {.name = "fpga-images"};

/* ---- the planner ----------------------------------------------------------- */

static int first_job(struct lw_graph *g, struct target *t, struct lw_job **out,
                     struct lw_diag *d) {
  *out = NULL;
  enum fpga_kind k = FPGA_AOCO;
  kind_of(t->triple, &k);
  if (k == FPGA_AOCO)
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
    if (dl_props_with_bytes(&f->props, "SYCL/device requirements",
                            "compile_target", target, strlen(target),
                            &props))
      return lw_error(d, LW_ENOMEM, "out of memory");
    dl_props_free(&f->props);
    f->props = props;
    if (lw_grow(&p->sycl, p->nsycl, &p->capsycl, sizeof *p->sycl, 16))
      return lw_error(d, LW_ENOMEM, "out of memory");
    p->sycl[p->nsycl++] = (struct wrp_sycl_image){
        data,         size, target, WRP_FMT_NATIVE, "", "", &f->kernels,
        f->props.s,   f->props.n};
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

const struct lw_planner lw_fpga_planner = {
    .kind = EX_OFK_SYCL, .claims = claims, .unsupported = unsupported,
    .first_job = first_job, .images = images, .free = free_target};
