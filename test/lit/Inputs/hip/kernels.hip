// Kernels calling a device function of another translation unit
// (helpers.hip, archived in the test), device, constant and managed
// variables, and an extern device variable defined in helpers.hip.
#include "hip_min.h"

__device__ float scale(float x);
extern __device__ int calls;
__device__ int hits;
__constant__ float coeffs[8];
__managed__ double managed_sum;

__global__ void saxpy(float a, const float *x, float *y, int n) {
  for (int i = 0; i < n; i++)
    y[i] = a * scale(x[i]) + y[i] * coeffs[i % 8];
  hits++;
  calls++;
}

__global__ void reduce(const float *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += x[i];
  managed_sum = s;
}

void run(float a, const float *x, float *y, int n) {
  saxpy<<<1, 1>>>(a, x, y, n);
  reduce<<<1, 1>>>(y, n);
}
