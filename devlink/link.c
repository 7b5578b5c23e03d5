/* link.c - parses bitcode (or textual IR) images and links them with
 * LLVMLinkModules2.
 * Every input is parsed into one context; user code is linked in rounds,
 * then libraries take what it needs; the linker consumes each source. Diagnostics of the
 * context are captured so a failure is one line naming the input. */
#include "internal.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dl__capture_diag(LLVMDiagnosticInfoRef info, void *ctx) {
  struct dl__diag_capture *c = ctx;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || c->text[0])
    return;
  char *s = LLVMGetDiagInfoDescription(info);
  snprintf(c->text, sizeof c->text, "%s", s);
  LLVMDisposeMessage(s);
}

static int parse(LLVMContextRef ctx, const struct dl_input *in,
                 LLVMModuleRef *out, struct dl__diag_capture *cap,
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
  lw_doing(in->name, "reading its device code");
  LLVMBool bad = LLVMParseIRInContext2(ctx, mb, out, &msg);
  lw_done();
  LLVMDisposeMemoryBuffer(mb);
  int rc = 0;
  if (bad)
    rc = lw_error_path(d, LW_EFORMAT, in->name, "invalid bitcode: %s",
                       cap->text[0] ? cap->text : msg ? msg : "parse error");
  LLVMDisposeMessage(msg);
  msg = NULL;
  /* Bitcode that parses may still be broken IR: say where, on one line. */
  if (!rc)
    lw_doing(in->name, "checking its device code");
  int broken = !rc && LLVMVerifyModule(*out, LLVMReturnStatusAction, &msg);
  lw_done();
  if (broken) {
    char *nl = msg ? strchr(msg, '\n') : NULL;
    rc = lw_error_path(d, LW_EFORMAT, in->name,
                       "invalid device code: %.*s", nl ? (int)(nl - msg) : 300,
                       msg ? msg : "does not verify");
    LLVMDisposeModule(*out);
    *out = NULL;
  }
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

/* ---- global values by name ------------------------------------------------ */

static LLVMValueRef named(LLVMModuleRef m, const char *name, size_t len) {
  LLVMValueRef v = LLVMGetNamedFunction(m, name);
  if (!v)
    v = LLVMGetNamedGlobal(m, name);
  if (!v)
    v = LLVMGetNamedGlobalAlias(m, name, len);
  return v;
}

/* A definition that may exist only once in a link. */
static int strong(LLVMValueRef g) {
  return g && !LLVMIsDeclaration(g) &&
         LLVMGetLinkage(g) == LLVMExternalLinkage;
}

/* ---- duplicate definitions ---------------------------------------------- */

/* Which of inputs [lo, hi) (libraries aside) defines `name` strongly:
 * asked only to word an error, so inputs are simply parsed again. */
static const char *definer(const struct dl_input *inputs, size_t lo,
                           size_t hi, const char *name, size_t len) {
  for (size_t k = lo; k < hi; k++) {
    if (inputs[k].only_needed)
      continue;
    LLVMContextRef ctx = LLVMContextCreate();
    struct dl__diag_capture cap = {{0}};
    struct lw_diag scratch = {0};
    LLVMModuleRef m = NULL;
    LLVMContextSetDiagnosticHandler(ctx, dl__capture_diag, &cap);
    int found = !parse(ctx, &inputs[k], &m, &cap, &scratch) &&
                strong(named(m, name, len));
    if (m)
      LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
    if (found)
      return inputs[k].name;
  }
  return "another input";
}

/* The module of inputs [lo, mid) is about to take the one of [mid, hi). */
struct dup_check {
  LLVMModuleRef dst;
  const struct dl_input *inputs;
  size_t lo, mid, hi;
  struct lw_diag *d;
};

static int check_duplicate(LLVMValueRef g, void *ctx) {
  struct dup_check *c = ctx;
  if (!strong(g))
    return 0;
  size_t len;
  const char *name = LLVMGetValueName2(g, &len);
  if (!strong(named(c->dst, name, len)))
    return 0;
  return lw_error(c->d, LW_EINVAL,
                  "device symbol '%s' is defined in both '%s' and '%s'", name,
                  definer(c->inputs, c->lo, c->mid, name, len),
                  definer(c->inputs, c->mid, c->hi, name, len));
}

/* ---- libraries: only what is needed --------------------------------------- */

/* A library's definitions become link-once for the link, so the IR linker
 * takes one only when the module uses it (or something taken uses it), as
 * ld takes archive members; the taken ones get their linkage back. */
struct lazy {
  LLVMModuleRef dst;
  struct lazy_def {
    char *name;
    size_t len;
    LLVMLinkage linkage;
  } *v;
  size_t n, cap;
};

static int make_lazy(LLVMValueRef g, void *ctx) {
  struct lazy *z = ctx;
  LLVMLinkage l = LLVMGetLinkage(g);
  if (LLVMIsDeclaration(g) ||
      (l != LLVMExternalLinkage && l != LLVMWeakAnyLinkage &&
       l != LLVMWeakODRLinkage))
    return 0;
  LLVMSetLinkage(g, l == LLVMWeakAnyLinkage ? LLVMLinkOnceAnyLinkage
                                            : LLVMLinkOnceODRLinkage);
  size_t len;
  const char *name = LLVMGetValueName2(g, &len);
  LLVMValueRef have = named(z->dst, name, len);
  if (have && !LLVMIsDeclaration(have))
    return 0; /* the module's own definition wins */
  if (lw_grow(&z->v, z->n, &z->cap, sizeof *z->v, 64))
    return LW_ENOMEM;
  if (!(z->v[z->n].name = strndup(name, len)))
    return LW_ENOMEM;
  z->v[z->n].len = len;
  z->v[z->n++].linkage = l;
  return 0;
}

static void restore_linkage(struct lazy *z) {
  for (size_t i = 0; i < z->n; i++) {
    LLVMValueRef g = named(z->dst, z->v[i].name, z->v[i].len);
    if (g && !LLVMIsDeclaration(g))
      LLVMSetLinkage(g, z->v[i].linkage);
    free(z->v[i].name);
  }
  free(z->v);
  z->v = NULL;
  z->n = z->cap = 0;
}

int dl__lazy_module(LLVMContextRef ctx, const void *data, size_t len,
                    const char *name, LLVMModuleRef *out) {
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(
      (const char *)data, len, name, 0);
  if (mb && !LLVMGetBitcodeModuleInContext2(ctx, mb, out))
    return 0; /* the module owns the buffer */
  if (mb)
    LLVMDisposeMemoryBuffer(mb);
  return 1;
}

int dl__link_needed(LLVMContextRef ctx, LLVMModuleRef dst,
                    const struct dl_input *in, int verified,
                    struct dl__diag_capture *cap, struct lw_diag *d) {
  LLVMModuleRef src = NULL;
  int rc = 0;
  if (verified) { /* loaded lazily: the linker reads only what it takes */
    if (dl__lazy_module(ctx, in->data, in->size, in->name, &src))
      return lw_error_path(d, LW_EFORMAT, in->name, "invalid bitcode: %s",
                           cap->text[0] ? cap->text : "parse error");
  } else if ((rc = parse(ctx, in, &src, cap, d))) {
    return rc;
  }
  struct lazy z = {dst, NULL, 0, 0};
  rc = dl__each_global(src, make_lazy, &z);
  if (rc == LW_ENOMEM)
    lw_error(d, rc, "out of memory");
  if (rc)
    LLVMDisposeModule(src);
  else {
    lw_doing(in->name, "linking its device code");
    if (LLVMLinkModules2(dst, src))
      rc = lw_error_path(d, LW_ELLVM, in->name, "device link failed: %s",
                         cap->text[0] ? cap->text : "linker error");
    lw_done();
  }
  restore_linkage(&z);
  return rc;
}

int dl__parse_unit(LLVMContextRef ctx, const struct dl_input *in,
                   LLVMModuleRef *out, struct dl__diag_capture *cap,
                   struct lw_diag *d) {
  int rc = parse(ctx, in, out, cap, d);
  if (!rc)
    mark_source(ctx, *out, in->name);
  return rc;
}

/* ---- the link ------------------------------------------------------------ */

/* User code is parsed first, then linked in rounds: 1 into 0, 3 into 2,
 * ..., then 2 into 0, 6 into 4, ... LLVMLinkModules2 walks the whole
 * destination module on each call, so taking the inputs one at a time into
 * one growing module costs quadratic time (100 inputs: 11 of 25 ms); the
 * rounds cost n log n. A module only ever takes later ones, so the first
 * of several link-once definitions still wins, as in a linear link. */
static int link_range(LLVMContextRef ctx, const struct dl_input *inputs,
                      size_t n, struct dl__diag_capture *cap,
                      LLVMModuleRef *out, struct lw_diag *d) {
  LLVMModuleRef *mods = calloc(n ? n : 1, sizeof *mods);
  size_t *at = calloc(n + 1, sizeof *at); /* mods[j] is inputs[at[j]] */
  size_t k = 0;
  int rc = mods && at ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && !rc; i++) {
    if (inputs[i].only_needed)
      continue;
    if (!(rc = dl__parse_unit(ctx, &inputs[i], &mods[k], cap, d)))
      at[k++] = i;
  }
  if (at)
    at[k] = n;
  for (size_t step = 1; !rc && step < k; step *= 2)
    for (size_t j = 0; !rc && j + step < k; j += 2 * step) {
      size_t right = j + step, end = j + 2 * step < k ? j + 2 * step : k;
      struct dup_check c = {mods[j], inputs, at[j], at[right], at[end], d};
      rc = dl__each_global(mods[right], check_duplicate, &c);
      if (!rc && LLVMLinkModules2(mods[j], mods[right]))
        rc = lw_error_path(d, LW_ELLVM, inputs[at[right]].name,
                           "device link failed: %s",
                           cap->text[0] ? cap->text : "linker error");
      if (!rc)
        mods[right] = NULL; /* the link consumed it */
    }
  for (size_t j = rc ? 0 : 1; j < k; j++)
    if (mods[j])
      LLVMDisposeModule(mods[j]);
  *out = !rc && k ? mods[0] : NULL;
  free(mods);
  free(at);
  return rc;
}

