/* sycl_native.c - SYCL device code for NVIDIA and AMD GPUs: SYCL images of
 * triple nvptx64-nvidia-cuda (arch sm_*) and amdgcn-amd-amdhsa (gfx*), as
 * DPC++ links them for the CUDA and HIP backends of its runtime:
 *   sycl-native-link  (in process) link the target's bitcode images, split
 *                     the kernels (specialization constants by emulation:
 *                     these devices have no SPIR-V ones) with their property
 *                     sets, and build each module;
 *   sycl-native-code  (in process, per module, in parallel: each module has
 *                     its context) its code from LLVM's own back end: PTX
 *                     for sm_*, an object for gfx*;
 *   ptxas, fatbinary  (CUDA, per module) the cubin, then a CUDA fatbinary of
 *                     the cubin and the PTX, which the runtime loads with
 *                     cuModuleLoadData (the driver picks the cubin, or
 *                     compiles the PTX for a newer GPU);
 *   ld.lld            (HIP, per module) the code object (an executable ELF
 *                     of the kernels), which hipModuleLoadData takes.
 * Each is registered as a native image for "nvptx64" or "amdgcn" (the
 * DPC++ runtime's names for the two backends) with the module's kernels,
 * its property sets, and compile_target nvidia_gpu_sm_90 / amd_gpu_gfx90a
 * (its device, as -fsycl-targets names it). */
#include "plan/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct native_module {
  struct target *t;
  size_t index;
  struct dl_module *mod;  /* until its code is made */
  struct lw_buf code;     /* PTX text, or the AMDGPU object */
  struct lw_tmp *in, *mid, *out; /* the code, the cubin, the image */
  struct lw_buf image;
  struct dl_props props;  /* the group's, with compile_target */
};

static int cuda(const struct target *t) {
  return strncmp(t->triple, "nvptx", 5) == 0;
}

/* "nvidia_gpu_sm_90", "amd_gpu_gfx90a", malloc'd. */
static char *device_name(const struct target *t) {
  return lw_xasprintf("%s_%s", cuda(t) ? "nvidia_gpu" : "amd_gpu", t->arch);
}

/* ---- the link, the split and the code, in process ------------------------ */

/* The device libraries for NVIDIA GPUs (--sycl-nvptx-device-libraries=),
 * then the CUDA toolkit's libdevice (its math, dl_link says how): their
 * paths. LW_ENOMEM or 0. */
static int lib_paths(const struct target *t, struct lw_strvec *paths) {
  const struct lw_options *o = t->plan->o;
  if (!cuda(t))
    return 0;
  char *libdevice = lw__cuda_libdevice(o);
  int rc = lw__device_lib_paths(o, &o->nvptx_device_libs, paths) ||
           (libdevice && lw_strvec_push(paths, libdevice));
  free(libdevice);
  return rc ? LW_ENOMEM : 0;
}

/* The bitcode images, then the libraries (bitcode, only what the images
 * need), into one module. */
static int link_all(struct target *t, struct lw_diag *d) {
  struct lw_strvec paths = {0};
  int rc = lib_paths(t, &paths) ? lw_error(d, LW_ENOMEM, "out of memory") : 0;
  size_t nlibs = paths.n;
  struct dl_input *in = calloc(t->nimgs + nlibs, sizeof *in);
  struct lw_buf *bytes = calloc(nlibs + 1, sizeof *bytes);
  if (!rc && (!in || !bytes))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < t->nimgs; i++)
    in[i] = (struct dl_input){t->imgs[i]->data, t->imgs[i]->size,
                              t->imgs[i]->origin, 0};
  for (size_t i = 0; !rc && i < nlibs; i++) {
    rc = lw_read_file(paths.v[i], &bytes[i], d);
    if (!rc && ex_sniff_image_kind(bytes[i].data, bytes[i].len) !=
                   EX_IMG_BITCODE)
      rc = lw_error_path(d, LW_EFORMAT, paths.v[i],
                         "NVPTX device library is not LLVM bitcode");
    in[t->nimgs + i] =
        (struct dl_input){bytes[i].data, bytes[i].len, paths.v[i], 1};
  }
  if (!rc)
    rc = dl_link(in, t->nimgs + nlibs, t->triple, 1, &t->mod, d);
  for (size_t i = 0; bytes && i < nlibs; i++)
    lw_buf_free(&bytes[i]);
  free(bytes);
  free(in);
  lw_strvec_free(&paths);
  return rc;
}

