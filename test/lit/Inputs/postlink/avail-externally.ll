; available_externally definitions (written for fatlink's tests): a
; function a kernel calls, a variable and a constant it reads. Their real
; definitions are elsewhere and the same.
target triple = "spir64-unknown-unknown"

@counter = available_externally addrspace(1) global i32 79, align 4
@table = available_externally addrspace(1) constant i32 5, align 4

define available_externally spir_func i32 @twice(i32 %x) {
  %r = mul i32 %x, 2
  ret i32 %r
}

define spir_kernel void @k(ptr addrspace(1) %out) {
entry:
  %c = load i32, ptr addrspace(1) @counter, align 4
  %t = load i32, ptr addrspace(1) @table, align 4
  %s = add i32 %c, %t
  %r = call spir_func i32 @twice(i32 %s)
  store i32 %r, ptr addrspace(1) %out, align 4
  ret void
}
