/* sycl_rt.c - a stand-in SYCL runtime for tests. Debian has no DPC++ runtime,
 * so this defines __sycl_register_lib/__sycl_unregister_lib, walks the
 * descriptor the wrapper registered, checks every field and prints what it
 * found. It understands the DPC++ device image struct (version 2: manifest
 * fields and property sets) and upstream LLVM 22's (version 3: neither), so
 * the same program linked by fatlink and by upstream can be compared.
 *
 * SYCL_RT_DUMP=<prefix> writes image i to <prefix><i>.spv (SPIR-V, for
 * spirv-val) or <prefix><i>.bin (native).
 * Specialization constants are laid out as the DPC++ runtime does, which
 * checks that their default values fill the layout; imported symbols are
 * matched with the exports of the program's other images.
 * SYCL_RT_LINKED=1 checks that each SPIR-V image is whole, as a driver
 * building it needs: every entry is an entry point of the module, and every
 * name it imports (LinkageAttributes Import) is one the image lists in
 * 'SYCL/imported symbols' (which the runtime links from another image).
 * SYCL_RT_EXPECT=<t1,t2,...> checks that every kernel is in an image of each
 * target: "spir64" is the JIT SPIR-V, any other name an AOT image whose
 * "compile_target" property says it (intel_gpu_skl, spir64_x86_64).
 * Built with -DSYCL_RT_OPENCL (and -lOpenCL), it also loads each native
 * image for spir64_x86_64 on the first OpenCL CPU device, and each for
 * spir64_fpga on the first accelerator device (the FPGA emulator)
 * (clCreateProgramWithBinary, clBuildProgram) and creates every kernel the
 * image registers, as a runtime would before running one.
 * Built with -DSYCL_RT_CUDA (and -ldl), each native image for "nvptx64"
 * must be a CUDA fatbinary; where the CUDA driver loads (libcuda.so.1, as
 * DPC++'s CUDA backend uses it), it is loaded with cuModuleLoadData on the
 * first GPU, each of its kernels is found by its entry name and launched
 * once (one thread, its parameters zero: the test programs' kernels work on
 * global variables), and then SYCL_RT_CUDA_GLOBALS=<name>:<n>[,...] prints
 * the first n floats of each named global of the image that has it.
 * Any failed check prints "sycl_rt: CHECK FAILED: ..." and exits 1. */
#ifdef SYCL_RT_OPENCL
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#endif
#ifdef SYCL_RT_CUDA
#include <dlfcn.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry { /* llvm::offloading::EntryTy, LLVM >= 20 */
  uint64_t reserved;
  uint16_t version, kind;
  uint32_t flags;
  void *addr;
  const char *name;
  uint64_t size, data;
  void *aux;
};

struct prop {
  const char *name;
  const void *addr;
  uint32_t type;
  uint64_t size;
};

struct prop_set {
  const char *name;
  const struct prop *begin, *end;
};

struct image_v2 { /* DPC++ */
  uint16_t version;
  uint8_t kind, format;
  const char *target, *compile_opts, *link_opts;
  const char *manifest_begin, *manifest_end;
  const unsigned char *begin, *end;
  const struct entry *entries_begin, *entries_end;
  const struct prop_set *sets_begin, *sets_end;
};

struct image_v3 { /* upstream LLVM 22 */
  uint16_t version;
  uint8_t kind, format;
  const char *target, *compile_opts, *link_opts;
  const unsigned char *begin, *end;
  const struct entry *entries_begin, *entries_end;
  const struct prop_set *sets_begin, *sets_end;
};

struct desc {
  uint16_t version, count;
  const void *images;
  const void *host_begin, *host_end;
};

static int registered;

