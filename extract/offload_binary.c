/* offload_binary.c - the OffloadBinary format (magic 10 FF 10 AD).
 *
 * Layout, all little-endian, offsets from the blob's first byte:
 *   header  v1/v2: magic[4] version:u32 size:u64 entries_off:u64 x:u64
 *           (x is the entry size in v1, the entry count from v2 on)
 *           v3 adds inflated_size:u64 (non-zero: everything after the
 *           header is zlib or zstd compressed)
 *   entry   image_kind:u16 offload_kind:u16 flags:u32 strings_off:u64
 *           nstrings:u64 image_off:u64 image_size:u64
 *   string  key_off:u64 value_off:u64 (+ value_size:u64 from v2 on)
 * Several blobs may follow each other in one section, each starting 8-byte
 * aligned. Every field is read with bounds checks through memcpy, so a blob
 * needs no alignment and a lying field cannot make us read past the buffer. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

enum { ENTRY_SIZE = 40, HEADER_V1 = 32, HEADER_V3 = 40, MAX_VERSION = 3 };

static const unsigned char magic[4] = {0x10, 0xFF, 0x10, 0xAD};

static uint16_t rd16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) {
  return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}
static void wr16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void wr32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
static void wr64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

const char *ex_offload_kind_name(unsigned kind) {
  switch (kind) {
  case EX_OFK_OPENMP: return "openmp";
  case EX_OFK_CUDA: return "cuda";
  case EX_OFK_HIP: return "hip";
  case EX_OFK_SYCL: return "sycl";
  case EX_OFK_HOST: return "host";
  }
  return "none";
}

const char *ex_image_kind_name(unsigned kind) {
  static const char *names[] = {"none", "o", "bc", "cubin", "fatbin", "s",
                                "spv"};
  return kind < LW_ARRAY_SIZE(names) ? names[kind] : "none";
}

/* Copies the NUL-terminated string at `off` of a blob of `size` bytes. */
static int read_cstr(const unsigned char *b, uint64_t size, uint64_t off,
                     char **out, size_t *len) {
  if (off >= size)
    return -1;
  const unsigned char *nul = memchr(b + off, 0, (size_t)(size - off));
  if (!nul)
    return -1;
  size_t n = (size_t)(nul - (b + off));
  if (!(*out = malloc(n + 1)))
    return LW_ENOMEM;
  memcpy(*out, b + off, n + 1);
  if (len)
    *len = n;
  return 0;
}

static void free_strings(struct ex_string *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(s[i].key);
    free(s[i].value);
  }
  free(s);
}

static int parse_strings(struct ex_image *img, const unsigned char *b,
                         uint64_t size, uint32_t version, uint64_t off,
                         uint64_t n, const char *origin, struct lw_diag *d) {
  uint64_t esize = version == 1 ? 16 : 24;
  if (off > size || n > (size - off) / esize)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "offload binary string table (%llu entries at offset "
                         "%llu) runs past the end of the %llu-byte blob",
                         (unsigned long long)n, (unsigned long long)off,
                         (unsigned long long)size);
  if (n == 0)
    return 0;
  if (!(img->strings = calloc((size_t)n, sizeof *img->strings)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (uint64_t i = 0; i < n; i++) {
    const unsigned char *e = b + off + i * esize;
    struct ex_string *s = &img->strings[i];
    img->nstrings = (size_t)i + 1;
    uint64_t key = rd64(e), val = rd64(e + 8);
    int rc = read_cstr(b, size, key, &s->key, NULL);
    if (rc == 0 && version == 1)
      rc = read_cstr(b, size, val, &s->value, &s->value_len);
    else if (rc == 0) {
      uint64_t vlen = rd64(e + 16);
      if (val > size || vlen > size - val)
        rc = -1;
      else if (!(s->value = malloc((size_t)vlen + 1)))
        rc = LW_ENOMEM;
      else {
        memcpy(s->value, b + val, (size_t)vlen);
        s->value[vlen] = 0;
        s->value_len = (size_t)vlen;
      }
    }
    if (rc == LW_ENOMEM)
      return lw_error(d, LW_ENOMEM, "out of memory");
    if (rc)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "offload binary string %llu is out of bounds or "
                           "not terminated",
                           (unsigned long long)i);
    if (strcmp(s->key, "triple") == 0)
      img->triple = s->value;
    else if (strcmp(s->key, "arch") == 0)
      img->arch = s->value;
  }
  return 0;
}

