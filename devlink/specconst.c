/* specconst.c - SYCL 2020 specialization constants ("SYCL Modules").
 *
 * DPC++'s front end reads a specialization constant through a call to
 * _Z37__sycl_getScalar2020SpecConstantValue... or
 * _Z40__sycl_getComposite2020SpecConstantValue... with the constant's
 * symbolic id (a string), its specialization_id variable (whose first
 * member is the default value) and the kernel's spec-constant buffer (null
 * when the code was compiled for JIT SPIR-V); a composite wider than 64
 * bits comes back through a leading sret pointer. Each module lowers these
 * calls in one of three ways:
 *   native     SPIR-V specialization constants: each scalar leaf becomes a
 *              __spirv_SpecConstant(id, default) call (one SpecId each, from
 *              0 in the module, in the order the constants are first met)
 *              and each aggregate a __spirv_SpecConstantComposite of its
 *              members, which LLVM's SPIR-V back end emits as OpSpecConstant
 *              and OpSpecConstantComposite;
 *   emulation  a load from the buffer, each constant at the next offset its
 *              alignment allows;
 *   default    the default value itself.
 * The layout is fixed once per module from the linked module (the order of
 * first use, getter declaration by declaration as DPC++ numbers them:
 * functions in module order, instructions in order) and the lowering of
 * the module's own copy looks each constant up by symbolic id. A private
 * array whose length is a constant (llvm.sycl.alloca) is an alloca of that
 * length.
 *
 * Property sets, as the DPC++ runtime reads them (it walks the constants in
 * the order written and lays their values out one after the other, adding
 * the gaps the offsets leave):
 *   SYCL/specialization constants  <symbolic id> = array of u32 triples
 *       {SpecId, offset in the constant, size} per scalar leaf (native) or
 *       {n, 0, size} (emulation); padding as {0xffffffff, offset, size}: a
 *       struct's tail (native), or the alignment gap before the next
 *       constant, on the previous one (emulation);
 *   SYCL/specialization constants default values  all = the default
 *       values' bytes in that layout;
 *   SYCL/misc properties  specConstsReplacedWithDefault = 1 for a module
 *       lowered to its default values (and then neither set above). */
#include "internal.h"

#include <llvm-c/Target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char set_ids[] = "SYCL/specialization constants";
static const char set_defaults[] =
    "SYCL/specialization constants default values";

enum { PADDING_ID = 0xffffffffu };

static const char *fname(LLVMValueRef f) {
  size_t len;
  return LLVMGetValueName2(f, &len);
}

int dl__spec_used(const struct dl__set *only) {
  for (size_t i = 0; i < only->cap; i++)
    if (only->v[i] && LLVMIsAFunction(only->v[i]) &&
        dl__spec_getter(only->v[i]))
      return 1;
  return 0;
}

/* ---- reading a getter call ----------------------------------------------- */

struct call {
  LLVMValueRef ci, caller;
  int sret;       /* the value goes to operand 0 */
  const char *id; /* the symbolic id (LLVM's string) */
  size_t idlen;
  LLVMValueRef def;    /* the default value */
  LLVMTypeRef type;    /* its type: the constant's type in memory */
  LLVMTypeRef read;    /* the type it is read as: the sret pointee's for a
                        * composite (the default's type can be another,
                        * flattened one, with padding left out) */
  int to_bool;         /* the call returns i1 of an i8 constant */
  LLVMValueRef buffer; /* the spec-constant buffer operand */
  LLVMTypeRef elem;    /* llvm.sycl.alloca: the array's element type */
  unsigned align;      /* and its alignment */
};

static int zero_indices(LLVMValueRef gep) {
  int n = LLVMGetNumOperands(gep);
  for (int k = 1; k < n; k++) {
    LLVMValueRef ix = LLVMGetOperand(gep, (unsigned)k);
    if (!LLVMIsAConstantInt(ix) || LLVMConstIntGetZExtValue(ix) != 0)
      return 0;
  }
  return 1;
}

/* The store of `p`'s only value, for the -O0 form in which the front end
 * passes the argument through a local variable; NULL if there is not
 * exactly one. */
static LLVMValueRef only_store(LLVMValueRef p) {
  LLVMValueRef found = NULL;
  for (LLVMUseRef u = LLVMGetFirstUse(p); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef s = LLVMGetUser(u);
    if (LLVMIsAStoreInst(s) && LLVMGetOperand(s, 1) == p) {
      if (found)
        return NULL;
      found = s;
    }
  }
  return found;
}

/* What a pointer operand points at: through casts, all-zero GEPs and a
 * local variable stored once. */