static int link_run(struct lw_job *j, struct lw_diag *d) {
  struct target *t = j->data;
  const struct lw_options *o = t->plan->o;
  int rc = link_all(t, d);
  unsigned flags = DL_SPEC_EMULATION | DL_IMAGE_SCOPE |
                   (o->relocatable || o->sycl_allow_undefined
                        ? DL_ALLOW_UNDEFINED
                        : 0);
  if (!rc)
    rc = dl_split(&t->mod, (enum dl_split_mode)o->split_mode, o->opt_level,
                  flags, NULL, &t->split, d);
  size_t n = rc ? 0 : t->split.n;
  if (n && !(t->native = calloc(n, sizeof *t->native)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  char *dev = rc ? NULL : device_name(t);
  for (size_t i = 0; !rc && i < n; i++) {
    struct native_module *nm = &t->native[i];
    *nm = (struct native_module){.t = t, .index = i};
    t->nnative = i + 1;
    rc = dl_split_module(&t->split, i, &nm->mod, d);
    if (!rc && (!dev || dl_props_with_bytes(&t->split.g[i].props,
                                            "SYCL/device requirements",
                                            "compile_target", dev, strlen(dev),
                                            &nm->props)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  free(dev);
  return rc;
}

static int code_run(struct lw_job *j, struct lw_diag *d) {
  struct native_module *nm = j->data;
  const struct target *t = nm->t;
  int rc = dl_codegen(nm->mod, t->arch, t->plan->o->opt_level,
                      cuda(t) ? DL_ASSEMBLY : DL_OBJECT, &nm->code, d);
  dl_module_free(nm->mod);
  nm->mod = NULL;
  return rc;
}

static const struct lw_job_kind code_kind = {.name = "sycl-native-code",
                                             .run = code_run};

/* The module's code to a file (.ext) for the first tool, and that tool's
 * output file (.out_ext) made. */
static int code_file(struct native_module *nm, const char *ext,
                     const char *out_ext, struct lw_tmp **out,
                     struct lw_diag *d) {
  const char *stage = cuda(nm->t) ? "sycl-nvptx" : "sycl-amdgcn";
  int rc = lw_tmp_create(stage, ext, &nm->in, d);
  if (!rc && !nm->t->plan->o->dry_run)
    rc = lw_write_file(lw_tmp_path(nm->in), nm->code.data, nm->code.len, d);
  return rc ? rc : lw_tmp_create(stage, out_ext, out, d);
}

/* ---- CUDA: ptxas, then fatbinary ----------------------------------------- */

static int ptxas_prepare(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d) {
  (void)g;
  struct native_module *nm = j->data;
  const struct target *t = nm->t;
  int rc = code_file(nm, "s", "cubin", &nm->mid, d);
  if (rc)
    return rc;
  char *tool = lw__cuda_tool(t->plan->o, "ptxas");
  rc = !tool || lw_strvec_push(&j->argv, tool) ||
       lw_strvec_push(&j->argv, "-m64") ||
       lw_strvec_pushf(&j->argv, "-O%d", t->plan->o->opt_level) ||
       lw_strvec_push(&j->argv, "--gpu-name") ||
       lw_strvec_push(&j->argv, t->arch) ||
       lw_strvec_push(&j->argv, "--output-file") ||
       lw_strvec_push(&j->argv, lw_tmp_path(nm->mid)) ||
       lw_strvec_extend_from(&j->argv, &t->plan->o->ptxas_args) ||
       lw_strvec_push(&j->argv, lw_tmp_path(nm->in));
  free(tool);
  return rc ? lw_error(d, LW_ENOMEM, "out of memory") : 0;
}

static int fatbin_prepare(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct native_module *nm = j->data;
  const struct target *t = nm->t;
  int rc = lw_tmp_create("sycl-nvptx", "fatbin", &nm->out, d);
  if (rc)
    return rc;
  /* "sm_90a" is sm=90a; the PTX goes in for GPUs newer than the cubin's */
  const char *sm = strncmp(t->arch, "sm_", 3) == 0 ? t->arch + 3 : t->arch;
  char *tool = lw__cuda_tool(t->plan->o, "fatbinary");
  rc = !tool || lw_strvec_push(&j->argv, tool) ||
       lw_strvec_push(&j->argv, "-64") ||
       lw_strvec_push(&j->argv, "--create") ||
       lw_strvec_push(&j->argv, lw_tmp_path(nm->out)) ||
       lw_strvec_pushf(&j->argv, "--image3=kind=elf,sm=%s,file=%s", sm,
                       lw_tmp_path(nm->mid)) ||
       lw_strvec_pushf(&j->argv, "--image3=kind=ptx,sm=%s,file=%s", sm,
                       lw_tmp_path(nm->in));
  free(tool);
  return rc ? lw_error(d, LW_ENOMEM, "out of memory") : 0;
}

/* ---- HIP: the code object ------------------------------------------------ */

static int lld_prepare(struct lw_graph *g, struct lw_job *j,
                       struct lw_diag *d) {
  (void)g;
  struct native_module *nm = j->data;
  int rc = code_file(nm, "o", "hsaco", &nm->out, d);
  if (rc)
    return rc;
  if (lw_strvec_push(&j->argv, LW_LLD) || lw_strvec_push(&j->argv, "-m") ||
      lw_strvec_push(&j->argv, "elf64_amdgpu") ||
      lw_strvec_push(&j->argv, "--no-undefined") ||
      lw_strvec_push(&j->argv, "-shared") || lw_strvec_push(&j->argv, "-o") ||
      lw_strvec_push(&j->argv, lw_tmp_path(nm->out)) ||
      lw_strvec_push(&j->argv, lw_tmp_path(nm->in)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

/* The image is made: read it, and check it is what its runtime loads. */
static int image_done(struct lw_graph *g, struct lw_job *j,
                      struct lw_diag *d) {
  (void)g;
  struct native_module *nm = j->data;
  if (nm->t->plan->o->dry_run)
    return 0;
  int rc = lw_read_file(lw_tmp_path(nm->out), &nm->image, d);
  static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba};
  int ok = cuda(nm->t) ? nm->image.len > 16 &&
                             memcmp(nm->image.data, fatbin, 4) == 0
                       : nm->image.len > 64 &&
                             memcmp(nm->image.data, "\177ELF", 4) == 0;
  if (!rc && !ok)
    rc = lw_error(d, LW_ETOOL, "%s: no %s came out", j->what,
                  cuda(nm->t) ? "CUDA fatbinary" : "code object");
  return rc;
}

static const struct lw_job_kind ptxas_kind = {.name = "ptxas",
                                              .prepare = ptxas_prepare};
static const struct lw_job_kind fatbin_kind = {
    .name = "fatbinary", .prepare = fatbin_prepare, .done = image_done};
static const struct lw_job_kind lld_kind = {
    .name = "amdgpu-link", .prepare = lld_prepare, .done = image_done};

/* After the link: each module's tools, which wrap waits for. */
static int link_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  struct target *t = j->data;
  for (size_t i = 0; i < t->split.warnings.n; i++)
    lw__warn(t->plan, "%s", t->split.warnings.v[i]);
  size_t n = t->plan->o->dry_run ? 1 : t->nnative;
  if (t->plan->o->dry_run && !t->native) {
    if (!(t->native = calloc(1, sizeof *t->native)))
      return lw_error(d, LW_ENOMEM, "out of memory");
    t->native[0] = (struct native_module){.t = t};
    t->nnative = 1;
  }
  if (!n)
    lw__warn(t->plan, "no SYCL kernels in the device code for '%s'",
             t->triple);
  for (size_t i = 0; i < n; i++) {
    struct native_module *nm = &t->native[i];
    struct lw_job *code = lw_graph_add(g, &code_kind, nm, NULL, 0);
    struct lw_job *first =
        code ? lw_graph_add(g, cuda(t) ? &ptxas_kind : &lld_kind, nm, &code, 1)
             : NULL;
    if (code)
      code->what = lw_xasprintf("%s code generation for module %zu of %s "
                                "(%s) at O%d",
                                cuda(t) ? "PTX" : "AMDGPU", i, t->triple,
                                t->arch, t->plan->o->opt_level);
    struct lw_job *last =
        first && cuda(t) ? lw_graph_add(g, &fatbin_kind, nm, &first, 1)
                         : first;
    if (!last || lw_graph_add_dep(g, t->plan->wrap, last))
      return lw_error(d, LW_ENOMEM, "out of memory");
    first->what = lw_xasprintf("%s for module %zu of %s (%s)",
                               cuda(t) ? "cubin" : "code object", i, t->triple,
                               t->arch);
    if (last != first)
      last->what = lw_xasprintf("CUDA fatbinary for module %zu of %s (%s)",
                                i, t->triple, t->arch);
  }
  return 0;
}

static const struct lw_job_kind link_kind = {
    .name = "sycl-native-link", .run = link_run, .done = link_done};

/* ---- the planner ----------------------------------------------------------- */

static int claims(const struct ex_image *img) {
  return lw__gpu_triple(img->triple);
}

static const char *unsupported(const struct ex_image *img) {
  if (img->image_kind != EX_IMG_BITCODE)
    return "SYCL device image kind";
  if (!img->arch[0] || strcmp(img->arch, "generic") == 0)
    return "SYCL image without a GPU architecture";
  return NULL;
}

static int first_job(struct lw_graph *g, struct target *t, struct lw_job **out,
                     struct lw_diag *d) {
  /* --sycl-targets names the devices to build for */
  const struct lw_strvec *named = &t->plan->o->sycl_targets;
  char *dev = device_name(t);
  if (!dev)
    return lw_error(d, LW_ENOMEM, "out of memory");
  size_t k = lw_strvec_find(named, dev);
  free(dev);
  if (named->n && k == named->n) {
    if (t->plan->o->verbose)
      fprintf(stderr, "fatlink: the SYCL code for %s (%s) is not built: "
                      "--sycl-targets does not name it\n",
              t->triple, t->arch);
    *out = NULL;
    return 0;
  }
  if (t->plan->o->sycl_abi != WRP_SYCL_DPCPP)
    return lw_error(d, LW_EINVAL,
                    "--sycl-abi=%s cannot register %s images for %s (use "
                    "--sycl-abi=dpcpp)",
                    t->plan->o->sycl_abi == WRP_SYCL_LLVM22 ? "llvm22"
                                                            : "llvm23",
                    t->triple, t->arch);
  if (!(*out = lw_graph_add(g, &link_kind, t, NULL, 0)) ||
      !((*out)->what = lw_xasprintf("link %zu bitcode image(s) for %s (%s) "
                                    "and split",
                                    t->nimgs, t->triple, t->arch)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static int images(struct lw_plan *p, struct target *t, struct lw_diag *d) {
  for (size_t k = 0; k < t->nnative; k++) {
    const struct native_module *nm = &t->native[k];
    if (!nm->image.len)
      continue; /* a dry run */
    if (lw_grow(&p->sycl, p->nsycl, &p->capsycl, sizeof *p->sycl, 16))
      return lw_error(d, LW_ENOMEM, "out of memory");
    p->sycl[p->nsycl++] = (struct wrp_sycl_image){
        nm->image.data,
        nm->image.len,
        cuda(t) ? "nvptx64" : "amdgcn",
        WRP_FMT_NATIVE,
        p->o->sycl_compile_opts ? p->o->sycl_compile_opts : "",
        p->o->sycl_link_opts ? p->o->sycl_link_opts : "",
        &t->split.g[k].kernels,
        nm->props.s,
        nm->props.n,
        t->triple};
  }
  return 0;
}

static void free_target(struct target *t) {
  for (size_t i = 0; i < t->nnative; i++) {
    dl_module_free(t->native[i].mod);
    lw_buf_free(&t->native[i].code);
    lw_buf_free(&t->native[i].image);
    dl_props_free(&t->native[i].props);
  }
  free(t->native);
  t->native = NULL;
  t->nnative = 0;
  dl_module_free(t->mod);
  t->mod = NULL;
  dl_split_free(&t->split);
}

const struct lw_planner lw_sycl_native_planner = {.kind = EX_OFK_SYCL,
                                                  .whole_cache = 1,
                                                  .claims = claims,
                                                  .unsupported = unsupported,
                                                  .first_job = first_job,
                                                  .images = images,
                                                  .free = free_target};
