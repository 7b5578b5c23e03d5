#include "common.h"
struct KC0; struct KC1; struct KC2;
static float scale(float v) { return v * 2.0f; }
// ext_b2 of b.cpp: a.cpp takes b.cpp's ext_b, then this, then b.cpp again.
[[clang::sycl_external]] float ext_c(float v) { return scale(v) - ext_b2(v); }
void run_c(float *p, int n) {
  st<KC0>([=]() { p[0] = helper(p[0], 2); });
  st<KC1>([=]() { for (int x = 0; x < n; x++) p[x] = scale(p[x]); });
  st<KC2>([=]() { p[1] = ext_c(p[1]); });
}
