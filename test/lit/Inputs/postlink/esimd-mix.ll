; a.cpp: a SPMD and an ESIMD kernel of one category; b.cpp: a SPMD kernel
; and an ESIMD one of sub-group size 1 (another category); c.cpp: a SPMD
; kernel of sub-group size 1, which no Intel GPU runs (an ESIMD one is
; exempt). What sycl-post-link-dpcpp.test splits.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spir64-unknown-unknown"

define spir_kernel void @spmd_a() #0 {
  ret void
}

define spir_kernel void @simd_a() #0 !sycl_explicit_simd !0 {
  ret void
}

define spir_kernel void @spmd_b() #1 {
  ret void
}

define spir_kernel void @simd_b() #1 !sycl_explicit_simd !0 !intel_reqd_sub_group_size !1 {
  ret void
}

define spir_kernel void @sg1_c() #2 !intel_reqd_sub_group_size !1 {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "sycl-module-id"="b.cpp" }
attributes #2 = { "sycl-module-id"="c.cpp" }

!0 = !{}
!1 = !{i32 1}
