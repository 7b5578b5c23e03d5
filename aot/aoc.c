/* aoc.c - the spir64_fpga back end for FPGA hardware and simulation:
 * Intel's aoc (proprietary, spawned from PATH), which takes hours for
 * hardware. Which FPGA back end runs is the user's --fpga-tool-arg: with
 * -hardware or -simulation among its words aoc, otherwise the emulator
 * (opencl.c), as DPC++'s driver decides. The command line follows DPC++'s
 * (clang/lib/Driver/ToolChains/SYCL.cpp, fpga::BackendCompiler):
 *   aoc -o OUT IN [-library-list=LIST] -sycl [-rtl] [-dep-files=A,B,@L]
 *       -output-report-folder=R <--fpga-tool-arg words>
 * -rtl makes an AOCR (an early image, to be finished by a later aoc run)
 * instead of an AOCX; IN is SPIR-V, or an AOCR being finished. */
#include "aot.h"

#include <string.h>

static int has(const struct lw_strvec *args, const char *word) {
  return lw_strvec_find(args, word) < args->n;
}

int aot_fpga_uses_aoc(const struct lw_strvec *args) {
  return has(args, "-hardware") || has(args, "-simulation");
}

int aot_fpga_for_hardware(const struct lw_strvec *args) {
  return has(args, "-hardware");
}

int aot_aoc_argv(const struct aot_aoc *a, struct lw_strvec *argv) {
  int rc =
      lw_strvec_push(argv, a->tool) || lw_strvec_push(argv, "-o") ||
      lw_strvec_push(argv, a->out) || lw_strvec_push(argv, a->in) ||
      (a->library_list &&
       lw_strvec_pushf(argv, "-library-list=%s", a->library_list)) ||
      lw_strvec_push(argv, "-sycl") ||
      (a->rtl && lw_strvec_push(argv, "-rtl")) ||
      (a->dep_files && a->dep_files[0] &&
       lw_strvec_pushf(argv, "-dep-files=%s", a->dep_files)) ||
      (a->report &&
       lw_strvec_pushf(argv, "-output-report-folder=%s", a->report)) ||
      lw_strvec_extend_from(argv, a->args);
  return rc ? LW_ENOMEM : 0;
}

char *aot_aoc_report_folder(const char *output, size_t index, size_t n) {
  static const char *const replaced[] = {".o",   ".a",   ".out",
                                         ".obj", ".lib", ".exe"};
  const char *base = lw_base_name(output);
  const char *dot = strrchr(base, '.');
  size_t keep = strlen(output);
  for (size_t i = 0; dot && i < sizeof replaced / sizeof *replaced; i++)
    if (strcmp(dot, replaced[i]) == 0)
      keep = (size_t)(dot - output);
  if (n > 1)
    return lw_xasprintf("%.*s.%zu.prj", (int)keep, output, index);
  return lw_xasprintf("%.*s.prj", (int)keep, output);
}
