/* internal.h - private to wrapper/: options, temporary files, the job graph,
 * the plan that fills it and the host link. One section per file. */
#ifndef LW_INTERNAL_H
#define LW_INTERNAL_H

#include "lw_base.h"

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- options.c ---------------------------------------------------------- */

/* The host a link is for when nothing says otherwise. */
#define LW_DEFAULT_HOST_TRIPLE "x86_64-pc-linux-gnu"

struct lw_options {
  const char *host_triple;
  const char *linker_path;
  const char *output; /* -o value, or "a.out" */
  int jobs;           /* --wrapper-jobs, default: online cores */
  int sycl_jobs;      /* --parallel-link-sycl=, 0: as many as jobs */
  int dry_run, save_temps, verbose, print_wrapped, time_trace;
  int relocatable;         /* -r: the output is an object for a later link */
  int opt_level;           /* --opt-level=O<n>, default 2 */
  int split_mode;          /* enum dl_split_mode, default auto */
  int split_given;         /* by an option (else FPGA targets do not split) */
  enum { LW_FPGA_NONE, LW_FPGA_EARLY, LW_FPGA_IMAGE } fpga_link;
  const char *dump_dir;    /* --sycl-dump-device-code= */
  struct lw_strvec device_libs; /* --sycl-device-libraries=, in order */
  const char *device_lib_dir;   /* --sycl-device-library-location= */
  const char *llvm_spirv;       /* --spirv-translator=llvm-spirv[=path] */
  int sycl_emit_alone;          /* --sycl-emit-isolation=module */
  const char *spirv_ext;        /* --spirv-extensions=, the last one */
  struct lw_strvec llvm_spirv_opts; /* --llvm-spirv-options=, split */
  struct lw_strvec sycl_targets;    /* --sycl-targets=, in order */
  int targets_follow;               /* parsing: after --sycl-targets= */
  const char *device_config;        /* --device-config-file= */
  struct lw_strvec gpu_tool_args;   /* --gpu-tool-arg= words, in order */
  struct lw_strvec cpu_tool_args;   /* --cpu-tool-arg= words, in order */
  struct lw_strvec fpga_tool_args;  /* --fpga-tool-arg= words, in order */
  int tool_timeout;                 /* --tool-timeout= seconds, 0: none */
  int aot_tools;                    /* --aot-in-process=off */
  const char *time_trace_file;      /* --wrapper-time-trace=, else
                                       <output>.time-trace */
  int time_trace_grain;             /* microseconds, default 500 */
  const char *cuda_path;            /* --cuda-path= */
  int compress, compression_level;  /* --compress, --compression-level= */
  int compression_level_given;
  const char *sysroot;              /* --sysroot= (also the linker's) */
  struct lw_strvec should_extract;  /* --should-extract= architectures */
  int emit_fatbin_only;             /* --emit-fatbin-only */
  int embed_bitcode;                /* --embed-bitcode */
  /* post-link: -support-dynamic-linking, -emit-imported-symbols,
   * -emit-exported-symbols */
  int sycl_dynamic_linking, sycl_emit_imported, sycl_emit_exported;
  int sycl_allow_undefined; /* --sycl-allow-undefined */
  int sycl_allow_size_mismatch; /* --sycl-allow-size-mismatch */
  int sycl_keep_externals; /* --no-sycl-remove-unused-external-funcs */
  int sycl_lower_esimd;    /* post-link -lower-esimd */
  const char *sycl_compile_opts, *sycl_link_opts; /* the images' options */
  unsigned sycl_spec_const;     /* -spec-const=: DL_SPEC_NATIVE or
                                   DL_SPEC_EMULATION; 0: per target */
  int sycl_default_spec_images; /* -generate-device-image-default-spec-consts */
  /* --tool-launcher= and the back ends' own (--gpu-, --cpu-,
   * --fpga-tool-launcher=): words put before a tool's argv */
  struct lw_strvec tool_launcher, gpu_launcher, cpu_launcher, fpga_launcher;
  const char *cache_dir;     /* --cache-dir=, FATLINK_CACHE_DIR, or NULL */
  uint64_t cache_size;       /* --cache-size= */
  struct lw_strvec key_args; /* the options that decide the device side's
                                bytes, as given, for the cache's keys */
  int help, version;
  int long_version; /* --version itself (not -v) */
  const char *argv0; /* the name fatlink runs under */
  int as_linker;    /* no --linker-path: fatlink is the host linker */
  struct lw_strvec linker_args; /* for the host linker, in order */
  struct lw_strvec llvm_opts;   /* -mllvm and --offload-opt values */
  struct lw_strvec device_linker_args;   /* "[triple=]arg" */
  struct lw_strvec device_compiler_args; /* "[triple=]arg" */
  struct lw_strvec storage; /* copies the const char* fields point to */
};

