; Device code as we take DPC++'s AddressSanitizer instrumentation to leave
; it, in two translation units: each kernel instrumented, and the module's
; kernel table __AsanKernelMetadata (each kernel's name and its length),
; marked as a device global of image scope that nothing in the code uses.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spir64-unknown-unknown"

@__asan_kernel_fill = internal addrspace(1) constant [9 x i8] c"k_fill\00\00\00"
@__asan_kernel_scale = internal addrspace(1) constant [9 x i8] c"k_scale\00\00"
@__AsanKernelMetadata = appending dso_local local_unnamed_addr addrspace(1) global [2 x { i64, i64 }] [{ i64, i64 } { i64 ptrtoint (ptr addrspace(1) @__asan_kernel_fill to i64), i64 6 }, { i64, i64 } { i64 ptrtoint (ptr addrspace(1) @__asan_kernel_scale to i64), i64 7 }] #0

define weak_odr dso_local spir_kernel void @k_fill(ptr addrspace(1) %p) #1 {
  store i32 1, ptr addrspace(1) %p, align 4
  ret void
}

define weak_odr dso_local spir_kernel void @k_scale(ptr addrspace(1) %p) #2 {
  %x = load i32, ptr addrspace(1) %p, align 4
  %y = mul i32 %x, 3
  store i32 %y, ptr addrspace(1) %p, align 4
  ret void
}

attributes #0 = { "sycl-device-global-size"="32" "sycl-device-image-scope" "sycl-host-access"="0" "sycl-unique-id"="_Z20__AsanKernelMetadata" }
attributes #1 = { sanitize_address "sycl-module-id"="fill.cpp" }
attributes #2 = { sanitize_address "sycl-module-id"="scale.cpp" }
