; A device global and a plain variable both in @llvm.compiler.used, as
; DPC++'s front end lists them; a kernel using both.
target triple = "spir64-unknown-unknown"
@llvm.compiler.used = appending global [2 x ptr addrspace(4)] [ptr addrspace(4) addrspacecast (ptr addrspace(1) @dg to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @plain to ptr addrspace(4))], section "llvm.metadata"
@dg = addrspace(1) global i32 0, align 4 #0
@plain = internal addrspace(1) global i32 1, align 4
define spir_kernel void @k(ptr addrspace(1) %p) #1 {
  %a = load i32, ptr addrspace(1) @dg
  %b = load i32, ptr addrspace(1) @plain
  %c = add i32 %a, %b
  store i32 %c, ptr addrspace(1) %p
  ret void
}
attributes #0 = { "sycl-device-global-size"="4" "sycl-unique-id"="u1____dg" }
attributes #1 = { "sycl-module-id"="c.cpp" }
