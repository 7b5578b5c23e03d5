// A SYCL kernel calling a device function that only a device library
// defines (a vendor's NVPTX bitcode library, --sycl-nvptx-device-libraries=).
#include "sycl.h"

[[clang::sycl_external]] float lib_scale(float x, int k);
#ifndef __SYCL_DEVICE_ONLY__
float lib_scale(float x, int k) { return x * k; } // the host's, unused
#endif

float base[4] = {1, 2, 3, 4};
float scaled[4];

struct Scaled;

int run_scaled() {
  single_task<Scaled>([=]() {
    for (int i = 0; i < 4; i++)
      scaled[i] = lib_scale(base[i], i);
  });
  return 0;
}
