/* metadata.c - reads the function metadata DPC++ uses for optional kernel
 * features (seed 001): !sycl_used_aspects and !sycl_declared_aspects (lists
 * of i32, or of {!"name", i32} pairs), !reqd_work_group_size,
 * !intel_reqd_sub_group_size, !work_group_num_dim, !sycl_fixed_targets. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* SPIR kernels, and those of SYCL device code for AMD and NVIDIA GPUs
 * (amdgpu_kernel, ptx_kernel), as DPC++'s post-link counts them. */
int dl__is_kernel(LLVMValueRef f) {
  unsigned cc = LLVMGetFunctionCallConv(f);
  return !LLVMIsDeclaration(f) &&
         (cc == LLVMSPIRKERNELCallConv || cc == LLVMAMDGPUKERNELCallConv ||
          cc == LLVMPTXKernelCallConv);
}

int dl__is_esimd(LLVMValueRef f) {
  return dl__md_ints(f, "sycl_explicit_simd", NULL, NULL, 0) >= 0;
}

int dl__is_exportable(LLVMValueRef f) {
  LLVMLinkage l = LLVMGetLinkage(f);
  return !LLVMIsDeclaration(f) &&
         LLVMGetFunctionCallConv(f) == LLVMSPIRFUNCCallConv &&
         l != LLVMInternalLinkage && l != LLVMPrivateLinkage &&
         LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                       "sycl-module-id", 14) &&
         !LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                        "indirectly-callable", 19);
}

int dl__md_ints(LLVMValueRef f, const char *kind, int64_t *out,
                const char **names, int max) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f));
  unsigned kid = LLVMGetMDKindIDInContext(ctx, kind, (unsigned)strlen(kind));
  size_t count = 0;
  LLVMValueMetadataEntry *e = LLVMGlobalCopyAllMetadata(f, &count);
  int n = -1;
  for (size_t i = 0; i < count && n < 0; i++) {
    if (LLVMValueMetadataEntriesGetKind(e, (unsigned)i) != kid)
      continue;
    LLVMValueRef node =
        LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(e, (unsigned)i));
    unsigned nops = LLVMGetMDNodeNumOperands(node);
    LLVMValueRef *ops = calloc(nops ? nops : 1, sizeof *ops);
    if (!ops)
      break;
    LLVMGetMDNodeOperands(node, ops);
    n = 0;
    for (unsigned k = 0; k < nops; k++) {
      LLVMValueRef op = ops[k];
      const char *name = NULL;
      if (op && LLVMIsAMDNode(op) && LLVMGetMDNodeNumOperands(op) == 2) {
        LLVMValueRef pair[2];
        LLVMGetMDNodeOperands(op, pair);
        unsigned len;
        name = pair[0] ? LLVMGetMDString(pair[0], &len) : NULL;
        op = pair[1];
      }
      if (!op || !LLVMIsAConstantInt(op))
        continue;
      if (n < max) {
        out[n] = LLVMConstIntGetSExtValue(op);
        if (names)
          names[n] = name;
      }
      n++;
    }
    free(ops);
  }
  if (e)
    LLVMDisposeValueMetadataEntries(e);
  return n;
}
