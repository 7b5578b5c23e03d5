/* linkage.c - what a SPIR-V module gives and takes by name, as the SPIR-V
 * linker (spirv-link) resolves it: the functions and variables it exports
 * (LinkageAttributes Export or LinkOnceODR), those it imports
 * (LinkageAttributes Import), and its entry points (kernels); and its
 * imports retyped to what their exporters define.
 *
 * Why retype. spirv-link requires an import's type to be its export's,
 * word for word. LLVM's SPIR-V back end sees pointers without pointee types
 * and gives a declaration's pointer parameter the pointee it deduces from
 * its callers, often i8 (LLVM writes constant-offset address arithmetic as
 * i8 offsets), while the library that defines the function (compiled alone)
 * deduced float: "Type mismatch on symbol". When an import and its export
 * differ only in what pointers of the same storage class point to, the
 * import is given the export's type, and each call passes its pointer
 * arguments through OpBitcast (and its result back, for a returned
 * pointer): what a typed front end would have written.
 *
 * Types are compared by a signature: "I32;" "F64;" "V;" (void) "B;" (bool)
 * "X4;" and its element (vector), "P8;" and its pointee (pointer, storage
 * class 8), "(" return type, parameter types ")" (function); any other type
 * is "?;", which never matches. Read with SPIRV-Tools' parser, which also
 * refuses a file that is not SPIR-V. */
#include "internal.h"

/* libspirv.h defines this constant (not static): spirv.c holds the one
 * definition under its own name. */
#define kDefaultMaxIdBound dl__linkage_max_id_bound
#include <spirv-tools/libspirv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  OP_NAME = 5,
  OP_ENTRY_POINT = 15,
  OP_TYPE_VOID = 19,
  OP_TYPE_BOOL = 20,
  OP_TYPE_INT = 21,
  OP_TYPE_FLOAT = 22,
  OP_TYPE_VECTOR = 23,
  OP_TYPE_POINTER = 32,
  OP_TYPE_FUNCTION = 33,
  OP_FUNCTION = 54,
  OP_FUNCTION_PARAMETER = 55,
  OP_FUNCTION_CALL = 57,
  OP_VARIABLE = 59,
  OP_DECORATE = 71,
  OP_BITCAST = 124,
  DECORATION_LINKAGE = 41,
  LINKAGE_IMPORT = 1
};

/* One linkage decoration: id, name (in the module's words), import? */
struct decoration {
  uint32_t id;
  const char *name;
  int import;
};

/* What one parse learns. */
struct reader {
  const uint32_t *words;
  uint32_t bound;
  char **sig;          /* by id: a type's signature, or a function's or a
                          variable's type's */
  uint32_t *type_of;   /* by id: a function's or variable's type id */
  struct decoration *dec;
  size_t ndec, capdec;
  struct lw_strvec entries;
  size_t pos;            /* word offset of the current instruction */
  size_t first_function; /* word offset of the first OpFunction, or 0 */
  int nomem;
};

static void reader_free(struct reader *r) {
  for (uint32_t i = 0; r->sig && i < r->bound; i++)
    free(r->sig[i]);
  free(r->sig);
  free(r->type_of);
  free(r->dec);
  lw_strvec_free(&r->entries);
}

/* A literal string operand (nul-terminated within its words). */
static const char *string_at(const spv_parsed_instruction_t *in,
                             const spv_parsed_operand_t *op) {
  const char *s = (const char *)(in->words + op->offset);
  return memchr(s, 0, (size_t)op->num_words * 4) ? s : NULL;
}

static spv_result_t on_header(void *ud, spv_endianness_t e, uint32_t magic,
                              uint32_t version, uint32_t generator,
                              uint32_t bound, uint32_t schema) {
  struct reader *r = ud;
  (void)magic, (void)version, (void)generator, (void)schema;
  if (e != SPV_ENDIANNESS_LITTLE || bound == 0 || bound > (1u << 24))
    return SPV_ERROR_INVALID_BINARY;
  r->bound = bound;
  r->sig = calloc(bound, sizeof *r->sig);
  r->type_of = calloc(bound, sizeof *r->type_of);
  return r->sig && r->type_of ? SPV_SUCCESS : SPV_ERROR_OUT_OF_MEMORY;
}

static const char *sig_of(const struct reader *r, uint32_t id) {
  return id < r->bound && r->sig[id] ? r->sig[id] : "?;";
}

