/* spirv.c - what is done to the SPIR-V LLVM's back end writes, through
 * SPIRV-Tools (its header defines a constant, not static: this file holds
 * it under its own name, linkage.c renames its copy).
 *
 * Canonical ids. LLVM 22's SPIR-V back end numbers ids
 * in an order that depends on where objects happen to live in memory (seen:
 * the same module, emitted twice, with label ids swapped), so its output is
 * not reproducible by itself. Renumbering every id in order of first
 * appearance makes it so: SPIRV-Tools parses the module (spvBinaryParse
 * tells which operands are ids), and the words are rewritten in place, the
 * header's id bound last. Instruction order is the back end's and is
 * reproducible.
 *
 * Integer nulls and function pointer types, below: back-end mistakes
 * undone before the rest.
 *
 * Checks. The back end can write modules that read back but break the
 * rules: a label id taken from another module (llvm-project issue 160613)
 * gives an id defined twice, or one past the bound. Every module is checked
 * for what that breaks - each id below the bound, defined once, and every
 * id used defined - in the parse that renumbers it (the back end's own
 * output), or in one of its own (dl_spirv_check_ids: a module made
 * otherwise); or, when asked, by the validator spirv-val runs, with its
 * defaults (dl_spirv_validate), which costs a sixth of the emission's
 * time. */
#include "internal.h"

