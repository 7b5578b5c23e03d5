// Host-only main: the registration runs before it (hip_rt.c prints it).
#include <stdio.h>
void run(float a, const float *x, float *y, int n);
int main() {
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  run(2.0f, x, y, 4);
  printf("main ran\n");
  return 0;
}