static LLVMValueRef strip(LLVMValueRef v) {
  for (int guard = 0; v && guard < 64; guard++) {
    if (LLVMIsAConstantExpr(v)) {
      LLVMOpcode op = LLVMGetConstOpcode(v);
      if (op == LLVMBitCast || op == LLVMAddrSpaceCast ||
          (op == LLVMGetElementPtr && zero_indices(v))) {
        v = LLVMGetOperand(v, 0);
        continue;
      }
      return v;
    }
    if (LLVMIsABitCastInst(v) || LLVMIsAAddrSpaceCastInst(v) ||
        (LLVMIsAGetElementPtrInst(v) && zero_indices(v))) {
      v = LLVMGetOperand(v, 0);
      continue;
    }
    if (LLVMIsALoadInst(v)) {
      LLVMValueRef p = LLVMGetOperand(v, 0), s = only_store(p);
      if (!s && (LLVMIsAAddrSpaceCastInst(p) || LLVMIsABitCastInst(p)))
        s = only_store(LLVMGetOperand(p, 0));
      if (!s)
        return v;
      v = LLVMGetOperand(s, 0);
      continue;
    }
    return v;
  }
  return v;
}

static int bad_call(struct lw_diag *d, const struct call *c, const char *what) {
  return lw_error(d, LW_EFORMAT,
                  "malformed specialization constant in '%s': the call to "
                  "'%s' %s",
                  fname(c->caller), fname(LLVMGetCalledValue(c->ci)), what);
}

static int scalar_kind(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMIntegerTypeKind:
    return LLVMGetIntTypeWidth(t) <= 64;
  case LLVMHalfTypeKind:
  case LLVMBFloatTypeKind:
  case LLVMFloatTypeKind:
  case LLVMDoubleTypeKind:
    return 1;
  default:
    return 0;
  }
}

/* Can a specialization constant have type `t`: scalars, and structs,
 * arrays and vectors of them? */
static int supported(LLVMTypeRef t, int depth) {
  if (depth > 16)
    return 0;
  switch (LLVMGetTypeKind(t)) {
  case LLVMStructTypeKind: {
    unsigned n = LLVMCountStructElementTypes(t);
    for (unsigned i = 0; i < n; i++)
      if (!supported(LLVMStructGetTypeAtIndex(t, i), depth + 1))
        return 0;
    return n > 0;
  }
  case LLVMArrayTypeKind:
  case LLVMVectorTypeKind:
    return supported(LLVMGetElementType(t), depth + 1);
  default:
    return scalar_kind(t);
  }
}

static int read_call(LLVMValueRef ci, LLVMValueRef caller, struct call *c,
                     struct lw_diag *d) {
  memset(c, 0, sizeof *c);
  c->ci = ci;
  c->caller = caller;
  LLVMValueRef callee = LLVMGetCalledValue(ci);
  unsigned sret_kind = LLVMGetEnumAttributeKindForName("sret", 4);
  c->sret = LLVMCountParams(callee) > 0 &&
            LLVMGetEnumAttributeAtIndex(callee, 1, sret_kind) != NULL;
  unsigned first = c->sret ? 1 : 0;
  if ((unsigned)LLVMGetNumArgOperands(ci) < first + 3)
    return bad_call(d, c, "has too few arguments");
  LLVMValueRef name = strip(LLVMGetOperand(ci, first));
  LLVMValueRef init =
      name && LLVMIsAGlobalVariable(name) ? LLVMGetInitializer(name) : NULL;
  if (!(c->id = dl__const_string(init, &c->idlen)))
    return bad_call(d, c, "has no constant symbolic id");
  if (c->idlen && c->id[c->idlen - 1] == '\0')
    c->idlen--;
  if (!c->idlen || memchr(c->id, '\0', c->idlen))
    return bad_call(d, c, "has an empty symbolic id");
  LLVMValueRef spec_id = strip(LLVMGetOperand(ci, first + 1));
  init = spec_id && LLVMIsAGlobalVariable(spec_id) ? LLVMGetInitializer(spec_id)
                                                   : NULL;
  c->def = init ? LLVMGetAggregateElement(init, 0) : NULL;
  if (c->sret) {
    LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(callee, 1, sret_kind);
    if (!a)
      a = LLVMGetCallSiteEnumAttribute(ci, 1, sret_kind);
    c->read = a ? LLVMGetTypeAttributeValue(a) : NULL;
  }
  /* Older front ends pass no specialization_id: the default is zero, of
   * the type read. */
  if (!c->def && spec_id && LLVMIsNull(spec_id)) {
    LLVMTypeRef t = c->sret ? c->read : LLVMTypeOf(ci);
    if (t && LLVMGetTypeKind(t) != LLVMVoidTypeKind)
      c->def = LLVMConstNull(t);
  }
  if (!c->def)
    return bad_call(d, c,
                    "names no specialization_id variable with a default value");
  c->type = LLVMTypeOf(c->def);
  if (!c->sret)
    c->read = c->type;
  if (!c->read || !supported(c->type, 0) || !supported(c->read, 0))
    return bad_call(d, c, "reads a constant of a type SYCL does not allow");
  c->buffer = LLVMGetOperand(ci, first + 2);
  /* llvm.sycl.alloca.*(id, specialization_id, buffer, T witness, i64
   * align): a private array of T whose length is the constant (DPC++'s
   * sycl_ext_oneapi_private_alloca) */
  if (dl__spec_getter(callee) == DL__GETTER_ALLOCA) {
    if ((unsigned)LLVMGetNumArgOperands(ci) < 5 ||
        LLVMGetTypeKind(c->type) != LLVMIntegerTypeKind ||
        !LLVMIsAConstantInt(LLVMGetOperand(ci, 4)))
      return bad_call(d, c, "is no private alloca of an integer length");
    c->elem = LLVMTypeOf(LLVMGetOperand(ci, 3));
    c->align = (unsigned)LLVMConstIntGetZExtValue(LLVMGetOperand(ci, 4));
    return 0;
  }
  LLVMTypeRef want = c->sret ? c->type : LLVMTypeOf(ci);
  if (want != c->type) {
    c->to_bool = LLVMGetTypeKind(want) == LLVMIntegerTypeKind &&
                 LLVMGetIntTypeWidth(want) == 1 &&
                 LLVMGetTypeKind(c->type) == LLVMIntegerTypeKind &&
                 LLVMGetIntTypeWidth(c->type) == 8;
    if (!c->to_bool)
      return bad_call(d, c, "returns another type than its default value's");
  }
  return 0;
}

