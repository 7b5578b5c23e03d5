; Pointer annotations as DPC++'s front end writes them (written for
; fatlink's tests): one carrying SYCL compile-time properties
; ("sycl-properties" and the list of name/value strings), one a user's own
; annotation.
target triple = "spir64-unknown-unknown"

%struct.S = type { ptr addrspace(4), ptr addrspace(4) }

@.str = private unnamed_addr constant [16 x i8] c"sycl-properties\00", section "llvm.metadata"
@.str.file = private unnamed_addr constant [8 x i8] c"ann.cpp\00", section "llvm.metadata"
@.str.name = private unnamed_addr constant [15 x i8] c"sycl-init-mode\00", section "llvm.metadata"
@.str.value = private unnamed_addr constant [2 x i8] c"1\00", section "llvm.metadata"
@.args = private unnamed_addr constant { ptr, ptr } { ptr @.str.name, ptr @.str.value }, section "llvm.metadata"
@.str.mine = private unnamed_addr constant [8 x i8] c"my-note\00", section "llvm.metadata"

define spir_kernel void @k(ptr addrspace(1) %out) {
entry:
  %s = alloca %struct.S, align 8
  %s.ascast = addrspacecast ptr %s to ptr addrspace(4)
  %a = call ptr addrspace(4) @llvm.ptr.annotation.p4.p0(ptr addrspace(4) %s.ascast, ptr @.str, ptr @.str.file, i32 5, ptr @.args)
  store ptr addrspace(4) null, ptr addrspace(4) %a, align 8
  %b.addr = getelementptr inbounds %struct.S, ptr addrspace(4) %s.ascast, i64 0, i32 1
  %b = call ptr addrspace(4) @llvm.ptr.annotation.p4.p0(ptr addrspace(4) %b.addr, ptr @.str.mine, ptr @.str.file, i32 6, ptr null)
  store ptr addrspace(4) null, ptr addrspace(4) %b, align 8
  store i32 1, ptr addrspace(1) %out, align 4
  ret void
}

declare ptr addrspace(4) @llvm.ptr.annotation.p4.p0(ptr addrspace(4), ptr, ptr, i32, ptr)
