// A translation unit of an FPGA archive (test/lit/e2e/sycl-fpga-link.test).
#include "sycl.h"
struct KB;
void run_b(float *p, int n) {
  single_task<KB>([=]() {
    for (int i = 0; i < n; i++)
      p[i] += 1;
  });
}
