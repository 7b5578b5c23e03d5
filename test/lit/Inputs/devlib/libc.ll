; A second device library, packed as a fat object: lib_cos is needed by
; libm's lib_sin; lib_never by nothing.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

define weak_odr spir_func float @lib_cos(float %x) {
  %y = fsub float 1.0, %x
  ret float %y
}

define spir_func float @lib_never(float %x) {
  ret float %x
}