#include <spirv-tools/libspirv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is `why` SPIRV-Tools saying it does not know an opcode or an enumerant
 * (a capability, a decoration, ...)? Then the module is newer than Debian
 * 12's SPIRV-Tools (2023.1), e.g. one with SPV_KHR_cooperative_matrix
 * (DPC++'s joint_matrix), not a broken one: it can be neither rewritten
 * nor checked here, and goes as the back end wrote it. */
static int unknown_to_tools(const char *why) {
  return why && strncmp(why, "Invalid ", 8) == 0 &&
         (strncmp(why + 8, "opcode: ", 8) == 0 || strstr(why, " operand: "));
}

struct remap {
  uint32_t *words; /* the module, rewritten in place */
  size_t pos;      /* word index of the current instruction */
  uint32_t *map;   /* old id -> new id, 0 when not seen */
  unsigned char *state; /* new id -> DEFINED | USED */
  uint32_t bound, next;
  int bad;
};
enum { DEFINED = 1, USED = 2 };

static spv_result_t on_header(void *ud, spv_endianness_t e, uint32_t magic,
                              uint32_t version, uint32_t generator,
                              uint32_t bound, uint32_t schema) {
  struct remap *r = ud;
  (void)magic, (void)version, (void)generator, (void)schema;
  if (e != SPV_ENDIANNESS_LITTLE || bound == 0 || bound > (1u << 24))
    return SPV_ERROR_INVALID_BINARY;
  if (!(r->map = calloc(bound, sizeof *r->map)) ||
      !(r->state = calloc(bound, 1)))
    return SPV_ERROR_OUT_OF_MEMORY;
  r->bound = bound;
  r->next = 1;
  r->pos = 5;
  return SPV_SUCCESS;
}

int dl__spirv_is_id(int t) {
  return t == SPV_OPERAND_TYPE_ID || t == SPV_OPERAND_TYPE_TYPE_ID ||
         t == SPV_OPERAND_TYPE_RESULT_ID ||
         t == SPV_OPERAND_TYPE_MEMORY_SEMANTICS_ID ||
         t == SPV_OPERAND_TYPE_SCOPE_ID;
}

/* What an id operand does: defines its id, uses it, or (a debug name)
 * neither - a name may name an id the back end then left out (seen: a
 * block "entry" of a function with virtual calls); the validator lets it. */
static unsigned char id_role(const spv_parsed_instruction_t *in,
                             const spv_parsed_operand_t *op) {
  if (op->type == SPV_OPERAND_TYPE_RESULT_ID)
    return DEFINED;
  return in->opcode == 5 /* OpName */ || in->opcode == 6 /* OpMemberName */
             ? 0
             : USED;
}

static spv_result_t on_instruction(void *ud,
                                   const spv_parsed_instruction_t *in) {
  struct remap *r = ud;
  for (uint16_t k = 0; k < in->num_operands; k++) {
    const spv_parsed_operand_t *op = &in->operands[k];
    if (!dl__spirv_is_id(op->type))
      continue;
    uint32_t *w = &r->words[r->pos + op->offset];
    if (*w >= r->bound) {
      r->bad = 1;
      return SPV_ERROR_INVALID_ID;
    }
    if (!r->map[*w])
      r->map[*w] = r->next++;
    *w = r->map[*w];
    r->state[*w] |= id_role(in, op);
  }
  r->pos += in->num_words;
  return SPV_SUCCESS;
}

int dl__spirv_canonical_ids(struct lw_buf *spv, struct lw_diag *d) {
  if (spv->len % 4 || spv->len < 20)
    return lw_error(d, LW_ELLVM, "SPIR-V back end wrote a malformed module");
  /* Parse a copy (the parser reads it) while rewriting the original. */
  size_t n = spv->len / 4;
  uint32_t *copy = malloc(spv->len);
  struct remap r = {(uint32_t *)spv->data, 0, NULL, NULL, 0, 0, 0};
  if (!copy)
    return lw_error(d, LW_ENOMEM, "out of memory");
  memcpy(copy, spv->data, spv->len);
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  spv_diagnostic diag = NULL;
  spv_result_t res = spvBinaryParse(ctx, &r, copy, n, on_header,
                                    on_instruction, &diag);
  int rc = 0;
  uint32_t undefined = 0;
  for (uint32_t id = 1; res == SPV_SUCCESS && !r.bad && id < r.next; id++)
    if (r.state[id] == USED) {
      undefined = id;
      break;
    }
  if (res != SPV_SUCCESS && !r.bad && diag && unknown_to_tools(diag->error))
    memcpy(spv->data, copy, spv->len); /* as it was: not renumbered */
  else if (res != SPV_SUCCESS || r.bad)
    rc = lw_error(d, LW_EBADOUT, "SPIR-V back end wrote an unreadable module: "
                               "%s",
                  diag && diag->error ? diag->error : "bad id");
  else if (undefined)
    rc = lw_error(d, LW_EBADOUT,
                  "invalid SPIR-V: ID %u is used but not defined", undefined);
  else
    r.words[3] = r.next; /* the new bound */
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  free(r.map);
  free(r.state);
  free(copy);
  return rc;
}

/* ---- rewriting passes -----------------------------------------------------
 * A pass reads the module instruction by instruction (SPIRV-Tools tells
 * which operands are ids) and, when writing, appends each instruction,
 * changed or not, to a new module that replaces the old one. */

struct pass {
  const uint32_t *in; /* the module's words (a copy: the buffer may move) */
  struct lw_buf out;  /* what is written */
  uint32_t bound;
  size_t pos;         /* word index of the current instruction */
  int writing, changed;
};

static spv_result_t pass_header(void *ud, spv_endianness_t e, uint32_t magic,
                                uint32_t version, uint32_t generator,
                                uint32_t bound, uint32_t schema) {
  struct pass *p = ud;
  (void)magic, (void)version, (void)generator, (void)schema;
  if (e != SPV_ENDIANNESS_LITTLE || bound != p->bound)
    return SPV_ERROR_INVALID_BINARY;
  p->pos = 5;
  p->out.len = 0;
  return p->writing && lw_buf_append(&p->out, p->in, 5 * 4)
             ? SPV_ERROR_OUT_OF_MEMORY
             : SPV_SUCCESS;
}

/* Appends the current instruction, `w`, when writing. */
static spv_result_t pass_copy(struct pass *p, const uint32_t *w, size_t n) {
  return p->writing && lw_buf_append(&p->out, w, n * 4)
             ? SPV_ERROR_OUT_OF_MEMORY
             : SPV_SUCCESS;
}

/* The id bound of the module from spv->data + at on, 0 if malformed. */
static uint32_t module_bound(const struct lw_buf *spv, size_t at) {
  size_t len = spv->len - at;
  uint32_t bound = 0;
  if (len % 4 == 0 && len >= 20)
    memcpy(&bound, spv->data + at + 12, 4);
  return bound <= (1u << 24) ? bound : 0;
}

/* Runs pass `p` (p->bound set, its own tables ready) with `fn` over the
 * module from spv->data + at on: first only looking when `look`, then,
 * unless that changed nothing, writing; what is written replaces the
 * module when it changed. */
static int run_pass(struct lw_buf *spv, size_t at, struct pass *p,
                    spv_parsed_instruction_fn_t fn, int look,
                    struct lw_diag *d) {
  size_t len = spv->len - at;
  uint32_t *copy = malloc(len);
  if (!copy)
    return lw_error(d, LW_ENOMEM, "out of memory");
  memcpy(copy, spv->data + at, len);
  p->in = copy;
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  spv_diagnostic diag = NULL;
  spv_result_t res = SPV_SUCCESS;
  for (p->writing = !look; res == SPV_SUCCESS && p->writing <= 1;
       p->writing++) {
    if (p->writing && !p->changed && look)
      break;
    res = spvBinaryParse(ctx, p, copy, len / 4, pass_header, fn, &diag);
  }
  int rc = 0;
  if (res == SPV_ERROR_OUT_OF_MEMORY)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  else if (res != SPV_SUCCESS && diag && unknown_to_tools(diag->error))
    rc = 0; /* left as it is */
  else if (res != SPV_SUCCESS)
    rc = lw_error(d, LW_EBADOUT,
                  "SPIR-V back end wrote an unreadable module: %s",
                  diag && diag->error ? diag->error : "bad instruction");
  else if (p->changed) {
    spv->len = at;
    if (lw_buf_append(spv, p->out.data, p->out.len))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  free(copy);
  lw_buf_free(&p->out);
  return rc;
}

/* ---- block labels ----------------------------------------------------------
 * What issue 160613 does to a module (sycl_emit.c tells how): a block's
 * label gets an id from an earlier module's table, in its OpLabel and in
 * every branch to it. Where that id is taken in the new module, or past
 * its bound, the module is invalid; elsewhere it is only renamed. Labels
 * belong to their function and are named only by branches, merges and phis
 * of it (and by debug names), so every label is given a fresh id, and each
 * of those references the id of its function's label of the old one: the
 * module is then the one the back end would have written with no earlier
 * table, up to the numbering that canonical ids make the same. A module
 * where that cannot be told apart (one function's two blocks of one id, a
 * branch to a block that is not in its function, a debug name that may
 * be a label's or another thing's: outside_names) is left as it was, for
 * the checks. */

struct label {
  uint32_t fn, old, fresh; /* function (1 on), id in the module, new id */
};

static int by_fn_old(const void *a, const void *b) {
  const struct label *x = a, *y = b;
  if (x->fn != y->fn)
    return x->fn < y->fn ? -1 : 1;
  return x->old < y->old ? -1 : x->old > y->old;
}

static int by_old(const void *a, const void *b) {
  const struct label *x = a, *y = b;
  return x->old < y->old ? -1 : x->old > y->old;
}

struct relabel {
  const uint32_t *base;  /* the words parsed */
  uint32_t *out;         /* the words rewritten */
  struct label *by_fn;   /* sorted by function, then id */
  struct label *by_id;   /* sorted by id */
  size_t n;
  uint32_t fn, bound;    /* functions so far, new bound */
  int inside;            /* in a function's body */
  unsigned char *plain;  /* by id: the result of a non-label instruction */
  size_t *named;         /* word positions of OpNames' ids of labels */
  size_t nnamed;
  int bad;
};

/* Is operand `k` of instruction `op` a block? */
static int is_block(uint32_t op, uint16_t k) {
  switch (op) {
  case 245: /* OpPhi: type, result, then (value, parent block) pairs */
    return k >= 3 && k % 2 == 1;
  case 246: /* OpLoopMerge */
    return k <= 1;
  case 247: /* OpSelectionMerge */
  case 249: /* OpBranch */
    return k == 0;
  case 250: /* OpBranchConditional */
    return k == 1 || k == 2;
  case 251: /* OpSwitch: selector, default, then (literal, target) pairs */
    return k >= 1;
  default:
    return 0;
  }
}

static spv_result_t relabel_instruction(void *ud,
                                        const spv_parsed_instruction_t *in) {
  struct relabel *r = ud;
  size_t pos = (size_t)(in->words - r->base);
  if (in->opcode == 54 /* OpFunction */)
    r->fn++, r->inside = 1;
  for (uint16_t k = 0; k < in->num_operands; k++) {
    const spv_parsed_operand_t *op = &in->operands[k];
    if (!dl__spirv_is_id(op->type))
      continue;
    uint32_t id = in->words[op->offset];
    if (op->type == SPV_OPERAND_TYPE_RESULT_ID) {
      if (in->opcode != 248 /* OpLabel */ && id < r->bound)
        r->plain[id] = 1;
      continue;
    }
    if (r->inside && is_block(in->opcode, k)) {
      struct label key = {r->fn, id, 0};
      const struct label *l =
          bsearch(&key, r->by_fn, r->n, sizeof key, by_fn_old);
      if (!l) { /* a branch out of its function */
        r->bad = 1;
        return SPV_ERROR_INVALID_ID;
      }
      r->out[pos + op->offset] = l->fresh;
    } else if (!r->inside && in->opcode == 5 /* OpName */ && k == 0) {
      struct label key = {0, id, 0};
      if (bsearch(&key, r->by_id, r->n, sizeof key, by_old))
        r->named[r->nnamed++] = pos + op->offset; /* decided at the end */
    }
  }
  if (in->opcode == 56 /* OpFunctionEnd */)
    r->inside = 0;
  return SPV_SUCCESS;
}

/* What a debug name of an id that is a label's names: the label, when the
 * id is nothing else's (then it must be the only label of that id); the
 * other thing, when there is one, the module names no label for sure (a
 * block has a name only where the IR gave it one) and the id has no other
 * name. Renames those naming labels; 0 when one cannot be told. */
static int outside_names(struct relabel *r) {
  int labels_named = 0;
  for (int round = 0; round < 2; round++)
    for (size_t i = 0; i < r->nnamed; i++) {
      uint32_t id = r->base[r->named[i]];
      struct label key = {0, id, 0};
      const struct label *l =
          bsearch(&key, r->by_id, r->n, sizeof key, by_old);
      int one = !(l > r->by_id && l[-1].old == id) &&
                !(l + 1 < r->by_id + r->n && l[1].old == id);
      int plain = id < r->bound && r->plain[id];
      if (round == 0 && !plain) {
        if (!one)
          return 0;
        r->out[r->named[i]] = l->fresh;
        labels_named = 1;
      } else if (round == 1 && plain) {
        if (labels_named)
          return 0;
        for (size_t j = 0; j < r->nnamed; j++)
          if (j != i && r->base[r->named[j]] == id)
            return 0; /* two names: one may be the label's */
      }
    }
  return 1;
}

int dl_spirv_labels(struct lw_buf *spv, size_t at, struct lw_diag *d) {
  uint32_t bound = module_bound(spv, at);
  if (!bound)
    return lw_error(d, LW_ELLVM, "SPIR-V back end wrote a malformed module");
  uint32_t *w = (uint32_t *)(void *)(spv->data + at);
  size_t n = (spv->len - at) / 4, nlabels = 0;
  uint32_t top = bound;
  for (size_t i = 5; i < n;) {
    size_t c = w[i] >> 16;
    if (!c || c > n - i)
      return 0; /* the checks say what is wrong */
    nlabels += (w[i] & 0xffff) == 248 && c == 2;
    if ((w[i] & 0xffff) == 248 && c == 2 && w[i + 1] >= top)
      top = w[i + 1] + 1; /* an id past the bound: fresh ones above it */
    i += c;
  }
  if (!nlabels || top > (1u << 24) - nlabels)
    return 0;
  struct relabel r = {0};
  uint32_t *copy = malloc(n * 4), *out = malloc(n * 4);
  r.by_fn = malloc(nlabels * sizeof *r.by_fn);
  r.by_id = malloc(nlabels * sizeof *r.by_id);
  r.bound = top + (uint32_t)nlabels;
  r.plain = calloc(r.bound, 1);
  r.named = malloc(n * sizeof *r.named); /* an OpName a word at most */
  int rc = 0;
  if (!copy || !out || !r.by_fn || !r.by_id || !r.plain || !r.named) {
    rc = lw_error(d, LW_ENOMEM, "out of memory");
    goto done;
  }
  /* Every OpLabel defines a fresh id: the parser then reads the module. */
  memcpy(copy, w, n * 4);
  for (size_t i = 5, fn = 0; i < n; i += copy[i] >> 16) {
    uint32_t op = copy[i] & 0xffff;
    fn += op == 54 /* OpFunction */;
    if (op == 248 && (copy[i] >> 16) == 2) {
      r.by_fn[r.n] =
          (struct label){(uint32_t)fn, copy[i + 1], top + (uint32_t)r.n};
      copy[i + 1] = top + (uint32_t)r.n++;
    }
  }
  copy[3] = r.bound;
  memcpy(out, copy, n * 4);
  memcpy(r.by_id, r.by_fn, r.n * sizeof *r.by_id);
  qsort(r.by_fn, r.n, sizeof *r.by_fn, by_fn_old);
  qsort(r.by_id, r.n, sizeof *r.by_id, by_old);
  for (size_t i = 1; i < r.n; i++)
    if (r.by_fn[i].fn == r.by_fn[i - 1].fn &&
        r.by_fn[i].old == r.by_fn[i - 1].old)
      goto done; /* two blocks of one id in one function */
  r.base = copy;
  r.out = out;
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  spv_diagnostic diag = NULL;
  spv_result_t res = ctx ? spvBinaryParse(ctx, &r, copy, n, NULL,
                                          relabel_instruction, &diag)
                         : SPV_ERROR_OUT_OF_MEMORY;
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  if (res == SPV_ERROR_OUT_OF_MEMORY) {
    rc = lw_error(d, LW_ENOMEM, "out of memory");
    goto done;
  }
  if (res != SPV_SUCCESS || r.bad)
    goto done;
  if (!outside_names(&r))
    goto done;
  memcpy(w, out, n * 4);
done:
  free(copy);
  free(out);
  free(r.by_fn);
  free(r.by_id);
  free(r.plain);
  free(r.named);
  return rc;
}

/* ---- integer nulls --------------------------------------------------------
 * LLVM 22's back end writes an integer zero as OpConstantNull, also where
 * SPIR-V asks for an OpConstant: the index of a structure's member in an
 * access chain (seen in DPC++'s -O0 device code, whose zero-index GEPs no
 * optimisation removed). An integer OpConstantNull becomes OpConstant 0,
 * the same value. Both instructions have their ids at fixed words, so the
 * module is walked word by word, without the parser: looked at, and
 * rewritten only when it has one. */

/* Walks the instructions of w[0..n) after the header, noting the bits of
 * each OpTypeInt in width[]; with `out`, appends them to it, each integer
 * OpConstantNull rewritten. Returns how many of those there are; -1 when
 * the module is malformed, -2 out of memory. */
static long integer_nulls(const uint32_t *w, size_t n, uint32_t bound,
                          uint32_t *width, struct lw_buf *out) {
  long found = 0;
  size_t from = 5;
  for (size_t at = 5; at < n;) {
    size_t c = w[at] >> 16;
    uint32_t op = w[at] & 0xffff;
    if (!c || c > n - at)
      return -1;
    if (op == 21 /* OpTypeInt */ && c >= 3 && w[at + 1] < bound)
      width[w[at + 1]] = w[at + 2];
    if (op == 46 /* OpConstantNull */ && c == 3 && w[at + 1] < bound &&
        width[w[at + 1]]) {
      found++;
      uint32_t words = width[w[at + 1]] > 32 ? 2 : 1;
      uint32_t k[5] = {(3 + words) << 16 | 43 /* OpConstant */, w[at + 1],
                       w[at + 2], 0, 0};
      if (out && (lw_buf_append(out, w + from, (at - from) * 4) ||
                  lw_buf_append(out, k, (3 + words) * 4)))
        return -2;
      from = at + c;
    }
    at += c;
  }
  if (out && lw_buf_append(out, w + from, (n - from) * 4))
    return -2;
  return found;
}

int dl__spirv_int_nulls(struct lw_buf *spv, size_t at, struct lw_diag *d) {
  uint32_t bound = module_bound(spv, at);
  if (!bound)
    return lw_error(d, LW_ELLVM, "SPIR-V back end wrote a malformed module");
  const uint32_t *w = (const uint32_t *)(const void *)(spv->data + at);
  size_t n = (spv->len - at) / 4;
  uint32_t *width = calloc(bound, sizeof *width);
  if (!width)
    return lw_error(d, LW_ENOMEM, "out of memory");
  long found = integer_nulls(w, n, bound, width, NULL);
  int rc = 0;
  if (found < 0) {
    rc = lw_error(d, LW_EBADOUT, "SPIR-V back end wrote an unreadable "
                                 "module: bad instruction");
  } else if (found > 0) {
    struct lw_buf out = {0};
    memset(width, 0, bound * sizeof *width);
    if (lw_buf_append(&out, w, 5 * 4) ||
        integer_nulls(w, n, bound, width, &out) < 0)
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    spv->len = at;
    if (!rc && lw_buf_append(spv, out.data, out.len))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    lw_buf_free(&out);
  }
  free(width);
  return rc;
}

/* ---- function pointer types -----------------------------------------------
 * SPV_INTEL_function_pointers: a pointer to a function is of storage class
 * CodeSectionINTEL. LLVM 22's back end gives that class to its function
 * pointer constants only; a parameter, variable or load of one gets a
 * pointer type of the class its LLVM address space maps to (Function,
 * Generic, ...): a second type for the same pointer, which the extension
 * has not. Every pointer-to-function type becomes the first one declared
 * for its function type, of class CodeSectionINTEL. */

enum { CODE_SECTION_INTEL = 5605, FUNCTION_POINTERS_INTEL = 5603 };

struct fptr {
  struct pass p;
  unsigned char *fn; /* the OpTypeFunction ids */
  uint32_t *canon;   /* function type -> its one pointer type */
  uint32_t *map;     /* pointer type that goes -> the one that stays */
};

static spv_result_t fptr_instruction(void *ud,
                                     const spv_parsed_instruction_t *in) {
  struct fptr *z = ud;
  const uint32_t *w = z->p.in + z->p.pos;
  uint32_t bound = z->p.bound;
  z->p.pos += in->num_words;
  int fnptr = in->opcode == 32 /* OpTypePointer */ && in->num_words == 4 &&
              w[3] < bound && z->fn[w[3]] && in->result_id < bound;
  if (!z->p.writing) {
    if (in->opcode == 33 /* OpTypeFunction */ && in->result_id < bound)
      z->fn[in->result_id] = 1;
    if (fnptr && !z->canon[w[3]]) {
      z->canon[w[3]] = in->result_id;
      z->p.changed |= w[2] != CODE_SECTION_INTEL;
    } else if (fnptr) {
      z->map[in->result_id] = z->canon[w[3]];
      z->p.changed = 1;
    }
    return SPV_SUCCESS;
  }
  if (fnptr && z->map[in->result_id])
    return SPV_SUCCESS; /* its uses name the one that stays */
  size_t at = z->p.out.len / 4;
  if (pass_copy(&z->p, w, in->num_words) != SPV_SUCCESS)
    return SPV_ERROR_OUT_OF_MEMORY;
  uint32_t *o = (uint32_t *)(void *)z->p.out.data + at;
  if (fnptr)
    o[2] = CODE_SECTION_INTEL;
  for (uint16_t k = 0; k < in->num_operands; k++) {
    const spv_parsed_operand_t *op = &in->operands[k];
    uint32_t *id = &o[op->offset];
    if (dl__spirv_is_id(op->type) && *id < bound && z->map[*id])
      *id = z->map[*id];
  }
  return SPV_SUCCESS;
}

/* Is there an instruction `op` of `count` words whose words from `from` on
 * are want[0..nwant)? A malformed stream ends the search. */
static int has_instruction(const uint32_t *w, size_t n, uint32_t op,
                           size_t count, size_t from, const uint32_t *want,
                           size_t nwant) {
  for (size_t at = 5; at < n;) {
    size_t c = w[at] >> 16;
    if (!c || c > n - at)
      return 0;
    if ((w[at] & 0xffff) == op && c == count &&
        memcmp(w + at + from, want, nwant * 4) == 0)
      return 1;
    at += c;
  }
  return 0;
}

int dl__spirv_function_pointers(struct lw_buf *spv, size_t at,
                                struct lw_diag *d) {
  struct fptr z = {{.bound = module_bound(spv, at)}, NULL, NULL, NULL};
  if (!z.p.bound)
    return lw_error(d, LW_ELLVM, "SPIR-V back end wrote a malformed module");
  const uint32_t cap = FUNCTION_POINTERS_INTEL;
  if (!has_instruction((const uint32_t *)(const void *)(spv->data + at),
                       (spv->len - at) / 4, 17 /* OpCapability */, 2, 1, &cap,
                       1))
    return 0;
  z.fn = calloc(z.p.bound, 1);
  z.canon = calloc(z.p.bound, sizeof *z.canon);
  z.map = calloc(z.p.bound, sizeof *z.map);
  int rc = z.fn && z.canon && z.map
               ? run_pass(spv, at, &z.p, fptr_instruction, 1, d)
               : lw_error(d, LW_ENOMEM, "out of memory");
  free(z.fn);
  free(z.canon);
  free(z.map);
  return rc;
}

/* Does the module declare (OpExtension) `ext`? */
static int declares(const uint32_t *w, size_t n, const char *ext) {
  uint32_t name[16] = {0}; /* the literal string, NUL-padded to words */
  size_t len = strlen(ext), words = len / 4 + 1;
  if (words > 16)
    return 0;
  memcpy(name, ext, len);
  return has_instruction(w, n, 10 /* OpExtension */, 1 + words, 1, name,
                         words);
}

/* ---- ids ------------------------------------------------------------------ */

struct ids {
  unsigned char *state; /* by id: DEFINED | USED */
  uint32_t bound, bad;
  const char *why;
};

static spv_result_t ids_header(void *ud, spv_endianness_t e, uint32_t magic,
                               uint32_t version, uint32_t generator,
                               uint32_t bound, uint32_t schema) {
  struct ids *c = ud;
  (void)magic, (void)version, (void)generator, (void)schema;
  if (e != SPV_ENDIANNESS_LITTLE || bound == 0 || bound > (1u << 24)) {
    c->why = "the header's ID bound is %u";
    c->bad = bound;
    return SPV_ERROR_INVALID_BINARY;
  }
  c->bound = bound;
  c->state = calloc(bound, 1);
  return c->state ? SPV_SUCCESS : SPV_ERROR_OUT_OF_MEMORY;
}

static spv_result_t ids_instruction(void *ud,
                                    const spv_parsed_instruction_t *in) {
  struct ids *c = ud;
  for (uint16_t k = 0; k < in->num_operands; k++) {
    const spv_parsed_operand_t *op = &in->operands[k];
    if (!dl__spirv_is_id(op->type))
      continue;
    uint32_t id = in->words[op->offset];
    if (id >= c->bound) /* (the parser refuses an id defined twice) */
      c->why = "ID %u is not below the header's ID bound";
    if (c->why) {
      c->bad = id;
      return SPV_ERROR_INVALID_ID;
    }
    c->state[id] |= id_role(in, op);
  }
  return SPV_SUCCESS;
}

int dl_spirv_check_ids(const unsigned char *spv, size_t n,
                       struct lw_diag *d) {
  if (n % 4 || n < 20)
    return lw_error(d, LW_EBADOUT, "SPIR-V module of %zu bytes", n);
  struct ids c = {NULL, 0, 0, NULL};
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  spv_diagnostic diag = NULL;
  spv_result_t res =
      ctx ? spvBinaryParse(ctx, &c, (const uint32_t *)(const void *)spv,
                           n / 4, ids_header, ids_instruction, &diag)
          : SPV_ERROR_OUT_OF_MEMORY;
  for (uint32_t id = 1; res == SPV_SUCCESS && id < c.bound; id++)
    if (c.state[id] == USED) {
      c.why = "ID %u is used but not defined";
      c.bad = id;
      res = SPV_ERROR_INVALID_ID;
    }
  int rc = 0;
  char why[160];
  if (c.why) {
    snprintf(why, sizeof why, c.why, (unsigned)c.bad);
    rc = lw_error(d, LW_EBADOUT, "invalid SPIR-V: %s", why);
  } else if (res == SPV_ERROR_OUT_OF_MEMORY) {
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  } else if (res != SPV_SUCCESS && !(diag && unknown_to_tools(diag->error))) {
    rc = lw_error(d, LW_EBADOUT, "invalid SPIR-V: %.*s",
                  diag && diag->error ? (int)strcspn(diag->error, "\n") : 20,
                  diag && diag->error ? diag->error : "unreadable module");
  }
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  free(c.state);
  return rc;
}

/* ---- the validator -------------------------------------------------------- */

/* The id a validator message is about ("ID 'N[...]'", "result id 'N'"). */
static uint32_t message_id(const char *why) {
  const char *p = strstr(why, "ID '");
  if (!p)
    p = strstr(why, "id '");
  return p ? (uint32_t)strtoul(p + 4, NULL, 10) : 0;
}

/* Is `why` one of the two complaints of Debian 12's validator that
 * SPV_INTEL_function_pointers answers: a function that
 * OpConstantFunctionPointerINTEL names before its definition ("has not
 * been defined"), or a pointer to a function type of class
 * CodeSectionINTEL ("Invalid use of function type")? */
static int function_pointer_gap(const uint32_t *w, size_t n, const char *why) {
  uint32_t id = message_id(why);
  int fwd = strstr(why, "has not been defined") != NULL;
  int fty = strstr(why, "Invalid use of function type") != NULL;
  if (!id || (!fwd && !fty) || !declares(w, n, "SPV_INTEL_function_pointers"))
    return 0;
  const uint32_t pointer[2] = {CODE_SECTION_INTEL, id};
  return fwd ? has_instruction(w, n, 5600 /* OpConstantFunctionPointerINTEL */,
                               4, 3, &id, 1)
             : has_instruction(w, n, 32 /* OpTypePointer */, 4, 2, pointer, 2);
}

/* Validates; 1 when the module breaks a rule (its first line in `why`). */
static int breaks(spv_context ctx, spv_const_binary_t *bin,
                  int friendly, char *why, size_t cap) {
  spv_validator_options opts = spvValidatorOptionsCreate();
  spv_diagnostic diag = NULL;
  if (!opts)
    return -1;
  spvValidatorOptionsSetFriendlyNames(opts, friendly);
  int bad = spvValidateWithOptions(ctx, opts, bin, &diag) != SPV_SUCCESS;
  if (bad) {
    /* The validator's first line says what; the rest shows where. */
    const char *w = diag && diag->error ? diag->error : "no reason given";
    snprintf(why, cap, "%.*s", (int)strcspn(w, "\n"), w);
  }
  spvDiagnosticDestroy(diag);
  spvValidatorOptionsDestroy(opts);
  return bad;
}

int dl_spirv_validate(const unsigned char *spv, size_t n, struct lw_diag *d) {
  if (n % 4 || n < 20)
    return lw_error(d, LW_EBADOUT, "SPIR-V module of %zu bytes", n);
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  spv_const_binary_t bin = {(const uint32_t *)(const void *)spv, n / 4};
  char why[512];
  int rc = 0;
  /* Without friendly names (the validator would first name every id: 40%
   * of its time on the 4,000-kernel program's modules); they come back
   * for the message. The validator of Debian 12 knows nothing of
   * SPV_INTEL_function_pointers (a function named before its definition
   * is "not defined", a pointer to a function is an invalid use of its
   * type): a module whose first complaint is one of those passes with
   * what the renumbering checked (each id defined once, within the
   * bound), which is what LLVM 22 breaks; the validator stops at its
   * first complaint. Nor does it know that SPV_EXT_relaxed_printf_string_
   * address_space lets printf's format be in any storage class (printf.c
   * moves constant formats; one made at run time stays): with the
   * extension declared, that complaint is no fault. */
  int bad = ctx ? breaks(ctx, &bin, 0, why, sizeof why) : -1;
  if (bad > 0 && unknown_to_tools(why))
    bad = 0; /* not checkable here */
  if (bad > 0 && function_pointer_gap(bin.code, bin.wordCount, why))
    bad = 0;
  if (bad > 0 &&
      strstr(why, "printf: expected Format storage class to be "
                  "UniformConstant") &&
      declares(bin.code, bin.wordCount,
               "SPV_EXT_relaxed_printf_string_address_space"))
    bad = 0;
  if (bad > 0)
    bad = breaks(ctx, &bin, 1, why, sizeof why);
  if (bad < 0)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  else if (bad)
    rc = lw_error(d, LW_EBADOUT, "invalid SPIR-V: %s", why);
  spvContextDestroy(ctx);
  return rc;
}
