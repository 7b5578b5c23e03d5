/* fpga_inputs.c - what every FPGA planner and aoc run of the link shares:
 * the kinds of FPGA binaries by their triples (fpga.c's planner takes
 * them), and the link's FPGA libraries (AOCO) and dependency files
 * (-fintelfpga) written out once, as the lists aoc's -library-list= and
 * -dep-files= read. */
#include "plan/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
size_t lw__origin_file_len(const char *origin) {
  return strcspn(origin, "(");
}

int lw__fpga_kind_of(const char *triple, enum fpga_kind *k) {
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

/* ---- the AOCO list and the dependency files ------------------------------ */

/* Writes every image of the plan's `kind` targets to a file, their paths
 * into `list`, each followed by `sep`. */
static int write_all(struct lw_plan *p, enum fpga_kind kind, const char *stage,
                     const char *ext, char sep, struct lw_buf *list,
                     struct lw_diag *d) {
  int rc = 0;
  for (size_t i = 0; !rc && i < p->n; i++) {
    enum fpga_kind k;
    if (!p->t[i].planner->fpga_binaries ||
        !lw__fpga_kind_of(p->t[i].triple, &k) || k != kind)
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
