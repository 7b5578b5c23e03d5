/* wrapped.c - the SYCL device images a linked program registers: the
 * DPC++ binaries descriptor (.sycl_offloading.descriptor, as fatlink's and
 * DPC++'s wrappers name it) found through the ELF symbol table of an
 * executable or shared object, read back from the file as the loader would
 * see it: addresses map to file bytes through the PT_LOAD segments, and a
 * pointer field is the addend of its RELATIVE relocation (position
 * independent code) or else the bytes themselves. The structures (x86-64
 * and AArch64, little-endian, 64-bit):
 *   descriptor  u16 version, u16 count, images*, host entries begin, end
 *   image v2    u16 version, u8 kind, u8 format, target*, compile options*,
 *               link options*, manifest begin*, end*, binary begin*, end*,
 *               entries begin*, end*, property sets begin*, end* (96 bytes;
 *               version 3, upstream LLVM's, has no manifest: 80 bytes)
 *   entry       u64, u16 version, u16 kind, u32 flags, addr*, name*, u64
 *               size, u64 data, aux* (56 bytes)
 *   set         name*, properties begin*, end*
 *   property    name*, value*, u32 type, u64 size (32 bytes)
 * A stripped program has no symbol table: nothing is found. */
#include "internal.h"

#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#ifndef R_AARCH64_RELATIVE
#define R_AARCH64_RELATIVE 1027
#endif

struct reloc {
  uint64_t at, value;
};

struct view {
  const unsigned char *buf;
  size_t len;
  GElf_Phdr *load; /* the PT_LOAD segments */
  size_t nload;
  struct reloc *rel; /* RELATIVE relocations, by address */
  size_t nrel;
  const char *origin;
  struct lw_diag *d;
};

static int bad(struct view *v, const char *what) {
  return lw_error_path(v->d, LW_EFORMAT, v->origin,
                       "broken SYCL device image descriptor: %s", what);
}

/* The file bytes of [addr, addr + n), or NULL. */
static const unsigned char *at(const struct view *v, uint64_t addr,
                               uint64_t n) {
  for (size_t i = 0; i < v->nload; i++) {
    const GElf_Phdr *p = &v->load[i];
    if (addr < p->p_vaddr || addr - p->p_vaddr > p->p_filesz ||
        n > p->p_filesz - (addr - p->p_vaddr))
      continue;
    uint64_t off = p->p_offset + (addr - p->p_vaddr);
    return off <= v->len && n <= v->len - off ? v->buf + off : NULL;
  }
  return NULL;
}

static uint64_t le(const unsigned char *p, int n) {
  uint64_t x = 0;
  for (int i = n - 1; i >= 0; i--)
    x = x << 8 | p[i];
  return x;
}

static int cmp_reloc(const void *a, const void *b) {
  uint64_t x = ((const struct reloc *)a)->at, y = ((const struct reloc *)b)->at;
  return x < y ? -1 : x > y;
}

/* The pointer stored at `addr`. */
static int pointer(const struct view *v, uint64_t addr, uint64_t *out) {
  struct reloc key = {addr, 0};
  const struct reloc *r =
      v->nrel ? bsearch(&key, v->rel, v->nrel, sizeof key, cmp_reloc) : NULL;
  if (r) {
    *out = r->value;
    return 0;
  }
  const unsigned char *p = at(v, addr, 8);
  if (!p)
    return -1;
  *out = le(p, 8);
  return 0;
}

/* The NUL-terminated string at the pointer stored at `addr` ("" for a
 * null pointer). */
static int string(struct view *v, uint64_t addr, const char **out) {
  uint64_t s;
  if (pointer(v, addr, &s))
    return bad(v, "a field lies outside the file");
  if (!s) {
    *out = "";
    return 0;
  }
  for (uint64_t n = 1;; n++) {
    const unsigned char *p = at(v, s, n);
    if (!p)
      return bad(v, "a name runs past its segment");
    if (!p[n - 1]) {
      *out = (const char *)p;
      return 0;
    }
  }
}

/* The array [begin, end) of `size`-byte elements whose bounds are stored
 * at `addr` and `addr` + 8: its first address and length. */
static int array(struct view *v, uint64_t addr, uint64_t size, uint64_t *first,
                 size_t *n) {
  uint64_t b, e;
  if (pointer(v, addr, &b) || pointer(v, addr + 8, &e))
    return bad(v, "a field lies outside the file");
  if (e < b || (e - b) % size || (b && !at(v, b, e - b)))
    return bad(v, "an array's bounds are wrong");
  *first = b;
  *n = (size_t)((e - b) / size);
  return 0;
}

static int read_sets(struct view *v, uint64_t addr,
                     struct ex_wrapped_image *im) {
  uint64_t first;
  size_t n;
  int rc = array(v, addr, 24, &first, &n);
  if (rc || !n)
    return rc;
  if (!(im->sets = calloc(n, sizeof *im->sets)))
    return lw_error(v->d, LW_ENOMEM, "out of memory");
  im->nsets = n;
  for (size_t i = 0; !rc && i < n; i++) {
    struct ex_wrapped_set *s = &im->sets[i];
    uint64_t sa = first + 24 * i, pfirst;
    size_t np;
    rc = string(v, sa, &s->name);
    if (!rc)
      rc = array(v, sa + 8, 32, &pfirst, &np);
    if (!rc && np && !(s->p = calloc(np, sizeof *s->p)))
      rc = lw_error(v->d, LW_ENOMEM, "out of memory");
    if (!rc)
      s->n = np;
    for (size_t k = 0; !rc && k < np; k++) {
      struct ex_wrapped_prop *p = &s->p[k];
      uint64_t pa = pfirst + 32 * k, value;
      const unsigned char *f = at(v, pa + 16, 16);
      rc = string(v, pa, &p->name);
      if (!rc && (!f || pointer(v, pa + 8, &value)))
        rc = bad(v, "a property lies outside the file");
      if (rc)
        break;
      p->type = (uint32_t)le(f, 4);
      p->value = le(f + 8, 8);
      if (p->type != 1 && (p->data = at(v, value, p->value)) == NULL)
        rc = bad(v, "a property's value lies outside the file");
    }
  }
  return rc;
}

