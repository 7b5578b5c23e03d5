/* graph.c - the job graph and its scheduler on libuv (after ninja's Plan and
 * samurai's build loop).
 *
 * A job waits for `nblock` inputs; when the count reaches zero it joins the
 * ready list (FIFO, so the order is deterministic). The loop starts ready jobs
 * while fewer than `jobs` run - one limit for in-process work (uv_queue_work)
 * and spawned tools (uv_spawn) together. Everything but a job's `run` happens
 * on the loop thread, so the graph needs no lock; `prepare` and `done` may add
 * jobs, which is how the graph grows while it runs. The first failure stops
 * new starts, terminates running tools and waits for in-process work
 * (maxfail = 1). A dry run walks the same graph without running anything.
 * A forked job's child sends its result through a pipe and exits; the loop
 * reads the pipe, and at its end reaps the child (a crash is an error naming
 * the job, never a zombie). */
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

enum { PENDING, READY, RUNNING, DONE, FAILED };

struct lw_graph {
  struct lw_graph_options opt;
  uv_loop_t loop;
  int loop_ready;
  struct lw_job *all, **all_tail;
  struct lw_job *ready, **ready_tail;
  int running, peak, failed;
  /* --wrapper-memory: what running jobs hold by their estimates
   * (lw_job.footprint, and once for the jobs of a kind running
   * footprint_shared), and the most they held at once */
  uint64_t mem_held, mem_peak;
  struct kind_memory {
    const struct lw_job_kind *kind;
    int running;
    uint64_t shared; /* counted while one runs */
    double scale;    /* what its tools took over their estimates, the
                        most seen (0: none finished yet) */
  } kinds[8];
  size_t nkinds;
  uv_timer_t peaks; /* samples the running tools' peaks */
  int peaks_ready;
  int llvm_running; /* in-process jobs using LLVM: no fork meanwhile */
  struct lw_diag diag;
  uint64_t t0;
  /* Long tools (lw_job_kind.long_running) and the status line. */
  size_t njobs, ndone;
  int nlong, tty, status_ready;
  uv_timer_t status;
  /* make's jobserver (lw_graph_options), and the watch for a token when
   * jobs wait for one. */
  struct lw_jobserver *js;
  uv_poll_t token_watch;
  int watch_ready, watching;
};

struct proc {
  uv_process_t p;
  uv_pipe_t pipes[2]; /* stdout, stderr: both go to the job's capture */
  uv_timer_t timer;   /* --tool-timeout */
  int open_handles;
  int timing, timed_out;
  int exited; /* reaped: its pid may be another process's now */
  int64_t status;
  int term_signal;
  struct lw_job *j;
};

struct work {
  uv_work_t req;
  int rc;
};

struct forked {
  uv_pipe_t pipe;
  pid_t pid;
  struct lw_job *j;
};

static void start_ready(struct lw_graph *g);
static void stopped(struct lw_graph *g, struct lw_job *j);
static void learn(struct lw_graph *g, struct lw_job *j);
static void watch_peaks(struct lw_graph *g, struct lw_job *j);

int lw_graph_new(const struct lw_graph_options *opt, struct lw_graph **out) {
  struct lw_graph *g = calloc(1, sizeof *g);
  if (!g)
    return LW_ENOMEM;
  g->opt = *opt;
  if (g->opt.jobs < 1)
    g->opt.jobs = 1;
  if (!g->opt.log)
    g->opt.log = stderr;
  g->all_tail = &g->all;
  g->ready_tail = &g->ready;
  g->t0 = uv_hrtime();
  g->tty = isatty(fileno(g->opt.log));
  if (!g->opt.dry_run) {
    /* The pool must be able to run as many in-process jobs as we allow. */
    if (!getenv("UV_THREADPOOL_SIZE")) {
      char n[16];
      snprintf(n, sizeof n, "%d", g->opt.jobs);
      setenv("UV_THREADPOOL_SIZE", n, 1);
    }
    if (uv_loop_init(&g->loop) != 0) {
      free(g);
      return LW_ENOMEM;
    }
    g->loop_ready = 1;
    g->js = g->opt.jobserver;
    if (g->js &&
        uv_poll_init(&g->loop, &g->token_watch, lw_jobserver_fd(g->js)) == 0) {
      g->watch_ready = 1;
      g->token_watch.data = g;
    } else {
      g->js = NULL; /* a descriptor libuv cannot watch: no jobserver */
    }
  }
  *out = g;
  return 0;
}

