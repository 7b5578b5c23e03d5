; Kernels with optional features, in DPC++'s metadata form (seed 001):
; aspects as {name, number} pairs or numbers, required work-group and
; sub-group sizes, and a SYCL_EXTERNAL function shared by two kernels, one of
; which reaches an fp64 helper through a call chain.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

define spir_func void @helper_fp64(ptr addrspace(4) %p) !sycl_used_aspects !0 {
  store double 1.0, ptr addrspace(4) %p
  ret void
}

define spir_func void @chain(ptr addrspace(4) %p) {
  call spir_func void @helper_fp64(ptr addrspace(4) %p)
  ret void
}

define spir_func void @shared_ext(ptr addrspace(1) %p) {
  store i32 7, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_fp64(ptr addrspace(1) %p) !sycl_used_aspects !0 {
  %q = addrspacecast ptr addrspace(1) %p to ptr addrspace(4)
  call spir_func void @chain(ptr addrspace(4) %q)
  call spir_func void @shared_ext(ptr addrspace(1) %p)
  ret void
}

define spir_kernel void @k_plain(ptr addrspace(1) %p, i32 %x) {
  call spir_func void @shared_ext(ptr addrspace(1) %p)
  ret void
}

define spir_kernel void @k_wg(ptr addrspace(1) %p) !reqd_work_group_size !1 {
  store i32 2, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_sg(ptr addrspace(1) %p) !intel_reqd_sub_group_size !2 {
  store i32 3, ptr addrspace(1) %p
  ret void
}

!0 = !{!3}
!3 = !{!"fp64", i32 6}
!1 = !{i32 8, i32 4, i32 1}
!2 = !{i32 16}
