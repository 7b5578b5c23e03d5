/* tmp.c - the one owner of every temporary path (after git's tempfile.c).
 *
 * States of a temporary: created (on the list, file exists) -> committed
 * (renamed to its target, off the list) or deleted (unlinked, off the list);
 * kept ones (--save-temps) stay on disk at exit. The list is only changed on
 * the main thread. The first creation installs an atexit handler and handlers
 * for INT, HUP, TERM, QUIT and PIPE, and for crashes; the signal path only
 * unlinks (async signal safe), kills the children we started, restores the
 * previous action and re-raises. An owner pid keeps a forked child from deleting its
 * parent's files. */
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct lw_tmp {
  char *volatile path;
  volatile pid_t owner;
  volatile int keep;
  volatile int dir; /* a directory: removed after what is in it (the list
                       is newest first) */
  volatile int scratch; /* a directory tools write into: what they left in
                           it goes too (one level) */
  struct lw_tmp *volatile next;
};

static struct lw_tmp *volatile tmp_list;
static const char *cfg_output = "a.out";
static int cfg_save, cfg_dry;
static unsigned name_counter;

/* Children to kill on a fatal signal; fixed size so the signal path never
 * allocates. */
enum { MAX_CHILDREN = 1024 };
static volatile pid_t children[MAX_CHILDREN];

static const int fatal_signals[] = {SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE};

/* Removes what is in directory `path`, one level deep, with system calls
 * only (async signal safe). */
static void empty_dir(const char *path) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  char buf[4096] __attribute__((aligned(8)));
  long n;
  while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
    for (long at = 0; at < n;) {
      struct dirent64 *e = (struct dirent64 *)(buf + at);
      at += e->d_reclen;
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
          unlinkat(fd, e->d_name, 0) != 0)
        unlinkat(fd, e->d_name, AT_REMOVEDIR);
    }
  close(fd);
}

static void remove_all(int in_signal) {
  pid_t me = getpid();
  for (struct lw_tmp *t = tmp_list; t; t = t->next) {
    if (t->owner != me || t->keep || !t->path)
      continue;
    if (t->scratch)
      empty_dir(t->path);
    if (t->dir)
      rmdir(t->path);
    else
      unlink(t->path);
    if (!in_signal) {
      free(t->path);
      t->path = NULL;
    }
  }
}

/* The jobserver's tokens go back on a fatal signal (jobserver.c). */
static void (*volatile at_signal)(void *);
static void *volatile at_signal_ctx;

void lw_tmp_at_signal(void (*fn)(void *), void *ctx) {
  at_signal = NULL;
  at_signal_ctx = ctx;
  at_signal = fn;
}

/* The children that were told to stop are waited for (half a second at
 * most, then killed): none outlives this process, not even as a zombie
 * its new parent has yet to reap. */
static void reap_children(void) {
  const struct timespec nap = {0, 5 * 1000 * 1000};
  for (int round = 0; round <= 100; round++) {
    int left = 0;
    for (size_t i = 0; i < MAX_CHILDREN; i++) {
      pid_t c = children[i];
      if (c <= 0)
        continue;
      if (round == 100) {
        kill(-c, SIGKILL);
        kill(c, SIGKILL);
      }
      pid_t r = waitpid(c, NULL, round == 100 ? 0 : WNOHANG);
      if (r == c || (r < 0 && errno == ECHILD))
        children[i] = 0;
      else
        left = 1;
    }
    if (!left)
      return;
    nanosleep(&nap, NULL);
  }
}

/* What a dying process does first: give back what it holds of make's,
 * stop its tools, remove its files. */
static void clean_up_in_signal(void) {
  void (*fn)(void *) = at_signal;
  if (fn)
    fn(at_signal_ctx);
  /* Each tool leads a process group of its own (graph.c): the group goes,
   * with whatever the tool started (and the tool itself, should it not
   * have made its group yet). */
  for (size_t i = 0; i < MAX_CHILDREN; i++)
    if (children[i] > 0) {
      kill(-children[i], SIGTERM);
      kill(children[i], SIGTERM);
    }
  reap_children();
  remove_all(1);
}