/* A getter call met, and the rank of its getter among the module's. */
struct met {
  LLVMValueRef ci, caller;
  size_t getter, seq;
};

static int by_getter(const void *a, const void *b) {
  const struct met *x = a, *y = b;
  if (x->getter != y->getter)
    return x->getter < y->getter ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Calls `fn` on every getter call of the functions of `m` that are in
 * `only` (NULL: all): getter by getter in module order, as DPC++ numbers
 * them, and each one's calls in module and instruction order. One walk of
 * the code gathers the calls; `fn` may erase the call it is given. */
static int each_call(LLVMModuleRef m, const struct dl__set *only,
                     int (*fn)(struct call *c, void *ctx), void *ctx,
                     struct lw_diag *d) {
  LLVMValueRef *getters = NULL;
  struct met *calls = NULL;
  size_t ng = 0, capg = 0, nc = 0, capc = 0;
  int rc = 0;
  for (LLVMValueRef g = LLVMGetFirstFunction(m); !rc && g;
       g = LLVMGetNextFunction(g))
    if (LLVMIsDeclaration(g) && dl__spec_getter(g) && LLVMGetFirstUse(g)) {
      if (lw_grow(&getters, ng, &capg, sizeof *getters, 8))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
      else
        getters[ng++] = g;
    }
  for (LLVMValueRef f = ng ? LLVMGetFirstFunction(m) : NULL; !rc && f;
       f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) || (only && !dl__set_has(only, f)))
      continue;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); !rc && b;
         b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef in = LLVMGetFirstInstruction(b); !rc && in;
           in = LLVMGetNextInstruction(in)) {
        if (!LLVMIsACallInst(in))
          continue;
        LLVMValueRef callee = LLVMGetCalledValue(in);
        size_t k = 0;
        while (k < ng && getters[k] != callee)
          k++;
        if (k == ng)
          continue;
        if (lw_grow(&calls, nc, &capc, sizeof *calls, 16))
          rc = lw_error(d, LW_ENOMEM, "out of memory");
        else
          calls[nc] = (struct met){in, f, k, nc}, nc++;
      }
  }
  if (nc > 1)
    qsort(calls, nc, sizeof *calls, by_getter);
  for (size_t i = 0; !rc && i < nc; i++) {
    struct call c;
    rc = read_call(calls[i].ci, calls[i].caller, &c, d);
    if (!rc)
      rc = fn(&c, ctx);
  }
  free(getters);
  free(calls);
  return rc;
}

/* ---- the layout ---------------------------------------------------------- */

struct layout {
  unsigned mode;
  LLVMTargetDataRef td;
  struct dl_group *gr;
  struct lw_buf descs;    /* the current constant's u32 triples */
  struct lw_buf defaults; /* every constant's default bytes */
  uint32_t next;          /* next SpecId (native), constant (emulation) */
  uint32_t offset;        /* emulation: the next constant's offset */
  struct dl_props *props;
  struct dl_prop *last; /* the previous constant's property */
};

