/* resolve.c - which inputs a GNU ld link really reads, so that device code is
 * taken from exactly the archive members the host link pulls in.
 *
 * Inputs are visited in command-line order with one table of global symbols
 * (undefined / defined). An object or shared object is always read: its
 * definitions resolve, its strong undefined references wait. An archive
 * contributes a member when the member defines a symbol that is undefined at
 * that point, again and again until no member more is pulled; archives
 * between --start-group and --end-group are searched in turn until a whole
 * round pulls nothing. --whole-archive takes every member. Membership is
 * decided from the archive's symbol index when it has one (libelf reads it;
 * the members themselves are not touched) and else from each member's own
 * symbols. Members are enumerated with libarchive and read in place from the
 * mapped archive; thin archives (thin.c) have their members in files of
 * their own, mapped when first needed.
 *
 * Reading the inputs themselves (mapping, symbols, device images) happens
 * first, on up to `jobs` threads, each input on its own; only the resolution
 * is sequential. When no archive of the link can hold device code (a byte
 * search for the marks every form of it carries) which members are pulled
 * does not matter: no symbol is read, archives are only listed (a broken one
 * is still an error), and the objects' device code is all there is.
 *
 * Last, the device side resolves on its own, as a device linker does with
 * the device code of an archive (nvlink, lld): archive members the host
 * link left out are taken when one of their device images defines a symbol
 * that the device code already included leaves undefined, until nothing
 * changes - device-only libraries, and members whose host part nothing
 * needs (a HIP or CUDA __device__ function next to a __device__ variable,
 * whose host shadow is a host symbol) - and members without host symbols
 * always when they hold an FPGA binary (triple fpga_*): those are DPC++'s
 * wrapped device objects, which no symbol pulls, and DPC++ takes every one
 * of an archive's. Any member with a device image for one of the
 * architectures asked for (--should-extract) is taken too. */
#include "internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { UNDEF = 1, DEF = 2 };

struct member {
  char *name;
  char *path; /* thin archives: the member's own file */
  const unsigned char *data;
  size_t size, header;
  int included, loaded;
  int no_device;         /* read, and it holds no device image */
  struct lw_strvec defs; /* host symbols it defines (loaded lazily) */
};

struct archive_in {
  const char *path;
  struct member *m;
  size_t n;
  /* symbol index: name -> member, when the archive has one; the names
   * belong to `index_elf` */
  const char **sym;
  size_t *sym_member, nsym;
  Elf *index_elf;
  int has_index;
  int thin;
};

struct resolver {
  struct ex_set *set;
  struct ex__symtab host, device;
  struct archive_in *ar;
  size_t nar, capar;
  struct lw_diag *d;
  int pulls; /* archives may add device code: members are pulled as ld does;
                else they are only listed */
  const struct lw_strvec *always; /* architectures always taken */
};

/* ---- symbols ------------------------------------------------------------- */

static int note_symbol(void *ctx, const char *name, int defined, int weak) {
  /* A weak reference does not pull archive members. */
  if (!defined && weak)
    return 0;
  int *st = ex__sym_ref(ctx, name);
  if (!st)
    return LW_ENOMEM;
  if (defined)
    *st = DEF;
  else if (*st == 0)
    *st = UNDEF;
  return 0;
}

static int collect_def(void *ctx, const char *name, int defined, int weak) {
  (void)weak;
  return defined ? lw_strvec_push(ctx, name) : 0;
}

/* Adds the symbols of every device image from index `first` on. */
static int note_device_symbols(struct resolver *r, size_t first) {
  for (size_t i = first; i < r->set->n; i++) {
    const struct ex_image *img = &r->set->images[i];
    if (img->linked)
      continue;
    int rc = ex__read_symbols(img->data, img->size, img->origin, note_symbol,
                              &r->device, r->d);
    if (rc)
      return rc;
  }
  return 0;
}

/* Reads an object or member: its host symbols, then its device images. */
static int include(struct resolver *r, const unsigned char *buf, size_t len,
                   const char *origin) {
  int rc = ex__read_symbols(buf, len, origin, note_symbol, &r->host, r->d);
  if (rc == LW_ENOMEM)
    return lw_error(r->d, rc, "out of memory");
  if (!rc)
    rc = ex_scan_buffer(r->set, buf, len, origin, r->d);
  return rc;
}

