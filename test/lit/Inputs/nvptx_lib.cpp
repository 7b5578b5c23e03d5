// An NVPTX device library for SYCL: lib_scale and its helper are taken by
// the program that calls it; lib_unused is not.
#define SYCL_EXTERNAL [[clang::sycl_external]]
static float weight(int k) { return k < 2 ? 10.0f : 100.0f; }
SYCL_EXTERNAL float lib_scale(float x, int k) { return x * weight(k); }
SYCL_EXTERNAL float lib_unused(float x) { return x - 1.0f; }
