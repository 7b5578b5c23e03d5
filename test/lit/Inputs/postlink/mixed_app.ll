; The application's translation unit of a program that mixes the post-link
; features (DPC++ form): a kernel reading a specialization constant (code
; for JIT SPIR-V: no buffer), a kernel updating a device global of image
; scope, an ESIMD kernel, and a kernel calling a SYCL_EXTERNAL function the
; library's translation unit (mixed_lib.ll) defines.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

%spec_id.float = type { float }

@id_scale = addrspace(1) constant %spec_id.float { float 1.5 }, align 4
@name.scale = private unnamed_addr addrspace(1) constant [36 x i8] c"_ZTS14name_generatorIL_Z8id_scaleEE\00", align 1
@dg_total = addrspace(1) global i32 0, align 4 #0

declare spir_func float @_Z37__sycl_getScalar2020SpecConstantValueIfET_PKcPKvS4_(ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))
declare spir_func float @_Z9lib_scalef(float) #2

define internal spir_func float @helper(float %x) {
  %r = fadd float %x, 1.0
  ret float %r
}

define spir_kernel void @k_spec(ptr addrspace(1) %p) #1 {
  %s = call spir_func float @_Z37__sycl_getScalar2020SpecConstantValueIfET_PKcPKvS4_(ptr addrspace(4) addrspacecast (ptr addrspace(1) @name.scale to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @id_scale to ptr addrspace(4)), ptr addrspace(4) null)
  %x = load float, ptr addrspace(1) %p
  %y = fmul float %x, %s
  store float %y, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_dg(ptr addrspace(1) %p) #1 {
  %v = load i32, ptr addrspace(1) @dg_total
  %n = add i32 %v, 1
  store i32 %n, ptr addrspace(1) @dg_total
  ret void
}

define spir_kernel void @k_simd(ptr addrspace(1) %p) #1 !sycl_explicit_simd !0 {
  %x = load float, ptr addrspace(1) %p
  %y = call spir_func float @helper(float %x)
  store float %y, ptr addrspace(1) %p
  ret void
}

define spir_kernel void @k_call(ptr addrspace(1) %p) #1 {
  %x = load float, ptr addrspace(1) %p
  %y = call spir_func float @_Z9lib_scalef(float %x)
  store float %y, ptr addrspace(1) %p
  ret void
}

attributes #0 = { "sycl-device-global-size"="4" "sycl-device-image-scope" "sycl-unique-id"="a1b2c3d4____ZL8dg_total" }
attributes #1 = { "sycl-module-id"="app.cpp" }
attributes #2 = { "sycl-module-id"="lib.cpp" }

!0 = !{}
