; ESIMD kernels (DPC++ marks them !sycl_explicit_simd) next to an SPMD
; kernel; all three call one helper.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

define spir_func i32 @shared(i32 %x) {
  %r = mul i32 %x, 3
  ret i32 %r
}

define spir_kernel void @k_simd(ptr addrspace(1) %p) !sycl_explicit_simd !0 {
  %v = call spir_func i32 @shared(i32 1)
  store i32 %v, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_spmd(ptr addrspace(1) %p) {
  %v = call spir_func i32 @shared(i32 2)
  store i32 %v, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_simd2(ptr addrspace(1) %p) !sycl_explicit_simd !0 {
  %v = call spir_func i32 @shared(i32 3)
  store i32 %v, ptr addrspace(1) %p
  ret void
}

!0 = !{}