#define CHECK(c, ...)                                                          \
  do {                                                                         \
    if (!(c)) {                                                                \
      printf("sycl_rt: CHECK FAILED: " __VA_ARGS__);                           \
      printf("\n");                                                            \
      fflush(stdout);                                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The compile_target property of an image (a byte array holding a name),
 * copied to `out`; "" when it has none. */
static void compile_target(const struct prop_set *b, const struct prop_set *e,
                           char *out, size_t cap) {
  out[0] = 0;
  for (const struct prop_set *s = b; s && s < e; s++)
    for (const struct prop *p = s->begin; p < s->end; p++)
      if (strcmp(s->name, "SYCL/device requirements") == 0 &&
          strcmp(p->name, "compile_target") == 0 && p->type == 2 &&
          p->size > 8 && p->size - 8 < cap) {
        memcpy(out, (const char *)p->addr + 8, p->size - 8);
        out[p->size - 8] = 0;
      }
}

#ifdef SYCL_RT_OPENCL
static void load_cl_image(unsigned i, cl_device_type type,
                          const unsigned char *b, size_t n,
                          const struct entry *eb, const struct entry *ee) {
  cl_platform_id plats[8];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(8, plats, &np) == CL_SUCCESS && np,
        "image %u: no OpenCL platform", i);
  cl_device_id dev = NULL;
  for (cl_uint p = 0; p < np && p < 8 && !dev; p++)
    if (clGetDeviceIDs(plats[p], type, 1, &dev, NULL) != CL_SUCCESS)
      dev = NULL;
  CHECK(dev, "image %u: no OpenCL %s device", i,
        type == CL_DEVICE_TYPE_CPU ? "CPU" : "accelerator");
  char name[128] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
  cl_int err = 0, status = 0;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(ctx, "image %u: no OpenCL context (%d)", i, err);
  cl_program prog =
      clCreateProgramWithBinary(ctx, 1, &dev, &n, &b, &status, &err);
  CHECK(prog && status == CL_SUCCESS,
        "image %u: '%s' does not take the binary (%d)", i, name, err);
  CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL) == CL_SUCCESS,
        "image %u: the binary does not build on '%s'", i, name);
  size_t nk = 0;
  for (const struct entry *en = eb; en < ee; en++, nk++) {
    cl_kernel k = clCreateKernel(prog, en->name, &err);
    CHECK(k, "image %u: kernel %s is not in the binary (%d)", i, en->name,
          err);
    clReleaseKernel(k);
  }
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  printf("sycl_rt: image %u loaded on '%s', %zu kernel(s) created\n", i, name,
         nk);
}
#endif

#ifdef SYCL_RT_CUDA
/* The driver API, as much as used, loaded by name (the _v2 ones are what
 * cuda.h's names stand for). */
typedef int CUresult;
static struct {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(int *, int);
  CUresult (*retain)(void **, int);
  CUresult (*set_current)(void *);
  CUresult (*load)(void **, const void *);
  CUresult (*function)(void **, void *, const char *);
  CUresult (*param_info)(void *, size_t, size_t *, size_t *);
  CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, unsigned, void *, void **, void **);
  CUresult (*sync)(void);
  CUresult (*global)(unsigned long long *, size_t *, void *, const char *);
  CUresult (*dtoh)(void *, unsigned long long, size_t);
  int ready; /* 1: a GPU, -1: none */
} cu;

static int cuda_ready(void) {
  if (cu.ready)
    return cu.ready > 0;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  struct {
    void *fn;
    const char *name;
  } f[] = {{&cu.init, "cuInit"},
           {&cu.device_get, "cuDeviceGet"},
           {&cu.retain, "cuDevicePrimaryCtxRetain"},
           {&cu.set_current, "cuCtxSetCurrent"},
           {&cu.load, "cuModuleLoadData"},
           {&cu.function, "cuModuleGetFunction"},
           {&cu.param_info, "cuFuncGetParamInfo"},
           {&cu.launch, "cuLaunchKernel"},
           {&cu.sync, "cuCtxSynchronize"},
           {&cu.global, "cuModuleGetGlobal_v2"},
           {&cu.dtoh, "cuMemcpyDtoH_v2"}};
  int ok = lib != NULL;
  for (size_t i = 0; ok && i < sizeof f / sizeof f[0]; i++)
    ok = (*(void **)f[i].fn = dlsym(lib, f[i].name)) != NULL;
  int dev = 0;
  void *ctx = NULL;
  ok = ok && cu.init(0) == 0 && cu.device_get(&dev, 0) == 0 &&
       cu.retain(&ctx, dev) == 0 && cu.set_current(ctx) == 0;
  cu.ready = ok ? 1 : -1;
  if (!ok)
    printf("sycl_rt: no CUDA GPU here: the images are not loaded\n");
  return ok;
}

/* Loads image i, launches each of its kernels once, prints the globals
 * SYCL_RT_CUDA_GLOBALS names that it has. */