static int put_u32(struct lw_buf *b, uint32_t v) {
  unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                        (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
  return lw_buf_append(b, x, 4);
}

static int triple(struct lw_buf *b, uint32_t id, uint32_t off, uint32_t size) {
  return put_u32(b, id) || put_u32(b, off) || put_u32(b, size) ? LW_ENOMEM : 0;
}

static uint32_t store_size(LLVMTargetDataRef td, LLVMTypeRef t) {
  return (uint32_t)LLVMStoreSizeOfType(td, t);
}

/* ---- the native walk ----------------------------------------------------- */

/* DPC++ walks a native constant by the type it is read as, which can differ
 * from its default value's (a flattened copy of a class hierarchy, padding
 * left out), matching them by offset: each scalar takes the next SpecId and
 * the default defined at its offset; a member nothing is defined at (padding
 * the front end left undefined) takes an id too, is undef in the composite
 * (as SpecConstants.cpp passes it and spec-constants/hierarchy.ll of intel/llvm
 * pull request 17204 expects; 17341, which would make it zero, was closed
 * unmerged) and has no descriptor. The same walk gives the layout's
 * descriptors (with `descs`) and the lowered value (with `L`). */
struct lower;
static LLVMValueRef spec_call(struct lower *L, LLVMTypeRef t, uint32_t id,
                              LLVMValueRef def);
static LLVMValueRef spec_composite(struct lower *L, LLVMTypeRef t,
                                   LLVMValueRef *el, unsigned n);

struct leaf {
  uint64_t at;
  LLVMValueRef v;
};

struct nat {
  LLVMTargetDataRef td;
  struct leaf *leaf; /* the default's defined scalars by offset */
  size_t nleaf, capleaf;
  uint32_t id;          /* the next SpecId */
  struct lw_buf *descs; /* layout: the descriptors */
  struct lower *L;      /* lowering: where the calls go */
};

static int is_aggregate(LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  return k == LLVMStructTypeKind || k == LLVMArrayTypeKind ||
         k == LLVMVectorTypeKind;
}

static unsigned count_elements(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMStructTypeKind:
    return LLVMCountStructElementTypes(t);
  case LLVMArrayTypeKind:
    return (unsigned)LLVMGetArrayLength2(t);
  default:
    return LLVMGetVectorSize(t);
  }
}

/* Element i of aggregate type t, and its offset in it. */
static LLVMTypeRef element(LLVMTargetDataRef td, LLVMTypeRef t, unsigned i,
                           uint64_t *off) {
  if (LLVMGetTypeKind(t) == LLVMStructTypeKind) {
    *off = LLVMOffsetOfElement(td, t, i);
    return LLVMStructGetTypeAtIndex(t, i);
  }
  LLVMTypeRef et = LLVMGetElementType(t);
  *off = i * LLVMABISizeOfType(td, et);
  return et;
}

static int defined(struct nat *W, LLVMValueRef c, uint64_t at) {
  if (LLVMIsUndef(c))
    return 0;
  LLVMTypeRef t = LLVMTypeOf(c);
  if (!is_aggregate(t)) {
    if (lw_grow(&W->leaf, W->nleaf, &W->capleaf, sizeof *W->leaf, 16))
      return LW_ENOMEM;
    W->leaf[W->nleaf++] = (struct leaf){at, c};
    return 0;
  }
  unsigned n = count_elements(t);
  for (unsigned i = 0; i < n; i++) {
    uint64_t off;
    element(W->td, t, i, &off);
    int rc = defined(W, LLVMGetAggregateElement(c, i), at + off);
    if (rc)
      return rc;
  }
  return 0;
}

/* The default defined at offset `at`, or NULL. */
static LLVMValueRef defined_at(const struct nat *W, uint64_t at) {
  size_t lo = 0, hi = W->nleaf;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (W->leaf[mid].at < at)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < W->nleaf && W->leaf[lo].at == at ? W->leaf[lo].v : NULL;
}

/* The walk of type `t` at offset `at` of the default; *off is where the
 * descriptors are (DPC++ moves it on by the scalars met only). */
