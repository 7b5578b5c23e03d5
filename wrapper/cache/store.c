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
 * made or written gives one warning, and the link goes on without it. */
#include "cache/cache.h"
#include "run/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HEADER = 4 + 4 + 8 + LW_HASH_SIZE };

struct lw_cache {
  char *dir;
  uint64_t limit;
  int verbose;
  pthread_mutex_t mu; /* the warning below, once */
  int warned;
};

static void warn_once(struct lw_cache *c, const char *why) {
  pthread_mutex_lock(&c->mu);
  if (!c->warned++)
    fprintf(stderr,
            "fatlink: warning: cache '%s': %s (the link goes on "
            "without storing there)\n",
            c->dir, why);
  pthread_mutex_unlock(&c->mu);
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

int lw_cache_open(const char *dir, uint64_t limit, int verbose,
                  struct lw_cache **out) {
  *out = NULL;
  struct lw_cache *c = calloc(1, sizeof *c);
  if (!c || !(c->dir = strdup(dir))) {
    free(c);
    return LW_ENOMEM;
  }
  c->limit = limit;
  c->verbose = verbose;
  pthread_mutex_init(&c->mu, NULL);
  /* Can it be written? A probe file says, once, before any job needs it. */
  char *probe = lw_xasprintf("%s/probe", dir);
  struct lw_tmp *t = NULL;
  struct lw_diag d = {0};
  struct stat st;
  int err = 0;
  if (!probe)
    err = ENOMEM;
  else if (make_dirs(c->dir) != 0 || stat(dir, &st) != 0)
    err = errno;
  else if (!S_ISDIR(st.st_mode))
    err = ENOTDIR;
  else if (lw_tmp_create_beside(probe, &t, &d) != 0)
    err = EACCES;
  if (t)
    unlink(lw_tmp_path(t)); /* lw_tmp forgets it at exit */
  if (err) {
    fprintf(stderr,
            "fatlink: warning: cache directory '%s' cannot be used: %s (the "
            "link goes on without the cache)\n",
            dir, err == EACCES && d.msg[0] ? d.msg : strerror(err));
    free(probe);
    c->limit = 0; /* nothing to evict */
    lw_cache_close(c);
    return 0;
  }
  free(probe);
  *out = c;
  return 0;
}

static char *entry_path(const struct lw_cache *c,
                        const unsigned char key[LW_HASH_SIZE]) {
  char hex[2 * LW_HASH_SIZE + 1];
  lw_hash_hex(key, hex);
  return lw_xasprintf("%s/%.2s/%s", c->dir, hex, hex + 2);
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* Reads and checks an entry file: 1 with the payload in `out`, 0 if it is
 * not whole (then removed). */
static int read_entry(const char *path, struct lw_buf *out) {
  struct lw_diag d = {0};
  struct lw_buf b = {0};
  if (lw_read_file(path, &b, &d) != 0)
    return 0;
  unsigned char sum[LW_HASH_SIZE];
  int ok = b.len >= HEADER && memcmp(b.data, "FLC1", 4) == 0 &&
           le64(b.data + 8) == b.len - HEADER;
  if (ok) {
    struct lw_hash h;
    lw_hash_init(&h);
    lw_hash_update(&h, b.data + HEADER, b.len - HEADER);
    lw_hash_final(&h, sum);
    ok = memcmp(sum, b.data + 16, LW_HASH_SIZE) == 0;
  }
  if (!ok) {
    unlink(path);
    lw_buf_free(&b);
    return 0;
  }
  memmove(b.data, b.data + HEADER, b.len - HEADER);
  b.len -= HEADER;
  *out = b;
  return 1;
}

int lw_cache_get(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                 const char *what, struct lw_buf *out) {
  if (!c)
    return 0;
  char *path = entry_path(c, key);
  if (!path)
    return 0;
  int exists = access(path, F_OK) == 0;
  int hit = exists && read_entry(path, out);
  if (hit)
    utimensat(AT_FDCWD, path, NULL, 0); /* recently used */
  if (c->verbose)
    fprintf(stderr, "fatlink: cache %s: %s\n",
            hit      ? "hit"
            : exists ? "miss (a damaged entry, removed)"
                     : "miss",
            what);
  free(path);
  return hit;
}

void lw_cache_put(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                  const void *data, size_t n) {
  if (!c)
    return;
  char *path = entry_path(c, key);
  char *sub = path ? strndup(path, strrchr(path, '/') - path) : NULL;
  struct lw_tmp *t = NULL;
  struct lw_diag d = {0};
  if (!sub) {
    free(path);
    return;
  }
  char why[512];
  if (make_dir(sub) != 0) {
    snprintf(why, sizeof why, "cannot create '%s': %s", sub, strerror(errno));
    warn_once(c, why);
  } else if (lw_tmp_create_beside(path, &t, &d) != 0) {
    warn_once(c, d.msg);
  } else {
    unsigned char head[HEADER] = {'F', 'L', 'C', '1'};
    for (int i = 0; i < 8; i++)
      head[8 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    struct lw_hash h;
    lw_hash_init(&h);
    lw_hash_update(&h, data, n);
    lw_hash_final(&h, head + 16);
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
  free(path);
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

int lw_cache_stats(const char *dir, struct lw_cache_stats *st) {
  struct entry *e;
  size_t n;
  memset(st, 0, sizeof *st);
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
  pthread_mutex_destroy(&c->mu);
  free(c->dir);
  free(c);
}
