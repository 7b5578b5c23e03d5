/* options.c - the wrapper's command line, as clang-22 passes it: wrapper
 * options mixed with host linker arguments, optionally split by "--" (after
 * it everything is the linker's), @response files, and -Wl,/-Xlinker
 * arguments whose pieces may themselves be wrapper options.
 *
 * One table names every option, its spelling, whether it takes a value and
 * whether it works yet; options that later work will implement are parsed and
 * refused with "not supported yet" rather than ignored. Anything the table
 * does not know goes to the host linker unchanged and in order, as upstream
 * does with unknown options. */
#include "internal.h"

#include "dl.h"
#include "wrp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum form { FLAG, JOINED, SEPARATE };

enum id {
  O_HOST_TRIPLE, O_LINKER_PATH, O_DEVICE_LINKER, O_DEVICE_COMPILER, O_JOBS,
  O_DRY_RUN, O_SAVE_TEMPS, O_VERBOSE, O_PRINT_WRAPPED, O_OVERRIDE_IMAGE,
  O_RELOCATABLE, O_OPT_LEVEL, O_MLLVM, O_OFFLOAD_OPT, O_TIME_TRACE, O_HELP,
  O_VERSION, O_V, O_SYCL_DEVLIBS, O_SYCL_DEVLIB_LOC, O_SYCL_POST_LINK,
  O_SYCL_IMAGE_DEPS, O_SYCL_ALLOW_UNDEF, O_SYCL_ALLOW_SIZES, O_CACHE_DIR,
  O_CACHE_SIZE, O_MEMORY, O_TOOL_LAUNCHER,
  O_GPU_LAUNCHER, O_CPU_LAUNCHER, O_FPGA_LAUNCHER, O_SYCL_SPLIT, O_LLVM_SPIRV, O_GPU_TOOL, O_CPU_TOOL, O_FPGA_TOOL,
  O_FPGA_LINK, O_PARALLEL_LINK, O_WL, O_XLINKER, O_DUMP, O_SPIRV_TRANSLATOR,
  O_EMIT_ISOLATION, O_DEVICE_LINK, O_PART_SIZE, O_SPIRV_CHECK, O_SPIRV_EXT,
  O_SYCL_TARGETS, O_DEVICE_CONFIG, O_TOOL_TIMEOUT, O_AOT_IN_PROCESS,
  O_TIME_TRACE_FILE, O_TIME_TRACE_GRAIN, O_CUDA_PATH, O_COMPRESS,
  O_COMPRESSION_LEVEL, O_SYSROOT, O_SHOULD_EXTRACT, O_EMIT_FATBIN,
  O_EMBED_BITCODE, O_HELP_HIDDEN, O_DEVICE_TRIPLE, O_BACKEND_COMPILE,
  O_TARGET_LINK, O_ACCEPTED, O_DEFAULT_SPEC_IMAGE, O_KEEP_EXTERNALS,
  O_DPCPP_LATER, O_REPRODUCE, O_SYCL_ABI, O_CACHE_REMOTE,
  O_CACHE_REMOTE_RO, O_CACHE_REMOTE_TIMEOUT, O_PTXAS_ARG, O_NVPTX_DEVLIBS,
};

struct opt {
  const char *spelling; /* JOINED spellings end in '=' */
  enum form form;
  enum id id;
  int later; /* parsed, refused as not supported yet */
  const char *help;
};

