/* test_aot.c - the aspect filter's rules ("Behavior for optional kernel
 * features") on hand-made device entries, the built-in device configuration:
 * lookups, auto-detected ocloc options, aspects by name and number; and aoc's
 * command line and report folder names. */
#include "check.h"
#include "aot.h"

#include <stdlib.h>
#include <string.h>

static int keeps(const struct aot_device *dev, const struct aot_reqs *r) {
  char why[256];
  return aot_filter(dev, r, why, sizeof why) == 0;
}

static void test_filter(void) {
  unsigned gpu_aspects[] = {2, 5, 28}; /* gpu, fp16, atomic64 */
  unsigned sizes[] = {8, 32};
  struct aot_device dev = {.name = "dev", .aspects = gpu_aspects,
                           .naspects = 3, .sg_sizes = sizes, .nsg = 2};
  struct aot_reqs none = {0};
  CHECK(keeps(&dev, &none));

  uint32_t fp16[] = {5}, fp64[] = {6};
  struct aot_reqs r = {.aspects = fp16, .naspects = 1};
  CHECK(keeps(&dev, &r));
  r.aspects = fp64;
  char why[256];
  CHECK(aot_filter(&dev, &r, why, sizeof why) == 1);
  CHECK(strcmp(why, "it uses aspect fp64, which dev does not support") == 0);
  dev.may_support_other_aspects = 1; /* aspects it does not list may work */
  CHECK(keeps(&dev, &r));
  dev.may_support_other_aspects = 0;

  struct aot_reqs sg = {.sg = 16};
  CHECK(!keeps(&dev, &sg));
  sg.sg = 32;
  CHECK(keeps(&dev, &sg));
  dev.nsg = 0; /* sizes not known: nothing dropped for them */
  sg.sg = 16;
  CHECK(keeps(&dev, &sg));
  dev.nsg = 2;

  uint32_t cpu_gpu[] = {1, 2}, cpu[] = {1};
  struct aot_reqs fixed = {.has_fixed = 1, .fixed = cpu_gpu, .nfixed = 2};
  CHECK(keeps(&dev, &fixed));
  fixed.fixed = cpu;
  fixed.nfixed = 1;
  CHECK(!keeps(&dev, &fixed));
  fixed.nfixed = 0; /* fixed to nothing: no device */
  CHECK(!keeps(&dev, &fixed));
}

static void test_config(void) {
  struct aot_config c;
  struct lw_diag d = {0};
  CHECK(aot_config_load(&c, NULL, &d) == 0);
  const struct aot_device *skl = aot_config_find(&c, "intel_gpu_skl");
  CHECK(skl && strcmp(skl->toolchain, "ocloc") == 0 &&
        strcmp(skl->options, "-device skl") == 0 && skl->nsg == 3);
  const struct aot_device *cpu = aot_config_find(&c, "spir64_x86_64");
  CHECK(cpu && strcmp(cpu->toolchain, "opencl-aot") == 0 &&
        cpu->may_support_other_aspects);
  CHECK(aot_config_find(&c, "intel_gpu_nope") == NULL);
  for (size_t i = 1; i < c.n; i++) /* sorted, no twins */
    CHECK(strcmp(c.v[i - 1].name, c.v[i].name) < 0);
  aot_config_free(&c);

  CHECK(lw_aspect_number("fp64", 4) == 6);
  CHECK(lw_aspect_number("fp6", 3) == -1);
  CHECK(strcmp(lw_aspect_name(28), "atomic64") == 0);
  CHECK(lw_aspect_name(71) == NULL);
  /* an older name of 46 is known, the number's name is the newer */
  CHECK(lw_aspect_number("ext_oneapi_interop_memory_import", 32) == 46);
  CHECK(strcmp(lw_aspect_name(46), "ext_oneapi_external_memory_import") == 0);
}

static int report_is(const char *output, size_t i, size_t n,
                     const char *want) {
  char *got = aot_aoc_report_folder(output, i, n);
  int ok = got && strcmp(got, want) == 0;
  free(got);
  return ok;
}

static void test_aoc(void) {
  /* DPC++'s rule: these extensions are replaced, any other kept. */
  CHECK(report_is("app", 0, 1, "app.prj"));
  CHECK(report_is("dir.x/app.exe", 0, 1, "dir.x/app.prj"));
  CHECK(report_is("libfoo.a", 0, 1, "libfoo.prj"));
  CHECK(report_is("out/file.xxx", 0, 1, "out/file.xxx.prj"));
  CHECK(report_is("app.out", 2, 3, "app.2.prj"));
  struct lw_strvec args = {0}, argv = {0};
  CHECK(lw_strvec_push(&args, "-simulation") == 0);
  CHECK(aot_fpga_uses_aoc(&args) && !aot_fpga_for_hardware(&args));
  struct aot_aoc a = {"aoc", "m.aocr", "m.aocx", &args, 1, "libs.txt",
                      "a.d,@l", "app.prj"};
  CHECK(aot_aoc_argv(&a, &argv) == 0);
  const char *want[] = {"aoc",   "-o",   "m.aocx",
                        "m.aocr", "-library-list=libs.txt",
                        "-sycl", "-rtl", "-dep-files=a.d,@l",
                        "-output-report-folder=app.prj", "-simulation"};
  CHECK(argv.n == sizeof want / sizeof *want);
  for (size_t i = 0; i < argv.n && i < sizeof want / sizeof *want; i++)
    CHECK(strcmp(argv.v[i], want[i]) == 0);
  lw_strvec_free(&args);
  lw_strvec_free(&argv);
}

int main(void) {
  test_filter();
  test_config();
  test_aoc();
  return check_report("aot");
}
