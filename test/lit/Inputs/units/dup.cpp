// ext_c defined a second time: the link is an error, worded as always.
#include "common.h"
struct KD0;
[[clang::sycl_external]] float ext_c(float v) { return v; }
void run_d(float *p) { st<KD0>([=]() { p[0] = ext_c(p[0]); }); }
