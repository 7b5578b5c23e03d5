/* spirvmerge.c - one SPIR-V module from the parts of one module that LLVM's
 * back end wrote separately (parts.c makes the parts: each a share of the
 * module's kernels with internal copies of what they call, the module's
 * variables with external linkage defined in the first part and imported
 * by the others).
 *
 * SPIRV-Tools' linker (spirv-link) does this too, but Debian 12's takes
 * 1.9 s to join the two halves of a 4 MB module that took 2.8 s to emit:
 * more than emitting them on two cores saves. The merge here is one pass
 * over each part, in order:
 *   - capabilities, extensions and imported instruction sets: each once;
 *     the memory model: the parts' (they must agree);
 *   - types, constants and variables: each part's in its order, an
 *     instruction equal to one already kept (same opcode, same operands
 *     once renamed, same decorations) becomes that one, as a module made
 *     whole would have it once - a variable only when it is an input (a
 *     built-in) or constant; an id with a linkage name is never merged so:
 *     an import becomes the export of its name (or the first import of
 *     it), its declaration dropped;
 *   - functions: every part's, declarations first; entry points and
 *     execution modes in part order (the parts' kernels are consecutive in
 *     the module, so the entry points keep its order);
 *   - debug names, strings and decorations of what was kept.
 * Ids are numbered anew in that order, so the merged module depends on the
 * parts alone (the caller checks it). The parts are read on up to
 * `threads` threads. What this does not know how to merge (decoration
 * groups) is refused: LW_ENOTSUP. */
#include "internal.h"

/* libspirv.h defines this constant (not static): spirv.c holds the one
 * definition under its own name. */
#define kDefaultMaxIdBound dl__merge_max_id_bound
#include <pthread.h>
#include <spirv-tools/libspirv.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

enum {
  OP_SOURCE_CONTINUED = 2,
  OP_SOURCE = 3,
  OP_SOURCE_EXTENSION = 4,
  OP_NAME = 5,
  OP_MEMBER_NAME = 6,
  OP_STRING = 7,
  OP_LINE = 8,
  OP_EXTENSION = 10,
  OP_EXT_INST_IMPORT = 11,
  OP_MEMORY_MODEL = 14,
  OP_ENTRY_POINT = 15,
  OP_EXECUTION_MODE = 16,
  OP_CAPABILITY = 17,
  OP_FUNCTION = 54,
  OP_FUNCTION_END = 56,
  OP_VARIABLE = 59,
  OP_DECORATE = 71,
  OP_MEMBER_DECORATE = 72,
  OP_DECORATION_GROUP = 73,
  OP_GROUP_DECORATE = 74,
  OP_GROUP_MEMBER_DECORATE = 75,
  OP_LABEL = 248,
  OP_MODULE_PROCESSED = 330,
  OP_EXECUTION_MODE_ID = 331,
  OP_DECORATE_ID = 332,
  OP_DECORATE_STRING = 5632,
  OP_MEMBER_DECORATE_STRING = 5633,
  DEC_CONSTANT = 22,
  DEC_LINKAGE = 41,
  STORAGE_INPUT = 1,
  LINK_IMPORT = 1,
  KEPT = 1,    /* defined by what the part keeps */
  DROPPED = 2, /* an import of a name defined or imported before */
};

/* One instruction of a part: where its words are, and which are ids. */
struct inst {
  uint32_t at;     /* word offset in the part */
  uint32_t ids;    /* first of its id positions in part.idpos */
  uint16_t nwords, nids;
  uint16_t op;
  uint16_t result; /* position of its result id, or 0 */
};

struct part {
  const uint32_t *w;
  uint32_t bound;
  struct inst *in;
  size_t n, cap;
  uint16_t *idpos;
  size_t nidpos, capidpos;
  uint32_t *map;          /* by old id: the new id, 0 when not given yet */
  unsigned char *fresh;   /* by old id: KEPT, DROPPED or 0 (not yet) */
  uint32_t *dec_first;    /* by old id: 1 + index of its first decoration
                             in `decs`, or 0 */
  uint32_t *dec_next;     /* by decoration index: 1 + the next one, or 0 */
  uint32_t *decs;         /* instruction index of each decoration */
  size_t ndecs;
  size_t pos;             /* parse: word offset of the next instruction */
  int nomem;
  int rc;                 /* its parse: 0, -1 (memory) or -2 (refused) */
  const char *why;        /* refused: what */
};

