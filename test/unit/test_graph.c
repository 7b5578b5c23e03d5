/* test_graph.c - the scheduler with fake job kinds (after ninja's
 * FakeCommandRunner): dependency order, fail fast, the concurrency bound
 * shared by in-process work and tools, the memory bound on jobs' estimated
 * footprints, jobs that add jobs while the graph runs, tool output capture,
 * forked jobs, and dry runs. */
#include "check.h"
#include "run/run.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER;
static char order[64];
static atomic_int running_now, running_max;

struct fake {
  char name;
  int fail;
  int sleep_ms;
  int spawn_children; /* done adds this many jobs */
  struct lw_job *waiter; /* job that must also wait for added ones */
};

static int fake_run(struct lw_job *j, struct lw_diag *d) {
  struct fake *f = j->data;
  int now = ++running_now;
  int m = running_max;
  while (now > m && !atomic_compare_exchange_weak(&running_max, &m, now))
    ;
  if (f->sleep_ms)
    usleep((useconds_t)f->sleep_ms * 1000);
  pthread_mutex_lock(&order_mu);
  size_t n = strlen(order);
  order[n] = f->name;
  order[n + 1] = 0;
  pthread_mutex_unlock(&order_mu);
  --running_now;
  if (f->fail)
    return lw_error(d, LW_ETOOL, "job %c failed", f->name);
  return 0;
}

static const struct lw_job_kind fake_kind;

static int fake_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  struct fake *f = j->data;
  for (int i = 0; i < f->spawn_children; i++) {
    struct fake *c = calloc(1, sizeof *c);
    c->name = (char)('a' + i);
    struct lw_job *nj = lw_graph_add(g, &fake_kind, c, NULL, 0);
    if (!nj)
      return LW_ENOMEM;
    if (f->waiter && lw_graph_add_dep(g, f->waiter, nj))
      return LW_ENOMEM;
  }
  return 0;
}

static const struct lw_job_kind fake_kind = {
    .name = "fake", .run = fake_run, .done = fake_done, .free_data = free};

static struct lw_job *add(struct lw_graph *g, char name, int fail,
                          int sleep_ms, struct lw_job **deps, size_t n) {
  struct fake *f = calloc(1, sizeof *f);
  f->name = name;
  f->fail = fail;
  f->sleep_ms = sleep_ms;
  return lw_graph_add(g, &fake_kind, f, deps, n);
}

static struct lw_graph *graph_timeout(int jobs, int dry, int timeout) {
  struct lw_graph_options o = {.jobs = jobs, .dry_run = dry,
                               .tool_timeout = timeout};
  struct lw_graph *g;
  CHECK(lw_graph_new(&o, &g) == 0);
  order[0] = 0;
  running_max = 0;
  return g;
}

static struct lw_graph *graph(int jobs, int dry) {
  return graph_timeout(jobs, dry, 0);
}

static void test_order(void) {
  struct lw_graph *g = graph(4, 0);
  struct lw_job *a = add(g, 'A', 0, 30, NULL, 0);
  struct lw_job *b = add(g, 'B', 0, 0, &a, 1);
  struct lw_job *deps[2] = {a, b};
  add(g, 'C', 0, 0, deps, 2);
  add(g, 'D', 0, 0, NULL, 0);
  struct lw_diag d = {0};
  CHECK(lw_graph_run(g, &d) == 0);
  CHECK(strlen(order) == 4);
  CHECK(strchr(order, 'A') < strchr(order, 'B'));
  CHECK(strchr(order, 'B') < strchr(order, 'C'));
  CHECK(order[0] == 'D'); /* A sleeps, D runs meanwhile */
  lw_graph_free(g);
}

static void test_fail_fast(void) {
  struct lw_graph *g = graph(1, 0);
  struct lw_job *a = add(g, 'A', 1, 0, NULL, 0);
  add(g, 'B', 0, 0, &a, 1); /* depends on the failure: never runs */
  add(g, 'C', 0, 0, NULL, 0); /* ready but must not start after a failure */
  struct lw_diag d = {0};
  CHECK(lw_graph_run(g, &d) == LW_ETOOL);
  CHECK(strcmp(d.msg, "job A failed") == 0);
  CHECK(strcmp(order, "A") == 0);
  lw_graph_free(g);
}

