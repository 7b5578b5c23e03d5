/* propset.c - property sets as a value: sets of named properties (32-bit
 * numbers or byte arrays), found, copied, sorted into the order DPC++'s
 * post-link writes them, freed, and read and written in DPC++'s text form.
 * What a module's sets hold is props.c's (and each feature's own file). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dl_encode_byte_array(const void *data, size_t size, uint64_t bits,
                         struct lw_buf *out) {
  unsigned char hdr[8];
  for (int i = 0; i < 8; i++)
    hdr[i] = (unsigned char)(bits >> (8 * i));
  int rc = lw_buf_append(out, hdr, 8);
  return rc ? rc : lw_buf_append(out, data, size);
}

const struct dl_prop *dl_props_find(const struct dl_props *p, const char *set,
                                    const char *name) {
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->s[i].name, set) == 0)
      for (size_t k = 0; k < p->s[i].n; k++)
        if (strcmp(p->s[i].p[k].name, name) == 0)
          return &p->s[i].p[k];
  return NULL;
}

size_t dl_prop_u32s(const struct dl_prop *pr, uint32_t *out, size_t max) {
  if (pr->type == DL_PROP_UINT32) {
    if (max)
      out[0] = pr->u32;
    return 1;
  }
  const unsigned char *b = pr->bytes.data;
  size_t n = pr->bytes.len < 8 ? 0 : (pr->bytes.len - 8) / 4;
  for (size_t i = 0; i < n && i < max; i++)
    out[i] = (uint32_t)b[8 + 4 * i] | (uint32_t)b[9 + 4 * i] << 8 |
             (uint32_t)b[10 + 4 * i] << 16 | (uint32_t)b[11 + 4 * i] << 24;
  return n;
}

struct dl_propset *dl__propset(struct dl_props *p, const char *name) {
  /* `name` is a string that outlives `p`: a literal, or dl__set_name's. */
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->s[i].name, name) == 0)
      return &p->s[i];
  if (p->n == LW_ARRAY_SIZE(p->s))
    LW_BUG("too many property sets");
  struct dl_propset *s = &p->s[p->n++];
  memset(s, 0, sizeof *s);
  s->name = name;
  return s;
}

struct dl_prop *dl__prop_add(struct dl_propset *s, const char *name) {
  if (lw_grow(&s->p, s->n, &s->cap, sizeof *s->p, 8))
    return NULL;
  struct dl_prop *pr = &s->p[s->n];
  memset(pr, 0, sizeof *pr);
  if (!(pr->name = strdup(name)))
    return NULL;
  s->n++;
  return pr;
}

/* The sets in the order DPC++'s post-link adds them to its registry, which
 * keeps that order (an insertion-ordered map); "assert used" where its
 * older versions had it. */
static const char *const set_order[] = {
    "SYCL/device requirements", "SYCL/specialization constants",
    "SYCL/specialization constants default values", "SYCL/kernel param opt",
    "SYCL/exported symbols", "SYCL/kernel names", "SYCL/imported symbols",
    "SYCL/program metadata", "SYCL/misc properties", "SYCL/assert used",
    "SYCL/implicit local arg", "SYCL/device globals", "SYCL/host pipes",
    "SYCL/virtual functions", "SYCL/registered kernels"};

static size_t set_rank(const char *name) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(set_order); i++)
    if (strcmp(set_order[i], name) == 0)
      return i;
  return LW_ARRAY_SIZE(set_order);
}

/* Sets in DPC++'s order (a stable sort: sets it does not know keep theirs);
 * properties stay in the order they were added, as DPC++ keeps them. */