/* Instructions kept once: a key (words) and the new id it was given. */
struct entry {
  uint64_t hash;
  size_t key, len; /* in `keys` */
  uint32_t id;
};
struct table {
  struct entry *e;
  size_t cap, n;
  struct lw_buf keys;
};

/* The output, by section. */
enum {
  S_CAPABILITY,
  S_EXTENSION,
  S_IMPORT,
  S_MEMORY_MODEL,
  S_ENTRY,
  S_MODE,
  S_STRING,
  S_SOURCE,
  S_NAME,
  S_PROCESSED,
  S_DECORATION,
  S_GLOBAL,
  S_DECLARATION,
  S_DEFINITION,
  S_COUNT
};

struct merge {
  struct part *p; /* the parts */
  uint32_t next; /* the next new id */
  struct table kept;   /* types, constants, variables, strings, imports */
  struct table once;   /* capabilities, extensions, sources: no result */
  struct table linked; /* exported and imported names -> new id */
  struct lw_buf out[S_COUNT];
  uint32_t version, generator;
  struct lw_buf scratch;
  const char *why; /* refused: what */
};

static spv_result_t on_header(void *ud, spv_endianness_t e, uint32_t magic,
                              uint32_t version, uint32_t generator,
                              uint32_t bound, uint32_t schema) {
  struct part *p = ud;
  (void)magic, (void)version, (void)generator, (void)schema;
  if (e != SPV_ENDIANNESS_LITTLE || bound == 0 || bound > (1u << 24))
    return SPV_ERROR_INVALID_BINARY;
  p->bound = bound;
  p->pos = 5;
  return SPV_SUCCESS;
}

static spv_result_t on_instruction(void *ud,
                                   const spv_parsed_instruction_t *in) {
  struct part *p = ud;
  if (lw_grow(&p->in, p->n, &p->cap, sizeof *p->in, 1024) ||
      (in->num_operands &&
       lw_grow(&p->idpos, p->nidpos + in->num_operands, &p->capidpos,
               sizeof *p->idpos, 4096))) {
    p->nomem = 1;
    return SPV_ERROR_OUT_OF_MEMORY;
  }
  struct inst *i = &p->in[p->n++];
  *i = (struct inst){(uint32_t)p->pos, (uint32_t)p->nidpos, in->num_words, 0,
                     in->opcode, 0};
  for (uint16_t k = 0; k < in->num_operands; k++) {
    const spv_parsed_operand_t *op = &in->operands[k];
    if (!dl__spirv_is_id(op->type))
      continue;
    if (op->type == SPV_OPERAND_TYPE_RESULT_ID)
      i->result = op->offset;
    p->idpos[p->nidpos++] = op->offset;
    i->nids++;
  }
  p->pos += in->num_words;
  return SPV_SUCCESS;
}

static const uint32_t *words(const struct part *p, const struct inst *i) {
  return p->w + i->at;
}

static uint32_t result_of(const struct part *p, const struct inst *i) {
  return i->result ? words(p, i)[i->result] : 0;
}

/* ---- the table of kept instructions -------------------------------------- */

static struct entry *find(struct table *t, const void *key, size_t len,
                          uint64_t h) {
  if (!t->cap)
    return NULL;
  for (size_t k = h & (t->cap - 1);; k = (k + 1) & (t->cap - 1)) {
    struct entry *e = &t->e[k];
    if (!e->len)
      return e;
    if (e->hash == h && e->len == len &&
        memcmp(t->keys.data + e->key, key, len) == 0)
      return e;
  }
}

