/* sycl_rt_llvm23.c - a stand-in for upstream LLVM 23's libsycl in tests: it
 * defines __sycl_register_lib(start, size) and __sycl_unregister_lib(start,
 * size) as libsycl does, checks what libsycl's OffloadBinary parser checks
 * (the magic, version 1 or 2, an 8-byte aligned start, the size, every
 * offset in bounds; every entry of offload kind SYCL, 8) and prints each
 * image: its kind (SPIR-V 6, object 1), triple, arch, size, and the kernels
 * of its "symbols" value (a u32 count, then per kernel a u32 offset from the
 * value's start and a u32 size, then the names). A SPIR-V image must start
 * with the SPIR-V magic. Unregistering needs the same start; at exit every
 * registration must have been undone. Any failed check prints
 * "sycl_rt23: CHECK FAILED: ..." and exits 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const void *registered[16];
static unsigned nregistered, nunregistered;

#define CHECK(c, ...)                                                          \
  do {                                                                         \
    if (!(c)) {                                                                \
      printf("sycl_rt23: CHECK FAILED: " __VA_ARGS__);                         \
      printf("\n");                                                            \
      fflush(stdout);                                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static uint64_t rd(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The string `key` of the entry at e, in *v (its size in *n); 0 if none. */
static int string(const unsigned char *b, uint64_t size, const unsigned char *e,
                  uint32_t version, const char *key, const unsigned char **v,
                  uint64_t *n) {
  uint64_t at = rd(e + 8, 8), count = rd(e + 16, 8);
  uint64_t esize = version == 1 ? 16 : 24;
  CHECK(at <= size && count <= (size - at) / esize, "strings out of bounds");
  for (uint64_t i = 0; i < count; i++) {
    const unsigned char *s = b + at + i * esize;
    uint64_t k = rd(s, 8), val = rd(s + 8, 8);
    uint64_t len = version == 1 ? strnlen((const char *)b + val, size - val)
                                : rd(s + 16, 8);
    CHECK(k < size && val <= size && len <= size - val, "string bounds");
    if (strcmp((const char *)b + k, key) == 0) {
      *v = b + val;
      *n = len;
      return 1;
    }
  }
  return 0;
}

void __sycl_register_lib(const void *start, size_t size);
void __sycl_register_lib(const void *start, size_t size) {
  const unsigned char *b = start;
  CHECK(((uintptr_t)start & 7) == 0, "binary not 8-byte aligned");
  CHECK(size >= 32 && memcmp(b, "\x10\xff\x10\xad", 4) == 0, "bad magic");
  uint32_t version = (uint32_t)rd(b + 4, 4);
  CHECK(version == 1 || version == 2, "version %u", version);
  CHECK(rd(b + 8, 8) == size, "size %llu, registered with %zu",
        (unsigned long long)rd(b + 8, 8), size);
  uint64_t at = rd(b + 16, 8);
  uint64_t count = version == 1 ? 1 : rd(b + 24, 8);
  CHECK(at <= size && count <= (size - at) / 40, "entries out of bounds");
  CHECK(nregistered < 16, "too many registrations");
  registered[nregistered++] = start;
  printf("sycl_rt23: binary version %u, %llu image(s), %zu bytes\n", version,
         (unsigned long long)count, size);
  for (uint64_t i = 0; i < count; i++) {
    const unsigned char *e = b + at + 40 * i;
    unsigned ikind = (unsigned)rd(e, 2), okind = (unsigned)rd(e + 2, 2);
    uint64_t io = rd(e + 24, 8), is = rd(e + 32, 8);
    CHECK(okind == 8, "image %llu offload kind %u", (unsigned long long)i,
          okind);
    CHECK(ikind == 6 || ikind == 1, "image %llu kind %u",
          (unsigned long long)i, ikind);
    CHECK(io <= size && is <= size - io, "image bytes out of bounds");
    if (ikind == 6)
      CHECK(is >= 4 && rd(b + io, 4) == 0x07230203, "image %llu: no SPIR-V",
            (unsigned long long)i);
    const unsigned char *triple = NULL, *arch = NULL, *syms = NULL;
    uint64_t tn = 0, an = 0, sn = 0;
    CHECK(string(b, size, e, version, "triple", &triple, &tn), "no triple");
    string(b, size, e, version, "arch", &arch, &an);
    CHECK(string(b, size, e, version, "symbols", &syms, &sn), "no symbols");
    printf("sycl_rt23: image %llu: kind %u triple %.*s arch '%.*s', %llu "
           "bytes\n",
           (unsigned long long)i, ikind, (int)tn, (const char *)triple,
           (int)an, arch ? (const char *)arch : "", (unsigned long long)is);
    CHECK(sn >= 4, "symbols too short");
    uint64_t nsym = rd(syms, 4);
    CHECK(nsym <= (sn - 4) / 8, "symbol count %llu", (unsigned long long)nsym);
    for (uint64_t k = 0; k < nsym; k++) {
      uint64_t off = rd(syms + 4 + 8 * k, 4), len = rd(syms + 8 + 8 * k, 4);
      CHECK(off <= sn && len < sn - off && syms[off + len] == 0,
            "symbol %llu out of bounds", (unsigned long long)k);
      printf("  entry %.*s\n", (int)len, (const char *)syms + off);
    }
  }
}

void __sycl_unregister_lib(const void *start, size_t size);
void __sycl_unregister_lib(const void *start, size_t size) {
  (void)size;
  int found = 0;
  for (unsigned i = 0; i < nregistered; i++)
    found |= registered[i] == start;
  CHECK(found, "unregister of a binary never registered");
  CHECK(nunregistered < nregistered, "more unregistered than registered");
  if (++nunregistered == nregistered)
    printf("sycl_rt23: all unregistered\n");
}
