/* cache.c - the content-addressed cache of device results (--cache-dir=,
 * FATLINK_CACHE_DIR): an entry is a file DIR/<2 hex>/<64 hex>, named by the
 * BLAKE2b hash (hash.c) of everything that decides its bytes, holding
 *   "FLC1", u32 0, u64 payload size, 32-byte BLAKE2b of the payload, payload
 * so that a truncated or damaged entry is seen (and removed, and rebuilt),
 * never used. An entry is written to a temporary in its directory and
 * renamed into place: readers see all of it or nothing, and two processes
 * sharing the cache at once at worst both write the same bytes. A hit sets
 * the entry's modification time, so that eviction - oldest first, when the
 * entries outgrow the size bound (--cache-size=, default 5 GiB) at the end
 * of a link - keeps what was used recently. A cache directory that cannot be
 * made or written gives one warning, and the link goes on without it.
 *
 * A remote layer (--cache-remote=, remote.c) shares entries between
 * machines: a lookup goes local, then remote, and a remote hit is stored
 * locally; results are written to both (not remotely with
 * --cache-remote-readonly). A remote entry is checked like a local one: a
 * damaged or truncated one is a miss. A server that fails a lookup (down,
 * slow past the timeout, answering garbage to the protocol) is one warning
 * and is not asked again during the link; one that refuses to store is one
 * warning and is not given more. What each layer answered is added up in
 * DIR/stats at the end of the link (fatpack cache stats). */
#include "cache/cache.h"
#include "run/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HEADER = 4 + 4 + 8 + LW_HASH_SIZE };

/* What the link's processes share (the SPIR-V workers are forked from
 * this one and use the cache too): a warning said once by any of them, a
 * server given up by one given up by all, and the counts. */
struct shared {
  atomic_int warned, remote_warned, remote_off, remote_put_off;
  atomic_ulong n[LW_CACHE_NCOUNTS]; /* what each layer answered */
};

struct lw_cache {
  char *dir;
  uint64_t limit;
  int verbose;
  struct lw_remote *remote;
  int readonly;
  struct shared *sh; /* a shared anonymous mapping */
};

static void remote_warn(struct lw_cache *c, const char *what, const char *why) {
  if (!atomic_exchange(&c->sh->remote_warned, 1))
    fprintf(stderr,
            "fatlink: warning: remote cache '%s' %s: %s (the link goes on "
            "without it)\n",
            lw_remote_name(c->remote), what, why);
}

static void warn_once(struct lw_cache *c, const char *why) {
  if (!atomic_exchange(&c->sh->warned, 1))
    fprintf(stderr,
            "fatlink: warning: cache '%s': %s (the link goes on "
            "without storing there)\n",
            c->dir, why);
}

static int make_dir(const char *path) {
  return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

/* mkdir -p of the cache directory itself. */
static int make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = 0;
    int rc = make_dir(path);
    *p = '/';
    if (rc)
      return -1;
  }
  return make_dir(path);
}

