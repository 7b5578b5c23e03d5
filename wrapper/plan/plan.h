/* plan.h - private to wrapper/: what the driver hands the plan (the parsed
 * options, what it read off the host link's command line, the images) and
 * what it gets back. The planners' own shared header is planner.h. */
#ifndef LW_PLAN_H
#define LW_PLAN_H

#include "lw_base.h"

#include <stdint.h>

/* ---- the parsed options (options.c fills them) --------------------------- */

/* The host a link is for when nothing says otherwise. */
#define LW_DEFAULT_HOST_TRIPLE "x86_64-pc-linux-gnu"

struct lw_options {
  const char *host_triple;
  const char *linker_path;
  const char *output; /* -o value, or "a.out" */
  int jobs;           /* --wrapper-jobs, default: online cores */
  int sycl_jobs;      /* --parallel-link-sycl=, 0: as many as jobs */
  int dry_run, save_temps, verbose, print_wrapped, time_trace;
  int relocatable;         /* -r: the output is an object for a later link */
  int opt_level;           /* --opt-level=O<n>, default 2 */
  int split_mode;          /* enum dl_split_mode, default auto */
  int split_given;         /* by an option (else FPGA targets do not split) */
  enum { LW_FPGA_NONE, LW_FPGA_EARLY, LW_FPGA_IMAGE } fpga_link;
  const char *dump_dir;    /* --sycl-dump-device-code= */
  struct lw_strvec device_libs; /* --sycl-device-libraries=, in order */
  struct lw_strvec nvptx_device_libs; /* --sycl-nvptx-device-libraries= */
  struct lw_strvec ptxas_args;  /* --ptxas-arg= */
  const char *device_lib_dir;   /* --sycl-device-library-location= */
  const char *llvm_spirv;       /* --spirv-translator=llvm-spirv[=path] */
  /* --sycl-emit-isolation=: who emits a worker's SYCL modules */
  enum { LW_EMIT_WORKER, LW_EMIT_BATCH, LW_EMIT_MODULE } emit_isolation;
  int part_size;                /* --sycl-part-size=, instructions */
  int whole_link;               /* --sycl-device-link=whole */
  int spirv_validate;           /* --spirv-check=full */
  const char *spirv_ext;        /* --spirv-extensions=, the last one */
  struct lw_strvec llvm_spirv_opts; /* --llvm-spirv-options=, split */
  struct lw_strvec sycl_targets;    /* --sycl-targets=, in order */
  int targets_follow;               /* parsing: after --sycl-targets= */
  const char *device_config;        /* --device-config-file= */
  struct lw_strvec gpu_tool_args;   /* --gpu-tool-arg= words, in order */
  struct lw_strvec cpu_tool_args;   /* --cpu-tool-arg= words, in order */
  struct lw_strvec fpga_tool_args;  /* --fpga-tool-arg= words, in order */
  int tool_timeout;                 /* --tool-timeout= seconds, 0: none */
  int aot_tools;                    /* --aot-in-process=off */
  const char *time_trace_file;      /* --wrapper-time-trace=, else
                                       <output>.time-trace */
  int time_trace_grain;             /* microseconds, default 500 */
  const char *cuda_path;            /* --cuda-path= */
  int compress, compression_level;  /* --compress, --compression-level= */
  int compression_level_given;
  const char *sysroot;              /* --sysroot= (also the linker's) */
  struct lw_strvec should_extract;  /* --should-extract= architectures */
  int emit_fatbin_only;             /* --emit-fatbin-only */
  int embed_bitcode;                /* --embed-bitcode */
  /* post-link: -support-dynamic-linking, -emit-imported-symbols,
   * -emit-exported-symbols */
  int sycl_dynamic_linking, sycl_emit_imported, sycl_emit_exported;
  int sycl_allow_undefined; /* --sycl-allow-undefined */
  int sycl_allow_size_mismatch; /* --sycl-allow-size-mismatch */
  int sycl_keep_externals; /* --no-sycl-remove-unused-external-funcs */
  int sycl_lower_esimd;    /* post-link -lower-esimd */
  const char *sycl_compile_opts, *sycl_link_opts; /* the images' options */
  int sycl_abi; /* --sycl-abi=: an enum wrp_sycl_abi */
  unsigned sycl_spec_const;     /* -spec-const=: DL_SPEC_NATIVE or
                                   DL_SPEC_EMULATION; 0: per target */
  int sycl_default_spec_images; /* -generate-device-image-default-spec-consts */
  /* --tool-launcher= and the back ends' own (--gpu-, --cpu-,
   * --fpga-tool-launcher=): words put before a tool's argv */
  struct lw_strvec tool_launcher, gpu_launcher, cpu_launcher, fpga_launcher;
  const char *cache_dir;     /* --cache-dir=, FATLINK_CACHE_DIR, or NULL */
  uint64_t cache_size;       /* --cache-size= */
  const char *cache_remote;  /* --cache-remote=, FATLINK_CACHE_REMOTE */
  int cache_remote_readonly; /* --cache-remote-readonly */
  int cache_remote_timeout_ms;
  uint64_t memory;           /* --wrapper-memory=, or the default (main.c)
                                when not given: UINT64_MAX */
  struct lw_strvec key_args; /* the options that decide the device side's
                                bytes, as given, for the cache's keys */
  int help, version;
  int long_version; /* --version itself (not -v) */
  const char *argv0; /* the name fatlink runs under */
  struct lw_strvec args; /* the arguments after it, response files
                            expanded */
  const char *reproduce; /* --reproduce= */
  int as_linker;    /* no --linker-path: fatlink is the host linker */
  int msvc;         /* the host is PE/COFF of the MSVC environment: its
                       linker reads link.exe's syntax (-out:, -libpath:) */
  struct lw_strvec linker_args; /* for the host linker, in order */
  struct lw_strvec llvm_opts;   /* -mllvm and --offload-opt values */
  struct lw_strvec mllvm;       /* the -mllvm ones among them */
  /* LLVM-style options of the wrapper's own among them, as upstream's
   * registers them: -passes= (the device links' LTO pipeline; the last
   * wins), -load-pass-plugin= (each), a help request (-help, ...). */
  const char *lto_passes;
  struct lw_strvec pass_plugins;
  const char *llvm_help;
  struct lw_strvec device_linker_args;   /* "[triple=]arg" */
  struct lw_strvec device_compiler_args; /* "[triple=]arg" */
  struct lw_strvec storage; /* copies the const char* fields point to */
};

