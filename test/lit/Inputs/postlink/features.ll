; Entry points and module contents whose properties and cleanup
; sycl-post-link-dpcpp.test checks against what DPC++'s post-link does.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spir64-unknown-unknown"

%dg = type { ptr addrspace(4) }

; a device global that only @llvm.compiler.used keeps, and one a kernel uses
@dg_unused = weak_odr addrspace(1) global %dg zeroinitializer, align 8 #10
@dg_used = weak_odr addrspace(1) global %dg zeroinitializer, align 8 #11
@llvm.compiler.used = appending global [2 x ptr addrspace(4)] [ptr addrspace(4) addrspacecast (ptr addrspace(1) @dg_unused to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @dg_used to ptr addrspace(4))], section "llvm.metadata"
; the instrumentation's mark that the code is AddressSanitizer's
@__AsanKernelMetadata = addrspace(1) global i64 0

define spir_kernel void @k_matrix() #0 !sycl_joint_matrix !1 !sycl_joint_matrix_mad !2 {
  call spir_func void @helper()
  call spir_func void @indirect_target()
  call spir_func zeroext i16 @__devicelib_ConvertFToBF16INTEL(ptr addrspace(4) null)
  store ptr addrspace(4) null, ptr addrspace(1) @dg_used
  ret void
}

define spir_kernel void @k_grf() #1 {
  call spir_func void @outside()
  ret void
}

; an entry point of another calling convention than spir_func
define void @ext_c() #0 {
  ret void
}

; a SPIR-V builtin marked SYCL_EXTERNAL: no entry point
define spir_func void @_Z20__spirv_SomethingNewv() #0 {
  ret void
}

define internal spir_func void @helper() {
  ret void
}

; its address may be taken elsewhere: never internalized
define spir_func void @indirect_target() #2 {
  ret void
}

define available_externally spir_func void @avail() {
  ret void
}

declare spir_func zeroext i16 @__devicelib_ConvertFToBF16INTEL(ptr addrspace(4))
declare spir_func void @outside()

attributes #0 = { "sycl-module-id"="f.cpp" "sycl-optlevel"="1" }
attributes #1 = { "sycl-module-id"="g.cpp" "sycl-grf-size"="256" }
attributes #2 = { "referenced-indirectly" }
attributes #10 = { "sycl-device-global-size"="8" "sycl-unique-id"="uid_unused" }
attributes #11 = { "sycl-device-global-size"="8" "sycl-unique-id"="uid_used" }

!1 = !{!"matrix_type::fp16,use::a,8,16"}
!2 = !{!"matrix_type::fp16,matrix_type::fp16,matrix_type::fp32,matrix_type::fp32,8,16,16"}
