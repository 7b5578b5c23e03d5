/* sycl_emit.c - each SYCL module's SPIR-V, for sycl.c's jobs.
 *
 * LLVM 22's SPIR-V back end keeps state from one module to the next
 * (llvm-project issue 160613): SPIRVModuleAnalysis's static MAI clears
 * everything for each module but the source extensions it saw (the same
 * for every module of a link) and its table of block labels, keyed by the
 * address of a MachineFunction and a block number. A module whose
 * MachineFunction lands where one of an earlier module was gets that
 * block's old id for its label, in the label and every branch to it: the
 * module is renamed in that one id. Where the old id is free in the new
 * module, the renumbering into canonical ids (devlink/spirv.c) makes it
 * byte for byte the module a fresh process makes; where it is taken, or
 * past the bound, the module defines an id twice or uses one it may not:
 * invalid (on the 4,000-kernel program, about one module in four after the
 * first of a process). dl_spirv_labels (devlink/spirv.c) gives such labels
 * back before any check, which leaves invalid only the modules where that
 * cannot be told apart (none of the 400 there; 19 with an allocator that
 * reuses addresses at once, mimalloc).
 *
 * So every module is checked where it is made (its ids, or spirv-val's
 * rules with --spirv-check=full), and only a valid one is kept. A forked
 * worker emits its batches itself, one module after another
 * (LW__EMIT_HANDBACK); a module found invalid there goes back to the
 * parent, which has it made by a process of its own, forked from a
 * process whose back end has emitted nothing (1 to 5 of the 4,000-kernel
 * program's 400 modules; with a child per batch, the design before and
 * --sycl-emit-isolation=batch, none, but every link paid its children's
 * forks and copy-on-write faults: 2.4 times the page faults of a 100-unit
 * link). In a child (LW__EMIT_CHILD) the invalid ones go to
 * the next round: a child of their own again, whose first module is
 * emitted by a back end that has emitted nothing - so each round makes one
 * module at least, and the rounds end. A module invalid from such a back
 * end, twice, is a bug of the back end: kept for a report. Every module
 * kept is therefore the one a process of its own makes, byte for byte
 * (sycl-stress.test compares). --sycl-emit-isolation=module gives every
 * module a child of its own from the start. The link's only module is
 * emitted in process (LW__EMIT_ONLY): the process's first and last
 * SPIR-V. */
#include "plan/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct emission {
  struct target *t;
  const struct dl_parts *parts; /* the parts of the target's module, or
                                   NULL: the modules of its split */
  const size_t *idx; /* the modules (or parts), in order */
  size_t n;
  const unsigned char *failed; /* by module: invalid from a fresh back end
                                  before (1), or not (0) */
  int here;                    /* in this process, not a child */
  struct dl_module **kept;     /* a worker's modules, freed at the batch's
                                  end (or NULL: each freed when made) */
};

/* FATLINK_TEST_BAD_SPIRV=<module>[:<times>]: the tests' fault: the back
 * end's output for that module is broken (its id bound zeroed), as LLVM 22
 * breaks some, until it was broken <times> times (1 if not given) as the
 * first module of a process. */
static int test_fault(size_t i, unsigned made_before) {
  const char *f = getenv("FATLINK_TEST_BAD_SPIRV");
  char *end;
  if (!f || !*f)
    return 0;
  unsigned long at = strtoul(f, &end, 10);
  unsigned long times = *end == ':' ? strtoul(end + 1, NULL, 10) : 1;
  return at == i && made_before < times;
}

/* What the emission makes: "part" or "module", for messages and files. */
static const char *unit(const struct emission *e) {
  return e->parts ? "part" : "module";
}

int lw__to_buf(void *buf, size_t i, const unsigned char *spv, size_t n,
               struct lw_diag *d) {
  (void)i;
  return lw_buf_append(buf, spv, n) ? lw_error(d, LW_ENOMEM, "out of memory")
                                    : 0;
}

/* A bound: on the 4,000-kernel program (batches of about 9,000
 * instructions) each worker added 3 MiB to the link's processes at -j16
 * against -j1. */
