#include <omp.h>
#include <stdio.h>
/* Sums 0..n-1 on the device; reports whether it ran on the host. */
long omp_sum(int n, int *initial) {
  long s = 0;
  int host = -1;
#pragma omp target map(tofrom : s, host)
  {
    host = omp_is_initial_device();
    for (int i = 0; i < n; i++)
      s += i;
  }
  *initial = host;
  return s;
}
