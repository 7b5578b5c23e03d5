; An FPGA kernel that writes to a host pipe, in the form we take DPC++'s
; front end to give one: the pipe is a variable of its own marked
; "sycl-host-pipe", with its element's size and its unique id; the kernel
; reaches it through its address (a real program calls the pipe built-ins).
; A second kernel uses no pipe.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64_fpga-unknown-unknown"

%struct.PipeStorage = type { i32, i32, i32 }

@_ZN4sycl3_V13ext5intel12experimental9host_pipeI7ToHostiE6__pipeE = linkonce_odr dso_local addrspace(1) constant %struct.PipeStorage { i32 4, i32 4, i32 8 }, align 4 #0

define spir_kernel void @_ZTS10PipeWriter(ptr addrspace(1) %out) #1 {
  %cap = load i32, ptr addrspace(1) getelementptr inbounds (%struct.PipeStorage, ptr addrspace(1) @_ZN4sycl3_V13ext5intel12experimental9host_pipeI7ToHostiE6__pipeE, i64 0, i32 2), align 4
  store i32 %cap, ptr addrspace(1) %out, align 4
  ret void
}

define spir_kernel void @_ZTS8NoPipes(ptr addrspace(1) %out) #1 {
  store i32 7, ptr addrspace(1) %out, align 4
  ret void
}

attributes #0 = { "sycl-host-pipe" "sycl-host-pipe-size"="4" "sycl-unique-id"="a1b2c3d4____ZN4sycl3_V13ext5intel12experimental9host_pipeI7ToHostiE6__pipeE" }
attributes #1 = { "sycl-module-id"="pipes.cpp" }
