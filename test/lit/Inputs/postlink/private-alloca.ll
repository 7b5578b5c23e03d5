; Specialization constants read two ways: a scalar getter and private
; arrays whose length is a specialization constant (llvm.sycl.alloca),
; whose getter is declared first - DPC++ numbers getter by getter.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spir64-unknown-unknown"

%sid64 = type { i64 }
%sid32 = type { i32 }

@len = internal addrspace(1) constant %sid64 { i64 16 }, align 8
@factor = internal addrspace(1) constant %sid32 { i32 3 }, align 4
@len_name = private unnamed_addr constant [7 x i8] c"id_len\00", align 1
@factor_name = private unnamed_addr constant [10 x i8] c"id_factor\00", align 1

declare ptr @llvm.sycl.alloca.p0.p4.p4.p4.f32(ptr addrspace(4), ptr addrspace(4), ptr addrspace(4), float, i64)
declare spir_func i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))

define spir_kernel void @k_alloca(ptr addrspace(1) %out) #0 {
  %f = call spir_func i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr addrspace(4) addrspacecast (ptr @factor_name to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @factor to ptr addrspace(4)), ptr addrspace(4) null)
  %a = call ptr @llvm.sycl.alloca.p0.p4.p4.p4.f32(ptr addrspace(4) addrspacecast (ptr @len_name to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @len to ptr addrspace(4)), ptr addrspace(4) null, float 0.000000e+00, i64 4)
  %v = sitofp i32 %f to float
  store float %v, ptr %a, align 4
  %r = load float, ptr %a, align 4
  store float %r, ptr addrspace(1) %out, align 4
  ret void
}

attributes #0 = { "sycl-module-id"="p.cpp" }
