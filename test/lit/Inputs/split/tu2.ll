; A second translation unit: two aspects (one as a bare number), fixed
; targets, and a kernel with the same features as tu1's k_plain.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

define spir_kernel void @k_fp16_atomic(ptr addrspace(1) %p) !sycl_used_aspects !0 {
  store half 1.0, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_fixed(ptr addrspace(1) %p) !sycl_fixed_targets !1 {
  store i32 5, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_plain_b(ptr addrspace(1) %p) {
  store i32 6, ptr addrspace(1) %p
  ret void
}

!0 = !{!2, i32 28}
!2 = !{!"fp16", i32 5}
!1 = !{i32 1, i32 2}
