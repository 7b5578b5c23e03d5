#include "common.h"
struct KA0; struct KA1;
void run_a(float *p, int n) {
  st<KA0>([=]() { for (int x = 0; x < n; x++) p[x] = ext_b(helper(p[x], 3), n); });
  st<KA1>([=]() { p[0] = helper(p[1], 5) + ext_c(p[2]); });
}
