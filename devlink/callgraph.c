/* callgraph.c - what a set of kernels needs: every function, global
 * variable and alias reachable from them through instructions, constant
 * expressions and global initialisers (a function referenced but not called
 * counts too), but not into the code of other images (imports.c). A small
 * pointer set keeps the walk linear. Also the
 * walk over every global value of a module the other files share. */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash_ptr(const void *p) {
  uintptr_t v = (uintptr_t)p;
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return (size_t)v;
}

int dl__set_add(struct dl__set *s, LLVMValueRef v) {
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    LLVMValueRef *old = s->v;
    size_t oldcap = s->cap;
    if (!(s->v = calloc(cap, sizeof *s->v))) {
      s->v = old;
      return -1;
    }
    s->cap = cap;
    s->n = 0;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i])
        dl__set_add(s, old[i]);
    free(old);
  }
  size_t mask = s->cap - 1;
  for (size_t i = hash_ptr(v) & mask;; i = (i + 1) & mask) {
    if (s->v[i] == v)
      return 0;
    if (!s->v[i]) {
      s->v[i] = v;
      s->n++;
      return 1;
    }
  }
}

int dl__set_has(const struct dl__set *s, LLVMValueRef v) {
  if (!s->cap)
    return 0;
  size_t mask = s->cap - 1;
  for (size_t i = hash_ptr(v) & mask; s->v[i]; i = (i + 1) & mask)
    if (s->v[i] == v)
      return 1;
  return 0;
}

int dl__order_init(struct dl__order *o, LLVMModuleRef m) {
  size_t n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    n++;
  o->cap = 16;
  while (o->cap < 2 * n)
    o->cap *= 2;
  o->fn = calloc(o->cap, sizeof *o->fn);
  o->pos = calloc(o->cap, sizeof *o->pos);
  if (!o->fn || !o->pos) {
    dl__order_free(o);
    return -1;
  }
  size_t k = 0, mask = o->cap - 1;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f;
       f = LLVMGetNextFunction(f), k++) {
    size_t i = hash_ptr(f) & mask;
    while (o->fn[i])
      i = (i + 1) & mask;
    o->fn[i] = f;
    o->pos[i] = k;
  }
  return 0;
}

void dl__order_free(struct dl__order *o) {
  free(o->fn);
  free(o->pos);
  memset(o, 0, sizeof *o);
}

static size_t position(const struct dl__order *o, LLVMValueRef f) {
  size_t mask = o->cap - 1;
  for (size_t i = hash_ptr(f) & mask; o->fn[i]; i = (i + 1) & mask)
    if (o->fn[i] == f)
      return o->pos[i];
  return SIZE_MAX;
}

struct placed {
  size_t pos;
  LLVMValueRef f;
};

static int by_pos(const void *a, const void *b) {
  size_t x = ((const struct placed *)a)->pos;
  size_t y = ((const struct placed *)b)->pos;
  return (x > y) - (x < y);
}

int dl__fns_of(const struct dl__set *s, const struct dl__order *o,
               struct dl__fns *out) {
  struct placed *p = malloc((s->n ? s->n : 1) * sizeof *p);
  out->v = malloc((s->n ? s->n : 1) * sizeof *out->v);
  out->n = 0;
  if (!p || !out->v) {
    free(p);
    free(out->v);
    out->v = NULL;
    return -1;
  }
  size_t n = 0;
  for (size_t i = 0; i < s->cap; i++)
    if (s->v[i] && LLVMIsAFunction(s->v[i]))
      p[n++] = (struct placed){position(o, s->v[i]), s->v[i]};
  qsort(p, n, sizeof *p, by_pos);
  for (size_t i = 0; i < n; i++)
    out->v[i] = p[i].f;
  out->n = n;
  free(p);
  return 0;
}

void dl__set_free(struct dl__set *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

struct stack {
  LLVMValueRef *v;
  size_t n, cap;
};

static int push(struct stack *st, struct dl__set *seen, LLVMValueRef v) {
  int added = dl__set_add(seen, v);
  if (added <= 0)
    return added; /* seen already, or out of memory (-1) */
  if (lw_grow(&st->v, st->n, &st->cap, sizeof *st->v, 256))
    return -1;
  st->v[st->n++] = v;
  return 0;
}

/* Values worth following: globals, and constants that may hold them. */
static int follow(LLVMValueRef v) {
  return LLVMIsAGlobalValue(v) ||
         (LLVMIsAConstant(v) && !LLVMIsAConstantInt(v) &&
          !LLVMIsAConstantFP(v) && !LLVMIsAConstantDataSequential(v) &&
          !LLVMIsAConstantPointerNull(v) && !LLVMIsAUndefValue(v));
}

static int push_operands(struct stack *st, struct dl__set *seen,
                         LLVMValueRef u) {
  int n = LLVMGetNumOperands(u);
  for (int i = 0; i < n; i++) {
    LLVMValueRef op = LLVMGetOperand(u, (unsigned)i);
    if (op && follow(op) && push(st, seen, op) < 0)
      return -1;
  }
  return 0;
}

int dl__each_global(LLVMModuleRef m, int (*fn)(LLVMValueRef g, void *ctx),
                    void *ctx) {
  int rc = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g && !rc;
       g = LLVMGetNextGlobal(g))
    rc = fn(g, ctx);
  for (LLVMValueRef g = LLVMGetFirstFunction(m); g && !rc;
       g = LLVMGetNextFunction(g))
    rc = fn(g, ctx);
  for (LLVMValueRef g = LLVMGetFirstGlobalAlias(m); g && !rc;
       g = LLVMGetNextGlobalAlias(g))
    rc = fn(g, ctx);
  return rc;
}

