/* archive.c - static archives read with libarchive from the mapped file.
 * Each member is read into memory and handed to the caller's function (the
 * scanner scans it like any other input, so an archive may hold any format
 * the scanner knows, archives included).
 * Every member counts here (fatpack's view); which members a link reads is
 * resolve.c's business. Thin archives' members are files (thin.c). */
#include "internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>

int ex__archive_match(const unsigned char *head, size_t len) {
  return len >= 8 && (memcmp(head, "!<arch>\n", 8) == 0 ||
                      memcmp(head, "!<thin>\n", 8) == 0);
}

struct thin_scan {
  struct ex_set *set;
  const char *archive;
  ex__member_cb cb;
  void *ctx;
  struct lw_diag *d;
};

/* Thin archives may name thin archives; one that names itself (directly or
 * not) would be read forever. GNU ld reads them nested, so a depth bound. */
enum { MAX_THIN_DEPTH = 16 };

static int scan_thin_member(void *ctx, const char *name, char *path,
                            size_t header) {
  struct thin_scan *t = ctx;
  const unsigned char *buf;
  size_t len;
  char *origin = lw_xasprintf("%s(%s)", t->archive, name);
  int rc =
      origin ? ex__map_file(t->set, path, origin, &buf, &len, t->d) : LW_ENOMEM;
  if (!rc && len && t->set->thin_depth >= MAX_THIN_DEPTH)
    rc = lw_error_path(t->d, LW_EFORMAT, origin,
                       "thin archives nest more than %d deep (does one "
                       "name itself?)",
                       MAX_THIN_DEPTH);
  else if (!rc && len) {
    t->set->thin_depth++;
    rc = t->cb(t->ctx, buf, len, origin, t->d);
    t->set->thin_depth--;
  }
  free(origin);
  free(path);
  return rc;
}

int ex__archive_members(struct ex_set *set, const unsigned char *buf,
                        size_t len, const char *origin, ex__member_cb cb,
                        void *ctx, struct lw_diag *d) {
  if (memcmp(buf, "!<thin>\n", 8) == 0) {
    struct thin_scan t = {set, origin, cb, ctx, d};
    return ex__thin_members(buf, len, origin, scan_thin_member, &t, d);
  }
  struct archive *a = archive_read_new();
  if (!a)
    return lw_error(d, LW_ENOMEM, "out of memory");
  archive_read_support_format_ar(a);
  int rc = 0;
  if (archive_read_open_memory(a, buf, len) != ARCHIVE_OK) {
    rc = lw_error_path(d, LW_EFORMAT, origin, "%s", archive_error_string(a));
    archive_read_free(a);
    return rc;
  }
  struct archive_entry *ent;
  int r;
  while (!rc && (r = archive_read_next_header(a, &ent)) == ARCHIVE_OK) {
    const char *name = archive_entry_pathname(ent);
    la_int64_t size = archive_entry_size(ent);
    if (!name || size <= 0)
      continue;
    /* The GNU symbol and name tables are handled by libarchive; skip any
     * left-over special members. */
    if (name[0] == '/' && (name[1] == 0 || name[1] == '/'))
      continue;
    if ((uint64_t)size > len) {
      rc = lw_error_path(d, LW_EFORMAT, origin, "member '%s' claims %lld bytes",
                         name, (long long)size);
      break;
    }
    /* Read the whole member: libarchive streams, and most members are small
     * compared with the archive. */
    unsigned char *mem = malloc((size_t)size);
    if (!mem) {
      rc = lw_error(d, LW_ENOMEM, "out of memory");
      break;
    }
    la_ssize_t got = archive_read_data(a, mem, (size_t)size);
    if (got != size) {
      free(mem);
      rc = lw_error_path(d, LW_EFORMAT, origin, "truncated member '%s'", name);
      break;
    }
    char *member = lw_xasprintf("%s(%s)", origin, name);
    if (!member || ex__own(set, mem, (size_t)size, 0)) {
      free(member);
      rc = lw_error(d, LW_ENOMEM, "out of memory");
      break;
    }
    rc = cb(ctx, mem, (size_t)size, member, d);
    free(member);
  }
  if (!rc && r != ARCHIVE_EOF && r != ARCHIVE_OK)
    rc = lw_error_path(d, LW_EFORMAT, origin, "%s", archive_error_string(a));
  archive_read_free(a);
  return rc;
}

