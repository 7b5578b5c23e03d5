/* units.c - a device link in units: each unit of user code (an input's
 * bitcode) linked and split on its own, with what it needs of the other
 * units, on several threads, with no one module of the whole program.
 *
 * The linked module of dl_link is serial work: one context parses every
 * input and links them, and every group's module is then made from it
 * (on 2 cores, 400 units of 10 kernels: 0.9 s of link and 0.5 s of
 * super-batches before any SPIR-V). Here an index of what each unit
 * defines (its bitcode loaded lazily: no function bodies read) tells each
 * unit which others define what it calls; unit k is parsed, takes what it
 * needs of those as of libraries (dl__link_needed, until nothing it
 * declares is defined elsewhere), and is split (dl_split) - a unit's
 * kernels form its own groups, in the order the whole program's split
 * gives them; the groups of all units follow each other in unit order.
 * Each group's module is then made from its unit's bitcode
 * (dl_split_module).
 *
 * The modules differ from the whole program's in what the one-definition
 * rule leaves open: a link-once function each unit defines is the unit's
 * own copy, not the first unit's; and names the IR linker would have
 * renamed on clashes (internal functions, struct types) keep the unit's.
 * They are the same for every number of threads. Wherever a unit's result
 * could differ in meaning - a symbol defined strongly twice, a kernel or a
 * weak (not ODR) definition in two units, a variable one unit defines and
 * another uses, virtual functions, aliases, textual IR, libraries - and on
 * any error, the caller links the whole program instead (which also words
 * the error as always). */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Each group's module is made from its unit's bitcode, which is loaded
 * for it: a unit with this many groups or more is better made in batches
 * (devlink/split.c), and the whole program is linked instead. */
enum { UNIT_GROUPS_MAX = 30 };

/* ---- the index -------------------------------------------------------- */

enum sym_kind { S_FUNCTION, S_KERNEL, S_VARIABLE, S_USES_FUNCTION,
                S_USES_VARIABLE };

struct sym {
  char *name;
  size_t unit;
  unsigned char kind;
  unsigned char strength; /* 2 strong, 1 ODR (link-once or weak), 0 weak */
};

struct index {
  struct sym *v;
  size_t n, cap;
  size_t kernels; /* the unit's */
};

static int push(struct index *x, const char *name, size_t unit,
                enum sym_kind kind, int strength) {
  if (lw_grow(&x->v, x->n, &x->cap, sizeof *x->v, 256))
    return LW_ENOMEM;
  struct sym *s = &x->v[x->n];
  if (!(s->name = strdup(name)))
    return LW_ENOMEM;
  s->unit = unit;
  s->kind = (unsigned char)kind;
  s->strength = (unsigned char)strength;
  x->n++;
  return 0;
}

static int strength_of(LLVMLinkage l) {
  switch (l) {
  case LLVMExternalLinkage:
    return 2;
  case LLVMLinkOnceODRLinkage:
  case LLVMWeakODRLinkage:
    return 1;
  default:
    return 0;
  }
}

/* What unit `k`'s module defines and uses. 1 when it has something the
 * units cannot take. */
static int index_unit(LLVMModuleRef m, size_t k, struct index *x) {
  if (LLVMGetFirstGlobalAlias(m))
    return 1;
  static const char vcall[] = "indirectly-callable";
  int rc = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); !rc && f;
       f = LLVMGetNextFunction(f)) {
    const char *name = LLVMGetValueName(f);
    if (LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, vcall,
                                      sizeof vcall - 1))
      rc = 1;
    else if (LLVMIsDeclaration(f)) {
      if (!LLVMGetIntrinsicID(f) && !dl__is_local(f))
        rc = push(x, name, k, S_USES_FUNCTION, 0);
    } else if (!dl__is_local(f)) {
      int kernel = dl__is_kernel(f);
      x->kernels += kernel;
      rc = push(x, name, k, kernel ? S_KERNEL : S_FUNCTION,
                strength_of(LLVMGetLinkage(f)));
    }
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); !rc && g;
       g = LLVMGetNextGlobal(g)) {
    if (dl__is_local(g))
      continue;
    const char *name = LLVMGetValueName(g);
    rc = LLVMIsDeclaration(g)
             ? push(x, name, k, S_USES_VARIABLE, 0)
             : push(x, name, k, S_VARIABLE, strength_of(LLVMGetLinkage(g)));
  }
  return rc;
}

static int by_name(const void *a, const void *b) {
  const struct sym *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->unit > y->unit) - (x->unit < y->unit);
}

/* Who defines what, once: `defs` holds one symbol per name defined by
 * some unit (its definer: the strong definition, else the first unit's),
 * sorted by name. 1 when the units cannot be linked apart. */