uint64_t lw__emit_footprint(size_t instructions) {
  return (UINT64_C(16) << 20) + 1024 * (uint64_t)instructions;
}

int lw__put_u64(struct lw_buf *b, uint64_t v) {
  unsigned char x[8];
  for (int k = 0; k < 8; k++)
    x[k] = (unsigned char)(v >> (8 * k));
  return lw_buf_append(b, x, 8);
}

uint64_t lw__get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; k++)
    v |= (uint64_t)p[k] << (8 * k);
  return v;
}

/* What the maker sends for each module: a record of its index, how it
 * went, whether its back end had emitted nothing before, its cache key,
 * then three strings of bytes: the check's line, the module's bitcode
 * (both only when invalid, for the report) and its SPIR-V (the invalid one
 * too). */
enum made { MADE, FROM_CACHE, INVALID };
enum { WHY, BITCODE, SPIRV, PARTS };
struct record {
  size_t index;
  enum made how;
  int fresh;
  const unsigned char *key;
  const unsigned char *part[PARTS];
  size_t size[PARTS];
};
enum { RECORD_HEAD = 8 + 2 + LW_HASH_SIZE };

static int put_record(struct lw_buf *out, const struct record *r) {
  unsigned char h[2] = {(unsigned char)r->how, (unsigned char)r->fresh};
  int rc = lw__put_u64(out, r->index) || lw_buf_append(out, h, 2) ||
           lw_buf_append(out, r->key, LW_HASH_SIZE);
  for (int k = 0; !rc && k < PARTS; k++)
    rc = lw__put_u64(out, r->size[k]) ||
         lw_buf_append(out, r->part[k], r->size[k]);
  return rc;
}

/* The next record of `*at` (`*left` bytes), or 0 at the end; -1 when
 * malformed. */
static int next_record(const unsigned char **at, size_t *left,
                       struct record *r) {
  if (!*left)
    return 0;
  if (*left < RECORD_HEAD)
    return -1;
  const unsigned char *p = *at;
  size_t n = *left - RECORD_HEAD;
  r->index = (size_t)lw__get_u64(p);
  r->how = (enum made)p[8];
  r->fresh = p[9];
  r->key = p + 10;
  p += RECORD_HEAD;
  for (int k = 0; k < PARTS; k++) {
    uint64_t size = n >= 8 ? lw__get_u64(p) : UINT64_MAX;
    if (size > n - 8)
      return -1;
    r->part[k] = p + 8;
    r->size[k] = (size_t)size;
    p += 8 + size;
    n -= 8 + (size_t)size;
  }
  if (r->how > INVALID)
    return -1;
  *at = p;
  *left = n;
  return 1;
}

/* Module k of the emission: built, looked up in the cache, emitted and
 * checked; its record appended to `out`. */
