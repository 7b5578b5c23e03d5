/* symtab.c - a set of symbol names with a state each, for the link-order
 * resolution of resolve.c: open addressing with linear probing on FNV-1a
 * hashes, power-of-two capacity, grown at half full. Names are copied. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static struct ex__sym *slot(struct ex__symtab *t, const char *name) {
  size_t mask = t->cap - 1;
  for (size_t i = (size_t)hash(name) & mask;; i = (i + 1) & mask)
    if (!t->e[i].name || strcmp(t->e[i].name, name) == 0)
      return &t->e[i];
}

int ex__sym_get(struct ex__symtab *t, const char *name) {
  if (!t->cap)
    return 0;
  struct ex__sym *s = slot(t, name);
  return s->name ? s->state : 0;
}

int ex__sym_set(struct ex__symtab *t, const char *name, int state) {
  if (2 * (t->n + 1) > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    struct ex__sym *old = t->e;
    size_t oldcap = t->cap;
    if (!(t->e = calloc(cap, sizeof *t->e))) {
      t->e = old;
      return LW_ENOMEM;
    }
    t->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].name)
        *slot(t, old[i].name) = old[i];
    free(old);
  }
  struct ex__sym *s = slot(t, name);
  if (!s->name) {
    if (!(s->name = strdup(name)))
      return LW_ENOMEM;
    t->n++;
  }
  s->state = state;
  return 0;
}

void ex__symtab_free(struct ex__symtab *t) {
  for (size_t i = 0; i < t->cap; i++)
    free(t->e[i].name);
  free(t->e);
  memset(t, 0, sizeof *t);
}