static void load_cuda_image(unsigned i, const unsigned char *b,
                            const struct entry *eb, const struct entry *ee) {
  void *mod = NULL;
  CUresult r = cu.load(&mod, b);
  CHECK(r == 0, "image %u: cuModuleLoadData failed (%d)", i, r);
  size_t nk = 0;
  for (const struct entry *en = eb; en < ee; en++, nk++) {
    void *fn = NULL;
    r = cu.function(&fn, mod, en->name);
    CHECK(r == 0, "image %u: kernel %s is not in the module (%d)", i,
          en->name, r);
    size_t at = 0, size = 0, end = 0;
    for (size_t k = 0; cu.param_info(fn, k, &at, &size) == 0; k++)
      end = at + size;
    unsigned char params[4096] = {0};
    CHECK(end <= sizeof params, "kernel %s: %zu bytes of parameters",
          en->name, end);
    void *extra[] = {(void *)1, params, (void *)2, &end, (void *)0};
    r = cu.launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, end ? extra : NULL);
    CHECK(r == 0 && cu.sync() == 0, "kernel %s: launch failed (%d)",
          en->name, r);
  }
  printf("sycl_rt: image %u loaded on the GPU, %zu kernel(s) run\n", i, nk);
  const char *want = getenv("SYCL_RT_CUDA_GLOBALS");
  char list[1024];
  snprintf(list, sizeof list, "%s", want ? want : "");
  for (char *g = strtok(list, ","); g; g = strtok(NULL, ",")) {
    char *colon = strchr(g, ':');
    size_t n = colon ? (size_t)atoi(colon + 1) : 1;
    if (colon)
      *colon = 0;
    unsigned long long ptr = 0;
    size_t bytes = 0;
    float v[256];
    if (cu.global(&ptr, &bytes, mod, g) != 0)
      continue; /* in another module */
    CHECK(n <= 256 && n * sizeof *v <= bytes, "global %s: %zu bytes", g,
          bytes);
    CHECK(cu.dtoh(v, ptr, n * sizeof *v) == 0, "global %s: copy failed", g);
    printf("sycl_rt: %s =", g);
    for (size_t k = 0; k < n; k++)
      printf(" %g", v[k]);
    printf("\n");
  }
}
#endif

static void walk_props(const struct prop_set *b, const struct prop_set *e) {
  CHECK((b == NULL) == (e == NULL) && b <= e, "property set bounds");
  for (const struct prop_set *s = b; s && s < e; s++) {
    CHECK(s->name && *s->name, "property set without a name");
    CHECK(s->begin <= s->end, "property bounds of '%s'", s->name);
    printf("  property set '%s'\n", s->name);
    for (const struct prop *p = s->begin; p < s->end; p++) {
      CHECK(p->name && *p->name, "property without a name in '%s'", s->name);
      switch (p->type) {
      case 1:
        CHECK(p->addr == NULL, "uint32 '%s' has an address", p->name);
        printf("    %s: uint32 %llu\n", p->name, (unsigned long long)p->size);
        break;
      case 2: {
        CHECK(p->addr && p->size >= 8, "byte array '%s' too small", p->name);
        uint64_t bits = 0;
        memcpy(&bits, p->addr, 8);
        CHECK((bits + 7) / 8 + 8 == p->size,
              "byte array '%s': %llu bits in %llu bytes", p->name,
              (unsigned long long)bits, (unsigned long long)p->size);
        printf("    %s: byte array, %llu bytes", p->name,
               (unsigned long long)(p->size - 8));
        for (uint64_t k = 8; k < p->size && k < 8 + 64; k++)
          printf("%s%02x", k == 8 ? " = " : " ",
                 ((const unsigned char *)p->addr)[k]);
        printf("\n");
        break;
      }
      case 3:
        CHECK(p->addr, "string '%s' without value", p->name);
        printf("    %s: string '%s'\n", p->name, (const char *)p->addr);
        break;
      default:
        CHECK(0, "property '%s' has unknown type %u", p->name, p->type);
      }
    }
  }
}

static const struct prop *find_prop(const struct prop_set *b,
                                    const struct prop_set *e, const char *set,
                                    const char *name) {
  for (const struct prop_set *s = b; s && s < e; s++)
    for (const struct prop *p = s->begin;
         strcmp(s->name, set) == 0 && p < s->end; p++)
      if (!name || strcmp(p->name, name) == 0)
        return p;
  return NULL;
}