static const struct opt table[] = {
    {"--host-triple=", JOINED, O_HOST_TRIPLE, 0,
     "triple of the host the output runs on"},
    {"--linker-path=", JOINED, O_LINKER_PATH, 0,
     "path of the host linker to run"},
    {"--device-linker=", JOINED, O_DEVICE_LINKER, 0,
     "[<triple>=]<arg>: pass <arg> to the device link of <triple>"},
    {"--device-compiler=", JOINED, O_DEVICE_COMPILER, 0,
     "[<triple>=]<arg>: pass <arg> to the device compile of <triple>"},
    {"--wrapper-jobs=", JOINED, O_JOBS, 0,
     "run at most <n> jobs (tools and in-process steps) at once; "
     "'jobserver': as make's jobserver gives, else one per core"},
    {"--wrapper-memory=", JOINED, O_MEMORY, 0,
     "<n>[K|M|G]: the memory the link may take at once, fatlink and its "
     "jobs by their estimates; jobs wait for it (default: the cgroup's "
     "limit or the memory available, whichever is less; 0: no budget)"},
    {"--dry-run", FLAG, O_DRY_RUN, 0,
     "print every step and command in order, run nothing"},
    {"--save-temps", FLAG, O_SAVE_TEMPS, 0,
     "keep intermediate files next to the output, named by stage"},
    {"--wrapper-verbose", FLAG, O_VERBOSE, 0,
     "print every step and command as it runs"},
    {"--print-wrapped-module", FLAG, O_PRINT_WRAPPED, 0,
     "print the registration module's IR to stderr"},
    {"--override-image=", JOINED, O_OVERRIDE_IMAGE, 1,
     "<kind>=<file>: use <file> as the image for <kind>"},
    {"--relocatable", FLAG, O_RELOCATABLE, 0,
     "relocatable link: device code linked and registered in the output, "
     "its sections made private to it (as upstream)"},
    {"-r", FLAG, O_RELOCATABLE, 0, "same as --relocatable"},
    {"--opt-level=", JOINED, O_OPT_LEVEL, 0,
     "O0|O1|O2|O3: optimisation level of device code generation"},
    {"-mllvm", SEPARATE, O_MLLVM, 0, "<arg>: pass <arg> to LLVM"},
    {"--offload-opt=", JOINED, O_OFFLOAD_OPT, 0,
     "<arg>: pass <arg> to LLVM for device code"},
    {"--wrapper-time-trace=", JOINED, O_TIME_TRACE_FILE, 0,
     "<file>: write a Chrome trace of every job to <file>"},
    {"--wrapper-time-trace-granularity=", JOINED, O_TIME_TRACE_GRAIN, 0,
     "<us>: leave jobs shorter than <us> microseconds out of the trace "
     "(default 500, as upstream)"},
    {"--wrapper-time-trace", FLAG, O_TIME_TRACE, 0,
     "write a Chrome trace of every job to <output>.time-trace"},
    {"--cuda-path=", JOINED, O_CUDA_PATH, 0,
     "<dir>: the CUDA toolkit (default: as clang finds it)"},
    {"--compress", FLAG, O_COMPRESS, 0,
     "compress the bundles fatlink writes (HIP fatbinaries)"},
    {"--compression-level=", JOINED, O_COMPRESSION_LEVEL, 0,
     "<n>: zstd level of --compress"},
    {"--sysroot=", JOINED, O_SYSROOT, 0,
     "<dir>: system root of the host link (passed to the linker) and of "
     "device links"},
    {"--should-extract=", JOINED, O_SHOULD_EXTRACT, 0,
     "<arch,...>: take archive members with device code for these "
     "architectures whether or not a symbol pulls them"},
    {"--emit-fatbin-only", FLAG, O_EMIT_FATBIN, 0,
     "write the CUDA/HIP fatbinary to -o, no wrapping or host link"},
    {"--embed-bitcode", FLAG, O_EMBED_BITCODE, 0,
     "HIP and OpenMP: stop the device link after LTO and register its "
     "bitcode"},
    {"--help", FLAG, O_HELP, 0, "print this help"},
    {"-help", FLAG, O_HELP, 0, "same as --help"},
    {"--version", FLAG, O_VERSION, 0, "print the version"},
    {"-v", FLAG, O_V, 0,
     "print the version, then link verbosely (also passed to the linker)"},
    {"--sycl-device-libraries=", JOINED, O_SYCL_DEVLIBS, 0,
     "<a,b,...>: SYCL device libraries to link only-needed"},
    {"--sycl-device-library-location=", JOINED, O_SYCL_DEVLIB_LOC, 0,
     "<dir>: where the SYCL device libraries are"},
    {"--sycl-post-link-options=", JOINED, O_SYCL_POST_LINK, 0,
     "<opts>: SYCL post-link options (-split=kernel|source|auto|off, ...)"},
    {"--reproduce=", JOINED, O_REPRODUCE, 0,
     "<file.tar>: before linking, pack the link's inputs (archives whole, "
     "the libraries -l finds), its arguments as response.txt and the "
     "tools' versions into <file.tar>; unpacked, `fatlink @response.txt` "
     "in its folder runs the link again"},
    {"--cache-dir=", JOINED, O_CACHE_DIR, 0,
     "<dir>: keep SYCL device results in <dir> and reuse them (also "
     "FATLINK_CACHE_DIR)"},
    {"--cache-size=", JOINED, O_CACHE_SIZE, 0,
     "<n>[K|M|G]: how much the cache may hold (5G); least recently used "
     "entries go first"},
    {"--cache-remote=", JOINED, O_CACHE_REMOTE, 0,
     "<url>: share the cache through redis://host[:port][/db] or "
     "http://host[:port]/path (GET and PUT) too (also FATLINK_CACHE_REMOTE); "
     "without --cache-dir, the local layer is ~/.cache/fatlink"},
    {"--cache-remote-readonly", FLAG, O_CACHE_REMOTE_RO, 0,
     "take results from the remote cache, store none there (also "
     "FATLINK_CACHE_REMOTE_READONLY=1)"},
    {"--cache-remote-timeout=", JOINED, O_CACHE_REMOTE_TIMEOUT, 0,
     "<ms>: how long one remote operation may take, connecting included "
     "(2000); a server past it is left for the rest of the link"},
    {"--tool-launcher=", JOINED, O_TOOL_LAUNCHER, 0,
     "<cmd>: run every device tool as <cmd> <tool> <args> (Slurm's srun, a "
     "remote-execution client); in-process back ends step aside"},
    {"--gpu-tool-launcher=", JOINED, O_GPU_LAUNCHER, 0,
     "<cmd>: the launcher of the Intel GPU back end (ocloc)"},
    {"--cpu-tool-launcher=", JOINED, O_CPU_LAUNCHER, 0,
     "<cmd>: the launcher of the CPU back end (opencl-aot)"},
    {"--fpga-tool-launcher=", JOINED, O_FPGA_LAUNCHER, 0,
     "<cmd>: the launcher of the FPGA back ends (aoc, opencl-aot)"},
    /* DPC++'s clang-linker-wrapper options (LinkerWrapperOpts.td) that are
     * not upstream's: what they do there, or refused by name */
    {"--help-hidden", FLAG, O_HELP_HIDDEN, 0, "the same as --help"},
    {"--triple=", JOINED, O_DEVICE_TRIPLE, 0,
     "<triple>: the device triple DPC++'s driver names (each device image "
     "carries its own, which decides)"},
    {"--arch=", JOINED, O_DEVICE_TRIPLE, 0,
     "<arch>: the device architecture DPC++'s driver names (as --triple)"},
    {"--sycl-backend-compile-options=", JOINED, O_BACKEND_COMPILE, 0,
     "<opts>: the SYCL images' compile options, which the runtime hands the "
     "device compiler (DPC++'s descriptor CompileOptions)"},
    {"--sycl-target-link-options=", JOINED, O_TARGET_LINK, 0,
     "<opts>: the SYCL images' link options (descriptor LinkOptions)"},
    {"--use-sycl-post-link-tool", FLAG, O_ACCEPTED, 0,
     "DPC++'s choice of its post-link tool or library: fatlink's post-link "
     "runs in process either way"},
    {"--no-use-sycl-post-link-tool", FLAG, O_ACCEPTED, 0,
     "as --use-sycl-post-link-tool"},
    {"--sycl-device-code-split-esimd", FLAG, O_ACCEPTED, 0,
     "ESIMD kernels in images of their own (always done)"},
    {"--sycl-add-default-spec-consts-image", FLAG, O_DEFAULT_SPEC_IMAGE, 0,
     "also an image of each module with specialization constants set to "
     "their defaults (post-link -generate-device-image-default-spec-consts)"},
    {"--no-sycl-add-default-spec-consts-image", FLAG, O_ACCEPTED, 0,
     "no such image (the default)"},
    {"--sycl-remove-unused-external-funcs", FLAG, O_ACCEPTED, 0,
     "SYCL_EXTERNAL functions no kernel calls go (the default)"},
    {"--no-sycl-remove-unused-external-funcs", FLAG, O_KEEP_EXTERNALS, 0,
     "SYCL_EXTERNAL functions are entry points of their images, used or not"},
    {"--device-debug", FLAG, O_DPCPP_LATER, 1,
     "debug information for the device"},
    {"--ptxas-arg=", JOINED, O_PTXAS_ARG, 0,
     "<arg>: pass <arg> to ptxas (SYCL for NVIDIA GPUs)"},
    {"--pass-remarks=", JOINED, O_DPCPP_LATER, 1, "LTO pass remarks"},
    {"--pass-remarks-missed=", JOINED, O_DPCPP_LATER, 1, "LTO pass remarks"},
    {"--pass-remarks-analysis=", JOINED, O_DPCPP_LATER, 1, "LTO pass remarks"},
    {"--whole-program", FLAG, O_DPCPP_LATER, 1, "LTO sees every input"},
    {"--linker-arg=", JOINED, O_DPCPP_LATER, 1,
     "<arg>: pass <arg> to the device linker"},
    {"--compiler-arg=", JOINED, O_DPCPP_LATER, 1,
     "<arg>: pass <arg> to the device compiler"},
    {"--sycl-nvptx-device-libraries=", JOINED, O_NVPTX_DEVLIBS, 0,
     "<a,b,...>: bitcode libraries linked only-needed into SYCL code for "
     "NVIDIA GPUs (in --sycl-device-library-location= unless absolute)"},
    {"--sycl-backend-compile-options-from-image=", JOINED, O_DPCPP_LATER, 1,
     "compile options taken from the images"},
    {"--sycl-backend-link-options-from-image=", JOINED, O_DPCPP_LATER, 1,
     "link options taken from the images"},
    {"--sycl-thin-lto", FLAG, O_DPCPP_LATER, 1, "ThinLTO of SYCL device code"},
    {"--sycl-embed-ir", FLAG, O_DPCPP_LATER, 1, "SYCL device IR in the images"},
    {"--sycl-is-windows-msvc-env", FLAG, O_DPCPP_LATER, 1,
     "an MSVC environment"},
    {"--no-sycl-device-code-split-esimd", FLAG, O_DPCPP_LATER, 1,
     "ESIMD kernels with SPMD ones"},
    {"--bitcode-library=", JOINED, O_DPCPP_LATER, 1, "a bitcode library"},
    {"--builtin-bitcode=", JOINED, O_DPCPP_LATER, 1,
     "a builtin bitcode library"},
    {"--clang-backend", FLAG, O_ACCEPTED, 0,
     "GPU device code through clang: how fatlink links it anyway (SYCL's "
     "SPIR-V is made in process)"},
    {"--sycl-allow-undefined", FLAG, O_SYCL_ALLOW_UNDEF, 0,
     "SYCL device functions no input defines stay imports for the runtime "
     "to resolve, as DPC++'s sycl-post-link leaves them (default: an error "
     "naming them)"},
    {"--sycl-allow-size-mismatch", FLAG, O_SYCL_ALLOW_SIZES, 0,
     "a kernel may call device functions that require other work-group or "
     "sub-group sizes than its own, as DPC++'s sycl-post-link lets it "
     "(default: an error naming both)"},
    {"--sycl-allow-device-image-dependencies", FLAG, O_SYCL_IMAGE_DEPS, 0,
     "device images may call SYCL_EXTERNAL functions of other images "
     "(post-link -support-dynamic-linking)"},
    {"--sycl-abi=", JOINED, O_SYCL_ABI, 0,
     "dpcpp|llvm22|llvm23: register SYCL images for DPC++'s runtime (the "
     "default), in upstream LLVM 22's layout, as its clang-linker-wrapper "
     "does, or as LLVM 23's: one OffloadBinary (neither has property sets: "
     "a module that needs them is refused)"},
    {"--sycl-module-split-mode=", JOINED, O_SYCL_SPLIT, 0,
     "per_kernel|per_source|auto|off: SYCL device code split (auto)"},
    {"--sycl-dump-device-code=", JOINED, O_DUMP, 0,
     "<dir>: also write every SPIR-V module to <dir>"},
    {"--spirv-translator=", JOINED, O_SPIRV_TRANSLATOR, 0,
     "backend|llvm-spirv[=<path>]: make SPIR-V with LLVM's back end in "
     "process (default) or with an external llvm-spirv"},
    {"--sycl-emit-isolation=", JOINED, O_EMIT_ISOLATION, 0,
     "worker|batch|module: SYCL modules emitted by the forked workers "
     "themselves (worker, the default), each batch by a process of its own "
     "(batch), or each module by a process of its own (module); every "
     "module is checked and an invalid one made again by a process of its "
     "own"},
    {"--sycl-device-link=", JOINED, O_DEVICE_LINK, 0,
     "units|whole: link and split each unit of SYCL device code on its own "
     "with what it needs of the others, on every job slot (units, the "
     "default, where the program allows), or the whole program as one "
     "module first (whole)"},
    {"--sycl-part-size=", JOINED, O_PART_SIZE, 0,
     "<n>: a SYCL module of at least 2 x <n> instructions that holds an "
     "eighth of the link's code or more emitted in parts of about <n> (at "
     "most 16) by processes at once, then merged into one module; the same "
     "module whatever the job count (default 10000; 0: always whole)"},
    {"--spirv-check=", JOINED, O_SPIRV_CHECK, 0,
     "ids|full: check each SPIR-V module's ids (each defined once, below "
     "the bound; the default), or validate it as spirv-val does"},
    {"--spirv-extensions=", JOINED, O_SPIRV_EXT, 0,
     "<+ext,-ext,all,none,...>: edit the SPIR-V extensions LLVM's back end "
     "may use (default: DPC++'s set for its SPIR targets)"},
    {"--llvm-spirv-options=", JOINED, O_LLVM_SPIRV, 0,
     "<opts>: options for the external llvm-spirv, passed verbatim"},
    {"--sycl-targets=", JOINED, O_SYCL_TARGETS, 0,
     "<t1,t2,...>: compile SYCL device code for these targets: names of the "
     "device configuration (intel_gpu_<device>, spir64_gen, spir64_x86_64, "
     "...) and spir64 for the JIT SPIR-V image; repeatable (default: "
     "spir64)"},
    {"--device-config-file=", JOINED, O_DEVICE_CONFIG, 0,
     "<file>: YAML device configuration over the built-in one"},
    {"-fsycl-device-config-file=", JOINED, O_DEVICE_CONFIG, 0,
     "same as --device-config-file"},
    {"--gpu-tool-arg=", JOINED, O_GPU_TOOL, 0,
     "<args>: options of the GPU AOT compiler (ocloc); -device a,b compiles "
     "for each device"},
    {"--gen-tool-arg=", JOINED, O_GPU_TOOL, 0, "same as --gpu-tool-arg"},
    {"--cpu-tool-arg=", JOINED, O_CPU_TOOL, 0,
     "<args>: options of the CPU AOT compiler (OpenCL build options)"},
    {"--aot-in-process=", JOINED, O_AOT_IN_PROCESS, 0,
     "on|off: AOT compilers in process when their library loads "
     "(libocloc, the OpenCL ICD loader; default on) or always as tools"},
    {"--tool-timeout=", JOINED, O_TOOL_TIMEOUT, 0,
     "<seconds>: stop any tool that runs longer (default: no limit)"},
    {"--fpga-tool-arg=", JOINED, O_FPGA_TOOL, 0,
     "<args>: options of the FPGA AOT compiler: aoc with -hardware or "
     "-simulation, else the FPGA emulator's build options"},
    {"--fpga-link-type=", JOINED, O_FPGA_LINK, 0,
     "early|image: instead of the host link, write an archive of the fat "
     "objects' host parts with their FPGA binaries: AOCR (early) or AOCX "
     "(image)"},
    {"--fpga-link=", JOINED, O_FPGA_LINK, 0, "same as --fpga-link-type"},
    {"--parallel-link-sycl=", JOINED, O_PARALLEL_LINK, 0,
     "<n>: make the SYCL split modules' SPIR-V in <n> processes at once, "
     "within --wrapper-jobs (default: as the cost model decides)"},
    {"--parallel-link-sycl", FLAG, O_PARALLEL_LINK, 0,
     "link and split independent device targets in parallel (always done)"},
    {"-Wl,", JOINED, O_WL, 0,
     "<a,b,...>: arguments that are wrapper options or the linker's"},
    {"-Xlinker", SEPARATE, O_XLINKER, 0,
     "<arg>: an argument that is a wrapper option or the linker's"},
};

