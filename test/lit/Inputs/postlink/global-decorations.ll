; A device global with properties, as DPC++'s front end writes them
; (written for fatlink's tests): !spirv.Decorations with host_access
; (6147), init_mode (6148) and implement_in_csr (6149) in the numbers of
; DPC++'s translator, and Volatile (21), which
; any SPIR-V writer knows.
target triple = "spir64-unknown-unknown"

@dg = addrspace(1) global i32 0, align 8, !spirv.Decorations !0 #0

define spir_kernel void @k(ptr addrspace(1) %out) {
entry:
  %v = load i32, ptr addrspace(1) @dg, align 8
  store i32 %v, ptr addrspace(1) %out, align 4
  ret void
}

attributes #0 = { "sycl-device-global-size"="4" "sycl-unique-id"="uid_dg" "sycl-host-access"="1" }

!0 = !{!1, !2, !3, !4}
!1 = !{i32 6147, i32 1, !"uid_dg"}
!2 = !{i32 6148, i32 0}
!3 = !{i32 6149, i32 1}
!4 = !{i32 21}