static void push_ready(struct lw_graph *g, struct lw_job *j) {
  j->state = READY;
  j->next_ready = NULL;
  *g->ready_tail = j;
  g->ready_tail = &j->next_ready;
}

struct lw_job *lw_graph_add(struct lw_graph *g, const struct lw_job_kind *kind,
                            void *data, struct lw_job *const *deps,
                            size_t ndeps) {
  struct lw_job *j = calloc(1, sizeof *j);
  if (!j) {
    if (kind->free_data && data)
      kind->free_data(data);
    return NULL;
  }
  j->kind = kind;
  j->data = data;
  j->graph = g;
  g->njobs++;
  *g->all_tail = j;
  g->all_tail = &j->next_all;
  for (size_t i = 0; i < ndeps; i++)
    if (lw_graph_add_dep(g, j, deps[i]))
      return NULL; /* the job stays owned by the graph */
  if (j->nblock == 0)
    push_ready(g, j);
  return j;
}

int lw_graph_add_dep(struct lw_graph *g, struct lw_job *user,
                     struct lw_job *dep) {
  if (!dep || dep->state == DONE)
    return 0;
  if (user->state != PENDING)
    LW_BUG("dependency added to a job that already started");
  if (lw_grow(&dep->users, dep->nusers, &dep->capusers, sizeof *dep->users, 4))
    return LW_ENOMEM;
  dep->users[dep->nusers++] = user;
  user->nblock++;
  (void)g;
  return 0;
}

static double now_us(struct lw_graph *g) {
  return (double)(uv_hrtime() - g->t0) / 1e3;
}

static int quote_arg(struct lw_buf *b, const char *a) {
  if (*a && strpbrk(a, " \t\n\"'\\$`;&|<>()*?[]#~") == NULL)
    return lw_buf_append(b, a, strlen(a));
  int rc = lw_buf_append(b, "\"", 1);
  for (; *a && !rc; a++) {
    if (*a == '"' || *a == '\\' || *a == '$' || *a == '`')
      rc = lw_buf_append(b, "\\", 1);
    if (!rc)
      rc = lw_buf_append(b, a, 1);
  }
  return rc ? rc : lw_buf_append(b, "\"", 1);
}

/* One line for the job: its command (quoted where needed) or its step,
 * written at once. */
static void describe(struct lw_graph *g, struct lw_job *j) {
  if (!j->argv.n && !j->kind->run && !j->kind->fork_run)
    return; /* it only waits for others */
  struct lw_buf b = {0};
  int rc = 0;
  if (j->argv.n) {
    for (size_t i = 0; !rc && i < j->argv.n; i++)
      rc = (i ? lw_buf_append(&b, " ", 1) : 0) || quote_arg(&b, j->argv.v[i]);
  } else {
    const char *what = j->what ? j->what : j->kind->name;
    const char *where = j->kind->fork_run ? "forked: " : "in-process: ";
    rc = lw_buf_append(&b, where, strlen(where)) ||
         lw_buf_append(&b, what, strlen(what));
  }
  if (!rc && !lw_buf_append(&b, "\n", 1)) {
    fwrite(b.data, 1, b.len, g->opt.log);
    fflush(g->opt.log);
  }
  lw_buf_free(&b);
}

static void kill_tools(struct lw_graph *g) {
  for (struct lw_job *j = g->all; j; j = j->next_all)
    if (j->state == RUNNING && j->kind->fork_run && j->runner)
      kill(((struct forked *)j->runner)->pid, SIGKILL);
    else if (j->state == RUNNING && j->argv.n && j->runner) {
      struct proc *p = j->runner;
      uv_process_kill(&p->p, SIGTERM);
    }
}

/* ---- long tools ---------------------------------------------------------- */

