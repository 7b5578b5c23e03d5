/* plan.h - private to the plan files (plan.c: targets, wrap, host link;
 * plan_sycl.c and plan_openmp.c: the device chains): the plan, its device
 * targets and the job kinds each file supplies. */
#ifndef LW_PLAN_H
#define LW_PLAN_H

#include "internal.h"

#include "aot.h"
#include "dl.h"
#include "ex.h"
#include "wrp.h"

struct target;

/* One SYCL device module after the split (its kernels and property sets
 * are its group's, t->split.g[index]). */
struct sycl_module {
  struct target *t;
  size_t index;
  struct lw_buf image;    /* its SPIR-V */
  struct lw_tmp *spv;     /* its SPIR-V file: made by llvm-spirv, or the
                             --save-temps copy */
  struct lw_tmp *bc;      /* its bitcode, for an external llvm-spirv */
};

struct target {
  struct lw_plan *plan;
  unsigned kind;
  const char *triple, *arch;
  const struct ex_image **imgs;
  size_t nimgs;
  enum aot_target aot;
  /* SYCL: link and split, then one module each */
  struct dl_module *mod;
  struct dl_split split;
  struct sycl_module *modules;
  size_t nmodules;
  int helpers;            /* helper processes emitting modules: each takes
                             every helpers-th */
  struct lw_tmp *linked;  /* the linked module's bitcode, for helpers */
  /* OpenMP: the linked device image */
  struct lw_buf image;
  struct lw_tmp *out_tmp;
};

struct lw_plan {
  const struct lw_options *o;
  struct target *t;
  size_t n;
  struct lw_job *wrap, *link;
  struct lw_tmp *wrapper_obj, *out_tmp;
  char *wrapped_ir;
  /* Built in wrap's prepare, used by its run. */
  struct wrp_sycl_image *sycl;
  struct wrp_omp_image *omp;
  size_t nsycl, nomp;
  /* SYCL device libraries, read once for every SYCL target. */
  struct dl_input *libs;
  size_t nlibs;
  struct ex_set lib_images; /* images of fat-object libraries */
  struct lw_buf *lib_bitcode; /* every library's bytes, one per lib */
  struct lw_strvec lib_paths; /* the paths the inputs are named by */
};

/* The first job of a target's chain (SYCL: link and split; OpenMP: device
 * link). Later jobs it adds make `wrap` wait for them too. */
extern const struct lw_job_kind lw__sycl_link_kind;
extern const struct lw_job_kind lw__omp_link_kind;

/* What a SYCL target's first job is described as (malloc'd). */
char *lw__sycl_link_what(const struct target *t);

/* Finds and reads the SYCL device libraries (--sycl-device-libraries=). */
int lw__sycl_load_libs(struct lw_plan *p, struct lw_diag *d);
void lw__sycl_free_libs(struct lw_plan *p);

/* Releases what a SYCL target holds. */
void lw__sycl_free(struct target *t);

/* Writes `n` bytes to `path`. */
int lw__write_file(const char *path, const void *p, size_t n,
                   struct lw_diag *d);

#endif
