; The library's translation unit of the mixed program (mixed_app.ll): the
; SYCL_EXTERNAL function the application calls, with a helper of its own,
; and a kernel.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

define internal spir_func float @twice(float %x) {
  %r = fmul float %x, 2.0
  ret float %r
}

define spir_func float @_Z9lib_scalef(float %x) #0 {
  %t = call spir_func float @twice(float %x)
  %r = fadd float %t, 0.25
  ret float %r
}

define spir_kernel void @k_lib(ptr addrspace(1) %p) #0 {
  %x = load float, ptr addrspace(1) %p
  %y = call spir_func float @_Z9lib_scalef(float %x)
  store float %y, ptr addrspace(1) %p
  ret void
}

attributes #0 = { "sycl-module-id"="lib.cpp" }
