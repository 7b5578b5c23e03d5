; A composite specialization constant read as one type and given its
; default as another, as DPC++'s front end emits a class with a base: the
; getter's sret type nests the base (packed, 5 bytes) and spells the
; padding out as byte arrays, while the specialization_id's initializer is
; a flat struct of the same layout without them. Written for fatlink's
; tests.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spir64-unknown-unknown"

%struct.Base.base = type <{ i32, i8 }>
%struct.Derived = type { %struct.Base.base, [3 x i8], float, i8, [3 x i8] }

@id_derived = internal addrspace(1) constant { { i32, i8, float, i8 } } { { i32, i8, float, i8 } { i32 7, i8 1, float 2.5, i8 9 } }, align 4
@name.derived = private unnamed_addr addrspace(1) constant [12 x i8] c"uid_derived\00", align 1

declare spir_func void @_Z40__sycl_getComposite2020SpecConstantValueI7DerivedET_PKcPKvS4_(ptr addrspace(4) sret(%struct.Derived) align 4, ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))

define spir_kernel void @k_derived(ptr addrspace(1) %out) #0 {
entry:
  %tmp = alloca %struct.Derived, align 4
  %tmp.ascast = addrspacecast ptr %tmp to ptr addrspace(4)
  call spir_func void @_Z40__sycl_getComposite2020SpecConstantValueI7DerivedET_PKcPKvS4_(ptr addrspace(4) sret(%struct.Derived) align 4 %tmp.ascast, ptr addrspace(4) addrspacecast (ptr addrspace(1) @name.derived to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @id_derived to ptr addrspace(4)), ptr addrspace(4) null)
  call void @llvm.memcpy.p1.p0.i64(ptr addrspace(1) align 4 %out, ptr align 4 %tmp, i64 16, i1 false)
  ret void
}

declare void @llvm.memcpy.p1.p0.i64(ptr addrspace(1) noalias writeonly, ptr noalias readonly, i64, i1 immarg)

attributes #0 = { "sycl-module-id"="flat.cpp" }
