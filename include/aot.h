/* aot.h - ahead-of-time targets: which device triples fatlink compiles to
 * native code and with which back end. This first cut only classifies a
 * triple; the back ends (ocloc, OpenCL CPU, aoc) come with the AOT work. */
#ifndef AOT_H
#define AOT_H

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

#endif
