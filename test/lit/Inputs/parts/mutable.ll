; The kernels of shared.ll sharing a mutable variable of global memory
; that is not external: every part would get its own, so the module is
; emitted whole.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

@counter = internal addrspace(1) global i32 0, align 4
@table = internal addrspace(1) constant [4 x i32] [i32 1, i32 2, i32 3, i32 4], align 4

declare spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32)

define internal spir_func i32 @helper(i32 %x) {
entry:
  %i = and i32 %x, 3
  %p = getelementptr [4 x i32], ptr addrspace(1) @table, i32 0, i32 %i
  %t = load i32, ptr addrspace(1) %p, align 4
  %r = mul i32 %t, %x
  ret i32 %r
}

define spir_kernel void @k_a(ptr addrspace(1) %out) {
entry:
  %id = call spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32 0)
  %x = trunc i64 %id to i32
  %v = call spir_func i32 @helper(i32 %x)
  store i32 %v, ptr addrspace(1) %out, align 4
  store i32 %v, ptr addrspace(1) @counter, align 4
  ret void
}

define spir_kernel void @k_b(ptr addrspace(1) %out) {
entry:
  %id = call spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32 0)
  %x = trunc i64 %id to i32
  %y = add i32 %x, 1
  %v = call spir_func i32 @helper(i32 %y)
  store i32 %v, ptr addrspace(1) %out, align 4
  %c = load i32, ptr addrspace(1) @counter, align 4
  %s = add i32 %c, %v
  store i32 %s, ptr addrspace(1) @counter, align 4
  ret void
}

define spir_kernel void @k_c(ptr addrspace(1) %out, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %acc = phi i32 [ 0, %entry ], [ %sum, %loop ]
  %v = call spir_func i32 @helper(i32 %i)
  %sum = add i32 %acc, %v
  %next = add i32 %i, 1
  %more = icmp slt i32 %next, %n
  br i1 %more, label %loop, label %done
done:
  store i32 %sum, ptr addrspace(1) %out, align 4
  store i32 %sum, ptr addrspace(1) @counter, align 4
  ret void
}

define spir_kernel void @k_d(ptr addrspace(1) %out) {
entry:
  %c = load i32, ptr addrspace(1) @counter, align 4
  %v = call spir_func i32 @helper(i32 %c)
  store i32 %v, ptr addrspace(1) %out, align 4
  ret void
}