/* The second half of the user code, linked on a thread of its own in a
 * context of its own. */
struct half {
  const struct dl_input *inputs;
  size_t n;
  LLVMContextRef ctx;
  struct dl__diag_capture cap;
  LLVMMemoryBufferRef bitcode; /* the linked half, NULL if it had none */
  struct lw_diag d;
  int rc;
};

/* Links the second part and writes it as bitcode there and then, and frees
 * what it built: on a thread of its own, all of that overlaps the first
 * part's link instead of following it. */
static void *link_half(void *arg) {
  struct half *h = arg;
  LLVMModuleRef mod = NULL;
  LLVMContextSetDiagnosticHandler(h->ctx, dl__capture_diag, &h->cap);
  h->rc = link_range(h->ctx, h->inputs, h->n, &h->cap, &mod, &h->d);
  if (!h->rc && mod && !(h->bitcode = LLVMWriteBitcodeToMemoryBuffer(mod)))
    h->rc = lw_error(&h->d, LW_ENOMEM, "out of memory");
  if (mod)
    LLVMDisposeModule(mod);
  LLVMContextDispose(h->ctx);
  h->ctx = NULL;
  return NULL;
}

/* The inputs are linked in two parts, each in a context of its own, and
 * the first takes the second, which comes over as bitcode (a module takes
 * only later ones: the first of several link-once definitions still
 * wins). With `threads` > 1 the second part is linked on a thread of its
 * own meanwhile (the 4,000-kernel program, 400 inputs on 2 cores: 1.09 ->
 * 0.73 s); with one, before the first - the same steps, so the module is
 * the same, byte for byte, whatever `threads` is. The thread also writes
 * and frees its part, so the first part has 3/5 of the user code (400
 * inputs on 2 cores, medians of 5 to the joined module: 585 ms; 621 ms
 * with halves, the second written and freed here). */