void dl__props_sort(struct dl_props *p) {
  for (size_t i = 1; i < p->n; i++)
    for (size_t k = i; k > 0 && set_rank(p->s[k - 1].name) >
                                    set_rank(p->s[k].name);
         k--) {
      struct dl_propset t = p->s[k];
      p->s[k] = p->s[k - 1];
      p->s[k - 1] = t;
    }
}
int dl_props_with_bytes(const struct dl_props *src, const char *set_name,
                        const char *name, const void *data, size_t size,
                        struct dl_props *out) {
  memset(out, 0, sizeof *out);
  int rc = 0;
  for (size_t i = 0; !rc && i < src->n; i++) {
    struct dl_propset *s = dl__propset(out, src->s[i].name);
    for (size_t k = 0; !rc && k < src->s[i].n; k++) {
      const struct dl_prop *from = &src->s[i].p[k];
      struct dl_prop *to = dl__prop_add(s, from->name);
      if (!to) {
        rc = LW_ENOMEM;
        break;
      }
      to->type = from->type;
      to->u32 = from->u32;
      rc = lw_buf_append(&to->bytes, from->bytes.data, from->bytes.len);
    }
  }
  struct dl_prop *p =
      rc ? NULL : dl__prop_add(dl__propset(out, set_name), name);
  if (p) {
    p->type = DL_PROP_BYTE_ARRAY;
    rc = dl_encode_byte_array(data, size, (uint64_t)size * 8, &p->bytes);
  } else {
    rc = LW_ENOMEM;
  }
  if (rc) {
    dl_props_free(out);
    return rc;
  }
  dl__props_sort(out);
  return 0;
}

void dl_props_free(struct dl_props *p) {
  for (size_t i = 0; i < p->n; i++) {
    for (size_t k = 0; k < p->s[i].n; k++) {
      free(p->s[i].p[k].name);
      lw_buf_free(&p->s[i].p[k].bytes);
    }
    free(p->s[i].p);
  }
  memset(p, 0, sizeof *p);
}

/* ---- text form ---------------------------------------------------------- */

/* Every set the DPC++ runtime knows (llvm/Support/PropertySetIO.h) and
 * fatlink's kernel names: what a text or a DPC++ descriptor may name. */
static const char *const known_sets[] = {
    "SYCL/assert used",
    "SYCL/device globals",
    "SYCL/device requirements",
    "SYCL/devicelib metadata",
    "SYCL/devicelib req mask",
    "SYCL/exported symbols",
    "SYCL/host pipes",
    "SYCL/implicit local arg",
    "SYCL/imported symbols",
    "SYCL/kernel names",
    "SYCL/kernel param opt",
    "SYCL/misc properties",
    "SYCL/program metadata",
    "SYCL/registered kernels",
    "SYCL/specialization constants",
    "SYCL/specialization constants default values",
    "SYCL/virtual functions"};

const char *dl__set_name(const char *name, size_t len) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(known_sets); i++)
    if (strlen(known_sets[i]) == len && memcmp(known_sets[i], name, len) == 0)
      return known_sets[i];
  return NULL;
}

struct dl_prop *dl__prop_new(struct dl_props *p, const char *set_name,
                             const char *name) {
  return dl__prop_add(dl__propset(p, set_name), name);
}

/* DPC++'s text form of a byte array (its llvm/Support/Base64): the bytes
 * as one little-endian bit string, six bits a character from the base64
 * alphabet, low bits first, no padding. */
static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_encode(const unsigned char *p, size_t n, struct lw_buf *out) {
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    acc |= (uint32_t)p[i] << bits;
    for (bits += 8; bits >= 6; bits -= 6, acc >>= 6)
      if (lw_buf_append(out, &b64[acc & 63], 1))
        return LW_ENOMEM;
  }
  return bits && lw_buf_append(out, &b64[acc & 63], 1) ? LW_ENOMEM : 0;
}

/* -1: not a character of the alphabet */
static int b64_value(char c) {
  const char *at = c ? strchr(b64, c) : NULL;
  return at ? (int)(at - b64) : -1;
}

