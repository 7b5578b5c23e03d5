/* planner.h - private to wrapper/plan/: the plan, its device targets and
 * what each offload kind's planner supplies. The core: core.c (targets,
 * wrap, host link), keys.c (cache keys), tools.c, reqs.c, fpga_inputs.c
 * and fpga_archive.c. The planners, which call the core and never each
 * other: sycl.c (with sycl_emit.c, each module's SPIR-V, sycl_spirv.c, the
 * SPIR-V inputs linked with them, and sycl_aot.c, what the modules
 * become), sycl_native.c (SYCL for NVIDIA and AMD GPUs), fpga.c,
 * openmp.c, cuda.c. */
#ifndef LW_PLANNER_H
#define LW_PLANNER_H

#include "cache/cache.h"
#include "plan/plan.h"
#include "run/run.h"

#include "aot.h"
#include "dl.h"
#include "ex.h"
#include "wrp.h"

/* Tools the plan runs: aoc from PATH, LLVM's llvm-objcopy (the build names
 * it). */
#define LW_AOC "aoc"
#define LW_SPIRV_LINK "spirv-link"
#ifndef LW_LLD
#define LW_LLD "ld.lld"
#endif
#ifndef LW_OBJCOPY
#define LW_OBJCOPY "llvm-objcopy"
#endif

struct target;
struct sycl_pool;

/* A SYCL module emitted in parts (sycl_parts.c). */
struct sycl_parted {
  size_t index;          /* the module's */
  struct dl_parts parts;
  struct lw_buf *spv;    /* each part's SPIR-V, once made */
};
struct native_module;

/* A native SPIR-V input of SYCL targets (sycl_spirv.c): an image of image
 * kind SPIR-V, or a device library given as SPIR-V. */
struct spv_object {
  const unsigned char *data;
  size_t size;
  const char *name;      /* for messages */
  const char *path;      /* its file, or NULL: written to `tmp` if needed */
  struct lw_tmp *tmp;
  struct dl_spirv_linkage link;
};
struct spv_objects {
  struct spv_object *o;
  size_t n, cap;
};

/* What a SYCL target's modules become: the JIT SPIR-V image itself, or a
 * native image for one AOT device (sycl_aot.c). */
struct sycl_out {
  enum aot_target kind;          /* AOT_JIT, AOT_GEN, AOT_CPU, AOT_FPGA */
  const struct aot_device *dev;  /* its device configuration entry */
  char *name;                    /* for messages: "intel_gpu_skl", ... */
  char *compile_target;          /* the image's "compile_target" property,
                                    by which the runtime picks it for a
                                    device: intel_gpu_skl, spir64_x86_64 */
  struct lw_strvec args;         /* the AOT compiler's options */
  int in_process;                /* compiled in process, not by the tool */
  int aoc;                       /* FPGA hardware or simulation: aoc */
};

/* One module compiled for one AOT out. */
struct aot_image {
  struct lw_buf image;
  struct dl_props props; /* the module's, with compile_target */
  int dropped;           /* the aspect filter kept the module away */
  struct lw_tmp *out;    /* the tool's output file */
};

/* One SYCL device module after the split (its kernels and property sets
 * are its group's, t->split.g[index]). */
struct sycl_module {
  struct target *t;
  size_t index;
  struct lw_buf image;    /* its SPIR-V */
  struct lw_tmp *spv;     /* its SPIR-V file: made by llvm-spirv, or the
                             --save-temps copy */
  struct lw_tmp *bc;      /* its bitcode, for an external llvm-spirv */
  struct aot_image *aot;  /* one per target out (unused for the JIT one) */
  int spv_current;        /* `spv` holds `image` */
  struct spv_object *obj; /* after the split's: the SPIR-V input it is */
};

