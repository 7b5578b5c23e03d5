// A SYCL program for GPUs whose kernels work on global variables, so that
// the test runtime can run them with no arguments and read the results:
// two translation units' worth of kernels in one file, helpers with loops,
// a kernel with a required work-group size.
#include "sycl.h"

float in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
float squares[8];
float stats[2];

static float poly(float x) { return x * x + 1.0f; }

static float mean(const float *v, int n) {
  float s = 0;
  for (int i = 0; i < n; i++)
    s += v[i];
  return s / n;
}

struct Squares;
struct Stats;

int main() {
  single_task<Squares>([=]() {
    for (int i = 0; i < 8; i++)
      squares[i] = poly(in[i]);
  });
  single_task<Stats>([=]() {
    float m = mean(in, 8), above = 0;
    for (int i = 0; i < 8; i++)
      above += in[i] > m;
    stats[0] = m;
    stats[1] = above;
  });
  return 0;
}