static void on_signal(int sig) {
  int saved = errno; /* the interrupted code's, should it go on */
  clean_up_in_signal();
  signal(sig, SIG_DFL);
  errno = saved;
  raise(sig);
}

/* A crash (a bug) must not leave temporaries either. The handler cleans up
 * and puts back the handler it replaced (the default, or a sanitizer's): a
 * fault then happens again on return and is reported as it would have been;
 * a crash signal sent with kill() is raised again. */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static struct sigaction crash_old[LW_ARRAY_SIZE(crash_signals)];

/* What running out of memory is, when LLVM says it did (bound.c's). */
static const char *volatile oom_text;

void lw_tmp_oom_text(const char *text) { oom_text = text; }

static void say(const char *s) {
  ssize_t r = write(lw_errout_fd(), s, strlen(s));
  (void)r;
}

static void on_crash(int sig, siginfo_t *info, void *uctx) {
  (void)uctx;
  int saved = errno;
  /* What LLVM printed before it aborted (errout.c): folded into the line;
   * running out of the memory fatlink allows itself is said as such. */
  char llvm[512];
  size_t said = lw_errout_llvm(llvm, sizeof llvm);
  const char *bound = oom_text;
  /* Inside a library on an input: the input's error, not a crash. */
  const char *doing = lw_doing_now();
  if (doing) {
    static const char *const names[] = {"SIGSEGV", "SIGBUS", "SIGFPE",
                                        "SIGILL", "SIGABRT"};
    const char *name = "a signal";
    for (size_t i = 0; i < LW_ARRAY_SIZE(crash_signals); i++)
      if (crash_signals[i] == sig)
        name = names[i];
    say("fatlink: error: ");
    say(doing);
    if (said && bound && strstr(llvm, "out of memory")) {
      say(": out of memory: ");
      say(bound);
    } else {
      say(": LLVM crashed (");
      say(name);
      say(lw_doing_blames_input() ? ") on this input: it is malformed"
                                  : ")");
      if (said) {
        say(" [");
        say(llvm);
        say("]");
      }
    }
    say("\n");
    clean_up_in_signal();
    _exit(1);
  }
  if (said) {
    say("fatlink: ");
    say(llvm);
    say("\n");
  }
  clean_up_in_signal();
  for (size_t i = 0; i < LW_ARRAY_SIZE(crash_signals); i++)
    if (crash_signals[i] == sig)
      sigaction(sig, &crash_old[i], NULL);
  errno = saved;
  if (sig == SIGABRT || !info || info->si_code <= 0)
    raise(sig);
}

static void on_exit_cleanup(void) { remove_all(0); }

static void install_handlers(void) {
  static int installed;
  if (installed)
    return;
  installed = 1;
  atexit(on_exit_cleanup);
  for (size_t i = 0; i < LW_ARRAY_SIZE(fatal_signals); i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(fatal_signals[i], &sa, NULL);
  }
  for (size_t i = 0; i < LW_ARRAY_SIZE(crash_signals); i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK; /* a stack overflow too */
    sigemptyset(&sa.sa_mask);
    sigaction(crash_signals[i], &sa, &crash_old[i]);
  }
}

void lw_tmp_die(const char *what, const char *reason) {
  const char *doing = lw_doing_now();
  say("fatlink: error: ");
  if (doing) {
    say(doing);
    say(": ");
  }
  say(what);
  say(reason ? reason : "?");
  say("\n");
  clean_up_in_signal();
  _exit(1);
}

void lw_tmp_fatal(const char *reason) { lw_tmp_die("LLVM error: ", reason); }

void lw_tmp_configure(const char *output, int save_temps, int dry_run) {
  install_handlers(); /* a crash before the first temporary too */
  cfg_output = output;
  cfg_save = save_temps;
  cfg_dry = dry_run;
  install_handlers();
}

