; A kernel and what it calls under dynamic linking: a SYCL_EXTERNAL function
; (importable: "sycl-module-id"), helpers without the mark (external, weak,
; link-once), a SYCL_EXTERNAL function with a reserved name, one defined
; available_externally, and variables.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

@counter = addrspace(1) global i32 0, align 4
@table = addrspace(1) constant [2 x i32] [i32 3, i32 5], align 4

define spir_func i32 @_Z7sharedi(i32 %x) #0 {
  %r = add i32 %x, 1
  ret i32 %r
}

define spir_func i32 @plain_helper(i32 %x) {
  %r = mul i32 %x, 3
  ret i32 %r
}

define weak spir_func i32 @weak_helper(i32 %x) {
  %r = sub i32 %x, 2
  ret i32 %r
}

define linkonce_odr spir_func i32 @_Z4tmplIiET_S0_(i32 %x) {
  %r = shl i32 %x, 1
  ret i32 %r
}

define spir_func i32 @__reserved_ext(i32 %x) #0 {
  %r = xor i32 %x, 7
  ret i32 %r
}

define available_externally spir_func i32 @ae_helper(i32 %x) {
  ret i32 %x
}

define spir_kernel void @k_dyn(ptr addrspace(1) %p) #0 {
  %x = load i32, ptr addrspace(1) %p
  %a = call spir_func i32 @_Z7sharedi(i32 %x)
  %b = call spir_func i32 @plain_helper(i32 %a)
  %c = call spir_func i32 @weak_helper(i32 %b)
  %d = call spir_func i32 @_Z4tmplIiET_S0_(i32 %c)
  %e = call spir_func i32 @__reserved_ext(i32 %d)
  %f = call spir_func i32 @ae_helper(i32 %e)
  %t = load i32, ptr addrspace(1) @table
  %g = add i32 %f, %t
  store i32 %g, ptr addrspace(1) @counter
  store i32 %g, ptr addrspace(1) %p
  ret void
}

attributes #0 = { "sycl-module-id"="dyn.cpp" }
