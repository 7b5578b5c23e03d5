/* imports.c - a module keeps only its own code: a function another image
 * defines and exports becomes a declaration there, which the SPIR-V
 * imports and the runtime links:
 *   - a virtual function of another set (virtual.c; the set's dummy image
 *     gets empty bodies for its own);
 *   - with dynamic linking, a SYCL_EXTERNAL function that can be imported
 *     (checks.c) and is not one of the module's own entry points, as
 *     DPC++'s split does not follow calls into such functions.
 * Callgraph.c stops at the same functions, so a module's keep list holds
 * them only as the names its code refers to; what only their bodies used
 * goes. */
#include "internal.h"

#include <llvm-c/Comdat.h>
#include <stdlib.h>
#include <string.h>

/* Does `v` have users other than constants (expressions, arrays, ...)
 * nothing uses? */
static int used(LLVMValueRef v, int depth) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    int constant = LLVMIsAConstant(user) && !LLVMIsAGlobalValue(user);
    if (depth > 8 || !constant || used(user, depth + 1))
      return 1;
  }
  return 0;
}

void dl__drop_unused(LLVMModuleRef m) {
  for (int changed = 1; changed;) {
    changed = 0;
    LLVMValueRef next;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = next) {
      next = LLVMGetNextFunction(f);
      if (dl__is_local(f) && !used(f, 0)) {
        LLVMReplaceAllUsesWith(f, LLVMGetPoison(LLVMTypeOf(f)));
        LLVMDeleteFunction(f);
        changed = 1;
      }
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = next) {
      next = LLVMGetNextGlobal(g);
      if (dl__is_local(g) && !used(g, 0)) {
        LLVMReplaceAllUsesWith(g, LLVMGetPoison(LLVMTypeOf(g)));
        LLVMDeleteGlobal(g);
        changed = 1;
      }
    }
  }
}

int dl__erase_used(LLVMModuleRef m) {
  LLVMValueRef list = LLVMGetNamedGlobal(m, "llvm.used");
  if (!list)
    return 0;
  LLVMDeleteGlobal(list);
  LLVMValueRef next; /* the declarations only it named */
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = next) {
    next = LLVMGetNextFunction(f);
    if (LLVMIsDeclaration(f) && !used(f, 0) && !LLVMGetIntrinsicID(f)) {
      LLVMReplaceAllUsesWith(f, LLVMGetPoison(LLVMTypeOf(f)));
      LLVMDeleteFunction(f);
    }
  }
  return 1;
}

/* The global `v` (a constant of llvm.compiler.used) refers to, through
 * casts. */
static LLVMValueRef listed_global(LLVMValueRef v) {
  for (int depth = 0; v && depth < 4 && !LLVMIsAGlobalValue(v); depth++)
    v = LLVMIsAConstantExpr(v) && LLVMGetNumOperands(v) ? LLVMGetOperand(v, 0)
                                                         : NULL;
  return v;
}

