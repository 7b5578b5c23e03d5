/* initarray.c - a host object's constructors in .init_array, as clang makes
 * them: LLVM's target machines put llvm.global_ctors/dtors in .ctors/.dtors
 * unless told otherwise (TargetOptions::UseInitArray, which the LLVM-C API
 * cannot set), and only GNU ld moves those into .init_array; with lld or
 * gold a constructor left in .ctors never runs. So before a native object
 * is emitted, each list entry becomes a pointer in .init_array.<priority>
 * (.fini_array for destructors; no suffix for the default 65535), kept by
 * llvm.compiler.used, and the lists go. ELF targets only. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_elf(const char *triple) {
  static const char *const other[] = {"windows", "mingw",  "cygwin", "win32",
                                      "apple",   "darwin", "macos",  "ios"};
  for (size_t i = 0; i < sizeof other / sizeof *other; i++)
    if (strstr(triple, other[i]))
      return 0;
  return 1;
}

int dl__use_init_array(LLVMModuleRef mod, const char *triple) {
  static const char *const lists[2] = {"llvm.global_ctors",
                                       "llvm.global_dtors"};
  static const char *const sections[2] = {".init_array", ".fini_array"};
  if (!is_elf(triple))
    return 0;
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
  LLVMValueRef *keep = NULL;
  size_t nkeep = 0;
  /* What llvm.compiler.used holds already stays in it. */
  LLVMValueRef used = LLVMGetNamedGlobal(mod, "llvm.compiler.used");
  LLVMValueRef used_init = used ? LLVMGetInitializer(used) : NULL;
  size_t nused = used_init ? (size_t)LLVMGetNumOperands(used_init) : 0;
  for (int k = 0; k < 2; k++) {
    LLVMValueRef list = LLVMGetNamedGlobal(mod, lists[k]);
    LLVMValueRef arr = list ? LLVMGetInitializer(list) : NULL;
    if (!arr)
      continue;
    unsigned n = (unsigned)LLVMGetNumOperands(arr);
    LLVMValueRef *grown = realloc(keep, (nkeep + n + nused) * sizeof *keep);
    if (!grown) {
      free(keep);
      return LW_ENOMEM;
    }
    keep = grown;
    for (unsigned i = 0; i < n; i++) {
      LLVMValueRef e = LLVMGetOperand(arr, i);
      unsigned prio = (unsigned)LLVMConstIntGetZExtValue(LLVMGetOperand(e, 0));
      char sec[32];
      if (prio >= 65535)
        snprintf(sec, sizeof sec, "%s", sections[k]);
      else
        snprintf(sec, sizeof sec, "%s.%05u", sections[k], prio);
      LLVMValueRef slot =
          LLVMAddGlobal(mod, ptr, k ? "__fini_slot" : "__init_slot");
      LLVMSetInitializer(slot, LLVMGetOperand(e, 1));
      LLVMSetLinkage(slot, LLVMPrivateLinkage);
      LLVMSetSection(slot, sec);
      keep[nkeep++] = slot;
    }
    LLVMDeleteGlobal(list);
  }
  if (!nkeep)
    return 0;
  for (size_t i = 0; i < nused; i++)
    keep[nkeep++] = LLVMGetOperand(used_init, (unsigned)i);
  if (used)
    LLVMDeleteGlobal(used);
  LLVMValueRef arr = LLVMConstArray2(ptr, keep, nkeep);
  LLVMValueRef g = LLVMAddGlobal(mod, LLVMTypeOf(arr), "llvm.compiler.used");
  LLVMSetLinkage(g, LLVMAppendingLinkage);
  LLVMSetSection(g, "llvm.metadata");
  LLVMSetInitializer(g, arr);
  free(keep);
  return 0;
}