/* SYCL_RT_LINKED: see the top. SPIR-V words, read as the specification
 * lays them out: instruction = word count << 16 | opcode. */
static void check_linked(unsigned i, const unsigned char *b, size_t n,
                         const struct entry *eb, const struct entry *ee,
                         const struct prop_set *sb, const struct prop_set *se) {
  static const char *entry_points[4096];
  size_t nep = 0, nimports = 0;
  CHECK(n % 4 == 0 && n >= 20, "image %u: %zu bytes of SPIR-V", i, n);
  const uint32_t *w = (const uint32_t *)(const void *)b;
  for (size_t at = 5, len; at < n / 4; at += len) {
    len = w[at] >> 16;
    uint32_t op = w[at] & 0xffff;
    CHECK(len && at + len <= n / 4, "image %u: broken instruction at word "
          "%zu", i, at);
    const char *name = (const char *)(w + at + 3);
    if (op == 15 /* OpEntryPoint */ && len > 3 && nep < 4096)
      entry_points[nep++] = name;
    if (op == 71 /* OpDecorate */ && len > 4 && w[at + 2] == 41 /* Linkage */
        && w[at + len - 1] == 1 /* Import */) {
      CHECK(find_prop(sb, se, "SYCL/imported symbols", name),
            "image %u imports '%s', which it does not define", i, name);
      nimports++;
    }
  }
  for (const struct entry *en = eb; en < ee; en++) {
    size_t k = 0;
    while (k < nep && strcmp(entry_points[k], en->name) != 0)
      k++;
    CHECK(k < nep, "image %u: kernel %s is not an entry point", i, en->name);
  }
  printf("sycl_rt: image %u is whole: %zu entry point(s), %zu import(s) "
         "from other images\n", i, nep, nimports);
}

static uint32_t u32_at(const struct prop *p, uint64_t i) {
  uint32_t v;
  memcpy(&v, (const char *)p->addr + 8 + 4 * i, 4);
  return v;
}

/* Specialization constants as the DPC++ runtime reads them: it walks the
 * constants in order, each a list of {id, offset in the constant, size},
 * and lays their values out one after the other, leaving the gaps the
 * offsets say; the default values must fill that layout exactly. Prints
 * where each constant's value lies. An image whose values were replaced by
 * their defaults has no specialization constants left. */
static void spec_consts(const struct prop_set *b, const struct prop_set *e) {
  static const char ids[] = "SYCL/specialization constants";
  const struct prop *all =
      find_prop(b, e, "SYCL/specialization constants default values", "all");
  const struct prop *def =
      find_prop(b, e, "SYCL/misc properties", "specConstsReplacedWithDefault");
  const struct prop *any = find_prop(b, e, ids, NULL);
  if (def) {
    CHECK(def->type == 1 && def->size == 1 && !any && !all,
          "an image with default values has specialization constants");
    return;
  }
  CHECK(!any == !all, "specialization constants without default values, or "
                      "the reverse");
  if (!any)
    return;
  uint64_t blob = 0;
  for (const struct prop_set *s = b; s < e; s++) {
    if (strcmp(s->name, ids) != 0)
      continue;
    for (const struct prop *p = s->begin; p < s->end; p++) {
      CHECK(p->type == 2 && (p->size - 8) % 12 == 0 && p->size > 8,
            "spec constant '%s': not a list of triples", p->name);
      uint64_t local = 0, start = blob;
      printf("  spec constant %s:", p->name);
      for (uint64_t k = 0; k < (p->size - 8) / 12; k++) {
        uint32_t id = u32_at(p, 3 * k), off = u32_at(p, 3 * k + 1),
                 size = u32_at(p, 3 * k + 2);
        CHECK(off >= local, "spec constant '%s': offsets go back", p->name);
        blob += off - local;
        if (id != 0xffffffffu)
          printf(" id %u at %llu (+%u, %u bytes)", id, (unsigned long long)blob,
                 off, size);
        local = off + size;
        blob += size;
      }
      printf(", %llu bytes from %llu\n", (unsigned long long)(blob - start),
             (unsigned long long)start);
    }
  }
  CHECK(all->type == 2 && all->size - 8 == blob,
        "default values: %llu bytes for a layout of %llu",
        (unsigned long long)(all->size - 8), (unsigned long long)blob);
}

