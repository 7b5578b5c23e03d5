/* codegen.c - compiles a linked module with LLVM's back ends in process:
 * SPIR-V through the SPIRV target for spirv/spir triples, native objects
 * otherwise. A module is verified first (one the IR linker made from verified
 * modules needs no second look) so that bad IR is an error, not a
 * crash inside the back end. */
#include "internal.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Every target libLLVM has: the registration object is built for whatever
 * host the link is for (-m, the inputs), SPIR-V for SYCL devices. */
void dl_init(void) {
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
}

/* LLVM 22's SPIR-V back end keeps process-wide mutable state
 * (SPIRVModuleAnalysis's static MAI; llvm-project issue 160613): two
 * emissions at once corrupt each other, and a module emitted after others
 * in the same process may get ids of theirs (wrapper/plan/sycl_emit.c says
 * what and how the planner makes that safe). SPIR-V emission is therefore
 * serialised (other targets' back ends keep no such state), and the
 * process remembers whether it (or its parent before the fork)
 * emitted SPIR-V: a process that has not is what the planner forks from. */
static pthread_mutex_t emit_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int spirv_emitted;

int dl_spirv_fresh(void) { return atomic_load(&spirv_emitted) == 0; }

/* LLVM 22's SPIR-V back end cannot write available_externally
 * definitions: a function so defined crashes it, a variable becomes an
 * import with an initializer, which SPIR-V forbids. By the one-definition
 * rule their definition is the same everywhere: a function or a constant
 * becomes the module's own copy (internal), a variable a declaration the
 * SPIR-V imports. */
static void spirv_linkage(LLVMModuleRef m) {
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    if (LLVMGetLinkage(f) == LLVMAvailableExternallyLinkage)
      LLVMSetLinkage(f, LLVMInternalLinkage);
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    if (LLVMGetLinkage(g) != LLVMAvailableExternallyLinkage)
      continue;
    if (LLVMIsGlobalConstant(g)) {
      LLVMSetLinkage(g, LLVMInternalLinkage);
    } else {
      LLVMSetInitializer(g, NULL);
      LLVMSetLinkage(g, LLVMExternalLinkage);
    }
  }
}

int dl_codegen(struct dl_module *m, const char *cpu, int opt_level,
               enum dl_filetype type, struct lw_buf *out, struct lw_diag *d) {
  char *msg = NULL;
  if (!m->valid && LLVMVerifyModule(m->mod, LLVMReturnStatusAction, &msg)) {
    int rc = lw_error(d, LW_EFORMAT, "device module for '%s' is invalid: %s",
                      m->triple, msg ? msg : "");
    LLVMDisposeMessage(msg);
    return rc;
  }
  LLVMDisposeMessage(msg);
  msg = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(m->triple, &target, &msg)) {
    int rc = lw_error(d, LW_ELLVM, "no LLVM target for '%s': %s", m->triple,
                      msg ? msg : "");
    LLVMDisposeMessage(msg);
    return rc;
  }
  static const LLVMCodeGenOptLevel levels[] = {
      LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
      LLVMCodeGenLevelAggressive};
  if (opt_level < 0)
    opt_level = 0;
  if (opt_level > 3)
    opt_level = 3;
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, m->triple, cpu ? cpu : "", "",
                              levels[opt_level],
                              LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm)
    return lw_error(d, LW_ELLVM, "cannot create a target machine for '%s'",
                    m->triple);
  LLVMMemoryBufferRef mb = NULL;
  int rc = 0;
  int spirv = strncmp(m->triple, "spir", 4) == 0;
  if (spirv) {
    atomic_store(&spirv_emitted, 1);
    /* What the back end cannot write (DPC++'s post-link keeps it for its
     * own translator) */
    spirv_linkage(m->mod);
    if (dl__drop_property_annotations(m->mod))
      dl__drop_unused(m->mod);
    if (dl__drop_global_decorations(m->mod)) {
      LLVMDisposeTargetMachine(tm);
      return lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
  if (!spirv && type == DL_OBJECT && dl__use_init_array(m->mod, m->triple)) {
    LLVMDisposeTargetMachine(tm);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  if (spirv)
    pthread_mutex_lock(&emit_lock);
  LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(
      tm, m->mod, type == DL_OBJECT ? LLVMObjectFile : LLVMAssemblyFile, &msg,
      &mb);
  if (spirv)
    pthread_mutex_unlock(&emit_lock);
  if (failed) {
    rc = lw_error(d, LW_ELLVM, "code generation for '%s' failed: %s", m->triple,
                  msg ? msg : "");
    LLVMDisposeMessage(msg);
  } else {
    size_t before = out->len;
    rc = lw_buf_append(out, LLVMGetBufferStart(mb), LLVMGetBufferSize(mb));
    if (rc)
      lw_error(d, rc, "out of memory");
    LLVMDisposeMemoryBuffer(mb);
    if (!rc && spirv && type == DL_OBJECT) {
      /* The back end's mistakes undone (labels from an earlier module
       * first: the parser reads no module with an id defined twice); then,
       * its id order not being reproducible, the ids made canonical. */
      rc = dl_spirv_labels(out, before, d);
      if (!rc)
        rc = dl__spirv_int_nulls(out, before, d);
      if (!rc)
        rc = dl__spirv_function_pointers(out, before, d);
      struct lw_buf spv = {out->data + before, out->len - before, 0};
      if (!rc)
        rc = dl__spirv_canonical_ids(&spv, d);
    }
  }
  LLVMDisposeTargetMachine(tm);
  return rc;
}
