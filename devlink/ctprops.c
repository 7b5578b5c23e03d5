/* ctprops.c - SYCL kernel properties given as attributes. DPC++'s front
 * end writes the kernel properties of the sycl_ext_oneapi_kernel_properties
 * extension (work_group_size, sub_group_size, ...) as string attributes
 * ("sycl-work-group-size"="8,4"); its post-link turns them into the
 * metadata the rest of the tool chain reads (reqd_work_group_size, ...),
 * the dimensions reversed as for the metadata clang writes itself. So does
 * this, before the split, where the metadata is not there already. With
 * -host-pipes, a host pipe (a variable marked "sycl-host-pipe") gets the
 * decoration its SPIR-V needs, HostAccessINTEL read-write by its unique id,
 * as DPC++'s compile-time properties pass gives it. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  const char *attr, *md;
  int reverse;
} props[] = {
    {"sycl-sub-group-size", "intel_reqd_sub_group_size", 0},
    {"sycl-work-group-size", "reqd_work_group_size", 1},
    {"sycl-work-group-size-hint", "work_group_size_hint", 1},
    {"sycl-max-work-group-size", "max_work_group_size", 1},
    {"sycl-max-linear-work-group-size", "max_linear_work_group_size", 0},
};

/* The comma-separated numbers of `v` (at most 3); -1 when malformed. */
static int numbers(const char *v, unsigned len, unsigned long long *out) {
  int n = 0;
  for (unsigned at = 0; at < len; n++) {
    if (n == 3 || v[at] < '0' || v[at] > '9')
      return -1;
    unsigned long long x = 0;
    while (at < len && v[at] >= '0' && v[at] <= '9')
      x = x * 10 + (unsigned long long)(v[at++] - '0');
    out[n] = x;
    if (at < len && v[at++] != ',')
      return -1;
  }
  return n;
}

void dl__compile_time_properties(LLVMModuleRef m) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f))
      continue;
    for (size_t p = 0; p < sizeof props / sizeof *props; p++) {
      unsigned len;
      const char *v = dl__fn_attr(f, props[p].attr, &len);
      if (!v)
        continue;
      unsigned long long nums[3];
      int n = numbers(v, len, nums);
      if (n <= 0 || dl__md_ints(f, props[p].md, NULL, NULL, 0) >= 0)
        continue;
      unsigned kid = LLVMGetMDKindIDInContext(ctx, props[p].md,
                                              (unsigned)strlen(props[p].md));
      LLVMMetadataRef ops[3];
      for (int i = 0; i < n; i++)
        ops[i] = LLVMValueAsMetadata(LLVMConstInt(
            i32, nums[props[p].reverse ? n - 1 - i : i], 0));
      LLVMGlobalSetMetadata(f, kid, LLVMMDNodeInContext2(ctx, ops, (size_t)n));
    }
  }
}

void dl__one_sub_group_size(LLVMModuleRef m) {
  static const char md[] = "intel_reqd_sub_group_size";
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  unsigned kid = LLVMGetMDKindIDInContext(ctx, md, sizeof md - 1);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    int64_t v[2];
    if (dl__md_ints(f, md, v, NULL, 2) < 2)
      continue;
    LLVMMetadataRef one = LLVMValueAsMetadata(
        LLVMConstInt(LLVMInt32TypeInContext(ctx), (uint64_t)v[0], 0));
    LLVMGlobalSetMetadata(f, kid, LLVMMDNodeInContext2(ctx, &one, 1));
  }
}

int dl__host_pipe_decorations(LLVMModuleRef m) {
  struct dl__gattrs ga;
  if (dl__gattrs_read(m, &ga))
    return LW_ENOMEM;
  enum { READ_WRITE = 2 };
  for (size_t i = 0; i < ga.n; i++) {
    LLVMValueRef g = ga.v[i].g;
    const char *id = dl__gattr(&ga, g, "sycl-unique-id");
    if (dl__gattr(&ga, g, "sycl-host-pipe") && id)
      dl__host_access(g, READ_WRITE, id);
  }
  dl__gattrs_free(&ga);
  return 0;
}
