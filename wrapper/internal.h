/* internal.h - private to wrapper/'s driver (main.c and the files beside
 * it): options, the link line's inputs, the host link's command line and
 * fatlink as the host linker. The rooms below it have a header each:
 * plan/plan.h, run/run.h, cache/cache.h, fatpack/postlink.h. */
#ifndef LW_INTERNAL_H
#define LW_INTERNAL_H

#include "plan/plan.h"

#include <stdio.h>

struct ex_set;

/* ---- options.c ---------------------------------------------------------- */

/* Parses the wrapper's argv (response files expanded, wrapper options taken,
 * everything else kept for the host linker in order). */
int lw_options_parse(int argc, char **argv, struct lw_options *o,
                     struct lw_diag *d);
void lw_options_free(struct lw_options *o);
/* Prints every option with one line of help. */
void lw_options_help(FILE *out);
/* The LLVM-style options of the wrapper's own (-mllvm, --offload-opt):
 * {name with its value, description}, sorted by name, for LLVM's help. */
extern const char *const lw_llvm_style_options[][2];
extern const size_t lw_n_llvm_style_options;

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
/* Is fatlink run under upstream's name, clang-linker-wrapper? */
int lw_as_wrapper_named(const char *argv0);
/* "FATLINK_HOST_LINK=<argv0> -> <linker>", for the host linker's
 * environment (malloc'd), or NULL. */
char *lw_as_linker_chain_env(const char *argv0, const char *linker);
/* Does `set` hold OpenMP device code this link builds (not a linked
 * file's)? */
int lw_links_openmp(const struct ex_set *set);
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

/* ---- reproduce.c -------------------------------------------------------- */

/* Writes the tar --reproduce= names: the link's files, its arguments naming
 * them there (response.txt) and the tools' versions (reproduce.c). */
int lw_reproduce(const struct lw_options *o, struct lw_diag *d);
/* Where FATLINK_REPRODUCE_DIR wants this link's reproducer:
 * <dir>/<output's file name>-<pid>.tar (malloc'd); NULL when it is not
 * set (or out of memory). */
char *lw_reproduce_dir_tar(const char *output);

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
  const char *missing; /* the first -l found nowhere (in the arguments) */
};
/* `msvc`: link.exe's syntax (-libpath:, -out:, foo.lib), as lld-link and
 * link.exe take it for a host of the MSVC environment; else GNU ld's. */
int lw_collect_inputs(const struct lw_strvec *linker_args, int msvc,
                      struct lw_inputs *inputs, struct lw_diag *d);
void lw_inputs_free(struct lw_inputs *inputs);

/* Where the output is named among the linker arguments: the last of
 * "-o F", "-oF", "--output F", "--output=F" (with `msvc`, "-out:F" or
 * "/out:F"). `index` is -1 when none. */
struct lw_output_arg {
  int index;         /* first argument of the spelling */
  int count;         /* 1 (joined) or 2 (separate) */
  const char *value; /* the file name */
};
struct lw_output_arg lw_find_output_arg(const struct lw_strvec *linker_args,
                                        int msvc);
/* Finds -l`name` in `dirs` as ld does (lib<name>.so before lib<name>.a
 * unless `statik`; ":<file>" names the file); a malloc'd path or NULL. */
char *lw_find_library(const struct lw_strvec *dirs, const char *name,
                      int statik);

/* Does the ld option `a` take its value as the next argument? */
int lw_takes_separate_value(const char *a, int msvc);
/* The output spelling starting at args[i], if any (count 0 if none). */
struct lw_output_arg lw_output_arg_at(const struct lw_strvec *args, size_t i,
                                      int msvc);

/* ---- hostlink.c --------------------------------------------------------- */

/* What the plan needs of the host link's command line (o->linker_args, as
 * ld reads them): see struct lw_link_line; its shared libraries only for a
 * link of `set`'s OpenMP device code (they are searched for on disk).
 * LW_ENOMEM or 0. */
int lw_host_link_line(const struct lw_options *o, const struct ex_set *set,
                      struct lw_link_line *line);
void lw_link_line_free(struct lw_link_line *line);

#endif
