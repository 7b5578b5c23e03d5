/* build.c - the registration module of a link: a context and module for
 * the host, the SYCL descriptor (DPC++'s: sycl.c, or LLVM 22's:
 * sycl_llvm22.c) or LLVM 23's binary (sycl_llvm23.c), the libomptarget
 * one (openmp.c) and the CUDA and HIP fatbinaries' registration (cuda.c),
 * built on the IR helpers (ir.c), then the constructor and destructor
 * lists. */
#include "internal.h"

int wrp_build(const struct wrp_request *req, LLVMContextRef *ctx,
              LLVMModuleRef *mod, struct lw_diag *d) {
  struct wrp__ir ir = {0};
  ir.ctx = LLVMContextCreate();
  ir.mod = LLVMModuleCreateWithNameInContext("offload.wrapper.module", ir.ctx);
  LLVMSetTarget(ir.mod, req->host_triple);
  ir.i8 = LLVMInt8TypeInContext(ir.ctx);
  ir.i16 = LLVMInt16TypeInContext(ir.ctx);
  ir.i32 = LLVMInt32TypeInContext(ir.ctx);
  ir.i64 = LLVMInt64TypeInContext(ir.ctx);
  ir.ptr = LLVMPointerTypeInContext(ir.ctx, 0);
  ir.entry_ty = LLVMStructCreateNamed(ir.ctx, "struct.__tgt_offload_entry");
  LLVMTypeRef ef[9] = {ir.i64, ir.i16, ir.i16, ir.i32, ir.ptr,
                       ir.ptr, ir.i64, ir.i64, ir.ptr};
  LLVMStructSetBody(ir.entry_ty, ef, 9, 0);
  int rc = 0;
  if (req->nsycl && req->sycl_abi == WRP_SYCL_LLVM23)
    wrp__sycl_llvm23(&ir, &req->sycl_binary, req->relocatable);
  else if (req->nsycl)
    rc = req->sycl_abi == WRP_SYCL_LLVM22
             ? wrp__sycl_llvm22(&ir, req->sycl, req->nsycl, req->relocatable,
                                d)
             : wrp__sycl(&ir, req->sycl, req->nsycl, d);
  if (!rc && req->nomp)
    rc = wrp__openmp(&ir, req->omp, req->nomp, req->relocatable, d);
  if (!rc && req->cuda.data)
    wrp__fatbin(&ir, &req->cuda, 0);
  if (!rc && req->hip.data)
    wrp__fatbin(&ir, &req->hip, 1);
  if (wrp__shared_finish(&ir) && !rc)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc)
    wrp__finish_xtors(&ir);
  if (rc) {
    LLVMDisposeModule(ir.mod);
    LLVMContextDispose(ir.ctx);
    return rc;
  }
  *ctx = ir.ctx;
  *mod = ir.mod;
  return 0;
}
