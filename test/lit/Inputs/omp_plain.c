/* OpenMP offloading without system headers (for cross targets). */
int omp_plain(int n) {
  int s = 0;
#pragma omp target map(tofrom : s)
  for (int i = 0; i < n; i++)
    s += i;
  return s;
}