static int walk(struct nat *W, LLVMTypeRef t, uint64_t at, uint32_t *off,
                LLVMValueRef *out) {
  if (!is_aggregate(t)) {
    LLVMValueRef def = defined_at(W, at);
    uint32_t id = W->id++, size = store_size(W->td, t);
    if (W->descs && triple(W->descs, id, *off, size))
      return LW_ENOMEM;
    *off += size;
    if (W->L && !(*out = spec_call(W->L, t, id, def ? def : LLVMConstNull(t))))
      return LW_ENOMEM;
    return 0;
  }
  unsigned n = count_elements(t);
  LLVMValueRef *el = W->L ? calloc(n ? n : 1, sizeof *el) : NULL;
  if (W->L && !el)
    return LW_ENOMEM;
  int rc = 0, is_struct = LLVMGetTypeKind(t) == LLVMStructTypeKind;
  uint32_t base = *off, local = base;
  for (unsigned i = 0; !rc && i < n; i++) {
    uint64_t eoff;
    LLVMTypeRef et = element(W->td, t, i, &eoff);
    if (is_struct)
      local = base + (uint32_t)eoff;
    if (!defined_at(W, at + eoff)) {
      W->id++;
      if (el)
        el[i] = LLVMGetUndef(et);
      continue;
    }
    rc = walk(W, et, at + eoff, is_struct ? &local : off, el ? &el[i] : NULL);
  }
  if (!rc && is_struct) {
    uint32_t size = (uint32_t)LLVMABISizeOfType(W->td, t);
    if (W->descs && base + size > local &&
        triple(W->descs, PADDING_ID, local, base + size - local))
      rc = LW_ENOMEM;
    *off = base + size;
  }
  if (!rc && el && !(*out = spec_composite(W->L, t, el, n)))
    rc = LW_ENOMEM;
  free(el);
  return rc;
}

/* The native walk of the constant `c` reads, its ids from *id on. */
static int native_walk(const struct call *c, LLVMTargetDataRef td,
                       uint32_t *id, struct lw_buf *descs, struct lower *L,
                       LLVMValueRef *out) {
  struct nat W = {.td = td, .id = *id, .descs = descs, .L = L};
  uint32_t off = 0;
  int rc = defined(&W, c->def, 0);
  if (!rc)
    rc = walk(&W, c->read, 0, &off, out);
  free(W.leaf);
  *id = W.id;
  return rc;
}

/* Writes constant `c` of type `t` into out[0..) as it lies in memory;
 * undefined and zero parts stay zero. */
static void image(LLVMTargetDataRef td, LLVMValueRef c, LLVMTypeRef t,
                  unsigned char *out) {
  if (!c || LLVMIsNull(c) || LLVMIsUndef(c) || LLVMIsPoison(c))
    return;
  if (is_aggregate(t)) {
    for (unsigned i = 0, n = count_elements(t); i < n; i++) {
      uint64_t off;
      LLVMTypeRef et = element(td, t, i, &off);
      image(td, LLVMGetAggregateElement(c, i), et, out + off);
    }
    return;
  }
  uint32_t size = store_size(td, t);
  LLVMValueRef bits = c;
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind)
    bits = LLVMConstBitCast(
        c, LLVMIntTypeInContext(LLVMGetTypeContext(t), 8 * size));
  if (!LLVMIsAConstantInt(bits))
    return;
  uint64_t v = LLVMConstIntGetZExtValue(bits);
  for (uint32_t k = 0; k < size && k < 8; k++)
    out[k] = (unsigned char)(v >> (8 * k));
}

static int put_zeros(struct lw_buf *b, size_t n) {
  static const unsigned char zero[256];
  for (size_t k; n; n -= k)
    if (lw_buf_append(b, zero, (k = n < sizeof zero ? n : sizeof zero)))
      return LW_ENOMEM;
  return 0;
}

static int put_defaults(struct layout *L, const struct call *c) {
  size_t at = L->defaults.len;
  if (put_zeros(&L->defaults, store_size(L->td, c->type)))
    return LW_ENOMEM;
  image(L->td, c->def, c->type, L->defaults.data + at);
  return 0;
}

/* The property holding the current descriptors. */
static int flush(struct layout *L, const char *id) {
  struct dl_prop *p = dl__prop_new(L->props, set_ids, id);
  if (!p)
    return LW_ENOMEM;
  p->type = DL_PROP_BYTE_ARRAY;
  L->last = p;
  int rc = dl_encode_byte_array(L->descs.data, L->descs.len,
                                (uint64_t)L->descs.len * 8, &p->bytes);
  L->descs.len = 0;
  return rc;
}

/* Emulation: the gap before a constant that must be aligned, on the
 * previous constant's property (both the bit count and the bytes). */
static int pad_previous(struct layout *L, uint32_t pad) {
  struct lw_buf *b = &L->last->bytes;
  uint32_t prev_size =
      (uint32_t)b->data[b->len - 4] | (uint32_t)b->data[b->len - 3] << 8 |
      (uint32_t)b->data[b->len - 2] << 16 | (uint32_t)b->data[b->len - 1] << 24;
  if (triple(b, PADDING_ID, prev_size, pad))
    return LW_ENOMEM;
  uint64_t bits = (uint64_t)(b->len - 8) * 8;
  for (int k = 0; k < 8; k++)
    b->data[k] = (unsigned char)(bits >> (8 * k));
  return put_zeros(&L->defaults, pad);
}

