// The few HIP definitions the test sources need: there is no ROCm here, so
// they are compiled with -nogpuinc -nogpulib against this instead of
// hip_runtime.h.
#include <stddef.h>
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __host__ __attribute__((host))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};
typedef struct ihipStream_t *hipStream_t;
extern "C" int __hipPushCallConfiguration(dim3, dim3, size_t = 0,
                                          hipStream_t = 0);
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, size_t,
                               hipStream_t);
