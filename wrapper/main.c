/* main.c - fatlink's pipeline: options -> scan inputs -> plan the job graph
 * -> run it -> commit the output. Every step returns an error value; only
 * main prints it (one line) and exits. Invoked as clang-linker-wrapper it is
 * the same program: clang -B<dir> finds it under that name. */
#include "internal.h"
#include "fatpack/postlink.h"
#include "run/run.h"

#include "dl.h"
#include "ex.h"

#include <llvm-c/ErrorHandling.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LW_VERSION
#define LW_VERSION "0.1.0"
#endif

/* The memory the link allows itself from here on (run/bound.c): what
 * reading, linking and compiling device code can need grows with the
 * inputs, so 1 GiB and 64 times their size, at most the cgroup's limit. A
 * malformed input that claims more fails at once instead of taking the
 * machine. */
static void bound_memory(const struct lw_inputs *in, int verbose) {
  uint64_t bytes = 0;
  struct stat st;
  for (size_t i = 0; i < in->n; i++)
    if (in->v[i].item == EX_LINK_FILE && stat(in->v[i].path, &st) == 0)
      bytes += (uint64_t)st.st_size;
  uint64_t bound = (UINT64_C(1) << 30) + 64 * bytes, cg = lw_cgroup_limit();
  if (cg && cg < bound)
    bound = cg;
  if (verbose)
    fprintf(stderr,
            "fatlink: memory bound %llu MiB (inputs %llu MiB, cgroup limit "
            "%llu MiB)\n",
            (unsigned long long)(bound >> 20),
            (unsigned long long)(bytes >> 20), (unsigned long long)(cg >> 20));
  lw_bound_memory(bound);
}

/* The memory the link's jobs may take at once: as given, else the
 * cgroup's limit or what the kernel says is available, whichever is less
 * (0: no budget). */
static uint64_t memory_budget(const struct lw_options *o) {
  if (o->memory != UINT64_MAX)
    return o->memory;
  uint64_t cg = lw_cgroup_limit(), avail = lw_mem_available();
  uint64_t budget = cg && (!avail || cg < avail) ? cg : avail;
  if (o->verbose)
    fprintf(stderr, "fatlink: memory budget %llu MiB (cgroup limit %llu MiB, "
                    "available %llu MiB)\n",
            (unsigned long long)(budget >> 20), (unsigned long long)(cg >> 20),
            (unsigned long long)(avail >> 20));
  return budget;
}

/* Inputs are read by `jobs` threads at once (1 under make's jobserver,
 * which counts them as jobs too). */
static int scan_inputs(const struct lw_options *o, int jobs, struct ex_set *set,
                       struct lw_diag *d) {
  struct lw_inputs inputs = {0};
  int rc = lw_collect_inputs(&o->linker_args, o->msvc, &inputs, d);
  /* A dry run runs no host linker to say so, as upstream's says it. */
  if (!rc && o->dry_run && inputs.missing)
    rc = lw_error(d, LW_EINVAL, "unable to find library -l%s", inputs.missing);
  if (!rc)
    bound_memory(&inputs, o->verbose);
  if (!rc)
    rc = ex_scan_link(set, inputs.v, inputs.n, jobs, &o->should_extract, d);
  lw_inputs_free(&inputs);
  return rc;
}

/* What a link builds: its inputs' images, the job graph and the plan. */
struct link {
  struct ex_set set;
  struct lw_graph *g;
  struct lw_link_line line;
  struct lw_plan *plan;
  struct lw_jobserver *js; /* make's, when it runs us */
  int host_only; /* fatlink is the host linker, with no device code to add */
};

static int run_link(struct lw_options *o, struct link *l, struct lw_diag *d) {
  int rc = scan_inputs(o, l->js ? 1 : o->jobs, &l->set, d);
  if (!rc && o->as_linker && !o->dry_run && !lw_as_linker_needs_work(&l->set) &&
      lw_as_linker_can_exec(o)) {
    l->host_only = 1;
    return 0;
  }
  if (!rc && o->as_linker && lw_as_linker_runtime(o, &l->set))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc && lw_host_link_line(o, &l->set, &l->line))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc) {
    const char *delays = getenv("FATLINK_TEST_JOB_DELAYS");
    struct lw_graph_options go = {
        .jobs = o->jobs,
        .memory = memory_budget(o),
        .memory_self = 1,
        .dry_run = o->dry_run,
        .verbose = o->verbose,
        .tool_timeout = o->tool_timeout,
        .log = stderr,
        .launcher = &o->tool_launcher,
        .jobserver = l->js,
        .delay_seed = delays ? (unsigned)atoi(delays) : 0};
    if (lw_graph_new(&go, &l->g))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  static const struct lw_planner *const planners[] = {
      &lw_fpga_planner, &lw_fpga_desc_planner, &lw_sycl_native_planner,
      &lw_sycl_planner,
      &lw_omp_planner,  &lw_cuda_planner,      &lw_hip_planner};
  if (!rc)
    rc = lw_plan_build(l->g, o, &l->line, &l->set, planners,
                       LW_ARRAY_SIZE(planners), &l->plan, d);
  if (!rc)
    rc = lw_graph_run(l->g, d);
  if (!rc)
    rc = lw_plan_commit(l->plan, d);
  if (!rc && o->time_trace) {
    char *path = o->time_trace_file ? strdup(o->time_trace_file)
                                    : lw_xasprintf("%s.time-trace", o->output);
    rc = path ? lw_graph_write_trace(l->g, path, o->time_trace_grain, d)
              : lw_error(d, LW_ENOMEM, "out of memory");
    free(path);
  }
  return rc;
}