static int link_user_code(LLVMContextRef ctx, const struct dl_input *inputs,
                          size_t n, int threads, struct dl__diag_capture *cap,
                          LLVMModuleRef *out, struct lw_diag *d) {
  size_t users = 0, mid = 0;
  for (size_t i = 0; i < n; i++)
    users += !inputs[i].only_needed;
  for (size_t seen = 0; mid < n && seen < users * 3 / 5; mid++)
    seen += !inputs[mid].only_needed;
  if (users < 8)
    return link_range(ctx, inputs, n, cap, out, d);
  struct half h = {inputs + mid, n - mid, LLVMContextCreate(), {{0}}, NULL,
                   {0}, 0};
  if (!h.ctx)
    return lw_error(d, LW_ENOMEM, "out of memory");
  pthread_t t;
  int threaded = threads > 1 && pthread_create(&t, NULL, link_half, &h) == 0;
  if (!threaded)
    link_half(&h);
  LLVMModuleRef a = NULL;
  int rc = link_range(ctx, inputs, mid, cap, &a, d);
  if (threaded)
    pthread_join(t, NULL);
  if (!rc && h.rc)
    rc = lw_error(d, h.rc, "%s", h.d.msg);
  LLVMModuleRef b = NULL;
  if (!rc && h.bitcode && LLVMParseBitcodeInContext2(ctx, h.bitcode, &b))
    rc = lw_error(d, LW_ELLVM, "cannot move the linked device code between "
                               "threads");
  if (h.bitcode)
    LLVMDisposeMemoryBuffer(h.bitcode);
  struct dup_check c = {a, inputs, 0, mid, n, d};
  if (!rc && a && b)
    rc = dl__each_global(b, check_duplicate, &c);
  if (!rc && a && b && LLVMLinkModules2(a, b))
    rc = lw_error_path(d, LW_ELLVM, inputs[mid].name,
                       "device link failed: %s",
                       cap->text[0] ? cap->text : "linker error");
  else if (!rc && !a)
    a = b; /* the first half had no user code */
  else if (b && (rc || !a))
    LLVMDisposeModule(b);
  if (rc && a) {
    LLVMDisposeModule(a);
    a = NULL;
  }
  *out = a;
  return rc;
}