int lw_cache_open(const struct lw_cache_options *opt, struct lw_cache **out,
                  struct lw_diag *d) {
  *out = NULL;
  const char *dir = opt->dir;
  struct lw_cache *c = calloc(1, sizeof *c);
  if (!c || !(c->dir = strdup(dir))) {
    free(c);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  c->limit = opt->limit;
  c->verbose = opt->verbose;
  c->readonly = opt->remote_readonly;
  void *sh = mmap(NULL, sizeof *c->sh, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    free(c->dir);
    free(c);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  c->sh = sh;
  int rc = opt->remote ? lw_remote_open(opt->remote, opt->remote_timeout_ms,
                                        &c->remote, d)
                       : 0;
  if (rc) {
    c->limit = 0;
    lw_cache_close(c);
    return rc;
  }
  /* Can it be written? A probe file says, once, before any job needs it. */
  char *probe = lw_xasprintf("%s/probe", dir);
  struct lw_tmp *t = NULL;
  struct lw_diag pd = {0};
  struct stat st;
  int err = 0;
  if (!probe)
    err = ENOMEM;
  else if (make_dirs(c->dir) != 0 || stat(dir, &st) != 0)
    err = errno;
  else if (!S_ISDIR(st.st_mode))
    err = ENOTDIR;
  else if (lw_tmp_create_beside(probe, &t, &pd) != 0)
    err = EACCES;
  if (t)
    unlink(lw_tmp_path(t)); /* lw_tmp forgets it at exit */
  if (err) {
    fprintf(stderr,
            "fatlink: warning: cache directory '%s' cannot be used: %s (the "
            "link goes on without the cache)\n",
            dir, err == EACCES && pd.msg[0] ? pd.msg : strerror(err));
    free(probe);
    c->limit = 0; /* nothing to evict */
    lw_cache_close(c);
    return 0;
  }
  free(probe);
  *out = c;
  return 0;
}

/* DIR/<2 hex>/<62 hex>, malloc'd. */
static char *entry_path(const struct lw_cache *c,
                        const char hex[2 * LW_HASH_SIZE + 1]) {
  return lw_xasprintf("%s/%.2s/%s", c->dir, hex, hex + 2);
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* Is the entry in b whole: its header, its size, its payload's hash? */
static int whole(const struct lw_buf *b) {
  unsigned char sum[LW_HASH_SIZE];
  if (b->len < HEADER || memcmp(b->data, "FLC1", 4) != 0 ||
      le64(b->data + 8) != b->len - HEADER)
    return 0;
  struct lw_hash h;
  lw_hash_init(&h);
  lw_hash_update(&h, b->data + HEADER, b->len - HEADER);
  lw_hash_final(&h, sum);
  return memcmp(sum, b->data + 16, LW_HASH_SIZE) == 0;
}

/* The entry in b becomes its payload, into out. */
static void payload(struct lw_buf *b, struct lw_buf *out) {
  memmove(b->data, b->data + HEADER, b->len - HEADER);
  b->len -= HEADER;
  *out = *b;
  *b = (struct lw_buf){0};
}

/* Reads and checks an entry file: 1 with the payload in `out`, 0 if it is
 * not whole (then removed). */
static int read_entry(const char *path, struct lw_buf *out) {
  struct lw_diag d = {0};
  struct lw_buf b = {0};
  if (lw_read_file(path, &b, &d) != 0)
    return 0;
  if (!whole(&b)) {
    unlink(path);
    lw_buf_free(&b);
    return 0;
  }
  payload(&b, out);
  return 1;
}

/* Writes an entry (its header, then its payload) to its file: a temporary
 * beside it, renamed into place. A failure is a warning, once. */
static void store_file(struct lw_cache *c, const char *path,
                       const unsigned char head[HEADER], const void *data,
                       size_t n) {
  char *sub = strndup(path, strrchr(path, '/') - path);
  struct lw_tmp *t = NULL;
  struct lw_diag d = {0};
  char why[512];
  if (!sub)
    return;
  if (make_dir(sub) != 0) {
    snprintf(why, sizeof why, "cannot create '%s': %s", sub, strerror(errno));
    warn_once(c, why);
  } else if (lw_tmp_create_beside(path, &t, &d) != 0) {
    warn_once(c, d.msg);
  } else {
    FILE *f = fopen(lw_tmp_path(t), "wb");
    int ok = f && fwrite(head, 1, HEADER, f) == HEADER &&
             (!n || fwrite(data, 1, n, f) == n);
    int err = errno;
    if (f && fclose(f) != 0 && ok) {
      ok = 0;
      err = errno;
    }
    if (!ok) {
      unlink(lw_tmp_path(t));
      snprintf(why, sizeof why, "cannot write '%s': %s", lw_tmp_path(t),
               strerror(err));
      warn_once(c, why);
    } else if (lw_tmp_commit(&t, path, &d) != 0) {
      warn_once(c, d.msg);
    }
  }
  free(sub);
}

/* The remote layer's answer for key: 1 with the payload in out (and the
 * entry stored locally at path), 0 on a miss. */
static int remote_get(struct lw_cache *c, const char *hex, const char *path,
                      struct lw_buf *out, int *damaged) {
  struct lw_buf b = {0};
  char why[512] = "";
  int rc = lw_remote_get(c->remote, hex, &b, why, sizeof why);
  if (rc < 0) {
    atomic_store(&c->sh->remote_off, 1);
    atomic_fetch_add(&c->sh->n[LW_CACHE_REMOTE_ERRORS], 1);
    remote_warn(c, "cannot be read", why);
  } else if (rc && !whole(&b)) {
    *damaged = 1;
    rc = 0;
  }
  if (rc > 0) {
    store_file(c, path, b.data, b.data + HEADER, b.len - HEADER);
    payload(&b, out);
  }
  lw_buf_free(&b);
  return rc > 0;
}

int lw_cache_get(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                 const char *what, struct lw_buf *out) {
  if (!c)
    return 0;
  char hex[2 * LW_HASH_SIZE + 1];
  lw_hash_hex(key, hex);
  char *path = entry_path(c, hex);
  if (!path)
    return 0;
  int exists = access(path, F_OK) == 0, damaged = 0, remote = 0;
  int hit = exists && read_entry(path, out);
  if (hit)
    utimensat(AT_FDCWD, path, NULL, 0); /* recently used */
  else if (c->remote && !atomic_load(&c->sh->remote_off))
    hit = remote = remote_get(c, hex, path, out, &damaged);
  atomic_fetch_add(&c->sh->n[hit && remote ? LW_CACHE_REMOTE_HITS
                         : hit         ? LW_CACHE_LOCAL_HITS
                                       : LW_CACHE_MISSES],
                   1);
  if (c->verbose)
    fprintf(stderr, "fatlink: cache %s: %s\n",
            hit && remote ? "hit (remote)"
            : hit         ? "hit"
            : exists      ? "miss (a damaged entry, removed)"
            : damaged     ? "miss (a damaged remote entry)"
                          : "miss",
            what);
  free(path);
  return hit;
}

void lw_cache_put(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                  const void *data, size_t n) {
  if (!c)
    return;
  char hex[2 * LW_HASH_SIZE + 1];
  lw_hash_hex(key, hex);
  char *path = entry_path(c, hex);
  unsigned char head[HEADER] = {'F', 'L', 'C', '1'};
  for (int i = 0; i < 8; i++)
    head[8 + i] = (unsigned char)((uint64_t)n >> (8 * i));
  struct lw_hash h;
  lw_hash_init(&h);
  lw_hash_update(&h, data, n);
  lw_hash_final(&h, head + 16);
  if (path)
    store_file(c, path, head, data, n);
  free(path);
  if (!c->remote || c->readonly || atomic_load(&c->sh->remote_off) ||
      atomic_load(&c->sh->remote_put_off))
    return;
  /* the remote layer takes the entry in one piece */
  struct lw_buf e = {0};
  char why[512] = "";
  if (lw_buf_append(&e, head, HEADER) || lw_buf_append(&e, data, n)) {
    /* out of memory: not stored there, as a full server would not */
  } else if (lw_remote_put(c->remote, hex, e.data, e.len, why, sizeof why)) {
    atomic_store(&c->sh->remote_put_off, 1);
    atomic_fetch_add(&c->sh->n[LW_CACHE_REMOTE_ERRORS], 1);
    remote_warn(c, "does not store", why);
  } else {
    atomic_fetch_add(&c->sh->n[LW_CACHE_REMOTE_STORED], 1);
  }
  lw_buf_free(&e);
}

/* ---- the whole cache: stats, eviction, clearing ----------------------------
 */

struct entry {
  char *path;
  uint64_t size;
  struct timespec used;
};

static int by_age(const void *a, const void *b) {
  const struct entry *x = a, *y = b;
  if (x->used.tv_sec != y->used.tv_sec)
    return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
  if (x->used.tv_nsec != y->used.tv_nsec)
    return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
  return strcmp(x->path, y->path);
}

static int is_hex(const char *s, size_t n) {
  return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

/* Every entry of the cache in `dir` (files the cache did not write are
 * left alone); LW_ENOMEM or 0. */
static int list_entries(const char *dir, struct entry **out, size_t *n) {
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  DIR *top = opendir(dir);
  struct dirent *e;
  int rc = 0;
  while (!rc && top && (e = readdir(top))) {
    if (!is_hex(e->d_name, 2))
      continue;
    char *sub = lw_xasprintf("%s/%s", dir, e->d_name);
    DIR *in = sub ? opendir(sub) : NULL;
    struct dirent *f;
    while (!rc && in && (f = readdir(in))) {
      if (!is_hex(f->d_name, 2 * LW_HASH_SIZE - 2))
        continue;
      struct stat st;
      char *path = lw_xasprintf("%s/%s", sub, f->d_name);
      if (!path || lw_grow(out, *n, &cap, sizeof **out, 64)) {
        free(path);
        rc = LW_ENOMEM;
      } else if (stat(path, &st) == 0) {
        (*out)[(*n)++] = (struct entry){path, (uint64_t)st.st_size, st.st_mtim};
      } else {
        free(path);
      }
    }
    if (in)
      closedir(in);
    if (!sub)
      rc = LW_ENOMEM;
    free(sub);
  }
  if (top)
    closedir(top);
  return rc;
}

static void free_entries(struct entry *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(e[i].path);
  free(e);
}

/* DIR/stats: "<name> <count>" lines, added to at the end of each link. */
static const char *const count_names[LW_CACHE_NCOUNTS] = {
    "local_hits", "remote_hits", "misses", "remote_stores", "remote_errors"};

static void read_counts(FILE *f, uint64_t n[LW_CACHE_NCOUNTS]) {
  char name[32];
  unsigned long long v;
  while (fscanf(f, "%31s %llu", name, &v) == 2)
    for (int i = 0; i < LW_CACHE_NCOUNTS; i++)
      if (strcmp(name, count_names[i]) == 0)
        n[i] = v;
}

/* Adds this link's counts to DIR/stats, under a lock: links that share the
 * cache end at once. Failing to is silent: counts are not results. */
static void add_counts(struct lw_cache *c) {
  uint64_t n[LW_CACHE_NCOUNTS] = {0}, any = 0;
  for (int i = 0; i < LW_CACHE_NCOUNTS; i++)
    any |= atomic_load(&c->sh->n[i]);
  char *path = any ? lw_xasprintf("%s/stats", c->dir) : NULL;
  int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666) : -1;
  FILE *f = fd >= 0 ? fdopen(fd, "r+") : NULL;
  if (f && flock(fd, LOCK_EX) == 0) {
    read_counts(f, n);
    rewind(f);
    for (int i = 0; i < LW_CACHE_NCOUNTS; i++)
      fprintf(f, "%s %llu\n", count_names[i],
              (unsigned long long)(n[i] + atomic_load(&c->sh->n[i])));
    fflush(f);
    if (ftruncate(fd, ftell(f)) != 0) { /* it only grows */
    }
  }
  if (f)
    fclose(f);
  else if (fd >= 0)
    close(fd);
  free(path);
}

int lw_cache_stats(const char *dir, struct lw_cache_stats *st) {
  struct entry *e;
  size_t n;
  memset(st, 0, sizeof *st);
  char *path = lw_xasprintf("%s/stats", dir);
  FILE *f = path ? fopen(path, "r") : NULL;
  if (f) {
    read_counts(f, st->n);
    fclose(f);
  }
  free(path);
  int rc = list_entries(dir, &e, &n);
  for (size_t i = 0; i < n; i++)
    st->bytes += e[i].size;
  st->entries = n;
  free_entries(e, n);
  return rc;
}

int lw_cache_prune(const char *dir, uint64_t limit, size_t *removed) {
  struct entry *e;
  size_t n;
  *removed = 0;
  int rc = list_entries(dir, &e, &n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += e[i].size;
  if (!rc && total > limit) {
    /* Oldest first, down to 90% of the bound, so that the next links do
     * not each evict again. */
    qsort(e, n, sizeof *e, by_age);
    for (size_t i = 0; i < n && total > limit / 10 * 9; i++)
      if (unlink(e[i].path) == 0 || errno == ENOENT) {
        total -= e[i].size;
        (*removed)++;
      }
  }
  free_entries(e, n);
  return rc;
}

void lw_cache_close(struct lw_cache *c) {
  if (!c)
    return;
  size_t removed;
  if (c->limit)
    lw_cache_prune(c->dir, c->limit, &removed);
  add_counts(c);
  lw_remote_close(c->remote);
  munmap(c->sh, sizeof *c->sh);
  free(c->dir);
  free(c);
}