/* ---- the host link's command line (hostlink.c reads it) ------------------ */

struct lw_link_line {
  /* The user's linker arguments in order, every spelling of the output
   * taken out: the plan adds its own -o and the registration object. */
  struct lw_strvec args;
  /* "FATLINK_HOST_LINK=<argv0> -> <linker>" for the host linker's
   * environment (as_linker.c). */
  char *chain_env;
  /* With OpenMP device code: -L<dir> for each directory, then -l<name> for
   * each library that is not a static archive: the shared libraries that
   * serve an OpenMP device link too (a static archive's device code is
   * among the images). */
  struct lw_strvec shared;
};

/* ---- core.c ------------------------------------------------------------- */

struct ex_set;
struct lw_graph;
struct lw_plan;

/* What an offload kind brings to the plan (planner.h): one per kind. */
struct lw_planner;
extern const struct lw_planner lw_fpga_planner, lw_fpga_desc_planner,
    lw_sycl_native_planner, lw_sycl_planner, lw_omp_planner, lw_cuda_planner,
    lw_hip_planner;

/* Adds the jobs that turn the extracted images into device images (each
 * offload kind's by its planner), wrap them into a registration object and
 * run the host link into a temporary beside the output. */
int lw_plan_build(struct lw_graph *g, const struct lw_options *o,
                  const struct lw_link_line *line, const struct ex_set *images,
                  const struct lw_planner *const *planners, size_t nplanners,
                  struct lw_plan **out, struct lw_diag *d);

/* A --device-linker= or --device-compiler= value, "[<triple>=]<arg>": its
 * <arg>, and in *triple_len the length of the triple it names (0: an
 * argument for every triple: "-opt=value", "foo=bar"). */
const char *lw_device_arg(const char *value, size_t *triple_len);

/* The files the device links' -l options find in their -L directories
 * (--device-linker= values: lib<name>.a, lib<name>.so), appended to *out:
 * what a link reads there (an OpenMP device runtime). LW_ENOMEM. */
int lw_device_link_libs(const struct lw_options *o, struct lw_strvec *out);

/* After a successful run: renames the linked temporary to the output. */
int lw_plan_commit(struct lw_plan *p, struct lw_diag *d);

void lw_plan_free(struct lw_plan *p);

/* ---- reqs.c (for the SYCL planner and fatpack/postlink.c) ---------------- */

struct dl_props;
struct aot_reqs;
/* A module's device requirements, for aot_filter, from its property sets
 * (`aspects` and `fixed` give room for `max` values each). */
void lw_aot_reqs(const struct dl_props *props, struct aot_reqs *r,
                 uint32_t *aspects, uint32_t *fixed, size_t max);

#endif