static int parse_blob(struct ex_set *set, const unsigned char *b,
                      uint64_t size, const char *origin, const char *format,
                      struct lw_diag *d);

/* Inflates a v3 blob whose body follows the header compressed. */
static int inflate_blob(struct ex_set *set, const unsigned char *b,
                        uint64_t size, uint64_t entries_off, uint64_t inflated,
                        const char *origin, const char *format,
                        struct lw_diag *d) {
  if (entries_off < HEADER_V3 || entries_off > size || inflated < entries_off)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "compressed offload binary has a bad header");
  /* A decompressed size far beyond what any compressor reaches is a lie. */
  uint64_t body = inflated - entries_off, packed = size - entries_off;
  if (body > (uint64_t)1 << 34 || (body && !packed) ||
      (packed && body / packed > 4096))
    return lw_error_path(d, LW_EFORMAT, origin,
                         "compressed offload binary claims an implausible "
                         "inflated size of %llu bytes",
                         (unsigned long long)inflated);
  unsigned char *out = malloc((size_t)inflated ? (size_t)inflated : 1);
  if (!out)
    return lw_error(d, LW_ENOMEM, "out of memory");
  memcpy(out, b, (size_t)entries_off);
  wr64(out + 8, inflated); /* size */
  wr64(out + 32, 0);       /* no longer compressed */
  const unsigned char *src = b + entries_off;
  int ok;
  if (packed >= 4 && rd32(src) == 0xFD2FB528u) {
    size_t r = ZSTD_decompress(out + entries_off, (size_t)body, src,
                               (size_t)packed);
    ok = !ZSTD_isError(r) && r == body;
  } else {
    uLongf dlen = (uLongf)body;
    ok = uncompress(out + entries_off, &dlen, src, (uLong)packed) == Z_OK &&
         dlen == body;
  }
  if (!ok) {
    free(out);
    return lw_error_path(d, LW_EFORMAT, origin,
                         "compressed offload binary does not inflate to its "
                         "stated %llu bytes",
                         (unsigned long long)inflated);
  }
  if (ex__own(set, out, (size_t)inflated, 0))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return parse_blob(set, out, inflated, origin, format, d);
}

/* Parses one blob of exactly `size` bytes. */
static int parse_blob(struct ex_set *set, const unsigned char *b,
                      uint64_t size, const char *origin, const char *format,
                      struct lw_diag *d) {
  uint32_t version = rd32(b + 4);
  uint64_t entries_off = rd64(b + 16);
  uint64_t count = version == 1 ? 1 : rd64(b + 24);
  if (version >= 3) {
    if (size < HEADER_V3)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "truncated offload binary header");
    uint64_t inflated = rd64(b + 32);
    if (inflated)
      return inflate_blob(set, b, size, entries_off, inflated, origin, format,
                          d);
  }
  uint64_t hdr = version >= 3 ? HEADER_V3 : HEADER_V1;
  if (entries_off < hdr)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "offload binary entries (at offset %llu) overlap its "
                         "header",
                         (unsigned long long)entries_off);
  if (entries_off > size || count > (size - entries_off) / ENTRY_SIZE)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "offload binary entries (%llu at offset %llu) run "
                         "past the end of the %llu-byte blob",
                         (unsigned long long)count,
                         (unsigned long long)entries_off,
                         (unsigned long long)size);
  for (uint64_t i = 0; i < count; i++) {
    const unsigned char *e = b + entries_off + i * ENTRY_SIZE;
    struct ex_image img = {0};
    img.image_kind = rd16(e);
    img.offload_kind = rd16(e + 2);
    img.flags = rd32(e + 4);
    img.version = version;
    img.format = format;
    img.triple = img.arch = "";
    uint64_t img_off = rd64(e + 24), img_size = rd64(e + 32);
    int rc = 0;
    if (img_size && img_off < entries_off + count * ENTRY_SIZE)
      rc = lw_error_path(d, LW_EFORMAT, origin,
                         "offload binary image (at offset %llu) overlaps its "
                         "header or entries",
                         (unsigned long long)img_off);
    else if (img_off > size || img_size > size - img_off)
      rc = lw_error_path(d, LW_EFORMAT, origin,
                         "offload binary image (%llu bytes at offset %llu) "
                         "runs past the end of the %llu-byte blob",
                         (unsigned long long)img_size,
                         (unsigned long long)img_off,
                         (unsigned long long)size);
    if (!rc)
      rc = parse_strings(&img, b, size, version, rd64(e + 8), rd64(e + 16),
                         origin, d);
    if (!rc) { /* in bounds: the offset may be anything else */
      img.data = b + img_off;
      img.size = (size_t)img_size;
    }
    if (!rc && !(img.origin = strdup(origin)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    if (!rc)
      rc = ex__add_image(set, &img);
    if (rc) {
      free_strings(img.strings, img.nstrings);
      free(img.origin);
      return lw_error(d, rc, "out of memory");
    }
  }
  return 0;
}

int ex_parse_offload_binaries(struct ex_set *set, const unsigned char *buf,
                              size_t len, const char *origin,
                              struct lw_diag *d) {
  return ex__parse_offload_binaries(set, buf, len, origin, "offload binary",
                                    d);
}

int ex__parse_offload_binaries(struct ex_set *set, const unsigned char *buf,
                               size_t len, const char *origin,
                               const char *format, struct lw_diag *d) {
  size_t off = 0;
  while (off < len) {
    const unsigned char *b = buf + off;
    size_t left = len - off;
    /* Zero padding between or after blobs is allowed. */
    if (b[0] == 0) {
      off++;
      continue;
    }
    if (left < HEADER_V1 || memcmp(b, magic, 4) != 0)
      return lw_error_path(d, LW_EFORMAT, origin,
                           left < HEADER_V1 && memcmp(b, magic, left < 4 ? left : 4) == 0
                               ? "truncated offload binary header"
                               : "offloading section holds no offload binary "
                                 "at offset %zu",
                           off);
    uint32_t version = rd32(b + 4);
    if (version == 0 || version > MAX_VERSION)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "unsupported offload binary version %u", version);
    uint64_t size = rd64(b + 8);
    if (size < HEADER_V1 || size > left)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "offload binary of %llu bytes is truncated (%zu "
                           "bytes available)",
                           (unsigned long long)size, left);
    int rc = parse_blob(set, b, size, origin, format, d);
    if (rc)
      return rc;
    size_t next = off + (size_t)size;
    off = (next + 7) & ~(size_t)7;
    if (off < next) /* overflow */
      break;
  }
  return 0;
}

