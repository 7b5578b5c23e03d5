/* run.h - private to wrapper/: the runner. One registry of temporary files
 * (tmp.c), the job graph and its scheduler (graph.c), GNU make's jobserver
 * (jobserver.c), work in a forked child (fresh.c), the memory the process
 * allows itself (bound.c) and what LLVM writes to standard error
 * (errout.c). The runner knows jobs by their kinds only: it includes no
 * planner or stage header. */
#ifndef LW_RUN_H
#define LW_RUN_H

#include "lw_base.h"

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- tmp.c -------------------------------------------------------------- */

/* One registry owns every temporary path of the process. Files are removed
 * at exit and on INT/HUP/TERM/QUIT/PIPE unless kept by --save-temps; the
 * signal path also kills registered children. */
struct lw_tmp;

/* Sets where temporaries go: with save_temps they are kept and named
 * `<output>.<stage>.<ext>` next to the output, else random names in $TMPDIR.
 * With dry_run only names are made, no file. */
void lw_tmp_configure(const char *output, int save_temps, int dry_run);

/* Creates an empty temporary for `stage` with extension `ext`; its path is
 * lw_tmp_path(). */
int lw_tmp_create(const char *stage, const char *ext, struct lw_tmp **out,
                  struct lw_diag *d);
/* The same for a temporary the link makes once: kept, it is named
 * `<output>.<stage>.<ext>` with no counter (--save-temps' names that
 * upstream's tests look for, e.g. OUT.openmp.image.wrapper.o). */
int lw_tmp_create_once(const char *stage, const char *ext, struct lw_tmp **out,
                       struct lw_diag *d);

/* Creates a temporary directory for `stage`, and in it a file of a given
 * name (removed before the directory). */
int lw_tmp_create_dir(const char *stage, struct lw_tmp **out,
                      struct lw_diag *d);
int lw_tmp_create_in(const struct lw_tmp *dir, const char *name,
                     struct lw_tmp **out, struct lw_diag *d);
/* A temporary directory for tools to write their own temporaries into
 * (a job's `tmpdir`): whatever they leave there goes with it. */
int lw_tmp_create_scratch(const char *stage, struct lw_tmp **out,
                          struct lw_diag *d);

/* Creates a temporary in the directory of `target` for an atomic write that
 * lw_tmp_commit renames over `target`. */
int lw_tmp_create_beside(const char *target, struct lw_tmp **out,
                         struct lw_diag *d);

const char *lw_tmp_path(const struct lw_tmp *t);

/* Renames the temporary to `target` and forgets it; *t becomes NULL. */
int lw_tmp_commit(struct lw_tmp **t, const char *target, struct lw_diag *d);

/* Removes every temporary not kept (also run at exit). */
void lw_tmp_cleanup(void);

/* In a child forked to work for us: its signals act as by default (a
 * crash as before fatlink's handler), its parent's files and children are
 * not its own. */
void lw_tmp_in_child(void);

/* LLVM's fatal-error handler (main installs it): one line naming what the
 * thread was doing (lw_doing), temporaries removed, exit status 1. */
void lw_tmp_fatal(const char *reason) __attribute__((noreturn));
/* The same for any error that leaves no way back (async-signal-safe):
 * "<doing>: <what><reason>". */
void lw_tmp_die(const char *what, const char *reason)
    __attribute__((noreturn));
/* What a crash reports after LLVM said it ran out of memory (errout.c):
 * "out of memory: <text>" (bound.c's bound). */
void lw_tmp_oom_text(const char *text);

/* A function a fatal signal calls first (async-signal-safe: the
 * jobserver's tokens go back); NULL: none. */
void lw_tmp_at_signal(void (*fn)(void *), void *ctx);

/* Tracks a running child so a fatal signal kills it. */
void lw_tmp_track_child(pid_t pid);
void lw_tmp_untrack_child(pid_t pid);
/* Holds back the fatal signals (INT, HUP, TERM, QUIT, PIPE) on this thread
 * until lw_tmp_signals_restore: around a spawn, so the child is tracked
 * before a signal can be handled, and around starting pool work, so the
 * pool's threads are born with them blocked and only this thread takes
 * them. */
void lw_tmp_signals_hold(sigset_t *old);
void lw_tmp_signals_restore(const sigset_t *old);

/* ---- bound.c: the memory fatlink allows itself --------------------------- */

/* Bounds this process's data (heap and private writable mappings) to
 * `bytes`, and what it forks after; never above the bound it already had
 * (0: none). Running out is then one line naming what the thread was doing.
 * A no-op in sanitizer builds. */
