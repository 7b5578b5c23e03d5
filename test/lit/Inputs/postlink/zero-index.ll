; Device code as DPC++ makes it at -O0, written for fatlink's tests: a
; member function (optnone) reaching a struct's members through
; getelementptr with zero indices, which no optimisation removes; LLVM 22's
; SPIR-V back end writes the zero as an OpConstantNull, which SPIR-V
; refuses as the index of a structure's member.
target triple = "spir64-unknown-unknown"

%struct.Pair = type { i32, float }

define spir_func void @set(ptr addrspace(4) %this, i32 %v) #0 {
entry:
  %first = getelementptr inbounds %struct.Pair, ptr addrspace(4) %this, i32 0, i32 0
  store i32 %v, ptr addrspace(4) %first, align 4
  %second = getelementptr inbounds %struct.Pair, ptr addrspace(4) %this, i32 0, i32 1
  store float 1.0, ptr addrspace(4) %second, align 4
  ret void
}

define spir_kernel void @k(ptr addrspace(1) %out) {
entry:
  %p = alloca %struct.Pair, align 4
  %p.ascast = addrspacecast ptr %p to ptr addrspace(4)
  call spir_func void @set(ptr addrspace(4) %p.ascast, i32 7)
  %v = load i32, ptr %p, align 4
  store i32 %v, ptr addrspace(1) %out, align 4
  ret void
}

attributes #0 = { noinline optnone }
