/* lw_base.h - fatlink's ground floor (wrapper/base/), what every stage
 * shares: error codes, the caller-owned diagnostic that carries an error's
 * text up to main, a growable byte buffer, a vector of strings, files, SYCL
 * aspects and command lines as GNU tools read them.
 *
 * Errors are values: a function returns 0 or a negative LW_E* code and writes
 * one line of text into the lw_diag its caller gave it. Only main prints it and
 * exits. */
#ifndef LW_BASE_H
#define LW_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LW_ERRNO_MAP(XX)                                                       \
  XX(EINVAL, -1, "invalid argument")                                           \
  XX(ENOMEM, -2, "out of memory")                                              \
  XX(EIO, -3, "input/output error")                                            \
  XX(EFORMAT, -4, "malformed input")                                           \
  XX(ENOTSUP, -5, "not supported yet")                                         \
  XX(ETOOL, -6, "external tool failed")                                        \
  XX(ELLVM, -7, "llvm error")                                                  \
  XX(ECANCELED, -8, "canceled")                                                \
  XX(ESIGNAL, -9, "interrupted by a signal")                                   \
  XX(EBADOUT, -10, "unreadable output")

enum {
#define XX(name, value, text) LW_##name = value,
  LW_ERRNO_MAP(XX)
#undef XX
};

/* Text of an LW_E* code. */
const char *lw_strerror(int code);

/* A caller-owned diagnostic: the first error written wins. */
struct lw_diag {
  int code;
  int exit_status; /* status main should exit with; 0 means 1 */
  char msg[4096]; /* room for a list of every known target */
};

/* Records `fmt` in `d` (unless it already holds an error) and returns `code`. */
int lw_error(struct lw_diag *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like lw_error but prefixes the message with the quoted path: 'path': ... */
int lw_error_path(struct lw_diag *d, int code, const char *path,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A growable byte buffer; `data` is owned. */
struct lw_buf {
  unsigned char *data;
  size_t len, cap;
};

/* Appends `n` bytes; returns 0 or LW_ENOMEM. */
int lw_buf_append(struct lw_buf *b, const void *p, size_t n);
/* Releases the buffer and zeroes it. */
void lw_buf_free(struct lw_buf *b);

/* Makes room for element `n` of a growable array: `arr` points to the
 * array pointer, *cap counts its elements of `size` bytes; the capacity
 * doubles, starting at `first`. Returns 0 or LW_ENOMEM (nothing changed). */
int lw_grow(void *arr, size_t n, size_t *cap, size_t size, size_t first);

/* A NULL-terminated vector of owned strings, ready to be an argv. */
struct lw_strvec {
  char **v;
  size_t n, cap;
};

/* Appends a copy of `s`; returns 0 or LW_ENOMEM. */
int lw_strvec_push(struct lw_strvec *sv, const char *s);
/* Appends a formatted string. */
int lw_strvec_pushf(struct lw_strvec *sv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends copies of every string of `src`. */
int lw_strvec_extend_from(struct lw_strvec *sv, const struct lw_strvec *src);
/* Appends the non-empty pieces of `s` between `sep` characters. */
int lw_strvec_split(struct lw_strvec *sv, const char *s, char sep);
/* The index of the first string equal to `s`, or sv->n when there is none. */
size_t lw_strvec_find(const struct lw_strvec *sv, const char *s);
/* Frees every string and the vector. */
void lw_strvec_free(struct lw_strvec *sv);

/* Returns a malloc'd formatted string, or NULL when out of memory. */
char *lw_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What a tool's output says, in one line for a message: its first line
 * mentioning an error in any case (a driver's own summary comes last and
 * says little), else its last non-empty line; "" for none. */
void lw_error_line(const char *text, size_t n, char *line, size_t cap);

/* Reads a whole file into `out`; a missing or unreadable file is an error
 * naming the path. */
int lw_read_file(const char *path, struct lw_buf *out, struct lw_diag *d);
/* Reads `f` to its end into `out`; `name` names it in errors. */
int lw_read_stream(FILE *f, const char *name, struct lw_buf *out,
                   struct lw_diag *d);
/* Prints "<prog>: error: <message>" on one line (control characters of
 * the message made '?'). */
void lw_report_error(const char *prog, struct lw_diag *d, int rc);
/* Writes `n` bytes to `path`, an error naming it on failure. */
int lw_write_file(const char *path, const void *p, size_t n,
                  struct lw_diag *d);

/* The first executable file `tool` in a directory of PATH (malloc'd), or
 * NULL. */
char *lw_find_on_path(const char *tool);
/* Is there one? */
int lw_on_path(const char *tool);

/* What follows the last '/' of `path` (all of it when there is none). */
const char *lw_base_name(const char *path);

/* SYCL aspects (aspects.c, cmake/aspects.def): the aspect's name, or NULL
 * when no aspect has that number; the number of the aspect called
 * name[0..len), or -1. */
const char *lw_aspect_name(long long value);
int lw_aspect_number(const char *name, size_t len);

/* What this thread does inside a library that may crash on malformed
 * input (LLVM's bitcode reader is not hardened): "'<origin>': <what>". A
 * crash meanwhile becomes that input's error - one line, exit status 1, no
 * temporaries (the fatal-signal handler, wrapper/run/tmp.c) - and so does
 * LLVM's fatal-error handler. lw_doing also gives the thread a stack for
 * the handler to run on when the crash is a stack overflow. */
void lw_doing(const char *origin, const char *what);
/* The same for a step of fatlink's own whose crash is LLVM's bug, not the
 * input's (a back end on a module fatlink made): "<what>". */
void lw_doing_step(const char *what);
void lw_done(void);
/* The current one, or NULL; safe in a signal handler. */
const char *lw_doing_now(void);
/* Does the current one blame an input (lw_doing)? */
int lw_doing_blames_input(void);

#define LW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Broken invariant: prints and aborts (git's BUG()). */
#define LW_BUG(msg) lw__bug(__FILE__, __LINE__, msg)
void lw__bug(const char *file, int line, const char *msg)
    __attribute__((noreturn));

/* ---- command lines (wrapper/base/cmdline.c) ----------------------------- */

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

/* A size as option `opt` (--cache-size) gives it: bytes, or K, M, G, T
 * of them (binary). */
int lw_parse_size(const char *opt, const char *v, uint64_t *out,
                  struct lw_diag *d);

#endif
