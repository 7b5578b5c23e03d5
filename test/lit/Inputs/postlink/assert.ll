; Kernels that can reach the device library's assert (DPC++'s
; __devicelib_assert_fail, defined here as libsycl-crt would give it) and
; one that cannot.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

@msg = private unnamed_addr addrspace(1) constant [6 x i8] c"x > 0\00"

define spir_func void @__devicelib_assert_fail(ptr addrspace(4) %expr, ptr addrspace(4) %file, i32 %line, ptr addrspace(4) %func, i64 %x, i64 %y, i64 %z, i64 %lx, i64 %ly, i64 %lz) {
  ret void
}

define spir_func void @check(i32 %x) {
  %ok = icmp sgt i32 %x, 0
  br i1 %ok, label %done, label %fail
fail:
  %m = addrspacecast ptr addrspace(1) @msg to ptr addrspace(4)
  call spir_func void @__devicelib_assert_fail(ptr addrspace(4) %m, ptr addrspace(4) null, i32 7, ptr addrspace(4) null, i64 0, i64 0, i64 0, i64 0, i64 0, i64 0)
  br label %done
done:
  ret void
}

define spir_kernel void @k_checked(ptr addrspace(1) %p, i32 %x) {
  call spir_func void @check(i32 %x)
  store i32 %x, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_plain(ptr addrspace(1) %p) {
  store i32 1, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_direct(ptr addrspace(1) %p) {
  %m = addrspacecast ptr addrspace(1) @msg to ptr addrspace(4)
  call spir_func void @__devicelib_assert_fail(ptr addrspace(4) %m, ptr addrspace(4) null, i32 9, ptr addrspace(4) null, i64 0, i64 0, i64 0, i64 0, i64 0, i64 0)
  ret void
}