int dl__trim_compiler_used(LLVMModuleRef m) {
  LLVMValueRef list = LLVMGetNamedGlobal(m, "llvm.compiler.used");
  LLVMValueRef init = list ? LLVMGetInitializer(list) : NULL;
  if (!init || !LLVMIsAConstantArray(init))
    return 0;
  struct dl__gattrs ga = {0};
  if (dl__gattrs_read(m, &ga))
    return -1;
  int n = LLVMGetNumOperands(init), kept = 0, gone = 0;
  LLVMValueRef *keep = calloc((size_t)(n ? n : 1), sizeof *keep);
  LLVMValueRef *dgs = calloc((size_t)(n ? n : 1), sizeof *dgs);
  if (!keep || !dgs) {
    free(keep);
    free(dgs);
    dl__gattrs_free(&ga);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    LLVMValueRef e = LLVMGetOperand(init, (unsigned)i);
    LLVMValueRef g = listed_global(e);
    if (!g || !LLVMIsAGlobalVariable(g) ||
        !dl__gattr(&ga, g, "sycl-device-global-size"))
      keep[kept++] = e;
    else
      dgs[gone++] = g;
  }
  if (kept < n) {
    LLVMTypeRef elem = LLVMGetElementType(LLVMTypeOf(init));
    LLVMValueRef now =
        kept ? LLVMConstArray2(elem, keep, (uint64_t)kept) : NULL;
    LLVMValueRef g = now ? LLVMAddGlobal(m, LLVMTypeOf(now), "") : NULL;
    if (g) {
      LLVMSetInitializer(g, now);
      LLVMSetLinkage(g, LLVMAppendingLinkage);
      LLVMSetSection(g, "llvm.metadata");
    }
    LLVMDeleteGlobal(list);
    if (g)
      LLVMSetValueName2(g, "llvm.compiler.used", 18);
  }
  /* a device global only the list kept goes, as in DPC++ */
  for (int i = 0; i < gone; i++)
    if (!used(dgs[i], 0)) {
      LLVMReplaceAllUsesWith(dgs[i], LLVMGetPoison(LLVMTypeOf(dgs[i])));
      LLVMDeleteGlobal(dgs[i]);
    }
  free(keep);
  free(dgs);
  dl__gattrs_free(&ga);
  return 0;
}

/* Leaves `f` without blocks: a declaration. Values go first, then every
 * instruction (and with them the branches naming blocks), then the
 * blocks. */
static void delete_body(LLVMValueRef f) {
  LLVMBasicBlockRef b;
  for (b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef in = LLVMGetFirstInstruction(b); in;
         in = LLVMGetNextInstruction(in))
      if (LLVMGetTypeKind(LLVMTypeOf(in)) != LLVMVoidTypeKind)
        LLVMReplaceAllUsesWith(in, LLVMGetPoison(LLVMTypeOf(in)));
  for (b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef in; (in = LLVMGetFirstInstruction(b));)
      LLVMInstructionEraseFromParent(in);
  while ((b = LLVMGetFirstBasicBlock(f)))
    LLVMDeleteBasicBlock(b);
}

int dl__foreign(LLVMValueRef f, const struct dl_group *gr, unsigned flags) {
  if (dl__vf_set(f, &(unsigned){0}))
    return dl__vf_foreign(f, gr->vf_set);
  if (!(flags & DL_DYNAMIC_LINKING) || dl__is_kernel(f) || !dl__importable(f))
    return 0;
  size_t len;
  const char *name = LLVMGetValueName2(f, &len);
  for (size_t i = 0; i < gr->exports.n; i++)
    if (strcmp(gr->exports.v[i], name) == 0)
      return 0;
  return 1;
}

int dl__prune(LLVMModuleRef m, const struct dl_group *gr, unsigned flags) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMBuilderRef b = NULL;
  int changed = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f;
       f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f))
      continue;
    int mine = !dl__foreign(f, gr, flags);
    if (mine && !(gr->vf_dummy && dl__vf_set(f, &(unsigned){0})))
      continue;
    delete_body(f);
    changed = 1;
    if (!mine) { /* another image defines it: a plain declaration */
      LLVMSetComdat(f, NULL);
      LLVMSetLinkage(f, LLVMExternalLinkage);
      LLVMGlobalClearMetadata(f);
      continue;
    }
    /* The dummy image: the function does nothing. */
    if (!b && !(b = LLVMCreateBuilderInContext(ctx)))
      return LW_ENOMEM;
    LLVMPositionBuilderAtEnd(b,
                             LLVMAppendBasicBlockInContext(ctx, f, "entry"));
    LLVMTypeRef ret = LLVMGetReturnType(LLVMGlobalGetValueType(f));
    if (LLVMGetTypeKind(ret) == LLVMVoidTypeKind)
      LLVMBuildRetVoid(b);
    else
      LLVMBuildRet(b, LLVMGetPoison(ret));
  }
  if (b)
    LLVMDisposeBuilder(b);
  if (changed)
    dl__drop_unused(m);
  return 0;
}
