/* bundle.c - the clang-offload-bundler format (the old offload model).
 *
 * A binary bundle is
 *   "__CLANG_OFFLOAD_BUNDLE__" (24 bytes) count:u64
 *   count x { offset:u64 size:u64 id_size:u64 id[id_size] }
 * followed by the entries' bytes at their offsets (from the bundle's start).
 * An id is "<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]", older ones
 * "<kind>-<triple>". The host entry carries no device code and is skipped,
 * except DPC++'s host-<fpga triple>, which describes an FPGA binary beside
 * it (kind EX_OFK_HOST); every other entry becomes an image whose kind,
 * triple and arch come from the id and whose image kind is read off its
 * first bytes. Bundles also come embedded as ELF sections named
 * __CLANG_OFFLOAD_BUNDLE__<id> (elf.c), as text (text_bundle.c) and
 * compressed (ccob.c). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
enum { MAGIC_LEN = 24 };

static uint64_t rd64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static const struct {
  const char *name;
  uint16_t kind;
} kinds[] = {
    {"openmp", EX_OFK_OPENMP}, {"cuda", EX_OFK_CUDA}, {"hip", EX_OFK_HIP},
    {"hipv4", EX_OFK_HIP},     {"sycl", EX_OFK_SYCL},
};

unsigned ex_sniff_image_kind(const unsigned char *p, size_t n) {
  if (n >= 4 && memcmp(p, "\x7f" "ELF", 4) == 0)
    return EX_IMG_OBJECT;
  if (n >= 4 && memcmp(p, "BC\xc0\xde", 4) == 0)
    return EX_IMG_BITCODE;
  /* A bitcode wrapper header (0x0B17C0DE). */
  if (n >= 4 && memcmp(p, "\xde\xc0\x17\x0b", 4) == 0)
    return EX_IMG_BITCODE;
  if (n >= 4 && memcmp(p, "\x03\x02\x23\x07", 4) == 0)
    return EX_IMG_SPIRV;
  return EX_IMG_NONE;
}

/* Splits an id into kind, triple and arch (strings owned by the image). */
static int parse_id(const char *id, size_t len, struct ex_image *img,
                    int *host, const char *origin, struct lw_diag *d) {
  const char *dash = memchr(id, '-', len);
  if (!dash || dash == id)
    return lw_error_path(d, LW_EFORMAT, origin, "bad bundle id '%.*s'",
                         (int)len, id);
  size_t klen = (size_t)(dash - id);
  *host = klen == 4 && memcmp(id, "host", 4) == 0;
  if (*host && len - klen - 1 > 5 && memcmp(dash + 1, "fpga_", 5) == 0) {
    *host = 0;
    img->offload_kind = EX_OFK_HOST;
  }
  if (*host)
    return 0;
  for (size_t k = 0; !img->offload_kind && k < LW_ARRAY_SIZE(kinds); k++)
    if (strlen(kinds[k].name) == klen && memcmp(kinds[k].name, id, klen) == 0)
      img->offload_kind = kinds[k].kind;
  if (!img->offload_kind)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "unknown offload kind '%.*s' in bundle id '%.*s'",
                         (int)klen, id, (int)len, id);
  /* The triple is the next four components; what follows the fourth '-'
   * is the arch (target id), possibly empty. */
  const char *t = dash + 1, *end = id + len, *p = t;
  for (int seen = 0; p < end; p++)
    if (*p == '-' && ++seen == 4)
      break;
  const char *tend = p, *arch = p < end ? p + 1 : end;
  while (tend > t && tend[-1] == '-') /* empty environment */
    tend--;
  img->nstrings = 2;
  if (!(img->strings = calloc(2, sizeof *img->strings)))
    return LW_ENOMEM;
  struct ex_string *s = img->strings;
  s[0].key = strdup("triple");
  s[0].value = strndup(t, (size_t)(tend - t));
  s[1].key = strdup("arch");
  s[1].value = strndup(arch, (size_t)(end - arch));
  if (!s[0].key || !s[0].value || !s[1].key || !s[1].value)
    return LW_ENOMEM;
  s[0].value_len = strlen(s[0].value);
  s[1].value_len = strlen(s[1].value);
  img->triple = s[0].value;
  img->arch = s[1].value;
  return 0;
}

