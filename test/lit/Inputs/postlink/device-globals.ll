; Device globals as DPC++'s front end marks them: a device_image_scope one
; that k_b uses through a helper (tests add a call from k_a), another one
; (its unique id needs escaping in IR) that k_a and k_b use, and a kernel
; that uses none.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

@dg_counter = addrspace(1) global i32 0, align 4 #0
@dg_table = addrspace(1) global [16 x float] zeroinitializer, align 4 #1
@plain = addrspace(1) global i32 3, align 4

define spir_func void @bump() {
  %v = load i32, ptr addrspace(1) @dg_counter
  %n = add i32 %v, 1
  store i32 %n, ptr addrspace(1) @dg_counter
  ret void
}

define spir_kernel void @k_a(ptr addrspace(1) %p) {
  %x = load float, ptr addrspace(1) @dg_table
  store float %x, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_b(ptr addrspace(1) %p) {
  call spir_func void @bump()
  %x = load float, ptr addrspace(1) @dg_table
  store float %x, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_c(ptr addrspace(1) %p) {
  %v = load i32, ptr addrspace(1) @plain
  store i32 %v, ptr addrspace(1) %p
  ret void
}

attributes #0 = { "sycl-device-global-size"="4" "sycl-device-image-scope" "sycl-unique-id"="6da74a122db9f35d____ZL10dg_counter" }
attributes #1 = { "sycl-device-global-size"="64" "sycl-device-image-scope"="false" "sycl-unique-id"="uid \22table\22" }
