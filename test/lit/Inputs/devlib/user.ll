; User device code calling into the device libraries: lib_sin (in libm),
; and lib_pow, which the user defines itself (its definition wins).
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

declare spir_func float @lib_sin(float)

define spir_func float @lib_pow(float %x) {
  ret float %x
}

define spir_kernel void @k_lib(ptr addrspace(1) %p) {
  %v = load float, ptr addrspace(1) %p
  %s = call spir_func float @lib_sin(float %v)
  %w = call spir_func float @lib_pow(float %s)
  store float %w, ptr addrspace(1) %p
  ret void
}