static int make_one(struct emission *e, size_t k, struct lw_buf *out,
                    struct lw_diag *d) {
  const struct lw_plan *p = e->t->plan;
  size_t i = e->idx[k];
  struct dl_module *m = NULL;
  struct lw_buf spv = {0}, bc = {0};
  unsigned char key[LW_HASH_SIZE] = {0};
  struct record r = {i, MADE, dl_spirv_fresh(), key, {0}, {0}};
  struct lw_diag vd = {0};
  int rc = e->parts ? dl_parts_module(e->parts, i, &m, d)
                    : dl_split_module(&e->t->split, i, &m, d);
  if (!rc && p->cache) {
    char what[128];
    snprintf(what, sizeof what, "SPIR-V of %s %zu of %s", unit(e), i,
             e->t->triple);
    if (dl_module_bitcode(m, &bc))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    else if (lw__spirv_key(p->o, bc.data, bc.len, key),
             lw_cache_get(p->cache, key, what, &spv))
      r.how = FROM_CACHE;
    bc.len = 0;
  }
  if (!rc && r.how == MADE) {
    char step[160];
    snprintf(step, sizeof step,
             "SPIR-V code generation for %s %zu of %s: LLVM's SPIR-V "
             "back end",
             unit(e), i, e->t->triple);
    lw_doing_step(step);
    rc = dl_codegen(m, NULL, p->o->opt_level, DL_OBJECT, &spv, &vd);
    lw_done();
    /* Its ids are checked (dl_codegen's); a module the tests break
     * afterwards has them checked here. */
    if (!rc && test_fault(i, e->failed[i])) {
      memset(spv.data + 12, 0, 4);
      rc = dl_spirv_check_ids(spv.data, spv.len, &vd);
    }
    if (!rc && p->o->spirv_validate)
      rc = dl_spirv_validate(spv.data, spv.len, &vd);
    if (rc == LW_EBADOUT) {
      r.how = INVALID;
      rc = dl_module_bitcode(m, &bc) ? lw_error(d, LW_ENOMEM, "out of memory")
                                     : 0;
      r.part[WHY] = (const unsigned char *)vd.msg;
      r.size[WHY] = strlen(vd.msg);
      r.part[BITCODE] = bc.data;
      r.size[BITCODE] = bc.len;
    } else if (rc) {
      lw_error(d, rc, "%s", vd.msg);
    }
  }
  r.part[SPIRV] = spv.data;
  r.size[SPIRV] = spv.len;
  if (!rc && put_record(out, &r))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  lw_buf_free(&bc);
  lw_buf_free(&spv);
  /* A child keeps what it emitted (it exits soon), and a worker what it
   * emitted of a batch: fewer later objects land where this module's were,
   * and fewer modules come out invalid (on the 4,000-kernel program, 1 to
   * 5 of 400 instead of 9 to 13 when each is freed at once). */
  if (e->kept)
    e->kept[k] = m;
  else if (e->here)
    dl_module_free(m);
  return rc;
}

/* Where SPIR-V is made: each module of the emission, a record each. */
static int make_spirv(void *ctx, struct lw_buf *out, struct lw_diag *d) {
  struct emission *e = ctx;
  int rc = 0;
  for (size_t k = 0; !rc && k < e->n; k++)
    rc = make_one(e, k, out, d);
  return rc;
}

/* Invalid from a back end that had emitted nothing before: a bug of the
 * back end. The module's bitcode and the SPIR-V it made go beside the
 * output (or into the dump directory), for a report; the error names them
 * and the module's kernels. */
static int report(const struct emission *e, const struct record *r,
                  int twice, struct lw_diag *d) {
  const struct target *t = e->t;
  const struct lw_options *o = t->plan->o;
  char *base = o->dump_dir ? lw_xasprintf("%s/%s", o->dump_dir,
                                          lw_base_name(o->output))
                           : strdup(o->output);
  char *bc_path = base ? lw_xasprintf("%s.%s%zu.bc", base, unit(e), r->index)
                       : NULL;
  char *spv_path =
      base ? lw_xasprintf("%s.%s%zu.spv", base, unit(e), r->index) : NULL;
  char *kernels = lw__kernel_list(e->parts ? &e->parts->kernels[r->index]
                                           : &t->split.g[r->index].kernels,
                                  8);
  struct lw_diag wd = {0};
  int kept = bc_path && spv_path &&
             !lw_write_file(bc_path, r->part[BITCODE], r->size[BITCODE],
                            &wd) &&
             !lw_write_file(spv_path, r->part[SPIRV], r->size[SPIRV], &wd);
  int rc = lw_error(d, LW_EBADOUT,
                    "LLVM's SPIR-V back end made an invalid module %s (a "
                    "bug of the back end; kernels %s; %s%s%s%s): %.*s",
                    twice ? "twice, each time as the first module of a "
                            "process"
                          : "as the first module of this process",
                    kernels ? kernels : "?",
                    kept ? "kept for a report: " : "not kept: ",
                    kept ? bc_path : wd.msg[0] ? wd.msg : "out of memory",
                    kept ? ", " : "", kept ? spv_path : "",
                    (int)r->size[WHY], (const char *)r->part[WHY]);
  free(kernels);
  free(spv_path);
  free(bc_path);
  free(base);
  return rc;
}

/* One round: the modules of `e` made where `where` says; the ones to make
 * again go to `next` (or, handed back, to `deliver`). */