static void elapsed(double us, char *buf, size_t n) {
  unsigned s = (unsigned)(us / 1e6);
  snprintf(buf, n, "%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
}

static const char *long_what(const struct lw_job *j) {
  return j->what ? j->what : j->kind->name;
}

/* The status line: jobs done of all, the long tools running, time. */
static void status_cb(uv_timer_t *t) {
  struct lw_graph *g = t->data;
  const struct lw_job *first = NULL;
  for (const struct lw_job *j = g->all; j && !first; j = j->next_all)
    if (j->long_started)
      first = j;
  char time[32];
  elapsed(now_us(g), time, sizeof time);
  fprintf(g->opt.log,
          "\rfatlink: %zu/%zu jobs done, %d running: %.60s%s [%s]\033[K",
          g->ndone, g->njobs, g->running, first ? long_what(first) : "",
          g->nlong > 1 ? " ..." : "", time);
  fflush(g->opt.log);
}

static void long_begin(struct lw_graph *g, struct lw_job *j) {
  j->long_started = 1;
  g->nlong++;
  if (!g->tty) {
    fprintf(g->opt.log, "fatlink: started: %s\n", long_what(j));
    fflush(g->opt.log);
    return;
  }
  if (!g->status_ready) {
    uv_timer_init(&g->loop, &g->status);
    g->status.data = g;
    g->status_ready = 1;
  }
  if (g->nlong == 1)
    uv_timer_start(&g->status, status_cb, 0, 1000);
}

/* A failure is told by the error itself. */
static void long_end(struct lw_graph *g, struct lw_job *j, int ok) {
  if (!j->long_started)
    return;
  j->long_started = 0;
  g->nlong--;
  if (g->tty) {
    if (g->nlong == 0) {
      uv_timer_stop(&g->status);
      fprintf(g->opt.log, "\r\033[K");
      fflush(g->opt.log);
    }
    return;
  }
  char time[32];
  elapsed(now_us(g) - j->start_us, time, sizeof time);
  if (ok)
    fprintf(g->opt.log, "fatlink: finished: %s after %s\n", long_what(j), time);
  fflush(g->opt.log);
}

static void fail(struct lw_graph *g, struct lw_job *j, int rc) {
  long_end(g, j, 0);
  j->state = FAILED;
  if (!g->failed) {
    g->failed = 1;
    g->diag = j->diag;
    if (!g->diag.code) {
      g->diag.code = rc;
      snprintf(g->diag.msg, sizeof g->diag.msg, "%s: %s", j->kind->name,
               lw_strerror(rc));
    }
    kill_tools(g);
  }
}

/* Called on the loop thread when a job's work (or tool) ended with `rc`. */
static void finish(struct lw_graph *g, struct lw_job *j, int rc) {
  j->end_us = now_us(g);
  long_end(g, j, rc == 0);
  g->ndone++;
  if (!rc && j->kind->done && !g->failed)
    rc = j->kind->done(g, j, &j->diag);
  if (rc) {
    fail(g, j, rc);
    return;
  }
  j->state = DONE;
  for (size_t i = 0; i < j->nusers; i++)
    if (--j->users[i]->nblock == 0 && j->users[i]->state == PENDING)
      push_ready(g, j->users[i]);
}

/* The determinism tests' delays (lw_graph_options.delay_seed). */
static void test_delay(const struct lw_graph *g, const struct lw_job *j) {
  if (!g->opt.delay_seed)
    return;
  uint64_t x = (uint64_t)g->opt.delay_seed * 0x9e3779b97f4a7c15ull ^
               (uint64_t)(uintptr_t)j;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  usleep((useconds_t)(x % 20000));
}

static void work_cb(uv_work_t *req) {
  struct lw_job *j = req->data;
  struct work *w = j->runner;
  test_delay(j->graph, j);
  w->rc = j->kind->run(j, &j->diag);
}

static void after_work_cb(uv_work_t *req, int status) {
  struct lw_job *j = req->data;
  struct lw_graph *g = j->graph;
  struct work *w = j->runner;
  int rc = status == UV_ECANCELED ? LW_ECANCELED : w->rc;
  free(w);
  j->runner = NULL;
  stopped(g, j);
  if (!j->kind->no_llvm)
    g->llvm_running--;
  finish(g, j, rc);
  start_ready(g);
}

static void proc_closed(uv_handle_t *h) {
  struct proc *p = h->data;
  if (--p->open_handles > 0)
    return;
  struct lw_job *j = p->j;
  struct lw_graph *g = j->graph;
  int rc = 0;
  j->exit_status = p->term_signal ? 128 + p->term_signal : (int)p->status;
  /* A tool job that has a description names it: which step, which module. */
  const char *what = j->what ? j->what : "", *sep = j->what ? ": " : "";
  if (p->status == -1)
    rc = LW_ETOOL; /* spawn failed, diag already set */
  else if (j->exit_status != 0 || p->timed_out) {
    char line[300];
    lw_error_line((const char *)j->out.data, j->out.len, line, sizeof line);
    const char *colon = line[0] ? ": " : "";
    if (p->timed_out)
      lw_error(&j->diag, LW_ETOOL,
               "%s%s'%s' did not finish within %d s (--tool-timeout) and was "
               "stopped%s%s",
               what, sep, j->argv.v[0], g->opt.tool_timeout, colon, line);
    else if (p->term_signal)
      lw_error(&j->diag, LW_ETOOL, "%s%s'%s': killed by signal %d%s%s", what,
               sep, j->argv.v[0], p->term_signal, colon, line);
    else
      lw_error(&j->diag, LW_ETOOL, "%s%s'%s': failed with exit code %d%s%s%s%s",
               what, sep, j->argv.v[0], j->exit_status, colon, line,
               j->hint ? " - " : "", j->hint ? j->hint : "");
    /* The host linker's status is passed on, as its output is (the user
     * sees a linker); any other tool's failure is fatlink's: exit 1. */
    if (j->inherit_stdio)
      j->diag.exit_status = j->exit_status;
    rc = LW_ETOOL;
  } else if (j->show_output && j->out.len) {
    fwrite(j->out.data, 1, j->out.len, g->opt.log);
    fflush(g->opt.log);
  }
  free(p);
  j->runner = NULL;
  stopped(g, j);
  learn(g, j);
  finish(g, j, rc);
  start_ready(g);
}

static void on_exit_cb(uv_process_t *h, int64_t status, int sig) {
  struct proc *p = h->data;
  lw_tmp_untrack_child(h->pid);
  p->exited = 1;
  p->status = status;
  p->term_signal = sig;
  if (p->timing) {
    uv_timer_stop(&p->timer);
    uv_close((uv_handle_t *)&p->timer, proc_closed);
  }
  uv_close((uv_handle_t *)h, proc_closed);
}

/* --tool-timeout: a tool still running is killed with everything it
 * started (its process group: a script's children would keep the output
 * pipes open); on_exit_cb follows. */
static void on_timeout(uv_timer_t *t) {
  struct proc *p = t->data;
  p->timed_out = 1;
  kill(-p->p.pid, SIGKILL);
  kill(p->p.pid, SIGKILL);
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  (void)h;
  buf->base = malloc(hint);
  buf->len = buf->base ? hint : 0;
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  struct proc *p = s->data;
  if (n > 0)
    lw_buf_append(&p->j->out, buf->base, (size_t)n);
  free(buf->base);
  if (n < 0)
    uv_close((uv_handle_t *)s, proc_closed);
}

static int spawn(struct lw_graph *g, struct lw_job *j) {
  /* Our environment, but for TMPDIR when the job gives the tool one and
   * the variable the job sets. */
  struct lw_strvec env = {0};
  int own_env = j->tmpdir || j->env_set, oom = 0;
  size_t set_len = j->env_set ? strcspn(j->env_set, "=") + 1 : 0;
  for (char **e = environ; own_env && *e && !oom; e++)
    oom = !(j->tmpdir && strncmp(*e, "TMPDIR=", 7) == 0) &&
          !(set_len && strncmp(*e, j->env_set, set_len) == 0) &&
          lw_strvec_push(&env, *e);
  if (j->tmpdir && !oom)
    oom = lw_strvec_pushf(&env, "TMPDIR=%s", j->tmpdir);
  if (j->env_set && !oom)
    oom = lw_strvec_push(&env, j->env_set);
  struct proc *p = oom ? NULL : calloc(1, sizeof *p);
  if (!p) {
    lw_strvec_free(&env);
    return lw_error(&j->diag, LW_ENOMEM, "out of memory");
  }
  p->j = j;
  p->p.data = p;
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_IGNORE;
  if (j->inherit_stdio) {
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = 1;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = lw_errout_fd();
  } else {
    for (int k = 0; k < 2; k++) {
      uv_pipe_init(&g->loop, &p->pipes[k], 0);
      p->pipes[k].data = p;
      p->open_handles++;
      stdio[k + 1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
      stdio[k + 1].data.stream = (uv_stream_t *)&p->pipes[k];
    }
  }
  uv_process_options_t po;
  memset(&po, 0, sizeof po);
  po.file = j->argv.v[0];
  po.args = j->argv.v;
  po.exit_cb = on_exit_cb;
  po.stdio = stdio;
  po.stdio_count = 3;
  /* Its own process group, so that stopping it stops what it started. */
  po.flags = UV_PROCESS_DETACHED;
  po.env = own_env ? env.v : NULL;
  p->open_handles++;
  j->runner = p;
  sigset_t old;
  lw_tmp_signals_hold(&old);
  lw_bound_lift(); /* a tool is not fatlink's to bound */
  int r = uv_spawn(&g->loop, &p->p, &po);
  lw_strvec_free(&env);
  lw_bound_again();
  if (r == 0)
    lw_tmp_track_child(p->p.pid);
  lw_tmp_signals_restore(&old);
  if (r == 0)
    watch_peaks(g, j);
  if (r != 0) {
    lw_error_path(&j->diag, LW_ETOOL, j->argv.v[0], "cannot run: %s",
                  uv_strerror(r));
    p->status = -1;
    uv_close((uv_handle_t *)&p->p, proc_closed);
    if (!j->inherit_stdio)
      for (int k = 0; k < 2; k++)
        uv_close((uv_handle_t *)&p->pipes[k], proc_closed);
    return 0; /* finished through proc_closed */
  }
  if (!j->inherit_stdio)
    for (int k = 0; k < 2; k++)
      uv_read_start((uv_stream_t *)&p->pipes[k], alloc_cb, read_cb);
  if (g->opt.tool_timeout > 0 && uv_timer_init(&g->loop, &p->timer) == 0) {
    p->timer.data = p;
    p->timing = 1;
    p->open_handles++;
    uv_timer_start(&p->timer, on_timeout, (uint64_t)g->opt.tool_timeout * 1000,
                   0);
  }
  return 0;
}

/* ---- forked jobs ------------------------------------------------------- */

static void forked_closed(uv_handle_t *h) {
  struct forked *f = h->data;
  struct lw_job *j = f->j;
  struct lw_graph *g = j->graph;
  int status = 0;
  struct rusage ru;
  while (wait4(f->pid, &status, 0, &ru) < 0 && errno == EINTR)
    ;
  j->max_rss_kib = (uint64_t)ru.ru_maxrss; /* for the time trace */
  lw_tmp_untrack_child(f->pid);
  free(f);
  j->runner = NULL;
  struct lw_diag cd = {0};
  int rc = lw_child_result(status, &j->out, &cd);
  if (rc) {
    if (j->kind->fork_failed)
      j->kind->fork_failed(j);
    rc = lw_error(&j->diag, rc, "%s: %s", j->what ? j->what : j->kind->name,
                  cd.msg);
  }
  stopped(g, j);
  finish(g, j, rc);
  start_ready(g);
}

static void forked_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  struct forked *f = s->data;
  if (n > 0 && lw_buf_append(&f->j->out, buf->base, (size_t)n))
    kill(f->pid, SIGKILL); /* out of memory: stop, fail below */
  free(buf->base);
  if (n < 0)
    uv_close((uv_handle_t *)s, forked_closed);
}

/* The child: runs the job, sends its result (or its error line) and exits
 * without the parent's exit handlers. */
static void child(struct lw_job *j, int fd, const sigset_t *mask) {
  lw_tmp_in_child();
  lw_tmp_signals_restore(mask);
  struct lw_buf out = {0};
  struct lw_diag d = {0};
  lw_child_reply(fd, j->kind->fork_run(j, &out, &d), &out, &d);
}

static int fork_job(struct lw_graph *g, struct lw_job *j) {
  struct forked *f = calloc(1, sizeof *f);
  int fds[2];
  if (!f)
    return lw_error(&j->diag, LW_ENOMEM, "out of memory");
  if (pipe2(fds, O_CLOEXEC) != 0) {
    free(f);
    return lw_error(&j->diag, LW_EIO, "cannot make a pipe: %s",
                    strerror(errno));
  }
  sigset_t old;
  lw_tmp_signals_hold(&old);
  /* What this process has freed goes back to the kernel first: else the
   * child and this process share those pages, and each pays a
   * copy-on-write fault for every page of them it reuses, where fresh
   * memory comes in huge pages (launch.c). 100 realistic units, 2 workers:
   * 0.86 -> 0.76 s, CPU 1.33 -> 1.13 s. */
  malloc_trim(0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child(j, fds[1], &old);
  }
  if (pid > 0)
    lw_tmp_track_child(pid);
  lw_tmp_signals_restore(&old);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    free(f);
    return lw_error(&j->diag, LW_EIO, "cannot fork: %s", strerror(errno));
  }
  f->pid = pid;
  f->j = j;
  f->pipe.data = f;
  j->runner = f;
  uv_pipe_init(&g->loop, &f->pipe, 0);
  if (uv_pipe_open(&f->pipe, fds[0]) != 0 ||
      uv_read_start((uv_stream_t *)&f->pipe, alloc_cb, forked_read) != 0) {
    kill(pid, SIGKILL);
    uv_close((uv_handle_t *)&f->pipe, forked_closed);
  }
  return 0;
}