struct target {
  struct lw_plan *plan;
  const struct lw_planner *planner;
  unsigned kind;
  const char *triple, *arch;
  const struct ex_image **imgs; /* SYCL: from its first job on, only */
  size_t nimgs;                 /* the bitcode images; */
  struct spv_objects spv;       /* the SPIR-V ones are here */
  enum aot_target aot;
  /* SYCL: link and split, then one module each */
  struct dl_module *mod;
  struct dl_split split;
  struct sycl_module *modules;
  size_t nmodules;
  int workers;            /* forked processes emitting the modules, or 0 */
  struct sycl_parted *parted; /* its modules emitted in parts */
  size_t nparted;
  struct sycl_pool *pool; /* what they share (sycl.c) */
  size_t cost;            /* instructions in all modules */
  struct sycl_out *outs;  /* what the modules become, in order */
  size_t nouts;
  /* OpenMP: the linked device image */
  struct lw_buf image;
  struct lw_tmp *out_tmp;
  /* SYCL modules for NVIDIA and AMD GPUs (sycl_native.c) */
  struct native_module *native;
  size_t nnative;
  /* FPGA binaries (fpga.c) */
  struct fpga_image *fpga;
  size_t nfpga;
  struct fpga_desc *desc; /* DPC++'s descriptors, one per image, read lazily */
};

/* One fatbinary of a CUDA or HIP link (cuda.c): its job, made by the
 * kind's first target, its file and its bytes. */
enum lw_fatbin_slot { LW_FATBIN_CUDA, LW_FATBIN_HIP, LW_FATBIN_SLOTS };
struct lw_fatbin {
  struct lw_plan *plan;
  unsigned ofk; /* EX_OFK_CUDA or EX_OFK_HIP */
  struct lw_job *job;
  struct lw_tmp *tmp;
  struct lw_buf bytes;
};

struct lw_plan {
  const struct lw_options *o;
  const struct lw_link_line *line;
  const struct lw_planner *const *planners;
  size_t nplanners;
  struct target *t;
  size_t n;
  struct lw_job *wrap, *link;
  struct lw_tmp *wrapper_obj, *out_tmp;
  char *wrapped_ir;
  struct lw_tmp *host_link_rsp; /* its arguments, when too long for execve */
  /* Built in wrap's prepare, used by its run. */
  struct wrp_sycl_image *sycl;
  struct wrp_omp_image *omp;
  size_t nsycl, nomp, capsycl, capomp;
  /* SYCL device libraries, read once for every SYCL target. */
  struct dl_input *libs;
  size_t nlibs;
  struct ex_set lib_images; /* images of fat-object libraries */
  struct lw_buf *lib_bitcode; /* every library's bytes, one per lib */
  struct lw_strvec lib_paths; /* the paths the inputs are named by */
  struct spv_objects spv_libs; /* those that are SPIR-V (sycl_spirv.c) */
  /* The device configuration, loaded when some target needs it. */
  struct aot_config config;
  int have_config;
  /* The FPGA libraries' list for aoc (fpga_inputs.c), made once. */
  struct lw_tmp *aoco_list;
  int aoco_listed;
  /* The dependency files for aoc, "a.d,b.d" (fpga_inputs.c), made once. */
  struct lw_buf dep_files;
  int deps_listed;
  /* The CUDA and HIP fatbinaries (cuda.c). */
  struct lw_fatbin fatbin[LW_FATBIN_SLOTS];
  /* The cache (--cache-dir), or NULL; the key of the whole device side when
   * it is cached whole (keys.c), and on a hit what it held. */
  struct lw_cache *cache;
  unsigned char key[LW_HASH_SIZE];
  int keyed, hit;
  struct lw_buf cached;   /* the registration object */
  struct lw_buf warnings; /* what the device side warned, to replay */
};

/* ---- sycl_emit.c: each SYCL module's SPIR-V ------------------------------ */

/* A module made: its SPIR-V goes to `deliver`. */
typedef int (*lw__deliver_fn)(void *ctx, size_t i, const unsigned char *spv,
                              size_t n, struct lw_diag *d);
