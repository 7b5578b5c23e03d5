#include <omp.h>
/* Lives in a static archive: squares a vector on the device. */
int omp_square(int *v, int n) {
  int host = -1;
#pragma omp target teams distribute parallel for map(tofrom : v[0 : n]) map(from : host)
  for (int i = 0; i < n; i++) {
    if (i == 0)
      host = omp_is_initial_device();
    v[i] = v[i] * v[i];
  }
  return host;
}
