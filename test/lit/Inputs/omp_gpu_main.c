#include <stdio.h>
/* A reduction on the GPU over a declare-target function of another unit
 * (in a static archive) and a declare-target global. */
#pragma omp declare target
extern int scale;
int twice(int x);
#pragma omp end declare target
int main(void) {
  enum { N = 1000 };
  static int v[N];
  long sum = 0;
  for (int i = 0; i < N; i++)
    v[i] = i;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(to : v[0 : N])
  for (int i = 0; i < N; i++)
    sum += twice(v[i]) * scale;
  printf("sum=%ld\n", sum);
  return sum == 2997000 ? 0 : 1;
}