/* The id kept under `key`, or 0 after keeping `id` under it; -1: memory. */
static long long keep_once(struct table *t, const void *key, size_t len,
                           uint32_t id) {
  if (2 * (t->n + 1) > t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 1024;
    struct entry *e = calloc(cap, sizeof *e), *old = t->e;
    if (!e)
      return -1;
    size_t oldcap = t->cap;
    t->e = e;
    t->cap = cap;
    for (size_t k = 0; k < oldcap; k++)
      if (old[k].len)
        *find(t, t->keys.data + old[k].key, old[k].len, old[k].hash) = old[k];
    free(old);
  }
  uint64_t h = XXH3_64bits(key, len);
  struct entry *e = find(t, key, len, h);
  if (e->len)
    return e->id;
  *e = (struct entry){h, t->keys.len, len, id};
  if (lw_buf_append(&t->keys, key, len))
    return -1;
  t->n++;
  return 0;
}

static void table_free(struct table *t) {
  free(t->e);
  lw_buf_free(&t->keys);
}

/* ---- ids ----------------------------------------------------------------- */

/* The new id of part p's `old`, given now if it has none yet. */
static uint32_t rename_id(struct merge *m, struct part *p, uint32_t old) {
  if (!p->map[old])
    p->map[old] = m->next++;
  return p->map[old];
}

/* The instruction's words with every id renamed, appended to `to`; its
 * result (when `result_zero`) as 0, for a key. */
static int renamed(struct merge *m, struct part *p, const struct inst *i,
                   int result_zero, struct lw_buf *to) {
  size_t at = to->len;
  if (lw_buf_append(to, words(p, i), 4u * i->nwords))
    return -1;
  uint32_t *w = (uint32_t *)(void *)(to->data + at);
  for (uint16_t k = 0; k < i->nids; k++) {
    uint16_t pos = p->idpos[i->ids + k];
    if (w[pos] >= p->bound)
      return m->why = "an id past the bound", -2;
    w[pos] = result_zero && pos == i->result ? 0 : rename_id(m, p, w[pos]);
  }
  return 0;
}

static int emit(struct merge *m, struct part *p, const struct inst *i,
                int section) {
  return renamed(m, p, i, 0, &m->out[section]);
}

/* ---- decorations --------------------------------------------------------- */

static int is_decoration(uint16_t op) {
  return op == OP_DECORATE || op == OP_MEMBER_DECORATE ||
         op == OP_DECORATE_ID || op == OP_DECORATE_STRING ||
         op == OP_MEMBER_DECORATE_STRING;
}

/* Links each decoration to its target (a part's, on its reading thread). */
static int index_decorations(struct part *p) {
  if (!(p->dec_first = calloc(p->bound, sizeof *p->dec_first)) ||
      !(p->dec_next = calloc(p->n ? p->n : 1, sizeof *p->dec_next)) ||
      !(p->decs = calloc(p->n ? p->n : 1, sizeof *p->decs)))
    return -1;
  uint32_t *last = calloc(p->bound, sizeof *last);
  if (!last)
    return -1;
  for (size_t k = 0; k < p->n; k++) {
    const struct inst *i = &p->in[k];
    if (i->op == OP_DECORATION_GROUP || i->op == OP_GROUP_DECORATE ||
        i->op == OP_GROUP_MEMBER_DECORATE) {
      free(last);
      return p->why = "a decoration group", -2;
    }
    if (!is_decoration(i->op) || i->nwords < 3)
      continue;
    uint32_t target = words(p, i)[1];
    if (target >= p->bound) {
      free(last);
      return p->why = "a decoration of an id past the bound", -2;
    }
    size_t d = p->ndecs++;
    p->decs[d] = (uint32_t)k;
    if (last[target])
      p->dec_next[last[target] - 1] = (uint32_t)d + 1;
    else
      p->dec_first[target] = (uint32_t)d + 1;
    last[target] = (uint32_t)d + 1;
  }
  free(last);
  return 0;
}

/* A linkage decoration: its name (words of the instruction) and type. */
static int linkage(const struct part *p, const struct inst *i,
                   const uint32_t **name, size_t *nname, uint32_t *type) {
  const uint32_t *w = words(p, i);
  if (i->op != OP_DECORATE || i->nwords < 5 || w[2] != DEC_LINKAGE)
    return 0;
  *name = w + 3;
  *nname = i->nwords - 4u;
  *type = w[i->nwords - 1];
  return 1;
}

/* Exports (pass 0) and then imports (pass 1) of part p get their new ids:
 * an import of a name exported, or imported before, is that id. */
