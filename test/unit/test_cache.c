/* test_cache.c - the cache's hash (BLAKE2b-256 against digests Python's
 * hashlib.blake2b(digest_size=32) gives, across block boundaries) and its
 * store: put then get, a miss, a damaged entry (seen, removed, a miss),
 * eviction to a size bound, oldest first, and an unusable directory. */
#include "check.h"
#include "cache/cache.h"
#include "run/run.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void digest(const void *p, size_t n, char hex[2 * LW_HASH_SIZE + 1]) {
  struct lw_hash h;
  unsigned char out[LW_HASH_SIZE];
  lw_hash_init(&h);
  /* In pieces of 7 bytes: the buffering must not matter. */
  for (size_t i = 0; i < n; i += 7)
    lw_hash_update(&h, (const char *)p + i, n - i < 7 ? n - i : 7);
  lw_hash_final(&h, out);
  lw_hash_hex(out, hex);
}

static void test_hash(void) {
  char hex[2 * LW_HASH_SIZE + 1];
  digest("", 0, hex);
  CHECK(!strcmp(
      hex, "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"));
  digest("abc", 3, hex);
  CHECK(!strcmp(
      hex, "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"));
  unsigned char big[1280];
  for (size_t i = 0; i < sizeof big; i++)
    big[i] = (unsigned char)i;
  digest(big, sizeof big, hex);
  CHECK(!strcmp(
      hex, "82628cbfc9689e234b0923a531f4578fe2e7138a03e2f81ed6cde97517336650"));
  /* Exactly one block (the last block is compressed only at the end), and
   * one byte more. */
  digest(big, 128, hex);
  CHECK(!strcmp(
      hex, "c3582f71ebb2be66fa5dd750f80baae97554f3b015663c8be377cfcb2488c1d1"));
  digest(big, 129, hex);
  CHECK(!strcmp(
      hex, "f7f3c46ba2564ff4c4c162da1f5b605f9f1c4aa6a20652a9f9a337c1a2f5b9c9"));
}

static void key(unsigned char k[LW_HASH_SIZE], const char *s) {
  struct lw_hash h;
  lw_hash_init(&h);
  lw_hash_str(&h, s);
  lw_hash_final(&h, k);
}

static void test_store(void) {
  char dir[] = "/tmp/fatlink-cache-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char *path = lw_xasprintf("%s/c", dir);
  struct lw_cache *c = NULL;
  struct lw_diag d = {0};
  struct lw_cache_options o = {.dir = path};
  CHECK(lw_cache_open(&o, &c, &d) == 0 && c);
  unsigned char k1[LW_HASH_SIZE], k2[LW_HASH_SIZE];
  key(k1, "one");
  key(k2, "two");
  struct lw_buf b = {0};
  CHECK(lw_cache_get(c, k1, "one", &b) == 0);
  lw_cache_put(c, k1, "payload-one", 11);
  CHECK(lw_cache_get(c, k1, "one", &b) == 1 && b.len == 11 &&
        !memcmp(b.data, "payload-one", 11));
  lw_buf_free(&b);
  /* A damaged entry: one payload byte changed. */
  char hex[2 * LW_HASH_SIZE + 1];
  lw_hash_hex(k1, hex);
  char *entry = lw_xasprintf("%s/%.2s/%s", path, hex, hex + 2);
  FILE *f = fopen(entry, "r+b");
  CHECK(f && fseek(f, -1, SEEK_END) == 0 && fputc('X', f) != EOF);
  if (f)
    fclose(f);
  CHECK(lw_cache_get(c, k1, "one", &b) == 0);
  CHECK(access(entry, F_OK) != 0); /* removed */
  /* Truncated. */
  lw_cache_put(c, k1, "payload-one", 11);
  CHECK(truncate(entry, 20) == 0);
  CHECK(lw_cache_get(c, k1, "one", &b) == 0);
  lw_cache_put(c, k1, "payload-one", 11);
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  CHECK(utimensat(AT_FDCWD, entry, old, 0) == 0); /* the older one */
  lw_cache_put(c, k2, "payload-two", 11);
  struct lw_cache_stats st;
  CHECK(lw_cache_stats(path, &st) == 0 && st.entries == 2);
  /* A bound that holds one entry: the older goes. */
  size_t removed;
  CHECK(lw_cache_prune(path, st.bytes - 1, &removed) == 0 && removed == 1);
  CHECK(lw_cache_get(c, k1, "one", &b) == 0);
  CHECK(lw_cache_get(c, k2, "two", &b) == 1);
  lw_buf_free(&b);
  CHECK(lw_cache_prune(path, 0, &removed) == 0 && removed == 1);
  CHECK(lw_cache_stats(path, &st) == 0 && st.entries == 0);
  lw_cache_close(c);
  /* A directory under a file cannot be made: a warning, no cache. */
  char *bad = lw_xasprintf("%s/plain", path);
  FILE *plain = fopen(bad, "w");
  if (plain)
    fclose(plain);
  char *under = lw_xasprintf("%s/sub", bad);
  struct lw_cache *none = (struct lw_cache *)1;
  struct lw_cache_options uo = {.dir = under};
  CHECK(lw_cache_open(&uo, &none, &d) == 0 && none == NULL);
  CHECK(lw_cache_get(none, k2, "two", &b) == 0);
  lw_cache_put(none, k2, "x", 1); /* nothing, no crash */
  free(under);
  unlink(bad);
  free(bad);
  free(entry);
  char *cmd = lw_xasprintf("rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  free(cmd);
  free(path);
}

/* The remote layer's URLs: what opens (nothing is connected yet) and what
 * is refused, by the option's name. */
static void test_remote_urls(void) {
  static const char *const good[] = {
      "redis://127.0.0.1", "redis://cache.example:7000", "redis://h:6379/3",
      "redis://h/", "http://127.0.0.1:8080/cache", "https://h/c/",
      "HTTP://h"};
  static const char *const bad[] = {
      "ftp://h/x",     "redis://",       "redis://:6379", "redis://h:0",
      "redis://h:99999", "redis://h:x",  "redis://h/db",  "http://",
      "http:///path",  "h:6379",         ""};
  struct lw_diag d = {0};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    struct lw_remote *r = NULL;
    CHECK(lw_remote_open(good[i], 100, &r, &d) == 0 && r);
    CHECK(r && strcmp(lw_remote_name(r), good[i]) == 0);
    lw_remote_close(r);
  }
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct lw_remote *r = (struct lw_remote *)1;
    CHECK(lw_remote_open(bad[i], 100, &r, &d) == LW_EINVAL && r == NULL);
    CHECK(strstr(d.msg, "invalid --cache-remote URL") != NULL);
  }
}

int main(void) {
  test_remote_urls();
  test_hash();
  test_store();
  return check_report("cache");
}
