/* cmdline.c - command lines as GNU tools read them, for the driver and every
 * room below it. Expands @file arguments:
 * whitespace separates words, '...' is literal, "..." allows backslash
 * escapes, a backslash outside quotes escapes the next character. A response
 * file may name others; nesting deeper than MAX_DEPTH is refused (it is
 * almost surely a cycle). Tool options given as one string (--gpu-tool-arg=)
 * are split into words by the same rules. And the other way: whether a
 * command line fits what the kernel takes, and the text of a response file
 * for one that does not. And sizes as options give them. */
#include "lw_base.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_DEPTH = 16 };

static int expand(const char *arg, struct lw_strvec *out, int depth,
                  struct lw_diag *d);

static int tokenize(const char *path, const char *s, size_t n,
                    struct lw_strvec *out, int depth, struct lw_diag *d) {
  struct lw_buf w = {0};
  size_t i = 0;
  int rc = 0;
  while (!rc && i < n) {
    while (i < n && isspace((unsigned char)s[i]))
      i++;
    if (i >= n)
      break;
    w.len = 0;
    char q = 0;
    for (; i < n; i++) {
      char c = s[i];
      if (q == '\'') {
        if (c == '\'') {
          q = 0;
          continue;
        }
      } else if (q == '"') {
        if (c == '"') {
          q = 0;
          continue;
        }
        if (c == '\\' && i + 1 < n) {
          c = s[++i];
        }
      } else {
        if (isspace((unsigned char)c))
          break;
        if (c == '\'' || c == '"') {
          q = c;
          continue;
        }
        if (c == '\\' && i + 1 < n)
          c = s[++i];
      }
      if ((rc = lw_buf_append(&w, &c, 1)))
        break;
    }
    if (!rc && q)
      rc = lw_error_path(d, LW_EINVAL, path, "unterminated quote");
    char nul = 0;
    if (!rc && !(rc = lw_buf_append(&w, &nul, 1)))
      rc = depth < 0 ? lw_strvec_push(out, (const char *)w.data)
                     : expand((const char *)w.data, out, depth, d);
  }
  if (rc == LW_ENOMEM)
    lw_error(d, rc, "out of memory");
  lw_buf_free(&w);
  return rc;
}

static int expand(const char *arg, struct lw_strvec *out, int depth,
                  struct lw_diag *d) {
  if (arg[0] != '@' || arg[1] == 0)
    return lw_strvec_push(out, arg) ? lw_error(d, LW_ENOMEM, "out of memory")
                                    : 0;
  const char *path = arg + 1;
  if (depth >= MAX_DEPTH)
    return lw_error_path(d, LW_EINVAL, path,
                         "response files nested too deeply (a cycle?)");
  struct lw_buf b = {0};
  int rc = lw_read_file(path, &b, d);
  if (!rc)
    rc = tokenize(path, (const char *)b.data, b.len, out, depth + 1, d);
  lw_buf_free(&b);
  return rc;
}

int lw_split_args(const char *what, const char *s, struct lw_strvec *out,
                  struct lw_diag *d) {
  return tokenize(what, s, strlen(s), out, -1, d);
}

int lw_expand_response_files(int argc, char **argv, struct lw_strvec *out,
                             struct lw_diag *d) {
  for (int i = 0; i < argc; i++) {
    int rc = expand(argv[i], out, 0, d);
    if (rc)
      return rc;
  }
  return 0;
}

int lw_args_fit(const struct lw_strvec *argv) {
  /* execve refuses one string over 32 pages (MAX_ARG_STRLEN), and all of
   * them with the environment over a quarter of the stack limit
   * (_SC_ARG_MAX); half of that leaves room for what is not counted. */
  long max = sysconf(_SC_ARG_MAX);
  size_t limit = max > 0 ? (size_t)max / 2 : 64 * 1024, total = 0;
  for (char **e = environ; *e; e++)
    total += strlen(*e) + 1 + sizeof *e;
  for (size_t i = 0; i < argv->n; i++) {
    size_t n = strlen(argv->v[i]) + 1;
    if (n >= 32 * 4096)
      return 0;
    total += n + sizeof *argv->v;
  }
  return total < limit;
}

int lw_response_file_text(const struct lw_strvec *args, size_t from,
                          struct lw_buf *out) {
  for (size_t i = from; i < args->n; i++) {
    const char *a = args->v[i];
    if (!*a && lw_buf_append(out, "''", 2))
      return LW_ENOMEM;
    for (; *a; a++) {
      int special =
          isspace((unsigned char)*a) || *a == '\\' || *a == '\'' || *a == '"';
      if ((special && lw_buf_append(out, "\\", 1)) || lw_buf_append(out, a, 1))
        return LW_ENOMEM;
    }
    if (lw_buf_append(out, "\n", 1))
      return LW_ENOMEM;
  }
  return 0;
}

int lw_parse_size(const char *opt, const char *v, uint64_t *out,
                  struct lw_diag *d) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30
              : *end == 'T' ? 40 : 0;
  if (shift)
    end++;
  if (end == v || *end || errno || *v == '-' || n > (UINT64_MAX >> shift))
    return lw_error(d, LW_EINVAL,
                    "invalid %s value '%s' (expected a number of bytes, "
                    "with K, M, G or T after it for binary units)",
                    opt, v);
  *out = (uint64_t)n << shift;
  return 0;
}