void lw_options_help(FILE *out) {
  fprintf(out,
          "OVERVIEW: fatlink - link-time orchestrator for offloading "
          "(drop-in for clang-linker-wrapper)\n\n"
          "USAGE: fatlink [options] [--] <linker args>\n\n"
          "Options not listed here, and every input, go to the host linker "
          "in order.\n\nOPTIONS:\n");
  for (size_t i = 0; i < LW_ARRAY_SIZE(table); i++) {
    const struct opt *t = &table[i];
    char name[64];
    snprintf(name, sizeof name, "%s%s", t->spelling,
             t->form == JOINED ? "<value>"
             : t->form == SEPARATE ? " <value>"
                                   : "");
    fprintf(out, "  %-40s %s%s\n", name, t->help,
            t->later ? " (not supported yet)" : "");
  }
}

/* Does DPC++'s wrapper take `spelling` with one dash too (its options
 * declared with both prefixes, which its driver spells with one)? */
static int one_dash_too(const char *spelling) {
  static const char *const both[] = {"--sycl-", "--no-sycl-",
                                     "--use-sycl-", "--no-use-sycl-",
                                     "--llvm-spirv-options=",
                                     "--gpu-tool-arg=", "--cpu-tool-arg=",
                                     "--offload-opt="};
  for (size_t i = 0; i < LW_ARRAY_SIZE(both); i++)
    if (strncmp(spelling, both[i], strlen(both[i])) == 0)
      return 1;
  return 0;
}

