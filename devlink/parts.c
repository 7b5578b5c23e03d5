/* parts.c - one big module's code generation on several processes. LLVM's
 * SPIR-V back end emits a module on one thread (and one module per process
 * at a time, llvm-project issue 160613), so a link whose kernels all land
 * in one module (split off, or one translation unit) used one core for its
 * whole emission. Here the module, built and lowered as it would be to be
 * emitted whole, is cut into parts: consecutive runs of its kernels in
 * module order, each run as costly as the next (instructions of the
 * functions it reaches, those it shares with another run counted in both),
 * each part's module taking what its kernels reach, copied in as internal
 * functions (as the split copies a helper into every module that needs it).
 * The first part also defines everything else of external linkage; the
 * others declare the variables among them, so that there is one of each
 * when spirvmerge.c joins the parts' SPIR-V into one module. The parts are
 * fixed by the module alone (not by the job count): the merged module is
 * the same, byte for byte, however many processes emitted it. The split's
 * only module, or one of several (built here from its batch's bitcode,
 * which the split keeps for the others).
 *
 * Not cut: modules whose meaning could change when a function or a
 * variable is copied - a mutable variable of global memory that is not
 * external (each part would get its own), a function whose address is
 * taken (its copies would differ in address), virtual functions, ESIMD
 * code, SYCL_EXTERNAL functions exported for dynamic linking. */
#include "internal.h"

#include <llvm-c/BitWriter.h>
#include <stdlib.h>
#include <string.h>

enum { ADDRSPACE_GLOBAL = 1, ADDRSPACE_GENERIC = 4 };

/* Why the module may not be cut, or NULL. */
static const char *uncuttable(LLVMModuleRef m) {
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    unsigned as = LLVMGetPointerAddressSpace(LLVMTypeOf(g));
    if (!LLVMIsDeclaration(g) && dl__is_local(g) &&
        !LLVMIsGlobalConstant(g) &&
        (as == ADDRSPACE_GLOBAL || as == ADDRSPACE_GENERIC))
      return "a mutable variable in global memory";
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f;
       f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f))
      continue;
    for (LLVMUseRef u = LLVMGetFirstUse(f); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (!LLVMIsACallInst(user) || LLVMGetCalledValue(user) != f)
        return "a function whose address is taken";
    }
  }
  return NULL;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The parts' kernels: runs in module order, each closed when what it
 * reaches costs `target` instructions (the last takes the rest). */
static int cut(LLVMModuleRef m, size_t nparts, size_t target,
               struct dl_parts *out) {
  struct dl__set have = {0};
  size_t cost = 0;
  int rc = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); !rc && f;
       f = LLVMGetNextFunction(f)) {
    if (!dl__is_kernel(f))
      continue;
    if (cost >= target && out->n < nparts) {
      dl__set_free(&have);
      have = (struct dl__set){0};
      cost = 0;
      out->n++;
    }
    struct dl__set reach = {0};
    rc = dl__reachable(&f, 1, 0, &reach);
    for (size_t k = 0; !rc && k < reach.cap; k++) {
      LLVMValueRef v = reach.v[k];
      if (!v || !LLVMIsAFunction(v))
        continue;
      int added = dl__set_add(&have, v);
      if (added < 0)
        rc = -1;
      else if (added)
        cost += dl__instructions(v);
    }
    dl__set_free(&reach);
    if (!rc)
      rc = lw_strvec_push(&out->kernels[out->n - 1], LLVMGetValueName(f));
  }
  dl__set_free(&have);
  return rc;
}

/* The first part defines whatever else has external linkage. */
static int externals(LLVMModuleRef m, struct lw_strvec *keep) {
  int rc = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); !rc && g;
       g = LLVMGetNextGlobal(g))
    if (!LLVMIsDeclaration(g) && !dl__is_local(g))
      rc = lw_strvec_push(keep, LLVMGetValueName(g));
  for (LLVMValueRef f = LLVMGetFirstFunction(m); !rc && f;
       f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f) && !dl__is_local(f) && !dl__is_kernel(f))
      rc = lw_strvec_push(keep, LLVMGetValueName(f));
  return rc;
}

int dl_parts_make(struct dl_split *s, size_t i, size_t part_cost,
                  size_t max_parts, struct dl_parts *out, const char **why,
                  struct lw_diag *d) {
  memset(out, 0, sizeof *out);
  *why = NULL;
  const struct dl_group *g = i < s->n ? &s->g[i] : NULL;
  size_t nparts = g && part_cost ? g->cost / part_cost : 0;
  if (nparts > max_parts)
    nparts = max_parts;
  if (g && nparts > g->kernels.n)
    nparts = g->kernels.n;
  if (nparts < 2)
    return 0;
  if (g->vf_set || g->esimd || g->esimd_part || g->exports.n)
    *why = "virtual functions, ESIMD code or exported functions";
  else if (s->whole)
    *why = uncuttable(s->whole->mod);
  if (*why)
    return 0;
  /* The split's only module is taken from it; another is built from its
   * batch's bitcode, which stays. */
  int taken = s->whole != NULL;
  struct dl_module *m = NULL;
  int rc = dl_split_module(s, i, &m, d);
  if (rc)
    return rc;
  if ((*why = uncuttable(m->mod)) && !taken) {
    dl_module_free(m);
    return 0;
  }
  if (*why) /* lowering took an address: one part, the whole module */
    nparts = 1;
  out->keep = calloc(nparts, sizeof *out->keep);
  out->kernels = calloc(nparts, sizeof *out->kernels);
  out->n = 1;
  rc = !out->keep || !out->kernels ||
               cut(m->mod, nparts, (g->cost + nparts - 1) / nparts, out) ||
               externals(m->mod, &out->keep[0]) ||
               !(out->triple = strdup(m->triple))
           ? LW_ENOMEM
           : 0;
  for (size_t k = 0; !rc && k < out->n; k++) {
    rc = lw_strvec_extend_from(&out->keep[k], &out->kernels[k]) ? LW_ENOMEM
                                                                 : 0;
    qsort(out->keep[k].v, out->keep[k].n, sizeof *out->keep[k].v, cmp_str);
  }
  if (!rc && dl_module_bitcode(m, &out->bitcode))
    rc = LW_ENOMEM;
  dl_module_free(m);
  if (rc) {
    dl_parts_free(out);
    return lw_error(d, rc, "out of memory");
  }
  return 0;
}

int dl_parts_module(const struct dl_parts *p, size_t k, struct dl_module **out,
                    struct lw_diag *d) {
  if (k >= p->n)
    return lw_error(d, LW_EINVAL, "part %zu of %zu is not there", k, p->n);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = NULL;
  int rc = dl__extract(&p->bitcode, p->keep[k].v, p->keep[k].n, k > 0, ctx,
                       &m, d);
  if (rc) {
    LLVMContextDispose(ctx);
    return rc;
  }
  if (dl_module_adopt(ctx, m, p->triple, out))
    return lw_error(d, LW_ENOMEM, "out of memory");
  (*out)->valid = 1; /* a part of a valid module */
  return 0;
}

void dl_parts_free(struct dl_parts *p) {
  for (size_t k = 0; p->keep && k < p->n; k++)
    lw_strvec_free(&p->keep[k]);
  for (size_t k = 0; p->kernels && k < p->n; k++)
    lw_strvec_free(&p->kernels[k]);
  free(p->keep);
  free(p->kernels);
  free(p->triple);
  lw_buf_free(&p->bitcode);
  memset(p, 0, sizeof *p);
}
