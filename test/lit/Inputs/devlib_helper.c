/* Device code only: a helper for target regions, shipped in a device-only
 * archive. */
#pragma omp declare target
int helper(int x) { return x * 7; }
#pragma omp end declare target
