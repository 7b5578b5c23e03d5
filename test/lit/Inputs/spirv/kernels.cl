// SPIR-V made by another toolchain (OpenCL C): a kernel of its own, which
// calls scale_add from the SPIR-V libraries.
__attribute__((overloadable)) float scale_add(float a, float b);
kernel void ocl_scale(global float *p, int n) {
  for (int i = 0; i < n; i++)
    p[i] = scale_add(p[i], 2.0f);
}
