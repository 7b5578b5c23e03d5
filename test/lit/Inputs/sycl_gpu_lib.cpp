// A SYCL kernel calling a device function that only a device library
// defines (a vendor's NVPTX bitcode library, --sycl-nvptx-device-libraries=),
// and one using math functions.
#include "sycl.h"

[[clang::sycl_external]] float lib_scale(float x, int k);
#ifndef __SYCL_DEVICE_ONLY__
float lib_scale(float x, int k) { return x * k; } // the host's, unused
#endif

float base[4] = {1, 2, 3, 4};
float scaled[4];
float waves[2];

struct Scaled;
struct Waves;

int run_scaled() {
  single_task<Scaled>([=]() {
    for (int i = 0; i < 4; i++)
      scaled[i] = lib_scale(base[i], i);
  });
  // Math the NVPTX back end cannot select: from CUDA's libdevice.
  single_task<Waves>([=]() {
    waves[0] = __builtin_sinf(base[0]);
    waves[1] = __builtin_cosf(base[0]);
  });
  return 0;
}
