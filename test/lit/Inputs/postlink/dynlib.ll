; A device library for dynamic linking: SYCL_EXTERNAL functions (one with a
; mangled name) that no kernel here calls, a helper of its own, a virtual
; function (never exported: it has its own mechanism) and one kernel.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

define internal spir_func float @half(float %x) {
  %r = fmul float %x, 0.5
  ret float %r
}

define spir_func float @ext_scale(float %x) #0 {
  %h = call spir_func float @half(float %x)
  ret float %h
}

define spir_func i32 @_Z10ext_offseti(i32 %i) #0 {
  %r = add i32 %i, 10
  ret i32 %r
}

define spir_func void @vfunc(ptr addrspace(4) %p) #1 {
  ret void
}

define spir_kernel void @k_lib(ptr addrspace(1) %p) #0 {
  store i32 5, ptr addrspace(1) %p
  ret void
}

attributes #0 = { "sycl-module-id"="lib.cpp" }
attributes #1 = { "sycl-module-id"="lib.cpp" "indirectly-callable"="set1" }
