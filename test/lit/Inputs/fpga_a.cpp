// A translation unit of an FPGA archive (test/lit/e2e/sycl-fpga-link.test).
#include "sycl.h"
struct KA;
void run_a(float *p, int n) {
  single_task<KA>([=]() {
    for (int i = 0; i < n; i++)
      p[i] *= 2;
  });
}
