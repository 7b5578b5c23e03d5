/* hash.c - the cache's content hash: BLAKE2b with a 32-byte digest
 * (RFC 7693), from the reference BLAKE2 library (Debian's libb2). A cache
 * keyed by content, and shared between machines (a remote layer), needs a
 * hash that no two inputs share by accident or by design: XXH3-128 is ten
 * times faster but not collision-resistant, and the keys are cheap beside
 * what they save (measured on LLVM's 150 MB library: libb2 730 MB/s,
 * XXH3-128 7.2 GB/s; a 200-byte key 0.4 us). The digests are the ones
 * fatlink's own BLAKE2b gave before, so existing cache entries stay valid.
 * Fields are framed here so that consecutive ones never run together. */
#include "cache/cache.h"

#include <string.h>

void lw_hash_init(struct lw_hash *s) { blake2b_init(&s->s, LW_HASH_SIZE); }

void lw_hash_update(struct lw_hash *s, const void *p, size_t n) {
  blake2b_update(&s->s, p, n);
}

void lw_hash_str(struct lw_hash *s, const char *str) {
  uint64_t n = str ? strlen(str) : UINT64_MAX;
  lw_hash_u64(s, n);
  if (str)
    lw_hash_update(s, str, (size_t)n);
}

void lw_hash_u64(struct lw_hash *s, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  lw_hash_update(s, b, 8);
}

void lw_hash_final(struct lw_hash *s, unsigned char out[LW_HASH_SIZE]) {
  blake2b_final(&s->s, out, LW_HASH_SIZE);
}

void lw_hash_hex(const unsigned char h[LW_HASH_SIZE],
                 char out[2 * LW_HASH_SIZE + 1]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < LW_HASH_SIZE; i++) {
    out[2 * i] = digits[h[i] >> 4];
    out[2 * i + 1] = digits[h[i] & 15];
  }
  out[2 * LW_HASH_SIZE] = 0;
}
