/* sycl.c - the SYCL device chain of one target.
 *   sycl-link    (in process) link every bitcode image of the target, then
 *                split the kernels into groups (devlink/split.c) - or, on
 *                every job slot, each unit with what it needs of the
 *                others (devlink/units.c). When it
 *                finishes it knows how many modules there are and adds the
 *                jobs that emit them: the graph grows, and wrap waits.
 *   sycl-super   (in process, in parallel) with many batches, the modules
 *                of super-batches, from which batches' modules are made.
 *   sycl-worker  forked from this process after the split (each starts
 *                with the linked bitcode in memory: no start-up, no file);
 *                each takes the next batch of modules until none is left,
 *                makes its bitcode, builds, emits and checks its modules
 *                (LLVM 22's SPIR-V back end keeps state from one module to
 *                the next: sycl_emit.c says how that is made safe), and
 *                sends the SPIR-V back, or a module found invalid to
 *   sycl-again   forked when a worker is done: each module it found
 *                invalid made again by a process of its own.
 *   sycl-module  (in process) the link's only module, emitted here: the
 *                process's first and last SPIR-V; or, with
 *                --spirv-translator=llvm-spirv, each module's bitcode, one
 *                after the other, each followed by
 *   llvm-spirv   a translator job.
 * Every module is built the same way whichever route emits it, so the
 * images are the same, byte for byte and in the same order, whatever
 * --wrapper-jobs is. */
#include "plan/planner.h"

#include <llvm/Config/llvm-config.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LW_STR2(x) #x
#define LW_STR(x) LW_STR2(x)

static const char *const split_names[] = {"off", "per_source", "per_kernel",
                                          "auto"};

/* The split: as asked, else none for a target made only for FPGAs (each
 * of its images would be a bitstream of its own, which the device must be
 * reprogrammed to switch to: DPC++ does not split for FPGAs either). */
static int split_mode(const struct target *t) {
  int fpga_only = t->nouts > 0;
  for (size_t i = 0; i < t->nouts; i++)
    fpga_only &= t->outs[i].kind == AOT_FPGA;
  return !t->plan->o->split_given && fpga_only ? DL_SPLIT_OFF
                                               : t->plan->o->split_mode;
}

static char *link_what(const struct target *t) {
  struct lw_buf names = {0};
  int rc = 0;
  for (size_t k = 0; !rc && k < t->nimgs; k++) {
    const char *o = t->imgs[k]->origin;
    rc = (k ? lw_buf_append(&names, ", ", 2) : 0) ||
         lw_buf_append(&names, o, strlen(o));
  }
  char *what = rc || lw_buf_append(&names, "", 1)
                   ? NULL
                   : lw_xasprintf("link %zu bitcode image(s) for %s%s and "
                                  "split (%s): %s",
                                  t->nimgs, t->triple,
                                  t->plan->nlibs ? ", then device libraries "
                                                   "only-needed,"
                                                 : "",
                                  split_names[split_mode(t)],
                                  (char *)names.data);
  lw_buf_free(&names);
  return what;
}

/* ---- sycl-module ---------------------------------------------------------- */

/* The module's SPIR-V is in m->image: keep and dump copies as asked. */
static int store(struct sycl_module *m, struct lw_diag *d) {
  const struct lw_options *o = m->t->plan->o;
  int rc = 0;
  if (m->image.len < 4)
    rc = lw_error(d, LW_ELLVM, "SPIR-V back end produced no module");
  if (!rc && m->spv && !m->spv_current)
    rc = lw_write_file(lw_tmp_path(m->spv), m->image.data, m->image.len, d);
  if (!rc && o->dump_dir) {
    char *path = lw_xasprintf("%s/%s_%zu.spv", o->dump_dir,
                              lw_base_name(o->output), m->index);
    rc = path ? lw_write_file(path, m->image.data, m->image.len, d)
              : lw_error(d, LW_ENOMEM, "out of memory");
    free(path);
  }
  return rc;
}

/* "<step> for module <i> of <triple> (<n> kernel(s))<rest>", malloc'd:
 * how a job names the module it works on. */
static char *module_what(const char *step, const struct target *t, size_t i,
                         const char *rest) {
  size_t nk = i < t->split.n ? t->split.g[i].kernels.n : 0;
  return lw_xasprintf("%s for module %zu of %s (%zu kernel(s))%s", step, i,
                      t->triple, nk, rest);
}

static int module_prepare(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct sycl_module *m = j->data;
  const struct lw_options *o = m->t->plan->o;
  const char *step = o->llvm_spirv ? "bitcode for llvm-spirv"
                                    : "SPIR-V code generation";
  char level[16];
  snprintf(level, sizeof level, " at O%d", o->opt_level);
  if (!j->what)
    j->what = o->dry_run
                  ? lw_xasprintf("%s for each split module of %s%s", step,
                                 m->t->triple, level)
                  : module_what(step, m->t, m->index, level);
  if (o->llvm_spirv)
    return lw_tmp_create("sycl-module", "bc", &m->bc, d);
  if (o->save_temps)
    return lw_tmp_create("sycl-spirv64", "spv", &m->spv, d);
  return 0;
}

