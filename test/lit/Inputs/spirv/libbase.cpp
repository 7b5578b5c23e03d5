// A SPIR-V library for SYCL devices: weight(), and smooth() over a window.
#define SYCL_EXTERNAL [[clang::sycl_external]]
SYCL_EXTERNAL float weight(int k) { return k == 0 ? 0.5f : 0.25f; }
SYCL_EXTERNAL float smooth(const float *v, int n) {
  float s = 0;
  for (int i = 0; i < n; i++)
    s += v[i] * weight(i - n / 2);
  return s;
}
