#pragma omp declare target
int other(int x) { return x + 1; }
#pragma omp end declare target
