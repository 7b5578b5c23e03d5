; A second translation unit that defines lib_pow again: a duplicate.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

define spir_func float @lib_pow(float %x) {
  %y = fadd float %x, %x
  ret float %y
}

define spir_kernel void @k_dup(ptr addrspace(1) %p) {
  %v = load float, ptr addrspace(1) %p
  %w = call spir_func float @lib_pow(float %v)
  store float %w, ptr addrspace(1) %p
  ret void
}
