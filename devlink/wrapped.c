/* wrapped.c - reads back what DPC++'s clang-offload-wrapper (kind sycl)
 * put into a module: DPC++ keeps such a module beside an FPGA binary it
 * archives (bundle entry host-<fpga triple>), and its later links take the
 * binary's kernels and property sets from it (clang-offload-wrapper
 * --sym-prop-bc-files), as the binary itself names none.
 *
 * The module holds an array of device-image structs, 14 fields each:
 *   i16 version, i8 kind, i8 format, ptr target, ptr compile options,
 *   ptr link options, ptr manifest begin/end, ptr image begin/end,
 *   ptr entries begin/end, ptr property sets begin/end
 * entries:       { ptr addr, ptr name, size, i32 flags, i32 reserved }
 *                (or LLVM's newer 9-field entry, its name at field 5)
 * property sets: { ptr name, ptr properties begin, ptr properties end }
 * properties:    { ptr name, ptr value, i32 type, i64 size }, a uint32's
 *                value being its size field and a byte array's its bytes
 *                (bit-count header included) at `value`.
 * Every begin/end pair points at the start and end of an array global of
 * its own, as the wrapper makes them. */
#include "internal.h"

#include <llvm-c/BitReader.h>
#include <stdlib.h>
#include <string.h>

struct reader {
  const char *origin;
  struct lw_diag *d;
};

static int bad(struct reader *r, const char *what) {
  return lw_error_path(r->d, LW_EFORMAT, r->origin,
                       "DPC++ device image descriptor: %s", what);
}

/* The global a begin pointer points at the start of (NULL for a null
 * pointer); an error when it points elsewhere. */
static int start_of(struct reader *r, LLVMValueRef v, LLVMValueRef *global) {
  *global = NULL;
  while (v && LLVMIsAConstantExpr(v)) {
    LLVMOpcode op = LLVMGetConstOpcode(v);
    if (op == LLVMGetElementPtr)
      for (int i = 1; i < LLVMGetNumOperands(v); i++) {
        LLVMValueRef ix = LLVMGetOperand(v, (unsigned)i);
        if (!LLVMIsAConstantInt(ix) || LLVMConstIntGetZExtValue(ix))
          return bad(r, "a pointer into the middle of an array");
      }
    else if (op != LLVMBitCast && op != LLVMAddrSpaceCast)
      return bad(r, "an unexpected constant expression");
    v = LLVMGetOperand(v, 0);
  }
  if (!v || LLVMIsNull(v))
    return 0;
  if (!LLVMIsAGlobalVariable(v) || !LLVMGetInitializer(v))
    return bad(r, "a pointer to something other than a defined global");
  *global = v;
  return 0;
}

/* The global an end pointer is computed from. */
static LLVMValueRef base_of(LLVMValueRef v) {
  while (v && LLVMIsAConstantExpr(v))
    v = LLVMGetOperand(v, 0);
  return v && LLVMIsAGlobalVariable(v) ? v : NULL;
}

/* The array global that begin/end span; its element count. */
static int array_of(struct reader *r, LLVMValueRef begin, LLVMValueRef end,
                    LLVMValueRef *init, unsigned *n) {
  LLVMValueRef g;
  *init = NULL;
  *n = 0;
  int rc = start_of(r, begin, &g);
  if (rc || !g)
    return rc;
  if (base_of(end) != g)
    return bad(r, "a begin and an end pointer into different globals");
  *init = LLVMGetInitializer(g);
  LLVMTypeRef t = LLVMTypeOf(*init);
  if (LLVMGetTypeKind(t) != LLVMArrayTypeKind)
    return bad(r, "a table that is not an array");
  *n = (unsigned)LLVMGetArrayLength2(t);
  return 0;
}

/* The bytes of the i8 array `p` points at the start of (a string keeps
 * its NUL). */