/* Parses the wrapper's argv (response files expanded, wrapper options taken,
 * everything else kept for the host linker in order). */
int lw_options_parse(int argc, char **argv, struct lw_options *o,
                     struct lw_diag *d);
void lw_options_free(struct lw_options *o);
/* Prints every option with one line of help. */
void lw_options_help(FILE *out);

/* A --cache-size= value: bytes, or K, M, G, T of them (binary). */
int lw_parse_size(const char *v, uint64_t *out, struct lw_diag *d);

struct ex_set;

/* ---- plan_aot.c (for the planners and postlink.c) ---------------------- */

struct dl_props;
struct aot_reqs;
/* A module's device requirements, for aot_filter, from its property sets
 * (`aspects` and `fixed` give room for `max` values each). */
void lw_aot_reqs(const struct dl_props *props, struct aot_reqs *r,
                 uint32_t *aspects, uint32_t *fixed, size_t max);

/* ---- postlink.c --------------------------------------------------------- */

/* fatlink as DPC++'s sycl-post-link: its command line (argv[0] is the
 * tool's name), its file table and files. Returns the exit status. */
int lw_post_link_main(int argc, char **argv);
/* Does fatlink run under the name sycl-post-link? */
int lw_post_link_named(const char *argv0);

/* ---- as_linker.c -------------------------------------------------------- */

/* An error when this fatlink runs under a host linker another fatlink
 * started (FATLINK_HOST_LINK in the environment): a linker loop. */
int lw_as_linker_check_loop(const char *argv0, struct lw_diag *d);
/* Without --linker-path: finds the real linker (FATLINK_LINKER, the name
 * fatlink runs under, else ld, on PATH; never fatlink itself) and the host
 * triple (-m, the inputs, else the build's). Checks --linker-path is not
 * fatlink itself otherwise. */
int lw_as_linker_setup(struct lw_options *o, struct lw_diag *d);
/* Does fatlink run under a linker's name (ld, ld.<flavour>)? */
int lw_as_linker_named(const char *argv0);
/* "FATLINK_HOST_LINK=<argv0> -> <linker>", for the host linker's
 * environment (malloc'd), or NULL. */
char *lw_as_linker_chain_env(const char *argv0, const char *linker);
/* Adds the OpenMP runtime libraries to the link when `set` holds OpenMP
 * device code (as clang -fopenmp does). LW_ENOMEM on failure. */
int lw_as_linker_runtime(struct lw_options *o, const struct ex_set *set);
/* Does `set` hold device code this link must build and register? */
int lw_as_linker_needs_work(const struct ex_set *set);
/* Does the real linker's command line fit execve? (Else the link goes
 * through the job graph, which passes it as a response file.) */
int lw_as_linker_can_exec(const struct lw_options *o);
/* Replaces this process with the real linker on the user's arguments;
 * returns only on failure. */
int lw_as_linker_exec(const struct lw_options *o, struct lw_diag *d);

/* ---- respfile.c --------------------------------------------------------- */

/* Appends argv with every @file expanded (nested, GNU quoting) to `out`. */
int lw_expand_response_files(int argc, char **argv, struct lw_strvec *out,
                             struct lw_diag *d);

/* Appends the words of `s` (response-file quoting; `what` names it in an
 * error) to `out`. */
int lw_split_args(const char *what, const char *s, struct lw_strvec *out,
                  struct lw_diag *d);

/* Does `argv` fit what execve takes (with our environment)? */
int lw_args_fit(const struct lw_strvec *argv);
/* Appends args[from..] to `out` as a response file quotes them (GNU rules:
 * a backslash before blanks, quotes and backslashes), one a line. */
int lw_response_file_text(const struct lw_strvec *args, size_t from,
                          struct lw_buf *out);

/* ---- inputs.c ----------------------------------------------------------- */

struct ex_link_input;

/* The link line as the host linker reads it, in order: positional inputs,
 * the libraries -l finds in the -L directories, group markers and whether
 * --whole-archive is in effect. A missing positional input is an error. The
 * items' paths point into `paths`. */
struct lw_inputs {
  struct ex_link_input *v;
  size_t n, cap;
  struct lw_strvec paths;
};
int lw_collect_inputs(const struct lw_strvec *linker_args,
                      struct lw_inputs *inputs, struct lw_diag *d);
void lw_inputs_free(struct lw_inputs *inputs);

/* Where the output is named among the linker arguments: the last of
 * "-o F", "-oF", "--output F", "--output=F". `index` is -1 when none. */