void lw_bound_memory(uint64_t bytes);
/* Lifts the bound back to the limit fatlink started with, for a tool about
 * to be spawned (or exec'd in fatlink's place), until lw_bound_again. */
void lw_bound_lift(void);
void lw_bound_again(void);
/* Ends the bound for good: a compiler about to run in this process (an
 * AOT back end's library) is a tool, not fatlink's to bound. */
void lw_bound_end(void);
/* The memory limit of fatlink's cgroup (v2 memory.max), or 0 when none. */
uint64_t lw_cgroup_limit(void);
/* The "<key> <n> kB" line of a /proc file (/proc/meminfo, a process's
 * status), in KiB, or 0. */
uint64_t lw_proc_kib(const char *path, const char *key);
/* The memory the kernel says is available (MemAvailable), or 0. */
uint64_t lw_mem_available(void);
/* This process's resident memory now, or 0. */
uint64_t lw_self_resident(void);


/* ---- errout.c: what LLVM writes to standard error --------------------- */

/* From now on file descriptor 2 is a pipe a thread drains: LLVM's error
 * lines are kept (lw_errout_llvm), every other line passes on; `stderr`
 * and lw_errout_fd are the real standard error. -1 when it cannot be (all
 * stays as it was). A no-op in sanitizer builds. */
int lw_errout_capture(void);
/* The real standard error's descriptor (2 when not captured). */
int lw_errout_fd(void);
/* LLVM's error lines so far, "; " between them, NUL-terminated in `out`;
 * waits for the drain thread about 50 ms at most (async-signal-safe). */
size_t lw_errout_llvm(char *out, size_t cap);
/* Descriptor 2 is the real standard error again, once every line still in
 * the pipe has passed on. */
void lw_errout_restore(void);

/* ---- jobserver.c: a client of GNU make's jobserver ---------------------- */

struct lw_jobserver;

/* The jobserver MAKEFLAGS names, opened; NULL when there is none or it
 * cannot be used (`verbose` says why). */
struct lw_jobserver *lw_jobserver_open(int verbose);
/* The descriptor to watch for a token to read. */
int lw_jobserver_fd(const struct lw_jobserver *js);
/* Takes a token if one is there now: 1, else 0. */
int lw_jobserver_take(struct lw_jobserver *js);
/* Gives one held token back. */
void lw_jobserver_give(struct lw_jobserver *js);
size_t lw_jobserver_held(const struct lw_jobserver *js);
/* Gives every held token back and closes. */
void lw_jobserver_close(struct lw_jobserver *js);

/* ---- fresh.c: work in a child forked for it alone --------------------- */

/* Runs fn(ctx, out, d) in a child process forked now from this
 * (single-threaded) process, which exits after it and dies with it. 0 and
 * the child's output in `out`; or the child's error code with its message
 * in `d` and in `out` what it made before failing; LW_ETOOL when it was
 * killed or died without a word. */
int lw_fresh_call(int (*fn)(void *ctx, struct lw_buf *out, struct lw_diag *d),
                  void *ctx, struct lw_buf *out, struct lw_diag *d);
/* In a forked child: sends its result `rc` on `fd` (its output; or its
 * error line, a NUL and its output) and exits with -rc. */
void lw_child_reply(int fd, int rc, const struct lw_buf *out,
                    const struct lw_diag *d) __attribute__((noreturn));
/* In the parent, once the child's exit `status` is known and `out` holds
 * all it sent: 0, or its error (message in `d`, `out` left with what it
 * made). */
int lw_child_result(int status, struct lw_buf *out, struct lw_diag *d);

/* ---- graph.c ------------------------------------------------------------ */

struct lw_graph;
struct lw_job;

/* What a kind of job does. A job runs in process (`run`, on the libuv
 * pool; it may touch only its own job), in a forked child of the loop
 * thread (`fork_run`: what it leaves in `out` becomes the job's `out`), or
 * as a tool (`argv` filled by `prepare`). `prepare` and `done` run on the
 * loop thread and may add jobs. A fork happens only while no in-process job
 * runs LLVM (its locks must be free in the child): kinds whose `run` does
 * not use fatlink's LLVM say so with `no_llvm`. */
struct lw_job_kind {
  const char *name;
  int (*prepare)(struct lw_graph *g, struct lw_job *j, struct lw_diag *d);
  int (*run)(struct lw_job *j, struct lw_diag *d);
  int (*done)(struct lw_graph *g, struct lw_job *j, struct lw_diag *d);
  void (*free_data)(void *data);
  int (*fork_run)(struct lw_job *j, struct lw_buf *out, struct lw_diag *d);
  /* The forked child failed: may reword `what` before the error names it. */
  void (*fork_failed)(struct lw_job *j);
  int no_llvm;
  /* A tool that may run for hours (aoc): its start and end are told on
   * stderr, or, on a terminal, a status line shows how the link goes. */
  int long_running;
  /* The host link's own tools: no --tool-launcher before them. */
  int host_side;
};