/* The signature of the type an instruction declares, malloc'd; NULL when
 * it declares none. */
static char *type_sig(const struct reader *r,
                      const spv_parsed_instruction_t *in) {
  const uint32_t *w = in->words;
  switch (in->opcode) {
  case OP_TYPE_VOID:
    return strdup("V;");
  case OP_TYPE_BOOL:
    return strdup("B;");
  case OP_TYPE_INT:
    return in->num_words >= 3 ? lw_xasprintf("I%u;", w[2]) : NULL;
  case OP_TYPE_FLOAT:
    return in->num_words >= 3 ? lw_xasprintf("F%u;", w[2]) : NULL;
  case OP_TYPE_VECTOR:
    return in->num_words >= 4
               ? lw_xasprintf("X%u;%s", w[3], sig_of(r, w[2]))
               : NULL;
  case OP_TYPE_POINTER:
    return in->num_words >= 4
               ? lw_xasprintf("P%u;%s", w[2], sig_of(r, w[3]))
               : NULL;
  case OP_TYPE_FUNCTION: {
    struct lw_buf b = {0};
    int bad = lw_buf_append(&b, "(", 1);
    for (uint16_t k = 2; !bad && k < in->num_words; k++)
      bad = lw_buf_append(&b, sig_of(r, w[k]), strlen(sig_of(r, w[k])));
    bad = bad || lw_buf_append(&b, ")", 2);
    if (bad)
      lw_buf_free(&b);
    return (char *)b.data;
  }
  default:
    /* another type (OpTypeVoid to OpTypeForwardPointer) */
    return in->opcode >= 19 && in->opcode <= 39 ? strdup("?;") : NULL;
  }
}

static spv_result_t on_instruction(void *ud,
                                   const spv_parsed_instruction_t *in) {
  struct reader *r = ud;
  const uint32_t *w = in->words;
  size_t at = r->pos;
  r->pos += in->num_words;
  if (in->opcode == OP_ENTRY_POINT && in->num_operands >= 3) {
    const char *name = string_at(in, &in->operands[2]);
    if (!name)
      return SPV_ERROR_INVALID_BINARY;
    if (lw_strvec_push(&r->entries, name))
      return r->nomem = 1, SPV_ERROR_OUT_OF_MEMORY;
  } else if (in->opcode == OP_DECORATE && in->num_operands >= 4 &&
             w[in->operands[1].offset] == DECORATION_LINKAGE) {
    const char *name = string_at(in, &in->operands[2]);
    if (!name || w[1] >= r->bound)
      return SPV_ERROR_INVALID_BINARY;
    if (lw_grow(&r->dec, r->ndec, &r->capdec, sizeof *r->dec, 16))
      return r->nomem = 1, SPV_ERROR_OUT_OF_MEMORY;
    r->dec[r->ndec++] = (struct decoration){
        w[1], name, w[in->operands[3].offset] == LINKAGE_IMPORT};
  } else if ((in->opcode == OP_FUNCTION && in->num_words >= 5) ||
             (in->opcode == OP_VARIABLE && in->num_words >= 4)) {
    if (in->opcode == OP_FUNCTION && !r->first_function)
      r->first_function = at;
    r->type_of[in->result_id] = in->opcode == OP_FUNCTION ? w[4] : w[1];
  } else if (in->result_id) {
    char *s = type_sig(r, in);
    if (s)
      r->sig[in->result_id] = s;
  }
  return SPV_SUCCESS;
}

static int parse(const unsigned char *spv, size_t n, struct reader *r,
                 struct lw_diag *d) {
  memset(r, 0, sizeof *r);
  if (n % 4 || n < 20)
    return lw_error(d, LW_EFORMAT, "not a SPIR-V module (%zu bytes)", n);
  r->words = (const uint32_t *)(const void *)spv;
  r->pos = 5;
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  spv_diagnostic diag = NULL;
  spv_result_t res = ctx ? spvBinaryParse(ctx, r, r->words, n / 4, on_header,
                                          on_instruction, &diag)
                         : SPV_ERROR_OUT_OF_MEMORY;
  int rc = 0;
  if (r->nomem || res == SPV_ERROR_OUT_OF_MEMORY)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  else if (res != SPV_SUCCESS)
    rc = lw_error(d, LW_EFORMAT, "not a readable SPIR-V module: %.*s",
                  diag && diag->error ? (int)strcspn(diag->error, "\n") : 10,
                  diag && diag->error ? diag->error : "bad header");
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  if (rc)
    reader_free(r);
  return rc;
}