/* What the jobs of j's kind share and what they took, or NULL when it has
 * no estimate (or the table is full: then each job pays what it shares,
 * and nothing is learnt). */
static struct kind_memory *kind_memory(struct lw_graph *g,
                                       const struct lw_job *j) {
  if (!j->footprint && !j->footprint_shared)
    return NULL;
  for (size_t k = 0; k < g->nkinds; k++)
    if (g->kinds[k].kind == j->kind)
      return &g->kinds[k];
  if (g->nkinds == LW_ARRAY_SIZE(g->kinds))
    return NULL;
  g->kinds[g->nkinds] = (struct kind_memory){j->kind, 0, 0, 0};
  return &g->kinds[g->nkinds++];
}

/* An estimate as what the kind's tools took so far says it is. */
static uint64_t scaled(const struct kind_memory *k, uint64_t bytes) {
  return k && k->scale > 0 ? (uint64_t)((double)bytes * k->scale) : bytes;
}

/* What starting j adds to the memory running jobs hold. */
static uint64_t added_memory(struct lw_graph *g, const struct lw_job *j) {
  struct kind_memory *k = kind_memory(g, j);
  return scaled(k, j->footprint) +
         (!k ? j->footprint_shared
             : k->running ? 0 : scaled(k, j->footprint_shared));
}

