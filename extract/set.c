/* set.c - the set of images found, and the memory it owns: files mapped,
 * not read, so a scanner touches only the pages it needs (small ones, a
 * page or a few anyway, are read in one call), and the buffers scanners
 * made. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files up to this size are read, larger ones mapped. */
enum { SMALL_FILE = 64 * 1024 };

int ex__own(struct ex_set *set, void *p, size_t len, int mapped) {
  struct ex__owned *o = malloc(sizeof *o);
  if (!o) {
    if (mapped)
      munmap(p, len);
    else
      free(p);
    return LW_ENOMEM;
  }
  o->p = p;
  o->len = len;
  o->mapped = mapped;
  o->next = set->owned;
  set->owned = o;
  return 0;
}

int ex__add_image(struct ex_set *set, struct ex_image *img) {
  if (lw_grow(&set->images, set->n, &set->cap, sizeof *set->images, 8))
    return LW_ENOMEM;
  set->images[set->n++] = *img;
  return 0;
}

int ex__map_file(struct ex_set *set, const char *path, const char *name,
                 const unsigned char **buf, size_t *len, struct lw_diag *d) {
  *buf = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return lw_error_path(d, LW_EIO, name, "%s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return lw_error_path(d, LW_EIO, name, "not a regular file");
  }
  if (st.st_size == 0) {
    close(fd);
    return 0;
  }
  /* A small file is cheaper read than mapped (one call against a mapping,
   * a page fault and an unmapping). */
  if (st.st_size <= SMALL_FILE) {
    unsigned char *b = malloc((size_t)st.st_size);
    ssize_t got = b ? pread(fd, b, (size_t)st.st_size, 0) : -1;
    close(fd);
    if (got != st.st_size) {
      free(b);
      return b ? lw_error_path(d, LW_EIO, name, "read error")
               : lw_error(d, LW_ENOMEM, "out of memory");
    }
    if (ex__own(set, b, (size_t)st.st_size, 0))
      return lw_error(d, LW_ENOMEM, "out of memory");
    *buf = b;
    *len = (size_t)st.st_size;
    return 0;
  }
  /* Private writable mapping: libelf may want a mutable image; nothing is
   * ever written back. */
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return lw_error_path(d, LW_EIO, name, "cannot map: %s", strerror(errno));
  if (ex__own(set, p, (size_t)st.st_size, 1))
    return lw_error(d, LW_ENOMEM, "out of memory");
  *buf = p;
  *len = (size_t)st.st_size;
  return 0;
}

int ex__set_move(struct ex_set *dst, struct ex_set *src) {
  if (src->n && dst->n + src->n > dst->cap) {
    size_t cap = dst->cap ? dst->cap : 8;
    while (cap < dst->n + src->n)
      cap *= 2;
    struct ex_image *ni = realloc(dst->images, cap * sizeof *ni);
    if (!ni)
      return LW_ENOMEM;
    dst->images = ni;
    dst->cap = cap;
  }
  if (src->n)
    memcpy(dst->images + dst->n, src->images, src->n * sizeof *src->images);
  dst->n += src->n;
  struct ex__owned **tail = &src->owned;
  while (*tail)
    tail = &(*tail)->next;
  *tail = dst->owned;
  dst->owned = src->owned;
  free(src->images);
  memset(src, 0, sizeof *src);
  return 0;
}

void ex_set_free(struct ex_set *set) {
  for (size_t i = 0; i < set->n; i++) {
    struct ex_image *img = &set->images[i];
    for (size_t j = 0; j < img->nstrings; j++) {
      free(img->strings[j].key);
      free(img->strings[j].value);
    }
    free(img->strings);
    free(img->origin);
  }
  free(set->images);
  while (set->owned) {
    struct ex__owned *o = set->owned;
    set->owned = o->next;
    if (o->mapped)
      munmap(o->p, o->len);
    else
      free(o->p);
    free(o);
  }
  memset(set, 0, sizeof *set);
}
