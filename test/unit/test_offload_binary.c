/* test_offload_binary.c - the OffloadBinary reader on blobs of every version
 * (1 as written by clang-22, 2 with several entries and sized values, 3
 * compressed with zlib and zstd) and on malformed blobs, each of which must
 * be one clean error, never a read past the buffer (run under ASan). */
#include "check.h"
#include "ex.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* A version-2/3 blob with two entries: "bc" image "AAAA" for spirv64 and an
 * "o" image "BBBBBB" for x86_64, each with a triple and an arch; the arch of
 * the first has a value size that excludes a trailing byte. */
static size_t make_v2(unsigned char *b, uint32_t version) {
  size_t hdr = version >= 3 ? 40 : 32;
  memset(b, 0, 512);
  memcpy(b, "\x10\xff\x10\xad", 4);
  put32(b + 4, version);
  put64(b + 16, hdr);
  put64(b + 24, 2);
  size_t ent = hdr, str = hdr + 80, tab = str + 4 * 24;
  const char table[] = "triple\0spirv64\0arch\0genericX\0x86_64\0";
  memcpy(b + tab, table, sizeof table);
  size_t img = (tab + sizeof table + 7) & ~(size_t)7;
  memcpy(b + img, "AAAABBBBBB", 10);
  size_t size = (img + 10 + 7) & ~(size_t)7;
  put64(b + 8, size);
  for (int e = 0; e < 2; e++) {
    unsigned char *p = b + ent + 40 * e;
    put16(p, e ? 1 : 2);
    put16(p + 2, e ? 1 : 8);
    put64(p + 8, str + 48 * e);
    put64(p + 16, 2);
    put64(p + 24, img + (e ? 4 : 0));
    put64(p + 32, e ? 6 : 4);
  }
  /* strings: triple=spirv64, arch=generic (size 7 of "genericX"), then
   * triple=x86_64, arch="" (size 0) */
  uint64_t s[4][3] = {{tab, tab + 7, 7},
                      {tab + 15, tab + 20, 7},
                      {tab, tab + 29, 6},
                      {tab + 15, tab + 6, 0}};
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 3; k++)
      put64(b + str + 24 * i + 8 * k, s[i][k]);
  return size;
}

static int parse(const unsigned char *b, size_t n, struct ex_set *set,
                 struct lw_diag *d) {
  memset(d, 0, sizeof *d);
  return ex_parse_offload_binaries(set, b, n, "blob", d);
}

static void test_v1_roundtrip(void) {
  struct ex_string strs[2] = {{"triple", "spirv64-unknown-unknown", 23},
                              {"arch", "generic", 7}};
  const unsigned char image[] = "BC\xc0\xde some bitcode";
  struct ex_write_image wi = {EX_IMG_BITCODE, EX_OFK_SYCL, 0, strs, 2, image,
                              sizeof image};
  struct lw_buf b = {0};
  size_t off;
  CHECK(ex_write_offload_binary(&wi, &b, &off) == 0);
  CHECK(b.len % 8 == 0 && off % 8 == 0);
  CHECK(memcmp(b.data + off, image, sizeof image) == 0);
  /* Two blobs back to back, then zero padding. */
  CHECK(ex_write_offload_binary(&wi, &b, NULL) == 0);
  lw_buf_append(&b, "\0\0\0\0\0\0\0\0", 8);
  struct ex_set set = {0};
  struct lw_diag d;
  CHECK(parse(b.data, b.len, &set, &d) == 0);
  CHECK(set.n == 2);
  for (size_t i = 0; i < set.n; i++) {
    CHECK(set.images[i].version == 1);
    CHECK(set.images[i].offload_kind == EX_OFK_SYCL);
    CHECK(set.images[i].image_kind == EX_IMG_BITCODE);
    CHECK(strcmp(set.images[i].triple, "spirv64-unknown-unknown") == 0);
    CHECK(strcmp(set.images[i].arch, "generic") == 0);
    CHECK(set.images[i].size == sizeof image);
    CHECK(memcmp(set.images[i].data, image, sizeof image) == 0);
  }
  ex_set_free(&set);
  lw_buf_free(&b);
}

static void test_v2_v3(void) {
  for (uint32_t v = 2; v <= 3; v++) {
    unsigned char b[512];
    size_t n = make_v2(b, v);
    struct ex_set set = {0};
    struct lw_diag d;
    CHECK(parse(b, n, &set, &d) == 0);
    CHECK(set.n == 2);
    if (set.n == 2) {
      CHECK(strcmp(set.images[0].arch, "generic") == 0);
      CHECK(strcmp(set.images[0].triple, "spirv64") == 0);
      CHECK(set.images[0].size == 4 && memcmp(set.images[0].data, "AAAA", 4) == 0);
      CHECK(strcmp(set.images[1].triple, "x86_64") == 0);
      CHECK(strcmp(set.images[1].arch, "") == 0);
      CHECK(set.images[1].image_kind == EX_IMG_OBJECT);
      CHECK(set.images[1].offload_kind == EX_OFK_OPENMP);
    }
    ex_set_free(&set);
  }
}

/* Compresses the body of a v3 blob; `zstd` picks the codec. `lie` adds to
 * the stated inflated size. */
