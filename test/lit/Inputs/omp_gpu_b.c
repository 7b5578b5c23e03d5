/* Lives in a static archive: a declare-target function and global. */
#pragma omp declare target
int scale = 3;
int twice(int x) { return 2 * x; }
#pragma omp end declare target