static void hold_memory(struct lw_graph *g, struct lw_job *j) {
  struct kind_memory *k = kind_memory(g, j);
  j->mem_charged = scaled(k, j->footprint) + (k ? 0 : j->footprint_shared);
  g->mem_held += j->mem_charged;
  if (k && !k->running++) {
    k->shared = scaled(k, j->footprint_shared);
    g->mem_held += k->shared;
  }
  if (g->mem_held > g->mem_peak)
    g->mem_peak = g->mem_held;
}

/* A job stopped running: its slot and its memory are free again. */
static void stopped(struct lw_graph *g, struct lw_job *j) {
  g->running--;
  struct kind_memory *k = kind_memory(g, j);
  g->mem_held -= j->mem_charged;
  if (k && !--k->running)
    g->mem_held -= k->shared;
}

/* A tool's peak (VmHWM), sampled while it runs: its kind's later jobs are
 * estimated by what it took against its estimate (a tool run through a
 * launcher on another machine takes the launcher's little here). Forked
 * jobs do not count: their peak is mostly memory they share with this
 * process. */
static void learn(struct lw_graph *g, struct lw_job *j) {
  struct kind_memory *k = kind_memory(g, j);
  uint64_t est = j->footprint + j->footprint_shared;
  if (!k || !est || !j->max_rss_kib)
    return;
  double r = (double)(j->max_rss_kib << 10) / (double)est;
  if (r > k->scale)
    k->scale = r;
}

