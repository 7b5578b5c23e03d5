/* printf.c - printf format strings in the constant address space.
 * OpenCL's printf, which SPIR-V has as an extended instruction, takes its
 * format from the constant address space (UniformConstant); another one
 * needs SPV_EXT_relaxed_printf_string_address_space, which not every device
 * compiler or validator knows. SYCL device code passes the format as a
 * generic pointer: DPC++'s assert (its device library's message) and
 * sycl::ext::oneapi::experimental::printf call __spirv_ocl_printf, and
 * clang's __builtin_printf calls printf, with a string literal that clang
 * puts in the global address space. DPC++'s front end moves such literals
 * to the constant address space and calls the constant-format overload
 * (its SYCLMutatePrintfAddrspace pass); clang-22 does not, so the link does
 * it here, before the split. A format that is not a constant string (made
 * at run time) stays as it is and needs the extension. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

enum { AS_CONSTANT = 2 };

/* The overload of DPC++'s headers for a format in the constant address
 * space: __spirv_ocl_printf(const __constant char *, ...). */
static const char constant_printf[] = "_Z18__spirv_ocl_printfPU3AS2Kcz";

static int is_printf(LLVMValueRef f) {
  size_t len;
  const char *name = LLVMGetValueName2(f, &len);
  return (len == 6 && memcmp(name, "printf", 6) == 0) ||
         (len >= 22 && memcmp(name, "_Z18__spirv_ocl_printf", 22) == 0 &&
          strcmp(name, constant_printf) != 0);
}

/* Is `v` a getelementptr whose indices are all zero (the array's start)? */
static int zero_gep(LLVMValueRef v) {
  int inst = LLVMIsAGetElementPtrInst(v) != NULL;
  if (!inst && !(LLVMIsAConstantExpr(v) &&
                 LLVMGetConstOpcode(v) == LLVMGetElementPtr))
    return 0;
  for (int i = 1, n = LLVMGetNumOperands(v); i < n; i++) {
    LLVMValueRef idx = LLVMGetOperand(v, i);
    if (!LLVMIsAConstantInt(idx) || LLVMConstIntGetZExtValue(idx) != 0)
      return 0;
  }
  return 1;
}

LLVMValueRef dl__string_global(LLVMValueRef v) {
  for (int depth = 0; v && depth < 8; depth++) {
    if (LLVMIsAGlobalVariable(v))
      return LLVMIsGlobalConstant(v) && LLVMGetInitializer(v) &&
                     !LLVMIsExternallyInitialized(v)
                 ? v
                 : NULL;
    if (LLVMIsAAddrSpaceCastInst(v) || zero_gep(v) ||
        (LLVMIsAConstantExpr(v) &&
         LLVMGetConstOpcode(v) == LLVMAddrSpaceCast))
      v = LLVMGetOperand(v, 0);
    else
      return NULL;
  }
  return NULL;
}

/* The constant-address-space copy of string global `g` (made once: its
 * name is g's with ".constant" after it). */
static LLVMValueRef constant_copy(LLVMModuleRef m, LLVMValueRef g) {
  size_t len;
  const char *name = LLVMGetValueName2(g, &len);
  char copy_name[512];
  snprintf(copy_name, sizeof copy_name, "%.*s.constant",
           (int)(len > 400 ? 400 : len), name);
  LLVMValueRef c = LLVMGetNamedGlobal(m, copy_name);
  if (c && LLVMGetPointerAddressSpace(LLVMTypeOf(c)) == AS_CONSTANT)
    return c;
  c = LLVMAddGlobalInAddressSpace(m, LLVMGlobalGetValueType(g), copy_name,
                                  AS_CONSTANT);
  LLVMSetInitializer(c, LLVMGetInitializer(g));
  LLVMSetGlobalConstant(c, 1);
  LLVMSetLinkage(c, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(c, LLVMGlobalUnnamedAddr);
  LLVMSetAlignment(c, LLVMGetAlignment(g));
  return c;
}

/* Deletes instruction `v` and the casts it was made of once nothing uses
 * them. */
static void drop_dead(LLVMValueRef v) {
  while (v && LLVMIsAInstruction(v) && !LLVMGetFirstUse(v)) {
    LLVMValueRef from = LLVMGetNumOperands(v) ? LLVMGetOperand(v, 0) : NULL;
    LLVMInstructionEraseFromParent(v);
    v = from;
  }
}

/* Calls `call` again with the format in the constant address space; 1 when
 * done, 0 when the format is not a constant string, -1 on failure. */
static int rewrite(LLVMModuleRef m, LLVMBuilderRef b, LLVMValueRef call) {
  unsigned nargs = LLVMGetNumArgOperands(call);
  LLVMValueRef fmt = nargs ? LLVMGetOperand(call, 0) : NULL;
  LLVMValueRef g = fmt ? dl__string_global(fmt) : NULL;
  if (!g || LLVMGetPointerAddressSpace(LLVMTypeOf(g)) == AS_CONSTANT)
    return 0;
  LLVMValueRef c = constant_copy(m, g);
  LLVMTypeRef param = LLVMTypeOf(c);
  LLVMTypeRef fty = LLVMFunctionType(LLVMTypeOf(call), &param, 1, 1);
  LLVMValueRef callee = LLVMGetNamedFunction(m, constant_printf);
  if (!callee) {
    callee = LLVMAddFunction(m, constant_printf, fty);
    LLVMSetFunctionCallConv(callee, LLVMGetInstructionCallConv(call));
  }
  LLVMValueRef args[64];
  if (nargs > sizeof args / sizeof *args)
    return 0;
  args[0] = c;
  for (unsigned i = 1; i < nargs; i++)
    args[i] = LLVMGetOperand(call, i);
  LLVMPositionBuilderBefore(b, call);
  LLVMValueRef now = LLVMBuildCall2(b, fty, callee, args, nargs, "");
  if (!now)
    return -1;
  LLVMSetInstructionCallConv(now, LLVMGetInstructionCallConv(call));
  LLVMReplaceAllUsesWith(call, now);
  LLVMInstructionEraseFromParent(call);
  drop_dead(fmt);
  return 1;
}

int dl__printf_constant_formats(LLVMModuleRef m) {
  LLVMBuilderRef b = NULL;
  int rc = 0, changed = 0, done;
  LLVMValueRef next;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f && !rc; f = next) {
    next = LLVMGetNextFunction(f);
    if (!LLVMIsDeclaration(f) || !is_printf(f))
      continue;
    LLVMUseRef u = LLVMGetFirstUse(f);
    while (u && !rc) {
      LLVMValueRef user = LLVMGetUser(u);
      while (u && LLVMGetUser(u) == user) /* before the call goes */
        u = LLVMGetNextUse(u);
      if (!LLVMIsACallInst(user) || LLVMGetCalledValue(user) != f)
        continue;
      if (!b && !(b = LLVMCreateBuilderInContext(LLVMGetModuleContext(m))))
        rc = -1;
      else if ((done = rewrite(m, b, user)) < 0)
        rc = -1;
      else
        changed |= done;
    }
    if (!rc && !LLVMGetFirstUse(f))
      LLVMDeleteFunction(f);
  }
  if (b)
    LLVMDisposeBuilder(b);
  if (changed) /* the strings' old copies, unless used elsewhere */
    dl__drop_unused(m);
  return rc;
}
