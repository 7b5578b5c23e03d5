; Two kernels of two translation units, each with its compile unit, and a
; third unit that only has a constant's debug information: a split module
; keeps its own unit alone.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spir64-unknown-unknown"

define spir_kernel void @k_one() #0 !dbg !10 {
  ret void, !dbg !12
}

define spir_kernel void @k_two() #1 !dbg !13 {
  ret void, !dbg !14
}

attributes #0 = { "sycl-module-id"="one.cpp" }
attributes #1 = { "sycl-module-id"="two.cpp" }

!llvm.dbg.cu = !{!0, !3, !5}
!llvm.module.flags = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, producer: "clang", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, enums: !2)
!1 = !DIFile(filename: "one.cpp", directory: "/src")
!2 = !{}
!3 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !4, producer: "clang", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, enums: !2)
!4 = !DIFile(filename: "two.cpp", directory: "/src")
!5 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !6, producer: "clang", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, enums: !2, globals: !7)
!6 = !DIFile(filename: "three.cpp", directory: "/src")
!7 = !{!8}
!8 = !DIGlobalVariableExpression(var: !15, expr: !DIExpression(DW_OP_constu, 7, DW_OP_stack_value))
!9 = !{i32 2, !"Debug Info Version", i32 3}
!10 = distinct !DISubprogram(name: "k_one", scope: !1, file: !1, line: 1, type: !11, spFlags: DISPFlagDefinition, unit: !0)
!11 = !DISubroutineType(types: !2)
!12 = !DILocation(line: 2, scope: !10)
!13 = distinct !DISubprogram(name: "k_two", scope: !4, file: !4, line: 1, type: !11, spFlags: DISPFlagDefinition, unit: !3)
!14 = !DILocation(line: 2, scope: !13)
!15 = distinct !DIGlobalVariable(name: "SEVEN", scope: !6, file: !6, line: 1, type: !16, isLocal: true, isDefinition: true)
!16 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