static void test_bound(void) {
  for (int jobs = 1; jobs <= 3; jobs++) {
    struct lw_graph *g = graph(jobs, 0);
    for (int i = 0; i < 6; i++)
      add(g, (char)('0' + i), 0, 40, NULL, 0);
    struct lw_diag d = {0};
    CHECK(lw_graph_run(g, &d) == 0);
    CHECK(running_max == jobs);
    CHECK(lw_graph_peak(g) == jobs);
    CHECK(strlen(order) == 6);
    lw_graph_free(g);
  }
}

/* Jobs start while their footprints fit the memory (4 job slots): 60 + 60
 * does not fit 100, so one at a time; 130 takes two; a job bigger than all
 * of it still runs, alone; without a bound all four slots fill. */
static void test_memory(void) {
  static const struct {
    uint64_t memory;
    int want;
  } cases[] = {{100, 1}, {130, 2}, {0, 4}};
  for (size_t c = 0; c < LW_ARRAY_SIZE(cases); c++) {
    struct lw_graph_options o = {.jobs = 4, .memory = cases[c].memory};
    struct lw_graph *g;
    CHECK(lw_graph_new(&o, &g) == 0);
    order[0] = 0;
    running_max = 0;
    for (int i = 0; i < 6; i++)
      add(g, (char)('0' + i), 0, 30, NULL, 0)->footprint = 60;
    struct lw_diag d = {0};
    CHECK(lw_graph_run(g, &d) == 0);
    CHECK(strlen(order) == 6);
    CHECK(running_max == cases[c].want);
    CHECK(!cases[c].memory || lw_graph_memory_peak(g) <= cases[c].memory);
    lw_graph_free(g);
  }
  struct lw_graph_options o = {.jobs = 4, .memory = 100};
  struct lw_graph *g;
  CHECK(lw_graph_new(&o, &g) == 0);
  order[0] = 0;
  running_max = 0;
  add(g, 'B', 0, 30, NULL, 0)->footprint = 500;
  add(g, 's', 0, 30, NULL, 0)->footprint = 10;
  struct lw_diag d = {0};
  CHECK(lw_graph_run(g, &d) == 0);
  CHECK(strcmp(order, "Bs") == 0); /* the small one waited its turn */
  CHECK(running_max == 1);
  CHECK(lw_graph_memory_peak(g) == 500);
  lw_graph_free(g);

  /* What the jobs of a kind share counts once: 50 + 10 each fits twice
   * in 75 (60 each would fit once), and is given back with the last. */
  o.memory = 75;
  CHECK(lw_graph_new(&o, &g) == 0);
  order[0] = 0;
  running_max = 0;
  for (int i = 0; i < 4; i++) {
    struct lw_job *j = add(g, (char)('a' + i), 0, 30, NULL, 0);
    j->footprint = 10;
    j->footprint_shared = 50;
  }
  CHECK(lw_graph_run(g, &d) == 0);
  CHECK(strlen(order) == 4);
  CHECK(running_max == 2);
  CHECK(lw_graph_memory_peak(g) == 70);
  lw_graph_free(g);
}

/* The data bound: set, lifted around a tool and set again, and ended for
 * good (an AOT compiler's library about to run in process): a tool's
 * spawn after that leaves it lifted. Sanitizer builds bound nothing. Run
 * last: the process keeps the bound's handler. */
static void test_data_bound(void) {
#ifndef LW_SANITIZE
  struct rlimit start, now;
  CHECK(getrlimit(RLIMIT_DATA, &start) == 0);
  if (start.rlim_cur != RLIM_INFINITY)
    return; /* a limit of the caller's: the bound never goes above it */
  lw_bound_memory(UINT64_C(64) << 30);
  CHECK(getrlimit(RLIMIT_DATA, &now) == 0 &&
        now.rlim_cur == UINT64_C(64) << 30);
  lw_bound_lift();
  CHECK(getrlimit(RLIMIT_DATA, &now) == 0 && now.rlim_cur == RLIM_INFINITY);
  lw_bound_again();
  CHECK(getrlimit(RLIMIT_DATA, &now) == 0 &&
        now.rlim_cur == UINT64_C(64) << 30);
  lw_bound_end();
  CHECK(getrlimit(RLIMIT_DATA, &now) == 0 && now.rlim_cur == RLIM_INFINITY);
  lw_bound_lift();
  lw_bound_again();
  CHECK(getrlimit(RLIMIT_DATA, &now) == 0 && now.rlim_cur == RLIM_INFINITY);
#endif
}

