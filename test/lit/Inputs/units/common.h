// Units of a program for sycl-units.test: kernels calling a helper every
// unit defines (link-once), and functions of another unit.
#pragma once
template <typename N, typename F>
[[clang::sycl_kernel_entry_point(N)]] void st(F f) { f(); }
inline float helper(float x, int n) {
  float r = 0.0f;
  for (int k = 0; k < n; k++) r = r * x + (float)k;
  return r;
}
[[clang::sycl_external]] float ext_b(float v, int n);
[[clang::sycl_external]] float ext_c(float v);
[[clang::sycl_external]] float ext_b2(float v);
