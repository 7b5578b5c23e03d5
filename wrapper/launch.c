/* launch.c - `fatlink`, the command clang runs (also as
 * clang-linker-wrapper): starts the linker proper, fatlink-core beside it,
 * with glibc's malloc asked to back the heap with transparent huge pages
 * (glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES, which glibc reads only
 * when a process starts, so a process cannot ask for it itself). The tools
 * fatlink-core runs inherit it. Page faults are a large share of what
 * LLVM's back ends and linkers spend on fresh heap; measured on 2 cores
 * (100 realistic units, real_link.py): an off-mode link 0.86 -> 0.64 s,
 * the host `ld` of that program 0.145 -> 0.08 s, ocloc compiling one of its
 * modules for dg2 2.11 -> 1.17 s, each at the same peak memory within
 * 1 MB. A user's own setting of glibc.malloc.hugetlb wins. The launcher
 * links nothing but libc, so it costs a millisecond.
 *
 * fatlink-core is beside the launcher in the build tree (bin/), and in
 * libexec/fatlink/ of an installed prefix (bin/fatlink beside it): both are
 * found from the launcher's own path, so any prefix works. */
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
  char *dir_end = slash ? slash + 1 : self;
  strcpy(dir_end, "../libexec/fatlink/fatlink-core");
  if (access(self, X_OK) != 0) /* not installed: the build tree's, or none */
    strcpy(dir_end, "fatlink-core");
  const char *user = getenv("GLIBC_TUNABLES");
  if (!user || !strstr(user, "glibc.malloc.hugetlb")) {
    size_t len = user ? strlen(user) : 0;
    char *mine = malloc(len + sizeof tunable + 1);
    if (!mine) {
      fprintf(stderr, "fatlink: error: out of memory\n");
      return 1;
    }
    snprintf(mine, len + sizeof tunable + 1, "%s%s%s", user ? user : "",
             user && *user ? ":" : "", tunable);
    if (setenv("GLIBC_TUNABLES", mine, 1) != 0) {
      fprintf(stderr, "fatlink: error: out of memory\n");
      return 1;
    }
  }
  execv(self, argv);
  fprintf(stderr, "fatlink: error: '%s': cannot run: %s\n", self,
          strerror(errno));
  return 1;
}