/* ---- archives ------------------------------------------------------------ */

static void free_archive(struct archive_in *a) {
  for (size_t i = 0; i < a->n; i++) {
    free(a->m[i].name);
    free(a->m[i].path);
    lw_strvec_free(&a->m[i].defs);
  }
  free(a->m);
  free(a->sym);
  if (a->index_elf)
    elf_end(a->index_elf);
  free(a->sym_member);
}

static int add_member(struct archive_in *a, const char *name,
                      const unsigned char *data, size_t size, size_t header,
                      char *path) {
  struct member *nm = realloc(a->m, (a->n + 1) * sizeof *nm);
  if (!nm) {
    free(path);
    return LW_ENOMEM;
  }
  a->m = nm;
  struct member *m = &a->m[a->n++];
  memset(m, 0, sizeof *m);
  m->name = strdup(name);
  m->path = path;
  m->data = data;
  m->size = size;
  m->header = header;
  return m->name ? 0 : LW_ENOMEM;
}

/* Calls `cb` for each member of a regular (GNU or BSD) archive, enumerated
 * with libarchive; the data of each is found in place after its 60-byte
 * header (and, in the BSD format, after its "#1/<n>" name). */
typedef int (*member_cb)(void *ctx, const char *name, const unsigned char *data,
                         size_t size, size_t header);

static int walk_members(const char *path, const unsigned char *buf, size_t len,
                        member_cb cb, void *ctx, struct lw_diag *d) {
  struct archive *ar = archive_read_new();
  if (!ar)
    return lw_error(d, LW_ENOMEM, "out of memory");
  archive_read_support_format_ar(ar);
  int rc = 0, r;
  struct archive_entry *ent;
  if (archive_read_open_memory(ar, buf, len) != ARCHIVE_OK)
    rc = lw_error_path(d, LW_EFORMAT, path, "%s", archive_error_string(ar));
  while (!rc && (r = archive_read_next_header(ar, &ent)) == ARCHIVE_OK) {
    const char *name = archive_entry_pathname(ent);
    la_int64_t pos = archive_read_header_position(ar);
    la_int64_t size = archive_entry_size(ent);
    /* libarchive reports the first header at 0, before the "!<arch>\n"
     * it consumes with it. */
    if (pos < 8)
      pos = 8;
    if (!name || name[0] == '/' || strncmp(name, "__.SYMDEF", 9) == 0)
      continue;
    size_t skip = 0;
    if (pos >= 0 && (uint64_t)pos + 60 <= len &&
        memcmp(buf + pos, "#1/", 3) == 0)
      skip = (size_t)strtoul((const char *)buf + pos + 3, NULL, 10);
    if (size < 0 || (uint64_t)pos + 60 + skip > len ||
        memcmp(buf + pos + 58, "`\n", 2) != 0 ||
        (uint64_t)size > len - ((size_t)pos + 60 + skip)) {
      rc = lw_error_path(d, LW_EFORMAT, path,
                         "member '%s' runs past the end of the archive", name);
      break;
    }
    rc = cb(ctx, name, buf + pos + 60 + skip, (size_t)size, (size_t)pos);
  }
  if (!rc && r != ARCHIVE_EOF)
    rc = lw_error_path(d, LW_EFORMAT, path, "%s", archive_error_string(ar));
  archive_read_free(ar);
  return rc;
}

static int list_member(void *ctx, const char *name, const unsigned char *data,
                       size_t size, size_t header) {
  return add_member(ctx, name, data, size, header, NULL);
}

static int list_members(struct archive_in *a, const unsigned char *buf,
                        size_t len, struct lw_diag *d) {
  int rc = walk_members(a->path, buf, len, list_member, a, d);
  return rc == LW_ENOMEM ? lw_error(d, rc, "out of memory") : rc;
}

static int by_header(const void *k, const void *e) {
  size_t key = *(const size_t *)k, h = ((const struct member *)e)->header;
  return key < h ? -1 : key > h;
}