/* Finds the option `arg` spells; *value gets a JOINED option's value. */
static const struct opt *lookup(const char *arg, const char **value) {
  for (int dashes = 0; dashes < 2; dashes++) {
    /* then "-x" as "--x", for the options DPC++ takes so */
    if (dashes && (arg[0] != '-' || arg[1] == '-' || !arg[1]))
      break;
    for (size_t i = 0; i < LW_ARRAY_SIZE(table); i++) {
      const struct opt *t = &table[i];
      const char *sp = t->spelling;
      if (dashes) {
        if (!one_dash_too(sp))
          continue;
        sp++;
      }
      size_t n = strlen(sp);
      if (t->form == JOINED) {
        if (strncmp(arg, sp, n) == 0) {
          *value = arg + n;
          return t;
        }
      } else if (strcmp(arg, sp) == 0) {
        return t;
      }
    }
  }
  return NULL;
}

/* A copy of `v` the options keep (o->storage) at *field; LW_ENOMEM or 0. */
static int keep(struct lw_options *o, const char *v, const char **field) {
  if (lw_strvec_push(&o->storage, v))
    return LW_ENOMEM;
  *field = o->storage.v[o->storage.n - 1];
  return 0;
}

const char *const lw_llvm_style_options[][2] = {
    {"load-pass-plugin=<string>",
     "Load passes from plugin library (AMD GPU device links' LTO)"},
    {"passes=<string>",
     "A textual description of the pass pipeline of the GPU device links' "
     "link-time optimization (e.g. 'default<O3>'); it overrides the one "
     "--opt-level gives"},
};
const size_t lw_n_llvm_style_options = LW_ARRAY_SIZE(lw_llvm_style_options);

/* An -mllvm or --offload-opt value. Upstream's wrapper registers a few
 * LLVM-style options of its own, which LLVM's parser does not know: the
 * device links' pass pipeline (-passes=, also -p=), pass plugins
 * (-load-pass-plugin=) and, like any tool, the help requests. They are
 * kept apart; the rest go to LLVM (and, -mllvm's, to clang's device links
 * as -mllvm too). */
