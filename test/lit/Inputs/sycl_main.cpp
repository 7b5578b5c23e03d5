#include <cstdio>
int run_a(int *p);
int run_b(int *p, int n);
int main() {
  int v[4] = {1, 2, 3, 4};
  run_a(v);
  run_b(v, 4);
  std::printf("main: done\n");
  return 0;
}
