/* text_bundle.c - text bundles (LLVM IR, assembly, sources) as
 * clang-offload-bundler writes them: each entry sits between comment lines
 *   <comment> __CLANG_OFFLOAD_BUNDLE____START__ <id>
 *   ...
 *   <comment> __CLANG_OFFLOAD_BUNDLE____END__ <id>
 * where <comment> is ";", "//" or "#" depending on the language. The text
 * between the markers is the image; textual LLVM IR counts as bitcode for
 * the device link (LLVM parses both). */
#include "internal.h"

#include <string.h>

static const char start_tag[] = "__CLANG_OFFLOAD_BUNDLE____START__ ";
static const char end_tag[] = "__CLANG_OFFLOAD_BUNDLE____END__ ";

/* Finds `tag` at the start of a line's text after a comment leader. */
static const char *find_tag(const char *p, const char *end, const char *tag) {
  size_t n = strlen(tag);
  while (p < end) {
    const char *hit = memmem(p, (size_t)(end - p), tag, n);
    if (!hit)
      return NULL;
    const char *ls = hit;
    while (ls > p && ls[-1] != '\n')
      ls--;
    /* Only a comment leader and blanks may precede the tag. */
    const char *q = ls;
    while (q < hit && strchr(";/# \t", *q))
      q++;
    if (q == hit)
      return hit;
    p = hit + n;
  }
  return NULL;
}

static int match_text(const unsigned char *head, size_t len) {
  /* The first non-empty line holds a start marker. */
  const char *p = (const char *)head, *end = p + (len < 4096 ? len : 4096);
  while (p < end && (*p == '\n' || *p == '\r' || *p == ' '))
    p++;
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  return nl && find_tag(p, nl, start_tag) != NULL;
}

static int scan_text(struct ex_set *set, const unsigned char *buf, size_t len,
                     const char *origin, struct lw_diag *d) {
  const char *p = (const char *)buf, *end = p + len;
  while ((p = find_tag(p, end, start_tag)) != NULL) {
    const char *id = p + strlen(start_tag);
    const char *nl = memchr(id, '\n', (size_t)(end - id));
    if (!nl)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "text bundle start marker without a line end");
    size_t idlen = (size_t)(nl - id);
    while (idlen && (id[idlen - 1] == '\r' || id[idlen - 1] == ' '))
      idlen--;
    const char *body = nl + 1;
    const char *stop = find_tag(body, end, end_tag);
    if (!stop || (size_t)(end - stop) < strlen(end_tag) + idlen ||
        memcmp(stop + strlen(end_tag), id, idlen) != 0)
      return lw_error_path(d, LW_EFORMAT, origin,
                           "text bundle entry '%.*s' has no end marker",
                           (int)idlen, id);
    /* The body ends before the newline the bundler puts ahead of the end
     * marker's line. */
    const char *body_end = stop;
    while (body_end > body && body_end[-1] != '\n')
      body_end--;
    if (body_end > body)
      body_end--;
    /* A ';' comment leader means LLVM IR: not bitcode by its bytes, but
     * LLVM reads both alike. */
    const char *ls = p;
    while (ls > (const char *)buf && ls[-1] != '\n')
      ls--;
    unsigned kind = *ls == ';' ? EX_IMG_BITCODE : EX_IMG_NONE;
    int rc = ex__add_bundle_entry(set, id, idlen, (const unsigned char *)body,
                                  (size_t)(body_end - body), kind, origin,
                                  "text bundle", d);
    if (rc)
      return rc;
    p = stop + strlen(end_tag);
  }
  return 0;
}

const struct ex__format ex__format_text_bundle = {"text bundle", match_text,
                                                  scan_text};
