/* cache.h - private to wrapper/: the cache of device results, a store of
 * entries by content (store.c) under BLAKE2b keys (hash.c). What goes into
 * each key is the planners' (plan/keys.c): the store knows bytes only. */
#ifndef LW_CACHE_H
#define LW_CACHE_H

#include "lw_base.h"

/* ---- hash.c: BLAKE2b, 32-byte digests ------------------------------------ */

enum { LW_HASH_SIZE = 32 };

struct lw_hash {
  uint64_t h[8], t[2];
  unsigned char buf[128];
  size_t n;
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

/* Opens (creating) the cache in `dir`, evicted down to `limit` bytes when
 * closed (0: never). One that cannot be used is a warning and *out NULL:
 * every call below takes a NULL cache as always missing. `verbose` says
 * hit or miss. LW_ENOMEM or 0. */
int lw_cache_open(const char *dir, uint64_t limit, int verbose,
                  struct lw_cache **out);
/* 1 with the entry's payload in `out` (owned by the caller), 0 on a miss;
 * `what` names the step for --wrapper-verbose. Thread-safe, as is put. */
int lw_cache_get(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                 const char *what, struct lw_buf *out);
/* Stores an entry; failing to is a warning (once), never an error. */
void lw_cache_put(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                  const void *data, size_t n);
void lw_cache_close(struct lw_cache *c);

struct lw_cache_stats {
  size_t entries;
  uint64_t bytes;
};
/* What the cache in `dir` holds (for fatpack cache). */
int lw_cache_stats(const char *dir, struct lw_cache_stats *st);
/* Removes the least recently used entries until at most 90% of `limit`
 * bytes are left (0: all); *removed counts them. */
int lw_cache_prune(const char *dir, uint64_t limit, size_t *removed);

#endif
