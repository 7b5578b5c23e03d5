; A kernel whose intel_reqd_sub_group_size has a second value (written for
; fatlink's tests, after a shape intel/llvm's split tests feed their tool):
; the split's category reads both, SPIR-V's SubgroupSize takes one.
target triple = "spir64-unknown-unknown"

define spir_kernel void @k16(ptr addrspace(1) %out) !intel_reqd_sub_group_size !0 {
entry:
  store i32 16, ptr addrspace(1) %out, align 4
  ret void
}

!0 = !{i32 16, i32 16}
