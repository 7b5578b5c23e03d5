/* gpu_link.c - the device link of one GPU architecture, as upstream links
 * CUDA and HIP relocatable device code and OpenMP's GPU code: clang for the
 * target's triple and architecture, with nvlink underneath for nvptx64 (and
 * LTO of any bitcode among the inputs), LTO and lld for amdgcn, spirv-link
 * for spirv64, into t->out_tmp (a cubin, a code object, SPIR-V). cuda.c
 * puts the architectures in a fatbinary; openmp.c registers each. */
#include "plan/planner.h"

#include <stdlib.h>
#include <string.h>

#ifndef LW_CLANG
#define LW_CLANG "clang"
#endif

/* --embed-bitcode: the image is the bitcode LTO linked (libomptarget's
 * JIT compiles it when the program runs), as upstream links it. */
static int nvptx_args(struct lw_strvec *a, const struct target *t) {
  const char *cuda = t->plan->o->cuda_path;
  return lw_strvec_pushf(a, "-march=%s", t->arch) ||
         (cuda && lw_strvec_pushf(a, "--cuda-path=%s", cuda)) ||
         (t->plan->o->embed_bitcode &&
          lw_strvec_push(a, "-Wl,--lto-emit-llvm"));
}

static int amdgcn_args(struct lw_strvec *a, const struct target *t) {
  return lw_strvec_pushf(a, "-mcpu=%s", t->arch) ||
         lw_strvec_push(a, "-flto") ||
         lw_strvec_push(a, "-Wl,--no-undefined") ||
         (t->plan->o->embed_bitcode &&
          lw_strvec_push(a, "-Wl,--lto-emit-llvm"));
}

int lw__gpu_link_prepare(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d) {
  (void)g;
  struct target *t = j->data;
  const struct lw_options *o = t->plan->o;
  struct lw_strvec *a = &j->argv;
  int amd = strncmp(t->triple, "amdgcn", 6) == 0;
  int spirv = strncmp(t->triple, "spirv", 5) == 0; /* clang: spirv-link */
  /* The image is named as upstream names it: OUT.<triple's arch>.<arch>.img;
   * clang and nvlink leave temporaries when they fail: they get a
   * directory of their own. */
  struct lw_tmp *scratch;
  char *stage = lw_xasprintf("%.*s.%s", (int)strcspn(t->triple, "-"),
                             t->triple, t->arch);
  int rc = stage ? lw_tmp_create(stage, "img", &t->out_tmp, d)
                 : lw_error(d, LW_ENOMEM, "out of memory");
  free(stage);
  if (!rc)
    rc = lw_tmp_create_scratch("gpu-tools", &scratch, d);
  if (rc)
    return rc;
  j->tmpdir = lw_tmp_path(scratch);
  j->show_output = 1;
  if (lw_strvec_push(a, LW_CLANG) || lw_strvec_push(a, "--no-default-config") ||
      lw_strvec_pushf(a, "--target=%s", t->triple) ||
      (!spirv && (amd ? amdgcn_args : nvptx_args)(a, t)) ||
      lw_strvec_push(a, "-o") || lw_strvec_push(a, lw_tmp_path(t->out_tmp)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  /* LLVM's options reach the device link's LTO, as upstream passes them:
   * every one as a plugin option, -mllvm's as -mllvm too. */
  for (size_t i = 0; i < o->llvm_opts.n; i++)
    if (lw_strvec_push(a, "-Xlinker") ||
        lw_strvec_pushf(a, "--plugin-opt=%s", o->llvm_opts.v[i]))
      return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < o->mllvm.n; i++)
    if (lw_strvec_push(a, "-Xlinker") ||
        lw_strvec_pushf(a, "-mllvm=%s", o->mllvm.v[i]))
      return lw_error(d, LW_ENOMEM, "out of memory");
  /* -passes= and -load-pass-plugin= are the LTO's, as the device linker
   * (ld.lld, clang-nvlink-wrapper) spells them; only lld loads plugins. */
  if (!spirv && o->lto_passes &&
      (lw_strvec_push(a, "-Xlinker") ||
       lw_strvec_pushf(a, "--lto-newpm-passes=%s", o->lto_passes)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  if (!spirv && !amd && o->pass_plugins.n)
    return lw_error(d, LW_ENOTSUP,
                    "-load-pass-plugin: the device link for '%s' "
                    "(clang-nvlink-wrapper) loads no pass plugin; ld.lld "
                    "(AMD GPUs) does",
                    t->triple);
  for (size_t i = 0; amd && i < o->pass_plugins.n; i++)
    if (lw_strvec_push(a, "-Xlinker") ||
        lw_strvec_pushf(a, "--load-pass-plugin=%s", o->pass_plugins.v[i]))
      return lw_error(d, LW_ENOMEM, "out of memory");
  /* The inputs' extension: CUDA's are what they are; HIP's bitcode goes as
   * objects, so that clang links it (LTO) instead of compiling it as a new
   * translation unit that needs the ROCm device libraries; OpenMP's all go
   * as objects, as upstream's. */
  const char *ext = t->kind == EX_OFK_CUDA ? NULL : "o";
  if ((rc = lw__push_device_inputs(a, t, "gpu-input", ext, d)))
    return rc;
  if (lw__push_device_args(a, o, t->triple))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}