int ex__add_bundle_entry(struct ex_set *set, const char *id, size_t idlen,
                         const unsigned char *data, size_t size,
                         unsigned image_kind, const char *origin,
                         const char *format, struct lw_diag *d) {
  struct ex_image img = {0};
  int host = 0;
  int rc = parse_id(id, idlen, &img, &host, origin, d);
  if (!rc && host)
    return 0;
  if (!rc) {
    img.image_kind = (uint16_t)(image_kind ? image_kind
                                           : ex_sniff_image_kind(data, size));
    img.data = data;
    img.size = size;
    img.format = format;
    if (!(img.origin = strdup(origin)))
      rc = LW_ENOMEM;
  }
  if (!rc)
    rc = ex__add_image(set, &img);
  if (rc) {
    for (size_t i = 0; i < img.nstrings; i++) {
      free(img.strings[i].key);
      free(img.strings[i].value);
    }
    free(img.strings);
    free(img.origin);
    return rc == LW_ENOMEM ? lw_error(d, rc, "out of memory") : rc;
  }
  return 0;
}

int ex__parse_bundle(struct ex_set *set, const unsigned char *buf, size_t len,
                     const char *origin, const char *format,
                     struct lw_diag *d) {
  if (len < MAGIC_LEN + 8)
    return lw_error_path(d, LW_EFORMAT, origin, "truncated bundle header");
  uint64_t n = rd64(buf + MAGIC_LEN);
  size_t pos = MAGIC_LEN + 8;
  if (n > (len - pos) / 24)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "bundle claims %llu entries in %zu bytes",
                         (unsigned long long)n, len);
  for (uint64_t i = 0; i < n; i++) {
    if (len - pos < 24)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "truncated bundle entry %llu",
                           (unsigned long long)i);
    uint64_t off = rd64(buf + pos), size = rd64(buf + pos + 8),
             idlen = rd64(buf + pos + 16);
    pos += 24;
    if (idlen > len - pos)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "bundle entry %llu id runs past the end",
                           (unsigned long long)i);
    const char *id = (const char *)buf + pos;
    pos += (size_t)idlen;
    if (off > len || size > len - off)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "bundle entry '%.*s' (%llu bytes at %llu) runs "
                           "past the end of %zu bytes",
                           (int)idlen, id, (unsigned long long)size,
                           (unsigned long long)off, len);
    int rc = ex__add_bundle_entry(set, id, (size_t)idlen, buf + off,
                                  (size_t)size, 0, origin, format, d);
    if (rc)
      return rc;
  }
  return 0;
}

static int match_bundle(const unsigned char *head, size_t len) {
  return len >= MAGIC_LEN && memcmp(head, magic, MAGIC_LEN) == 0;
}

static int scan_bundle(struct ex_set *set, const unsigned char *buf,
                       size_t len, const char *origin, struct lw_diag *d) {
  return ex__parse_bundle(set, buf, len, origin, "bundle", d);
}

const struct ex__format ex__format_bundle = {"bundle", match_bundle,
                                             scan_bundle};

char *ex_bundle_id(const char *kind, const char *triple, const char *arch) {
  int dashes = 0;
  for (const char *p = triple; *p; p++)
    dashes += *p == '-';
  /* Pad to four components: an empty environment. */
  const char *pad = dashes >= 3 ? "" : dashes == 2 ? "-" : "--";
  return lw_xasprintf("%s-%s%s-%s", kind, triple, pad, arch ? arch : "");
}

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

int ex_write_bundle(const struct ex_bundle_entry *e, size_t n,
                    struct lw_buf *out) {
  size_t hdr = MAGIC_LEN + 8;
  for (size_t i = 0; i < n; i++)
    hdr += 24 + strlen(e[i].id);
  unsigned char w[24];
  put64(w, n);
  if (lw_buf_append(out, magic, MAGIC_LEN) || lw_buf_append(out, w, 8))
    return LW_ENOMEM;
  size_t off = hdr;
  for (size_t i = 0; i < n; i++) {
    size_t idlen = strlen(e[i].id);
    put64(w, off);
    put64(w + 8, e[i].size);
    put64(w + 16, idlen);
    if (lw_buf_append(out, w, 24) || lw_buf_append(out, e[i].id, idlen))
      return LW_ENOMEM;
    off += e[i].size;
  }
  for (size_t i = 0; i < n; i++)
    if (lw_buf_append(out, e[i].data, e[i].size))
      return LW_ENOMEM;
  return 0;
}
