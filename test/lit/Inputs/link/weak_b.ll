; A weak definition of pick, as in several translation units; the first in
; link order wins (this one returns 22).
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

define weak spir_func i32 @pick() {
  ret i32 22
}

define spir_kernel void @k_b(ptr addrspace(1) %p) {
  %v = call spir_func i32 @pick()
  store i32 %v, ptr addrspace(1) %p
  ret void
}
