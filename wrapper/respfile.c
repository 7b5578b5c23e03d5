/* respfile.c - expands @file arguments the way GNU tools read them:
 * whitespace separates words, '...' is literal, "..." allows backslash
 * escapes, a backslash outside quotes escapes the next character. A response
 * file may name others; nesting deeper than MAX_DEPTH is refused (it is
 * almost surely a cycle). Tool options given as one string (--gpu-tool-arg=)
 * are split into words by the same rules. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
