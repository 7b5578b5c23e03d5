/* bound.c - the memory fatlink allows itself. A malformed input can make
 * LLVM's bitcode reader trust an absurd count and allocate for it (a type
 * table of 4 billion entries: 32 GB, zeroed, until the kernel kills the
 * link). The process's data - heap and private writable mappings,
 * RLIMIT_DATA - is bounded instead (the driver sizes the bound from the
 * inputs and the cgroup's limit), so such an allocation fails at once, and
 * running out is one line naming what the thread was doing: LLVM allocates
 * with operator new, whose handler says so. Children forked for device work
 * keep the bound; a tool does not (the bound is fatlink's, not the tool's):
 * the loop thread lifts it while it spawns one, so the tool is born with
 * the limit fatlink started with. (Another thread reading device code just
 * then is unbounded for those microseconds.) Sanitizer builds bound
 * nothing: their shadow memory counts as data. */
#include "run/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

/* std::set_new_handler by its name in the Itanium C++ ABI (libstdc++ is
 * linked for LLVM and SPIRV-Tools): without a handler, operator new throws
 * std::bad_alloc, which LLVM, built without exceptions, never catches -
 * std::terminate prints two lines of its own and aborts. */
void (*_ZSt15set_new_handlerPFvvE(void (*handler)(void)))(void);

/* Set once, by the main thread, before the threads that run jobs and the
 * children it forks exist; read by the handler and when tools start.
 * `ended` is set by lw_bound_end, from any thread. */
static struct rlimit start_limit, bound_limit;
static int bounded;
static atomic_int ended;
static char bound_text[96];

static void out_of_memory(void) {
  lw_tmp_die("out of memory: ", bound_text);
}

void lw_bound_memory(uint64_t bytes) {
#ifdef LW_SANITIZE
  (void)bytes;
#else
  struct rlimit now;
  if (!bytes || bounded || getrlimit(RLIMIT_DATA, &now) != 0 ||
      (now.rlim_cur != RLIM_INFINITY && now.rlim_cur <= bytes))
    return;
  start_limit = now;
  now.rlim_cur = bytes;
  if (setrlimit(RLIMIT_DATA, &now) != 0)
    return;
  bound_limit = now;
  bounded = 1;
  snprintf(bound_text, sizeof bound_text,
           "more than the %llu MiB fatlink allows itself for this link",
           (unsigned long long)(bytes >> 20));
  _ZSt15set_new_handlerPFvvE(out_of_memory);
  lw_tmp_oom_text(bound_text); /* LLVM's own allocator aborts instead */
#endif
}

void lw_bound_lift(void) {
  if (bounded)
    setrlimit(RLIMIT_DATA, &start_limit);
}

void lw_bound_again(void) {
  if (bounded && !atomic_load(&ended))
    setrlimit(RLIMIT_DATA, &bound_limit);
}

void lw_bound_end(void) {
  if (bounded && !atomic_exchange(&ended, 1))
    setrlimit(RLIMIT_DATA, &start_limit);
}

/* A cgroup file's number ("max": none), or 0. */
static uint64_t read_limit(const char *dir, const char *file) {
  char path[4200], text[64];
  snprintf(path, sizeof path, "/sys/fs/cgroup%s/%s", dir, file);
  FILE *f = fopen(path, "re");
  if (!f)
    return 0;
  uint64_t v = 0;
  if (fgets(text, sizeof text, f) && text[0] >= '0' && text[0] <= '9')
    v = strtoull(text, NULL, 10);
  fclose(f);
  return v;
}

/* The strictest limit in `file` of the group `dir` and its ancestors (v1
 * says "none" with a number near 2^63). */
static uint64_t strictest(char *dir, const char *file) {
  uint64_t limit = 0;
  for (;;) {
    uint64_t v = read_limit(dir, file);
    if (v && v < UINT64_C(1) << 62 && (!limit || v < limit))
      limit = v;
    char *slash = strrchr(dir, '/');
    if (!slash || !dir[0])
      break;
    *slash = 0;
  }
  return limit;
}

uint64_t lw_cgroup_limit(void) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f)
    return 0;
  /* cgroup v2's group ("/sys/fs/cgroup" + it), and v1's memory
   * controller's ("/sys/fs/cgroup/memory" + it) */
  char line[4096], v2[4096] = "", v1[4096] = "", *at;
  int have2 = 0, have1 = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (strncmp(line, "0::", 3) == 0)
      have2 = snprintf(v2, sizeof v2, "%s", line + 3) >= 0;
    else if ((at = strstr(line, ":memory:")) != NULL)
      have1 = snprintf(v1, sizeof v1, "/memory%s", at + 8) >= 0;
  }
  fclose(f);
  uint64_t limit = have2 ? strictest(v2, "memory.max") : 0;
  return limit || !have1 ? limit : strictest(v1, "memory.limit_in_bytes");
}

uint64_t lw_proc_kib(const char *path, const char *key) {
  FILE *f = fopen(path, "re");
  if (!f)
    return 0;
  char line[256];
  size_t n = strlen(key);
  unsigned long long kib = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, n) == 0) {
      if (sscanf(line + n, "%llu kB", &kib) != 1)
        kib = 0;
      break;
    }
  fclose(f);
  return kib;
}

uint64_t lw_mem_available(void) {
  return lw_proc_kib("/proc/meminfo", "MemAvailable:") << 10;
}

uint64_t lw_self_resident(void) {
  FILE *f = fopen("/proc/self/statm", "re");
  if (!f)
    return 0;
  unsigned long long size = 0, pages = 0;
  int got = fscanf(f, "%llu %llu", &size, &pages);
  fclose(f);
  return got == 2 ? (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}
