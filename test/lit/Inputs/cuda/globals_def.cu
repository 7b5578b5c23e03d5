// Defines the extern device variable and function globals.cu uses.
__device__ int total;
__device__ void add_total(int v) { atomicAdd(&total, v); }