static size_t compress_v3(unsigned char *out, int zstd, long lie) {
  unsigned char raw[512];
  size_t n = make_v2(raw, 3);
  memcpy(out, raw, 40);
  size_t body = n - 40, packed;
  if (zstd) {
    packed = ZSTD_compress(out + 40, 1024, raw + 40, body, 3);
  } else {
    uLongf dl = 1024;
    compress(out + 40, &dl, raw + 40, body);
    packed = dl;
  }
  size_t size = 40 + packed;
  put64(out + 8, size);
  put64(out + 32, (uint64_t)((long)n + lie));
  return size;
}

static void test_compressed(void) {
  for (int z = 0; z < 2; z++) {
    unsigned char b[2048] = {0};
    size_t n = compress_v3(b, z, 0);
    struct ex_set set = {0};
    struct lw_diag d;
    CHECK(parse(b, n, &set, &d) == 0);
    CHECK(set.n == 2);
    if (set.n == 2)
      CHECK(memcmp(set.images[1].data, "BBBBBB", 6) == 0);
    ex_set_free(&set);
    /* The stated size lies. */
    n = compress_v3(b, z, 8);
    CHECK(parse(b, n, &set, &d) == LW_EFORMAT);
    CHECK(strstr(d.msg, "inflate") != NULL);
    ex_set_free(&set);
    /* A corrupt stream. */
    n = compress_v3(b, z, 0);
    memset(b + 48, 0x5a, 8);
    CHECK(parse(b, n, &set, &d) == LW_EFORMAT);
    ex_set_free(&set);
  }
}

static void expect_error(const unsigned char *b, size_t n, const char *what) {
  struct ex_set set = {0};
  struct lw_diag d;
  /* Copy to an exact-size heap block so ASan sees any overrun. */
  unsigned char *copy = malloc(n ? n : 1);
  memcpy(copy, b, n);
  int rc = parse(copy, n, &set, &d);
  CHECK(rc == LW_EFORMAT);
  if (rc == LW_EFORMAT && (strstr(d.msg, what) == NULL ||
                           strncmp(d.msg, "'blob': ", 8) != 0)) {
    fprintf(stderr, "unexpected message: %s (want %s)\n", d.msg, what);
    CHECK(0);
  }
  ex_set_free(&set);
  free(copy);
}

static void test_malformed(void) {
  unsigned char b[512];
  size_t n = make_v2(b, 2);
  expect_error(b, 20, "truncated offload binary header");
  unsigned char c[512];
  memcpy(c, b, n);
  put64(c + 8, n + 64);
  expect_error(c, n, "truncated");
  memcpy(c, b, n);
  put32(c + 4, 9);
  expect_error(c, n, "unsupported offload binary version 9");
  memcpy(c, b, n);
  put64(c + 24, (uint64_t)1 << 60); /* huge entry count */
  expect_error(c, n, "entries");
  memcpy(c, b, n);
  put64(c + 32 + 24, n - 2); /* image past the end */
  expect_error(c, n, "image");
  memcpy(c, b, n);
  put64(c + 32 + 16, (uint64_t)1 << 58); /* huge string count */
  expect_error(c, n, "string table");
  memcpy(c, b, n);
  memset(c + n - 8, 'x', 8);
  /* key offset pointing at the unterminated tail */
  put64(c + 32 + 80, n - 8);
  expect_error(c, n, "not terminated");
  memcpy(c, b, n);
  c[0] = 0x7f;
  expect_error(c, n, "no offload binary");
}

/* LLVM 23's symbols table: written, read back name by name; a count or
 * an offset past the value, or a name without its NUL, is no table. */
static void test_symbol_table(void) {
  static const char *const names[] = {"_ZTS1A", "", "_ZTS9KernelSum"};
  struct lw_buf b = {0};
  CHECK(ex_write_symbol_table(names, 3, &b) == 0);
  CHECK(b.len == 4 + 3 * 8 + 7 + 1 + 15);
  CHECK(ex_read_symbol_table(b.data, b.len) == 3);
  for (size_t k = 0; k < 3; k++) {
    struct ex_symbol s = ex_symbol_at(b.data, k);
    CHECK(s.len == strlen(names[k]) && memcmp(s.name, names[k], s.len) == 0);
  }
  CHECK(ex_read_symbol_table(b.data, b.len - 1) == SIZE_MAX); /* NUL cut */
  CHECK(ex_read_symbol_table(b.data, 3) == SIZE_MAX);
  b.data[0] = 200; /* a count the value cannot hold */
  CHECK(ex_read_symbol_table(b.data, b.len) == SIZE_MAX);
  b.data[0] = 3;
  b.data[4] = 250; /* the first name's offset past the value */
  CHECK(ex_read_symbol_table(b.data, b.len) == SIZE_MAX);
  lw_buf_free(&b);
  CHECK(ex_write_symbol_table(NULL, 0, &b) == 0 && b.len == 4 &&
        ex_read_symbol_table(b.data, b.len) == 0);
  lw_buf_free(&b);
}

int main(void) {
  test_v1_roundtrip();
  test_v2_v3();
  test_compressed();
  test_malformed();
  test_symbol_table();
  return check_report("offload_binary");
}
