/* jobserver.c - a client of GNU make's jobserver. When MAKEFLAGS carries
 * --jobserver-auth= (the fifo form fifo:PATH of make 4.4, or the R,W pipe
 * form of older makes, whose file descriptors make passes to recipes it
 * marks '+' or sees as recursive), fatlink runs one job on the slot make
 * gave it and takes a token (one byte) from the jobserver for each further
 * job at once, giving it back as soon as it is not needed - and every token
 * it holds on every way out: the end of the link, an error, a fatal signal
 * (tmp.c's handler calls back). The tokens are read through a file
 * description of fatlink's own (the fifo opened anew, or the pipe reopened
 * through /proc/self/fd), so that it can be non-blocking without making
 * make's own non-blocking. A jobserver that cannot be opened is no
 * jobserver: the link runs by --wrapper-jobs, as without make. */
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_TOKENS = 1024 };

struct lw_jobserver {
  int rfd, wfd;
  /* Held tokens, for the signal path too: `n` changes with fatal signals
   * held (lw_tmp_signals_hold). */
  volatile sig_atomic_t n;
  unsigned char token[MAX_TOKENS];
};

/* The value of --jobserver-auth= (or make 4.1's --jobserver-fds=) in
 * MAKEFLAGS, the last one given, malloc'd; NULL when none. */
static char *auth(const char *flags) {
  static const char *const names[] = {"--jobserver-auth=", "--jobserver-fds="};
  char *found = NULL;
  for (const char *p = flags; p && *p;) {
    p += strspn(p, " ");
    size_t n = strcspn(p, " ");
    for (size_t k = 0; k < LW_ARRAY_SIZE(names); k++) {
      size_t len = strlen(names[k]);
      if (n > len && strncmp(p, names[k], len) == 0) {
        free(found);
        found = strndup(p + len, n - len);
      }
    }
    p += n;
  }
  return found;
}

/* A file description of our own for pipe end `fd`, or -1. */
static int reopen(int fd, int flags) {
  if (fcntl(fd, F_GETFD) < 0)
    return -1; /* make did not pass it: a recipe not marked '+' */
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  return open(path, flags | O_CLOEXEC);
}

static void release_in_signal(void *ctx) {
  struct lw_jobserver *js = ctx;
  while (js->n > 0) {
    js->n--;
    if (write(js->wfd, &js->token[js->n], 1) < 0)
      break;
  }
}

struct lw_jobserver *lw_jobserver_open(int verbose) {
  char *a = auth(getenv("MAKEFLAGS"));
  if (!a)
    return NULL;
  int r = -1, w = -1;
  if (strncmp(a, "fifo:", 5) == 0) {
    r = open(a + 5, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    w = open(a + 5, O_WRONLY | O_CLOEXEC);
  } else {
    int rf, wf;
    char end;
    if (sscanf(a, "%d,%d%c", &rf, &wf, &end) == 2 && rf >= 0 && wf >= 0) {
      r = reopen(rf, O_RDONLY | O_NONBLOCK);
      w = reopen(wf, O_WRONLY);
    }
  }
  struct lw_jobserver *js = r >= 0 && w >= 0 ? calloc(1, sizeof *js) : NULL;
  if (!js) {
    if (verbose)
      fprintf(stderr,
              "fatlink: make's jobserver (%s) cannot be used here "
              "(mark the recipe with '+' to pass it): jobs as "
              "--wrapper-jobs says\n",
              a);
    if (r >= 0)
      close(r);
    if (w >= 0)
      close(w);
    free(a);
    return NULL;
  }
  if (verbose)
    fprintf(stderr, "fatlink: a client of make's jobserver (%s)\n", a);
  free(a);
  js->rfd = r;
  js->wfd = w;
  lw_tmp_at_signal(release_in_signal, js);
  return js;
}

int lw_jobserver_fd(const struct lw_jobserver *js) { return js->rfd; }

size_t lw_jobserver_held(const struct lw_jobserver *js) {
  return (size_t)js->n;
}

int lw_jobserver_take(struct lw_jobserver *js) {
  if (js->n >= MAX_TOKENS)
    return 0;
  sigset_t old;
  lw_tmp_signals_hold(&old);
  unsigned char b;
  int got = read(js->rfd, &b, 1) == 1;
  if (got) {
    js->token[js->n] = b;
    js->n++;
  }
  lw_tmp_signals_restore(&old);
  return got;
}

void lw_jobserver_give(struct lw_jobserver *js) {
  sigset_t old;
  lw_tmp_signals_hold(&old);
  if (js->n > 0) {
    js->n--;
    /* A full pipe cannot be: make wrote at least this many tokens. */
    while (write(js->wfd, &js->token[js->n], 1) < 0 && errno == EINTR)
      ;
  }
  lw_tmp_signals_restore(&old);
}

void lw_jobserver_close(struct lw_jobserver *js) {
  if (!js)
    return;
  while (js->n > 0)
    lw_jobserver_give(js);
  lw_tmp_at_signal(NULL, NULL);
  close(js->rfd);
  close(js->wfd);
  free(js);
}