static void test_grow(void) {
  struct lw_graph *g = graph(2, 0);
  struct fake *f = calloc(1, sizeof *f);
  f->name = 'S';
  f->spawn_children = 3;
  struct lw_job *split = lw_graph_add(g, &fake_kind, f, NULL, 0);
  struct lw_job *last = add(g, 'Z', 0, 0, &split, 1);
  f->waiter = last; /* Z must wait for the jobs S adds */
  struct lw_diag d = {0};
  CHECK(lw_graph_run(g, &d) == 0);
  CHECK(strlen(order) == 5);
  CHECK(order[0] == 'S' && order[4] == 'Z');
  CHECK(strchr(order, 'a') && strchr(order, 'b') && strchr(order, 'c'));
  lw_graph_free(g);
}

static int tool_prepare(struct lw_graph *g, struct lw_job *j,
                        struct lw_diag *d) {
  const char *const *argv = j->data;
  for (; *argv; argv++)
    lw_strvec_push(&j->argv, *argv);
  return 0;
}

static const struct lw_job_kind tool_kind = {
    .name = "tool", .prepare = tool_prepare};

static void test_tools(void) {
  static const char *const ok[] = {"/bin/true", NULL};
  static const char *const bad[] = {"/bin/ls", "/nonexistent-fatlink", NULL};
  static const char *const missing[] = {"/nonexistent/tool", NULL};
  struct lw_graph *g = graph(2, 0);
  lw_graph_add(g, &tool_kind, (void *)ok, NULL, 0);
  struct lw_diag d = {0};
  CHECK(lw_graph_run(g, &d) == 0);
  lw_graph_free(g);

  g = graph(2, 0);
  lw_graph_add(g, &tool_kind, (void *)bad, NULL, 0);
  memset(&d, 0, sizeof d);
  CHECK(lw_graph_run(g, &d) == LW_ETOOL);
  CHECK(strstr(d.msg, "'/bin/ls': failed with exit code 2") != NULL);
  CHECK(strstr(d.msg, "No such file") != NULL);
  CHECK(d.exit_status == 0); /* a tool's failure is ours: main exits 1 */
  lw_graph_free(g);

  g = graph(2, 0);
  lw_graph_add(g, &tool_kind, (void *)missing, NULL, 0);
  memset(&d, 0, sizeof d);
  CHECK(lw_graph_run(g, &d) == LW_ETOOL);
  CHECK(strstr(d.msg, "cannot run") != NULL);
  lw_graph_free(g);

  /* One limit for tools and in-process work together. */
  static const char *const slow[] = {"/bin/sleep", "0.2", NULL};
  g = graph(1, 0);
  lw_graph_add(g, &tool_kind, (void *)slow, NULL, 0);
  add(g, 'X', 0, 0, NULL, 0);
  memset(&d, 0, sizeof d);
  CHECK(lw_graph_run(g, &d) == 0);
  CHECK(lw_graph_peak(g) == 1);
  lw_graph_free(g);

  /* --tool-timeout: a hanging tool is stopped and named; a quick one is
   * not disturbed. */
  static const char *const hang[] = {"/bin/sleep", "30", NULL};
  g = graph_timeout(2, 0, 1);
  lw_graph_add(g, &tool_kind, (void *)hang, NULL, 0);
  lw_graph_add(g, &tool_kind, (void *)ok, NULL, 0);
  memset(&d, 0, sizeof d);
  CHECK(lw_graph_run(g, &d) == LW_ETOOL);
  CHECK(strstr(d.msg, "'/bin/sleep' did not finish within 1 s") != NULL);
  lw_graph_free(g);
}