static int add(char *path, int keep, struct lw_tmp **out, struct lw_diag *d) {
  struct lw_tmp *t = calloc(1, sizeof *t);
  if (!t) {
    free(path);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  t->path = path;
  t->owner = getpid();
  t->keep = keep;
  /* Publish fully built: the signal handler may walk the list any time,
   * and jobs on several threads may add at once (the cache's entries). */
  struct lw_tmp **list = (struct lw_tmp **)&tmp_list;
  struct lw_tmp *head = __atomic_load_n(list, __ATOMIC_RELAXED);
  do
    t->next = head;
  while (!__atomic_compare_exchange_n(list, &head, t, 1, __ATOMIC_RELEASE,
                                      __ATOMIC_RELAXED));
  *out = t;
  return 0;
}

static const char *tmpdir(void) {
  const char *t = getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

/* Creates the file `path` (taking ownership of it): a unique name from the
 * XXXXXX before its last `suffix_len` bytes when `unique`, else the name as
 * it is. A dry run creates nothing. Kept files survive the exit. */
static int create(char *path, int unique, int suffix_len, int keep,
                  struct lw_tmp **out, struct lw_diag *d) {
  if (!path)
    return lw_error(d, LW_ENOMEM, "out of memory");
  if (cfg_dry)
    return add(path, 1, out, d);
  int fd = unique ? mkostemps(path, suffix_len, O_CLOEXEC)
                  : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    int rc = lw_error_path(d, LW_EIO, path, "cannot create: %s",
                           strerror(errno));
    free(path);
    return rc;
  }
  close(fd);
  return add(path, keep, out, d);
}

/* `counted`: the name has the link's counter, as a stage may make several;
 * else it is the one temporary of its name in the link. */
static int create_for(const char *stage, const char *ext, int counted,
                      struct lw_tmp **out, struct lw_diag *d) {
  install_handlers();
  /* Predictable names when kept (next to the output) and in a dry run. */
  unsigned n = name_counter++;
  char num[24] = "";
  if (counted)
    snprintf(num, sizeof num, ".%u", n);
  if (cfg_save)
    return create(lw_xasprintf("%s.%s%s.%s", cfg_output, stage, num, ext), 0,
                  0, 1, out, d);
  if (cfg_dry)
    return create(lw_xasprintf("%s/%s.%s%s.%s", tmpdir(),
                               lw_base_name(cfg_output), stage, num, ext),
                  0, 0, 1, out, d);
  return create(lw_xasprintf("%s/%s.%s-XXXXXX.%s", tmpdir(),
                             lw_base_name(cfg_output), stage, ext),
                1, (int)strlen(ext) + 1, 0, out, d);
}

int lw_tmp_create(const char *stage, const char *ext, struct lw_tmp **out,
                  struct lw_diag *d) {
  return create_for(stage, ext, 1, out, d);
}

int lw_tmp_create_once(const char *stage, const char *ext, struct lw_tmp **out,
                       struct lw_diag *d) {
  return create_for(stage, ext, 0, out, d);
}

int lw_tmp_create_dir(const char *stage, struct lw_tmp **out,
                      struct lw_diag *d) {
  install_handlers();
  unsigned n = name_counter++;
  char *path = cfg_save ? lw_xasprintf("%s.%s.%u.d", cfg_output, stage, n)
               : cfg_dry
                   ? lw_xasprintf("%s/%s.%s.%u.d", tmpdir(),
                                  lw_base_name(cfg_output), stage, n)
                   : lw_xasprintf("%s/%s.%s-XXXXXX", tmpdir(),
                                  lw_base_name(cfg_output), stage);
  if (!path)
    return lw_error(d, LW_ENOMEM, "out of memory");
  if (!cfg_dry && (cfg_save ? mkdir(path, 0755) != 0 && errno != EEXIST
                            : !mkdtemp(path))) {
    int rc = lw_error_path(d, LW_EIO, path, "cannot create: %s",
                           strerror(errno));
    free(path);
    return rc;
  }
  int rc = add(path, cfg_save || cfg_dry, out, d);
  if (!rc)
    (*out)->dir = 1;
  return rc;
}

int lw_tmp_create_scratch(const char *stage, struct lw_tmp **out,
                          struct lw_diag *d) {
  int rc = lw_tmp_create_dir(stage, out, d);
  if (!rc)
    (*out)->scratch = 1;
  return rc;
}

int lw_tmp_create_in(const struct lw_tmp *dir, const char *name,
                     struct lw_tmp **out, struct lw_diag *d) {
  return create(lw_xasprintf("%s/%s", dir->path, name), 0, 0,
                cfg_save || cfg_dry, out, d);
}

/* The process's umask, read rather than set (umask() would change it for
 * every thread); 022 where /proc does not say. */
static mode_t current_umask(void) {
  unsigned mask = 022;
  FILE *f = fopen("/proc/self/status", "re");
  char line[128];
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Umask: %o", &mask) == 1)
      break;
  if (f)
    fclose(f);
  return (mode_t)mask;
}

int lw_tmp_create_beside(const char *target, struct lw_tmp **out,
                         struct lw_diag *d) {
  install_handlers();
  const char *slash = strrchr(target, '/');
  char *path = slash ? lw_xasprintf("%.*s/.%s.fatlink-XXXXXX",
                                    (int)(slash - target), target, slash + 1)
                     : lw_xasprintf(".%s.fatlink-XXXXXX", target);
  int rc = create(path, 1, 0, 0, out, d);
  if (rc || cfg_dry)
    return rc;
  /* The temporary (mkstemp's 0600) becomes the output: it gets the mode
   * the output would get written in place, as GNU ld writes it - a new
   * file's, or an existing empty file's own (ld truncates those instead
   * of replacing them); ld then adds the execute bits the umask allows. */
  struct stat st;
  mode_t mode = 0666 & ~current_umask();
  if (stat(target, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
    mode = st.st_mode & 07777;
  if (chmod(lw_tmp_path(*out), mode) != 0)
    return lw_error_path(d, LW_EIO, lw_tmp_path(*out),
                         "cannot set the mode: %s", strerror(errno));
  return 0;
}

const char *lw_tmp_path(const struct lw_tmp *t) { return t->path; }

int lw_tmp_commit(struct lw_tmp **tp, const char *target, struct lw_diag *d) {
  struct lw_tmp *t = *tp;
  *tp = NULL;
  if (rename(t->path, target) != 0) {
    int rc = lw_error_path(d, LW_EIO, target, "cannot write output: %s",
                           strerror(errno));
    unlink(t->path);
    return rc;
  }
  /* Renamed: nothing left to remove. The node stays on the list (the signal
   * handler may be reading it) but no longer names a file. */
  t->keep = 1;
  return 0;
}

void lw_tmp_cleanup(void) { remove_all(0); }

void lw_tmp_signals_hold(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < LW_ARRAY_SIZE(fatal_signals); i++)
    sigaddset(&set, fatal_signals[i]);
  pthread_sigmask(SIG_BLOCK, &set, old);
}

void lw_tmp_signals_restore(const sigset_t *old) {
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

void lw_tmp_in_child(void) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(fatal_signals); i++)
    signal(fatal_signals[i], SIG_DFL);
  for (size_t i = 0; i < LW_ARRAY_SIZE(crash_signals); i++)
    sigaction(crash_signals[i], &crash_old[i], NULL);
  for (size_t i = 0; i < MAX_CHILDREN; i++)
    children[i] = 0;
  at_signal = NULL; /* the parent's tokens are the parent's to give back */
}

void lw_tmp_track_child(pid_t pid) {
  for (size_t i = 0; i < MAX_CHILDREN; i++)
    if (children[i] == 0) {
      children[i] = pid;
      return;
    }
}

void lw_tmp_untrack_child(pid_t pid) {
  for (size_t i = 0; i < MAX_CHILDREN; i++)
    if (children[i] == pid) {
      children[i] = 0;
      return;
    }
}