int dl_props_write_text(const struct dl_props *p, struct lw_buf *out) {
  int rc = 0;
  for (size_t i = 0; !rc && i < p->n; i++) {
    const struct dl_propset *s = &p->s[i];
    rc = lw_buf_append(out, "[", 1) ||
         lw_buf_append(out, s->name, strlen(s->name)) ||
         lw_buf_append(out, "]\n", 2);
    for (size_t k = 0; !rc && k < s->n; k++) {
      const struct dl_prop *pr = &s->p[k];
      char head[64];
      snprintf(head, sizeof head, "=%u|", (unsigned)pr->type);
      rc = lw_buf_append(out, pr->name, strlen(pr->name)) ||
           lw_buf_append(out, head, strlen(head));
      if (!rc && pr->type == DL_PROP_UINT32) {
        snprintf(head, sizeof head, "%u", (unsigned)pr->u32);
        rc = lw_buf_append(out, head, strlen(head));
      } else if (!rc) {
        rc = b64_encode(pr->bytes.data, pr->bytes.len, out);
      }
      if (!rc)
        rc = lw_buf_append(out, "\n", 1);
    }
  }
  return rc ? LW_ENOMEM : 0;
}

int dl_props_read_text(const char *text, size_t len, struct dl_props *out,
                       struct lw_diag *d) {
  memset(out, 0, sizeof *out);
  struct dl_propset *cur = NULL;
  size_t lineno = 0;
  int rc = 0;
  for (size_t at = 0; !rc && at < len;) {
    const char *line = text + at;
    const char *nl = memchr(line, '\n', len - at);
    size_t n = nl ? (size_t)(nl - line) : len - at;
    at += n + 1;
    lineno++;
    if (!n)
      continue;
    if (line[0] == '[') {
      const char *name =
          line[n - 1] == ']' ? dl__set_name(line + 1, n - 2) : NULL;
      cur = name ? dl__propset(out, name) : NULL;
      if (!cur)
        rc = lw_error(d, LW_EFORMAT, "line %zu: unknown property set %.*s",
                      lineno, (int)n, line);
      continue;
    }
    const char *eq = memchr(line, '=', n);
    const char *bar = eq ? memchr(eq, '|', n - (size_t)(eq - line)) : NULL;
    if (!cur || !eq || !bar || eq == line ||
        (bar - eq != 2 || (eq[1] != '1' && eq[1] != '2'))) {
      rc = lw_error(d, LW_EFORMAT, "line %zu: not '[set]' or 'name=type|value'",
                    lineno);
      break;
    }
    char *name = strndup(line, (size_t)(eq - line));
    struct dl_prop *pr = name ? dl__prop_add(cur, name) : NULL;
    free(name);
    if (!pr) {
      rc = lw_error(d, LW_ENOMEM, "out of memory");
      break;
    }
    const char *v = bar + 1;
    size_t vn = n - (size_t)(v - line);
    if (eq[1] == '1') {
      pr->type = DL_PROP_UINT32;
      char num[16];
      char *end = NULL;
      snprintf(num, sizeof num, "%.*s", (int)(vn < 15 ? vn : 15), v);
      unsigned long u = strtoul(num, &end, 10);
      if (!vn || vn > 10 || *end || u > 0xffffffffUL)
        rc = lw_error(d, LW_EFORMAT, "line %zu: bad number", lineno);
      pr->u32 = (uint32_t)u;
      continue;
    }
    pr->type = DL_PROP_BYTE_ARRAY;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t b = 0; !rc && b < vn; b++) {
      int c = b64_value(v[b]);
      if (c < 0) {
        rc = lw_error(d, LW_EFORMAT, "line %zu: bad byte array", lineno);
        break;
      }
      acc |= (uint32_t)c << bits;
      if ((bits += 6) >= 8) {
        unsigned char byte = (unsigned char)acc;
        acc >>= 8;
        bits -= 8;
        if (lw_buf_append(&pr->bytes, &byte, 1))
          rc = lw_error(d, LW_ENOMEM, "out of memory");
      }
    }
    if (!rc && vn % 4 == 1)
      rc = lw_error(d, LW_EFORMAT, "line %zu: bad byte array", lineno);
  }
  if (rc)
    dl_props_free(out);
  else
    dl__props_sort(out);
  return rc;
}