/* Forked jobs: what the child leaves in `out` comes back; a child's error
 * (its code and message) and a child's death are errors naming the job (after fork_failed may
 * reword it); a fork waits while an in-process job that uses LLVM runs. */
struct forked_fake {
  const char *send; /* what the child sends */
  int how;          /* 0: succeed, 1: fail, 2: die */
};

static int forked_fake_run(struct lw_job *j, struct lw_buf *out,
                           struct lw_diag *d) {
  struct forked_fake *f = j->data;
  if (f->how == 2)
    raise(SIGKILL);
  if (f->how == 1)
    return lw_error(d, LW_EINVAL, "child says no");
  return lw_buf_append(out, f->send, strlen(f->send));
}

static char forked_got[64];

static int forked_fake_done(struct lw_graph *g, struct lw_job *j,
                            struct lw_diag *d) {
  (void)g, (void)d;
  snprintf(forked_got, sizeof forked_got, "%.*s", (int)j->out.len,
           (const char *)j->out.data);
  pthread_mutex_lock(&order_mu);
  strcat(order, "F");
  pthread_mutex_unlock(&order_mu);
  return 0;
}

static void forked_fake_failed(struct lw_job *j) {
  free(j->what);
  j->what = strdup("reworded");
}

static const struct lw_job_kind forked_fake_kind = {
    .name = "forked-fake", .done = forked_fake_done,
    .fork_run = forked_fake_run, .fork_failed = forked_fake_failed};

/* Runs one forked job of `f` alone; its error message goes to `msg`. */
static int run_forked(struct forked_fake *f, char *msg, size_t cap) {
  struct lw_graph *g = graph(2, 0);
  lw_graph_add(g, &forked_fake_kind, f, NULL, 0);
  struct lw_diag d = {0};
  int rc = lw_graph_run(g, &d);
  snprintf(msg, cap, "%s", d.msg);
  lw_graph_free(g);
  return rc;
}

static void test_forked(void) {
  char msg[sizeof ((struct lw_diag *)0)->msg];
  struct forked_fake ok = {"hello from the child", 0};
  CHECK(run_forked(&ok, msg, sizeof msg) == 0);
  CHECK(strcmp(forked_got, "hello from the child") == 0);
  struct forked_fake no = {"", 1};
  CHECK(run_forked(&no, msg, sizeof msg) == LW_EINVAL); /* the child's */
  CHECK(strcmp(msg, "reworded: child says no") == 0);
  struct forked_fake die = {"", 2};
  CHECK(run_forked(&die, msg, sizeof msg) == LW_ETOOL);
  CHECK(strcmp(msg, "reworded: its process was killed by signal 9") == 0);

  /* An in-process job (using LLVM, as kinds do by default) that started
   * first holds the fork back until it is done, though a slot is free. */
  struct lw_graph *g = graph(2, 0);
  add(g, 'S', 0, 100, NULL, 0);
  lw_graph_add(g, &forked_fake_kind, &ok, NULL, 0);
  struct lw_diag d = {0};
  CHECK(lw_graph_run(g, &d) == 0);
  CHECK(strcmp(order, "SF") == 0);
  lw_graph_free(g);
}

static void test_dry_run(void) {
  struct lw_graph_options o = {.jobs = 1, .dry_run = 1};
  char *text = NULL;
  size_t len = 0;
  o.log = open_memstream(&text, &len);
  struct lw_graph *g;
  CHECK(lw_graph_new(&o, &g) == 0);
  order[0] = 0;
  static const char *const argv[] = {"/bin/false", "x y", NULL};
  struct lw_job *a = lw_graph_add(g, &tool_kind, (void *)argv, NULL, 0);
  add(g, 'B', 0, 0, &a, 1);
  struct lw_diag d = {0};
  CHECK(lw_graph_run(g, &d) == 0);
  fclose(o.log);
  CHECK(strcmp(text, "/bin/false \"x y\"\nin-process: fake\n") == 0);
  CHECK(order[0] == 0); /* nothing ran */
  free(text);
  lw_graph_free(g);
}

int main(void) {
  test_order();
  test_fail_fast();
  test_memory();
  test_bound();
  test_grow();
  test_tools();
  test_forked();
  test_dry_run();
  test_data_bound();
  return check_report("graph");
}
