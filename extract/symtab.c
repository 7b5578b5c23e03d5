/* symtab.c - a set of symbol names with a state each, for the link-order
 * resolution of resolve.c: open addressing with linear probing on XXH3
 * hashes (libxxhash; kept, so most probes skip strcmp), power-of-two
 * capacity grown at half full. Names are copied into large blocks freed
 * together. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

enum { BLOCK = 64 * 1024 };

struct ex__symblock {
  struct ex__symblock *next;
  size_t used;
  char data[];
};

static uint32_t hash(const char *s) {
  return (uint32_t)XXH3_64bits(s, strlen(s));
}

static struct ex__sym *probe(struct ex__symtab *t, const char *name,
                             uint32_t h) {
  size_t mask = t->cap - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    struct ex__sym *s = &t->e[i];
    if (!s->name || (s->hash == h && strcmp(s->name, name) == 0))
      return s;
  }
}

static char *copy_name(struct ex__symtab *t, const char *name) {
  size_t n = strlen(name) + 1;
  struct ex__symblock *b = t->blocks;
  if (!b || b->used + n > BLOCK) {
    size_t size = n > BLOCK ? n : BLOCK;
    if (!(b = malloc(sizeof *b + size)))
      return NULL;
    b->next = t->blocks;
    b->used = 0;
    t->blocks = b;
  }
  char *p = memcpy(b->data + b->used, name, n);
  b->used += n;
  return p;
}

int ex__sym_get(struct ex__symtab *t, const char *name) {
  if (!t->cap)
    return 0;
  struct ex__sym *s = probe(t, name, hash(name));
  return s->name ? s->state : 0;
}

int *ex__sym_ref(struct ex__symtab *t, const char *name) {
  if (2 * (t->n + 1) > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 4096;
    struct ex__sym *old = t->e;
    size_t oldcap = t->cap;
    if (!(t->e = calloc(cap, sizeof *t->e))) {
      t->e = old;
      return NULL;
    }
    t->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].name)
        *probe(t, old[i].name, old[i].hash) = old[i];
    free(old);
  }
  uint32_t h = hash(name);
  struct ex__sym *s = probe(t, name, h);
  if (!s->name) {
    if (!(s->name = copy_name(t, name)))
      return NULL;
    s->hash = h;
    s->state = 0;
    t->n++;
  }
  return &s->state;
}

void ex__symtab_free(struct ex__symtab *t) {
  while (t->blocks) {
    struct ex__symblock *b = t->blocks;
    t->blocks = b->next;
    free(b);
  }
  free(t->e);
  memset(t, 0, sizeof *t);
}
