// Two kernels with a counted loop each: what LLVM's LoopStrengthReduce
// would rewrite (test/lit/e2e/sycl-codegen-options.test).
#include "sycl.h"
struct LoopScale;
struct LoopShift;
void run_loops(float *p, int n) {
  single_task<LoopScale>([=]() {
    for (int i = 0; i < n; i++)
      p[i] = p[i] * 2.5f + (float)i / 3;
  });
  single_task<LoopShift>([=]() {
    for (int i = 0; i < n; i++)
      p[i] = p[i] - (float)i;
  });
}
int main() { return 0; }