/* The runtime links an image with the images for the same device that
 * export what it imports (dynamic linking): says which imported symbols
 * another image of the program exports (the rest must come from another
 * program, a shared library's). */
static void check_imports(const struct desc *d) {
  size_t nimports = 0, resolved = 0;
  for (unsigned i = 0; i < d->count; i++) {
    const struct image_v2 *im = (const struct image_v2 *)d->images + i;
    if (im->version != 2)
      continue;
    char ct[128], ect[128];
    compile_target(im->sets_begin, im->sets_end, ct, sizeof ct);
    for (const struct prop_set *s = im->sets_begin; s < im->sets_end; s++)
      for (const struct prop *p = s->begin;
           strcmp(s->name, "SYCL/imported symbols") == 0 && p < s->end; p++) {
        int found = 0;
        for (unsigned k = 0; k < d->count && !found; k++) {
          const struct image_v2 *ex = (const struct image_v2 *)d->images + k;
          if (k == i || ex->version != 2 || strcmp(ex->target, im->target))
            continue;
          compile_target(ex->sets_begin, ex->sets_end, ect, sizeof ect);
          found = strcmp(ct, ect) == 0 &&
                  find_prop(ex->sets_begin, ex->sets_end,
                            "SYCL/exported symbols", p->name) != NULL;
        }
        if (!found)
          printf("sycl_rt: image %u imports '%s' from outside the program\n", i,
                 p->name);
        nimports++;
        resolved += found;
      }
  }
  if (nimports)
    printf("sycl_rt: %zu imported symbol(s), %zu exported by another image "
           "for the same device\n",
           nimports, resolved);
}