static int round_of(struct emission *e, enum lw__emit_where where,
                    lw__deliver_fn deliver, void *ctx, size_t *next,
                    size_t *nnext, unsigned char *failed, struct lw_diag *d) {
  struct target *t = e->t;
  struct lw_buf made = {0};
  int here = where != LW__EMIT_CHILD;
  int rc = here ? make_spirv(e, &made, d)
                : lw_fresh_call(make_spirv, e, &made, d);
  if (rc && !here && e->n > 1) {
    /* A child that failed or died: its modules each alone, to find out. */
    if (t->plan->o->verbose)
      fprintf(stderr, "fatlink: %zu module(s) of %s made again, each by a "
                      "process of its own: %s\n", e->n, t->triple, d->msg);
    d->code = 0;
    d->msg[0] = 0;
    for (size_t k = 0; k < e->n; k++) {
      struct emission one = {t, e->parts, e->idx + k, 1, failed, 0, NULL};
      if ((rc = round_of(&one, LW__EMIT_CHILD, deliver, ctx, next, nnext,
                         failed, d)))
        break;
    }
    lw_buf_free(&made);
    return rc;
  }
  const unsigned char *at = made.data;
  size_t left = made.len, k = 0;
  struct record r;
  int got = 0;
  while (!rc && (got = next_record(&at, &left, &r)) > 0) {
    if (k >= e->n || r.index != e->idx[k++]) {
      got = -1;
      break;
    }
    if (r.how == MADE)
      lw_cache_put(t->plan->cache, r.key, r.part[SPIRV], r.size[SPIRV]);
    if (r.how != INVALID) {
      rc = deliver(ctx, r.index, r.part[SPIRV], r.size[SPIRV], d);
    } else if (where == LW__EMIT_HANDBACK) {
      if (t->plan->o->verbose)
        fprintf(stderr, "fatlink: module %zu of %s made again by a process "
                        "of its own: %.*s\n",
                r.index, t->triple, (int)r.size[WHY],
                (const char *)r.part[WHY]);
      rc = deliver(ctx, r.index, NULL, 0, d);
    } else if (r.fresh && (failed[r.index] || here)) {
      rc = report(e, &r, !here, d);
    } else {
      failed[r.index] |= (unsigned char)r.fresh;
      next[(*nnext)++] = r.index;
      if (t->plan->o->verbose)
        fprintf(stderr, "fatlink: module %zu of %s made again: %.*s\n",
                r.index, t->triple, (int)r.size[WHY],
                (const char *)r.part[WHY]);
    }
  }
  if (!rc && (got < 0 || k != e->n))
    rc = lw_error(d, LW_EFORMAT, "malformed output of a child");
  lw_buf_free(&made);
  return rc;
}

int lw__sycl_emit(struct target *t, const struct dl_parts *parts,
                  size_t first, size_t end, enum lw__emit_where where,
                  lw__deliver_fn deliver, void *ctx, struct lw_diag *d) {
  size_t n = end - first, units = parts ? parts->n : t->split.n;
  size_t *todo = calloc(2 * n, sizeof *todo);
  /* failed[] by module index: the one array the children read */
  unsigned char *failed = calloc(units ? units : 1, 1);
  int rc = todo && failed ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t k = 0; k < n; k++)
    todo[k] = first + k;
  size_t *cur = todo, *next = todo + n;
  while (!rc && n) {
    size_t nnext = 0;
    struct emission e = {t,      parts, cur, n, failed, where != LW__EMIT_CHILD,
                         NULL};
    if (where == LW__EMIT_HANDBACK &&
        !(e.kept = calloc(n, sizeof *e.kept)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    if (!rc)
      rc = round_of(&e, where, deliver, ctx, next, &nnext, failed, d);
    for (size_t k = 0; e.kept && k < n; k++)
      dl_module_free(e.kept[k]);
    free(e.kept);
    size_t *swap = cur;
    cur = next;
    next = swap;
    n = nnext;
    where = LW__EMIT_CHILD;
  }
  free(failed);
  free(todo);
  return rc;
}