/* Where modules are made: by children forked for them; in this process,
 * the link's only module; or in this process, a forked worker, which hands
 * an invalid module to `deliver` without SPIR-V (n 0) to be made again by
 * a process of its own. */
enum lw__emit_where { LW__EMIT_CHILD, LW__EMIT_ONLY, LW__EMIT_HANDBACK };
/* Modules [first, end) of t (or, with `parts`, those parts of its module),
 * each to `deliver` (and the cache): in rounds until every one is made or
 * handed back. sycl_emit.c says how. */
int lw__sycl_emit(struct target *t, const struct dl_parts *parts,
                  size_t first, size_t end, enum lw__emit_where where,
                  lw__deliver_fn deliver, void *ctx, struct lw_diag *d);
/* A deliver function: the SPIR-V appended to `buf`, a struct lw_buf. */
int lw__to_buf(void *buf, size_t i, const unsigned char *spv, size_t n,
               struct lw_diag *d);
/* What a process emitting modules of `instructions` in all, one at a time,
 * may take beside what it shares with this one (--wrapper-memory): the
 * modules and the back end's state for one of them. */
uint64_t lw__emit_footprint(size_t instructions);
/* "k1, k2, k3 and 4 more" (the first `shown` names), malloc'd; NULL when
 * out of memory (sycl_aot.c). */
char *lw__kernel_list(const struct lw_strvec *k, size_t shown);
/* 8 bytes, little-endian. */
int lw__put_u64(struct lw_buf *b, uint64_t v);
uint64_t lw__get_u64(const unsigned char *p);

/* ---- sycl_spirv.c: native SPIR-V inputs, linked after emission ----------- */

/* Adds a SPIR-V object (its bytes outlive `v`): LW_EFORMAT, naming it,
 * when it is not SPIR-V. */
int lw__spv_add(struct spv_objects *v, const unsigned char *data, size_t size,
                const char *name, const char *path, struct lw_diag *d);
void lw__spv_free(struct spv_objects *v);
/* Appends the names that the target's SPIR-V objects, other than those
 * with entry points, export: what its bitcode may leave undefined.
 * LW_ENOMEM or 0. */
int lw__spv_exports(const struct target *t, struct lw_strvec *out);
/* What follows once a module's SPIR-V is final. */
typedef int (*lw__module_fn)(struct lw_graph *g, struct sycl_module *m,
                             struct lw_diag *d);
/* Module m's SPIR-V is emitted: links it with the SPIR-V objects it needs
 * (a spirv-link job, which wrap waits for), then `then`; or `then` at once
 * when it needs none. */
int lw__spv_link(struct lw_graph *g, struct sycl_module *m, lw__module_fn then,
                 struct lw_diag *d);

/* ---- sycl_parts.c: modules emitted in parts ------------------------------ */

/* Cuts the target's big modules into parts (t->parted), as the cost model
 * decides: in the link job, before any worker forks. */
int lw__sycl_cut(struct target *t, struct lw_diag *d);
/* Module i of t if it is emitted in parts, else NULL. */
const struct sycl_parted *lw__sycl_parted(const struct target *t, size_t i);
/* The jobs that emit the parts of each module in t->parted and merge them;
 * `then` gets each merged module. */
int lw__sycl_parts(struct lw_graph *g, struct target *t, lw__module_fn then,
                   struct lw_diag *d);
void lw__sycl_parts_free(struct target *t);

/* ---- keys.c: what decides each cached result's bytes ------------------- */

/* May the link's whole device side come from the cache? */
int lw__device_side_cacheable(const struct lw_plan *p);
/* The key of a split module's SPIR-V: its bitcode and what turns it into
 * SPIR-V. */
void lw__spirv_key(const struct lw_options *o, const void *bitcode, size_t n,
                   unsigned char key[LW_HASH_SIZE]);
/* The key of a module's AOT image for `out`: its SPIR-V, the device, the
 * tool's arguments and identity, the launcher that runs it. */