/* The archive's symbol index, read by libelf (GNU/SysV "/" and "/SYM64/"). */
static int read_index(struct archive_in *a, const unsigned char *buf,
                      size_t len, struct lw_diag *d) {
  elf_version(EV_CURRENT);
  Elf *e = elf_memory((char *)buf, len);
  if (!e)
    return 0;
  size_t n = 0;
  Elf_Arsym *syms = elf_kind(e) == ELF_K_AR ? elf_getarsym(e, &n) : NULL;
  int rc = 0;
  if (syms && n > 1) {
    a->sym = calloc(n, sizeof *a->sym);
    a->sym_member = calloc(n, sizeof *a->sym_member);
    if (!a->sym || !a->sym_member)
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n && syms[i].as_name; i++) {
      size_t off = (size_t)syms[i].as_off;
      struct member *m = bsearch(&off, a->m, a->n, sizeof *a->m, by_header);
      if (!m)
        continue; /* an index entry for no member: ld ignores it too */
      a->sym[a->nsym] = syms[i].as_name;
      a->sym_member[a->nsym++] = (size_t)(m - a->m);
    }
    a->has_index = !rc;
  }
  a->index_elf = e; /* keeps the names alive */
  return rc;
}

static int add_thin_member(void *ctx, const char *name, char *path,
                           size_t header) {
  return add_member(ctx, name, NULL, 0, header, path);
}

/* The member's name for messages ("archive(member)", *origin, which the
 * caller frees) and its bytes: a thin member's file is mapped on first use. */
static int member_open(struct resolver *r, struct archive_in *a,
                       struct member *m, char **origin) {
  if (!(*origin = lw_xasprintf("%s(%s)", a->path, m->name)))
    return lw_error(r->d, LW_ENOMEM, "out of memory");
  if (m->data || !m->path)
    return 0;
  return ex__map_file(r->set, m->path, *origin, &m->data, &m->size, r->d);
}

static int pull(struct resolver *r, struct archive_in *a, size_t i) {
  struct member *m = &a->m[i];
  m->included = 1;
  char *origin;
  int rc = member_open(r, a, m, &origin);
  if (!rc && m->size)
    rc = include(r, m->data, m->size, origin);
  free(origin);
  return rc;
}

static int load_defs(struct resolver *r, struct archive_in *a,
                     struct member *m) {
  if (m->loaded)
    return 0;
  m->loaded = 1;
  char *origin;
  int rc = member_open(r, a, m, &origin);
  if (!rc && m->size)
    rc =
        ex__read_symbols(m->data, m->size, origin, collect_def, &m->defs, r->d);
  free(origin);
  return rc == LW_ENOMEM ? lw_error(r->d, rc, "out of memory") : rc;
}

/* Pulls members until none defines a symbol still undefined. Sets *pulled. */
static int search(struct resolver *r, struct archive_in *a, int *pulled) {
  int rc = 0, changed = 1;
  while (!rc && changed) {
    changed = 0;
    if (a->has_index) {
      for (size_t k = 0; !rc && k < a->nsym; k++) {
        struct member *m = &a->m[a->sym_member[k]];
        if (!m->included && ex__sym_get(&r->host, a->sym[k]) == UNDEF) {
          rc = pull(r, a, a->sym_member[k]);
          changed = *pulled = 1;
        }
      }
      continue;
    }
    for (size_t i = 0; !rc && i < a->n; i++) {
      struct member *m = &a->m[i];
      if (m->included || (rc = load_defs(r, a, m)))
        continue;
      for (size_t k = 0; k < m->defs.n; k++)
        if (ex__sym_get(&r->host, m->defs.v[k]) == UNDEF) {
          rc = pull(r, a, i);
          changed = *pulled = 1;
          break;
        }
    }
  }
  return rc;
}

