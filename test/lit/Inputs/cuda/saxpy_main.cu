// Host side of the saxpy program: kernels in kernels.cu, device helpers in
// helpers.cu (linked from a static archive). Checks the result on the host.
#include <cstdio>
#include <cuda_runtime.h>

void run_saxpy(float a, const float *x, float *y, int n);
void run_fill(float *y, float v, int n);

int main() {
  const int n = 100000;
  float *x, *y;
  if (cudaMallocManaged(&x, n * sizeof *x) != cudaSuccess ||
      cudaMallocManaged(&y, n * sizeof *y) != cudaSuccess) {
    printf("no CUDA device\n");
    return 2;
  }
  for (int i = 0; i < n; i++)
    x[i] = (float)(i % 97);
  run_fill(y, 1.0f, n);
  run_saxpy(3.0f, x, y, n);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("CUDA error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  int bad = 0;
  double sum = 0;
  for (int i = 0; i < n; i++) {
    float want = 3.0f * (x[i] * 2.0f) + 1.0f + 0.5f;
    bad += y[i] != want;
    sum += y[i];
  }
  printf("saxpy: n=%d sum=%.1f mismatches=%d\n", n, sum, bad);
  return bad != 0;
}
