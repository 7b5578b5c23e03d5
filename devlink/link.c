/* link.c - parses bitcode (or textual IR) images and links them with
 * LLVMLinkModules2.
 * Each input is parsed into the destination context and linked into the
 * first one; the linker consumes the source module. Diagnostics of the
 * context are captured so a failure is one line naming the input. */
#include "internal.h"

#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct diag_capture {
  char text[512];
};

static void on_diag(LLVMDiagnosticInfoRef info, void *ctx) {
  struct diag_capture *c = ctx;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || c->text[0])
    return;
  char *s = LLVMGetDiagInfoDescription(info);
  snprintf(c->text, sizeof c->text, "%s", s);
  LLVMDisposeMessage(s);
}

static int parse(LLVMContextRef ctx, const struct dl_input *in,
                 LLVMModuleRef *out, struct diag_capture *cap,
                 struct lw_diag *d) {
  /* Bitcode is read in place; textual IR is copied, as the IR lexer wants
   * a NUL-terminated buffer. */
  int text = in->size < 4 || memcmp(in->data, "BC\xc0\xde", 4) != 0;
  LLVMMemoryBufferRef mb =
      text ? LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)in->data,
                                                       in->size, in->name)
           : LLVMCreateMemoryBufferWithMemoryRange((const char *)in->data,
                                                   in->size, in->name, 0);
  if (!mb)
    return lw_error(d, LW_ENOMEM, "out of memory");
  char *msg = NULL;
  LLVMBool bad = LLVMParseIRInContext2(ctx, mb, out, &msg);
  LLVMDisposeMemoryBuffer(mb);
  int rc = 0;
  if (bad)
    rc = lw_error_path(d, LW_EFORMAT, in->name, "invalid bitcode: %s",
                       cap->text[0] ? cap->text : msg ? msg : "parse error");
  LLVMDisposeMessage(msg);
  return rc;
}

/* Kernels remember the translation unit they came from, as DPC++'s
 * "sycl-module-id" attribute does (clang-22 sets none): the per_source split
 * groups by it. */
static void mark_source(LLVMContextRef ctx, LLVMModuleRef m, const char *name) {
  static const char key[] = "sycl-module-id";
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) ||
        LLVMGetFunctionCallConv(f) != LLVMSPIRKERNELCallConv ||
        LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, key,
                                      sizeof key - 1))
      continue;
    LLVMAddAttributeAtIndex(
        f, LLVMAttributeFunctionIndex,
        LLVMCreateStringAttribute(ctx, key, sizeof key - 1, name,
                                  (unsigned)strlen(name)));
  }
}

int dl_link(const struct dl_input *inputs, size_t n, const char *triple,
            struct dl_module **out, struct lw_diag *d) {
  struct diag_capture cap = {{0}};
  struct dl_module *m = calloc(1, sizeof *m);
  if (!m || !(m->triple = strdup(triple))) {
    free(m);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  m->ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(m->ctx, on_diag, &cap);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    LLVMModuleRef src;
    if ((rc = parse(m->ctx, &inputs[i], &src, &cap, d)))
      break;
    mark_source(m->ctx, src, inputs[i].name);
    if (!m->mod) {
      m->mod = src;
      LLVMSetTarget(m->mod, triple);
      continue;
    }
    if (LLVMLinkModules2(m->mod, src))
      rc = lw_error_path(d, LW_ELLVM, inputs[i].name,
                         "device link failed: %s",
                         cap.text[0] ? cap.text : "linker error");
  }
  if (!rc && !m->mod)
    rc = lw_error(d, LW_EINVAL, "no device code to link for '%s'", triple);
  LLVMContextSetDiagnosticHandler(m->ctx, NULL, NULL);
  if (rc) {
    dl_module_free(m);
    return rc;
  }
  *out = m;
  return 0;
}

int dl_kernel_names(struct dl_module *m, struct lw_strvec *names) {
  for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f;
       f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) ||
        LLVMGetFunctionCallConv(f) != LLVMSPIRKERNELCallConv)
      continue;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (lw_strvec_push(names, name))
      return LW_ENOMEM;
  }
  return 0;
}

char *dl_print(struct dl_module *m) {
  char *s = LLVMPrintModuleToString(m->mod);
  char *copy = s ? strdup(s) : NULL;
  LLVMDisposeMessage(s);
  return copy;
}

/* LLVM 22's SPIR-V back end caches IR objects by address across
 * emissions: once a module it emitted is freed, a later module whose objects
 * land at the same addresses gets wrong SPIR-V (seen: ids past the bound).
 * Modules it emitted are therefore kept, with their contexts, until
 * dl_release (the end of the process's emitting). */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dl_module **kept;
static size_t nkept, capkept;

static void dispose(struct dl_module *m) {
  if (m->mod)
    LLVMDisposeModule(m->mod);
  if (m->ctx)
    LLVMContextDispose(m->ctx);
  free(m->triple);
  free(m);
}

void dl_module_free(struct dl_module *m) {
  if (!m)
    return;
  if (m->emitted) {
    pthread_mutex_lock(&kept_lock);
    if (nkept == capkept) {
      size_t cap = capkept ? capkept * 2 : 64;
      struct dl_module **nk = realloc(kept, cap * sizeof *nk);
      if (nk) {
        kept = nk;
        capkept = cap;
      }
    }
    int stored = nkept < capkept;
    if (stored)
      kept[nkept++] = m;
    pthread_mutex_unlock(&kept_lock);
    if (stored)
      return;
    /* Out of memory: freeing is the lesser risk. */
  }
  dispose(m);
}

void dl_release(void) {
  pthread_mutex_lock(&kept_lock);
  for (size_t i = 0; i < nkept; i++)
    dispose(kept[i]);
  free(kept);
  kept = NULL;
  nkept = capkept = 0;
  pthread_mutex_unlock(&kept_lock);
}

int dl_module_adopt(LLVMContextRef ctx, LLVMModuleRef mod, const char *triple,
                    struct dl_module **out) {
  struct dl_module *m = calloc(1, sizeof *m);
  if (!m || !(m->triple = strdup(triple))) {
    free(m);
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return LW_ENOMEM;
  }
  m->ctx = ctx;
  m->mod = mod;
  LLVMSetTarget(mod, triple);
  *out = m;
  return 0;
}
