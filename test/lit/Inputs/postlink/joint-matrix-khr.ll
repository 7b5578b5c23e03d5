; joint_matrix in the type today's DPC++ headers use
; (SPV_KHR_cooperative_matrix: target("spirv.CooperativeMatrixKHR")), with
; built-in calls of ours, written for fatlink's tests: an int8 multiply-add
; of an 8x32 and a 32x16 tile into an 8x16 accumulator.
target triple = "spir64-unknown-unknown"

define spir_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c) {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z86__spirv_CooperativeMatrixLoadKHR_RPU3AS144__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1ciili(ptr addrspace(1) %a, i32 0, i64 32, i32 0)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) @_Z87__spirv_CooperativeMatrixLoadKHR_RPU3AS145__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS1ciili(ptr addrspace(1) %b, i32 0, i64 64, i32 0)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z26__spirv_CompositeConstructi(i32 0)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS145__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS144__spirv_CooperativeMatrixKHR__int_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) %ma, target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) %mc, i32 3)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS144__spirv_CooperativeMatrixKHR__int_3_8_16_2ili(ptr addrspace(1) %c, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) %md, i32 0, i64 64, i32 0)
  ret void
}

declare spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z86__spirv_CooperativeMatrixLoadKHR_RPU3AS144__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1ciili(ptr addrspace(1), i32, i64, i32)
declare spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) @_Z87__spirv_CooperativeMatrixLoadKHR_RPU3AS145__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS1ciili(ptr addrspace(1), i32, i64, i32)
declare spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z26__spirv_CompositeConstructi(i32)
declare spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS145__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS144__spirv_CooperativeMatrixKHR__int_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0), target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1), target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2), i32)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS144__spirv_CooperativeMatrixKHR__int_3_8_16_2ili(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2), i32, i64, i32)
