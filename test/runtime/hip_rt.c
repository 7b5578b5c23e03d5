/* hip_rt.c - a stand-in HIP runtime for tests. There is no ROCm on Debian
 * 12, so this defines the registration functions a HIP program calls at
 * start-up and the launch functions its stubs call, checks what it is given
 * and prints it: the fatbinary (magic, version, a clang-offload-bundler
 * bundle and its entry ids), each kernel, variable, managed variable,
 * surface and texture, and the unregistration at exit. The same program
 * linked by fatlink and by upstream can then be compared line for line.
 * A failed check prints "hip_rt: CHECK FAILED: ..." and exits 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fatbin_wrapper {
  int32_t magic, version;
  const unsigned char *image;
  void *reserved;
};

static void *handle_storage[1];
static int registered;

static void check(int ok, const char *what) {
  if (!ok) {
    printf("hip_rt: CHECK FAILED: %s\n", what);
    exit(1);
  }
}

static uint64_t u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

void **__hipRegisterFatBinary(const struct fatbin_wrapper *w) {
  check(!registered, "one fatbinary");
  registered = 1;
  check(w->magic == 0x48495046, "magic HIPF");
  check(w->version == 1, "version 1");
  check(w->reserved == NULL, "reserved is null");
  static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
  static const char cmagic[] = "CCOB";
  if (memcmp(w->image, cmagic, 4) == 0) {
    printf("fatbinary: compressed bundle\n");
    return handle_storage;
  }
  check(memcmp(w->image, magic, 24) == 0, "an offload bundle");
  uint64_t n = u64(w->image + 24);
  printf("fatbinary: bundle of %llu entries\n", (unsigned long long)n);
  const unsigned char *p = w->image + 32;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t off = u64(p), size = u64(p + 8), len = u64(p + 16);
    printf("  %.*s: %s%s\n", (int)len, (const char *)p + 24,
           size ? "code object" : "empty",
           size && off % 4096 ? " (MISALIGNED)" : "");
    if (size)
      check(memcmp(w->image + off, "\177ELF", 4) == 0, "an ELF code object");
    p += 24 + len;
  }
  return handle_storage;
}

void __hipUnregisterFatBinary(void **h) {
  check(h == handle_storage, "the handle given at registration");
  printf("unregistered\n");
}

void __hipRegisterFunction(void **h, const void *host, const char *dev,
                           const char *name, int limit, void *a, void *b,
                           void *c, void *d, int *e) {
  check(h == handle_storage, "function: the handle");
  check(host && strcmp(dev, name) == 0 && limit == -1 && !a && !b && !c &&
            !d && !e,
        "function: arguments");
  printf("function %s\n", name);
}

void __hipRegisterVar(void **h, void *host, const char *dev, const char *name,
                      int ext, size_t size, int constant, int global) {
  check(h == handle_storage, "var: the handle");
  check(host && strcmp(dev, name) == 0 && global == 0, "var: arguments");
  printf("var %s size %zu extern %d constant %d\n", name, size, ext, constant);
}

void __hipRegisterManagedVar(void **h, void **pointer, void *init,
                             const char *name, size_t size, unsigned align) {
  check(h == handle_storage, "managed: the handle");
  check(pointer && init, "managed: arguments");
  printf("managed %s size %zu align %u\n", name, size, align);
}

void __hipRegisterSurface(void **h, void *host, const char *dev,
                          const char *name, int dim, int ext) {
  printf("surface %s dim %d extern %d\n", name, dim, ext);
}

void __hipRegisterTexture(void **h, void *host, const char *dev,
                          const char *name, int dim, int norm, int ext) {
  printf("texture %s dim %d normalized %d extern %d\n", name, dim, norm, ext);
}

/* What a kernel launch stub calls. */
struct dim3 {
  unsigned x, y, z;
};
int __hipPushCallConfiguration(struct dim3 g, struct dim3 b, size_t shm,
                               void *stream) {
  return 0;
}
int __hipPopCallConfiguration(struct dim3 *g, struct dim3 *b, size_t *shm,
                              void **stream) {
  return 0;
}
int hipLaunchKernel(const void *f, struct dim3 g, struct dim3 b, void **args,
                    size_t shm, void *stream) {
  return 0;
}
