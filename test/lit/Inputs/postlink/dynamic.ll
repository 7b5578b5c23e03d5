; A kernel calling SYCL_EXTERNAL functions that another device image (a
; shared library's) defines: plain and Itanium-mangled names, declared as
; DPC++ declares them (with "sycl-module-id"), next to a function the
; module defines itself.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

declare spir_func float @ext_scale(float) #0
declare spir_func i32 @_Z10ext_offseti(i32) #0

define spir_func float @local_twice(float %x) #1 {
  %r = fmul float %x, 2.0
  ret float %r
}

define spir_kernel void @k_uses(ptr addrspace(1) %p) #1 {
  %x = load float, ptr addrspace(1) %p
  %a = call spir_func float @ext_scale(float %x)
  %b = call spir_func float @local_twice(float %a)
  %i = call spir_func i32 @_Z10ext_offseti(i32 3)
  %f = sitofp i32 %i to float
  %c = fadd float %b, %f
  store float %c, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_alone(ptr addrspace(1) %p) #1 {
  store float 1.0, ptr addrspace(1) %p
  ret void
}

attributes #0 = { "sycl-module-id"="lib.cpp" }
attributes #1 = { "sycl-module-id"="app.cpp" }
