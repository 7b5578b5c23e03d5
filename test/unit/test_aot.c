/* test_aot.c - the aspect filter's rules (seed 001) on hand-made device
 * entries, and the built-in device configuration: lookups, auto-detected
 * ocloc options, aspects by name and number. */
#include "check.h"
#include "aot.h"

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

int main(void) {
  test_filter();
  test_config();
  return check_report("aot");
}