int lw__aot_key(const struct lw_strvec *launcher, const struct sycl_out *out,
                const void *spirv, size_t n, unsigned char key[LW_HASH_SIZE],
                struct lw_diag *d);
/* The key of the whole device side: everything that decides its bytes. */
int lw__device_side_key(const struct lw_plan *p,
                        unsigned char key[LW_HASH_SIZE], struct lw_diag *d);

/* What an offload kind brings to the plan (sycl.c, openmp.c);
 * the driver hands the planners to lw_plan_build. */
struct lw_planner {
  unsigned kind; /* EX_OFK_* */
  /* Its targets' whole device side may come from the cache: keys.c's key
   * covers everything they read (SYCL; OpenMP, CUDA and HIP: their inputs,
   * options, tools and what the device links' -L/-l find). */
  int whole_cache;
  /* Its targets are finished or half-finished FPGA binaries (fpga.c), which
   * the AOCO and dependency lists and an FPGA archive link take; or DPC++'s
   * descriptors of such binaries (fpga.c's second planner). */
  int fpga_binaries, fpga_descriptors;
  /* Which images of that kind it takes (NULL: all); planners are asked in
   * the driver's order. */
  int (*claims)(const struct ex_image *img);
  /* What about the image is not supported yet, or NULL. */
  const char *(*unsupported)(const struct ex_image *img);
  /* Adds the target's first job (it adds the rest as it learns more), or
   * sets *out to NULL when the target needs no job. */
  int (*first_job)(struct lw_graph *g, struct target *t, struct lw_job **out,
                   struct lw_diag *d);
  /* In wrap's prepare: appends the target's images to the plan's sycl or
   * omp list (NULL: it has none of its own). */
  int (*images)(struct lw_plan *p, struct target *t, struct lw_diag *d);
  void (*free)(struct target *t);
  void (*free_plan)(struct lw_plan *p); /* what its targets shared; or NULL */
};

/* ---- sycl_aot.c ---------------------------------------------------------- */

/* Decides the target's outs: for generic SPIR-V the --sycl-targets list
 * (default: the JIT image), for an AOT triple its own device; and for each
 * AOT out whether it is compiled in process or by the tool. */
int lw__aot_plan_target(struct target *t, struct lw_diag *d);

/* Module m's SPIR-V is ready: filters it for every AOT out and adds a
 * compile job for each it may go to (wrap waits for them). */
int lw__aot_module_ready(struct lw_graph *g, struct sycl_module *m,
                         struct lw_diag *d);

/* How out k takes specialization constants: the DL_SPEC_* modes of the
 * module copies it gets. */
unsigned lw__aot_spec_modes(const struct target *t, size_t k);
/* Does out k get module `module` (its copy for the out's way of lowering
 * specialization constants, or a module without any)? */
int lw__aot_takes(const struct target *t, size_t k, size_t module);

/* After the split: virtual functions go to the JIT image only, for now. */
int lw__aot_check_virtual(const struct target *t, struct lw_diag *d);
/* After the split: warns about AOT devices of generic SPIR-V that get
 * specialization constants as their default values. */
void lw__aot_spec_warning(const struct target *t);

/* After every job: warns about kernels no requested target got. */
void lw__aot_check_coverage(const struct target *t);

void lw__aot_free(struct target *t);

/* ---- tools.c ---------------------------------------------------------------- */

/* Appends the paths of the device libraries `names` (--sycl-device-
 * libraries=, --sycl-nvptx-device-libraries=): in
 * --sycl-device-library-location= unless absolute. LW_ENOMEM or 0. */
int lw__device_lib_paths(const struct lw_options *o,
                         const struct lw_strvec *names, struct lw_strvec *out);

/* A CUDA toolkit program (ptxas, fatbinary): in --cuda-path's bin/, else on
 * PATH, else in /usr/local/cuda/bin (where clang looks first too);
 * malloc'd. */
char *lw__cuda_tool(const struct lw_options *o, const char *name);
/* The toolkit's libdevice.10.bc (--cuda-path's, else /usr/local/cuda's),
 * malloc'd; NULL when there is none. */
