/* decorations.c - SPIR-V decorations of global variables that LLVM 22's
 * back end cannot write. DPC++'s front end gives a device global's
 * properties (host_access, init_mode, implement_in_csr) as
 * !spirv.Decorations with the numbers of DPC++'s own SPIR-V translator
 * (6147, 6148, 6149), which needs SPV_INTEL_global_variable_decorations
 * enabled to write them. LLVM's back end writes any number it is given, and
 * without the extension or its capability: a module no consumer may take
 * (Debian's SPIRV-Tools cannot even read 6149). They go, the rest of the
 * variable's decorations stay; the device global itself works as ever
 * (the properties tune FPGA memories).
 *
 * The same properties on a pointer come as a call of llvm.ptr.annotation
 * whose annotation is "sycl-properties" (DPC++'s CompileTimeProperties pass
 * makes decorations of them). LLVM's back end writes such a call as a
 * UserSemantic string and refers to the property list, a global it never
 * defines: an invalid module. The call goes (its pointer is its value) and
 * the lists nothing uses then; other annotations stay for the back end. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The decoration a !spirv.Decorations entry gives: its first operand. An
 * entry of one operand, !{i32 D}, comes out of LLVM-C as that operand's
 * metadata (MetadataAsValue unwraps such a node), one operand all the
 * same. */
static uint64_t decoration(LLVMValueRef entry) {
  LLVMValueRef ops[8];
  unsigned n = entry && (LLVMIsAMDNode(entry) || LLVMIsAValueAsMetadata(entry))
                   ? LLVMGetMDNodeNumOperands(entry)
                   : 0;
  if (n == 0 || n > 8)
    return 0;
  LLVMGetMDNodeOperands(entry, ops);
  return ops[0] && LLVMIsAConstantInt(ops[0]) ? LLVMConstIntGetZExtValue(ops[0])
                                              : 0;
}

/* The entry as metadata again: an unwrapped one was the node !{C}. */
static LLVMMetadataRef entry_md(LLVMContextRef ctx, LLVMValueRef entry) {
  LLVMMetadataRef md = LLVMValueAsMetadata(entry);
  return LLVMIsAValueAsMetadata(entry) ? LLVMMDNodeInContext2(ctx, &md, 1)
                                       : md;
}

static int unwritable(uint64_t d) {
  return d == DL__HOST_ACCESS_INTEL || d == 6148 || d == 6149;
}

void dl__host_access(LLVMValueRef g, unsigned mode, const char *name) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(g));
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMMetadataRef op[3] = {
      LLVMValueAsMetadata(LLVMConstInt(i32, DL__HOST_ACCESS_INTEL, 0)),
      LLVMValueAsMetadata(LLVMConstInt(i32, mode, 0)),
      LLVMMDStringInContext2(ctx, name, strlen(name))};
  LLVMMetadataRef entry = LLVMMDNodeInContext2(ctx, op, 3);
  LLVMGlobalSetMetadata(g,
                        LLVMGetMDKindIDInContext(ctx, "spirv.Decorations", 17),
                        LLVMMDNodeInContext2(ctx, &entry, 1));
}

int dl__drop_global_decorations(LLVMModuleRef m) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  unsigned kind = LLVMGetMDKindIDInContext(ctx, "spirv.Decorations", 17);
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    size_t nmd;
    LLVMValueMetadataEntry *all_md = LLVMGlobalCopyAllMetadata(g, &nmd);
    LLVMMetadataRef md = NULL;
    for (size_t i = 0; i < nmd; i++)
      if (LLVMValueMetadataEntriesGetKind(all_md, (unsigned)i) == kind)
        md = LLVMValueMetadataEntriesGetMetadata(all_md, (unsigned)i);
    if (all_md)
      LLVMDisposeValueMetadataEntries(all_md);
    if (!md)
      continue;
    LLVMValueRef node = LLVMMetadataAsValue(ctx, md);
    unsigned n = LLVMGetMDNodeNumOperands(node), k = 0;
    LLVMValueRef *ops = calloc(n ? n : 1, sizeof *ops);
    LLVMMetadataRef *kept = calloc(n ? n : 1, sizeof *kept);
    if (!ops || !kept) {
      free(ops);
      free(kept);
      return LW_ENOMEM;
    }
    LLVMGetMDNodeOperands(node, ops);
    for (unsigned i = 0; i < n; i++)
      if (!unwritable(decoration(ops[i])))
        kept[k++] = entry_md(ctx, ops[i]);
    if (k == 0)
      LLVMGlobalEraseMetadata(g, kind);
    else if (k < n)
      LLVMGlobalSetMetadata(g, kind, LLVMMDNodeInContext2(ctx, kept, k));
    free(ops);
    free(kept);
  }
  return 0;
}

/* Is `v` a pointer to the string "sycl-properties"? */
static int sycl_properties(LLVMValueRef v) {
  static const char want[] = "sycl-properties";
  LLVMValueRef g = dl__string_global(v);
  LLVMValueRef init = g ? LLVMGetInitializer(g) : NULL;
  size_t len;
  const char *s = dl__const_string(init, &len);
  return s && len >= sizeof want - 1 &&
         memcmp(s, want, sizeof want - 1) == 0 &&
         (len == sizeof want - 1 || s[sizeof want - 1] == '\0');
}

int dl__drop_property_annotations(LLVMModuleRef m) {
  static const char name[] = "llvm.ptr.annotation";
  LLVMValueRef next;
  int dropped = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = next) {
    next = LLVMGetNextFunction(f);
    size_t len;
    const char *n = LLVMGetValueName2(f, &len);
    if (!LLVMIsDeclaration(f) || strncmp(n, name, sizeof name - 1) != 0)
      continue;
    LLVMUseRef u = LLVMGetFirstUse(f), unext;
    for (; u; u = unext) {
      unext = LLVMGetNextUse(u);
      LLVMValueRef call = LLVMGetUser(u);
      if (!LLVMIsACallInst(call) || LLVMGetCalledValue(call) != f ||
          LLVMGetNumArgOperands(call) < 2 ||
          !sycl_properties(LLVMGetOperand(call, 1)))
        continue;
      LLVMReplaceAllUsesWith(call, LLVMGetOperand(call, 0));
      LLVMInstructionEraseFromParent(call);
      dropped = 1;
    }
    if (!LLVMGetFirstUse(f))
      LLVMDeleteFunction(f);
  }
  return dropped;
}