static int open_archive(struct resolver *r, const char *path,
                        const unsigned char *buf, size_t len,
                        struct archive_in **out) {
  if (lw_grow(&r->ar, r->nar, &r->capar, sizeof *r->ar, 8))
    return lw_error(r->d, LW_ENOMEM, "out of memory");
  struct archive_in *a = &r->ar[r->nar++];
  memset(a, 0, sizeof *a);
  a->path = path;
  a->thin = memcmp(buf, "!<thin>\n", 8) == 0;
  int rc = a->thin ? ex__thin_members(buf, len, path, add_thin_member, a, r->d)
                   : list_members(a, buf, len, r->d);
  if (!rc && !a->thin)
    rc = read_index(a, buf, len, r->d);
  *out = a;
  return rc;
}

/* ---- device-only members ------------------------------------------------- */

/* Does any device image of member `m` define a device symbol still needed?
 * The images' symbols read so far (r->set from index *noted on is not) are
 * brought up to date only for a member that has device images: most
 * candidates (system archives' members without global definitions) have
 * none, and reading every image's bitcode symbols costs ~40 us an image. */
static int device_needed(struct resolver *r, struct archive_in *a,
                         struct member *m, size_t *noted, int *needed) {
  int hostless = m->defs.n == 0;
  struct ex_set tmp = {0};
  char *origin;
  *needed = 0;
  int rc = member_open(r, a, m, &origin);
  if (!rc && m->size)
    rc = ex_scan_buffer(&tmp, m->data, m->size, origin, r->d);
  if (!rc && tmp.n && *noted < r->set->n) {
    rc = note_device_symbols(r, *noted);
    *noted = r->set->n;
  }
  m->no_device = !rc && !tmp.n;
  for (size_t i = 0; !rc && i < tmp.n; i++) {
    if (hostless && strncmp(tmp.images[i].triple, "fpga_", 5) == 0)
      *needed = 1;
    for (size_t k = 0; k < r->always->n; k++)
      if (strcmp(tmp.images[i].arch, r->always->v[k]) == 0)
        *needed = 1;
  }
  struct lw_strvec defs = {0};
  for (size_t i = 0; !rc && !*needed && i < tmp.n; i++)
    rc = ex__read_symbols(tmp.images[i].data, tmp.images[i].size, origin,
                          collect_def, &defs, r->d);
  for (size_t k = 0; !rc && k < defs.n && !*needed; k++)
    *needed = ex__sym_get(&r->device, defs.v[k]) == UNDEF;
  lw_strvec_free(&defs);
  ex_set_free(&tmp);
  free(origin);
  return rc;
}

static int device_only_members(struct resolver *r) {
  int rc = 0, changed = 1;
  size_t noted = 0; /* images whose device symbols are in r->device */
  while (!rc && changed) {
    changed = 0;
    for (size_t k = 0; !rc && k < r->nar; k++) {
      struct archive_in *a = &r->ar[k];
      for (size_t i = 0; !rc && i < a->n; i++) {
        struct member *m = &a->m[i];
        int needed = 0;
        if (m->included || m->no_device || (rc = load_defs(r, a, m)))
          continue;
        if (!(rc = device_needed(r, a, m, &noted, &needed)) && needed) {
          rc = pull(r, a, i);
          changed = 1;
        }
      }
    }
  }
  return rc;
}

/* ---- the link line ------------------------------------------------------- */

/* What reading one input gives, computed for all inputs in parallel before
 * the (sequential) resolution: the mapped file, and for anything but an
 * archive its symbols (packed "D<name>\0" / "U<name>\0", weak references
 * left out) and its device images. */
struct prescan {
  const unsigned char *buf;
  size_t len;
  int archive;
  struct lw_buf syms;
  struct ex_set set;
  int rc;
  struct lw_diag diag;
};

static int collect_sym(void *ctx, const char *name, int defined, int weak) {
  if (!defined && weak)
    return 0;
  char tag = defined ? 'D' : 'U';
  if (lw_buf_append(ctx, &tag, 1))
    return LW_ENOMEM;
  return lw_buf_append(ctx, name, strlen(name) + 1);
}

/* Could a member of the archive hold device code? Objects (ELF, COFF) with
 * device code name a section .llvm.offloading or __CLANG_OFFLOAD_BUNDLE__*
 * (text bundles spell the latter too): those are searched for in the whole
 * archive. The other forms are known by their first bytes: a member that is
 * an OffloadBinary, a compressed bundle, bitcode (whose embedded objects
 * need not spell the section name out) or an archive itself. (Short magics
 * searched for everywhere cost 1-2 ms per MB; members' first bytes a
 * fraction of that.) A thin archive's members live in files of their own,
 * and an archive libarchive cannot walk: maybe. */
