#include <omp.h>
#include <stdio.h>
#pragma omp declare target
int helper(int);
#pragma omp end declare target
int main(void) {
  int r = 0, host = -1;
#pragma omp target map(from : r, host)
  {
    r = helper(6);
    host = omp_is_initial_device();
  }
  printf("helper=%d initial_device=%d\n", r, host);
  return r == 42 && host == 0 ? 0 : 1;
}
