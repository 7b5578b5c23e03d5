// A SPIR-V library for SYCL devices: scale_add, which needs weight() from
// libbase.
#define SYCL_EXTERNAL [[clang::sycl_external]]
SYCL_EXTERNAL float weight(int k);
static float twice(float a) { return a * 2.0f; }
SYCL_EXTERNAL float scale_add(float a, float b) {
  return twice(a) * weight(0) + b;
}
SYCL_EXTERNAL float scale_only(float a) { return twice(a); }
