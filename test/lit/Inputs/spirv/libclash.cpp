// Defines smooth() again beside scale_add(): taken for scale_add, it
// clashes with libbase's smooth, taken for weight().
#define SYCL_EXTERNAL [[clang::sycl_external]]
SYCL_EXTERNAL float weight(int k);
SYCL_EXTERNAL float scale_add(float a, float b) { return a * weight(1) + b; }
SYCL_EXTERNAL float smooth(const float *v, int n) { return v[0] * n; }
