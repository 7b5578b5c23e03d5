/* cache.h - private to wrapper/: the cache of device results, a store of
 * entries by content (store.c) under BLAKE2b keys (hash.c). What goes into
 * each key is the planners' (plan/keys.c): the store knows bytes only. */
#ifndef LW_CACHE_H
#define LW_CACHE_H

#include "lw_base.h"

#include <blake2.h>

/* ---- hash.c: BLAKE2b (libb2), 32-byte digests ---------------------------- */

enum { LW_HASH_SIZE = 32 };

struct lw_hash {
  blake2b_state s;
};

void lw_hash_init(struct lw_hash *s);
void lw_hash_update(struct lw_hash *s, const void *p, size_t n);
/* A string with its length first (NULL differs from ""), a number as 8
 * little-endian bytes: so that consecutive fields never run together. */
void lw_hash_str(struct lw_hash *s, const char *str);
void lw_hash_u64(struct lw_hash *s, uint64_t v);
void lw_hash_final(struct lw_hash *s, unsigned char out[LW_HASH_SIZE]);
void lw_hash_hex(const unsigned char h[LW_HASH_SIZE],
                 char out[2 * LW_HASH_SIZE + 1]);

/* ---- store.c: device results by content ---------------------------------- */

struct lw_cache;

/* What each layer answered, counted in the cache directory (stats). */
enum {
  LW_CACHE_LOCAL_HITS,
  LW_CACHE_REMOTE_HITS,
  LW_CACHE_MISSES,
  LW_CACHE_REMOTE_STORED,
  LW_CACHE_REMOTE_ERRORS,
  LW_CACHE_NCOUNTS
};

struct lw_cache_options {
  const char *dir;
  uint64_t limit; /* evicted down to it when closed (0: never) */
  int verbose;    /* says hit or miss, and which layer */
  const char *remote; /* URL of the remote layer, or NULL (remote.c) */
  int remote_readonly;
  long remote_timeout_ms; /* for each remote operation, connecting too */
};

/* Opens (creating) the cache in `dir`. One that cannot be used is a
 * warning and *out NULL: every call below takes a NULL cache as always
 * missing. LW_EINVAL for a remote URL of no known form, LW_ENOMEM, or 0. */
int lw_cache_open(const struct lw_cache_options *opt, struct lw_cache **out,
                  struct lw_diag *d);
/* 1 with the entry's payload in `out` (owned by the caller), 0 on a miss;
 * `what` names the step for --wrapper-verbose. Thread-safe, as is put. */
int lw_cache_get(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                 const char *what, struct lw_buf *out);
/* Stores an entry; failing to is a warning (once), never an error. */
void lw_cache_put(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                  const void *data, size_t n);
void lw_cache_close(struct lw_cache *c);

/* ---- remote.c: the remote layer -------------------------------------------- */

struct lw_remote;
/* redis://host[:port][/db] or http[s]://host[:port]/path; connects when
 * first used. LW_EINVAL naming the URL when it is neither. */
int lw_remote_open(const char *url, long timeout_ms, struct lw_remote **out,
                   struct lw_diag *d);
const char *lw_remote_name(const struct lw_remote *r);
/* 1 with the entry's bytes in `out`, 0 when the server has none, -1 when
 * it failed (why: n bytes). Thread-safe, as is put. */
int lw_remote_get(struct lw_remote *r, const char *key, struct lw_buf *out,
                  char *why, size_t n);
/* 0 when stored, -1 with why. */
int lw_remote_put(struct lw_remote *r, const char *key, const void *data,
                  size_t size, char *why, size_t n);
void lw_remote_close(struct lw_remote *r);

struct lw_cache_stats {
  size_t entries;
  uint64_t bytes;
  uint64_t n[LW_CACHE_NCOUNTS]; /* since the directory was made */
};
/* What the cache in `dir` holds (for fatpack cache). */
int lw_cache_stats(const char *dir, struct lw_cache_stats *st);
/* Removes the least recently used entries until at most 90% of `limit`
 * bytes are left (0: all); *removed counts them. */
int lw_cache_prune(const char *dir, uint64_t limit, size_t *removed);

#endif
