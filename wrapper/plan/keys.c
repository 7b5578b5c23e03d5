/* keys.c - what decides the bytes of a link's whole device side, for
 * the cache (wrapper/cache/): a relink whose device code, device libraries,
 * options and tools did not change takes the registration object (and the
 * warnings the device side printed) from the cache and skips link, split,
 * code generation and AOT compilation. The key hashes:
 *   - fatlink itself (its executable's identity: a rebuilt fatlink changes
 *     it) and libLLVM's (version and file), the host triple, a
 *     relocatable link;
 *   - the options that decide device bytes, as given (lw_options.key_args:
 *     not the job count, verbosity, traces, the cache's or the host
 *     linker's), and the LLVM options;
 *   - every target in order: offload kind, triple, arch, and each image's
 *     strings and bytes in link order;
 *   - the device libraries' bytes, the device configuration file's bytes;
 *   - the AOT tools a link may run: ocloc, opencl-aot and aoc on PATH (the
 *     package that updates libocloc updates ocloc) and the OpenCL vendor
 *     files and their libraries, which the in-process back ends load: path,
 *     size and modification time, which an upgrade changes; PATH's and
 *     LD_LIBRARY_PATH's and OCL_ICD_VENDORS' values.
 * And the key of one split module's SPIR-V: fatlink and LLVM, the code
 * generation options and the module's bitcode; of one AOT image: the
 * device, its tool's arguments and identity, and the SPIR-V.
 * Only links whose targets are all SYCL (fatlink's in-process device link)
 * are cached whole, and not when they must leave files besides the output
 * (--save-temps, --sycl-dump-device-code, FPGA archives) or print steps
 * (--dry-run, --print-wrapped-module), or use an external llvm-spirv. */
#include "plan/planner.h"

#include <dirent.h>
#include <dlfcn.h>
#include <llvm-c/Core.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LW_VERSION
#define LW_VERSION "0"
#endif
#ifndef LW_LLVM_VERSION
#define LW_LLVM_VERSION "0"
#endif

int lw__device_side_cacheable(const struct lw_plan *p) {
  const struct lw_options *o = p->o;
  if (!o->cache_dir || !p->n || o->dry_run || o->save_temps || o->dump_dir ||
      o->print_wrapped || o->fpga_link || o->emit_fatbin_only || o->llvm_spirv)
    return 0;
  for (size_t i = 0; i < p->n; i++)
    if (!p->t[i].planner->whole_cache)
      return 0;
  return 1;
}

/* A file's identity: its path, and when it exists its size and time. */
static void file_identity(struct lw_hash *h, const char *path) {
  struct stat st;
  lw_hash_str(h, path);
  if (path && stat(path, &st) == 0) {
    lw_hash_u64(h, (uint64_t)st.st_size);
    lw_hash_u64(h, (uint64_t)st.st_mtim.tv_sec);
    lw_hash_u64(h, (uint64_t)st.st_mtim.tv_nsec);
  } else {
    lw_hash_u64(h, UINT64_MAX);
  }
}