static int read_image(struct view *v, uint64_t a, struct ex_wrapped_image *im) {
  const unsigned char *h = at(v, a, 8);
  if (!h)
    return bad(v, "an image lies outside the file");
  im->version = (uint16_t)le(h, 2);
  im->kind = h[2];
  im->format = h[3];
  if (im->version != 2 && im->version != 3)
    return bad(v, "an image has an unknown version");
  uint64_t f = a + (im->version == 2 ? 48 : 32), bin, n;
  size_t nbytes, nentries;
  int rc = string(v, a + 8, &im->target);
  if (!rc)
    rc = array(v, f, 1, &bin, &nbytes);
  if (!rc) {
    im->data = nbytes ? at(v, bin, nbytes) : NULL;
    im->size = nbytes;
    rc = array(v, f + 16, 56, &n, &nentries);
  }
  if (!rc && nentries && !(im->entries = calloc(nentries, sizeof *im->entries)))
    rc = lw_error(v->d, LW_ENOMEM, "out of memory");
  for (size_t k = 0; !rc && k < nentries; k++)
    rc = string(v, n + 56 * k + 24, &im->entries[k]);
  if (!rc)
    im->nentries = nentries;
  return rc ? rc : read_sets(v, f + 32, im);
}

/* The address of the descriptor symbol, or 0. */
static uint64_t descriptor(Elf *e) {
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
    GElf_Shdr sh;
    Elf_Data *data;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
        !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
      continue;
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
      GElf_Sym sym;
      const char *name;
      if (gelf_getsym(data, (int)i, &sym) &&
          (name = elf_strptr(e, sh.sh_link, sym.st_name)) &&
          strcmp(name, ".sycl_offloading.descriptor") == 0)
        return sym.st_value;
    }
  }
  return 0;
}

/* The segments and the RELATIVE relocations of a linked program. */
static int load_view(Elf *e, const GElf_Ehdr *eh, struct view *v) {
  size_t nph;
  if (elf_getphdrnum(e, &nph) != 0)
    return bad(v, "no program headers");
  if (nph && !(v->load = calloc(nph, sizeof *v->load)))
    return lw_error(v->d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < nph; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
      v->load[v->nload++] = ph;
  }
  unsigned relative =
      eh->e_machine == EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
  size_t cap = 0;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
    GElf_Shdr sh;
    Elf_Data *data;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
        !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
      continue;
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
      GElf_Rela r;
      if (!gelf_getrela(data, (int)i, &r) || GELF_R_TYPE(r.r_info) != relative)
        continue;
      if (lw_grow(&v->rel, v->nrel, &cap, sizeof *v->rel, 64))
        return lw_error(v->d, LW_ENOMEM, "out of memory");
      v->rel[v->nrel++] = (struct reloc){r.r_offset, (uint64_t)r.r_addend};
    }
  }
  if (v->nrel > 1)
    qsort(v->rel, v->nrel, sizeof *v->rel, cmp_reloc);
  return 0;
}

int ex_wrapped_read(const unsigned char *buf, size_t len, const char *origin,
                    struct ex_wrapped *out, struct lw_diag *d) {
  memset(out, 0, sizeof *out);
  if (len < SELFMAG || memcmp(buf, ELFMAG, SELFMAG) != 0)
    return 0;
  elf_version(EV_CURRENT);
  Elf *e = elf_memory((char *)buf, len);
  GElf_Ehdr eh;
  if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) ||
      (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    if (e)
      elf_end(e);
    return 0; /* no linked 64-bit little-endian program: nothing here */
  }
  struct view v = {buf, len, NULL, 0, NULL, 0, origin, d};
  uint64_t desc = descriptor(e);
  int rc = desc ? load_view(e, &eh, &v) : 0;
  elf_end(e);
  const unsigned char *h = !rc && desc ? at(&v, desc, 8) : NULL;
  if (!rc && desc && !h)
    rc = bad(&v, "it lies outside the file");
  uint64_t images = 0;
  size_t n = h ? (size_t)le(h + 2, 2) : 0;
  if (h && (le(h, 2) != 1 || pointer(&v, desc + 8, &images)))
    rc = bad(&v, "unknown version");
  if (!rc && n && !(out->img = calloc(n, sizeof *out->img)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  /* Both image layouts are read by the first one's field: its version. */
  uint64_t stride = 0;
  if (!rc && n) {
    const unsigned char *first = at(&v, images, 2);
    stride = first && le(first, 2) == 3 ? 80 : 96;
  }
  for (size_t i = 0; !rc && i < n; i++) {
    rc = read_image(&v, images + stride * i, &out->img[i]);
    out->n = i + 1;
  }
  free(v.load);
  free(v.rel);
  if (rc)
    ex_wrapped_free(out);
  return rc;
}

void ex_wrapped_free(struct ex_wrapped *w) {
  for (size_t i = 0; i < w->n; i++) {
    for (size_t k = 0; k < w->img[i].nsets; k++)
      free(w->img[i].sets[k].p);
    free(w->img[i].sets);
    free(w->img[i].entries);
  }
  free(w->img);
  memset(w, 0, sizeof *w);
}