static int resolve(struct index *x, struct sym **defs, size_t *ndefs) {
  qsort(x->v, x->n, sizeof *x->v, by_name);
  *defs = malloc((x->n ? x->n : 1) * sizeof **defs);
  *ndefs = 0;
  if (!*defs)
    return LW_ENOMEM;
  for (size_t i = 0, e; i < x->n; i = e) {
    size_t strong = 0, weak = 0, defs_n = 0, kernels = 0, uses_var = 0,
           uses_fn = 0, vars = 0;
    const struct sym *definer = NULL;
    for (e = i; e < x->n && strcmp(x->v[e].name, x->v[i].name) == 0; e++) {
      const struct sym *s = &x->v[e];
      if (s->kind == S_USES_FUNCTION) {
        uses_fn++;
        continue;
      }
      if (s->kind == S_USES_VARIABLE) {
        uses_var++;
        continue;
      }
      defs_n++;
      kernels += s->kind == S_KERNEL;
      vars += s->kind == S_VARIABLE;
      strong += s->strength == 2;
      weak += s->strength == 0;
      if (!definer || (s->strength == 2 && definer->strength != 2))
        definer = s;
    }
    if (!defs_n)
      continue; /* defined by no unit: the split decides */
    /* The whole program's link words these (or takes them its way) */
    if (strong > 1 || kernels > 1 || (weak && defs_n > 1) ||
        (kernels && (uses_fn || uses_var)) || (vars && uses_var) ||
        (vars && vars != defs_n))
      return 1;
    (*defs)[(*ndefs)++] = *definer;
  }
  return 0;
}