static int llvm_option(struct lw_options *o, const char *v, int mllvm,
                       struct lw_diag *d) {
  const char *name = v + strspn(v, "-");
  size_t len = strcspn(name, "=");
  const char *value = name[len] == '=' ? name + len + 1 : NULL;
#define IS(s) (len == sizeof s - 1 && memcmp(name, s, len) == 0)
  if (name > v && (IS("passes") || IS("p")) && value)
    return keep(o, value, &o->lto_passes);
  if (name > v && IS("load-pass-plugin") && value) {
    if (!*value)
      return lw_error(d, LW_EINVAL, "-load-pass-plugin names no plugin");
    return lw_strvec_push(&o->pass_plugins, value) ? LW_ENOMEM : 0;
  }
  if (name > v && !value &&
      (IS("help") || IS("help-hidden") || IS("help-list") ||
       IS("help-list-hidden")))
    return keep(o, v, &o->llvm_help);
#undef IS
  if (mllvm && lw_strvec_push(&o->mllvm, v))
    return LW_ENOMEM;
  return lw_strvec_push(&o->llvm_opts, v) ? LW_ENOMEM : 0;
}

/* A decimal count in [lo, hi]; `unit` words the error ("seconds, "). */
static int parse_count(const char *v, const char *opt, long lo, long hi,
                       const char *unit, int *out, struct lw_diag *d) {
  char *end;
  long n = strtol(v, &end, 10);
  if (*v == 0 || *end || n < lo || n > hi)
    return lw_error(d, LW_EINVAL, "invalid %s value '%s' (expected %s%ld-%ld)",
                    opt, v, unit, lo, hi);
  *out = (int)n;
  return 0;
}

/* An option of two values: *out is 0 for `no`, 1 for `yes`. */
static int one_of(const char *opt, const char *v, const char *no,
                  const char *yes, int *out, struct lw_diag *d) {
  if (strcmp(v, no) != 0 && strcmp(v, yes) != 0)
    return lw_error(d, LW_EINVAL, "invalid %s value '%s' (expected %s or %s)",
                    opt, v, no, yes);
  *out = strcmp(v, yes) == 0;
  return 0;
}

static int take(struct lw_options *o, const struct opt *t, const char *v,
                struct lw_diag *d);

/* Split modes in both spellings: the driver's (per_kernel, ...) and
 * sycl-post-link's (kernel, source, ...). */
static int parse_split(struct lw_options *o, const char *v, const char *opt,
                       struct lw_diag *d) {
  static const struct {
    const char *name;
    int mode;
  } modes[] = {{"per_kernel", DL_SPLIT_PER_KERNEL}, {"kernel", DL_SPLIT_PER_KERNEL},
               {"per_source", DL_SPLIT_PER_SOURCE}, {"source", DL_SPLIT_PER_SOURCE},
               {"auto", DL_SPLIT_AUTO},             {"off", DL_SPLIT_OFF},
               {"none", DL_SPLIT_OFF}};
  for (size_t i = 0; i < LW_ARRAY_SIZE(modes); i++)
    if (strcmp(v, modes[i].name) == 0) {
      o->split_mode = modes[i].mode;
      o->split_given = 1;
      return 0;
    }
  return lw_error(d, LW_EINVAL,
                  "invalid %s value '%s' (expected per_kernel, per_source, "
                  "auto or off)",
                  opt, v);
}

/* sycl-post-link options: the split, dynamic linking, imported and exported
 * symbols, specialization constants, and those asking for what fatlink's
 * post-link always does; anything else is refused, not ignored. DPC++'s
 * driver may name the target first ("sycl:<triple>=<options>"); -lower-esimd
 * is refused later, where ESIMD code is met: fatlink has no ESIMD
 * lowering. */
static int parse_post_link(struct lw_options *o, const char *v,
                           struct lw_diag *d) {
  static const char *const always[] = {
      "-symbols", "-properties", "-emit-param-info", "-emit-program-metadata",
      "-emit-kernel-names", "-O0", "-O1", "-O2", "-O3", "-device-globals",
      "-emit-only-kernels-as-entry-points", "-split-esimd"};
  if (strncmp(v, "sycl:", 5) == 0 && strchr(v, '='))
    v = strchr(v, '=') + 1;
  struct lw_strvec words = {0};
  int rc = lw_strvec_split(&words, v, ' ');
  for (size_t i = 0; !rc && i < words.n; i++) {
    const char *w = words.v[i];
    if (strncmp(w, "-split=", 7) == 0) {
      rc = parse_split(o, w + 7, "-split", d);
      continue;
    }
    if (strcmp(w, "-support-dynamic-linking") == 0 ||
        strcmp(w, "-allow-device-image-dependencies") == 0) {
      o->sycl_dynamic_linking = 1;
      continue;
    }
    if (strcmp(w, "-emit-imported-symbols") == 0) {
      o->sycl_emit_imported = 1;
      continue;
    }
    if (strcmp(w, "-emit-exported-symbols") == 0) {
      o->sycl_emit_exported = 1;
      continue;
    }
    if (strncmp(w, "-spec-const=", 12) == 0) {
      /* rt and default: older DPC++'s names */
      const char *m = w + 12;
      o->sycl_spec_const =
          !strcmp(m, "native") || !strcmp(m, "rt")           ? DL_SPEC_NATIVE
          : !strcmp(m, "emulation") || !strcmp(m, "default") ? DL_SPEC_EMULATION
                                                             : 0;
      if (!o->sycl_spec_const)
        rc = lw_error(d, LW_EINVAL,
                      "invalid -spec-const value '%s' (expected native or "
                      "emulation)",
                      m);
      continue;
    }
    if (strcmp(w, "-generate-device-image-default-spec-consts") == 0) {
      o->sycl_default_spec_images = 1;
      continue;
    }
    if (strcmp(w, "-lower-esimd") == 0) {
      o->sycl_lower_esimd = 1;
      continue;
    }
    size_t k;
    for (k = 0; k < LW_ARRAY_SIZE(always); k++)
      if (strcmp(w, always[k]) == 0)
        break;
    if (k == LW_ARRAY_SIZE(always))
      rc = lw_error(d, LW_ENOTSUP,
                    "sycl-post-link option '%s' is not supported yet", w);
  }
  lw_strvec_free(&words);
  return rc;
}

/* Handles the argument at index *i of `args` (advancing past a separate
 * value); `nested` counts -Wl/-Xlinker levels. */
/* clang's -Wl,--sycl-targets=a,b,c reaches us as "--sycl-targets=a" "b"
 * "c": words right after the option that look like target names and name
 * no file are more targets. */
static int more_targets(const char *arg) {
  if (!*arg || strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
                   strlen(arg))
    return 0;
  return access(arg, F_OK) != 0;
}