struct lw_output_arg {
  int index;         /* first argument of the spelling */
  int count;         /* 1 (joined) or 2 (separate) */
  const char *value; /* the file name */
};
struct lw_output_arg lw_find_output_arg(const struct lw_strvec *linker_args);
/* Finds -l`name` in `dirs` as ld does (lib<name>.so before lib<name>.a
 * unless `statik`; ":<file>" names the file); a malloc'd path or NULL. */
char *lw_find_library(const struct lw_strvec *dirs, const char *name,
                      int statik);

/* Does the ld option `a` take its value as the next argument? */
int lw_takes_separate_value(const char *a);
/* The output spelling starting at args[i], if any (count 0 if none). */
struct lw_output_arg lw_output_arg_at(const struct lw_strvec *args, size_t i);

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

/* ---- hash.c: BLAKE2b, 32-byte digests ------------------------------------ */

enum { LW_HASH_SIZE = 32 };

struct lw_hash {
  uint64_t h[8], t[2];
  unsigned char buf[128];
  size_t n;
};

void lw_hash_init(struct lw_hash *s);
void lw_hash_update(struct lw_hash *s, const void *p, size_t n);
/* A string with its length first (NULL differs from ""), a number as 8
 * little-endian bytes: so that consecutive fields never run together. */
void lw_hash_str(struct lw_hash *s, const char *str);
void lw_hash_u64(struct lw_hash *s, uint64_t v);
void lw_hash_final(struct lw_hash *s, unsigned char out[LW_HASH_SIZE]);
void lw_hash_hex(const unsigned char h[LW_HASH_SIZE],
                 char out[2 * LW_HASH_SIZE + 1]);

/* ---- cache.c: device results by content ---------------------------------- */

struct lw_cache;

/* Opens (creating) the cache in `dir`, evicted down to `limit` bytes when
 * closed (0: never). One that cannot be used is a warning and *out NULL:
 * every call below takes a NULL cache as always missing. `verbose` says
 * hit or miss. LW_ENOMEM or 0. */
int lw_cache_open(const char *dir, uint64_t limit, int verbose,
                  struct lw_cache **out);
/* 1 with the entry's payload in `out` (owned by the caller), 0 on a miss;
 * `what` names the step for --wrapper-verbose. Thread-safe, as is put. */
int lw_cache_get(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                 const char *what, struct lw_buf *out);
/* Stores an entry; failing to is a warning (once), never an error. */
void lw_cache_put(struct lw_cache *c, const unsigned char key[LW_HASH_SIZE],
                  const void *data, size_t n);
void lw_cache_close(struct lw_cache *c);

struct lw_cache_stats {
  size_t entries;
  uint64_t bytes;
};
/* What the cache in `dir` holds (for fatpack cache). */
int lw_cache_stats(const char *dir, struct lw_cache_stats *st);
/* Removes the least recently used entries until at most 90% of `limit`
 * bytes are left (0: all); *removed counts them. */
int lw_cache_prune(const char *dir, uint64_t limit, size_t *removed);

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
  const struct lw_strvec *launcher; /* words before the tool's argv, set by
                              prepare: a back end's launcher; NULL: the
                              graph's (lw_graph_options) */
  const char *hint;        /* added to a tool's failure message */
  const char *tmpdir;      /* the tool's TMPDIR (a scratch temporary), or
                              NULL: ours */
  const char *env_set;     /* "NAME=value" set in the tool's environment,
                              or NULL */
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

void lw_graph_free(struct lw_graph *g);

/* ---- plan.c ------------------------------------------------------------- */

struct ex_set;
struct lw_plan;

/* What an offload kind brings to the plan (plan.h): one per kind. */
struct lw_planner;
extern const struct lw_planner lw_fpga_planner, lw_fpga_desc_planner,
    lw_sycl_planner, lw_omp_planner, lw_cuda_planner, lw_hip_planner;

/* Adds the jobs that turn the extracted images into device images (each
 * offload kind's by its planner), wrap them into a registration object and
 * run the host link into a temporary beside the output. */
int lw_plan_build(struct lw_graph *g, const struct lw_options *o,
                  const struct ex_set *images,
                  const struct lw_planner *const *planners, size_t nplanners,
                  struct lw_plan **out, struct lw_diag *d);

/* After a successful run: renames the linked temporary to the output. */
int lw_plan_commit(struct lw_plan *p, struct lw_diag *d);

void lw_plan_free(struct lw_plan *p);

/* ---- hostlink.c --------------------------------------------------------- */

/* The host linker's argv: linker path, then the user's arguments in order
 * with the output replaced by `out_path`, the wrapper object (if any) first
 * among the inputs. */
int lw_host_link_argv(const struct lw_options *o, const char *out_path,
                      const char *wrapper_obj, struct lw_strvec *argv);

#endif