static int link_names(struct merge *m, struct part *p, int imports) {
  for (size_t d = 0; d < p->ndecs; d++) {
    const struct inst *i = &p->in[p->decs[d]];
    const uint32_t *name;
    size_t nname;
    uint32_t type, target = words(p, i)[1];
    if (!linkage(p, i, &name, &nname, &type) ||
        (type == LINK_IMPORT) != imports)
      continue;
    if (p->map[target])
      return m->why = "an id with two linkage names", -2;
    uint32_t id = m->next;
    long long had = keep_once(&m->linked, name, 4 * nname, id);
    if (had < 0)
      return -1;
    if (had && !imports)
      return m->why = "a name exported by two parts", -2;
    p->map[target] = had ? (uint32_t)had : m->next++;
    if (had)
      p->fresh[target] = DROPPED;
  }
  return 0;
}

static int by_words(const void *a, const void *b) {
  const struct lw_buf *x = a, *y = b;
  if (x->len != y->len)
    return x->len < y->len ? -1 : 1;
  return memcmp(x->data, y->data, x->len);
}

/* The decorations of part p's `id` for a key: each one's words after its
 * target, sorted; `*may` cleared when one names another id or makes a
 * variable constant (*constant). */
static int decorations_key(struct merge *m, struct part *p, uint32_t id,
                           struct lw_buf *to, int *may, int *constant) {
  struct lw_buf list[16];
  size_t n = 0;
  for (uint32_t d = p->dec_first[id]; d; d = p->dec_next[d - 1]) {
    const struct inst *i = &p->in[p->decs[d - 1]];
    const uint32_t *w = words(p, i);
    if (i->op == OP_DECORATE_ID || n == LW_ARRAY_SIZE(list)) {
      *may = 0;
      return 0;
    }
    *constant |= i->op == OP_DECORATE && w[2] == DEC_CONSTANT;
    list[n++] = (struct lw_buf){(unsigned char *)(uintptr_t)(w + 2),
                                4u * (i->nwords - 2u), 0};
  }
  qsort(list, n, sizeof *list, by_words);
  for (size_t k = 0; k < n; k++) {
    uint32_t head = (uint32_t)list[k].len;
    if (lw_buf_append(to, &head, 4) ||
        lw_buf_append(to, list[k].data, list[k].len))
      return -1;
  }
  return 0;
}

/* ---- sections ----------------------------------------------------------- */

/* An instruction without a result, kept once in its section. */
static int emit_once(struct merge *m, struct part *p, const struct inst *i,
                     int section) {
  m->scratch.len = 0;
  uint32_t tag = (uint32_t)section;
  if (lw_buf_append(&m->scratch, &tag, 4) ||
      renamed(m, p, i, 0, &m->scratch) < 0)
    return m->why ? -2 : -1;
  long long had = keep_once(&m->once, m->scratch.data, m->scratch.len, 1);
  if (had < 0)
    return -1;
  return had ? 0
             : lw_buf_append(&m->out[section], m->scratch.data + 4,
                             m->scratch.len - 4);
}

/* A type, constant, variable, string or imported set: kept once if it may
 * be; its id the kept one's otherwise. */
static int global(struct merge *m, struct part *p, const struct inst *i,
                  int section) {
  uint32_t r = result_of(p, i);
  if (!r)
    return emit(m, p, i, section);
  if (r >= p->bound)
    return m->why = "an id past the bound", -2;
  if (p->fresh[r] == DROPPED)
    return 0; /* an import of what another part defines */
  if (p->map[r]) { /* an export, or named before it was defined here */
    p->fresh[r] = KEPT;
    return emit(m, p, i, section);
  }
  int may = 1, constant = 0;
  m->scratch.len = 0;
  uint32_t tag = (uint32_t)section;
  if (lw_buf_append(&m->scratch, &tag, 4) ||
      renamed(m, p, i, 1, &m->scratch) < 0 ||
      decorations_key(m, p, r, &m->scratch, &may, &constant) < 0)
    return m->why ? -2 : -1;
  const uint32_t *w = words(p, i);
  if (i->op == OP_VARIABLE && !constant && w[3] != STORAGE_INPUT)
    may = 0;
  if (may) {
    long long had = keep_once(&m->kept, m->scratch.data, m->scratch.len,
                              m->next);
    if (had < 0)
      return -1;
    if (had) {
      p->map[r] = (uint32_t)had;
      return 0;
    }
  }
  p->map[r] = m->next++;
  p->fresh[r] = KEPT;
  return emit(m, p, i, section);
}

