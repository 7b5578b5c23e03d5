#include "sycl.h"
struct KernelAdd;
struct KernelScale;
static int helper(int x) { return x * 3 + 1; }
int run_a(int *p) {
  single_task<KernelAdd>([=]() { p[0] += helper(p[1]); });
  single_task<KernelScale>([=]() { p[1] *= 2; });
  return 0;
}
