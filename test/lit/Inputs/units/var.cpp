// A unit using a table another unit defines (tabdef.cpp): the units are
// linked as a whole program instead.
#include "common.h"
extern const float table[4];
struct KV0;
void run_v(float *p) { st<KV0>([=]() { p[0] = table[1] + helper(p[0], 2); }); }