static int parse_one(struct lw_options *o, const struct lw_strvec *args,
                     size_t *i, int nested, struct lw_diag *d) {
  const char *arg = args->v[*i];
  const char *value = NULL;
  if (o->targets_follow && more_targets(arg))
    return lw_strvec_push(&o->sycl_targets, arg) ? LW_ENOMEM : 0;
  o->targets_follow = 0;
  const struct opt *t = lookup(arg, &value);
  if (!t)
    return lw_strvec_push(&o->linker_args, arg) ? LW_ENOMEM : 0;
  if (t->form == SEPARATE) {
    if (*i + 1 >= args->n)
      return lw_error(d, LW_EINVAL, "option '%s' needs a value", arg);
    value = args->v[++*i];
  }
  if (t->id == O_WL || t->id == O_XLINKER) {
    /* Split -Wl,a,b and parse each piece as a top-level argument. */
    struct lw_strvec pieces = {0};
    int rc = 0;
    if (t->id == O_XLINKER)
      rc = lw_strvec_push(&pieces, value);
    else
      rc = lw_strvec_split(&pieces, value, ',');
    for (size_t k = 0; !rc && k < pieces.n; k++)
      rc = parse_one(o, &pieces, &k, nested + 1, d);
    lw_strvec_free(&pieces);
    return rc;
  }
  return take(o, t, value, d);
}

/* --wrapper-jobs' default. */
static int online_cores(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? (int)cores : 1;
}

/* Options that change no byte of what the device side makes: how many
 * jobs, what is printed or traced, the cache itself, the host linker. The
 * others go into the cache's keys (o->key_args). */
static int neutral(enum id id) {
  switch (id) {
  case O_JOBS: case O_PARALLEL_LINK: case O_VERBOSE: case O_V:
  case O_TIME_TRACE: case O_TIME_TRACE_FILE: case O_TIME_TRACE_GRAIN:
  case O_HELP: case O_HELP_HIDDEN: case O_DEVICE_TRIPLE: case O_ACCEPTED:
  case O_VERSION: case O_LINKER_PATH: case O_TOOL_TIMEOUT:
  case O_CACHE_DIR: case O_CACHE_SIZE: case O_SPIRV_CHECK: case O_MEMORY:
  case O_CACHE_REMOTE: case O_CACHE_REMOTE_RO: case O_CACHE_REMOTE_TIMEOUT:
  case O_REPRODUCE:
    return 1;
  default:
    return 0;
  }
}

