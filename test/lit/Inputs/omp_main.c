#include <stdio.h>
long omp_sum(int n, int *initial);
int omp_square(int *v, int n);
int main(void) {
  int initial = -1;
  long s = omp_sum(100, &initial);
  printf("sum=%ld initial_device=%d\n", s, initial);
  int v[5] = {1, 2, 3, 4, 5};
  int host = omp_square(v, 5);
  printf("squares=%d,%d,%d,%d,%d initial_device=%d\n", v[0], v[1], v[2], v[3],
         v[4], host);
  return (s == 4950 && initial == 0 && v[4] == 25 && host == 0) ? 0 : 1;
}
