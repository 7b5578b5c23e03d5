/* OpenMP on the GPU beside a CUDA unit of relocatable device code (and a
 * SYCL unit, linked in): each part runs on the device. */
#include <stdio.h>
#include <omp.h>
#pragma omp declare target
extern int scale;
int twice(int x);
#pragma omp end declare target
int cuda_part(void);
int main(void) {
  long sum = 0; int dev = -1;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(from: dev)
  for (int i = 0; i < 1000; i++) { if (i == 0) dev = omp_is_initial_device(); sum += twice(i) * scale; }
  printf("omp sum=%ld on_device=%d cuda=%d\n", sum, dev == 0, cuda_part());
  return 0;
}
