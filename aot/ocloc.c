/* ocloc.c - the spir64_gen back end: Intel's offline compiler, ocloc.
 * In process through libocloc's C API (oclocInvoke, intel-opencl-icd's
 * libocloc.so, loaded on first use) with the SPIR-V and the binary in
 * memory; or spawned as the ocloc tool. Both get the same command line, so
 * the binary is the same.
 * libocloc's quirks, measured with Debian's 22.43: compiles on two threads
 * at once give the same binaries as one after the other; on a failure it
 * prints "Command was: ..." to the process's stdout (its real message is in
 * the "stdout.log" output), so stdout is pointed at /dev/null while any
 * in-process compile runs; given something that is not SPIR-V it ends the
 * process, so only SPIR-V is handed to it. The C header is C++-only: the
 * two entry points are declared here as it documents them. */
#include "aot.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*invoke_fn)(unsigned, const char **, uint32_t, const uint8_t **,
                         const uint64_t *, const char **, uint32_t,
                         const uint8_t **, const uint64_t *, const char **,
                         uint32_t *, uint8_t ***, uint64_t **, char ***);
typedef int (*free_fn)(uint32_t *, uint8_t ***, uint64_t **, char ***);

/* Loaded once, never unloaded (the compiler inside keeps state). */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static invoke_fn invoke;
static free_fn free_output;

static void load(void) {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  /* (libocloc loads its compiler with RTLD_DEEPBIND, which
   * AddressSanitizer's runtime refuses: a sanitizer build spawns ocloc.) */
  void *h = dlopen("libocloc.so", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return;
  invoke = (invoke_fn)dlsym(h, "oclocInvoke");
  free_output = (free_fn)dlsym(h, "oclocFreeOutput");
  if (!invoke || !free_output)
    invoke = NULL;
#endif
}

int aot_ocloc_in_process(void) {
  pthread_once(&load_once, load);
  return invoke != NULL;
}

int aot_ocloc_argv(const struct lw_strvec *args, const char *tool,
                   const char *in, const char *out, struct lw_strvec *argv) {
  return lw_strvec_push(argv, tool) || lw_strvec_push(argv, "compile") ||
                 lw_strvec_push(argv, "-spirv_input") ||
                 lw_strvec_push(argv, "-file") || lw_strvec_push(argv, in) ||
                 lw_strvec_push(argv, "-output") ||
                 lw_strvec_push(argv, out) ||
                 lw_strvec_push(argv, "-output_no_suffix") ||
                 lw_strvec_extend_from(argv, args)
             ? LW_ENOMEM
             : 0;
}

/* stdout goes to /dev/null while any in-process compile runs. */
static pthread_mutex_t quiet_lock = PTHREAD_MUTEX_INITIALIZER;
static int quiet_users, saved_stdout = -1;

static void quiet(int on) {
  pthread_mutex_lock(&quiet_lock);
  if (on && quiet_users++ == 0) {
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    fflush(stdout);
    saved_stdout = null >= 0 ? fcntl(1, F_DUPFD_CLOEXEC, 3) : -1;
    if (saved_stdout >= 0)
      dup2(null, 1);
    if (null >= 0)
      close(null);
  } else if (!on && --quiet_users == 0 && saved_stdout >= 0) {
    fflush(stdout); /* what it printed is still buffered: to /dev/null */
    dup2(saved_stdout, 1);
    close(saved_stdout);
    saved_stdout = -1;
  }
  pthread_mutex_unlock(&quiet_lock);
}

int aot_ocloc_run(const struct lw_strvec *args, const unsigned char *spv,
                  size_t n, struct lw_buf *image, struct lw_diag *d) {
  if (!aot_ocloc_in_process())
    return lw_error(d, LW_ENOTSUP, "libocloc.so cannot be loaded");
  if (n < 4 || memcmp(spv, "\x03\x02\x23\x07", 4) != 0)
    return lw_error(d, LW_EFORMAT, "the module is not SPIR-V");
  struct lw_strvec argv = {0};
  if (aot_ocloc_argv(args, "ocloc", "module.spv", "module.bin", &argv))
    return lw_error(d, LW_ENOMEM, "out of memory");
  const uint8_t *src[] = {spv};
  const uint64_t len[] = {n};
  const char *names[] = {"module.spv"};
  uint32_t nout = 0;
  uint8_t **data = NULL;
  uint64_t *lens = NULL;
  char **onames = NULL;
  quiet(1);
  int status = invoke((unsigned)argv.n, (const char **)argv.v, 1, src, len,
                      names, 0, NULL, NULL, NULL, &nout, &data, &lens,
                      &onames);
  quiet(0);
  lw_strvec_free(&argv);
  int rc = 0;
  const uint8_t *bin = NULL, *log = NULL;
  size_t binlen = 0, loglen = 0;
  for (uint32_t i = 0; i < nout; i++) {
    if (strcmp(onames[i], "module.bin") == 0)
      bin = data[i], binlen = lens[i];
    else if (strcmp(onames[i], "stdout.log") == 0)
      log = data[i], loglen = lens[i];
  }
  if (status != 0 || !bin) {
    char line[300];
    lw_error_line((const char *)log, loglen, line, sizeof line);
    rc = lw_error(d, LW_ETOOL, "libocloc failed with status %d%s%s", status,
                  line[0] ? ": " : "", line);
  } else if (lw_buf_append(image, bin, binlen)) {
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  free_output(&nout, &data, &lens, &onames);
  return rc;
}
