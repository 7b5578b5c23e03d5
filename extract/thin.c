/* thin.c - thin archives ("!<thin>\n"), which neither libarchive nor libelf
 * reads: the archive holds only member headers (and its symbol index and
 * long-name table); each member is a file named relative to the archive's
 * directory. Headers are the usual 60 bytes: name[16] ... size[10] "`\n". */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ex__thin_members(const unsigned char *buf, size_t len,
                     const char *archive, ex__thin_cb cb, void *ctx,
                     struct lw_diag *d) {
  const char *slash = strrchr(archive, '/');
  int dirlen = slash ? (int)(slash - archive) : 0;
  const unsigned char *names = NULL;
  size_t nameslen = 0, pos = 8;
  while (pos + 60 <= len) {
    const unsigned char *h = buf + pos;
    if (h[58] != '`' || h[59] != '\n')
      return lw_error_path(d, LW_EFORMAT, archive,
                           "bad member header at offset %zu", pos);
    char field[17];
    memcpy(field, h + 48, 10);
    field[10] = 0;
    size_t size = (size_t)strtoull(field, NULL, 10);
    memcpy(field, h, 16);
    field[16] = 0;
    if (field[0] == '/' && (field[1] == ' ' || field[1] == '/' ||
                            strncmp(field, "/SYM64/", 7) == 0)) {
      /* The index and the name table are stored in the archive. */
      if (size > len - pos - 60)
        return lw_error_path(d, LW_EFORMAT, archive,
                             "member table runs past the end");
      if (field[1] == '/') {
        names = h + 60;
        nameslen = size;
      }
      pos += 60 + size + (size & 1);
      continue;
    }
    char name[4096];
    if (field[0] == '/') {
      size_t off = (size_t)strtoull(field + 1, NULL, 10), n = 0;
      if (!names || off >= nameslen)
        return lw_error_path(d, LW_EFORMAT, archive, "bad long member name");
      while (off + n < nameslen && names[off + n] != '\n' && n < 4095)
        n++;
      if (n && names[off + n - 1] == '/')
        n--;
      memcpy(name, names + off, n);
      name[n] = 0;
    } else {
      char *end = strchr(field, '/');
      if (end)
        *end = 0;
      snprintf(name, sizeof name, "%s", field);
    }
    char *path = name[0] == '/' || !dirlen
                     ? strdup(name)
                     : lw_xasprintf("%.*s/%s", dirlen, archive, name);
    if (!path)
      return lw_error(d, LW_ENOMEM, "out of memory");
    int rc = cb(ctx, name, path, pos);
    if (rc)
      return rc == LW_ENOMEM ? lw_error(d, rc, "out of memory") : rc;
    pos += 60; /* a thin member's data is not in the archive */
  }
  return 0;
}
