; Device code in the shapes DPC++'s front end gives it (written for
; fatlink's tests): two translation units, a SYCL_EXTERNAL function
; (sycl-module-id) that a kernel of the other unit also calls, a helper
; without it, a kernel property as an attribute (sycl-work-group-size, the
; dimensions in source order) and the parameters the front end eliminated
; (sycl_kernel_omit_args).
target triple = "spir64-unknown-unknown"

define spir_func void @helper(ptr addrspace(1) %p) {
  store i32 1, ptr addrspace(1) %p
  ret void
}

define spir_func void @ext_fn(ptr addrspace(1) %p) #0 {
  call spir_func void @helper(ptr addrspace(1) %p)
  ret void
}

define spir_kernel void @k_a(ptr addrspace(1) %p) #0 !sycl_kernel_omit_args !0 {
  call spir_func void @ext_fn(ptr addrspace(1) %p)
  ret void
}

define spir_kernel void @k_b(ptr addrspace(1) %p) #1 {
  call spir_func void @ext_fn(ptr addrspace(1) %p)
  ret void
}

define spir_kernel void @k_wg(ptr addrspace(1) %p) #2 {
  call spir_func void @helper(ptr addrspace(1) %p)
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "sycl-module-id"="b.cpp" }
attributes #2 = { "sycl-module-id"="b.cpp" "sycl-work-group-size"="8,4" }

!0 = !{i1 true, i1 false, i1 true}