static int module_run(struct lw_job *j, struct lw_diag *d) {
  struct sycl_module *m = j->data;
  if (!m->bc) {
    int rc = lw__sycl_emit(m->t, NULL, m->index, m->index + 1, LW__EMIT_ONLY,
                           lw__to_buf, &m->image, d);
    if (rc == LW_EBADOUT) { /* the report names the module as a worker's */
      char msg[sizeof d->msg];
      snprintf(msg, sizeof msg, "%s", d->msg);
      d->code = 0;
      return lw_error(d, rc, "%s: %s", j->what, msg);
    }
    return 0;
  }
  struct dl_module *mod = NULL;
  int rc = dl_split_module(&m->t->split, m->index, &mod, d);
  if (!rc)
    rc = dl_write_bitcode(mod, lw_tmp_path(m->bc), d);
  dl_module_free(mod);
  return rc;
}

/* The module's SPIR-V is final (linked with the SPIR-V inputs it needs):
 * its copies, then its AOT devices. */
static int finish(struct lw_graph *g, struct sycl_module *m,
                  struct lw_diag *d) {
  int rc = m->t->plan->o->dry_run ? 0 : store(m, d);
  return rc ? rc : lw__aot_module_ready(g, m, d);
}

/* Module m's SPIR-V is made: linked with the SPIR-V inputs it needs, then
 * finished. */
static int emitted(struct lw_graph *g, struct sycl_module *m,
                   struct lw_diag *d) {
  return lw__spv_link(g, m, finish, d);
}

/* ---- llvm-spirv: an external translator for each module's bitcode --------- */