int dl_link(const struct dl_input *inputs, size_t n, const char *triple,
            int threads, struct dl_module **out, struct lw_diag *d) {
  struct dl__diag_capture cap = {{0}};
  struct dl_module *m = calloc(1, sizeof *m);
  if (!m || !(m->triple = strdup(triple ? triple : ""))) {
    free(m);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  m->ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(m->ctx, dl__capture_diag, &cap);
  int rc = link_user_code(m->ctx, inputs, n, threads, &cap, &m->mod, d);
  if (!rc && m->mod && triple)
    LLVMSetTarget(m->mod, triple);
  if (!rc && m->mod && !triple) { /* the inputs' own */
    free(m->triple);
    if (!(m->triple = strdup(LLVMGetTarget(m->mod))))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  /* For NVIDIA GPUs, math as the calls CUDA's libdevice defines, which a
   * library may then give. */
  if (!rc && m->mod && strncmp(m->triple, "nvptx", 5) == 0)
    dl__nvptx_math(m->mod);
  /* Libraries, in order, each taking what the module needs so far. */
  for (size_t i = 0; i < n && !rc && m->mod; i++)
    if (inputs[i].only_needed)
      rc = dl__link_needed(m->ctx, m->mod, &inputs[i], 0, &cap, d);
  if (!rc && !m->mod)
    rc = lw_error(d, LW_EINVAL, "no device code to link for '%s'", m->triple);
  LLVMContextSetDiagnosticHandler(m->ctx, NULL, NULL);
  if (rc) {
    dl_module_free(m);
    return rc;
  }
  m->valid = 1; /* every input was verified */
  *out = m;
  return 0;
}

int dl_write_bitcode(struct dl_module *m, const char *path,
                     struct lw_diag *d) {
  if (LLVMWriteBitcodeToFile(m->mod, path))
    return lw_error_path(d, LW_EIO, path, "cannot write bitcode");
  return 0;
}

char *dl_print(struct dl_module *m) {
  char *s = LLVMPrintModuleToString(m->mod);
  char *copy = s ? strdup(s) : NULL;
  LLVMDisposeMessage(s);
  return copy;
}

void dl_module_free(struct dl_module *m) {
  if (!m)
    return;
  if (m->mod)
    LLVMDisposeModule(m->mod);
  if (m->ctx)
    LLVMContextDispose(m->ctx);
  free(m->triple);
  free(m);
}

int dl_module_adopt(LLVMContextRef ctx, LLVMModuleRef mod, const char *triple,
                    struct dl_module **out) {
  struct dl_module *m = calloc(1, sizeof *m);
  if (!m || !(m->triple = strdup(triple ? triple : ""))) {
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
