/* fresh.c - work done in a child process forked for it alone, which exits
 * when it is done: what a back end with process-wide state (LLVM 22's SPIR-V
 * back end, llvm-project issue 160613) needs so that each use starts from
 * nothing. The child sends its result through a pipe: its output, or its
 * error line, a NUL and what it had made before failing; its exit status is
 * the error code (negated). graph.c's forked jobs reply the same way.
 *
 * The caller is single-threaded (a forked worker), so the child may use
 * LLVM freely. The child dies with its parent (PR_SET_PDEATHSIG): a worker
 * killed by the loop leaves nothing running. */
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      _exit(1);
    c += w;
    n -= (size_t)w;
  }
}

void lw_child_reply(int fd, int rc, const struct lw_buf *out,
                    const struct lw_diag *d) {
  if (rc) {
    const char *msg = d->msg[0] ? d->msg : lw_strerror(rc);
    write_all(fd, msg, strlen(msg) + 1);
  }
  write_all(fd, out->data, out->len);
  _exit(rc < 0 && rc > -126 ? -rc : rc ? 1 : 0);
}

int lw_child_result(int status, struct lw_buf *out, struct lw_diag *d) {
  if (WIFSIGNALED(status))
    return lw_error(d, LW_ETOOL, "its process was killed by signal %d",
                    WTERMSIG(status));
  if (!WIFEXITED(status) || WEXITSTATUS(status) == 0)
    return 0;
  int code = -WEXITSTATUS(status);
  const char *nul = out->len ? memchr(out->data, 0, out->len) : NULL;
  if (!nul) {
    out->len = 0; /* it died before it could say why */
    return lw_error(d, LW_ETOOL, "its process failed");
  }
  int rc = lw_error(d, code, "%s", (const char *)out->data);
  size_t skip = (size_t)(nul - (const char *)out->data) + 1;
  memmove(out->data, out->data + skip, out->len - skip);
  out->len -= skip;
  return rc;
}

int lw_fresh_call(int (*fn)(void *ctx, struct lw_buf *out, struct lw_diag *d),
                  void *ctx, struct lw_buf *out, struct lw_diag *d) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return lw_error(d, LW_EIO, "cannot make a pipe: %s", strerror(errno));
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(1);
    struct lw_buf mine = {0};
    struct lw_diag md = {0};
    lw_child_reply(fds[1], fn(ctx, &mine, &md), &mine, &md);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return lw_error(d, LW_EIO, "cannot fork: %s", strerror(errno));
  }
  out->len = 0;
  char chunk[65536];
  ssize_t n;
  int rc = 0;
  while ((n = read(fds[0], chunk, sizeof chunk)) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    if (!rc && lw_buf_append(out, chunk, (size_t)n)) {
      rc = lw_error(d, LW_ENOMEM, "out of memory");
      kill(pid, SIGKILL);
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  return rc ? rc : lw_child_result(status, out, d);
}

