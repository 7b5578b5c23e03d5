/* scan.c - finds an input's format by its first bytes and hands the content
 * to that format's scanner (set.c holds what they find). Inputs of no known
 * format (linker scripts, shared libraries' stubs, text) carry no device
 * code and are skipped. */
#include "internal.h"

static int scan_archive(struct ex_set *set, const unsigned char *buf,
                        size_t len, const char *origin, struct lw_diag *d);
static const struct ex__format archive = {"archive", ex__archive_match,
                                          scan_archive};

/* Tried in order: the first whose magic matches scans the input. */
static const struct ex__format *const formats[] = {
    &ex__format_elf,    &archive,                &ex__format_offload_binary,
    &ex__format_bundle, &ex__format_ccob,        &ex__format_bitcode,
    &ex__format_coff,   &ex__format_text_bundle,
};

int ex_scan_buffer(struct ex_set *set, const unsigned char *buf, size_t len,
                   const char *origin, struct lw_diag *d) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(formats); i++)
    if (formats[i]->match(buf, len))
      return formats[i]->scan(set, buf, len, origin, d);
  return 0;
}

int ex_scan_file(struct ex_set *set, const char *path, struct lw_diag *d) {
  const unsigned char *buf;
  size_t len;
  int rc = ex__map_file(set, path, path, &buf, &len, d);
  if (rc || !len)
    return rc;
  return ex_scan_buffer(set, buf, len, path, d);
}

/* An archive's members are inputs like any other. */
static int scan_member(void *set, const unsigned char *buf, size_t len,
                       const char *origin, struct lw_diag *d) {
  return ex_scan_buffer(set, buf, len, origin, d);
}

static int scan_archive(struct ex_set *set, const unsigned char *buf,
                        size_t len, const char *origin, struct lw_diag *d) {
  return ex__archive_members(set, buf, len, origin, scan_member, set, d);
}
