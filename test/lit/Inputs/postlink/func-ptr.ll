; Function pointers in two translation units, written for fatlink's tests:
; one.cpp's kernel keeps a helper's address in a table and calls through a
; pointer of type i32(i32), which may reach the functions marked
; referenced-indirectly with that signature (cb_int) but not one of another
; signature (cb_void); two.cpp's kernel uses none of them.
target triple = "spir64-unknown-unknown"

@table = internal addrspace(1) global ptr @helper, align 8

define spir_func i32 @helper(i32 %x) {
  %r = add i32 %x, 1
  ret i32 %r
}

define spir_func i32 @cb_int(i32 %x) #2 {
  ret i32 %x
}

define spir_func void @cb_void() #2 {
  ret void
}

define spir_kernel void @k_ptr(ptr addrspace(1) %out) #0 {
entry:
  %f = load ptr, ptr addrspace(1) @table, align 8
  %r = call spir_func i32 %f(i32 2)
  store i32 %r, ptr addrspace(1) %out, align 4
  ret void
}

define spir_kernel void @k_plain(ptr addrspace(1) %out) #1 {
entry:
  store i32 0, ptr addrspace(1) %out, align 4
  ret void
}

attributes #0 = { "sycl-module-id"="one.cpp" }
attributes #1 = { "sycl-module-id"="two.cpp" }
attributes #2 = { "referenced-indirectly" }
