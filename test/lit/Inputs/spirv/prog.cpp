// A SYCL program whose kernels call device functions that only prebuilt
// SPIR-V libraries define (declared SYCL_EXTERNAL, as a vendor header
// would), beside kernels that need nothing from them.
#include "../sycl.h"

[[clang::sycl_external]] float scale_add(float a, float b);
[[clang::sycl_external]] float smooth(const float *v, int n);

static float clampf(float x, float lo, float hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

float in[64], out[64];
int n = 64;

struct Scale;
struct Smooth;
struct Clamp;

int main() {
  single_task<Scale>([=]() {
    for (int i = 0; i < n; i++)
      out[i] = scale_add(in[i], 1.0f);
  });
  single_task<Smooth>([=]() {
    for (int i = 1; i + 1 < n; i++)
      out[i] = smooth(in + i - 1, 3);
  });
  single_task<Clamp>([=]() {
    for (int i = 0; i < n; i++)
      out[i] = clampf(in[i], 0.0f, 1.0f);
  });
  return 0;
}
