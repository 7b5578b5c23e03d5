#include "common.h"
struct KB0;
static float scale(float v) { return v * 0.5f + 1.0f; }
[[clang::sycl_external]] float ext_b(float v, int n) {
  float s = v;
  for (int k = 0; k < n; k++) s = scale(s) + ext_c(s);
  return s;
}
[[clang::sycl_external]] float ext_b2(float v) { return scale(v) * v; }
void run_b(float *p, int n) {
  st<KB0>([=]() { for (int x = 0; x < n; x++) p[x] = helper(p[x], 4); });
}
