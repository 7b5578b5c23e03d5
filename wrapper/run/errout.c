/* errout.c - what LLVM writes to standard error. LLVM prints some of its
 * last words itself, straight to file descriptor 2, before it aborts
 * ("LLVM ERROR: out of memory" and the reason on the next line, when an
 * allocation of its own fails); fatlink's error is one line. So, while a
 * link runs (not under --wrapper-verbose, which shows everything), file
 * descriptor 2 is a pipe that a thread drains line by line: LLVM's error
 * lines are kept, for the one line that reports the failure to fold in;
 * every other line goes on to the real standard error at once. fatlink's
 * own messages, and the tools it runs, use the real standard error
 * directly (lw_errout_fd). */
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set up once by the main thread, before any other thread or child. */
static int real_fd = 2, pipe_rd = -1;
static pthread_t drainer;
/* The drain thread's: LLVM's error lines it kept, "; " between them. */
static char kept[512];
static atomic_size_t kept_len;
static atomic_int draining; /* between reading bytes and handling them */

static void keep(const char *s, size_t n) {
  size_t at = atomic_load(&kept_len);
  if (at && at + 2 < sizeof kept) {
    memcpy(kept + at, "; ", 2);
    at += 2;
  }
  if (n > sizeof kept - 1 - at)
    n = sizeof kept - 1 - at;
  memcpy(kept + at, s, n);
  atomic_store(&kept_len, at + n);
}

static int llvm_error(const char *s, size_t n) {
  static const char tag[] = "LLVM ERROR: ";
  return n >= sizeof tag - 1 && memcmp(s, tag, sizeof tag - 1) == 0;
}

static void *drain(void *arg) {
  (void)arg;
  char buf[4096], line[1024];
  size_t len = 0;
  int next_too = 0; /* "LLVM ERROR: out of memory" has its reason after */
  for (;;) {
    ssize_t n = read(pipe_rd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    atomic_store(&draining, 1);
    for (ssize_t i = 0; i < n; i++) {
      if (len < sizeof line)
        line[len++] = buf[i];
      if (buf[i] != '\n' && len < sizeof line)
        continue;
      size_t text = len - (line[len - 1] == '\n');
      if (next_too || llvm_error(line, text)) {
        next_too = !next_too && text >= 25 &&
                   memcmp(line + 12, "out of memory", 13) == 0;
        keep(line, text);
      } else {
        ssize_t w = write(real_fd, line, len);
        (void)w;
      }
      len = 0;
    }
    atomic_store(&draining, 0);
  }
  if (len) {
    ssize_t w = write(real_fd, line, len);
    (void)w;
  }
  return NULL;
}

int lw_errout_capture(void) {
#ifdef LW_SANITIZE
  /* A sanitizer's report must not wait in a pipe for a dying process. */
  return 0;
#else
  int fds[2];
  int saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
  if (saved < 0)
    return -1;
  FILE *f = fdopen(saved, "w");
  if (!f || pipe2(fds, O_CLOEXEC) != 0) {
    if (f)
      fclose(f);
    else
      close(saved);
    return -1;
  }
  pipe_rd = fds[0];
  /* The thread takes no signal: the loop thread handles them (tmp.c). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int failed = pthread_create(&drainer, NULL, drain, NULL) != 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (failed) {
    close(fds[0]);
    close(fds[1]);
    fclose(f);
    pipe_rd = -1;
    return -1;
  }
  setvbuf(f, NULL, _IONBF, 0);
  fflush(stderr);
  real_fd = saved;
  stderr = f;
  dup2(fds[1], 2); /* what LLVM writes, and forked children's */
  close(fds[1]);
  return 0;
#endif
}

int lw_errout_fd(void) { return real_fd; }

void lw_errout_restore(void) {
  if (pipe_rd < 0)
    return;
  /* The pipe's last writer goes: the thread passes on what is left, then
   * sees its end - unless a child we forked still holds the pipe, which
   * the thread is not waited for long. */
  dup2(real_fd, 2);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 2;
  if (pthread_timedjoin_np(drainer, NULL, &until) != 0)
    return; /* the thread goes with the process */
  close(pipe_rd);
  pipe_rd = -1;
}

size_t lw_errout_llvm(char *out, size_t cap) {
  if (pipe_rd < 0 || !cap)
    return 0;
  /* What the thread has read and not yet sorted, and what it has not read
   * yet (taken here, without waiting), for at most about 50 ms. */
  char raw[512];
  size_t got = 0;
  for (int tries = 0; tries < 50; tries++) {
    int fl = fcntl(pipe_rd, F_GETFL);
    ssize_t n = -1;
    if (fl >= 0 && fcntl(pipe_rd, F_SETFL, fl | O_NONBLOCK) == 0) {
      n = read(pipe_rd, raw + got, sizeof raw - 1 - got);
      fcntl(pipe_rd, F_SETFL, fl);
    }
    if (n > 0)
      got += (size_t)n;
    /* 2 ms at least: the thread may have read bytes it has not yet said
     * it is sorting */
    if (n <= 0 && !atomic_load(&draining) && tries >= 2)
      break;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  size_t n = atomic_load(&kept_len);
  if (n > cap - 1)
    n = cap - 1;
  memcpy(out, kept, n);
  /* Bytes taken here: once LLVM has begun its last words, all of them are
   * its (its reason may come in a write of its own); else what comes
   * before its tag goes on, and its lines from the tag on are kept,
   * newlines as "; ". */
  raw[got] = 0;
  const char *tag = n ? raw : strstr(raw, "LLVM ERROR: ");
  ssize_t w = write(real_fd, raw, tag ? (size_t)(tag - raw) : got);
  (void)w;
  for (const char *p = tag; p && *p && n + 2 < cap; p++) {
    if (p == tag && n) {
      out[n++] = ';';
      out[n++] = ' ';
    }
    if (*p == '\n') {
      if (p[1] && n + 2 < cap) {
        out[n++] = ';';
        out[n++] = ' ';
      }
    } else {
      out[n++] = *p;
    }
  }
  out[n] = 0;
  return n;
}