static void sample_peaks(uv_timer_t *t) {
  struct lw_graph *g = t->data;
  int any = 0;
  for (struct lw_job *j = g->all; j; j = j->next_all) {
    if (j->state != RUNNING || !j->argv.n || !j->runner ||
        j->kind->fork_run || j->kind->run ||
        (!j->footprint && !j->footprint_shared) ||
        ((struct proc *)j->runner)->exited)
      continue;
    any = 1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status",
             (int)((struct proc *)j->runner)->p.pid);
    uint64_t kib = lw_proc_kib(path, "VmHWM:");
    if (kib > j->max_rss_kib)
      j->max_rss_kib = kib;
  }
  if (!any)
    uv_timer_stop(t);
}

/* Samples the peaks of tools with estimates every 20 ms while they run. */
static void watch_peaks(struct lw_graph *g, struct lw_job *j) {
  if ((!j->footprint && !j->footprint_shared) || !g->opt.memory)
    return;
  if (!g->peaks_ready) {
    if (uv_timer_init(&g->loop, &g->peaks) != 0)
      return;
    g->peaks.data = g;
    g->peaks_ready = 1;
    uv_unref((uv_handle_t *)&g->peaks); /* the link ends without it */
  }
  if (!uv_is_active((uv_handle_t *)&g->peaks))
    uv_timer_start(&g->peaks, sample_peaks, 20, 20);
}

/* Does the job's estimate fit the memory left (lw_graph_options.memory)?
 * A job that needs more than all of it runs alone. The first time a job
 * waits for memory, --wrapper-verbose says so. */
static int memory_free(struct lw_graph *g, struct lw_job *j) {
  uint64_t add = added_memory(g, j);
  if (!g->opt.memory || g->opt.dry_run || g->running == 0 || !add)
    return 1;
  uint64_t self = g->opt.memory_self ? lw_self_resident() : 0;
  if (self + g->mem_held + add <= g->opt.memory)
    return 1;
  if (g->opt.verbose && !j->mem_waited)
    fprintf(g->opt.log,
            "fatlink: %s waits for memory: it may take %llu MiB, fatlink "
            "holds %llu MiB and running jobs %llu, of %llu MiB\n",
            j->what ? j->what : j->kind->name,
            (unsigned long long)(add >> 20),
            (unsigned long long)(self >> 20),
            (unsigned long long)(g->mem_held >> 20),
            (unsigned long long)(g->opt.memory >> 20));
  j->mem_waited = 1;
  return 0;
}