static int take(struct lw_options *o, const struct opt *t, const char *v,
                struct lw_diag *d) {
  if (!neutral(t->id) &&
      lw_strvec_pushf(&o->key_args, "%s%s%s", t->spelling,
                      t->form == SEPARATE ? " " : "", v ? v : ""))
    return LW_ENOMEM;
  if (t->later) {
    char name[64];
    snprintf(name, sizeof name, "%s", t->spelling);
    size_t n = strlen(name);
    if (n && name[n - 1] == '=')
      name[n - 1] = 0;
    return lw_error(d, LW_ENOTSUP, "option '%s' is not supported yet", name);
  }
  switch (t->id) {
  case O_HOST_TRIPLE:
  case O_LINKER_PATH:
    if (keep(o, v, t->id == O_HOST_TRIPLE ? &o->host_triple
                                          : &o->linker_path))
      return LW_ENOMEM;
    break;
  case O_DEVICE_LINKER:
    return lw_strvec_push(&o->device_linker_args, v) ? LW_ENOMEM : 0;
  case O_DEVICE_COMPILER:
    return lw_strvec_push(&o->device_compiler_args, v) ? LW_ENOMEM : 0;
  case O_JOBS:
    /* "jobserver" (upstream's): as many as make's jobserver gives, which a
     * link under make takes anyway, else one per core. */
    if (strcmp(v, "jobserver") == 0) {
      o->jobs = online_cores();
      return 0;
    }
    return parse_count(v, "--wrapper-jobs", 1, 1024, "", &o->jobs, d);
  case O_PARALLEL_LINK:
    /* The flag asks for what is always done: targets link in parallel. */
    return v ? parse_count(v, "--parallel-link-sycl", 1, 1024, "",
                           &o->sycl_jobs, d)
             : 0;
  case O_DRY_RUN: o->dry_run = 1; break;
  case O_SAVE_TEMPS: o->save_temps = 1; break;
  case O_VERBOSE: o->verbose = 1; break;
  case O_PRINT_WRAPPED: o->print_wrapped = 1; break;
  case O_OPT_LEVEL:
    if (v[0] != 'O' || v[1] < '0' || v[1] > '3' || v[2])
      return lw_error(d, LW_EINVAL,
                      "invalid --opt-level value '%s' (expected O0-O3)", v);
    o->opt_level = v[1] - '0';
    break;
  case O_MLLVM:
  case O_OFFLOAD_OPT:
    return llvm_option(o, v, t->id == O_MLLVM, d);
  case O_TIME_TRACE: o->time_trace = 1; break;
  case O_TIME_TRACE_FILE:
    if (keep(o, v, &o->time_trace_file))
      return LW_ENOMEM;
    o->time_trace = 1;
    break;
  case O_TIME_TRACE_GRAIN:
    return parse_count(v, "--wrapper-time-trace-granularity", 0, 100000000,
                       "microseconds, ", &o->time_trace_grain, d);
  case O_CUDA_PATH:
    if (keep(o, v, &o->cuda_path))
      return LW_ENOMEM;
    break;
  case O_COMPRESS: o->compress = 1; break;
  case O_COMPRESSION_LEVEL:
    o->compression_level_given = 1;
    return parse_count(v, "--compression-level", -131072, 22, "",
                       &o->compression_level, d);
  case O_SYSROOT:
    if (keep(o, v, &o->sysroot) ||
        lw_strvec_pushf(&o->linker_args, "--sysroot=%s", v))
      return LW_ENOMEM;
    break;
  case O_SHOULD_EXTRACT:
    return lw_strvec_split(&o->should_extract, v, ',') ? LW_ENOMEM : 0;
  case O_EMBED_BITCODE:
    o->embed_bitcode = 1;
    break;
  case O_EMIT_FATBIN: o->emit_fatbin_only = 1; break;
  case O_RELOCATABLE:
    o->relocatable = 1;
    return lw_strvec_push(&o->linker_args, "-r") ? LW_ENOMEM : 0;
  case O_HELP: o->help = 1; break;
  case O_VERSION: o->version = o->long_version = 1; break;
  case O_V:
    o->version = o->verbose = 1;
    return lw_strvec_push(&o->linker_args, "-v") ? LW_ENOMEM : 0;
  case O_SYCL_SPLIT:
    return parse_split(o, v, "--sycl-module-split-mode", d);
  case O_SYCL_ABI:
    if (strcmp(v, "dpcpp") == 0 || strcmp(v, "llvm22") == 0 ||
        strcmp(v, "llvm23") == 0) {
      o->sycl_abi = v[0] == 'd'         ? WRP_SYCL_DPCPP
                    : v[5] == '2' ? WRP_SYCL_LLVM22
                                        : WRP_SYCL_LLVM23;
      return 0;
    }
    return lw_error(d, LW_EINVAL, "invalid --sycl-abi value '%s' (expected "
                                  "dpcpp, llvm22 or llvm23)",
                    v);
  case O_FPGA_LINK:
    if (strcmp(v, "early") == 0 || strcmp(v, "image") == 0) {
      o->fpga_link = v[0] == 'e' ? LW_FPGA_EARLY : LW_FPGA_IMAGE;
      return 0;
    }
    return lw_error(d, LW_EINVAL,
                    "invalid --fpga-link-type value '%s' (expected early or "
                    "image)",
                    v);
  case O_SYCL_IMAGE_DEPS:
    o->sycl_dynamic_linking = 1;
    return 0;
  case O_SYCL_ALLOW_UNDEF:
    o->sycl_allow_undefined = 1;
    return 0;
  case O_SYCL_ALLOW_SIZES:
    o->sycl_allow_size_mismatch = 1;
    return 0;
  case O_HELP_HIDDEN:
    o->help = 1;
    return 0;
  case O_DEVICE_TRIPLE:
  case O_ACCEPTED:
    return 0;
  case O_BACKEND_COMPILE:
  case O_TARGET_LINK:
    if (keep(o, v, t->id == O_BACKEND_COMPILE ? &o->sycl_compile_opts
                                              : &o->sycl_link_opts))
      return LW_ENOMEM;
    return 0;
  case O_DEFAULT_SPEC_IMAGE:
    o->sycl_default_spec_images = 1;
    return 0;
  case O_KEEP_EXTERNALS:
    o->sycl_keep_externals = 1;
    return 0;
  case O_CACHE_DIR:
    if (keep(o, v, &o->cache_dir))
      return LW_ENOMEM;
    return 0;
  case O_REPRODUCE:
    if (keep(o, v, &o->reproduce))
      return LW_ENOMEM;
    return 0;
  case O_CACHE_SIZE:
    return lw_parse_size("--cache-size", v, &o->cache_size, d);
  case O_CACHE_REMOTE:
    if (keep(o, v, &o->cache_remote))
      return LW_ENOMEM;
    return 0;
  case O_CACHE_REMOTE_RO:
    o->cache_remote_readonly = 1;
    return 0;
  case O_CACHE_REMOTE_TIMEOUT:
    return parse_count(v, "--cache-remote-timeout", 1, 3600000,
                       "milliseconds, ", &o->cache_remote_timeout_ms, d);
  case O_MEMORY:
    return lw_parse_size("--wrapper-memory", v, &o->memory, d);
  case O_TOOL_LAUNCHER:
  case O_GPU_LAUNCHER:
  case O_CPU_LAUNCHER:
  case O_FPGA_LAUNCHER: {
    struct lw_strvec *l = t->id == O_TOOL_LAUNCHER  ? &o->tool_launcher
                          : t->id == O_GPU_LAUNCHER ? &o->gpu_launcher
                          : t->id == O_CPU_LAUNCHER ? &o->cpu_launcher
                                                    : &o->fpga_launcher;
    lw_strvec_free(l); /* the last one given */
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)strlen(t->spelling) - 1,
             t->spelling);
    int rc = lw_split_args(name, v, l, d);
    if (!rc && !l->n)
      rc = lw_error(d, LW_EINVAL, "%s: no command given", name);
    return rc;
  }
  case O_SYCL_POST_LINK:
    return parse_post_link(o, v, d);
  case O_SYCL_DEVLIBS:
    return lw_strvec_split(&o->device_libs, v, ',');
  case O_NVPTX_DEVLIBS:
    return lw_strvec_split(&o->nvptx_device_libs, v, ',');
  case O_PTXAS_ARG:
    return lw_split_args("--ptxas-arg", v, &o->ptxas_args, d);
  case O_SYCL_DEVLIB_LOC:
    if (keep(o, v, &o->device_lib_dir))
      return LW_ENOMEM;
    break;
  case O_SPIRV_TRANSLATOR:
    if (strcmp(v, "backend") == 0) {
      o->llvm_spirv = NULL;
      break;
    }
    if (strncmp(v, "llvm-spirv", 10) != 0 || (v[10] && (v[10] != '=' || !v[11])))
      return lw_error(d, LW_EINVAL,
                      "invalid --spirv-translator value '%s' (expected "
                      "backend, llvm-spirv or llvm-spirv=<path>)",
                      v);
    if (keep(o, v[10] ? v + 11 : v, &o->llvm_spirv))
      return LW_ENOMEM;
    break;
  case O_EMIT_ISOLATION:
    if (strcmp(v, "worker") == 0)
      o->emit_isolation = LW_EMIT_WORKER;
    else if (strcmp(v, "batch") == 0)
      o->emit_isolation = LW_EMIT_BATCH;
    else if (strcmp(v, "module") == 0)
      o->emit_isolation = LW_EMIT_MODULE;
    else
      return lw_error(d, LW_EINVAL,
                      "invalid --sycl-emit-isolation value '%s' (expected "
                      "worker, batch or module)",
                      v);
    return 0;
  case O_DEVICE_LINK:
    if (strcmp(v, "units") != 0 && strcmp(v, "whole") != 0)
      return lw_error(d, LW_EINVAL,
                      "invalid --sycl-device-link value '%s' (expected units "
                      "or whole)",
                      v);
    o->whole_link = strcmp(v, "whole") == 0;
    return 0;
  case O_PART_SIZE:
    return parse_count(v, "--sycl-part-size", 0, 1000000000, "",
                       &o->part_size, d);
  case O_SPIRV_CHECK:
    return one_of("--spirv-check", v, "ids", "full", &o->spirv_validate, d);
  case O_LLVM_SPIRV:
    return lw_strvec_split(&o->llvm_spirv_opts, v, ' ');
  case O_SPIRV_EXT:
    if (keep(o, v, &o->spirv_ext))
      return LW_ENOMEM;
    break;
  case O_DUMP:
    if (keep(o, v, &o->dump_dir))
      return LW_ENOMEM;
    break;
  case O_SYCL_TARGETS:
    o->targets_follow = 1;
    return lw_strvec_split(&o->sycl_targets, v, ',');
  case O_DEVICE_CONFIG:
    if (keep(o, v, &o->device_config))
      return LW_ENOMEM;
    break;
  case O_GPU_TOOL:
    return lw_split_args("--gpu-tool-arg", v, &o->gpu_tool_args, d);
  case O_CPU_TOOL:
    return lw_split_args("--cpu-tool-arg", v, &o->cpu_tool_args, d);
  case O_FPGA_TOOL:
    return lw_split_args("--fpga-tool-arg", v, &o->fpga_tool_args, d);
  case O_AOT_IN_PROCESS:
    return one_of("--aot-in-process", v, "on", "off", &o->aot_tools, d);
  case O_TOOL_TIMEOUT:
    return parse_count(v, "--tool-timeout", 1, 86400, "seconds, ",
                       &o->tool_timeout, d);
  default:
    LW_BUG("option without a handler");
  }
  return 0;
}

