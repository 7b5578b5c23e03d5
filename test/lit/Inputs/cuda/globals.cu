// Device variables the registration walks: __device__ variables,
// __constant__ memory, an extern __device__ variable defined in another
// translation unit (globals_def.cu); the host reaches them through the
// runtime by symbol, and shares managed memory with the kernels. (clang
// ignores __managed__ in CUDA: it is HIP's there.)
#include <cstdio>
#include <cuda_runtime.h>

__device__ int hits;
__constant__ float weights[4];
extern __device__ int total; // globals_def.cu
__device__ int max_seen;

__device__ void add_total(int v); // globals_def.cu

__global__ void weigh(const int *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  out[i] = in[i] * weights[i % 4];
  atomicAdd(&hits, 1);
  add_total(in[i]);
  atomicMax(&max_seen, in[i]);
}

void run_twice(int *p, int n); // plain.cu: not relocatable device code

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      printf("%s: %s\n", #x, cudaGetErrorString(e_));                          \
      return e_ == cudaErrorNoDevice ? 2 : 1;                                  \
    }                                                                          \
  } while (0)

int main() {
  const int n = 4096;
  int *in;
  float *out;
  CHECK(cudaMallocManaged(&in, n * sizeof *in));
  CHECK(cudaMallocManaged(&out, n * sizeof *out));
  for (int i = 0; i < n; i++)
    in[i] = (i * 7) % 1000;
  const float w[4] = {0.5f, 1.0f, 2.0f, 4.0f};
  CHECK(cudaMemcpyToSymbol(weights, w, sizeof w));
  int zero = 0;
  CHECK(cudaMemcpyToSymbol(hits, &zero, sizeof zero));
  CHECK(cudaMemcpyToSymbol(total, &zero, sizeof zero));
  int minus_one = -1;
  CHECK(cudaMemcpyToSymbol(max_seen, &minus_one, sizeof minus_one));
  weigh<<<(n + 255) / 256, 256>>>(in, out, n);
  CHECK(cudaGetLastError());
  run_twice(in, 64);
  CHECK(cudaDeviceSynchronize());
  int h = 0, t = 0, m = 0, want_total = 0, want_max = -1, bad = 0;
  CHECK(cudaMemcpyFromSymbol(&h, hits, sizeof h));
  CHECK(cudaMemcpyFromSymbol(&m, max_seen, sizeof m));
  CHECK(cudaMemcpyFromSymbol(&t, total, sizeof t));
  for (int i = 0; i < n; i++) {
    int v = (i * 7) % 1000;
    want_total += v;
    want_max = v > want_max ? v : want_max;
    bad += out[i] != v * w[i % 4];
    bad += in[i] != (i < 64 ? 2 * v : v);
  }
  printf("globals: hits=%d total=%d max=%d mismatches=%d\n", h, t, m, bad);
  return !(h == n && t == want_total && m == want_max && !bad);
}