static int first_bytes_say_device(void *ctx, const char *name,
                                  const unsigned char *data, size_t size,
                                  size_t header) {
  (void)ctx;
  (void)name;
  (void)header;
  static const char *const magics[] = {"\x10\xff\x10\xad", "CCOB", "BC\xc0\xde",
                                       "\xde\xc0\x17\x0b"};
  if (size < 8)
    return 0;
  for (size_t i = 0; i < LW_ARRAY_SIZE(magics); i++)
    if (memcmp(data, magics[i], 4) == 0)
      return 1;
  if (memcmp(data, "!<arch>\n", 8) == 0 || memcmp(data, "!<thin>\n", 8) == 0)
    return 1; /* nested: read whole when the link gets to it */
  return 0;
}

static int may_hold_device_code(const unsigned char *buf, size_t len) {
  if (memcmp(buf, "!<thin>\n", 8) == 0 ||
      memmem(buf, len, ".llvm.offloading", 16) ||
      memmem(buf, len, "__CLANG_OFFLOAD_BUNDLE__", 24))
    return 1;
  struct lw_diag ignore = {0};
  return walk_members("", buf, len, first_bytes_say_device, NULL, &ignore) != 0;
}

/* First pass: maps the input; an object's device images are read, an
 * archive is searched for device code (`device`). */
static void prescan_one(const struct ex_link_input *in, struct prescan *p,
                        int *device) {
  p->rc = ex__map_file(&p->set, in->path, in->path, &p->buf, &p->len, &p->diag);
  if (p->rc || p->len < 8)
    return;
  if (memcmp(p->buf, "!<arch>\n", 8) == 0 ||
      memcmp(p->buf, "!<thin>\n", 8) == 0) {
    p->archive = 1;
    if (may_hold_device_code(p->buf, p->len))
      __atomic_store_n(device, 1, __ATOMIC_RELAXED);
    else if (p->len > (1u << 20) && (uintptr_t)p->buf % 4096 == 0)
      /* A big archive is mapped, and nothing has written to it yet: the
       * pages the search read leave this process's memory (libgcc.a: 3 MB
       * at the peak otherwise); those read again come back from the page
       * cache. */
      madvise((void *)p->buf, p->len, MADV_DONTNEED);
    return;
  }
  p->rc = ex_scan_buffer(&p->set, p->buf, p->len, in->path, &p->diag);
}

/* Second pass, when archives may hold device code: an object's symbols. */
static void prescan_symbols(const struct ex_link_input *in, struct prescan *p) {
  if (p->rc || p->archive || p->len < 8)
    return;
  p->rc = ex__read_symbols(p->buf, p->len, in->path, collect_sym, &p->syms,
                           &p->diag);
  if (p->rc == LW_ENOMEM)
    lw_error(&p->diag, p->rc, "out of memory");
}

struct pool {
  const struct ex_link_input *in;
  struct prescan *pre;
  size_t n;
  size_t next; /* taken with __atomic_fetch_add */
  int symbols; /* the pass */
  int device;  /* an archive may hold device code */
};

static void *prescan_worker(void *arg) {
  struct pool *pl = arg;
  for (;;) {
    size_t i = __atomic_fetch_add(&pl->next, 1, __ATOMIC_RELAXED);
    if (i >= pl->n)
      return NULL;
    if (pl->in[i].item != EX_LINK_FILE)
      continue;
    if (pl->symbols)
      prescan_symbols(&pl->in[i], &pl->pre[i]);
    else
      prescan_one(&pl->in[i], &pl->pre[i], &pl->device);
  }
}

/* Runs a pass over every input on up to `jobs` threads. */
static void prescan_pass(struct pool *pl, int jobs) {
  pl->next = 0;
  pthread_t th[64];
  int nth = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
  if ((size_t)nth > pl->n)
    nth = (int)pl->n;
  int started = 0;
  for (; started < nth - 1; started++)
    if (pthread_create(&th[started], NULL, prescan_worker, pl) != 0)
      break;
  prescan_worker(pl); /* this thread works too */
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
}