static int lay_out(struct call *c, void *ctx) {
  struct layout *L = ctx;
  struct dl_group *gr = L->gr;
  for (size_t i = 0; i < gr->spec_ids.n; i++)
    if (strlen(gr->spec_ids.v[i]) == c->idlen &&
        memcmp(gr->spec_ids.v[i], c->id, c->idlen) == 0)
      return 0; /* met before */
  char *id = strndup(c->id, c->idlen);
  uint32_t *at = realloc(gr->spec_at, (gr->spec_ids.n + 1) * sizeof *at);
  if (at)
    gr->spec_at = at;
  int rc = !id || !at || lw_strvec_push(&gr->spec_ids, id) ? LW_ENOMEM : 0;
  if (!rc && L->mode == DL_SPEC_DEFAULT) {
    at[gr->spec_ids.n - 1] = 0; /* the values go into the code */
    free(id);
    return 0;
  }
  if (!rc && L->mode == DL_SPEC_NATIVE) {
    at[gr->spec_ids.n - 1] = L->next;
    rc = native_walk(c, L->td, &L->next, &L->descs, NULL, NULL);
  } else if (!rc) {
    /* aligned as the type read, described by the default's */
    uint32_t align = (uint32_t)LLVMABIAlignmentOfType(L->td, c->read);
    uint32_t off = L->offset;
    uint32_t pad = align > 1 && off % align ? align - off % align : 0;
    if (pad)
      rc = pad_previous(L, pad);
    at[gr->spec_ids.n - 1] = off + pad;
    L->offset = off + pad + store_size(L->td, c->read);
    if (!rc)
      rc = triple(&L->descs, L->next++, 0, store_size(L->td, c->type));
  }
  if (!rc)
    rc = put_defaults(L, c);
  if (!rc)
    rc = flush(L, id);
  free(id);
  return rc;
}

int dl__spec_layout(LLVMModuleRef m, const struct dl__set *only,
                    struct dl_group *gr, struct lw_diag *d) {
  struct layout L = {.mode = gr->spec_mode,
                     .td = LLVMGetModuleDataLayout(m),
                     .gr = gr,
                     .props = &gr->props};
  int rc = each_call(m, only, lay_out, &L, d);
  if (!rc && gr->spec_mode == DL_SPEC_DEFAULT) {
    struct dl_prop *p = dl__prop_new(&gr->props, "SYCL/misc properties",
                                     "specConstsReplacedWithDefault");
    if (p) {
      p->type = DL_PROP_UINT32;
      p->u32 = 1;
    } else {
      rc = LW_ENOMEM;
    }
  } else if (!rc) {
    struct dl_prop *p = dl__prop_new(&gr->props, set_defaults, "all");
    if (p) {
      p->type = DL_PROP_BYTE_ARRAY;
      rc = dl_encode_byte_array(L.defaults.data, L.defaults.len,
                                (uint64_t)L.defaults.len * 8, &p->bytes);
    } else {
      rc = LW_ENOMEM;
    }
  }
  lw_buf_free(&L.descs);
  lw_buf_free(&L.defaults);
  if (rc == LW_ENOMEM)
    return lw_error(d, rc, "out of memory");
  dl__props_sort(&gr->props);
  return rc;
}

/* ---- lowering ------------------------------------------------------------ */

struct lower {
  const struct dl_group *gr;
  LLVMModuleRef m;
  LLVMContextRef ctx;
  LLVMBuilderRef b;
  struct lw_buf name; /* scratch for mangled names */
  struct lw_diag *d;
  LLVMValueRef *defs; /* each constant's default value, once met */
};

/* A short mangling of `t`, enough to tell the declarations apart (the
 * SPIR-V back end reads only the base name). */
static int mangle(struct lw_buf *out, LLVMTypeRef t) {
  char num[32];
  switch (LLVMGetTypeKind(t)) {
  case LLVMIntegerTypeKind: {
    unsigned w = LLVMGetIntTypeWidth(t);
    const char *s = w == 1    ? "b"
                    : w == 8  ? "a"
                    : w == 16 ? "s"
                    : w == 32 ? "i"
                              : "x";
    return lw_buf_append(out, s, strlen(s));
  }
  case LLVMHalfTypeKind:
    return lw_buf_append(out, "Dh", 2);
  case LLVMBFloatTypeKind:
    return lw_buf_append(out, "DF16b", 5);
  case LLVMFloatTypeKind:
    return lw_buf_append(out, "f", 1);
  case LLVMDoubleTypeKind:
    return lw_buf_append(out, "d", 1);
  case LLVMStructTypeKind: {
    const char *n = LLVMGetStructName(t);
    if (n && *n)
      return lw_buf_append(out, n, strlen(n));
    int rc = lw_buf_append(out, "T", 1);
    for (unsigned i = 0; !rc && i < LLVMCountStructElementTypes(t); i++)
      rc = mangle(out, LLVMStructGetTypeAtIndex(t, i));
    return rc ? rc : lw_buf_append(out, "E", 1);
  }
  default: {
    int array = LLVMGetTypeKind(t) == LLVMArrayTypeKind;
    snprintf(num, sizeof num, "%s%llu_", array ? "A" : "Dv",
             array ? (unsigned long long)LLVMGetArrayLength2(t)
                   : (unsigned long long)LLVMGetVectorSize(t));
    int rc = lw_buf_append(out, num, strlen(num));
    return rc ? rc : mangle(out, LLVMGetElementType(t));
  }
  }
}

