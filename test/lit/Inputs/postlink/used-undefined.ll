; A kernel listed in @llvm.used (as DPC++'s front end lists some), calling
; a SYCL_EXTERNAL function no input defines, listed there too.
target triple = "spir64-unknown-unknown"
@llvm.used = appending global [2 x ptr] [ptr @k_used, ptr @elsewhere], section "llvm.metadata"
declare spir_func void @elsewhere(ptr addrspace(1))
define spir_kernel void @k_used(ptr addrspace(1) %p) #0 {
  call spir_func void @elsewhere(ptr addrspace(1) %p)
  ret void
}
attributes #0 = { "sycl-module-id"="u.cpp" }