char *lw__cuda_libdevice(const struct lw_options *o);

/* ---- devargs.c -------------------------------------------------------------- */

/* Appends the --device-linker= (each after -Xlinker) and then the
 * --device-compiler= arguments that apply to `triple` ("[triple=]arg"; no
 * triple: every one). */
int lw__push_device_args(struct lw_strvec *argv, const struct lw_options *o,
                         const char *triple);

/* ---- core.c, for the planners ------------------------------------------- */

/* Is `triple` an NVIDIA (nvptx64-) or AMD (amdgcn-) GPU's? */
int lw__gpu_triple(const char *triple);

/* A warning of the device side: printed, and kept for the cache. */
void lw__warn(struct lw_plan *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* With --sycl-abi=llvm22, an error naming the native image (`what`: its
 * device) that LLVM 22's layout cannot carry; else 0. */
int lw__native_abi_check(const struct lw_plan *p, const char *what,
                         struct lw_diag *d);
/* Writes each image of `t` to a temporary of `stage` and appends its path.
 * The file's extension is `as`, or if NULL what its content is (.o, .bc or
 * .ll). */
int lw__push_device_inputs(struct lw_strvec *argv, const struct target *t,
                           const char *stage, const char *as,
                           struct lw_diag *d);
/* gpu_link.c: a GPU device link job's `prepare`, as upstream links CUDA and HIP
 * relocatable device code and OpenMP's GPU code: clang for the target's
 * triple and architecture (nvlink or LTO + lld underneath) into
 * t->out_tmp. */
int lw__gpu_link_prepare(struct lw_graph *g, struct lw_job *j,
                         struct lw_diag *d);
/* A device link job's `done`: its output (t->out_tmp) into t->image. */
int lw__read_device_image(struct lw_graph *g, struct lw_job *j,
                          struct lw_diag *d);

/* ---- fpga_inputs.c, fpga_archive.c: FPGA binaries beside the planners ---- */

enum fpga_kind { FPGA_AOCX, FPGA_AOCR, FPGA_AOCO, FPGA_DEP };
/* The kind of FPGA binary a triple names (older DPC++ adds "-sycldevice");
 * 0 when none. */
int lw__fpga_kind_of(const char *triple, enum fpga_kind *k);
/* The length of the input file's name in an origin: an archive member's
 * "lib.a(member)" is lib.a's. */
size_t lw__origin_file_len(const char *origin);

/* One AOCX or AOCR image of an FPGA target (fpga.c), which an FPGA archive
 * link takes too. */
struct fpga_image {
  struct target *t;
  const struct ex_image *img;
  size_t index; /* among the target's images */
  struct lw_strvec kernels;
  struct dl_props props;
  struct lw_tmp *in, *out; /* an AOCR's file and aoc's AOCX */
  struct lw_buf aocx;      /* what aoc made */
};

/* The list file of the link's FPGA libraries (AOCO), written the first time
 * it is asked for; *path is NULL when there are none. */
int lw__fpga_library_list(struct lw_plan *p, const char **path,
                          struct lw_diag *d);

/* The link's FPGA dependency files (-fintelfpga), written the first time
 * they are asked for, as aoc's -dep-files= wants them; *files is NULL when
 * there are none. */
int lw__fpga_dep_files(struct lw_plan *p, const char **files,
                       struct lw_diag *d);

/* --fpga-link-type: waits for the device jobs as wrap would, then writes
 * the archive instead of the wrapper object and host link. */
extern const struct lw_job_kind lw__fpga_archive_kind;

/* Before any job runs: can the targets go into an FPGA archive? */
int lw__fpga_archive_check(const struct lw_plan *p, struct lw_diag *d);
/* ---- sycl_aot.c, for sycl.c ---------------------------------------------- */

/* Frees the device configuration the plan loaded. */
void lw__aot_free_plan(struct lw_plan *p);

#endif
