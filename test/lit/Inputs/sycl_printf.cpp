// Kernels that print as SYCL device code does (clang-22 -fsycl): DPC++'s
// experimental printf calls __spirv_ocl_printf with a format in the
// constant address space (opencl_constant, which clang-22 puts in the
// global one) or, through a generic pointer, a string literal; assert calls
// __assert_fail, which DPC++'s device library (written out below, as its
// fallback does it) turns into __devicelib_assert_fail and a printf of a
// constant format; a format made at run time needs
// SPV_EXT_relaxed_printf_string_address_space.
#include "sycl.h"
#include <cassert>
#include <cstdint>
#ifdef __SYCL_DEVICE_ONLY__
#define CONSTANT_AS __attribute__((opencl_constant))
#else
#define CONSTANT_AS
#endif
extern "C++" int __spirv_ocl_printf(const char *fmt, ...);
extern "C++" int __spirv_ocl_printf(const CONSTANT_AS char *fmt, ...);

#ifndef __SYCL_DEVICE_ONLY__
// On the host the kernels run as plain calls (sycl.h): print nothing.
int __spirv_ocl_printf(const char *, ...) { return 0; }
#else
static const CONSTANT_AS char assert_fmt[] =
    "%s:%d: %s: Assertion `%s` failed.\n";
extern "C" void __devicelib_assert_fail(const char *expr, const char *file,
                                        int32_t line, const char *func) {
  __spirv_ocl_printf(assert_fmt, file, line, func ? func : "<unknown>", expr);
}
extern "C" void __assert_fail(const char *expr, const char *file,
                              unsigned line, const char *func) noexcept {
  __devicelib_assert_fail(expr, file, (int32_t)line, func);
  __builtin_unreachable(); // the device library ends the work-item
}
#endif

static const CONSTANT_AS char value_fmt[] = "value %d\n";
struct KPrintfConstant;
struct KPrintfLiteral;
struct KAssert;
struct KPrintfRuntime;
int run_printf(int *p, const char *fmt) {
  single_task<KPrintfConstant>([=]() { __spirv_ocl_printf(value_fmt, p[0]); });
  single_task<KPrintfLiteral>([=]() {
    for (int i = 0; i < p[1]; i++)
      __spirv_ocl_printf("item %d of %d\n", i, p[1]);
  });
  single_task<KAssert>([=]() { assert(p[0] > 0 && "positive"); p[0]--; });
  single_task<KPrintfRuntime>([=]() { __spirv_ocl_printf(fmt, p[2]); });
  return 0;
}
int main() {
  int v[3] = {1, 2, 3};
  return run_printf(v, "%d\n");
}