static void walk(const struct desc *d) {
  CHECK(d && d->version == 1, "descriptor version %u", d ? d->version : 0);
  CHECK(d->count > 0 && d->images, "descriptor has no images");
  printf("sycl_rt: descriptor version %u, %u image(s)\n", d->version,
         d->count);
  const char *kernels[1024];
  size_t nk = 0;
  /* Which kernel is in an image for which target (see SYCL_RT_EXPECT). */
  static struct {
    char target[128];
    const char *kernel;
  } places[4096];
  size_t nplaces = 0;
  const char *dump = getenv("SYCL_RT_DUMP");
  /* Every image of a descriptor has the layout of the first. */
  uint16_t layout = d->count ? *(const uint16_t *)d->images : 0;
  for (unsigned i = 0; i < d->count; i++) {
    const struct image_v2 *v2 = (const struct image_v2 *)d->images + i;
    const struct image_v3 *v3 = (const struct image_v3 *)d->images + i;
    uint16_t version = layout == 3 ? v3->version : v2->version;
    CHECK(version == 2 || version == 3, "image %u version %u", i, version);
    /* Both layouts share the first fields; only take the common ones from
     * the right struct. */
    const unsigned char *b = version == 2 ? v2->begin : v3->begin;
    const unsigned char *e = version == 2 ? v2->end : v3->end;
    const struct entry *eb = version == 2 ? v2->entries_begin : v3->entries_begin;
    const struct entry *ee = version == 2 ? v2->entries_end : v3->entries_end;
    const char *target = version == 2 ? v2->target : v3->target;
    uint8_t kind = version == 2 ? v2->kind : v3->kind;
    uint8_t format = version == 2 ? v2->format : v3->format;
    CHECK(version != 2 || kind == 4, "image %u kind %u, want 4 (SYCL)", i, kind);
    CHECK(b && e && e > b, "image %u is empty", i);
    CHECK(target && *target, "image %u has no target", i);
    uint32_t magic;
    memcpy(&magic, b, 4);
    int native = version == 2 && format == 1;
    char ct[128] = "";
    if (version == 2)
      compile_target(v2->sets_begin, v2->sets_end, ct, sizeof ct);
    if (native && strncmp(ct, "intel_gpu_", 10) == 0) /* ocloc's */
      CHECK((e - b >= 4 && memcmp(b, "\177ELF", 4) == 0) ||
                (e - b >= 8 && memcmp(b, "!<arch>\n", 8) == 0),
            "native image %u is neither ELF nor an archive", i);
    else if (!native)
      CHECK(magic == 0x07230203u,
            "image %u does not start with the SPIR-V magic", i);
    if (version == 2) {
      CHECK(format == 2 || format == 1, "image %u format %u, want 2 (SPIR-V) "
            "or 1 (native)", i, format);
      CHECK(v2->compile_opts && v2->link_opts, "image %u options", i);
      CHECK(!v2->manifest_begin && !v2->manifest_end, "image %u manifest", i);
    }
    CHECK(!native || ct[0], "native image %u has no compile_target", i);
    printf("sycl_rt: image %u: version %u kind %u format %u target %s, "
           "%s%s%s, %zu bytes\n",
           i, version, kind, format, target, native ? "native" : "SPIR-V",
           ct[0] ? " for " : "", ct, (size_t)(e - b));
    /* No entries: a library image (dynamic linking: SYCL_EXTERNAL
     * functions other images import), with both bounds null. */
    CHECK((eb && ee && eb < ee) || (!eb && !ee),
          "image %u has broken offload entry bounds", i);
    if (!eb)
      printf("  no entries\n");
    for (const struct entry *en = eb; en < ee; en++) {
      CHECK(en->name && *en->name, "image %u: entry without name", i);
      CHECK(en->version == 1 && en->kind == 8,
            "entry '%s': version %u kind %u", en->name, en->version, en->kind);
      printf("  entry %s\n", en->name);
      if (nk < 1024)
        kernels[nk++] = en->name;
      if (nplaces < 4096) {
        snprintf(places[nplaces].target, sizeof places[nplaces].target, "%s",
                 native ? ct : target);
        places[nplaces++].kernel = en->name;
      }
    }
    if (version == 2) {
      walk_props(v2->sets_begin, v2->sets_end);
      spec_consts(v2->sets_begin, v2->sets_end);
    }
    if (!native && getenv("SYCL_RT_LINKED"))
      check_linked(i, b, (size_t)(e - b), eb, ee,
                   version == 2 ? v2->sets_begin : NULL,
                   version == 2 ? v2->sets_end : NULL);
#ifdef SYCL_RT_CUDA
    if (native && strcmp(target, "nvptx64") == 0) {
      static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba};
      CHECK(e - b > 16 && memcmp(b, fatbin, 4) == 0,
            "image %u for nvptx64 is not a CUDA fatbinary", i);
      if (cuda_ready())
        load_cuda_image(i, b, eb, ee);
    }
#endif
#ifdef SYCL_RT_OPENCL
    if (native && strcmp(ct, "spir64_x86_64") == 0)
      load_cl_image(i, CL_DEVICE_TYPE_CPU, b, (size_t)(e - b), eb, ee);
    if (native && strcmp(ct, "spir64_fpga") == 0)
      load_cl_image(i, CL_DEVICE_TYPE_ACCELERATOR, b, (size_t)(e - b), eb,
                    ee);
#endif
    if (dump) {
      char path[4096];
      snprintf(path, sizeof path, "%s%u.%s", dump, i, native ? "bin" : "spv");
      FILE *f = fopen(path, "wb");
      CHECK(f, "cannot write %s", path);
      fwrite(b, 1, (size_t)(e - b), f);
      fclose(f);
    }
  }
  check_imports(d);
  qsort(kernels, nk, sizeof *kernels, cmp_str);
  size_t unique = 0;
  for (size_t k = 0; k < nk; k++)
    if (!unique || strcmp(kernels[unique - 1], kernels[k]) != 0)
      kernels[unique++] = kernels[k];
  printf("sycl_rt: kernels:");
  for (size_t k = 0; k < unique; k++)
    printf(" %s", kernels[k]);
  printf("\n");
  const char *expect = getenv("SYCL_RT_EXPECT");
  if (expect && *expect) {
    char list[1024];
    snprintf(list, sizeof list, "%s", expect);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
      for (size_t k = 0; k < unique; k++) {
        size_t n;
        for (n = 0; n < nplaces; n++)
          if (strcmp(places[n].target, t) == 0 &&
              strcmp(places[n].kernel, kernels[k]) == 0)
            break;
        CHECK(n < nplaces, "kernel %s has no image for %s", kernels[k], t);
      }
    printf("sycl_rt: every kernel has an image for each of %s\n", expect);
  }
  fflush(stdout);
}

void __sycl_register_lib(const struct desc *d) {
  walk(d);
  registered++;
}

void __sycl_unregister_lib(const struct desc *d) {
  CHECK(registered > 0, "unregister without register"); /* a shared
                                                            library's too */
  registered--;
  printf("sycl_rt: unregistered\n");
  fflush(stdout);
}
