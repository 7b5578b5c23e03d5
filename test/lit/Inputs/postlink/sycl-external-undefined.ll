; A kernel calling a SYCL_EXTERNAL function defined elsewhere.
target triple = "spir64-unknown-unknown"
declare spir_func void @elsewhere(ptr addrspace(1))
define spir_kernel void @k(ptr addrspace(1) %p) #0 {
  call spir_func void @elsewhere(ptr addrspace(1) %p)
  ret void
}
attributes #0 = { "sycl-module-id"="u.cpp" }