static const struct sym *definer_of(const struct sym *defs, size_t n,
                                    const char *name) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(defs[mid].name, name);
    if (!c)
      return &defs[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* ---- each unit -------------------------------------------------------- */

struct unit {
  struct index x;        /* what it defines and uses (first phase) */
  struct dl_split split; /* its split (second phase) */
  struct lw_buf bitcode; /* its linked module: its groups' source */
  int rc;                /* 0, 1 (not apart: link the whole program) or an
                            error */
};

struct units {
  const struct dl_input *in;
  size_t n;
  const char *triple;
  enum dl_split_mode mode;
  int opt_level;
  unsigned flags;
  const struct lw_strvec *elsewhere;
  const struct sym *defs; /* by name, each one's definer */
  size_t ndefs;
  struct unit *u;
  atomic_size_t next;
  atomic_int stop;
  void (*phase)(struct units *, size_t);
};

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* The units that define what module `m` declares, each once, in unit
 * order into `todo` (`seen` marks them); `*pending` the names they
 * define. 1 when it uses a variable or a kernel another unit defines. */
static int wanted(const struct units *us, LLVMModuleRef m,
                  unsigned char *seen, size_t *todo, size_t *ntodo,
                  size_t *pending) {
  *ntodo = *pending = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (!LLVMIsDeclaration(f) || LLVMGetIntrinsicID(f) || dl__is_local(f))
      continue;
    const struct sym *s = definer_of(us->defs, us->ndefs, LLVMGetValueName(f));
    if (s && s->kind != S_FUNCTION)
      return 1;
    *pending += s != NULL;
    if (s && !seen[s->unit]) {
      seen[s->unit] = 1;
      todo[(*ntodo)++] = s->unit;
    }
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
    if (LLVMIsDeclaration(g) && !dl__is_local(g) &&
        definer_of(us->defs, us->ndefs, LLVMGetValueName(g)))
      return 1;
  for (size_t i = 0; i < *ntodo; i++)
    seen[todo[i]] = 0;
  qsort(todo, *ntodo, sizeof *todo, cmp_size);
  return 0;
}

/* The functions module `m` defines (only its kernels: `kernels`). */
static size_t defined_in(LLVMModuleRef m, int kernels) {
  size_t n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    n += !LLVMIsDeclaration(f) && (!kernels || dl__is_kernel(f));
  return n;
}

/* First phase: what unit k defines and uses, from its bitcode loaded
 * lazily (no function's body is read). */
static void index_phase(struct units *us, size_t k) {
  struct unit *u = &us->u[k];
  const struct dl_input *in = &us->in[k];
  LLVMContextRef ctx = LLVMContextCreate();
  struct dl__diag_capture cap = {{0}};
  LLVMContextSetDiagnosticHandler(ctx, dl__capture_diag, &cap);
  LLVMModuleRef m = NULL;
  /* Textual IR, or bitcode that does not read: the whole program's link
   * reads or words it */
  u->rc = dl__lazy_module(ctx, in->data, in->size, in->name, &m);
  if (!u->rc) {
    u->rc = index_unit(m, k, &u->x);
    LLVMDisposeModule(m); /* and its buffer */
  }
  LLVMContextDispose(ctx);
}

/* Second phase: unit k parsed (and verified), given what it needs of the
 * others (loaded lazily: only what it takes is read; each is verified by
 * its own unit's parse, and any unit's failure ends them all), and split.
 * Its groups are made from its bitcode, however many they are. */
static void split_phase(struct units *us, size_t k) {
  struct unit *u = &us->u[k];
  struct lw_diag d = {0};
  struct dl__diag_capture cap = {{0}};
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  unsigned char *seen = calloc(us->n, 1);
  size_t *todo = calloc(us->n, sizeof *todo), ntodo = 0;
  int rc = ctx && seen && todo ? 0 : LW_ENOMEM;
  if (!rc) {
    LLVMContextSetDiagnosticHandler(ctx, dl__capture_diag, &cap);
    rc = dl__parse_unit(ctx, &us->in[k], &mod, &cap, &d);
  }
  /* Rounds, until no name it declares is defined by another unit (a unit
   * taken before gives what later ones need of it too); each round defines
   * more functions, or the whole link takes over */
  for (size_t pending, had = rc ? 0 : defined_in(mod, 0);
       !rc && !(rc = wanted(us, mod, seen, todo, &ntodo, &pending)) &&
       pending;) {
    for (size_t i = 0; !rc && i < ntodo; i++)
      rc = dl__link_needed(ctx, mod, &us->in[todo[i]], 1, &cap, &d);
    size_t now = rc ? had : defined_in(mod, 0);
    if (!rc && now <= had)
      rc = 1;
    had = now;
  }
  free(seen);
  free(todo);
  /* What it took of the others brought no kernel along */
  if (!rc && defined_in(mod, 1) != u->x.kernels)
    rc = 1;
  if (ctx)
    LLVMContextSetDiagnosticHandler(ctx, NULL, NULL);
  struct dl_module *m = NULL;
  if (!rc) {
    rc = dl_module_adopt(ctx, mod, us->triple, &m); /* or both freed */
    ctx = NULL;
    mod = NULL;
  }
  if (mod)
    LLVMDisposeModule(mod);
  if (ctx)
    LLVMContextDispose(ctx);
  if (!rc) {
    m->valid = 1; /* every input was verified */
    dl_itt_stubs(m);
    rc = dl_split(&m, us->mode, us->opt_level,
                  us->flags & ~(unsigned)DL_KEEP_LINKED, us->elsewhere,
                  &u->split, &d);
    dl_module_free(m); /* NULL unless the split failed */
  }
  if (!rc && u->split.whole) { /* its bitcode, unless it has no group */
    if (u->split.n)
      rc = dl_module_bitcode(u->split.whole, &u->bitcode);
    dl_module_free(u->split.whole);
    u->split.whole = NULL;
  } else if (!rc) {
    u->bitcode = u->split.bitcode;
    memset(&u->split.bitcode, 0, sizeof u->split.bitcode);
  }
  u->rc = rc;
}

static void *phase_thread(void *arg) {
  struct units *us = arg;
  for (size_t k; !atomic_load(&us->stop) &&
                 (k = atomic_fetch_add(&us->next, 1)) < us->n;) {
    us->phase(us, k);
    if (us->u[k].rc)
      atomic_store(&us->stop, 1); /* the whole program's link follows */
  }
  return NULL;
}

/* Runs `phase` on every unit, on `threads` threads (this one among
 * them); 0 when it did for each, else the first unit's code. */
static int run_phase(struct units *us, void (*phase)(struct units *, size_t),
                     int threads) {
  pthread_t t[64];
  int started = 0;
  us->phase = phase;
  atomic_store(&us->next, 0);
  for (; started + 1 < threads && started < 64; started++)
    if (pthread_create(&t[started], NULL, phase_thread, us))
      break;
  phase_thread(us);
  for (int i = 0; i < started; i++)
    pthread_join(t[i], NULL);
  int rc = 0; /* (a unit's failure stopped them all) */
  for (size_t k = 0; !rc && k < us->n; k++)
    rc = us->u[k].rc;
  return rc;
}

/* ---- all units ------------------------------------------------------------ */

/* All units' symbols in one index. */
static int gather(struct unit *u, size_t n, struct index *all) {
  size_t total = 0;
  for (size_t k = 0; k < n; k++)
    total += u[k].x.n;
  if (!(all->v = malloc((total ? total : 1) * sizeof *all->v)))
    return LW_ENOMEM;
  for (size_t k = 0; k < n; k++) {
    if (u[k].x.n) /* (a unit with no symbols has no array) */
      memcpy(all->v + all->n, u[k].x.v, u[k].x.n * sizeof *all->v);
    all->n += u[k].x.n;
    free(u[k].x.v); /* the names are all's now */
    u[k].x.v = NULL;
    u[k].x.n = u[k].x.cap = 0;
  }
  all->cap = total;
  return 0;
}

static void index_free(struct index *x) {
  for (size_t i = 0; i < x->n; i++)
    free(x->v[i].name);
  free(x->v);
  memset(x, 0, sizeof *x);
}

/* The split of all units: their groups one after the other. 1 when a
 * unit has too many (above). */
static int merge(struct unit *u, size_t n, const char *triple, unsigned flags,
                 struct dl_split *out) {
  size_t total = 0;
  for (size_t k = 0; k < n; k++) {
    if (u[k].split.n >= UNIT_GROUPS_MAX)
      return 1;
    total += u[k].split.n;
  }
  out->flags = flags;
  if (!(out->g = calloc(total ? total : 1, sizeof *out->g)) ||
      !(out->unit_of = calloc(total ? total : 1, sizeof *out->unit_of)) ||
      !(out->unit_bitcode = calloc(n, sizeof *out->unit_bitcode)) ||
      !(out->triple = strdup(triple)))
    return LW_ENOMEM;
  out->nunits = n;
  for (size_t k = 0; k < n; k++) {
    struct dl_split *s = &u[k].split;
    for (size_t i = 0; i < s->n; i++) {
      out->unit_of[out->n] = k;
      out->g[out->n++] = s->g[i];
    }
    s->n = 0; /* its groups are out's now */
    out->unit_bitcode[k] = u[k].bitcode;
    memset(&u[k].bitcode, 0, sizeof u[k].bitcode);
    for (size_t w = 0; w < s->warnings.n; w++) {
      int seen = 0;
      for (size_t v = 0; v < out->warnings.n && !seen; v++)
        seen = strcmp(out->warnings.v[v], s->warnings.v[w]) == 0;
      if (!seen && lw_strvec_push(&out->warnings, s->warnings.v[w]))
        return LW_ENOMEM;
    }
  }
  /* Batches as the whole program's split has them (a worker keeps the
   * modules of a batch until its end: wrapper/plan/sycl_emit.c says why),
   * but no batch's module: each group's is made from its unit's
   * bitcode. */
  dl__batches(out);
  return 0;
}

int dl_split_units(const struct dl_input *in, size_t n, const char *triple,
                   enum dl_split_mode mode, int opt_level, unsigned flags,
                   const struct lw_strvec *elsewhere, int threads,
                   struct dl_split *out, struct lw_diag *d) {
  memset(out, 0, sizeof *out);
  /* A unit of most of the code links and splits as long alone as with
   * the others: the whole link, without the index, costs no more */
  size_t total = 0, biggest = 0;
  for (size_t k = 0; k < n; k++) {
    if (in[k].only_needed)
      return 1;
    total += in[k].size;
    biggest = in[k].size > biggest ? in[k].size : biggest;
  }
  if (2 * biggest > total || mode == DL_SPLIT_OFF ||
      (flags & (DL_DYNAMIC_LINKING | DL_EMIT_IMPORTED | DL_EMIT_EXPORTED |
                DL_EXTERNAL_ENTRIES | DL_DPCPP_GROUPS)))
    return 1;
  struct units us = {in, n, triple, mode, opt_level, flags, elsewhere,
                     NULL, 0, calloc(n, sizeof *us.u), 0, 0, NULL};
  struct index all = {0};
  struct sym *defs = NULL;
  int rc = us.u ? run_phase(&us, index_phase, threads) : LW_ENOMEM;
  /* Kernels in one unit only: nothing to link apart (the whole program's
   * link is the unit's, and its split its). A unit of many kernels split
   * per kernel wants batches of its groups' modules (dl_split's), which
   * the units do not make. */
  size_t with_kernels = 0;
  for (size_t k = 0; !rc && k < n; k++) {
    with_kernels += us.u[k].x.kernels > 0;
    if (mode == DL_SPLIT_PER_KERNEL && us.u[k].x.kernels >= UNIT_GROUPS_MAX)
      rc = 1;
  }
  if (!rc && with_kernels < 2)
    rc = 1;
  if (!rc)
    rc = gather(us.u, n, &all);
  if (!rc)
    rc = resolve(&all, &defs, &us.ndefs);
  us.defs = defs;
  if (!rc)
    rc = run_phase(&us, split_phase, threads);
  if (!rc)
    rc = merge(us.u, n, triple, flags, out);
  /* One group in all: the whole program's one module serves as well */
  if (!rc && out->n < 2)
    rc = 1;
  for (size_t k = 0; us.u && k < n; k++) {
    struct unit *u = &us.u[k];
    index_free(&u->x);
    dl_split_free(&u->split);
    lw_buf_free(&u->bitcode);
  }
  free(us.u);
  free(defs);
  index_free(&all);
  if (rc) {
    dl_split_free(out);
    return rc == LW_ENOMEM ? lw_error(d, rc, "out of memory") : 1;
  }
  return 0;
}