/* The function at p->in[*k], to the declarations or the definitions (or
 * dropped: an import of another part's); *k moves to its end. */
static int function(struct merge *m, struct part *p, size_t *k) {
  size_t first = *k, end = first;
  int body = 0;
  while (end < p->n && p->in[end].op != OP_FUNCTION_END)
    body |= p->in[end++].op == OP_LABEL;
  if (end == p->n)
    return m->why = "a function without its end", -2;
  *k = end;
  uint32_t r = result_of(p, &p->in[first]);
  if (r >= p->bound)
    return m->why = "an id past the bound", -2;
  if (p->fresh[r] == DROPPED)
    return 0;
  for (size_t j = first; j <= end; j++) {
    uint32_t ri = result_of(p, &p->in[j]);
    if (ri >= p->bound)
      return m->why = "an id past the bound", -2;
    if (ri)
      p->fresh[ri] = KEPT;
    int rc = emit(m, p, &p->in[j], body ? S_DEFINITION : S_DECLARATION);
    if (rc)
      return rc;
  }
  return 0;
}

static int is_debug_source(uint16_t op) {
  return op == OP_SOURCE || op == OP_SOURCE_CONTINUED ||
         op == OP_SOURCE_EXTENSION;
}

/* Is `op` of what comes before the types (capabilities to decorations)? */
static int preamble(uint16_t op) {
  return op == OP_CAPABILITY || op == OP_EXTENSION ||
         op == OP_EXT_INST_IMPORT || op == OP_MEMORY_MODEL ||
         op == OP_ENTRY_POINT || op == OP_EXECUTION_MODE ||
         op == OP_EXECUTION_MODE_ID || op == OP_STRING ||
         is_debug_source(op) || op == OP_NAME || op == OP_MEMBER_NAME ||
         op == OP_MODULE_PROCESSED || is_decoration(op);
}

/* Part p into the merge: its module-wide declarations, then its types,
 * constants, variables and functions, then what names or decorates them. */
static int take(struct merge *m, struct part *p) {
  int rc = 0;
  for (size_t k = 0; !rc && k < p->n; k++) {
    const struct inst *i = &p->in[k];
    switch (i->op) {
    case OP_CAPABILITY:
      rc = emit_once(m, p, i, S_CAPABILITY);
      break;
    case OP_EXTENSION:
      rc = emit_once(m, p, i, S_EXTENSION);
      break;
    case OP_MEMORY_MODEL:
      rc = emit_once(m, p, i, S_MEMORY_MODEL);
      break;
    case OP_EXT_INST_IMPORT:
      rc = global(m, p, i, S_IMPORT);
      break;
    case OP_STRING:
      rc = global(m, p, i, S_STRING);
      break;
    }
  }
  size_t k = 0;
  while (k < p->n && preamble(p->in[k].op))
    k++;
  for (; !rc && k < p->n; k++)
    rc = p->in[k].op == OP_FUNCTION ? function(m, p, &k)
                                    : global(m, p, &p->in[k], S_GLOBAL);
  for (k = 0; !rc && k < p->n; k++) {
    const struct inst *i = &p->in[k];
    uint32_t target = i->nwords > 1 ? words(p, i)[1] : 0;
    if (i->op == OP_ENTRY_POINT)
      rc = emit(m, p, i, S_ENTRY);
    else if (i->op == OP_EXECUTION_MODE || i->op == OP_EXECUTION_MODE_ID)
      rc = emit(m, p, i, S_MODE);
    else if (is_debug_source(i->op))
      rc = emit_once(m, p, i, S_SOURCE);
    else if (i->op == OP_MODULE_PROCESSED)
      rc = emit_once(m, p, i, S_PROCESSED);
    else if ((i->op == OP_NAME || i->op == OP_MEMBER_NAME) &&
             target < p->bound && p->fresh[target] == KEPT)
      rc = emit(m, p, i, S_NAME);
    else if (is_decoration(i->op) && p->fresh[target] == KEPT)
      rc = emit(m, p, i, S_DECORATION);
  }
  return rc;
}

