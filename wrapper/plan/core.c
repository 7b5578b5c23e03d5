/* core.c - the planners' shared core: turns the extracted images into jobs,
 * one chain per device target, then one wrap job and the host link:
 *
 *   SYCL   sycl-link (in process: link, then split into groups)
 *            -> sycl-module x N (in process, in parallel: build the group's
 *               module, its property sets, its SPIR-V; added by sycl-link
 *               once it knows N) - sycl.c
 *   OpenMP omp-link (clang -shared: the device objects become a shared
 *            object, as upstream links generic targets) - openmp.c
 *   CUDA,  gpu-device-link per architecture (clang for nvptx64 or amdgcn)
 *   HIP      -> fatbinary of them all (once per kind) - cuda.c
 *   all    -> wrap (in process: registration module -> host object)
 *          -> host-link (the user's linker into a temporary beside the
 *             output; lw_plan_commit renames it)
 *
 * Targets are grouped by (offload kind, triple, arch) in order of first
 * appearance, so the plan is deterministic. A worker only touches its own
 * target; results are read by later jobs' prepare, on the loop thread.
 * What is particular to an offload kind comes from its planner
 * (struct lw_planner, planner.h), which the driver hands in: the kind files
 * call the core (this file, keys.c, reqs.c, fpga_inputs.c, fpga_archive.c),
 * never the other way, and never each other; a planner's traits the core
 * needs are fields of its struct. An FPGA archive link (fpga_archive.c)
 * writes an archive in place of wrap and the host link. */
#include "plan/planner.h"

#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

void lw__warn(struct lw_plan *p, const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "fatlink: warning: %s\n", line);
  /* Kept for the cache: a relink that takes the device side from it says
   * what the device side said. */
  lw_buf_append(&p->warnings, line, strlen(line));
  lw_buf_append(&p->warnings, "\n", 1);
}

/* ---- wrap and host link -------------------------------------------------- */

/* The registration object, named as upstream names its wrapper objects
 * (OUT.<kind>.image.wrapper.o; the kinds joined by '-' where one object
 * registers several). */
static int create_wrapper_obj(struct lw_plan *p, struct lw_diag *d) {
  char stage[64] = "";
  size_t at = 0;
  for (size_t i = 0; i < p->n; i++) {
    const char *k = ex_offload_kind_name(p->t[i].kind);
    size_t j = 0;
    while (j < i && p->t[j].kind != p->t[i].kind)
      j++;
    if (j == i && at < sizeof stage)
      at += (size_t)snprintf(stage + at, sizeof stage - at, "%s%s",
                             at ? "-" : "", k);
  }
  char *name = lw_xasprintf("%s%simage.wrapper", stage, at ? "." : "");
  int rc = name ? lw_tmp_create_once(name, "o", &p->wrapper_obj, d)
                : lw_error(d, LW_ENOMEM, "out of memory");
  free(name);
  return rc;
}

static int wrap_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  if (p->hit) {
    j->what = strdup("the registration object from the cache");
    return j->what ? create_wrapper_obj(p, d)
                   : lw_error(d, LW_ENOMEM, "out of memory");
  }
  j->what = lw_xasprintf("wrap the device images of %zu target(s) for %s", p->n,
                         p->o->host_triple);
  /* --print-wrapped-module prints it in a dry run too, as upstream: with
   * the empty images a dry run has. */
  j->runs_dry = p->o->dry_run && p->o->print_wrapped;
  int rc = create_wrapper_obj(p, d);
  if (rc)
    return rc;
  for (size_t i = 0; !rc && i < p->n; i++)
    if (p->t[i].planner->images)
      rc = p->t[i].planner->images(p, &p->t[i], d);
  return rc;
}

/* The cache's entry of a whole device side: the warnings it printed (their
 * length first, 8 bytes), then the registration object. */
