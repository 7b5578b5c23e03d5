; A device library: lib_sin is needed (and needs lib_sin_impl, internal,
; and lib_cos from the next library); lib_unused and lib_pow are not taken.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

@lib_table = addrspace(1) global [2 x float] [float 1.0, float 2.0]
@lib_unused_table = addrspace(1) global [2 x float] [float 3.0, float 4.0]

declare spir_func float @lib_cos(float)

define internal spir_func float @lib_sin_impl(float %x) {
  %p = getelementptr [2 x float], ptr addrspace(1) @lib_table, i64 0, i64 1
  %t = load float, ptr addrspace(1) %p
  %y = fmul float %x, %t
  ret float %y
}

define spir_func float @lib_sin(float %x) {
  %a = call spir_func float @lib_sin_impl(float %x)
  %b = call spir_func float @lib_cos(float %a)
  ret float %b
}

define spir_func float @lib_pow(float %x) {
  %y = fmul float %x, %x
  ret float %y
}

define spir_func float @lib_unused(float %x) {
  %p = getelementptr [2 x float], ptr addrspace(1) @lib_unused_table, i64 0, i64 1
  %t = load float, ptr addrspace(1) %p
  %y = fadd float %x, %t
  ret float %y
}