int dl_spirv_linkage(const unsigned char *spv, size_t n,
                     struct dl_spirv_linkage *out, struct lw_diag *d) {
  memset(out, 0, sizeof *out);
  struct reader r;
  int rc = parse(spv, n, &r, d);
  if (rc)
    return rc;
  out->entries = r.entries;
  r.entries = (struct lw_strvec){0};
  for (size_t i = 0; !rc && i < r.ndec; i++) {
    const struct decoration *dc = &r.dec[i];
    const char *sig = sig_of(&r, r.type_of[dc->id]);
    rc = dc->import ? lw_strvec_push(&out->imports, dc->name) ||
                          lw_strvec_push(&out->import_types, sig)
                    : lw_strvec_push(&out->exports, dc->name) ||
                          lw_strvec_push(&out->export_types, sig);
  }
  reader_free(&r);
  if (rc) {
    dl_spirv_linkage_free(out);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  return 0;
}

void dl_spirv_linkage_free(struct dl_spirv_linkage *l) {
  lw_strvec_free(&l->exports);
  lw_strvec_free(&l->imports);
  lw_strvec_free(&l->entries);
  lw_strvec_free(&l->export_types);
  lw_strvec_free(&l->import_types);
}

/* ---- retyping imports ----------------------------------------------------- */

/* The end of the type signature at s (one type, its parts included). */
static const char *sig_end(const char *s) {
  if (*s == '(') {
    for (s++; *s && *s != ')';)
      s = sig_end(s);
    return *s ? s + 1 : s;
  }
  const char *semi = strchr(s, ';');
  if (!semi)
    return s + strlen(s);
  return *s == 'X' || *s == 'P' ? sig_end(semi + 1) : semi + 1;
}

/* May a value of type `have` be passed as `want` through OpBitcast: equal,
 * or pointers of one storage class (to anything this file can declare)?
 * Functions: the same for the return type and each parameter. */
static int compatible(const char *have, const char *want, size_t nh,
                      size_t nw) {
  if (nh == nw && memcmp(have, want, nh) == 0 && !memchr(want, '?', nw))
    return 1;
  if (have[0] == 'P' && want[0] == 'P') {
    size_t sh = strcspn(have, ";"), sw = strcspn(want, ";");
    return sh == sw && memcmp(have, want, sh) == 0 &&
           !memchr(want, '?', nw);
  }
  if (have[0] != '(' || want[0] != '(')
    return 0;
  const char *h = have + 1, *w = want + 1;
  while (*h != ')' && *w != ')' && *h && *w) {
    const char *he = sig_end(h), *we = sig_end(w);
    if (!compatible(h, w, (size_t)(he - h), (size_t)(we - w)))
      return 0;
    h = he;
    w = we;
  }
  return *h == ')' && *w == ')';
}

/* The module being rewritten: the types it has by signature, and the type
 * instructions to add before its first function. */
struct retype {
  struct reader r;
  struct lw_buf types; /* words */
  struct lw_strvec new_sigs;
  uint32_t *new_ids;
  size_t nnew, capnew;
  uint32_t next; /* the next fresh id */
  int nomem;
};

static int emit(struct lw_buf *b, const uint32_t *w, size_t n) {
  return lw_buf_append(b, w, n * 4);
}

/* The id of the type of signature [s, e): an existing one, or one added. */
static uint32_t type_id(struct retype *t, const char *s, const char *e) {
  size_t n = (size_t)(e - s);
  for (uint32_t id = 1; id < t->r.bound; id++)
    if (t->r.sig[id] && strlen(t->r.sig[id]) == n &&
        memcmp(t->r.sig[id], s, n) == 0 && !t->r.type_of[id])
      return id;
  for (size_t i = 0; i < t->nnew; i++)
    if (strlen(t->new_sigs.v[i]) == n && memcmp(t->new_sigs.v[i], s, n) == 0)
      return t->new_ids[i];
  uint32_t w[64], nw = 0, part[62], np = 0;
  const char *semi = strchr(s, ';');
  if (*s == '(') {
    for (const char *p = s + 1; *p != ')' && np < 62; p = sig_end(p))
      if (!(part[np++] = type_id(t, p, sig_end(p))))
        return 0;
    w[nw++] = (uint32_t)(np + 2) << 16 | OP_TYPE_FUNCTION;
    w[nw++] = t->next;
    for (uint32_t k = 0; k < np; k++)
      w[nw++] = part[k];
  } else if (*s == 'P' || *s == 'X') {
    uint32_t inner = type_id(t, semi + 1, e);
    if (!inner)
      return 0;
    unsigned num = (unsigned)strtoul(s + 1, NULL, 10);
    w[nw++] = 4u << 16 | (*s == 'P' ? OP_TYPE_POINTER : OP_TYPE_VECTOR);
    w[nw++] = t->next;
    w[nw++] = *s == 'P' ? num : inner;
    w[nw++] = *s == 'P' ? inner : num;
  } else if (*s == 'I' || *s == 'F') {
    w[nw++] = (*s == 'I' ? 4u : 3u) << 16 |
              (*s == 'I' ? OP_TYPE_INT : OP_TYPE_FLOAT);
    w[nw++] = t->next;
    w[nw++] = (uint32_t)strtoul(s + 1, NULL, 10);
    if (*s == 'I')
      w[nw++] = 0; /* kernels' integers carry no signedness */
  } else if (*s == 'V' || *s == 'B') {
    w[nw++] = 2u << 16 | (*s == 'V' ? OP_TYPE_VOID : OP_TYPE_BOOL);
    w[nw++] = t->next;
  } else {
    return 0;
  }
  if (lw_grow(&t->new_ids, t->nnew, &t->capnew, sizeof *t->new_ids, 8) ||
      lw_strvec_pushf(&t->new_sigs, "%.*s", (int)n, s) ||
      emit(&t->types, w, nw)) {
    t->nomem = 1;
    return 0;
  }
  t->new_ids[t->nnew++] = t->next;
  return t->next++;
}

/* What one retyped import becomes. */
struct fix {
  uint32_t fn, new_type, ret_old, ret_new;
  uint32_t params_old[32], params_new[32];
  uint32_t nparams;
};

/* The parts of a function type: return type and parameters. */
/* The parts of function type `type` (return type, then parameters) as
 * declared in words[from, to): how many it has (the first `max` copied to
 * `parts`), or 0 when it is not there. */
static uint32_t fn_parts(const uint32_t *words, size_t from, size_t to,
                         uint32_t type, uint32_t *parts, uint32_t max) {
  for (size_t pos = from; pos < to;) {
    const uint32_t *w = words + pos;
    uint32_t len = w[0] >> 16;
    if (len < 2 || pos + len > to)
      break;
    if ((w[0] & 0xffff) == OP_TYPE_FUNCTION && w[1] == type) {
      memcpy(parts, w + 2, (len - 2 < max ? len - 2 : max) * sizeof *parts);
      return len - 2;
    }
    pos += len;
  }
  return 0;
}

static struct fix *fix_for(struct fix *f, size_t n, uint32_t id) {
  for (size_t i = 0; i < n; i++)
    if (f[i].fn == id)
      return &f[i];
  return NULL;
}

/* The module with each fix applied: types added before the first
 * function, each retyped declaration, and bitcasts at each call. */
static int rewrite(struct retype *t, const struct fix *fx, size_t nfix,
                   size_t nwords, struct lw_buf *out) {
  const uint32_t *w = t->r.words;
  int bad = emit(out, w, 5);
  const struct fix *in_fn = NULL; /* parameters of a retyped declaration */
  uint32_t param = 0;
  for (size_t pos = 5; !bad && pos < nwords;) {
    const uint32_t *in = w + pos;
    uint32_t len = in[0] >> 16, op = in[0] & 0xffff;
    if (len == 0 || pos + len > nwords)
      return LW_EFORMAT;
    if (pos == t->r.first_function)
      bad = lw_buf_append(out, t->types.data, t->types.len);
    uint32_t copy[64];
    if (len > 64 || (op != OP_FUNCTION && op != OP_FUNCTION_PARAMETER &&
                     op != OP_FUNCTION_CALL)) {
      bad = bad || emit(out, in, len);
      pos += len;
      continue;
    }
    memcpy(copy, in, len * 4);
    if (op == OP_FUNCTION) {
      in_fn = fix_for((struct fix *)fx, nfix, in[2]);
      param = 0;
      if (in_fn) {
        copy[1] = in_fn->ret_new;
        copy[4] = in_fn->new_type;
      }
    } else if (op == OP_FUNCTION_PARAMETER && in_fn &&
               param < in_fn->nparams) {
      copy[1] = in_fn->params_new[param++];
    } else if (op != OP_FUNCTION_PARAMETER) {
      in_fn = NULL;
    }
    const struct fix *call =
        op == OP_FUNCTION_CALL && len >= 4
            ? fix_for((struct fix *)fx, nfix, in[3])
            : NULL;
    uint32_t result = in[2];
    if (call) {
      for (uint32_t k = 0; !bad && k < call->nparams && 4 + k < len; k++) {
        if (call->params_old[k] == call->params_new[k])
          continue;
        uint32_t cast[4] = {4u << 16 | OP_BITCAST, call->params_new[k],
                            t->next, in[4 + k]};
        copy[4 + k] = t->next++;
        bad = emit(out, cast, 4);
      }
      if (call->ret_old != call->ret_new) {
        copy[1] = call->ret_new;
        copy[2] = t->next++;
      }
    }
    bad = bad || emit(out, copy, len);
    if (!bad && call && call->ret_old != call->ret_new) {
      uint32_t cast[4] = {4u << 16 | OP_BITCAST, call->ret_old, result,
                          copy[2]};
      bad = emit(out, cast, 4);
    }
    pos += len;
  }
  if (bad)
    return LW_ENOMEM;
  ((uint32_t *)(void *)out->data)[3] = t->next;
  return 0;
}

int dl_spirv_retype_imports(struct lw_buf *spv, const struct lw_strvec *names,
                            const struct lw_strvec *types, size_t *retyped,
                            struct lw_diag *d) {
  *retyped = 0;
  struct retype t = {0};
  struct lw_diag why = {0};
  if (parse(spv->data, spv->len, &t.r, &why))
    return 0; /* left as it is: spirv-link will say what it cannot take */
  t.next = t.r.bound;
  struct fix *fx = calloc(t.r.ndec ? t.r.ndec : 1, sizeof *fx);
  size_t nfix = 0;
  int rc = fx ? 0 : LW_ENOMEM;
  for (size_t i = 0; !rc && i < t.r.ndec; i++) {
    const struct decoration *dc = &t.r.dec[i];
    uint32_t type = t.r.type_of[dc->id];
    const char *have = sig_of(&t.r, type);
    size_t named = lw_strvec_find(names, dc->name);
    const char *want = named < names->n ? types->v[named] : NULL;
    if (!dc->import || !want || have[0] != '(' || strcmp(have, want) == 0 ||
        !compatible(have, want, strlen(have), strlen(want)) ||
        !t.r.first_function)
      continue;
    struct fix *f = &fx[nfix];
    uint32_t old[33], neu[33];
    uint32_t n = fn_parts(t.r.words, 5, t.r.first_function, type, old, 33);
    f->fn = dc->id;
    f->new_type = type_id(&t, want, want + strlen(want));
    /* the new type is the module's, or among those added */
    uint32_t m =
        !f->new_type ? 0
        : f->new_type < t.r.bound
            ? fn_parts(t.r.words, 5, t.r.first_function, f->new_type, neu, 33)
            : fn_parts((const uint32_t *)(const void *)t.types.data, 0,
                       t.types.len / 4, f->new_type, neu, 33);
    if (t.nomem) {
      rc = LW_ENOMEM;
      break;
    }
    if (!f->new_type || n == 0 || n != m || n > 33)
      continue;
    f->ret_old = old[0];
    f->ret_new = neu[0];
    f->nparams = n - 1;
    memcpy(f->params_old, old + 1, (n - 1) * sizeof *old);
    memcpy(f->params_new, neu + 1, (n - 1) * sizeof *neu);
    nfix++;
  }
  struct lw_buf out = {0};
  if (!rc && nfix)
    rc = rewrite(&t, fx, nfix, spv->len / 4, &out);
  if (!rc && nfix) {
    lw_buf_free(spv);
    *spv = out;
    *retyped = nfix;
  } else {
    lw_buf_free(&out);
  }
  free(fx);
  free(t.new_ids);
  lw_strvec_free(&t.new_sigs);
  lw_buf_free(&t.types);
  reader_free(&t.r);
  if (rc == LW_ENOMEM)
    return lw_error(d, rc, "out of memory");
  return rc ? lw_error(d, rc, "SPIR-V module with a broken instruction") : 0;
}