static int translate_prepare(struct lw_graph *g, struct lw_job *j,
                             struct lw_diag *d) {
  (void)g;
  struct sycl_module *m = j->data;
  const struct lw_options *o = m->t->plan->o;
  int rc = lw_tmp_create("sycl-spirv64", "spv", &m->spv, d);
  if (rc)
    return rc;
  j->hint = "llvm-spirv must be built for LLVM " LW_STR(LLVM_VERSION_MAJOR)
            " to read fatlink's bitcode (the default --spirv-translator="
            "backend needs no llvm-spirv)";
  if (lw_strvec_push(&j->argv, o->llvm_spirv) ||
      lw_strvec_extend_from(&j->argv, &o->llvm_spirv_opts) ||
      lw_strvec_push(&j->argv, lw_tmp_path(m->bc)) ||
      lw_strvec_push(&j->argv, "-o") ||
      lw_strvec_push(&j->argv, lw_tmp_path(m->spv)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static int translate_done(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  struct sycl_module *m = j->data;
  m->spv_current = 1;
  int rc = m->t->plan->o->dry_run
               ? 0
               : lw_read_file(lw_tmp_path(m->spv), &m->image, d);
  return rc ? rc : lw__spv_link(g, m, finish, d);
}

static const struct lw_job_kind translate_kind = {
    .name = "llvm-spirv", .prepare = translate_prepare, .done = translate_done};

/* The module's SPIR-V goes on to its AOT devices; with llvm-spirv, its
 * bitcode goes to a translator job first. */
static int module_done(struct lw_graph *g, struct lw_job *j,
                       struct lw_diag *d) {
  struct sycl_module *m = j->data;
  if (!m->bc)
    return lw__spv_link(g, m, finish, d);
  struct lw_job *tj = lw_graph_add(g, &translate_kind, m, NULL, 0);
  if (!tj || lw_graph_add_dep(g, m->t->plan->wrap, tj))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

static const struct lw_job_kind module_kind = {
    .name = "sycl-module", .prepare = module_prepare, .run = module_run,
    .done = module_done};

/* ---- sycl-worker: forked processes emitting whole batches ----------------- */

/* What the workers of a target share: batches in the order they are taken
 * (biggest first), and a page shared with the children: the next batch to
 * take, and the module each worker is on. Each worker takes the next batch
 * when it is done with one, so they finish together. */
struct sycl_pool {
  struct target *t;
  size_t *order; /* of the t->split.nbatches batches */
  size_t delivered, finished;
  size_t *again, nagain; /* modules the workers found invalid */
  size_t again_done;      /* of them, made again */
  struct pool_page {
    _Atomic size_t next;
    size_t at[];
  } *page;
  size_t page_size;
};

struct worker {
  struct sycl_pool *pool;
  size_t k;
};

static void pool_free(struct sycl_pool *p) {
  if (!p)
    return;
  if (p->page)
    munmap(p->page, p->page_size);
  free(p->order);
  free(p->again);
  free(p);
}

static int worker_prepare(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d) {
  (void)g;
  struct worker *w = j->data;
  const struct target *t = w->pool->t;
  j->what = lw_xasprintf("SPIR-V code generation at O%d for modules of %s "
                         "(%zu batches), worker %zu of %zu",
                         t->plan->o->opt_level, t->triple,
                         t->split.nbatches, w->k + 1, (size_t)t->workers);
  return j->what ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

/* A module made, for this process's parent: its index, its size and its
 * SPIR-V (none, size 0: to make again); the worker is on the next one. */
struct to_parent {
  size_t *at; /* where the worker says which module it is on, or NULL */
  struct lw_buf *out;
};

static int to_main(void *ctx, size_t i, const unsigned char *spv, size_t n,
                   struct lw_diag *d) {
  struct to_parent *tp = ctx;
  if (tp->at)
    *tp->at = i + 1;
  return lw__put_u64(tp->out, i) || lw__put_u64(tp->out, n) ||
                 lw_buf_append(tp->out, spv, n)
             ? lw_error(d, LW_ENOMEM, "out of memory")
             : 0;
}

/* Batches until none is left: each emitted here (or, with
 * --sycl-emit-isolation=batch, by a child forked for it; =module, each
 * module by its own). */
static int worker_run(struct lw_job *j, struct lw_buf *out,
                      struct lw_diag *d) {
  struct worker *w = j->data;
  struct sycl_pool *p = w->pool;
  struct target *t = p->t;
  struct dl_split *s = &t->split;
  struct to_parent tp = {&p->page->at[w->k], out};
  int iso = t->plan->o->emit_isolation, alone = iso == LW_EMIT_MODULE;
  int rc = 0;
  for (size_t k;
       !rc && (k = atomic_fetch_add(&p->page->next, 1)) < s->nbatches;) {
    size_t b = p->order[k], first = b * s->batch_size, end = first;
    while (end < s->n && dl_split_batch(s, end) == b)
      end++;
    p->page->at[w->k] = first;
    /* The batch's child makes the batch's bitcode (what that leaves
     * behind would cost each later child a copy-on-write fault per page:
     * 0.25 s of system time on the 4,000-kernel program); one child per
     * module shares the worker's. */
    if (alone)
      rc = dl_split_make_batch(s, b, d);
    /* Each run of the batch's modules that are not emitted in parts */
    for (size_t i = first, e; !rc && i < end; i = e) {
      for (e = i; e < end && !lw__sycl_parted(t, e); e++)
        ;
      if (e == i) {
        e++;
        continue;
      }
      if (iso == LW_EMIT_WORKER)
        rc = lw__sycl_emit(t, NULL, i, e, LW__EMIT_HANDBACK, to_main, &tp, d);
      for (size_t u = i; iso != LW_EMIT_WORKER && !rc && u < e;
           u = alone ? u + 1 : e)
        rc = lw__sycl_emit(t, NULL, u, alone ? u + 1 : e, LW__EMIT_CHILD,
                           to_main, &tp, d);
    }
    if (iso == LW_EMIT_WORKER && s->batch) /* it serves the next batch */
      lw_buf_free(&s->batch[b]);
  }
  return rc;
}

/* A module the workers found invalid (again[k]), by a child of its own,
 * forked from a process whose back end has emitted nothing. */
static int again_run(struct lw_job *j, struct lw_buf *out,
                     struct lw_diag *d) {
  struct worker *w = j->data;
  size_t i = w->pool->again[w->k];
  struct to_parent tp = {NULL, out};
  return lw__sycl_emit(w->pool->t, NULL, i, i + 1, LW__EMIT_CHILD, to_main, &tp,
                       d);
}

/* The child failed or was killed: name the module it was on. */
static void worker_failed(struct lw_job *j) {
  struct worker *w = j->data;
  char *what = module_what("SPIR-V code generation", w->pool->t,
                           w->pool->page->at[w->k], " in a forked worker");
  if (what) {
    free(j->what);
    j->what = what;
  }
}

static const struct lw_job_kind again_kind;

/* What a worker (or sycl-again) sent: each module's SPIR-V, or a module
 * to make again. */
static int take_made(struct lw_graph *g, struct lw_job *j,
                     struct lw_diag *d) {
  struct worker *w = j->data;
  struct sycl_pool *p = w->pool;
  struct target *t = p->t;
  const unsigned char *at = j->out.data;
  size_t left = j->out.len;
  int rc = 0;
  while (!rc && left) {
    uint64_t i = left >= 16 ? lw__get_u64(at) : UINT64_MAX;
    uint64_t size = left >= 16 ? lw__get_u64(at + 8) : 0;
    if (i >= t->split.n || t->modules[i].image.len ||
        (size != 0 && size < 4) || size > left - 16 ||
        (size == 0 && (j->kind == &again_kind || p->nagain == t->split.n))) {
      rc = lw_error(d, LW_EFORMAT, "%s: malformed output", j->what);
      break;
    }
    at += 16;
    left -= 16;
    if (size == 0) {
      if (!p->again && !(p->again = calloc(t->split.n, sizeof *p->again)))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
      else
        p->again[p->nagain++] = (size_t)i;
      continue;
    }
    struct sycl_module *m = &t->modules[i];
    if (lw_buf_append(&m->image, at, (size_t)size))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    at += size;
    left -= (size_t)size;
    p->delivered++;
    if (!rc && t->plan->o->save_temps)
      rc = lw_tmp_create("sycl-spirv64", "spv", &m->spv, d);
    if (!rc)
      rc = lw__spv_link(g, m, finish, d);
  }
  return rc;
}

static int all_made(const struct sycl_pool *p, struct lw_diag *d) {
  const struct target *t = p->t;
  return p->delivered + t->nparted == t->split.n
             ? 0
             : lw_error(d, LW_EFORMAT,
                        "the workers made %zu of %zu modules of %s",
                        p->delivered, t->split.n, t->triple);
}

/* Every worker and every module made again done: all must be there. */
static int pool_done(const struct sycl_pool *p, struct lw_diag *d) {
  if (p->finished < (size_t)p->t->workers || p->again_done < p->nagain)
    return 0;
  return all_made(p, d);
}

static int worker_done(struct lw_graph *g, struct lw_job *j,
                       struct lw_diag *d) {
  struct worker *w = j->data;
  struct sycl_pool *p = w->pool;
  size_t before = p->nagain;
  int rc = take_made(g, j, d);
  /* Each module this worker found invalid is made again at once, beside
   * the workers still running. */
  for (size_t k = before; !rc && k < p->nagain; k++) {
    struct worker *aw = calloc(1, sizeof *aw);
    if (aw)
      *aw = (struct worker){p, k};
    struct lw_job *aj = aw ? lw_graph_add(g, &again_kind, aw, NULL, 0) : NULL;
    if (!aj || lw_graph_add_dep(g, p->t->plan->wrap, aj))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    else
      aj->footprint = j->footprint;
  }
  if (rc)
    return rc;
  p->finished++;
  return pool_done(p, d);
}

static int again_prepare(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d) {
  (void)g;
  struct worker *w = j->data;
  j->what = module_what("SPIR-V code generation", w->pool->t,
                        w->pool->again[w->k],
                        ", made again by a process of its own");
  return j->what ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

static int again_done(struct lw_graph *g, struct lw_job *j,
                      struct lw_diag *d) {
  struct worker *w = j->data;
  int rc = take_made(g, j, d);
  if (rc)
    return rc;
  w->pool->again_done++;
  return pool_done(w->pool, d);
}

/* sycl-super: a super-batch's module, made here before the workers fork
 * (in parallel; the batches' modules are made from them). */
static int super_prepare(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d) {
  (void)g;
  struct worker *w = j->data;
  const struct target *t = w->pool->t;
  j->what = lw_xasprintf("the module of super-batch %zu of %zu of %s",
                         w->k, t->split.nsupers, t->triple);
  return j->what ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

static int super_run(struct lw_job *j, struct lw_diag *d) {
  struct worker *w = j->data;
  return dl_split_make_super(&w->pool->t->split, w->k, d);
}

/* sycl-release: the linked module freed beside the super-batches (its
 * bitcode serves them), before the workers fork. */
static int release_prepare(struct lw_graph *g, struct lw_job *j,
                           struct lw_diag *d) {
  (void)g;
  const struct target *t = j->data;
  j->what = lw_xasprintf("free the linked module of %s", t->triple);
  return j->what ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
}

static int release_run(struct lw_job *j, struct lw_diag *d) {
  (void)d;
  struct target *t = j->data;
  dl_split_release(&t->split);
  return 0;
}

static const struct lw_job_kind release_kind = {
    .name = "sycl-release", .prepare = release_prepare, .run = release_run};

static const struct lw_job_kind super_kind = {
    .name = "sycl-super", .prepare = super_prepare, .run = super_run,
    .free_data = free};

static const struct lw_job_kind worker_kind = {
    .name = "sycl-worker", .prepare = worker_prepare, .done = worker_done,
    .free_data = free, .fork_run = worker_run, .fork_failed = worker_failed};

static const struct lw_job_kind again_kind = {
    .name = "sycl-again", .prepare = again_prepare, .done = again_done,
    .free_data = free, .fork_run = again_run};

/* SPIR-V: so marked, or unmarked and SPIR-V (llvm-offload-binary 22 marks
 * a .spv file as no kind). */
static int spirv_image(const struct ex_image *img) {
  return img->image_kind == EX_IMG_SPIRV ||
         (img->image_kind == EX_IMG_NONE &&
          ex_sniff_image_kind(img->data, img->size) == EX_IMG_SPIRV);
}

/* ---- device libraries ------------------------------------------------------ */

static int add_lib(struct lw_plan *p, const unsigned char *data, size_t size,
                   const char *name, struct lw_diag *d) {
  struct dl_input *nl = realloc(p->libs, (p->nlibs + 1) * sizeof *nl);
  if (!nl)
    return lw_error(d, LW_ENOMEM, "out of memory");
  p->libs = nl;
  p->libs[p->nlibs++] = (struct dl_input){data, size, name, 1};
  return 0;
}

/* A library is plain device bitcode, a SPIR-V module, or a fat object (or
 * archive) whose SYCL bitcode and SPIR-V images are the library; either way
 * its bytes stay in `bc`. */
static int load_lib(struct lw_plan *p, const char *path, struct lw_buf *bc,
                    struct lw_diag *d) {
  size_t before = p->lib_images.n;
  int rc = lw_read_file(path, bc, d);
  if (rc)
    return rc;
  unsigned kind = ex_sniff_image_kind(bc->data, bc->len);
  if (kind == EX_IMG_BITCODE)
    return add_lib(p, bc->data, bc->len, path, d);
  if (kind == EX_IMG_SPIRV)
    return lw__spv_add(&p->spv_libs, bc->data, bc->len, path, path, d);
  if ((rc = ex_scan_buffer(&p->lib_images, bc->data, bc->len, path, d)))
    return rc;
  size_t found = 0;
  for (size_t i = before; !rc && i < p->lib_images.n; i++) {
    const struct ex_image *img = &p->lib_images.images[i];
    if (img->offload_kind != EX_OFK_SYCL ||
        (img->image_kind != EX_IMG_BITCODE && !spirv_image(img)))
      continue;
    rc = spirv_image(img)
             ? lw__spv_add(&p->spv_libs, img->data, img->size, img->origin,
                           NULL, d)
             : add_lib(p, img->data, img->size, img->origin, d);
    found++;
  }
  if (rc)
    return rc;
  if (!found)
    return lw_error_path(d, LW_EFORMAT, path,
                         "SYCL device library holds no SYCL device code");
  return 0;
}

static int load_libs(struct lw_plan *p, struct lw_diag *d) {
  const struct lw_options *o = p->o;
  size_t n = o->device_libs.n;
  if (!n)
    return 0;
  p->lib_bitcode = calloc(n, sizeof *p->lib_bitcode);
  if (!p->lib_bitcode)
    return lw_error(d, LW_ENOMEM, "out of memory");
  int rc = lw__device_lib_paths(o, &o->device_libs, &p->lib_paths)
               ? lw_error(d, LW_ENOMEM, "out of memory")
               : 0;
  for (size_t i = 0; !rc && i < n; i++) {
    const char *path = p->lib_paths.v[i];
    if (access(path, R_OK) != 0)
      rc = lw_error_path(d, LW_EIO, path, "SYCL device library not found%s",
                         o->device_lib_dir
                             ? ""
                             : " (no --sycl-device-library-location= given)");
    else
      rc = load_lib(p, path, &p->lib_bitcode[i], d);
  }
  return rc;
}

static void free_plan(struct lw_plan *p) {
  lw__aot_free_plan(p);
  free(p->libs);
  ex_set_free(&p->lib_images); /* points into lib_bitcode */
  lw__spv_free(&p->spv_libs);
  for (size_t i = 0; p->lib_bitcode && i < p->o->device_libs.n; i++)
    lw_buf_free(&p->lib_bitcode[i]);
  free(p->lib_bitcode);
  lw_strvec_free(&p->lib_paths);
}

/* ---- sycl-link ----------------------------------------------------------- */

/* How many workers: each is forked from this process after the split and
 * emits the batches it takes (sycl_emit.c). As many as there are
 * job slots and batches; one for a little code, where a second would cost
 * more to fork than it saves (measured on 2 cores, real_link.py programs:
 * 3,700 instructions of modules link in 0.36 s with a second worker
 * against 0.39 s without, 15,000 in 0.61 s against 0.80 s; 680
 * instructions beside 1,500 host objects, a big process to fork, were
 * slower with it). --parallel-link-sycl=N asks for N whatever the cost.
 * The output is the same either way. */
enum { FORK_MIN_INSTRUCTIONS = 3000 };

static int decide_workers(struct target *t) {
  const struct lw_options *o = t->plan->o;
  const struct dl_split *s = &t->split;
  size_t total = 0;
  for (size_t i = 0; i < s->n; i++)
    total += s->g[i].cost;
  t->cost = total;
  int slots = o->sycl_jobs && o->sycl_jobs < o->jobs ? o->sycl_jobs : o->jobs;
  if (!o->sycl_jobs && total < FORK_MIN_INSTRUCTIONS)
    slots = 1;
  if (o->dry_run || o->llvm_spirv || s->nbatches == 0)
    return 0;
  return (size_t)slots < s->nbatches ? slots : (int)s->nbatches;
}

/* May the target's one module be emitted in this process? Only if it is
 * the link's only SPIR-V and nothing was emitted here before: a later fork
 * would inherit the back end's state. */
static int emit_here(const struct target *t) {
  const struct lw_plan *p = t->plan;
  size_t sycl = 0;
  for (size_t k = 0; k < p->n; k++)
    sycl += p->t[k].planner == &lw_sycl_planner;
  return t->split.n == 1 && sycl == 1 && dl_spirv_fresh();
}

static unsigned split_flags(const struct target *t) {
  const struct lw_options *o = t->plan->o;
  unsigned spec = 0;
  for (size_t k = 0; k < t->nouts; k++)
    spec |= lw__aot_spec_modes(t, k);
  return spec |
         (o->relocatable || o->sycl_allow_undefined ? DL_ALLOW_UNDEFINED : 0) |
         (o->sycl_dynamic_linking ? DL_DYNAMIC_LINKING : 0) |
         (o->sycl_emit_imported ? DL_EMIT_IMPORTED : 0) |
         (o->sycl_emit_exported ? DL_EMIT_EXPORTED : 0) |
         (o->sycl_allow_size_mismatch ? DL_NO_SIZE_CHECK : 0) |
         (o->sycl_keep_externals ? DL_EXTERNAL_ENTRIES : 0) | DL_IMAGE_SCOPE |
         DL_KEEP_LINKED;
}

static int link_run(struct lw_job *j, struct lw_diag *d) {
  struct target *t = j->data;
  const struct lw_plan *p = t->plan;
  if (!t->nimgs)
    return 0; /* SPIR-V images only: nothing to split */
  struct dl_input *in = calloc(t->nimgs + p->nlibs, sizeof *in);
  struct lw_strvec elsewhere = {0};
  if (!in || lw__spv_exports(t, &elsewhere)) {
    free(in);
    lw_strvec_free(&elsewhere);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < t->nimgs; i++)
    in[i] = (struct dl_input){t->imgs[i]->data, t->imgs[i]->size,
                              t->imgs[i]->origin, 0};
  if (p->nlibs)
    memcpy(in + t->nimgs, p->libs, p->nlibs * sizeof *in);
  /* The link is the only job while it runs when the plan has one target:
   * then it may take every job slot (in units; a whole link, two). In
   * units where the program allows (dl_split_units says where not), else
   * whole. */
  int alone = p->n == 1, rc = 1;
  if (!p->o->whole_link)
    rc = dl_split_units(in, t->nimgs + p->nlibs, "spirv64-unknown-unknown",
                        (enum dl_split_mode)split_mode(t), p->o->opt_level,
                        split_flags(t), &elsewhere, alone ? p->o->jobs : 1,
                        &t->split, d);
  if (!rc && p->o->verbose)
    fprintf(stderr, "fatlink: the device code of %s linked and split in "
                    "units: %zu of them\n",
            t->triple, t->split.nunits);
  if (rc == 1)
    rc = dl_link(in, t->nimgs + p->nlibs, "spirv64-unknown-unknown",
                 alone && p->o->jobs > 1 ? 2 : 1, &t->mod, d);
  free(in);
  if (!rc && t->mod)
    dl_itt_stubs(t->mod);
  if (!rc && t->mod)
    rc = dl_split(&t->mod, (enum dl_split_mode)split_mode(t),
                  t->plan->o->opt_level, split_flags(t), &elsewhere,
                  &t->split, d);
  lw_strvec_free(&elsewhere);
  /* DPC++'s driver asks its post-link to lower ESIMD code: fatlink cannot */
  for (size_t g = 0; !rc && p->o->sycl_lower_esimd && g < t->split.n; g++)
    if (t->split.g[g].esimd && t->split.g[g].kernels.n)
      rc = lw_error(d, LW_ENOTSUP,
                    "ESIMD kernel '%s': fatlink has no ESIMD lowering "
                    "(post-link -lower-esimd is DPC++'s pass)",
                    t->split.g[g].kernels.v[0]);
  if (!rc)
    t->workers = decide_workers(t);
  if (!rc)
    rc = lw__sycl_cut(t, d);
  return rc;
}

/* Biggest batches first: the last ones taken are small. */
static int by_cost(const void *a, const void *b, void *costs) {
  const size_t *c = costs;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  if (c[x] != c[y])
    return c[x] < c[y] ? 1 : -1;
  return (x > y) - (x < y);
}

static int add_workers(struct lw_graph *g, struct target *t,
                       struct lw_diag *d) {
  const struct dl_split *s = &t->split;
  size_t nb = s->nbatches, nw = (size_t)t->workers;
  struct sycl_pool *p = t->pool = calloc(1, sizeof *p);
  size_t *cost = calloc(nb, sizeof *cost);
  if (!p || !cost || !(p->order = calloc(nb, sizeof *p->order))) {
    free(cost);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  p->t = t;
  p->page_size = sizeof *p->page + nw * sizeof p->page->at[0];
  void *page = mmap(NULL, p->page_size, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    free(cost);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  p->page = page;
  for (size_t i = 0; i < s->n; i++) /* (a module in parts: not theirs) */
    cost[dl_split_batch(s, i)] += lw__sycl_parted(t, i) ? 0 : s->g[i].cost + 1;
  for (size_t b = 0; b < nb; b++)
    p->order[b] = b;
  qsort_r(p->order, nb, sizeof *p->order, by_cost, cost);
  uint64_t footprint = lw__emit_footprint(cost[p->order[0]]);
  free(cost);
  /* The workers wait for the super-batches and for the linked module's
   * release (none after a link in units) */
  size_t ns = s->nsupers, nrel = s->linked != NULL;
  struct lw_job **supers = calloc(ns + 1, sizeof *supers);
  int rc = supers && (!nrel || (supers[ns] = lw_graph_add(g, &release_kind, t,
                                                          NULL, 0)))
               ? 0
               : lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t k = 0; !rc && k < ns; k++) {
    struct worker *w = calloc(1, sizeof *w);
    if (w)
      *w = (struct worker){p, k};
    if (!w || !(supers[k] = lw_graph_add(g, &super_kind, w, NULL, 0)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  for (size_t k = 0; !rc && k < nw; k++) {
    struct worker *w = calloc(1, sizeof *w);
    if (w)
      *w = (struct worker){p, k};
    struct lw_job *wj =
        w ? lw_graph_add(g, &worker_kind, w, supers, ns + nrel) : NULL;
    if (!wj || lw_graph_add_dep(g, t->plan->wrap, wj))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    else
      wj->footprint = footprint;
  }
  free(supers);
  return rc;
}

/* One sycl-module job per group (in process, in order) or the workers;
 * wrap now waits for them too. */
static int link_done(struct lw_graph *g, struct lw_job *j,
                     struct lw_diag *d) {
  struct target *t = j->data;
  for (size_t i = 0; i < t->split.warnings.n; i++)
    lw__warn(t->plan, "%s", t->split.warnings.v[i]);
  lw__aot_spec_warning(t);
  int rc0 = lw__aot_check_virtual(t, d);
  if (rc0)
    return rc0;
  size_t n = t->plan->o->dry_run && t->nimgs ? 1 : t->split.n, all = n;
  for (size_t k = 0; k < t->spv.n; k++)
    all += t->spv.o[k].link.entries.n > 0;
  if (!all) {
    lw__warn(t->plan, "no SYCL kernels in the device code for '%s'",
             t->triple);
    return 0;
  }
  if (!(t->modules = calloc(all, sizeof *t->modules)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  t->nmodules = all;
  for (size_t i = 0; i < all; i++) {
    t->modules[i].t = t;
    t->modules[i].index = i;
  }
  /* SPIR-V images with kernels: modules of their own, already emitted */
  int rc = 0;
  for (size_t k = 0, i = n; !rc && k < t->spv.n; k++) {
    struct sycl_module *m = &t->modules[i];
    if (!t->spv.o[k].link.entries.n)
      continue;
    m->obj = &t->spv.o[k];
    i++;
    rc = lw_buf_append(&m->image, m->obj->data, m->obj->size)
             ? lw_error(d, LW_ENOMEM, "out of memory")
             : lw__spv_link(g, m, finish, d);
  }
  if (rc || !n)
    return rc;
  if (emit_here(t) || t->nparted == n)
    t->workers = 0;
  if (t->plan->o->verbose && !t->plan->o->dry_run)
    fprintf(stderr,
            "fatlink: %zu module(s) of %s in %zu batch(es), %zu instructions: "
            "%s%s\n",
            n, t->triple, t->split.nbatches, t->cost,
            t->nparted == n ? "emitted in parts, each by a process of its own"
            : !t->workers ? (t->plan->o->llvm_spirv
                               ? "bitcode for llvm-spirv, in process"
                               : "the link's only module, emitted in process")
            : t->plan->o->emit_isolation == LW_EMIT_MODULE
                ? "each module emitted by a process of its own"
            : t->plan->o->emit_isolation == LW_EMIT_BATCH
                ? "each batch emitted by a process of its own"
                : "emitted by the workers",
            t->nparted && t->nparted < n ? ", the biggest in parts" : "");
  if ((rc = lw__sycl_parts(g, t, emitted, d)))
    return rc;
  if (t->workers)
    return add_workers(g, t, d);
  dl_split_release(&t->split);
  /* In process: the one module, or each module's bitcode for llvm-spirv,
   * in order. */
  struct lw_job *prev = NULL;
  for (size_t i = 0; !rc && i < n; i++) {
    if (lw__sycl_parted(t, i))
      continue;
    struct lw_job *mj = lw_graph_add(g, &module_kind, &t->modules[i], &prev,
                                     prev ? 1 : 0);
    if (!mj || lw_graph_add_dep(g, t->plan->wrap, mj))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    prev = mj;
  }
  return rc;
}

static const struct lw_job_kind link_kind = {
    .name = "sycl-link", .run = link_run, .done = link_done};

/* ---- the planner ----------------------------------------------------------- */

static const char *unsupported(const struct ex_image *img) {
  enum aot_target aot = aot_classify(img->triple);
  if (aot == AOT_UNKNOWN)
    return "SYCL device triple";
  /* An object file is refused when the link is planned (first_job): a dry
   * run, reading no image, takes it as upstream's does. */
  if (img->image_kind != EX_IMG_BITCODE && img->image_kind != EX_IMG_OBJECT &&
      !spirv_image(img))
    return "SYCL device image kind";
  return NULL;
}

/* The target's SPIR-V images go beside its bitcode (sycl_spirv.c). */
static int take_spirv(struct target *t, struct lw_diag *d) {
  size_t kept = 0;
  int rc = 0;
  for (size_t i = 0; !rc && i < t->nimgs; i++) {
    const struct ex_image *img = t->imgs[i];
    if (spirv_image(img))
      rc = lw__spv_add(&t->spv, img->data, img->size, img->origin, NULL, d);
    else
      t->imgs[kept++] = img;
  }
  t->nimgs = kept;
  return rc;
}

/* The device libraries (once for every SYCL target), what the target's
 * modules become, then its link job. */
static int first_job(struct lw_graph *g, struct target *t, struct lw_job **out,
                     struct lw_diag *d) {
  struct lw_plan *p = t->plan;
  for (size_t i = 0; !p->o->dry_run && i < t->nimgs; i++)
    if (t->imgs[i]->image_kind == EX_IMG_OBJECT && !spirv_image(t->imgs[i]))
      return lw_error_path(d, LW_ENOTSUP, t->imgs[i]->origin,
                           "SYCL device image kind is not supported yet (kind "
                           "sycl, image o, triple '%s')",
                           t->triple);
  int rc = p->lib_bitcode ? 0 : load_libs(p, d);
  if (!rc)
    rc = take_spirv(t, d);
  t->aot = aot_classify(t->triple);
  if (!rc)
    rc = lw__aot_plan_target(t, d);
  for (size_t u = 0; !rc && u < t->nouts; u++)
    if (t->outs[u].kind != AOT_JIT)
      rc = lw__native_abi_check(p, t->outs[u].name, d);
  if (rc)
    return rc;
  if (!(*out = lw_graph_add(g, &link_kind, t, NULL, 0)) ||
      !((*out)->what = link_what(t)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return 0;
}

/* Neither upstream layout (--sycl-abi=llvm22, llvm23) has property sets: a
 * module whose runtime needs one of these cannot be registered in it, and
 * is refused by name rather than registered without it. */
static int upstream_carries(const struct lw_options *o,
                          const struct dl_props *props, size_t k,
                          const char *triple, struct lw_diag *d) {
  static const char *const needed[] = {
      "SYCL/specialization constants", "SYCL/device globals",
      "SYCL/virtual functions",        "SYCL/exported symbols",
      "SYCL/imported symbols",         "SYCL/host pipes"};
  for (size_t i = 0; o->sycl_abi != WRP_SYCL_DPCPP && i < props->n; i++)
    for (size_t j = 0; j < LW_ARRAY_SIZE(needed); j++)
      if (props->s[i].n && strcmp(props->s[i].name, needed[j]) == 0)
        return lw_error(d, LW_EINVAL,
                        "--sycl-abi=%s cannot register module %zu of %s: "
                        "it needs property set '%s', which LLVM %s's "
                        "layout has not (use --sycl-abi=dpcpp)",
                        o->sycl_abi == WRP_SYCL_LLVM22 ? "llvm22" : "llvm23",
                        k, triple, needed[j],
                        o->sycl_abi == WRP_SYCL_LLVM22 ? "22" : "23");
  return 0;
}

/* Per module: its JIT SPIR-V and native images side by side, each with the
 * module's kernels and property sets (the "SYCL Modules" proposal). */
static int images(struct lw_plan *p, struct target *t, struct lw_diag *d) {
  static const struct dl_props none;
  /* A dry run links nothing: its module registers the image upstream's
   * dry run has, empty, of no format, with one entry named "stub". */
  static char *stub_name[] = {"stub"};
  static const struct lw_strvec stub = {stub_name, 1, 1};
  if (p->o->dry_run) {
    if (lw_grow(&p->sycl, p->nsycl, &p->capsycl, sizeof *p->sycl, 16))
      return lw_error(d, LW_ENOMEM, "out of memory");
    p->sycl[p->nsycl++] = (struct wrp_sycl_image){
        (const unsigned char *)"", 0, "", WRP_FMT_NONE, "", "", &stub, NULL,
        0, ""};
    return 0;
  }
  lw__aot_check_coverage(t);
  for (size_t k = 0; k < t->nmodules; k++) {
    struct sycl_module *m = &t->modules[k];
    if (!m->image.len)
      continue; /* nothing was made of it */
    /* a SPIR-V input's module: its entry points, no property sets */
    const struct dl_group *gr = k < t->split.n ? &t->split.g[k] : NULL;
    for (size_t u = 0; u < t->nouts; u++) {
      const struct sycl_out *out = &t->outs[u];
      const struct lw_buf *img =
          out->kind == AOT_JIT ? &m->image : &m->aot[u].image;
      if (!lw__aot_takes(t, u, k) ||
          (out->kind != AOT_JIT && (m->aot[u].dropped || !img->len)))
        continue;
      const struct dl_props *props = out->kind != AOT_JIT ? &m->aot[u].props
                                     : gr                 ? &gr->props
                                                          : &none;
      int rc = upstream_carries(p->o, props, k, t->triple, d);
      if (rc)
        return rc;
      if (lw_grow(&p->sycl, p->nsycl, &p->capsycl, sizeof *p->sycl, 16))
        return lw_error(d, LW_ENOMEM, "out of memory");
      p->sycl[p->nsycl++] = (struct wrp_sycl_image){
          img->data,
          img->len,
          aot_runtime_target(out->kind),
          out->kind == AOT_JIT ? WRP_FMT_SPIRV : WRP_FMT_NATIVE,
          p->o->sycl_compile_opts ? p->o->sycl_compile_opts : "",
          p->o->sycl_link_opts ? p->o->sycl_link_opts : "",
          gr ? &gr->kernels : &m->obj->link.entries,
          props->s,
          props->n,
          t->triple};
    }
  }
  return 0;
}

static void free_target(struct target *t) {
  lw__aot_free(t);
  pool_free(t->pool);
  t->pool = NULL;
  lw__sycl_parts_free(t);
  dl_module_free(t->mod);
  t->mod = NULL;
  dl_split_free(&t->split);
  for (size_t i = 0; i < t->nmodules; i++)
    lw_buf_free(&t->modules[i].image);
  free(t->modules);
  t->modules = NULL;
  t->nmodules = 0;
  lw__spv_free(&t->spv);
}

const struct lw_planner lw_sycl_planner = {.kind = EX_OFK_SYCL,
                                           .whole_cache = 1,
                                           .unsupported = unsupported,
                                           .first_job = first_job,
                                           .images = images,
                                           .free = free_target,
                                           .free_plan = free_plan};
