; A kernel instrumented as DPC++'s front end does by default
; (-fsycl-instrument-device-code), written for fatlink's tests: calls to
; the ITT hooks DPC++'s device libraries define.
target triple = "spir64-unknown-unknown"

define spir_kernel void @k(ptr addrspace(1) %out) #0 {
entry:
  call spir_func void @__itt_offload_wi_start_wrapper()
  store i32 1, ptr addrspace(1) %out, align 4
  call spir_func void @__itt_offload_wi_finish_wrapper()
  ret void
}

declare spir_func void @__itt_offload_wi_start_wrapper()
declare spir_func void @__itt_offload_wi_finish_wrapper()

attributes #0 = { "sycl-module-id"="itt.cpp" }
