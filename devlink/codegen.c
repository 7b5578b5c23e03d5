/* codegen.c - compiles a linked module with LLVM's back ends in process:
 * SPIR-V through the SPIRV target for spirv/spir triples, native objects
 * otherwise. The module is verified first so that bad IR is an error, not a
 * crash inside the back end. */
#include "internal.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

void dl_init(void) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeSPIRVTargetInfo();
  LLVMInitializeSPIRVTarget();
  LLVMInitializeSPIRVTargetMC();
  LLVMInitializeSPIRVAsmPrinter();
}

int dl_codegen(struct dl_module *m, int opt_level, enum dl_filetype type,
               struct lw_buf *out, struct lw_diag *d) {
  char *msg = NULL;
  if (LLVMVerifyModule(m->mod, LLVMReturnStatusAction, &msg)) {
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
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
      target, m->triple, "", "", levels[opt_level], LLVMRelocPIC,
      LLVMCodeModelDefault);
  if (!tm)
    return lw_error(d, LW_ELLVM, "cannot create a target machine for '%s'",
                    m->triple);
  LLVMMemoryBufferRef mb = NULL;
  int rc = 0;
  if (LLVMTargetMachineEmitToMemoryBuffer(
          tm, m->mod, type == DL_OBJECT ? LLVMObjectFile : LLVMAssemblyFile,
          &msg, &mb)) {
    rc = lw_error(d, LW_ELLVM, "code generation for '%s' failed: %s",
                  m->triple, msg ? msg : "");
    LLVMDisposeMessage(msg);
  } else {
    rc = lw_buf_append(out, LLVMGetBufferStart(mb), LLVMGetBufferSize(mb));
    if (rc)
      lw_error(d, rc, "out of memory");
    LLVMDisposeMemoryBuffer(mb);
  }
  LLVMDisposeTargetMachine(tm);
  return rc;
}

/* LLVM's option parser exits the process on an unknown option, so each
 * option is tried first in a forked child with its output silenced; only a
 * set the child accepted is applied here. */
int dl_set_llvm_options(const struct lw_strvec *opts, struct lw_diag *d) {
  if (opts->n == 0)
    return 0;
  const char **argv = calloc(opts->n + 2, sizeof *argv);
  if (!argv)
    return lw_error(d, LW_ENOMEM, "out of memory");
  argv[0] = "fatlink";
  for (size_t i = 0; i < opts->n; i++)
    argv[i + 1] = opts->v[i];
  for (size_t i = 0; i < opts->n; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      free(argv);
      return lw_error(d, LW_EIO, "cannot fork to check LLVM options");
    }
    if (pid == 0) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) {
        dup2(null, 1);
        dup2(null, 2);
      }
      const char *one[2] = {"fatlink", opts->v[i]};
      LLVMParseCommandLineOptions(2, one, NULL);
      _exit(0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
      ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      free(argv);
      return lw_error(d, LW_EINVAL, "unknown LLVM option '%s'", opts->v[i]);
    }
  }
  LLVMParseCommandLineOptions((int)opts->n + 1, argv, NULL);
  free(argv);
  return 0;
}
