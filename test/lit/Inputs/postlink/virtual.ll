; SYCL virtual functions in the form DPC++'s front end emits them (facts:
; intel/llvm's design of sycl_ext_oneapi_virtual_functions): a virtual
; function carries "indirectly-callable"=<set>, a kernel that calls through
; a vtable "calls-indirectly"=<sets>; a vtable names every virtual function
; of its class. Base::foo is in the default set (_ZTSv, with a helper),
; Base::bar in set_fp64 and uses fp64 (aspect 6). Constructor only makes
; an object; Use and UseFP64 call foo and bar.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

@_ZTV4Base = linkonce_odr addrspace(1) constant { [4 x ptr addrspace(4)] } { [4 x ptr addrspace(4)] [ptr addrspace(4) null, ptr addrspace(4) null, ptr addrspace(4) addrspacecast (ptr @_ZN4Base3fooEv to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr @_ZN4Base3barEv to ptr addrspace(4))] }, align 8

define internal spir_func i32 @foo_helper(i32 %x) {
entry:
  %r = mul i32 %x, 3
  ret i32 %r
}

define linkonce_odr spir_func i32 @_ZN4Base3fooEv(ptr addrspace(4) %this) #0 {
entry:
  %r = call spir_func i32 @foo_helper(i32 14)
  ret i32 %r
}

define linkonce_odr spir_func i32 @_ZN4Base3barEv(ptr addrspace(4) %this) #1 !sycl_used_aspects !0 {
entry:
  %d = fmul double 3.5, 2.0
  %r = fptosi double %d to i32
  ret i32 %r
}

define spir_kernel void @_ZTS11Constructor(ptr addrspace(1) %obj) #2 {
entry:
  store ptr addrspace(4) getelementptr inbounds (i8, ptr addrspace(4) addrspacecast (ptr addrspace(1) @_ZTV4Base to ptr addrspace(4)), i64 16), ptr addrspace(1) %obj, align 8
  ret void
}

define spir_kernel void @_ZTS3Use(ptr addrspace(1) %obj, ptr addrspace(1) %out) #3 {
entry:
  %o = addrspacecast ptr addrspace(1) %obj to ptr addrspace(4)
  %vt = load ptr addrspace(4), ptr addrspace(4) %o, align 8
  %fp = load ptr addrspace(4), ptr addrspace(4) %vt, align 8
  %f = addrspacecast ptr addrspace(4) %fp to ptr
  %r = call spir_func i32 %f(ptr addrspace(4) %o)
  store i32 %r, ptr addrspace(1) %out, align 4
  ret void
}

define spir_kernel void @_ZTS7UseFP64(ptr addrspace(1) %obj, ptr addrspace(1) %out) #4 !sycl_used_aspects !0 {
entry:
  %o = addrspacecast ptr addrspace(1) %obj to ptr addrspace(4)
  %vt = load ptr addrspace(4), ptr addrspace(4) %o, align 8
  %slot = getelementptr inbounds ptr addrspace(4), ptr addrspace(4) %vt, i64 1
  %fp = load ptr addrspace(4), ptr addrspace(4) %slot, align 8
  %f = addrspacecast ptr addrspace(4) %fp to ptr
  %r = call spir_func i32 %f(ptr addrspace(4) %o)
  store i32 %r, ptr addrspace(1) %out, align 4
  ret void
}

attributes #0 = { "indirectly-callable"="_ZTSv" "sycl-module-id"="vf.cpp" }
attributes #1 = { "indirectly-callable"="_ZTS8set_fp64" "sycl-module-id"="vf.cpp" }
attributes #2 = { "sycl-module-id"="vf.cpp" }
attributes #3 = { "calls-indirectly"="_ZTSv" "sycl-module-id"="vf.cpp" }
attributes #4 = { "calls-indirectly"="_ZTS8set_fp64" "sycl-module-id"="vf.cpp" }

!0 = !{i32 6}