/* The string table as LLVM's writer lays it out (an ELF-style table: a
 * leading NUL, which the empty string is; the others in descending order
 * of their reversed bytes, so that a string that ends another directly
 * follows it and shares its tail), so that an OffloadBinary written here
 * equals llvm-offload-binary's byte for byte. */
struct tab_str {
  const char *s;
  size_t len, at;
};

static int by_reversed_desc(const void *a, const void *b) {
  const struct tab_str *x = a, *y = b;
  for (size_t i = 1; i <= x->len && i <= y->len; i++) {
    unsigned char cx = (unsigned char)x->s[x->len - i];
    unsigned char cy = (unsigned char)y->s[y->len - i];
    if (cx != cy)
      return cx < cy ? 1 : -1;
  }
  return (x->len < y->len) - (x->len > y->len);
}

/* Lays out v[0..n) (sorted here); returns the table's size. */
static size_t lay_out(struct tab_str *v, size_t n) {
  qsort(v, n, sizeof *v, by_reversed_desc);
  size_t size = 1;
  const struct tab_str *prev = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!v[i].len) {
      v[i].at = 0;
    } else if (prev && prev->len >= v[i].len &&
               memcmp(prev->s + prev->len - v[i].len, v[i].s, v[i].len) == 0) {
      v[i].at = prev->at + prev->len - v[i].len;
    } else {
      v[i].at = size;
      size += v[i].len + 1;
      prev = &v[i];
    }
  }
  return size;
}

static size_t offset_of(const struct tab_str *v, size_t n, const char *s,
                        size_t len) {
  struct tab_str key = {s, len, 0};
  const struct tab_str *f = bsearch(&key, v, n, sizeof *v, by_reversed_desc);
  return f ? f->at : 0;
}