static void free_link(struct link *l) {
  lw_plan_free(l->plan);
  lw_link_line_free(&l->line);
  lw_graph_free(l->g);
  lw_jobserver_close(l->js);
  ex_set_free(&l->set);
}

int main(int argc, char **argv) {
  if (argc > 0 && lw_post_link_named(argv[0]))
    return lw_post_link_main(argc, argv);
  struct lw_diag d = {0};
  struct lw_options o;
  int rc = lw_options_parse(argc, argv, &o, &d);
  if (!rc)
    rc = lw_as_linker_check_loop(o.argv0, &d);
  /* Under a linker's name, --help and --version are the real linker's too
   * (configure scripts grep `ld --help` for the options it knows); run as
   * fatlink, fatlink's own, on stdout. */
  int named = lw_as_linker_named(o.argv0);
  int linker_help = o.help && named;
  int own_version = o.long_version && !named && !o.verbose;
  if (!rc && (!o.help || linker_help) && !own_version && !o.emit_fatbin_only)
    rc = lw_as_linker_setup(&o, &d);
  if (!rc && linker_help) {
    rc = lw_as_linker_exec(&o, &d);
  } else if (!rc && o.help) {
    lw_options_help(stdout);
  } else if (!rc && o.llvm_help) {
    rc = dl_llvm_help(o.llvm_help, lw_llvm_style_options,
                      lw_n_llvm_style_options, stdout, &d);
  } else if (!rc && o.version) {
    fprintf(own_version ? stdout : stderr, "fatlink version %s (LLVM %s)%s%s\n",
            LW_VERSION, LW_LLVM_VERSION, o.as_linker ? ", linking with " : "",
            o.as_linker ? o.linker_path : "");
  }
  /* As the host linker under a linker's name, --version is the real
   * linker's answer. */
  if (!rc && !o.help && o.as_linker && o.long_version && named)
    rc = lw_as_linker_exec(&o, &d);
  int linking = !rc && !o.help && !o.llvm_help && !(o.version && !o.verbose);
  if (linking) {
    /* make's jobserver first, while the descriptors make may have passed
     * are the only ones open beyond stdio: after that fatlink opens its
     * own (errout.c's pipe), which a recipe make did not pass the jobserver
     * to would have where MAKEFLAGS names it - then taken for it. */
    struct link l = {0};
    if (!o.dry_run)
      l.js = lw_jobserver_open(o.verbose);
    /* glibc's malloc arenas stay as they are (one per thread, about): the
     * loop thread's own then holds little besides the plan, and the SYCL
     * workers forked from that thread, and the child each forks for every
     * batch of modules, allocate there - in fresh memory rather than in what the
     * link's jobs freed, which each child would fault in page by page
     * (400 units x 10 kernels, 2 workers: 10.4 s on one arena, 6.6 s). */
    lw_tmp_configure(o.output, o.save_temps, o.dry_run);
    /* LLVM's last words fold into fatlink's one line (run/errout.c);
     * --wrapper-verbose shows them whole. */
    if (!o.verbose)
      lw_errout_capture();
    dl_init();
    LLVMInstallFatalErrorHandler(lw_tmp_fatal);
    if (o.llvm_spirv_opts.n && !o.llvm_spirv)
      fprintf(stderr, "fatlink: warning: --llvm-spirv-options has no effect "
                      "without --spirv-translator=llvm-spirv\n");
    rc = dl_set_llvm_options(&o.llvm_opts, o.spirv_ext, 0, &d);
    /* FATLINK_REPRODUCE_DIR: every link packs its reproducer there, and
     * one that succeeds takes it away again: what stays is that of a link
     * that failed or crashed. */
    char *auto_tar = !rc && !o.reproduce ? lw_reproduce_dir_tar(o.output)
                                         : NULL;
    if (auto_tar)
      o.reproduce = auto_tar;
    if (!rc && o.reproduce && !o.dry_run) /* one that fails has it too */
      rc = lw_reproduce(&o, &d);
    /* Under upstream's name the host linker must be named, as clang always
     * names it (-mllvm --help needs none: LLVM printed it above). */
    if (!rc && !o.linker_path && !o.emit_fatbin_only &&
        lw_as_wrapper_named(o.argv0))
      rc = lw_error(&d, LW_EINVAL,
                    "linker path missing, must pass 'linker-path'");
    if (!rc)
      rc = run_link(&o, &l, &d);
    if (!rc && auto_tar)
      unlink(auto_tar); /* done (or the real linker's alone): no failure */
    if (!rc && l.host_only) {
      /* Nothing to add: the real linker runs in our place, unbounded. */
      free_link(&l);
      lw_bound_lift();
      lw_errout_restore();
      rc = lw_as_linker_exec(&o, &d);
    }
#ifndef LW_SANITIZE
    /* A finished link leaves what it built to the system: freeing the
     * linked module and the rest would keep the user waiting 20-30 ms for
     * a process with nothing left to do. (The sanitizer build frees all, so
     * that a leak still shows.) */
    if (!rc) {
      lw_tmp_cleanup();
      lw_errout_restore();
      fflush(NULL);
      _exit(0);
    }
#endif
    free_link(&l);
    lw_errout_restore();
    free(auto_tar);
  }
  lw_options_free(&o);
  if (rc) {
    lw_tmp_cleanup();
    lw_report_error("fatlink", &d, rc);
    return d.exit_status > 0 ? d.exit_status : 1;
  }
  return 0;
}
