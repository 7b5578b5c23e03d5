/* metadata.c - reads the function metadata DPC++ uses for optional kernel
 * features ("Behavior for optional kernel features"): !sycl_used_aspects and
 * !sycl_declared_aspects (lists of i32, or of {!"name", i32} pairs),
 * !reqd_work_group_size, !intel_reqd_sub_group_size, !work_group_num_dim,
 * !sycl_fixed_targets. */
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

const char *dl__const_string(LLVMValueRef init, size_t *len) {
  /* LLVM-C's string test casts without checking: a poison or zero array
   * of bytes (a malformed input's) must not get there. */
  return init && LLVMIsAConstantDataSequential(init) &&
                 LLVMIsConstantString(init)
             ? LLVMGetAsString(init, len)
             : NULL;
}

enum dl__getter dl__spec_getter(LLVMValueRef f) {
  static const struct {
    const char *prefix;
    enum dl__getter kind;
  } getters[] = {
      {"_Z37__sycl_getScalar2020SpecConstantValue", DL__GETTER_SCALAR},
      {"_Z40__sycl_getComposite2020SpecConstantValue", DL__GETTER_COMPOSITE},
      {"llvm.sycl.alloca", DL__GETTER_ALLOCA}};
  size_t len;
  const char *n = LLVMGetValueName2(f, &len);
  for (size_t i = 0; i < LW_ARRAY_SIZE(getters); i++)
    if (strncmp(n, getters[i].prefix, strlen(getters[i].prefix)) == 0)
      return getters[i].kind;
  return DL__NOT_GETTER;
}

/* A reserved name: "__x", or an Itanium-mangled one whose first name is
 * ("_Z3__fv", "_ZN7__spirv3fooEv", "_ZNK..."/"_ZL..." likewise). */
static int reserved(const char *name) {
  if (strncmp(name, "__", 2) == 0)
    return 1;
  if (strncmp(name, "_Z", 2) != 0)
    return 0;
  const char *p = name + 2;
  if (*p == 'L')
    p++;
  if (*p == 'N')
    for (p++; *p == 'K' || *p == 'V' || *p == 'r'; p++)
      ;
  char *end;
  long len = strtol(p, &end, 10);
  return end != p && len >= 2 && strncmp(end, "__", 2) == 0;
}

int dl__importable(LLVMValueRef f) {
  /* a declaration carries no SYCL_EXTERNAL mark: any may be one */
  return !LLVMGetIntrinsicID(f) &&
         !reserved(LLVMGetValueName2(f, &(size_t){0})) &&
         (LLVMIsDeclaration(f) ||
          LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                        "sycl-module-id", 14) != NULL);
}

/* A SPIR-V or SYCL builtin (__spirv_*, __sycl_*, also as an Itanium-mangled
 * function's name), which DPC++ never makes an entry point. */
static int sycl_builtin(const char *name) {
  if (name[0] == '_' && name[1] == 'Z') {
    name += 2;
    while (*name >= '0' && *name <= '9')
      name++;
  }
  return strncmp(name, "__spirv_", 8) == 0 || strncmp(name, "__sycl_", 7) == 0;
}

int dl__is_sycl_external(LLVMValueRef f) {
  return !LLVMIsDeclaration(f) && !LLVMGetIntrinsicID(f) &&
         LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                       "sycl-module-id", 14) &&
         !sycl_builtin(LLVMGetValueName(f));
}

int dl__is_local(LLVMValueRef v) {
  LLVMLinkage l = LLVMGetLinkage(v);
  return l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
}

int dl__is_exportable(LLVMValueRef f) {
  return dl__is_sycl_external(f) &&
         LLVMGetFunctionCallConv(f) == LLVMSPIRFUNCCallConv &&
         !dl__is_local(f) &&
         !LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                        "indirectly-callable", 19);
}

/* Metadata `kind` of `f` as a value (an MDNode), or NULL. */
static LLVMValueRef md_node(LLVMValueRef f, const char *kind) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f));
  unsigned kid = LLVMGetMDKindIDInContext(ctx, kind, (unsigned)strlen(kind));
  size_t count = 0;
  LLVMValueMetadataEntry *e = LLVMGlobalCopyAllMetadata(f, &count);
  LLVMValueRef node = NULL;
  for (size_t i = 0; i < count && !node; i++)
    if (LLVMValueMetadataEntriesGetKind(e, (unsigned)i) == kid)
      node = LLVMMetadataAsValue(
          ctx, LLVMValueMetadataEntriesGetMetadata(e, (unsigned)i));
  if (e)
    LLVMDisposeValueMetadataEntries(e);
  return node;
}

/* The operands of `node` (malloc'd; *n of them), or NULL. */
static LLVMValueRef *md_operands(LLVMValueRef node, unsigned *n) {
  *n = LLVMGetMDNodeNumOperands(node);
  LLVMValueRef *ops = calloc(*n ? *n : 1, sizeof *ops);
  if (ops)
    LLVMGetMDNodeOperands(node, ops);
  return ops;
}

int dl__md_ints(LLVMValueRef f, const char *kind, int64_t *out,
                const char **names, int max) {
  LLVMValueRef node = md_node(f, kind);
  unsigned nops;
  LLVMValueRef *ops = node ? md_operands(node, &nops) : NULL;
  if (!ops)
    return -1;
  int n = 0;
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
  return n;
}

int dl__md_strings(LLVMValueRef f, const char *kind, struct lw_buf *out) {
  LLVMValueRef node = md_node(f, kind);
  unsigned nops;
  LLVMValueRef *ops = node ? md_operands(node, &nops) : NULL;
  if (node && !ops)
    return LW_ENOMEM;
  int rc = 0;
  for (unsigned k = 0; ops && !rc && k < nops; k++) {
    unsigned len = 0;
    const char *str = ops[k] ? LLVMGetMDString(ops[k], &len) : NULL;
    if (str && (lw_buf_append(out, "-", 1) || lw_buf_append(out, str, len)))
      rc = LW_ENOMEM;
  }
  free(ops);
  return rc;
}

const char *dl__fn_attr(LLVMValueRef f, const char *name, unsigned *len) {
  LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(
      f, LLVMAttributeFunctionIndex, name, (unsigned)strlen(name));
  return a ? LLVMGetStringAttributeValue(a, len) : NULL;
}

const char *dl__md_string(LLVMValueRef f, const char *kind, unsigned *len) {
  LLVMValueRef node = md_node(f, kind);
  unsigned nops;
  LLVMValueRef *ops = node ? md_operands(node, &nops) : NULL;
  const char *str = ops && nops && ops[0] ? LLVMGetMDString(ops[0], len) : NULL;
  free(ops);
  return str;
}