int ex_write_offload_binaries(const struct ex_write_image *imgs, size_t n,
                              uint32_t version, struct lw_buf *out,
                              size_t *image_offs) {
  /* Header, the entries, every entry's string entries, the string table,
   * then each image 8-byte aligned. Version 1 holds one entry and its
   * strings end at their NUL; from version 2 on a string's size is given. */
  if (n == 0 || (version == 1 && n != 1) || version > 2)
    return LW_EINVAL;
  size_t se_size = version == 1 ? 16 : 24, nstr = 0;
  for (size_t k = 0; k < n; k++)
    nstr += imgs[k].nstrings;
  struct tab_str *tab = calloc(2 * nstr + 1, sizeof *tab);
  if (!tab)
    return LW_ENOMEM;
  size_t ntab = 0;
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < imgs[k].nstrings; i++) {
      const struct ex_string *s = &imgs[k].strings[i];
      tab[ntab++] = (struct tab_str){s->key, strlen(s->key), 0};
      tab[ntab++] = (struct tab_str){s->value, s->value_len, 0};
    }
  size_t strtab = lay_out(tab, ntab);
  size_t str_entries = HEADER_V1 + ENTRY_SIZE * n;
  size_t strtab_off = str_entries + se_size * nstr;
  size_t total = (strtab_off + strtab + 7) & ~(size_t)7;
  size_t *offs = calloc(n, sizeof *offs);
  if (!offs) {
    free(tab);
    return LW_ENOMEM;
  }
  for (size_t k = 0; k < n; k++) {
    offs[k] = total;
    total = (total + imgs[k].size + 7) & ~(size_t)7;
  }
  unsigned char *b = calloc(1, total);
  if (!b) {
    free(tab);
    free(offs);
    return LW_ENOMEM;
  }
  memcpy(b, magic, 4);
  wr32(b + 4, version);
  wr64(b + 8, total);
  wr64(b + 16, HEADER_V1);
  wr64(b + 24, version == 1 ? ENTRY_SIZE : n);
  for (size_t i = 0; i < ntab; i++)
    memcpy(b + strtab_off + tab[i].at, tab[i].s, tab[i].len);
  size_t se = str_entries;
  for (size_t k = 0; k < n; k++) {
    const struct ex_write_image *img = &imgs[k];
    unsigned char *e = b + HEADER_V1 + ENTRY_SIZE * k;
    wr16(e, img->image_kind);
    wr16(e + 2, img->offload_kind);
    wr32(e + 4, img->flags);
    wr64(e + 8, se);
    wr64(e + 16, img->nstrings);
    wr64(e + 24, offs[k]);
    wr64(e + 32, img->size);
    for (size_t i = 0; i < img->nstrings; i++, se += se_size) {
      const struct ex_string *s = &img->strings[i];
      wr64(b + se, strtab_off + offset_of(tab, ntab, s->key, strlen(s->key)));
      wr64(b + se + 8,
           strtab_off + offset_of(tab, ntab, s->value, s->value_len));
      if (version > 1)
        wr64(b + se + 16, s->value_len);
    }
    if (img->size)
      memcpy(b + offs[k], img->data, img->size);
    if (image_offs)
      image_offs[k] = offs[k];
  }
  int rc = lw_buf_append(out, b, total);
  free(b);
  free(offs);
  free(tab);
  return rc;
}

int ex_write_offload_binary(const struct ex_write_image *img,
                            struct lw_buf *out, size_t *image_off_out) {
  return ex_write_offload_binaries(img, 1, 1, out, image_off_out);
}

int ex_write_symbol_table(const char *const *names, size_t n,
                          struct lw_buf *out) {
  size_t at = 4 + 8 * n;
  unsigned char w[8];
  wr32(w, (uint32_t)n);
  int rc = lw_buf_append(out, w, 4);
  for (size_t i = 0; !rc && i < n; i++) {
    size_t len = strlen(names[i]);
    wr32(w, (uint32_t)at);
    wr32(w + 4, (uint32_t)len);
    rc = lw_buf_append(out, w, 8);
    at += len + 1;
  }
  for (size_t i = 0; !rc && i < n; i++)
    rc = lw_buf_append(out, names[i], strlen(names[i]) + 1);
  return rc;
}

size_t ex_read_symbol_table(const unsigned char *v, size_t n) {
  if (n < 4)
    return SIZE_MAX;
  uint32_t count = rd32(v);
  if (count > (n - 4) / 8)
    return SIZE_MAX;
  for (uint32_t k = 0; k < count; k++) {
    uint32_t off = rd32(v + 4 + 8 * k), len = rd32(v + 8 + 8 * k);
    if (off > n || len >= n - off || v[off + len])
      return SIZE_MAX;
  }
  return count;
}

struct ex_symbol ex_symbol_at(const unsigned char *v, size_t k) {
  return (struct ex_symbol){(const char *)v + rd32(v + 4 + 8 * k),
                            rd32(v + 8 + 8 * k)};
}

static int match_offload_binary(const unsigned char *head, size_t len) {
  return len >= 4 && memcmp(head, magic, 4) == 0;
}

const struct ex__format ex__format_offload_binary = {
    "offload binary", match_offload_binary, ex_parse_offload_binaries};