struct lw_job {
  const struct lw_job_kind *kind;
  void *data;              /* the kind's payload, freed by free_data */
  char *what;              /* one-line description of an in-process step */
  struct lw_strvec argv;   /* set by prepare for a tool job */
  int inherit_stdio;       /* tool writes straight to our stdout/stderr */
  int show_output;         /* a tool's output is shown when it succeeds too
                              (a device link's warnings, its -v), as
                              upstream's tools print theirs */
  int runs_dry;            /* an in-process step that runs in a dry run too
                              (what it prints is the point), set by prepare */
  const struct lw_strvec *launcher; /* words before the tool's argv, set by
                              prepare: a back end's launcher; NULL: the
                              graph's (lw_graph_options) */
  const char *hint;        /* added to a tool's failure message */
  const char *tmpdir;      /* the tool's TMPDIR (a scratch temporary), or
                              NULL: ours */
  const char *env_set;     /* "NAME=value" set in the tool's environment,
                              or NULL */
  uint64_t footprint;      /* the memory it may take while it runs, in
                              bytes, as its adder estimates it (0: little):
                              what lw_graph_options.memory counts */
  uint64_t footprint_shared; /* what every running job of its kind shares
                              (a tool's libraries, mapped once): counted
                              once while any of them runs */
  int mem_waited;          /* it waited for memory (said once) */
  uint64_t mem_charged;    /* what it holds of the budget while it runs */
  uint64_t max_rss_kib;    /* its peak: a forked job's (its own process's),
                              or a tool's with an estimate (sampled) */
  int exit_status;         /* tool's status (128+sig for a signal) */
  struct lw_buf out;       /* captured stdout+stderr of a tool; what a
                              forked child sent */
  /* scheduler state */
  struct lw_job **users;
  size_t nusers, capusers;
  size_t nblock; /* inputs not yet finished */
  int state;
  double start_us, end_us;
  struct lw_graph *graph;
  struct lw_job *next_ready;
  struct lw_job *next_all;
  int long_started; /* a long_running job counted as running */
  void *runner; /* uv request or process */
  struct lw_diag diag;
};

struct lw_graph_options {
  int jobs;
  int dry_run;
  int verbose;
  int tool_timeout; /* seconds a tool may run, 0: no limit */
  FILE *log; /* where dry-run/verbose lines go */
  const struct lw_strvec *launcher; /* --tool-launcher: before every tool
                                       but the host side's, or NULL */
  struct lw_jobserver *jobserver;   /* make's, or NULL: a job beyond the
                                       first needs one of its tokens */
  uint64_t memory; /* bytes the running jobs' footprints may add up to
                      (0: no limit); jobs start in order while the next
                      fits, and one that needs more than all runs alone */
  int memory_self; /* the process's own resident memory counts too (its
                      in-process jobs' twice: a margin) */
  unsigned delay_seed; /* tests (FATLINK_TEST_JOB_DELAYS): in-process jobs
                          sleep 0-20 ms first, seeded, so that they finish
                          in another order; 0: never */
};

/* Creates an empty graph. */
int lw_graph_new(const struct lw_graph_options *opt, struct lw_graph **out);

/* Adds a job of `kind` depending on `deps`; the graph owns it. Allowed while
 * the graph runs (from prepare/done). */
struct lw_job *lw_graph_add(struct lw_graph *g, const struct lw_job_kind *kind,
                            void *data, struct lw_job *const *deps,
                            size_t ndeps);

/* Makes `user` (not started yet) also wait for `dep`. */
int lw_graph_add_dep(struct lw_graph *g, struct lw_job *user,
                     struct lw_job *dep);

/* Runs until every job finished or one failed (fail fast: nothing new starts,
 * running jobs are reaped). Returns 0 or the first error, text in `d`. */
int lw_graph_run(struct lw_graph *g, struct lw_diag *d);

/* Writes a Chrome trace (JSON) of the finished jobs that took at least
 * `grain_us` microseconds. */
int lw_graph_write_trace(struct lw_graph *g, const char *path, int grain_us,
                         struct lw_diag *d);

/* Highest number of jobs that ran at once (for tests). */
int lw_graph_peak(const struct lw_graph *g);
/* The most their footprints added up to at once (for tests). */
uint64_t lw_graph_memory_peak(const struct lw_graph *g);

void lw_graph_free(struct lw_graph *g);

#endif