static int bytes_at(struct reader *r, LLVMValueRef p, const char **data,
                    size_t *len) {
  LLVMValueRef g;
  *data = NULL;
  *len = 0;
  int rc = start_of(r, p, &g);
  if (rc || !g)
    return rc;
  LLVMValueRef init = LLVMGetInitializer(g);
  LLVMTypeRef t = LLVMTypeOf(init);
  if (LLVMGetTypeKind(t) != LLVMArrayTypeKind ||
      LLVMGetTypeKind(LLVMGetElementType(t)) != LLVMIntegerTypeKind ||
      LLVMGetIntTypeWidth(LLVMGetElementType(t)) != 8)
    return bad(r, "a string or value that is not a byte array");
  if (LLVMIsAConstantAggregateZero(init)) {
    static const char zeros[64];
    *len = (size_t)LLVMGetArrayLength2(t);
    if (*len > sizeof zeros)
      return bad(r, "a zero-filled value of more than 64 bytes");
    *data = zeros;
    return 0;
  }
  if (!LLVMIsAConstantDataSequential(init))
    return bad(r, "a byte array that is not constant data");
  *data = LLVMGetAsString(init, len);
  return 0;
}

/* A NUL-terminated string at `p`, copied. */
static int string_at(struct reader *r, LLVMValueRef p, char **out) {
  const char *s;
  size_t n;
  int rc = bytes_at(r, p, &s, &n);
  if (rc)
    return rc;
  if (!s || !n || s[n - 1] || memchr(s, 0, n) != s + n - 1)
    return bad(r, "a name that is not a NUL-terminated string");
  if (!(*out = strdup(s)))
    return lw_error(r->d, LW_ENOMEM, "out of memory");
  return 0;
}

static uint64_t int_field(LLVMValueRef s, unsigned i) {
  LLVMValueRef v = LLVMGetAggregateElement(s, i);
  return v && LLVMIsAConstantInt(v) ? LLVMConstIntGetZExtValue(v) : 0;
}

static int read_entries(struct reader *r, LLVMValueRef img,
                        struct lw_strvec *out) {
  LLVMValueRef arr;
  unsigned n;
  int rc = array_of(r, LLVMGetAggregateElement(img, 10),
                    LLVMGetAggregateElement(img, 11), &arr, &n);
  for (unsigned i = 0; !rc && i < n; i++) {
    LLVMValueRef e = LLVMGetAggregateElement(arr, i);
    unsigned fields = LLVMCountStructElementTypes(LLVMTypeOf(e));
    if (fields != 5 && fields != 9)
      return bad(r, "an offload entry of neither known layout");
    char *name = NULL;
    rc = string_at(r, LLVMGetAggregateElement(e, fields == 5 ? 1 : 5), &name);
    if (!rc && lw_strvec_push(out, name))
      rc = lw_error(r->d, LW_ENOMEM, "out of memory");
    free(name);
  }
  return rc;
}

static int read_set(struct reader *r, LLVMValueRef set, struct dl_props *out) {
  const char *name;
  size_t len;
  int rc = bytes_at(r, LLVMGetAggregateElement(set, 0), &name, &len);
  if (rc)
    return rc;
  const char *known = name && len ? dl__set_name(name, len - 1) : NULL;
  if (!known)
    return lw_error_path(r->d, LW_EFORMAT, r->origin,
                         "DPC++ device image descriptor: unknown property "
                         "set '%.*s'",
                         (int)(len ? len - 1 : 0), name ? name : "");
  LLVMValueRef arr;
  unsigned n;
  rc = array_of(r, LLVMGetAggregateElement(set, 1),
                LLVMGetAggregateElement(set, 2), &arr, &n);
  for (unsigned i = 0; !rc && i < n; i++) {
    LLVMValueRef p = LLVMGetAggregateElement(arr, i);
    if (LLVMCountStructElementTypes(LLVMTypeOf(p)) != 4)
      return bad(r, "a property that is not {name, value, type, size}");
    char *pname = NULL;
    if ((rc = string_at(r, LLVMGetAggregateElement(p, 0), &pname)))
      break;
    struct dl_prop *pr = dl__prop_new(out, known, pname);
    free(pname);
    if (!pr)
      return lw_error(r->d, LW_ENOMEM, "out of memory");
    uint64_t type = int_field(p, 2), size = int_field(p, 3);
    pr->type = (uint32_t)type;
    if (type == DL_PROP_UINT32) {
      if (size > 0xffffffffu)
        return bad(r, "a uint32 property out of range");
      pr->u32 = (uint32_t)size;
      continue;
    }
    if (type != DL_PROP_BYTE_ARRAY)
      return lw_error_path(r->d, LW_EFORMAT, r->origin,
                           "DPC++ device image descriptor: property '%s' of "
                           "unsupported type %llu",
                           pr->name, (unsigned long long)type);
    const char *v;
    size_t vlen;
    rc = bytes_at(r, LLVMGetAggregateElement(p, 1), &v, &vlen);
    if (!rc && (!v || vlen < size || size < 8))
      rc = bad(r, "a byte-array property shorter than its size");
    if (!rc && lw_buf_append(&pr->bytes, v, (size_t)size))
      rc = lw_error(r->d, LW_ENOMEM, "out of memory");
  }
  return rc;
}

