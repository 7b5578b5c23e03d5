// Compiled without -fgpu-rdc: the object registers its own fatbinary; the
// link keeps it as it is, next to the relocatable device code.
__global__ void twice(int *p) { p[threadIdx.x] *= 2; }
void run_twice(int *p, int n) { twice<<<1, n>>>(p); }