/* ---- one member's bytes, the members' names ------------------------------ */

/* Walks the archive at path `archive`: with `member` set, appends the
 * bytes of the first member so named to `out`; without, appends every
 * member's name to `names`. */
struct walk {
  const char *member;
  struct lw_buf *out;
  struct lw_strvec *names;
  struct lw_diag *d;
  int found, rc;
};

static int walk_thin_member(void *ctx, const char *name, char *path,
                            size_t header) {
  (void)header;
  struct walk *w = ctx;
  if (!w->member && !w->rc && lw_strvec_push(w->names, name))
    w->rc = lw_error(w->d, LW_ENOMEM, "out of memory");
  if (w->member && !w->found && strcmp(name, w->member) == 0) {
    w->found = 1;
    w->rc = lw_read_file(path, w->out, w->d);
  }
  free(path);
  return 0;
}

static int walk(const char *archive, struct walk *w) {
  struct lw_diag *d = w->d;
  struct lw_buf file = {0};
  int rc = lw_read_file(archive, &file, d);
  if (rc)
    return rc;
  if (file.len >= 8 && memcmp(file.data, "!<thin>\n", 8) == 0) {
    rc = ex__thin_members(file.data, file.len, archive, walk_thin_member, w, d);
    rc = rc ? rc : w->rc;
  } else {
    struct archive *a = archive_read_new();
    if (!a) {
      lw_buf_free(&file);
      return lw_error(d, LW_ENOMEM, "out of memory");
    }
    archive_read_support_format_ar(a);
    struct archive_entry *ent;
    if (archive_read_open_memory(a, file.data, file.len) != ARCHIVE_OK)
      rc = lw_error_path(d, LW_EFORMAT, archive, "%s", archive_error_string(a));
    while (!rc && !w->found &&
           archive_read_next_header(a, &ent) == ARCHIVE_OK) {
      const char *name = archive_entry_pathname(ent);
      la_int64_t size = archive_entry_size(ent);
      if (!name || (name[0] == '/' && (name[1] == 0 || name[1] == '/')))
        continue;
      if (!w->member) {
        if (lw_strvec_push(w->names, name))
          rc = lw_error(d, LW_ENOMEM, "out of memory");
        continue;
      }
      if (strcmp(name, w->member) != 0 || size < 0 || (uint64_t)size > file.len)
        continue;
      w->found = 1;
      unsigned char *mem = malloc(size ? (size_t)size : 1);
      if (!mem)
        rc = lw_error(d, LW_ENOMEM, "out of memory");
      else if (archive_read_data(a, mem, (size_t)size) != size)
        rc = lw_error_path(d, LW_EFORMAT, archive, "truncated member '%s'",
                           w->member);
      else if (lw_buf_append(w->out, mem, (size_t)size))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
      free(mem);
    }
    archive_read_free(a);
  }
  lw_buf_free(&file);
  return rc;
}

int ex_archive_member(const char *archive, const char *member,
                      struct lw_buf *out, struct lw_diag *d) {
  struct walk w = {member, out, NULL, d, 0, 0};
  int rc = walk(archive, &w);
  if (!rc && !w.found)
    rc = lw_error_path(d, LW_EFORMAT, archive, "no member '%s'", member);
  return rc;
}

int ex_archive_names(const char *archive, struct lw_strvec *names,
                     struct lw_diag *d) {
  struct walk w = {NULL, NULL, names, d, 0, 0};
  return walk(archive, &w);
}
