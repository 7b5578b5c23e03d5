/* launch.c - `fatlink`, the command clang runs (also as
 * clang-linker-wrapper): starts the linker proper, fatlink-core beside it,
 * with glibc's malloc asked to back its heap with transparent huge pages
 * (glibc.malloc.hugetlb=1 in GLIBC_TUNABLES, which glibc reads only when a
 * process starts, so a process cannot ask for it itself). Emitting a big
 * SPIR-V module touches hundreds of megabytes of fresh heap; with 4 KiB
 * pages the page faults are a fifth of an off-mode link (100 realistic
 * units: 0.86 -> 0.64 s; default mode 0.89 -> 0.84 s). The launcher links
 * nothing but libc, so it costs a millisecond. A user's own setting of
 * glibc.malloc.hugetlb wins; the user's GLIBC_TUNABLES is handed over in
 * FATLINK_USER_TUNABLES, and fatlink-core gives it back to the tools it
 * runs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char tunable[] = "glibc.malloc.hugetlb=1";

int main(int argc, char **argv) {
  (void)argc;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
  if (n <= 0) {
    fprintf(stderr, "fatlink: error: cannot find its own program: %s\n",
            strerror(errno));
    return 1;
  }
  self[n] = 0;
  char *slash = strrchr(self, '/');
  strcpy(slash ? slash + 1 : self, "fatlink-core");
  const char *user = getenv("GLIBC_TUNABLES");
  if (!user || !strstr(user, "glibc.malloc.hugetlb")) {
    /* "=" and the value when the user set it, "" when not. */
    size_t len = user ? strlen(user) : 0;
    char *saved = malloc(len + 2), *mine = malloc(len + sizeof tunable + 1);
    if (!saved || !mine) {
      fprintf(stderr, "fatlink: error: out of memory\n");
      return 1;
    }
    snprintf(saved, len + 2, "%s%s", user ? "=" : "", user ? user : "");
    snprintf(mine, len + sizeof tunable + 1, "%s%s%s", user ? user : "",
             user && *user ? ":" : "", tunable);
    if (setenv("FATLINK_USER_TUNABLES", saved, 1) != 0 ||
        setenv("GLIBC_TUNABLES", mine, 1) != 0) {
      fprintf(stderr, "fatlink: error: out of memory\n");
      return 1;
    }
  }
  execv(self, argv);
  fprintf(stderr, "fatlink: error: '%s': cannot run: %s\n", self,
          strerror(errno));
  return 1;
}