/* A tool by name (found on PATH) or by path. */
static void tool_identity(struct lw_hash *h, const char *tool) {
  char *found = strchr(tool, '/') ? strdup(tool) : lw_find_on_path(tool);
  lw_hash_str(h, tool);
  file_identity(h, found);
  free(found);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files in a directory of OpenCL vendors: names and contents, which
 * name the libraries. */
static int vendors_identity(struct lw_hash *h, const char *dir,
                            struct lw_diag *d) {
  lw_hash_str(h, dir);
  DIR *v = opendir(dir);
  struct dirent *e;
  struct lw_strvec names = {0};
  int rc = 0;
  while (!rc && v && (e = readdir(v)))
    if (e->d_name[0] != '.')
      rc = lw_strvec_push(&names, e->d_name) ? LW_ENOMEM : 0;
  if (v)
    closedir(v);
  if (names.n > 1)
    qsort(names.v, names.n, sizeof *names.v, cmp_str);
  for (size_t i = 0; !rc && i < names.n; i++) {
    char *path = lw_xasprintf("%s/%s", dir, names.v[i]);
    struct lw_buf b = {0};
    struct lw_diag ignore = {0};
    lw_hash_str(h, names.v[i]);
    if (path && lw_read_file(path, &b, &ignore) == 0) {
      lw_hash_u64(h, b.len);
      lw_hash_update(h, b.data, b.len);
      /* A vendor file names its library: that library too. */
      char *lib = strndup((const char *)b.data, b.len);
      if (lib) {
        lib[strcspn(lib, "\r\n")] = 0;
        file_identity(h, lib);
      }
      free(lib);
    }
    lw_buf_free(&b);
    free(path);
  }
  lw_strvec_free(&names);
  return rc ? lw_error(d, LW_ENOMEM, "out of memory") : 0;
}

static int file_contents(struct lw_hash *h, const char *path,
                         struct lw_diag *d) {
  struct lw_buf b = {0};
  int rc = lw_read_file(path, &b, d);
  lw_hash_str(h, path);
  if (!rc) {
    lw_hash_u64(h, b.len);
    lw_hash_update(h, b.data, b.len);
  }
  lw_buf_free(&b);
  return rc;
}

static void strvec(struct lw_hash *h, const struct lw_strvec *v) {
  lw_hash_u64(h, v->n);
  for (size_t i = 0; i < v->n; i++)
    lw_hash_str(h, v->v[i]);
}

/* fatlink and the LLVM it generates code with: versions and files. */
static void toolchain(struct lw_hash *h) {
  lw_hash_str(h, LW_VERSION);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  file_identity(h, exe);
  lw_hash_str(h, LW_LLVM_VERSION);
  Dl_info info;
  file_identity(h, dladdr((void *)LLVMContextCreate, &info) && info.dli_fname
                       ? info.dli_fname
                       : NULL);
}

void lw__spirv_key(const struct lw_options *o, const void *bitcode, size_t n,
                   unsigned char key[LW_HASH_SIZE]) {
  struct lw_hash h;
  lw_hash_init(&h);
  lw_hash_str(&h, "fatlink spirv 1");
  toolchain(&h);
  lw_hash_u64(&h, (uint64_t)o->opt_level);
  strvec(&h, &o->llvm_opts);
  lw_hash_u64(&h, n);
  lw_hash_update(&h, bitcode, n);
  lw_hash_final(&h, key);
}

int lw__aot_key(const struct lw_strvec *launcher, const struct sycl_out *out,
                const void *spirv, size_t n, unsigned char key[LW_HASH_SIZE],
                struct lw_diag *d) {
  static const struct lw_strvec none;
  struct lw_hash h;
  lw_hash_init(&h);
  lw_hash_str(&h, "fatlink aot 1");
  toolchain(&h); /* it makes the tool's arguments */
  lw_hash_u64(&h, (uint64_t)out->kind);
  lw_hash_str(&h, out->name);
  lw_hash_str(&h, out->compile_target);
  strvec(&h, &out->args);
  lw_hash_u64(&h, (uint64_t)out->in_process);
  /* The compiler: the tool, or the library and OpenCL runtimes that work
   * in process (where PATH's ocloc stands for its package's libocloc). */
  lw_hash_str(&h, getenv("PATH"));
  lw_hash_str(&h, getenv("LD_LIBRARY_PATH"));
  tool_identity(&h, out->kind == AOT_GEN ? "ocloc" : "opencl-aot");
  const char *icd = getenv("OCL_ICD_VENDORS");
  lw_hash_str(&h, icd);
  int rc =
      out->kind != AOT_GEN
          ? vendors_identity(&h, icd && *icd ? icd : "/etc/OpenCL/vendors", d)
          : 0;
  strvec(&h, launcher ? launcher : &none); /* it may run another tool */
  lw_hash_u64(&h, n);
  lw_hash_update(&h, spirv, n);
  if (!rc)
    lw_hash_final(&h, key);
  return rc;
}

int lw__device_side_key(const struct lw_plan *p,
                        unsigned char key[LW_HASH_SIZE], struct lw_diag *d) {
  const struct lw_options *o = p->o;
  struct lw_hash h;
  lw_hash_init(&h);
  lw_hash_str(&h, "fatlink device side 1");
  toolchain(&h);
  lw_hash_str(&h, o->host_triple);
  strvec(&h, &p->line->shared); /* an OpenMP CPU device link's -L/-l */
  lw_hash_u64(&h, (uint64_t)o->relocatable);
  strvec(&h, &o->key_args);
  strvec(&h, &o->llvm_opts);
  for (size_t i = 0; i < p->n; i++) {
    const struct target *t = &p->t[i];
    lw_hash_u64(&h, t->kind);
    lw_hash_str(&h, t->triple);
    lw_hash_str(&h, t->arch);
    lw_hash_u64(&h, t->nimgs);
    for (size_t k = 0; k < t->nimgs; k++) {
      const struct ex_image *img = t->imgs[k];
      lw_hash_u64(&h, img->image_kind);
      lw_hash_u64(&h, img->nstrings);
      for (size_t s = 0; s < img->nstrings; s++) {
        lw_hash_str(&h, img->strings[s].key);
        lw_hash_u64(&h, img->strings[s].value_len);
        lw_hash_update(&h, img->strings[s].value, img->strings[s].value_len);
      }
      lw_hash_u64(&h, img->size);
      lw_hash_update(&h, img->data, img->size);
    }
  }
  struct lw_strvec libs = {0};
  int rc = lw__device_lib_paths(o, &o->device_libs, &libs) ||
                   lw__device_lib_paths(o, &o->nvptx_device_libs, &libs)
               ? lw_error(d, LW_ENOMEM, "out of memory")
               : 0;
  for (size_t i = 0; !rc && i < libs.n; i++) {
    /* A library that cannot be read is the link's error, said by the
     * link: here it only makes the key. */
    struct lw_diag ignore = {0};
    file_contents(&h, libs.v[i], &ignore);
  }
  lw_strvec_free(&libs);
  if (!rc && o->device_config)
    rc = file_contents(&h, o->device_config, d);
  /* The GPU device links' tools (clang, with nvlink or lld underneath, and
   * HIP's bundler) and what their -L and -l find: an OpenMP device
   * runtime, a library of device code. */
  static const char *const tools[] = {"ocloc",    "opencl-aot",
                                      "aoc",      "spirv-link",
                                      LW_LLD,     LW_CLANG,
                                      LW_OFFLOAD_BUNDLER};
  lw_hash_str(&h, getenv("PATH"));
  for (size_t i = 0; !rc && i < LW_ARRAY_SIZE(tools); i++)
    tool_identity(&h, tools[i]);
  struct lw_strvec found = {0};
  if (!rc && lw_device_link_libs(o, &found))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < found.n; i++)
    file_identity(&h, found.v[i]);
  lw_strvec_free(&found);
  /* -load-pass-plugin's libraries change what the device links make */
  for (size_t i = 0; !rc && i < o->pass_plugins.n; i++)
    file_identity(&h, o->pass_plugins.v[i]);
  static const char *const cuda[] = {"ptxas", "fatbinary", "nvlink"};
  for (size_t i = 0; !rc && i < LW_ARRAY_SIZE(cuda); i++) {
    char *tool = lw__cuda_tool(o, cuda[i]);
    if (!tool)
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    else
      tool_identity(&h, tool);
    free(tool);
  }
  char *libdevice = lw__cuda_libdevice(o);
  file_identity(&h, libdevice);
  free(libdevice);
  if (!rc) {
    /* Where libocloc and the OpenCL libraries come from. */
    lw_hash_str(&h, getenv("LD_LIBRARY_PATH"));
    const char *icd = getenv("OCL_ICD_VENDORS");
    lw_hash_str(&h, icd);
    rc = vendors_identity(&h, icd && *icd ? icd : "/etc/OpenCL/vendors", d);
  }
  if (!rc)
    lw_hash_final(&h, key);
  return rc;
}
