// Device functions other translation units call (archived in a test).
__device__ float scale(float x) { return x * 2.0f; }
__device__ int clamp_index(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }
