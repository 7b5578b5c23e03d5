/* A host-only program: no device code anywhere. */
#include <stdio.h>

int main(void) {
  puts("host only");
  return 0;
}
