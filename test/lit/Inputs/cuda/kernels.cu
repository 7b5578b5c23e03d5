// Kernels calling device functions of another translation unit (helpers.cu)
// and using a device variable: relocatable device code.
__device__ float scale(float x);
__device__ int clamp_index(int i, int n);
__device__ float bias = 0.5f;

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = i; k < n; k += gridDim.x * blockDim.x)
    y[k] = a * scale(x[clamp_index(k, n)]) + y[k] + bias;
}

__global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = v;
}

void run_saxpy(float a, const float *x, float *y, int n) {
  saxpy<<<(n + 127) / 128, 128>>>(a, x, y, n);
}
void run_fill(float *y, float v, int n) { fill<<<(n + 127) / 128, 128>>>(y, v, n); }