/* May the job start now? A fork waits until no in-process job runs LLVM. */
static int can_start(const struct lw_graph *g, const struct lw_job *j) {
  return g->opt.dry_run || !j->kind->fork_run || g->llvm_running == 0;
}

/* A tool job's argv behind its launcher's words, if it has one. */
static int add_launcher(struct lw_graph *g, struct lw_job *j) {
  const struct lw_strvec *l = j->launcher          ? j->launcher
                              : j->kind->host_side ? NULL
                                                   : g->opt.launcher;
  if (!l || !l->n || !j->argv.n || j->kind->run || j->kind->fork_run)
    return 0;
  struct lw_strvec argv = {0};
  if (lw_strvec_extend_from(&argv, l) ||
      lw_strvec_extend_from(&argv, &j->argv)) {
    lw_strvec_free(&argv);
    return lw_error(&j->diag, LW_ENOMEM, "out of memory");
  }
  lw_strvec_free(&j->argv);
  j->argv = argv;
  return 0;
}

static void start(struct lw_graph *g, struct lw_job *j) {
  int rc = 0;
  if (j->kind->prepare)
    rc = j->kind->prepare(g, j, &j->diag);
  if (!rc)
    rc = add_launcher(g, j);
  if (rc) {
    fail(g, j, rc);
    return;
  }
  j->start_us = now_us(g);
  if (g->opt.verbose && !g->opt.dry_run &&
      (j->footprint || j->footprint_shared)) {
    const struct kind_memory *k = kind_memory(g, j);
    fprintf(g->opt.log,
            "fatlink: %s may take %llu MiB, and %llu MiB that jobs of its "
            "kind share (estimates%s)\n",
            j->what ? j->what : j->kind->name,
            (unsigned long long)(scaled(k, j->footprint) >> 20),
            (unsigned long long)(scaled(k, j->footprint_shared) >> 20),
            k && k->scale > 0 ? ", scaled by what its kind took so far" : "");
  }
  if (g->opt.dry_run || g->opt.verbose)
    describe(g, j);
  if (g->opt.dry_run) { /* a step that runs dry runs here and now */
    finish(g, j, j->runs_dry && j->kind->run ? j->kind->run(j, &j->diag) : 0);
    return;
  }
  j->state = RUNNING;
  g->running++;
  if (g->running > g->peak)
    g->peak = g->running;
  hold_memory(g, j);
  if (j->kind->fork_run) {
    if ((rc = fork_job(g, j)) != 0) {
      stopped(g, j);
      fail(g, j, rc);
    }
  } else if (j->kind->run) {
    struct work *w = calloc(1, sizeof *w);
    if (!w) {
      stopped(g, j);
      fail(g, j, lw_error(&j->diag, LW_ENOMEM, "out of memory"));
      return;
    }
    if (!j->kind->no_llvm)
      g->llvm_running++;
    w->req.data = j;
    j->runner = w;
    sigset_t old;
    lw_tmp_signals_hold(&old);
    uv_queue_work(&g->loop, &w->req, work_cb, after_work_cb);
    lw_tmp_signals_restore(&old);
  } else if (j->argv.n) {
    spawn(g, j);
    if (j->kind->long_running && j->state == RUNNING)
      long_begin(g, j);
  } else {
    stopped(g, j);
    finish(g, j, 0);
  }
}

static void on_token(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  struct lw_graph *g = h->data;
  uv_poll_stop(h);
  g->watching = 0;
  start_ready(g);
}

/* Under make's jobserver, a job beyond the first needs a token: one is
 * taken now, or the wait for one begins. */
static int slot_free(struct lw_graph *g) {
  if (!g->js || g->opt.dry_run ||
      (size_t)g->running < 1 + lw_jobserver_held(g->js))
    return 1;
  if (lw_jobserver_take(g->js))
    return 1;
  if (!g->watching &&
      uv_poll_start(&g->token_watch, UV_READABLE, on_token) == 0)
    g->watching = 1;
  return 0;
}

/* Starts ready jobs in order while slots are free, passing over a fork
 * that must wait; then gives back the tokens no running job needs. */