/* A function whose code belongs to another image is reached, not walked,
 * unless it is a root: a virtual function ("indirectly-callable"; a vtable
 * names it, its set's image has it) and, with dynamic linking, an
 * importable SYCL_EXTERNAL function (imports.c). */
static int walked(LLVMValueRef f, LLVMValueRef const *roots, size_t nroots,
                  int dynamic) {
  if (!LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                     "indirectly-callable", 19) &&
      !(dynamic && dl__importable(f)))
    return 1;
  for (size_t i = 0; i < nroots; i++)
    if (roots[i] == f)
      return 1;
  return 0;
}

/* An indirect call may reach every function marked "referenced-indirectly"
 * ([[intel::device_indirectly_callable]]) of its signature, kernels aside,
 * as DPC++'s split assumes. The candidates are gathered once per walk, at
 * its first indirect call. */
struct callees {
  LLVMValueRef *v;
  size_t n;
  int known;
};

static int push_callees(struct stack *st, struct dl__set *seen,
                        struct callees *cs, LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (LLVMIsAFunction(callee) || LLVMIsAConstant(callee) ||
      LLVMIsAInlineAsm(callee))
    return 0;
  if (!cs->known) {
    size_t cap = 0;
    LLVMModuleRef m = LLVMGetGlobalParent(
        LLVMGetBasicBlockParent(LLVMGetInstructionParent(call)));
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f;
         f = LLVMGetNextFunction(f))
      if (LLVMGetFunctionCallConv(f) != LLVMSPIRKERNELCallConv &&
          LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                        "referenced-indirectly", 21)) {
        if (lw_grow(&cs->v, cs->n, &cap, sizeof *cs->v, 8))
          return -1;
        cs->v[cs->n++] = f;
      }
    cs->known = 1;
  }
  LLVMTypeRef sig = LLVMGetCalledFunctionType(call);
  for (size_t i = 0; i < cs->n; i++)
    if (LLVMGlobalGetValueType(cs->v[i]) == sig &&
        push(st, seen, cs->v[i]) < 0)
      return -1;
  return 0;
}

int dl__reachable(LLVMValueRef const *roots, size_t nroots, int dynamic,
                  struct dl__set *out) {
  struct stack st = {0};
  struct callees cs = {0};
  int rc = 0;
  for (size_t i = 0; !rc && i < nroots; i++)
    rc = push(&st, out, roots[i]) < 0 ? -1 : 0;
  while (!rc && st.n) {
    LLVMValueRef v = st.v[--st.n];
    if (LLVMIsAFunction(v)) {
      if (!walked(v, roots, nroots, dynamic))
        continue;
      for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(v); !rc && bb;
           bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef in = LLVMGetFirstInstruction(bb); !rc && in;
             in = LLVMGetNextInstruction(in)) {
          rc = push_operands(&st, out, in);
          if (!rc && LLVMIsACallInst(in))
            rc = push_callees(&st, out, &cs, in);
        }
    } else if (LLVMIsAGlobalVariable(v)) {
      LLVMValueRef init = LLVMGetInitializer(v);
      if (init && follow(init))
        rc = push(&st, out, init) < 0 ? -1 : 0;
    } else if (LLVMIsAGlobalAlias(v)) {
      LLVMValueRef target = LLVMAliasGetAliasee(v);
      if (target && follow(target))
        rc = push(&st, out, target) < 0 ? -1 : 0;
    } else {
      rc = push_operands(&st, out, v); /* a constant */
    }
  }
  free(st.v);
  free(cs.v);
  return rc;
}

size_t dl__instructions(LLVMValueRef f) {
  size_t n = 0;
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b;
       b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef in = LLVMGetFirstInstruction(b); in;
         in = LLVMGetNextInstruction(in))
      n++;
  return n;
}