static int parse(struct part *p, const struct lw_buf *spv, spv_context ctx) {
  if (spv->len % 4 || spv->len < 20)
    return -2;
  p->w = (const uint32_t *)(const void *)spv->data;
  spv_diagnostic diag = NULL;
  spv_result_t res = spvBinaryParse(ctx, p, p->w, spv->len / 4, on_header,
                                    on_instruction, &diag);
  spvDiagnosticDestroy(diag);
  if (p->nomem)
    return -1;
  if (res != SPV_SUCCESS)
    return -2;
  return !(p->map = calloc(p->bound, sizeof *p->map)) ||
                 !(p->fresh = calloc(p->bound, 1))
             ? -1
             : 0;
}

static void part_free(struct part *p) {
  free(p->in);
  free(p->idpos);
  free(p->map);
  free(p->fresh);
  free(p->dec_first);
  free(p->dec_next);
  free(p->decs);
}

/* Parts for the threads to read, each with a parser of its own. */
struct reading {
  struct part *p;
  const struct lw_buf *parts;
  size_t n;
  _Atomic size_t next;
};

static void *read_parts(void *arg) {
  struct reading *r = arg;
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  for (size_t k; (k = atomic_fetch_add(&r->next, 1)) < r->n;) {
    struct part *p = &r->p[k];
    p->rc = !ctx ? -1 : parse(p, &r->parts[k], ctx);
    if (!p->rc)
      p->rc = index_decorations(p);
  }
  spvContextDestroy(ctx);
  return NULL;
}

enum { MAX_THREADS = 16 };

int dl_spirv_merge(const struct lw_buf *parts, size_t n, int threads,
                   struct lw_buf *out, struct lw_diag *d) {
  struct merge m = {.next = 1};
  int rc = (m.p = calloc(n ? n : 1, sizeof *m.p)) ? 0 : -1;
  struct reading r = {m.p, parts, rc ? 0 : n, 0};
  pthread_t t[MAX_THREADS];
  int started = 0;
  for (int k = 1; k < threads && (size_t)k < r.n && k < MAX_THREADS; k++)
    if (pthread_create(&t[started], NULL, read_parts, &r) == 0)
      started++;
  read_parts(&r);
  for (int k = 0; k < started; k++)
    pthread_join(t[k], NULL);
  for (size_t k = 0; !rc && k < n; k++) {
    const uint32_t *w = (const uint32_t *)(const void *)parts[k].data;
    rc = m.p[k].rc;
    m.why = m.p[k].why;
    if (!rc && w[1] > m.version)
      m.version = w[1];
    if (!rc && !k)
      m.generator = w[2];
  }
  for (int imports = 0; imports < 2; imports++)
    for (size_t k = 0; !rc && k < n; k++)
      rc = link_names(&m, &m.p[k], imports);
  for (size_t k = 0; !rc && k < n; k++)
    rc = take(&m, &m.p[k]);
  if (!rc && m.out[S_MEMORY_MODEL].len != 12)
    m.why = "memory models that differ", rc = -2;
  uint32_t head[5] = {0x07230203u, m.version, m.generator, m.next, 0};
  size_t before = out->len;
  if (!rc && lw_buf_append(out, head, sizeof head))
    rc = -1;
  for (int s = 0; !rc && s < S_COUNT; s++)
    if (lw_buf_append(out, m.out[s].data, m.out[s].len))
      rc = -1;
  if (rc == -1)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  else if (rc)
    rc = lw_error(d, m.why ? LW_ENOTSUP : LW_EBADOUT,
                  "cannot merge the SPIR-V of %zu parts of a module: %s", n,
                  m.why ? m.why : "a part is not SPIR-V");
  if (rc)
    out->len = before;
  for (size_t k = 0; m.p && k < n; k++)
    part_free(&m.p[k]);
  free(m.p);
  for (int s = 0; s < S_COUNT; s++)
    lw_buf_free(&m.out[s]);
  table_free(&m.kept);
  table_free(&m.once);
  table_free(&m.linked);
  lw_buf_free(&m.scratch);
  return rc;
}
