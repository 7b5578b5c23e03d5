/* codegen.c - compiles a linked module with LLVM's back ends in process:
 * SPIR-V through the SPIRV target for spirv/spir triples, native objects
 * otherwise. A module is verified first (one the IR linker made from verified
 * modules needs no second look) so that bad IR is an error, not a
 * crash inside the back end. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
 * in the same process may get ids of theirs (wrapper/plan_emit.c says what
 * and how the planner makes that safe). Emission is therefore serialised,
 * and the process remembers whether it (or its parent before the fork)
 * emitted SPIR-V: a process that has not is what the planner forks from. */
static pthread_mutex_t emit_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int spirv_emitted;

int dl_spirv_fresh(void) { return atomic_load(&spirv_emitted) == 0; }

int dl_codegen(struct dl_module *m, int opt_level, enum dl_filetype type,
               struct lw_buf *out, struct lw_diag *d) {
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
      LLVMCreateTargetMachine(target, m->triple, "", "", levels[opt_level],
                              LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm)
    return lw_error(d, LW_ELLVM, "cannot create a target machine for '%s'",
                    m->triple);
  LLVMMemoryBufferRef mb = NULL;
  int rc = 0;
  int spirv = strncmp(m->triple, "spir", 4) == 0;
  if (spirv)
    atomic_store(&spirv_emitted, 1);
  if (!spirv && type == DL_OBJECT && dl__use_init_array(m->mod, m->triple)) {
    LLVMDisposeTargetMachine(tm);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  pthread_mutex_lock(&emit_lock);
  LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(
      tm, m->mod, type == DL_OBJECT ? LLVMObjectFile : LLVMAssemblyFile, &msg,
      &mb);
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
      /* The back end's id order is not reproducible: canonicalise. */
      struct lw_buf spv = {out->data + before, out->len - before, 0};
      rc = dl__spirv_canonical_ids(&spv, d);
    }
  }
  LLVMDisposeTargetMachine(tm);
  return rc;
}

/* The LLVM-C option parser neither exits nor reports an unknown option: it
 * drops it silently. So the names are checked first against the list of
 * every option this libLLVM registers, which a forked child prints with
 * --help-list-hidden (the help printer exits the child, not us). */
static int read_llvm_option_list(struct lw_buf *out, struct lw_diag *d) {
  int fds[2];
  if (pipe(fds) != 0)
    return lw_error(d, LW_EIO, "cannot check LLVM options: pipe failed");
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return lw_error(d, LW_EIO, "cannot check LLVM options: fork failed");
  }
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(fds[1], 1);
    if (null >= 0)
      dup2(null, 2);
    close(fds[0]);
    const char *argv[2] = {"fatlink", "--help-list-hidden"};
    LLVMParseCommandLineOptions(2, argv, NULL);
    _exit(0);
  }
  close(fds[1]);
  char chunk[65536];
  ssize_t n;
  int rc = 0;
  while ((n = read(fds[0], chunk, sizeof chunk)) > 0)
    if (!rc && lw_buf_append(out, chunk, (size_t)n))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  close(fds[0]);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (!rc && lw_buf_append(out, "", 1))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  return rc;
}

/* The name in an option "-name", "--name" or either with "=value"; NULL
 * when there is none. */
static const char *option_name(const char *opt, size_t *len) {
  const char *name = opt;
  while (*name == '-')
    name++;
  *len = strcspn(name, "=");
  return name == opt || *len == 0 || *len > 200 ? NULL : name;
}

/* Is `opt` in the help list, whose lines start "  -name" or "  --name"? */
static int known(const char *list, const char *opt) {
  size_t len;
  const char *name = option_name(opt, &len);
  if (!name)
    return 0;
  char line[256];
  for (int dashes = 1; dashes <= 2; dashes++) {
    snprintf(line, sizeof line, "\n  %s%.*s", dashes == 1 ? "-" : "--",
             (int)len, name);
    size_t n = strlen(line);
    for (const char *p = list; (p = strstr(p, line)) != NULL; p += n)
      if (p[n] == '=' || p[n] == ' ' || p[n] == '\n' || p[n] == 0)
        return 1;
  }
  return 0;
}

/* fatlink's own settings of LLVM's options, for the code it generates in
 * process (SPIR-V modules and the registration object).
 * -disable-lsr: SPIR-V is handed to a device compiler that optimises the
 * loops for the real device; LoopStrengthReduce would first rewrite each
 * loop for the SPIR-V target's generic cost model (a plain indexed loop
 * becomes three induction variables stepping an i8 pointer) and takes half
 * of the back end's time. DPC++'s translator (llvm-spirv) runs no such pass
 * either. `-mllvm -disable-lsr=false` restores it.
 * -spirv-ext=+SPV_INTEL_function_pointers: SYCL virtual functions are
 * called through vtables, which SPIR-V has only with that extension (the
 * back end stops at an indirect call without it); DPC++'s translator
 * enables it too. It changes nothing for code without function pointers. */
static const char *const defaults[] = {
    "-disable-lsr", "-spirv-ext=+SPV_INTEL_function_pointers"};

/* Does the user's list set the option `opt` names? */
static int user_sets(const struct lw_strvec *opts, const char *opt) {
  size_t len, ulen;
  const char *name = option_name(opt, &len);
  for (size_t i = 0; i < opts->n; i++) {
    const char *u = option_name(opts->v[i], &ulen);
    if (u && ulen == len && memcmp(u, name, len) == 0)
      return 1;
  }
  return 0;
}

int dl_set_llvm_options(const struct lw_strvec *opts, int trusted,
                        struct lw_diag *d) {
  int rc = 0;
  if (!trusted && opts->n) {
    struct lw_buf list = {0};
    rc = read_llvm_option_list(&list, d);
    for (size_t i = 0; !rc && i < opts->n; i++)
      if (!known((const char *)list.data, opts->v[i]))
        rc = lw_error(d, LW_EINVAL, "unknown LLVM option '%s'", opts->v[i]);
    lw_buf_free(&list);
    if (rc)
      return rc;
  }
  size_t ndef = sizeof defaults / sizeof *defaults;
  const char **argv = calloc(ndef + opts->n + 1, sizeof *argv);
  if (!argv)
    return lw_error(d, LW_ENOMEM, "out of memory");
  int argc = 0;
  argv[argc++] = "fatlink";
  for (size_t i = 0; i < ndef; i++)
    if (!user_sets(opts, defaults[i]))
      argv[argc++] = defaults[i];
  for (size_t i = 0; i < opts->n; i++)
    argv[argc++] = opts->v[i];
  LLVMParseCommandLineOptions(argc, argv, NULL);
  free(argv);
  return 0;
}