int lw_options_parse(int argc, char **argv, struct lw_options *o,
                     struct lw_diag *d) {
  memset(o, 0, sizeof *o);
  o->argv0 = argc > 0 ? argv[0] : "fatlink";
  o->opt_level = 2;
  o->split_mode = DL_SPLIT_AUTO;
  o->part_size = 10000;
  o->time_trace_grain = 500;
  o->cache_size = (uint64_t)5 << 30;
  o->cache_remote_timeout_ms = 2000;
  o->memory = UINT64_MAX;
  o->jobs = online_cores();
  struct lw_strvec args = {0};
  int rc = lw_expand_response_files(argc - 1, argv + 1, &args, d);
  for (size_t i = 0; !rc && i < args.n; i++) {
    if (strcmp(args.v[i], "--") == 0) {
      /* Everything after "--" belongs to the host linker. */
      for (i++; !rc && i < args.n; i++)
        rc = lw_strvec_push(&o->linker_args, args.v[i]) ? LW_ENOMEM : 0;
      break;
    }
    rc = parse_one(o, &args, &i, 0, d);
  }
  if (rc == LW_ENOMEM)
    lw_error(d, rc, "out of memory");
  o->args = args; /* kept whole for --reproduce */
  /* A pass plugin that is not there is an error now, as upstream's (a
   * device link would only fail later). It is not loaded here: a plugin
   * registers LLVM options of its own, which clash in a process that has
   * them already (LLVMPolly.so aborts fatlink: "inconsistency in
   * registered CommandLine options"); the device link loads it. */
  for (size_t i = 0; !rc && i < o->pass_plugins.n; i++)
    if (access(o->pass_plugins.v[i], R_OK) != 0)
      rc = lw_error(d, LW_EINVAL, "-load-pass-plugin: cannot read '%s': %s",
                    o->pass_plugins.v[i], strerror(errno));
  if (rc)
    return rc;
  /* Without --linker-path, fatlink is the host linker: as_linker.c finds
   * the real one and the host triple. */
  if (!o->host_triple && (o->linker_path || o->emit_fatbin_only))
    o->host_triple = LW_DEFAULT_HOST_TRIPLE;
  const char *env = getenv("FATLINK_CACHE_DIR");
  if (!o->cache_dir && env && *env)
    o->cache_dir = env;
  env = getenv("FATLINK_CACHE_REMOTE");
  if (!o->cache_remote && env && *env)
    o->cache_remote = env;
  env = getenv("FATLINK_CACHE_REMOTE_READONLY");
  if (env && strcmp(env, "1") == 0)
    o->cache_remote_readonly = 1;
  /* A remote layer needs a local one under it. */
  const char *home = getenv("XDG_CACHE_HOME");
  if (o->cache_remote && !o->cache_dir) {
    int xdg = home && *home;
    home = xdg ? home : getenv("HOME");
    if (!home || !*home)
      return lw_error(d, LW_EINVAL, "--cache-remote needs --cache-dir= (no "
                                    "HOME for ~/.cache/fatlink)");
    if (lw_strvec_pushf(&o->storage, "%s%s/fatlink", home,
                        xdg ? "" : "/.cache"))
      return lw_error(d, LW_ENOMEM, "out of memory");
    o->cache_dir = o->storage.v[o->storage.n - 1];
  }
  o->msvc = o->host_triple && strstr(o->host_triple, "-windows-msvc") != NULL;
  struct lw_output_arg out = lw_find_output_arg(&o->linker_args, o->msvc);
  o->output = out.index >= 0 ? out.value : "a.out";
  return 0;
}

void lw_options_free(struct lw_options *o) {
  lw_strvec_free(&o->args);
  lw_strvec_free(&o->linker_args);
  lw_strvec_free(&o->llvm_opts);
  lw_strvec_free(&o->mllvm);
  lw_strvec_free(&o->pass_plugins);
  lw_strvec_free(&o->device_linker_args);
  lw_strvec_free(&o->device_compiler_args);
  lw_strvec_free(&o->device_libs);
  lw_strvec_free(&o->nvptx_device_libs);
  lw_strvec_free(&o->ptxas_args);
  lw_strvec_free(&o->llvm_spirv_opts);
  lw_strvec_free(&o->sycl_targets);
  lw_strvec_free(&o->gpu_tool_args);
  lw_strvec_free(&o->cpu_tool_args);
  lw_strvec_free(&o->fpga_tool_args);
  lw_strvec_free(&o->should_extract);
  lw_strvec_free(&o->storage);
  lw_strvec_free(&o->key_args);
  lw_strvec_free(&o->tool_launcher);
  lw_strvec_free(&o->gpu_launcher);
  lw_strvec_free(&o->cpu_launcher);
  lw_strvec_free(&o->fpga_launcher);
}