static int read_image(struct reader *r, LLVMValueRef img,
                      struct dl_wrapped_image *w) {
  int rc = string_at(r, LLVMGetAggregateElement(img, 3), &w->target);
  if (!rc)
    rc = read_entries(r, img, &w->kernels);
  LLVMValueRef sets;
  unsigned n = 0;
  if (!rc)
    rc = array_of(r, LLVMGetAggregateElement(img, 12),
                  LLVMGetAggregateElement(img, 13), &sets, &n);
  for (unsigned i = 0; !rc && i < n; i++)
    rc = read_set(r, LLVMGetAggregateElement(sets, i), &w->props);
  if (!rc)
    dl__props_sort(&w->props);
  return rc;
}

/* Is `g` the wrapper's array of device-image structs? */
static int is_image_array(LLVMValueRef g) {
  LLVMValueRef init = LLVMGetInitializer(g);
  if (!init || LLVMGetTypeKind(LLVMTypeOf(init)) != LLVMArrayTypeKind)
    return 0;
  LLVMTypeRef e = LLVMGetElementType(LLVMTypeOf(init));
  if (LLVMGetTypeKind(e) != LLVMStructTypeKind ||
      LLVMCountStructElementTypes(e) != 14)
    return 0;
  LLVMTypeRef v = LLVMStructGetTypeAtIndex(e, 0);
  return LLVMGetTypeKind(v) == LLVMIntegerTypeKind &&
         LLVMGetIntTypeWidth(v) == 16;
}

int dl_wrapped_read(const void *bitcode, size_t size, const char *origin,
                    struct dl_wrapped_image **out, size_t *n,
                    struct lw_diag *d) {
  struct reader r = {origin, d};
  *out = NULL;
  *n = 0;
  struct dl__diag_capture cap = {{0}};
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(ctx, dl__capture_diag, &cap);
  LLVMMemoryBufferRef mb =
      LLVMCreateMemoryBufferWithMemoryRange(bitcode, size, origin, 0);
  LLVMModuleRef mod = NULL;
  int rc = 0;
  lw_doing(origin, "reading DPC++'s device image descriptor");
  if (!mb)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  else if (LLVMParseBitcodeInContext2(ctx, mb, &mod))
    rc = lw_error_path(d, LW_EFORMAT, origin,
                       "DPC++ device image descriptor: invalid bitcode%s%s",
                       cap.text[0] ? ": " : "", cap.text);
  if (mb)
    LLVMDisposeMemoryBuffer(mb);
  LLVMValueRef arr = NULL;
  for (LLVMValueRef g = mod ? LLVMGetFirstGlobal(mod) : NULL; g && !arr;
       g = LLVMGetNextGlobal(g))
    if (is_image_array(g))
      arr = LLVMGetInitializer(g);
  if (!rc && !arr)
    rc = bad(&r, "no array of SYCL device images in the module");
  size_t count = arr ? (size_t)LLVMGetArrayLength2(LLVMTypeOf(arr)) : 0;
  if (!rc && count && !(*out = calloc(count, sizeof **out)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < count; i++)
    rc = read_image(&r, LLVMGetAggregateElement(arr, (unsigned)i), &(*out)[i]);
  if (!rc)
    *n = count;
  else if (*out) {
    dl_wrapped_free(*out, count);
    *out = NULL;
  }
  if (mod)
    LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  lw_done();
  return rc;
}

void dl_wrapped_free(struct dl_wrapped_image *w, size_t n) {
  for (size_t i = 0; w && i < n; i++) {
    free(w[i].target);
    lw_strvec_free(&w[i].kernels);
    dl_props_free(&w[i].props);
  }
  free(w);
}
