// A SPIR-V library for SYCL devices that nothing in the program needs.
[[clang::sycl_external]] float never_used(float x) { return x * x * x; }
