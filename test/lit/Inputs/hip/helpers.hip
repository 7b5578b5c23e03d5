// Device code other translation units call (archived in the test).
#include "hip_min.h"

__device__ int calls;
__device__ float scale(float x) { return x < 0 ? -x * 0.5f : x * 2.0f; }