/* A call of the SPIR-V built-in `base` returning `ret` on `args`. */
static LLVMValueRef builtin_call(struct lower *L, const char *base,
                                 LLVMTypeRef ret, LLVMValueRef *args,
                                 unsigned n, int composite) {
  LLVMTypeRef *types = malloc((n ? n : 1) * sizeof *types);
  char head[48];
  if (!types)
    return NULL;
  snprintf(head, sizeof head, "_Z%zu%s", strlen(base), base);
  L->name.len = 0;
  int rc = lw_buf_append(&L->name, head, strlen(head));
  for (unsigned i = 0; !rc && i < n; i++) {
    types[i] = LLVMTypeOf(args[i]);
    rc = mangle(&L->name, types[i]);
  }
  if (!rc && composite)
    rc = lw_buf_append(&L->name, "_R", 2) || mangle(&L->name, ret);
  if (rc || lw_buf_append(&L->name, "", 1)) {
    free(types);
    return NULL;
  }
  LLVMTypeRef fty = LLVMFunctionType(ret, types, n, 0);
  free(types);
  LLVMValueRef f = LLVMGetNamedFunction(L->m, (char *)L->name.data);
  /* SPIR's calling convention where the code is SPIR */
  unsigned cc = strncmp(LLVMGetTarget(L->m), "spir", 4) == 0
                    ? LLVMSPIRFUNCCallConv
                    : LLVMCCallConv;
  if (!f) {
    f = LLVMAddFunction(L->m, (char *)L->name.data, fty);
    LLVMSetFunctionCallConv(f, cc);
  }
  LLVMValueRef call = LLVMBuildCall2(L->b, fty, f, args, n, "");
  LLVMSetInstructionCallConv(call, cc);
  return call;
}

static LLVMValueRef spec_call(struct lower *L, LLVMTypeRef t, uint32_t id,
                              LLVMValueRef def) {
  LLVMValueRef args[2] = {LLVMConstInt(LLVMInt32TypeInContext(L->ctx), id, 0),
                          def};
  return builtin_call(L, "__spirv_SpecConstant", t, args, 2, 0);
}

static LLVMValueRef spec_composite(struct lower *L, LLVMTypeRef t,
                                   LLVMValueRef *el, unsigned n) {
  return builtin_call(L, "__spirv_SpecConstantComposite", t, el, n, 1);
}

static int lower_one(struct call *c, void *ctx) {
  struct lower *L = ctx;
  const struct dl_group *gr = L->gr;
  size_t i;
  for (i = 0; i < gr->spec_ids.n; i++)
    if (strlen(gr->spec_ids.v[i]) == c->idlen &&
        memcmp(gr->spec_ids.v[i], c->id, c->idlen) == 0)
      break;
  /* A call the layout did not meet is in code no entry point reaches (the
   * whole linked module is one group's module as it is): dead, it takes
   * the default value. */
  unsigned mode = i < gr->spec_ids.n ? gr->spec_mode : DL_SPEC_DEFAULT;
  if (i < gr->spec_ids.n && !L->defs[i])
    L->defs[i] = c->def;
  LLVMPositionBuilderBefore(L->b, c->ci);
  LLVMValueRef v;
  if (mode == DL_SPEC_NATIVE) {
    uint32_t id = gr->spec_at[i];
    if (native_walk(c, LLVMGetModuleDataLayout(L->m), &id, NULL, L, &v))
      return lw_error(L->d, LW_ENOMEM, "out of memory");
  } else if (mode == DL_SPEC_EMULATION) {
    if (LLVMIsNull(strip(c->buffer)))
      return lw_error(L->d, LW_EINVAL,
                      "specialization constant '%.*s' (in '%s') has no "
                      "buffer to be emulated with: its device code was "
                      "compiled for JIT SPIR-V (use -spec-const=native, or "
                      "compile it for the AOT target)",
                      (int)c->idlen, c->id, fname(c->caller));
    LLVMValueRef off =
        LLVMConstInt(LLVMInt32TypeInContext(L->ctx), gr->spec_at[i], 0);
    LLVMValueRef p = LLVMBuildGEP2(L->b, LLVMInt8TypeInContext(L->ctx),
                                   c->buffer, &off, 1, "");
    v = LLVMBuildLoad2(L->b, c->read, p, "");
  } else {
    v = c->def;
  }
  if (c->to_bool && mode == DL_SPEC_DEFAULT) {
    /* DPC++ leaves the default's truncation an instruction ("bool"); the
     * builder would fold it, so it is made on a stand-in first */
    LLVMValueRef tmp = LLVMBuildFreeze(L->b, v, "");
    LLVMValueRef tr =
        LLVMBuildTrunc(L->b, tmp, LLVMInt1TypeInContext(L->ctx), "bool");
    LLVMSetOperand(tr, 0, v);
    LLVMInstructionEraseFromParent(tmp);
    v = tr;
  } else if (c->to_bool) {
    v = LLVMBuildTrunc(L->b, v, LLVMInt1TypeInContext(L->ctx), "");
  }
  if (c->elem) { /* the private array, as long as the constant says */
    v = LLVMBuildArrayAlloca(L->b, c->elem, v, "");
    LLVMSetAlignment(v, c->align);
  }
  if (c->sret)
    LLVMBuildStore(L->b, v, LLVMGetOperand(c->ci, 0));
  else
    LLVMReplaceAllUsesWith(c->ci, v);
  LLVMInstructionEraseFromParent(c->ci);
  return 0;
}

/* What DPC++ leaves in the module for its later tools: the constants'
 * layout (the property's triples after each symbolic id) and their
 * default values, in the order laid out. */
static int record(struct lower *L) {
  const struct dl_group *gr = L->gr;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(L->ctx);
  for (size_t i = 0; i < gr->spec_ids.n; i++) {
    const struct dl_prop *p = dl_props_find(&gr->props, set_ids,
                                            gr->spec_ids.v[i]);
    if (!p || !L->defs[i] || p->bytes.len < 8)
      continue;
    size_t n = (p->bytes.len - 8) / 4;
    LLVMMetadataRef *ops = calloc(n + 1, sizeof *ops);
    if (!ops)
      return LW_ENOMEM;
    ops[0] = LLVMMDStringInContext2(L->ctx, gr->spec_ids.v[i],
                                    strlen(gr->spec_ids.v[i]));
    for (size_t k = 0; k < n; k++) {
      const unsigned char *b = p->bytes.data + 8 + 4 * k;
      uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
                   (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
      ops[k + 1] = LLVMValueAsMetadata(LLVMConstInt(i32, v, 0));
    }
    LLVMMetadataRef node = LLVMMDNodeInContext2(L->ctx, ops, n + 1);
    free(ops);
    LLVMAddNamedMetadataOperand(L->m, "sycl.specialization-constants",
                                LLVMMetadataAsValue(L->ctx, node));
    LLVMMetadataRef def = LLVMValueAsMetadata(L->defs[i]);
    LLVMAddNamedMetadataOperand(
        L->m, "sycl.specialization-constants-default-values",
        LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, &def, 1)));
  }
  return 0;
}

int dl__spec_lower(LLVMModuleRef m, const struct dl_group *gr,
                   struct lw_diag *d) {
  struct lower L = {gr, m, LLVMGetModuleContext(m), NULL, {0}, d, NULL};
  if (!(L.defs = calloc(gr->spec_ids.n + 1, sizeof *L.defs)) ||
      !(L.b = LLVMCreateBuilderInContext(L.ctx))) {
    free(L.defs);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  int rc = each_call(m, NULL, lower_one, &L, d);
  if (!rc && gr->spec_mode != DL_SPEC_DEFAULT && record(&L))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  /* how DPC++ marks a module lowered to the default values */
  static const char marker[] =
      "sycl.specialization-constants-default-values-module";
  if (!rc && gr->spec_mode == DL_SPEC_DEFAULT)
    LLVMGetOrInsertNamedMetadata(m, marker, sizeof marker - 1);
  free(L.defs);
  LLVMDisposeBuilder(L.b);
  lw_buf_free(&L.name);
  /* The getters are gone: none may reach the back end. Nor need the
   * symbolic ids and defaults that nothing uses now. */
  LLVMValueRef next;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); !rc && f; f = next) {
    next = LLVMGetNextFunction(f);
    if (LLVMIsDeclaration(f) && dl__spec_getter(f) && !LLVMGetFirstUse(f))
      LLVMDeleteFunction(f);
  }
  if (!rc)
    dl__drop_unused(m);
  return rc;
}