static void start_ready(struct lw_graph *g) {
  struct lw_job **link = &g->ready;
  while (!g->failed && *link && (g->opt.dry_run || g->running < g->opt.jobs)) {
    struct lw_job *j = *link;
    if (!can_start(g, j)) {
      link = &j->next_ready;
      continue;
    }
    /* Jobs start in their order: one that waits for memory holds back
     * those after it. */
    if (!memory_free(g, j) || !slot_free(g))
      break;
    *link = j->next_ready;
    if (!*link)
      g->ready_tail = link;
    start(g, j);
    link = &g->ready; /* start may have made jobs ready */
  }
  while (g->js && lw_jobserver_held(g->js) > 0 &&
         lw_jobserver_held(g->js) + 1 >
             (size_t)(g->running > 0 ? g->running : 1))
    lw_jobserver_give(g->js);
  if (g->watching && (g->failed || !g->ready)) {
    uv_poll_stop(&g->token_watch); /* nothing waits for a token */
    g->watching = 0;
  }
}

int lw_graph_run(struct lw_graph *g, struct lw_diag *d) {
  start_ready(g);
  if (!g->opt.dry_run)
    uv_run(&g->loop, UV_RUN_DEFAULT);
  /* Every token back, whatever happened. */
  while (g->js && lw_jobserver_held(g->js) > 0)
    lw_jobserver_give(g->js);
  if (g->failed) {
    *d = g->diag;
    return g->diag.code ? g->diag.code : LW_ETOOL;
  }
  for (struct lw_job *j = g->all; j; j = j->next_all)
    if (j->state != DONE)
      LW_BUG("job graph has a job that never became ready (cycle?)");
  return 0;
}

int lw_graph_peak(const struct lw_graph *g) { return g->peak; }

uint64_t lw_graph_memory_peak(const struct lw_graph *g) { return g->mem_peak; }

int lw_graph_write_trace(struct lw_graph *g, const char *path, int grain_us,
                         struct lw_diag *d) {
  /* The start of this process's clock (CLOCK_MONOTONIC, microseconds): the
   * traces of links that ran at once line up by it. */
  json_t *events = json_array();
  json_t *trace = json_pack("{s:{s:I}, s:o}", "otherData", "fatlinkT0us",
                            (json_int_t)(g->t0 / 1000), "traceEvents", events);
  int tid = 0, bad = !trace;
  for (struct lw_job *j = g->all; !bad && j; j = j->next_all, tid++) {
    if (j->state != DONE || j->end_us - j->start_us < grain_us)
      continue;
    json_t *e = json_pack("{s:s, s:s, s:i, s:i, s:I, s:I}", "name",
                          j->kind->name, "ph", "X", "pid", 1, "tid", tid,
                          "ts", (json_int_t)j->start_us, "dur",
                          (json_int_t)(j->end_us - j->start_us));
    /* What memory says about the job: its estimate, whether it waited for
     * memory, and a forked job's peak (its own process). */
    if (e && (j->footprint || j->footprint_shared || j->mem_waited ||
              j->max_rss_kib))
      bad = json_object_set_new(
          e, "args",
          json_pack("{s:I, s:I, s:b, s:I}", "footprintBytes",
                    (json_int_t)j->footprint, "sharedFootprintBytes",
                    (json_int_t)j->footprint_shared, "waitedForMemory",
                    j->mem_waited, "maxRssKiB", (json_int_t)j->max_rss_kib));
    if (bad)
      json_decref(e);
    else
      bad = json_array_append_new(events, e);
  }
  int rc = bad ? lw_error(d, LW_ENOMEM, "out of memory")
       : json_dump_file(trace, path, JSON_COMPACT)
           ? lw_error_path(d, LW_EIO, path, "cannot write trace")
           : 0;
  json_decref(trace);
  return rc;
}

void lw_graph_free(struct lw_graph *g) {
  if (!g)
    return;
  struct lw_job *j = g->all;
  while (j) {
    struct lw_job *next = j->next_all;
    if (j->kind->free_data && j->data)
      j->kind->free_data(j->data);
    lw_strvec_free(&j->argv);
    lw_buf_free(&j->out);
    free(j->what);
    free(j->users);
    free(j);
    j = next;
  }
  if (g->loop_ready) {
    if (g->status_ready)
      uv_close((uv_handle_t *)&g->status, NULL);
    if (g->watch_ready)
      uv_close((uv_handle_t *)&g->token_watch, NULL);
    if (g->peaks_ready)
      uv_close((uv_handle_t *)&g->peaks, NULL);
    uv_run(&g->loop, UV_RUN_DEFAULT);
    uv_loop_close(&g->loop);
  }
  free(g);
}