static int store_device_side(struct lw_plan *p, const struct lw_buf *obj) {
  struct lw_buf e = {0};
  unsigned char n[8];
  for (int i = 0; i < 8; i++)
    n[i] = (unsigned char)((uint64_t)p->warnings.len >> (8 * i));
  int rc = lw_buf_append(&e, n, 8) ||
           lw_buf_append(&e, p->warnings.data, p->warnings.len) ||
           lw_buf_append(&e, obj->data, obj->len);
  if (!rc)
    lw_cache_put(p->cache, p->key, e.data, e.len);
  lw_buf_free(&e);
  return rc ? LW_ENOMEM : 0;
}

/* Everything the targets made, once the registration module holds its
 * own copy: code generation copies the module's data again, and the host
 * linker runs beside this process (on the 4,000-kernel program, what
 * this process held through the host link went from 191 to 106 MiB, the
 * peak of the link's processes together from 241 to 176 MiB). */
static void release_targets(struct lw_plan *p) {
  for (size_t i = 0; i < p->n; i++)
    p->t[i].planner->free(&p->t[i]);
  free(p->sycl);
  free(p->omp);
  p->sycl = NULL;
  p->omp = NULL;
  p->nsycl = p->capsycl = p->nomp = p->capomp = 0;
  malloc_trim(0);
}

/* LLVM 23's SYCL registration: one OffloadBinary (version 2) of every
 * image: image kind SPIR-V (6) or object (1), offload kind SYCL (8), its
 * triple and arch, and its kernels as LLVM 23's "symbols" table. */
static int llvm23_binary(const struct wrp_sycl_image *imgs, size_t n,
                         struct lw_buf *out) {
  struct ex_write_image *w = calloc(n, sizeof *w);
  struct ex_string *str = calloc(3 * n, sizeof *str);
  struct lw_buf *syms = calloc(n, sizeof *syms);
  int rc = w && str && syms ? 0 : LW_ENOMEM;
  for (size_t k = 0; !rc && k < n; k++) {
    const struct lw_strvec *e = imgs[k].entries;
    rc = ex_write_symbol_table((const char *const *)(e ? e->v : NULL),
                               e ? e->n : 0, &syms[k]);
    int spirv = imgs[k].format == WRP_FMT_SPIRV;
    const char *arch = spirv ? "" : imgs[k].target;
    const char *triple = imgs[k].triple ? imgs[k].triple : imgs[k].target;
    /* (the writer only reads them: no copies) */
    str[3 * k] = (struct ex_string){"triple", (char *)triple, strlen(triple)};
    str[3 * k + 1] = (struct ex_string){"arch", (char *)arch, strlen(arch)};
    str[3 * k + 2] =
        (struct ex_string){"symbols", (char *)syms[k].data, syms[k].len};
    w[k] = (struct ex_write_image){spirv ? 6 : 1, 8, 0, &str[3 * k], 3,
                                   imgs[k].data, imgs[k].size};
  }
  if (!rc)
    rc = ex_write_offload_binaries(w, n, 2, out, NULL);
  for (size_t k = 0; syms && k < n; k++)
    lw_buf_free(&syms[k]);
  free(syms);
  free(str);
  free(w);
  return rc;
}

