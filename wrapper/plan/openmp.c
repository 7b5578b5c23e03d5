/* openmp.c - the OpenMP device chain, as upstream links it: for a CPU
 * target, the device objects (or bitcode) are written out and linked into
 * a shared object by clang, which libomptarget's host plugin loads; for
 * NVIDIA and AMD GPUs and SPIR-V (spirv64-intel), clang links them for
 * the architecture (nvlink, LTO and lld, or spirv-link underneath:
 * gpu_link.c) into the image libomptarget's CUDA, AMDGPU or Level Zero
 * plugin loads (SPIR-V in Intel's ELF container, extract/spirv_elf.c). */
#include "plan/planner.h"

#include <stdlib.h>
#include <string.h>

#ifndef LW_CLANG
#define LW_CLANG "clang"
#endif

static int omp_link_prepare(struct lw_graph *g, struct lw_job *j,
                            struct lw_diag *d) {
  (void)g;
  struct target *t = j->data;
  const struct lw_options *o = t->plan->o;
  struct lw_strvec *a = &j->argv;
  int rc = lw_tmp_create("openmp-device", "so", &t->out_tmp, d);
  if (rc)
    return rc;
  j->show_output = 1; /* clang's warnings, its -v */
  if (lw_strvec_push(a, LW_CLANG) ||
      lw_strvec_push(a, "--no-default-config") ||
      lw_strvec_pushf(a, "--target=%s", t->triple) ||
      (t->arch[0] && strcmp(t->arch, "generic") != 0 &&
       lw_strvec_pushf(a, "-march=%s", t->arch)) ||
      lw_strvec_pushf(a, "-O%d", o->opt_level) ||
      lw_strvec_push(a, "-shared") || lw_strvec_push(a, "-Wl,-Bsymbolic") ||
      lw_strvec_push(a, "-Wl,--no-undefined") || lw_strvec_push(a, "-o") ||
      lw_strvec_push(a, lw_tmp_path(t->out_tmp)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  if ((rc = lw__push_device_inputs(a, t, "openmp-input", NULL, d)))
    return rc;
  /* The host link's shared libraries serve the device link too. */
  for (size_t i = 0; i < t->plan->line->shared.n; i++)
    if (lw_strvec_push(a, t->plan->line->shared.v[i]))
      return lw_error(d, LW_ENOMEM, "out of memory");
  if (lw__push_device_args(a, o, t->triple))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind link_kind = {.name = "openmp-device-link",
                                             .prepare = omp_link_prepare,
                                             .done = lw__read_device_image};

static const struct lw_job_kind gpu_link_kind = {
    .name = "openmp-device-link",
    .prepare = lw__gpu_link_prepare,
    .done = lw__read_device_image};

static int is_gpu(const char *triple) {
  return lw__gpu_triple(triple) || strncmp(triple, "spirv64-", 8) == 0;
}

/* ---- the planner ----------------------------------------------------------- */

static const char *unsupported(const struct ex_image *img) {
  if (strncmp(img->triple, "x86_64-", 7) != 0 && !is_gpu(img->triple))
    return "OpenMP device triple";
  if (lw__gpu_triple(img->triple) &&
      strncmp(img->arch, img->triple[0] == 'n' ? "sm_" : "gfx", 3) != 0)
    return "OpenMP GPU architecture";
  if (img->image_kind != EX_IMG_OBJECT && img->image_kind != EX_IMG_BITCODE)
    return "OpenMP device image kind";
  return NULL;
}

static int first_job(struct lw_graph *g, struct target *t, struct lw_job **out,
                     struct lw_diag *d) {
  /* On a CPU the bitcode would be registered, found to fit no device, and
   * the program would quietly run on the host (upstream's link fails: GNU
   * ld cannot stop after LTO); a GPU's is linked LTO bitcode for
   * libomptarget's JIT. */
  if (t->plan->o->embed_bitcode && !lw__gpu_triple(t->triple))
    return lw_error_path(d, LW_ENOTSUP, t->imgs[0]->origin,
                         is_gpu(t->triple)
                             ? "--embed-bitcode: fatlink registers no bitcode "
                               "for libomptarget's JIT ('%s')"
                             : "--embed-bitcode: OpenMP code for '%s' runs on "
                               "libomptarget's host plugin, which runs no "
                               "bitcode images",
                         t->triple);
  if (!(*out = lw_graph_add(g, is_gpu(t->triple) ? &gpu_link_kind : &link_kind,
                            t, NULL, 0)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

/* Does target t's image go before image `img` (another target's) in
 * upstream's sort? */
static int goes_before(const struct lw_plan *p, const struct target *t,
                       const struct wrp_omp_image *img) {
  const struct target *o = NULL;
  for (size_t i = 0; i < p->n && !o; i++)
    if (p->t[i].image.data == img->binary)
      o = &p->t[i];
  return o && (strcmp(t->triple, o->triple) > 0 ||
               strcmp(t->imgs[0]->arch, o->imgs[0]->arch) > 0);
}

/* The linked image goes in as a version-1 OffloadBinary (so binary tools
 * still read it from the output), which replaces it in t->image: the
 * inputs' triple and architecture (none for a CPU), as upstream packs it. */
static int images(struct lw_plan *p, struct target *t, struct lw_diag *d) {
  const char *arch = t->imgs[0]->arch;
  if (strcmp(arch, "generic") == 0)
    arch = ""; /* a CPU's: upstream's image names none */
  struct ex_string strs[2] = {{"triple", (char *)t->triple, strlen(t->triple)},
                              {"arch", (char *)arch, strlen(arch)}};
  /* SPIR-V goes in the ELF container libomptarget's Level Zero plugin
   * reads, as upstream packs it. */
  struct lw_buf elf = {0};
  if (strncmp(t->triple, "spirv", 5) == 0) { /* a dry run's empty one too */
    if (ex_write_spirv_elf(t->image.data, t->image.len, &elf))
      return lw_error(d, LW_ENOMEM, "cannot pack the SPIR-V image for '%s'",
                      t->triple);
    lw_buf_free(&t->image);
    t->image = elf;
  }
  struct ex_write_image wi = {
      p->o->embed_bitcode ? EX_IMG_BITCODE : EX_IMG_OBJECT, EX_OFK_OPENMP, 0,
      strs, 2, t->image.data, t->image.len};
  struct lw_buf blob = {0};
  size_t at;
  if (lw_grow(&p->omp, p->nomp, &p->capomp, sizeof *p->omp, 4) ||
      ex_write_offload_binary(&wi, &blob, &at)) {
    lw_buf_free(&blob);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  size_t size = t->image.len;
  lw_buf_free(&t->image);
  t->image = blob;
  /* In upstream's order: it sorts a kind's images with "A goes before B
   * when A's triple or A's arch is greater" (descending architectures of
   * a triple: sm_90 before sm_80), which for a handful of images is
   * libstdc++'s insertion sort: each image, in turn, goes in front of the
   * sorted ones if it goes before the first, else after the last one it
   * does not go before. */
  struct wrp_omp_image img = {t->image.data, t->image.len, at, size};
  size_t k = p->nomp;
  if (k && goes_before(p, t, &p->omp[0]))
    k = 0;
  else
    while (k > 0 && goes_before(p, t, &p->omp[k - 1]))
      k--;
  memmove(p->omp + k + 1, p->omp + k, (p->nomp - k) * sizeof *p->omp);
  p->omp[k] = img;
  p->nomp++;
  return 0;
}

static void free_target(struct target *t) { lw_buf_free(&t->image); }

const struct lw_planner lw_omp_planner = {
    .kind = EX_OFK_OPENMP, .unsupported = unsupported,
    .first_job = first_job, .images = images, .free = free_target,
    .whole_cache = 1};
