; SYCL 2020 specialization constants in the form DPC++'s front end emits
; them (facts: intel/llvm's sycl-post-link spec-constants tests): getter
; calls with the symbolic id, the specialization_id variable (its first
; member is the default) and the spec-constant buffer; a composite wider
; than 64 bits comes back through sret. BUF is the buffer operand: tests
; make it null (code compiled for JIT SPIR-V) or the kernel's buffer
; argument (code compiled for an AOT target).
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

%spec_id.int = type { i32 }
%spec_id.bool = type { i8 }
%spec_id.half = type { half }
%struct.Inner = type { i32, float }
%struct.Compos = type { i32, double, %struct.Inner }
%spec_id.compos = type { %struct.Compos }
%struct.Small = type { i8, i32 }
%spec_id.small = type { %struct.Small }

@id_int = addrspace(1) constant %spec_id.int { i32 42 }, align 4
@id_bool = addrspace(1) constant %spec_id.bool { i8 1 }, align 1
@id_half = addrspace(1) constant %spec_id.half { half 0xH4000 }, align 2
@id_compos = addrspace(1) constant %spec_id.compos { %struct.Compos { i32 1, double 2.0, %struct.Inner { i32 13, float 4.5 } } }, align 8
@id_small = addrspace(1) constant %spec_id.small { %struct.Small { i8 7, i32 -1 } }, align 4
@name.int = private unnamed_addr addrspace(1) constant [34 x i8] c"_ZTS14name_generatorIL_Z6id_intEE\00", align 1
@name.bool = private unnamed_addr addrspace(1) constant [35 x i8] c"_ZTS14name_generatorIL_Z7id_boolEE\00", align 1
@name.half = private unnamed_addr addrspace(1) constant [35 x i8] c"_ZTS14name_generatorIL_Z7id_halfEE\00", align 1
@name.compos = private unnamed_addr addrspace(1) constant [37 x i8] c"_ZTS14name_generatorIL_Z9id_composEE\00", align 1
@name.small = private unnamed_addr addrspace(1) constant [36 x i8] c"_ZTS14name_generatorIL_Z8id_smallEE\00", align 1

declare spir_func i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))
declare spir_func zeroext i1 @_Z37__sycl_getScalar2020SpecConstantValueIbET_PKcPKvS4_(ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))
declare spir_func half @_Z37__sycl_getScalar2020SpecConstantValueIDF16_ET_PKcPKvS4_(ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))
declare spir_func void @_Z40__sycl_getComposite2020SpecConstantValueI6ComposET_PKcPKvS4_(ptr addrspace(4) sret(%struct.Compos) align 8, ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))
declare spir_func %struct.Small @_Z40__sycl_getComposite2020SpecConstantValueI5SmallET_PKcPKvS4_(ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))

; Reads int, bool and half.
define spir_kernel void @k_scalar(ptr addrspace(1) %out, ptr addrspace(1) %_arg__specialization_constants_buffer) {
entry:
  %buf = addrspacecast ptr addrspace(1) %_arg__specialization_constants_buffer to ptr addrspace(4)
  %i = call spir_func i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr addrspace(4) addrspacecast (ptr addrspace(1) @name.int to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @id_int to ptr addrspace(4)), ptr addrspace(4) BUF)
  %b = call spir_func zeroext i1 @_Z37__sycl_getScalar2020SpecConstantValueIbET_PKcPKvS4_(ptr addrspace(4) addrspacecast (ptr addrspace(1) @name.bool to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @id_bool to ptr addrspace(4)), ptr addrspace(4) BUF)
  %h = call spir_func half @_Z37__sycl_getScalar2020SpecConstantValueIDF16_ET_PKcPKvS4_(ptr addrspace(4) addrspacecast (ptr addrspace(1) @name.half to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @id_half to ptr addrspace(4)), ptr addrspace(4) BUF)
  %bz = zext i1 %b to i32
  %s = add i32 %i, %bz
  store i32 %s, ptr addrspace(1) %out, align 4
  %p = getelementptr i8, ptr addrspace(1) %out, i64 4
  store half %h, ptr addrspace(1) %p, align 2
  ret void
}

; Reads a composite through sret, a small one by value, and the int again
; through a helper (the same constant: one id).
define spir_kernel void @k_compos(ptr addrspace(1) %out, ptr addrspace(1) %_arg__specialization_constants_buffer) {
entry:
  %buf = addrspacecast ptr addrspace(1) %_arg__specialization_constants_buffer to ptr addrspace(4)
  %tmp = alloca %struct.Compos, align 8
  %tmp.ascast = addrspacecast ptr %tmp to ptr addrspace(4)
  call spir_func void @_Z40__sycl_getComposite2020SpecConstantValueI6ComposET_PKcPKvS4_(ptr addrspace(4) sret(%struct.Compos) align 8 %tmp.ascast, ptr addrspace(4) addrspacecast (ptr addrspace(1) @name.compos to ptr addrspace(4)), ptr addrspace(4) getelementptr inbounds (%spec_id.compos, ptr addrspace(4) addrspacecast (ptr addrspace(1) @id_compos to ptr addrspace(4)), i64 0, i32 0), ptr addrspace(4) BUF)
  %sm = call spir_func %struct.Small @_Z40__sycl_getComposite2020SpecConstantValueI5SmallET_PKcPKvS4_(ptr addrspace(4) addrspacecast (ptr addrspace(1) @name.small to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @id_small to ptr addrspace(4)), ptr addrspace(4) BUF)
  %d = getelementptr inbounds %struct.Compos, ptr %tmp, i64 0, i32 1
  %dv = load double, ptr %d, align 8
  %di = fptosi double %dv to i32
  %sv = extractvalue %struct.Small %sm, 1
  %n = call spir_func i32 @read_int(ptr addrspace(4) %buf)
  %s1 = add i32 %di, %sv
  %s2 = add i32 %s1, %n
  store i32 %s2, ptr addrspace(1) %out, align 4
  ret void
}

; No specialization constant.
define spir_kernel void @k_plain(ptr addrspace(1) %out) {
entry:
  store i32 7, ptr addrspace(1) %out, align 4
  ret void
}

define spir_func i32 @read_int(ptr addrspace(4) %buf) {
entry:
  %i = call spir_func i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr addrspace(4) addrspacecast (ptr addrspace(1) @name.int to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @id_int to ptr addrspace(4)), ptr addrspace(4) BUF)
  ret i32 %i
}