static int wrap_run(struct lw_job *j, struct lw_diag *d) {
  struct lw_plan *p = j->data;
  if (p->hit)
    return lw_write_file(lw_tmp_path(p->wrapper_obj), p->cached.data,
                         p->cached.len, d);
  struct wrp_request req = {.host_triple = p->o->host_triple,
                            .sycl = p->sycl,
                            .nsycl = p->nsycl,
                            .omp = p->omp,
                            .nomp = p->nomp,
                            .relocatable = p->o->relocatable,
                            .sycl_abi = p->o->sycl_abi};
  struct lw_buf blob = {0};
  if (p->o->sycl_abi == WRP_SYCL_LLVM23 && p->nsycl) {
    int rc = llvm23_binary(p->sycl, p->nsycl, &blob);
    if (rc) {
      lw_buf_free(&blob);
      return lw_error(d, rc, "out of memory");
    }
    req.sycl_binary = (struct wrp_fatbin){blob.data, blob.len};
  }
  /* A dry run registers an empty fatbinary, as upstream prints it. */
  struct wrp_fatbin *fbs[LW_FATBIN_SLOTS] = {&req.cuda, &req.hip};
  for (size_t i = 0; i < LW_FATBIN_SLOTS; i++)
    if (p->fatbin[i].job)
      *fbs[i] = (struct wrp_fatbin){p->fatbin[i].bytes.data
                                        ? p->fatbin[i].bytes.data
                                        : (const unsigned char *)"",
                                    p->fatbin[i].bytes.len};
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  struct dl_module *m;
  int rc = wrp_build(&req, &ctx, &mod, d);
  lw_buf_free(&blob);
  if (rc)
    return rc;
  release_targets(p);
  if (dl_module_adopt(ctx, mod, p->o->host_triple, &m))
    return lw_error(d, LW_ENOMEM, "out of memory");
  if (p->o->print_wrapped && !(p->wrapped_ir = dl_print(m)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (p->o->dry_run) {
    dl_module_free(m);
    return rc;
  }
  struct lw_buf obj = {0};
  if (!rc)
    rc = dl_codegen(m, NULL, 2, DL_OBJECT, &obj, d);
  dl_module_free(m);
  if (!rc)
    rc = lw_write_file(lw_tmp_path(p->wrapper_obj), obj.data, obj.len, d);
  if (!rc && p->keyed && store_device_side(p, &obj))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  lw_buf_free(&obj);
  malloc_trim(0);
  return rc;
}

static int wrap_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  (void)g;
  (void)d;
  struct lw_plan *p = j->data;
  if (p->wrapped_ir)
    fputs(p->wrapped_ir, stderr);
  return 0;
}

static const struct lw_job_kind wrap_kind = {.name = "wrap",
                                             .prepare = wrap_prepare,
                                             .run = wrap_run,
                                             .done = wrap_done};

/* A command line longer than the kernel takes (the user's own, expanded from
 * response files, plus ours) goes to the linker as a response file. */
static int host_link_respfile(struct lw_plan *p, struct lw_job *j,
                              struct lw_diag *d) {
  struct lw_buf text = {0};
  int rc = lw_response_file_text(&j->argv, 1, &text)
               ? lw_error(d, LW_ENOMEM, "out of memory")
               : lw_tmp_create("host-link", "rsp", &p->host_link_rsp, d);
  if (!rc && !p->o->dry_run)
    rc = lw_write_file(lw_tmp_path(p->host_link_rsp), text.data, text.len, d);
  lw_buf_free(&text);
  if (rc)
    return rc;
  struct lw_strvec argv = {0};
  if (lw_strvec_push(&argv, j->argv.v[0]) ||
      lw_strvec_pushf(&argv, "@%s", lw_tmp_path(p->host_link_rsp))) {
    lw_strvec_free(&argv);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  lw_strvec_free(&j->argv);
  j->argv = argv;
  return 0;
}

static int host_link_prepare(struct lw_graph *g, struct lw_job *j,
                             struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  int rc = lw_tmp_create_beside(p->o->output, &p->out_tmp, d);
  if (rc)
    return rc;
  j->inherit_stdio = 1;
  j->env_set = p->line->chain_env;
  if (lw_strvec_push(&j->argv, p->o->linker_path) ||
      (p->o->msvc ? lw_strvec_pushf(&j->argv, "-out:%s",
                                    lw_tmp_path(p->out_tmp))
                  : lw_strvec_push(&j->argv, "-o") ||
                        lw_strvec_push(&j->argv, lw_tmp_path(p->out_tmp))) ||
      (p->wrapper_obj &&
       lw_strvec_push(&j->argv, lw_tmp_path(p->wrapper_obj))))
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < p->line->args.n; i++)
    if (lw_strvec_push(&j->argv, p->line->args.v[i]))
      return lw_error(d, LW_ENOMEM, "out of memory");
  return lw_args_fit(&j->argv) ? 0 : host_link_respfile(p, j, d);
}

static const struct lw_job_kind host_link_kind = {
    .name = "host-link", .prepare = host_link_prepare, .host_side = 1};

/* A relocatable link's output is an object for a later link: its device
 * code is already linked and registered, so the embedded device code goes
 * and its offload entries move to a section of its own (named by a hash of
 * the output, so two such objects do not mix), as upstream does. */

static int relocate_prepare(struct lw_graph *g, struct lw_job *j,
                            struct lw_diag *d) {
  (void)g;
  struct lw_plan *p = j->data;
  const char *out = lw_tmp_path(p->out_tmp);
  struct lw_buf bytes = {0};
  if (!p->o->dry_run) {
    int rc = lw_read_file(out, &bytes, d);
    if (rc)
      return rc;
  }
  uint64_t h = XXH3_64bits(bytes.data, bytes.len);
  lw_buf_free(&bytes);
  static const char sec[] = "llvm_offload_entries";
  if (lw_strvec_push(&j->argv, LW_OBJCOPY) || lw_strvec_push(&j->argv, out) ||
      lw_strvec_push(&j->argv, "--remove-section") ||
      lw_strvec_push(&j->argv, ".llvm.offloading") ||
      lw_strvec_push(&j->argv, "--rename-section") ||
      lw_strvec_pushf(&j->argv, "%s=%s_%016llx", sec, sec,
                      (unsigned long long)h) ||
      lw_strvec_push(&j->argv, "--redefine-sym") ||
      lw_strvec_pushf(&j->argv, "__start_%s=__start_%s_%016llx", sec, sec,
                      (unsigned long long)h) ||
      lw_strvec_push(&j->argv, "--redefine-sym") ||
      lw_strvec_pushf(&j->argv, "__stop_%s=__stop_%s_%016llx", sec, sec,
                      (unsigned long long)h))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind relocate_kind = {
    .name = "relocate", .prepare = relocate_prepare, .host_side = 1};

/* ---- what planners share ------------------------------------------------ */

int lw__native_abi_check(const struct lw_plan *p, const char *what,
                         struct lw_diag *d) {
  if (p->o->sycl_abi != WRP_SYCL_LLVM22)
    return 0;
  return lw_error(d, LW_EINVAL,
                  "--sycl-abi=llvm22 cannot register native images (%s): "
                  "LLVM 22's layout marks no image format, so it carries JIT "
                  "SPIR-V only (use --sycl-abi=dpcpp)",
                  what);
}

int lw__push_device_inputs(struct lw_strvec *argv, const struct target *t,
                           const char *stage, const char *as,
                           struct lw_diag *d) {
  for (size_t i = 0; i < t->nimgs; i++) {
    const struct ex_image *img = t->imgs[i];
    struct lw_tmp *in;
    const char *ext =
        as                                                            ? as
        : ex_sniff_image_kind(img->data, img->size) == EX_IMG_BITCODE ? "bc"
        : img->image_kind == EX_IMG_BITCODE                           ? "ll"
                                                                      : "o";
    int rc = lw_tmp_create(stage, ext, &in, d);
    if (!rc && !t->plan->o->dry_run)
      rc = lw_write_file(lw_tmp_path(in), img->data, img->size, d);
    if (rc)
      return rc;
    if (lw_strvec_push(argv, lw_tmp_path(in)))
      return lw_error(d, LW_ENOMEM, "out of memory");
  }
  return 0;
}

int lw__read_device_image(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct target *t = j->data;
  if (t->plan->o->dry_run)
    return 0;
  return lw_read_file(lw_tmp_path(t->out_tmp), &t->image, d);
}

/* ---- the whole device side from the cache -------------------------------- */

/* Each target's first job (they add the rest as they learn more), into
 * firsts[] (p->n of them at most); *n counts them. */
static int add_device_jobs(struct lw_graph *g, struct lw_plan *p,
                           struct lw_job **firsts, size_t *n,
                           struct lw_diag *d) {
  int rc = 0;
  *n = 0;
  for (size_t i = 0; !rc && i < p->n; i++)
    if (!(rc = p->t[i].planner->first_job(g, &p->t[i], &firsts[*n], d)) &&
        firsts[*n])
      (*n)++;
  return rc;
}

static int lookup_run(struct lw_job *j, struct lw_diag *d) {
  struct lw_plan *p = j->data;
  int rc = lw__device_side_key(p, p->key, d);
  if (rc)
    return rc;
  p->keyed = 1;
  char what[128];
  snprintf(what, sizeof what, "the device side of %zu target(s)", p->n);
  struct lw_buf e = {0};
  if (!lw_cache_get(p->cache, p->key, what, &e))
    return 0;
  uint64_t n = 0;
  for (int i = 7; e.len >= 8 && i >= 0; i--)
    n = n << 8 | e.data[i];
  if (e.len < 8 || n > e.len - 8) {
    lw_buf_free(&e); /* not ours: built anew, and stored over */
    return 0;
  }
  p->hit = 1;
  if (lw_buf_append(&p->warnings, e.data + 8, (size_t)n) ||
      lw_buf_append(&p->cached, e.data + 8 + n, e.len - 8 - (size_t)n))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  lw_buf_free(&e);
  return rc;
}

/* A hit says what the device side said; a miss adds its jobs, which wrap
 * waits for. */
static int lookup_done(struct lw_graph *g, struct lw_job *j,
                       struct lw_diag *d) {
  struct lw_plan *p = j->data;
  if (!p->hit) {
    struct lw_job **firsts = calloc(p->n, sizeof *firsts);
    size_t n = 0;
    int rc = firsts ? add_device_jobs(g, p, firsts, &n, d)
                    : lw_error(d, LW_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++)
      if (lw_graph_add_dep(g, p->wrap, firsts[i]))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    free(firsts);
    return rc;
  }
  {
    for (size_t at = 0; at < p->warnings.len;) {
      const char *line = (const char *)p->warnings.data + at;
      size_t n = strcspn(line, "\n");
      fprintf(stderr, "fatlink: warning: %.*s\n", (int)n, line);
      at += n + 1;
    }
  }
  return 0;
}

static const struct lw_job_kind lookup_kind = {
    .name = "cache-lookup", .run = lookup_run, .done = lookup_done};

/* ---- building the plan --------------------------------------------------- */

/* An image without an arch (bundles of the old model) is generic code. */
static const char *arch_of(const struct ex_image *img) {
  return img->arch[0] ? img->arch : "generic";
}

static struct target *target_for(struct lw_plan *p, const struct ex_image *img,
                                 struct lw_diag *d) {
  for (size_t i = 0; i < p->n; i++)
    if (p->t[i].kind == img->offload_kind &&
        strcmp(p->t[i].triple, img->triple) == 0 &&
        strcmp(p->t[i].arch, arch_of(img)) == 0)
      return &p->t[i];
  const struct lw_planner *pl = NULL;
  for (size_t k = 0; k < p->nplanners && !pl; k++)
    if (p->planners[k]->kind == img->offload_kind &&
        (!p->planners[k]->claims || p->planners[k]->claims(img)))
      pl = p->planners[k];
  const char *what = pl ? pl->unsupported(img) : "offload kind";
  if (what) {
    lw_error_path(d, LW_ENOTSUP, img->origin,
                  "%s is not supported yet (kind %s, image %s, triple '%s')",
                  what, ex_offload_kind_name(img->offload_kind),
                  ex_image_kind_name(img->image_kind), img->triple);
    return NULL;
  }
  struct target *t = &p->t[p->n++];
  t->plan = p;
  t->planner = pl;
  t->kind = img->offload_kind;
  t->triple = img->triple;
  t->arch = arch_of(img);
  return t;
}

int lw__gpu_triple(const char *triple) {
  return strncmp(triple, "nvptx64-", 8) == 0 ||
         strncmp(triple, "amdgcn-", 7) == 0;
}

/* GPU code for "generic", or for a processor without target-ID features
 * ("gfx90a"), also goes into every target of its kind and triple it is
 * compatible with ("gfx90a:xnack+", "gfx90a:xnack-"; any, for generic), as
 * upstream links it; generic code forms no target of its own. */
static int joins(const struct ex_image *img, const struct target *t) {
  const char *a = arch_of(img);
  if (t->kind != img->offload_kind || strcmp(t->triple, img->triple) != 0 ||
      strcmp(t->arch, a) == 0 || strchr(a, ':'))
    return 0;
  size_t n = strlen(a);
  return strcmp(a, "generic") == 0 ||
         (strncmp(t->arch, a, n) == 0 && t->arch[n] == ':');
}

static int add_image(struct target *t, const struct ex_image *img,
                     struct lw_diag *d) {
  const struct ex_image **ni = realloc(t->imgs, (t->nimgs + 1) * sizeof *ni);
  if (!ni)
    return lw_error(d, LW_ENOMEM, "out of memory");
  t->imgs = ni;
  t->imgs[t->nimgs++] = img;
  return 0;
}

static int join_compatible(struct lw_plan *p, const struct ex_set *set,
                           struct lw_diag *d) {
  size_t ntargets = p->n; /* generic images' own targets come after */
  for (size_t i = 0; i < set->n; i++) {
    const struct ex_image *img = &set->images[i];
    if (img->linked || !lw__gpu_triple(img->triple))
      continue;
    int joined = 0;
    for (size_t k = 0; k < ntargets; k++)
      if (joins(img, &p->t[k]) && ++joined && add_image(&p->t[k], img, d))
        return d->code;
    if (joined || strcmp(arch_of(img), "generic") != 0)
      continue;
    struct target *t = target_for(p, img, d); /* none to join: its own */
    if (!t || add_image(t, img, d))
      return d->code;
  }
  return 0;
}

int lw_plan_build(struct lw_graph *g, const struct lw_options *o,
                  const struct lw_link_line *line, const struct ex_set *set,
                  const struct lw_planner *const *planners, size_t nplanners,
                  struct lw_plan **out, struct lw_diag *d) {
  struct lw_plan *p = calloc(1, sizeof *p);
  if (!p)
    return lw_error(d, LW_ENOMEM, "out of memory");
  *out = p;
  p->o = o;
  p->line = line;
  p->planners = planners;
  p->nplanners = nplanners;
  p->t = calloc(set->n ? set->n : 1, sizeof *p->t);
  if (!p->t)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < set->n; i++) {
    const struct ex_image *img = &set->images[i];
    /* An executable's or shared object's device code was registered by its
     * own wrapper; linking it again would register it twice. */
    if (img->linked) {
      if (o->verbose)
        fprintf(stderr,
                "fatlink: skipping %s image for '%s' in linked file "
                "'%s'\n",
                ex_offload_kind_name(img->offload_kind), img->triple,
                img->origin);
      continue;
    }
    if (o->verbose)
      fprintf(stderr, "fatlink: device image %s for '%s' from '%s'\n",
              ex_offload_kind_name(img->offload_kind), img->triple,
              img->origin);
    if (lw__gpu_triple(img->triple) && strcmp(arch_of(img), "generic") == 0)
      continue; /* join_compatible's */
    struct target *t = target_for(p, img, d);
    int rc = t ? add_image(t, img, d) : d->code;
    if (rc)
      return rc;
  }
  if (join_compatible(p, set, d))
    return d->code;
  if (o->emit_fatbin_only) {
    if (!p->n)
      return lw_error(d, LW_EINVAL,
                      "--emit-fatbin-only: no CUDA or HIP device code to make "
                      "a fatbinary of");
    for (size_t i = 0; i < p->n; i++) {
      const struct target *t = &p->t[i];
      if (t->kind != EX_OFK_CUDA && t->kind != EX_OFK_HIP)
        return lw_error_path(d, LW_EINVAL, t->imgs[0]->origin,
                             "--emit-fatbin-only takes CUDA or HIP device "
                             "code only, not %s code for '%s'",
                             ex_offload_kind_name(t->kind), t->triple);
      if (t->kind != p->t[0].kind)
        return lw_error_path(d, LW_EINVAL, t->imgs[0]->origin,
                             "--emit-fatbin-only: %s device code does not "
                             "go in one fatbinary with %s device code of '%s'",
                             ex_offload_kind_name(t->kind),
                             ex_offload_kind_name(p->t[0].kind),
                             p->t[0].imgs[0]->origin);
    }
  }
  /* An FPGA archive link writes an archive instead of wrapping and
   * linking (fpga.c); --emit-fatbin-only stops at the fatbinary, which
   * cuda.c writes to the output. */
  const struct lw_job_kind *last = o->fpga_link ? &lw__fpga_archive_kind
                                   : o->emit_fatbin_only ? NULL
                                                         : &wrap_kind;
  const struct lw_cache_options co = {
      o->cache_dir,           o->cache_size,
      o->verbose,             o->cache_remote,
      o->cache_remote_readonly, o->cache_remote_timeout_ms};
  int rc = o->cache_dir ? lw_cache_open(&co, &p->cache, d) : 0;
  /* wrap waits for every target (and for jobs the targets add later); with
   * the device side in the cache, for the lookup, which adds the targets'
   * jobs on a miss. */
  struct lw_job **firsts = calloc(p->n + 1, sizeof *firsts);
  size_t nfirst = 0;
  if (!rc && !firsts)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc && p->cache && lw__device_side_cacheable(p)) {
    if (!(firsts[0] = lw_graph_add(g, &lookup_kind, p, NULL, 0)) ||
        !(firsts[0]->what = strdup("look the device side up in the cache")))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    nfirst = 1;
  } else if (!rc) {
    rc = add_device_jobs(g, p, firsts, &nfirst, d);
  }
  if (!rc && last && (p->n || o->fpga_link) &&
      !(p->wrap = lw_graph_add(g, last, p, firsts, nfirst)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  free(firsts);
  if (!rc && o->fpga_link)
    return lw__fpga_archive_check(p, d);
  if (rc || o->emit_fatbin_only)
    return rc;
  p->link = lw_graph_add(g, &host_link_kind, p, &p->wrap, p->wrap ? 1 : 0);
  if (!p->link ||
      (o->relocatable && !lw_graph_add(g, &relocate_kind, p, &p->link, 1)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

int lw_plan_commit(struct lw_plan *p, struct lw_diag *d) {
  /* Done with the cache: it is evicted to its bound now, before the
   * process leaves without freeing. */
  lw_cache_close(p->cache);
  p->cache = NULL;
  if (p->o->dry_run || !p->out_tmp)
    return 0;
  return lw_tmp_commit(&p->out_tmp, p->o->output, d);
}

void lw_plan_free(struct lw_plan *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->n; i++) {
    p->t[i].planner->free(&p->t[i]);
    free(p->t[i].imgs);
  }
  for (size_t k = 0; k < p->nplanners; k++)
    if (p->planners[k]->free_plan)
      p->planners[k]->free_plan(p);
  free(p->t);
  free(p->sycl);
  free(p->omp);
  lw_buf_free(&p->dep_files);
  free(p->wrapped_ir);
  lw_cache_close(p->cache);
  lw_buf_free(&p->cached);
  lw_buf_free(&p->warnings);
  free(p);
}
