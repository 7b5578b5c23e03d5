/* nvptxmath.c - the math of a module for NVIDIA GPUs as libdevice calls.
 * A SYCL front end writes sin, exp, pow... as LLVM intrinsics, which
 * LLVM's NVPTX back end cannot select (only what PTX has an instruction
 * for: sqrt, fma, floor and the like); CUDA's libdevice (libdevice.10.bc,
 * in the toolkit) defines them as __nv_sinf, __nv_sin, ... Each call of an
 * intrinsic that libdevice has is turned into a call of its function, which
 * the library, linked after the program's code, then gives (only what is
 * called). */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static const char *const ops[] = {
    "sin",  "cos",  "tan",   "asin", "acos", "atan", "atan2", "sinh",
    "cosh", "tanh", "exp",   "exp2", "exp10", "log", "log2",  "log10",
    "pow"};

void dl__nvptx_math(LLVMModuleRef m) {
  LLVMValueRef next;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = next) {
    next = LLVMGetNextFunction(f);
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (!LLVMIsDeclaration(f) || strncmp(name, "llvm.", 5) != 0)
      continue;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
      size_t n = strlen(ops[i]);
      const char *ty = name + 5 + n;
      if (strncmp(name + 5, ops[i], n) != 0 ||
          (strcmp(ty, ".f32") != 0 && strcmp(ty, ".f64") != 0))
        continue;
      char nv[32];
      snprintf(nv, sizeof nv, "__nv_%s%s", ops[i],
               strcmp(ty, ".f32") == 0 ? "f" : "");
      LLVMTypeRef fty = LLVMGlobalGetValueType(f);
      LLVMValueRef to = LLVMGetNamedFunction(m, nv);
      if (!to)
        to = LLVMAddFunction(m, nv, fty);
      if (LLVMGlobalGetValueType(to) != fty)
        break; /* the program's own, of another type: left alone */
      LLVMReplaceAllUsesWith(f, to);
      LLVMDeleteFunction(f);
      break;
    }
  }
}