/* Prescans every input; returns whether an archive may hold device code
 * (and the objects' symbols were read for the resolution). */
static int prescan_all(const struct ex_link_input *in, size_t n, int jobs,
                       struct prescan *pre) {
  struct pool pl = {in, pre, n, 0, 0, 0};
  elf_version(EV_CURRENT); /* before any thread uses libelf */
  prescan_pass(&pl, jobs);
  if (pl.device) {
    pl.symbols = 1;
    prescan_pass(&pl, jobs);
  }
  return pl.device;
}

static int visit(struct resolver *r, const struct ex_link_input *in,
                 struct prescan *p) {
  if (p->rc) {
    *r->d = p->diag;
    return p->rc;
  }
  int rc = 0;
  const char *sym = (const char *)p->syms.data, *end = sym + p->syms.len;
  for (; !rc && sym < end; sym += strlen(sym) + 1)
    rc = note_symbol(&r->host, sym + 1, sym[0] == 'D', 0);
  if (rc)
    return lw_error(r->d, rc, "out of memory");
  if (ex__set_move(r->set, &p->set))
    return lw_error(r->d, LW_ENOMEM, "out of memory");
  if (!p->archive)
    return 0;
  struct archive_in *a = NULL;
  if ((rc = open_archive(r, in->path, p->buf, p->len, &a)) || !r->pulls)
    return rc;
  if (in->whole_archive) {
    for (size_t i = 0; !rc && i < a->n; i++)
      rc = pull(r, a, i);
    return rc;
  }
  int pulled = 0;
  return search(r, a, &pulled);
}

int ex_scan_link(struct ex_set *set, const struct ex_link_input *in, size_t n,
                 int jobs, const struct lw_strvec *always, struct lw_diag *d) {
  struct resolver r = {set, {0}, {0}, NULL, 0, 0, d, 0, always};
  size_t *group = NULL, ngroup = 0; /* indexes into r.ar */
  int in_group = 0, rc = 0;
  struct prescan *pre = calloc(n ? n : 1, sizeof *pre);
  if (!pre)
    return lw_error(d, LW_ENOMEM, "out of memory");
  r.pulls = prescan_all(in, n, jobs, pre);
  /* Archive records move as r.ar grows: group members are kept by index. */
  for (size_t i = 0; !rc && i < n; i++) {
    if (in[i].item == EX_LINK_UNDEFINED) {
      rc = note_symbol(&r.host, in[i].path, 0, 0);
      if (rc)
        lw_error(d, rc, "out of memory");
      continue;
    }
    if (in[i].item == EX_LINK_GROUP_START) {
      in_group = 1;
      ngroup = 0;
      continue;
    }
    if (in[i].item == EX_LINK_GROUP_END) {
      /* Search the group's archives again until a round pulls nothing. */
      for (int pulled = 1; !rc && r.pulls && pulled && ngroup > 1;) {
        pulled = 0;
        for (size_t k = 0; !rc && k < ngroup; k++)
          rc = search(&r, &r.ar[group[k]], &pulled);
      }
      in_group = 0;
      continue;
    }
    size_t before = r.nar;
    rc = visit(&r, &in[i], &pre[i]);
    if (!rc && in_group && r.nar > before) {
      size_t *ng = realloc(group, (ngroup + 1) * sizeof *ng);
      if (!ng)
        rc = lw_error(d, LW_ENOMEM, "out of memory");
      else {
        group = ng;
        group[ngroup++] = before;
      }
    }
  }
  if (!rc && r.pulls)
    rc = device_only_members(&r);
  for (size_t i = 0; i < n; i++) {
    lw_buf_free(&pre[i].syms);
    ex_set_free(&pre[i].set);
  }
  free(pre);
  for (size_t k = 0; k < r.nar; k++)
    free_archive(&r.ar[k]);
  free(r.ar);
  free(group);
  ex__symtab_free(&r.host);
  ex__symtab_free(&r.device);
  return rc;
}
