/* ccob.c - compressed offload bundles ("CCOB"), as clang-offload-bundler
 * --compress writes them: a header, then a zlib or zstd stream that inflates
 * to a binary bundle (bundle.c).
 *   v1: "CCOB" version:u16 method:u16 size:u32 hash:u64           (16 bytes)
 *   v2: "CCOB" version:u16 method:u16 file:u32 size:u32 hash:u64  (20 bytes)
 *   v3: "CCOB" version:u16 method:u16 file:u64 size:u64 hash:u64  (32 bytes)
 * method 0 is zlib, 1 zstd; `size` is the inflated size, `file` the size of
 * header plus stream (v1 streams run to the end of the buffer). The inflated
 * size must be exactly what the header says. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static uint64_t rd(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* Largest inflated size we accept for a given stream (no codec reaches a
 * ratio of 1:4096 on real device code; a larger claim is a lie). */
static int plausible(uint64_t inflated, uint64_t packed) {
  return inflated <= (uint64_t)1 << 34 &&
         (packed == 0 ? inflated == 0 : inflated / packed <= 4096);
}

static int match_ccob(const unsigned char *head, size_t len) {
  return len >= 4 && memcmp(head, "CCOB", 4) == 0;
}

static int scan_ccob(struct ex_set *set, const unsigned char *buf, size_t len,
                     const char *origin, struct lw_diag *d) {
  if (len < 8)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "truncated compressed bundle header");
  unsigned version = (unsigned)rd(buf + 4, 2), method = (unsigned)rd(buf + 6, 2);
  size_t hdr = version == 1 ? 16 : version == 2 ? 20 : version == 3 ? 32 : 0;
  if (!hdr)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "unsupported compressed bundle version %u", version);
  if (len < hdr)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "truncated compressed bundle header");
  uint64_t file = len, size;
  if (version == 1) {
    size = rd(buf + 8, 4);
  } else if (version == 2) {
    file = rd(buf + 8, 4);
    size = rd(buf + 12, 4);
  } else {
    file = rd(buf + 8, 8);
    size = rd(buf + 16, 8);
  }
  if (method > 1)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "unknown compression method %u in compressed bundle",
                         method);
  if (file < hdr || file > len)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "compressed bundle of %llu bytes is truncated (%zu "
                         "bytes available)",
                         (unsigned long long)file, len);
  const unsigned char *src = buf + hdr;
  size_t packed = (size_t)file - hdr;
  if (!plausible(size, packed))
    return lw_error_path(d, LW_EFORMAT, origin,
                         "compressed bundle claims an implausible inflated "
                         "size of %llu bytes",
                         (unsigned long long)size);
  unsigned char *out = malloc(size ? (size_t)size : 1);
  if (!out)
    return lw_error(d, LW_ENOMEM, "out of memory");
  int ok;
  if (method == 1) {
    size_t r = ZSTD_decompress(out, (size_t)size, src, packed);
    ok = !ZSTD_isError(r) && r == size;
  } else {
    uLongf dlen = (uLongf)size;
    ok = uncompress(out, &dlen, src, (uLong)packed) == Z_OK && dlen == size;
  }
  if (!ok) {
    free(out);
    return lw_error_path(d, LW_EFORMAT, origin,
                         "compressed bundle does not inflate to its stated "
                         "%llu bytes (%s stream)",
                         (unsigned long long)size, method ? "zstd" : "zlib");
  }
  if (ex__own(set, out, (size_t)size, 0))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return ex__parse_bundle(set, out, (size_t)size, origin, "compressed bundle",
                          d);
}

const struct ex__format ex__format_ccob = {"compressed bundle", match_ccob,
                                           scan_ccob};

int ex_write_compressed_bundle(const unsigned char *in, size_t len, int zstd,
                               struct lw_buf *out) {
  size_t cap = zstd ? ZSTD_compressBound(len) : compressBound((uLong)len);
  unsigned char *z = malloc(cap ? cap : 1);
  if (!z)
    return LW_ENOMEM;
  size_t packed;
  if (zstd) {
    packed = ZSTD_compress(z, cap, in, len, 3);
    if (ZSTD_isError(packed)) {
      free(z);
      return LW_EIO;
    }
  } else {
    uLongf dl = (uLongf)cap;
    if (compress2(z, &dl, in, (uLong)len, 6) != Z_OK) {
      free(z);
      return LW_EIO;
    }
    packed = dl;
  }
  unsigned char h[32] = {'C', 'C', 'O', 'B', 3, 0, (unsigned char)(zstd ? 1 : 0), 0};
  uint64_t file = 32 + (uint64_t)packed;
  for (int i = 0; i < 8; i++) {
    h[8 + i] = (unsigned char)(file >> (8 * i));
    h[16 + i] = (unsigned char)((uint64_t)len >> (8 * i));
  }
  int rc = lw_buf_append(out, h, 32);
  if (!rc)
    rc = lw_buf_append(out, z, packed);
  free(z);
  return rc;
}
