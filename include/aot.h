/* aot.h - ahead-of-time compilation: which device triples fatlink compiles to
 * native code, the device configuration ("Implementation Design for Device
 * Configuration File": what each target supports and which AOT tool compiles
 * for it), SYCL aspects by name and number, and the aspect filter ("Behavior
 * for optional kernel features") that keeps a module away from a target that
 * cannot run it. */
#ifndef AOT_H
#define AOT_H

#include "lw_base.h"

#include <stdint.h>
#include <stdio.h>

enum aot_target {
  AOT_JIT,     /* spir64/spirv64: SPIR-V compiled by the runtime */
  AOT_GEN,     /* spir64_gen: Intel GPUs through ocloc */
  AOT_CPU,     /* spir64_x86_64: OpenCL CPU devices */
  AOT_FPGA,    /* spir64_fpga: aoc / FPGA emulation */
  AOT_UNKNOWN, /* not a SPIR target */
};

/* Classifies a SYCL device triple ("spir64_gen-unknown-unknown", ...). */
enum aot_target aot_classify(const char *triple);

/* The DPC++ runtime's target name for an image of `t` ("spir64", ...). */
const char *aot_runtime_target(enum aot_target t);

/* ---- device configuration (config.c) ------------------------------------- */

struct aot_device {
  char *name;                    /* as in -fsycl-targets: intel_gpu_skl, ... */
  int may_support_other_aspects; /* aspects not listed may still work */
  unsigned *aspects;
  size_t naspects;
  unsigned *sg_sizes;            /* empty: not known, not filtered */
  size_t nsg;
  char *toolchain;               /* "ocloc", "opencl-aot", "aoc" or "" */
  char *options;                 /* aot-toolchain-options */
  int from_user;
};

struct aot_config {
  struct aot_device *v; /* sorted by name */
  size_t n, cap;
  struct lw_strvec warnings; /* one line each, for the user */
};

/* The built-in table (aot/devices.json, compiled in), then, when `file` is not
 * NULL, a YAML file in the form of "Implementation Design for Device
 * Configuration File" over it: an entry replaces the keys it gives;
 * intel_gpu_<name> targets get aot-toolchain ocloc and options "-device <name>"
 * unless given; a name given twice in the file warns and the later entry wins.
 * An unknown key or aspect, a wrong type, anchors, aliases, nesting or size
 * beyond the format's: an error naming file:line:column. */
int aot_config_load(struct aot_config *c, const char *file, struct lw_diag *d);

const struct aot_device *aot_config_find(const struct aot_config *c,
                                         const char *name);

/* The target names, comma-separated (malloc'd), for messages. */
char *aot_config_names(const struct aot_config *c);

/* Writes the table, or only target `name`, as YAML aot_config_load reads. */
int aot_config_write(const struct aot_config *c, const char *name, FILE *f,
                     struct lw_diag *d);

void aot_config_free(struct aot_config *c);

/* ---- aspect filter (filter.c) -------------------------------------------- */

/* A module's "SYCL/device requirements". */
struct aot_reqs {
  const uint32_t *aspects;
  size_t naspects;
  uint32_t sg;          /* reqd_sub_group_size, 0: none */
  int has_fixed;        /* a fixed_target property is present */
  const uint32_t *fixed; /* its aspects */
  size_t nfixed;
};

/* 0 when `dev` can take a module of `r`; 1, with the reason in `why`,
 * when the module must not be compiled for it. */
int aot_filter(const struct aot_device *dev, const struct aot_reqs *r,
               char *why, size_t n);

/* ---- back ends: one module's SPIR-V in, a native image out -------------- */

/* ocloc.c (spir64_gen). Can libocloc.so be used in process? */
int aot_ocloc_in_process(void);

/* The ocloc command line compiling `in` into `out` with `args` after it. */
int aot_ocloc_argv(const struct lw_strvec *args, const char *tool,
                   const char *in, const char *out, struct lw_strvec *argv);

/* Compiles in process through libocloc, as aot_ocloc_argv's command would. */
int aot_ocloc_run(const struct lw_strvec *args, const unsigned char *spv,
                  size_t n, struct lw_buf *image, struct lw_diag *d);

/* aoc.c (spir64_fpga, hardware and simulation). Do the --fpga-tool-arg
 * words ask for aoc (-hardware or -simulation), not the emulator? */
int aot_fpga_uses_aoc(const struct lw_strvec *args);
/* Do they ask for hardware (-hardware), which alone uses dependency
 * files? */
int aot_fpga_for_hardware(const struct lw_strvec *args);

struct aot_aoc {
  const char *tool, *in, *out;
  const struct lw_strvec *args; /* --fpga-tool-arg words */
  int rtl;                      /* an AOCR, not an AOCX */
  const char *library_list;     /* a file listing AOCO libraries, or NULL */
  const char *dep_files;        /* "a.d,b.d,@list" (hardware only), or NULL */
  const char *report;           /* -output-report-folder, or NULL */
};

/* The aoc command line for `a`. */
int aot_aoc_argv(const struct aot_aoc *a, struct lw_strvec *argv);

/* The report folder DPC++ names after the link's output: a .o, .a, .out,
 * .obj, .lib or .exe extension becomes .prj, any other name gets .prj
 * appended; module `index` of `n` > 1 gets ".<index>" before it. */
char *aot_aoc_report_folder(const char *output, size_t index, size_t n);

/* opencl.c: OpenCL devices that compile SPIR-V, the CPU (spir64_x86_64)
 * and the FPGA emulator (spir64_fpga in emulation). */
enum aot_cl_device { AOT_CL_CPU, AOT_CL_FPGA_EMU };

/* Is there such a device that takes SPIR-V? If not, *why says what there
 * is. */
int aot_cl_in_process(enum aot_cl_device which, const char **why);

/* "CPU", "FPGA emulator": for messages. */
const char *aot_cl_device_name(enum aot_cl_device which);

/* The opencl-aot command line compiling `in` into `out` for that device. */
int aot_cl_argv(enum aot_cl_device which, const struct lw_strvec *args,
                const char *tool, const char *in, const char *out,
                struct lw_strvec *argv);

/* Compiles in process on that device, `args` as its build options. */
int aot_cl_run(enum aot_cl_device which, const struct lw_strvec *args,
               const unsigned char *spv, size_t n, struct lw_buf *image,
               struct lw_diag *d);

#endif
