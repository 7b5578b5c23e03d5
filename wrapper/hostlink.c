/* hostlink.c - what the plan needs of the host linker's command line, read
 * once before planning:
 *   - the user's arguments in their order with every spelling of the output
 *     taken out (the plan names a temporary with one -o, or -out: for
 *     link.exe's syntax, renamed over the
 *     real output only when everything succeeded, and puts the registration
 *     object before every other input, as upstream does, so archives later
 *     on the line can satisfy the runtime symbols it references);
 *   - the environment that tells a nested fatlink it runs under us;
 *   - for a link with OpenMP device code, the -L directories and the
 *     libraries -l names that are not static archives: the host link's
 *     shared libraries (the OpenMP runtime, libm) serve an OpenMP device
 *     link too, as upstream; a static archive's device code is among the
 *     images already. (Other links do not search the disk for them.)
 * The arguments are walked as ld reads them, so an option's value is never
 * taken for an output spelling or a library. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static int user_args(const struct lw_strvec *la, int msvc,
                     struct lw_strvec *out) {
  for (size_t i = 0; i < la->n; i++) {
    struct lw_output_arg o = lw_output_arg_at(la, i, msvc);
    if (o.count) {
      i += (size_t)o.count - 1;
      continue;
    }
    if (lw_strvec_push(out, la->v[i]))
      return LW_ENOMEM;
    if (lw_takes_separate_value(la->v[i], msvc) && i + 1 < la->n &&
        lw_strvec_push(out, la->v[++i]))
      return LW_ENOMEM;
  }
  return 0;
}

static int shared_libs(const struct lw_strvec *la, struct lw_strvec *out) {
  struct lw_strvec dirs = {0};
  int rc = 0;
  for (size_t i = 0; !rc && i < la->n; i++) {
    const char *s = la->v[i];
    int sep = (strcmp(s, "-L") == 0 || strcmp(s, "-l") == 0) && i + 1 < la->n;
    const char *v = sep ? la->v[i + 1] : s + 2;
    if (strncmp(s, "-L", 2) == 0 && (sep || s[2]) &&
        (lw_strvec_push(&dirs, v) || lw_strvec_pushf(out, "-L%s", v)))
      rc = LW_ENOMEM;
    i += (size_t)sep;
  }
  for (size_t i = 0; !rc && i < la->n; i++) {
    const char *s = la->v[i];
    int sep = strcmp(s, "-l") == 0 && i + 1 < la->n;
    if (strncmp(s, "-l", 2) != 0 || (!sep && !s[2])) {
      i += (size_t)(lw_takes_separate_value(s, 0) && i + 1 < la->n);
      continue;
    }
    const char *name = sep ? la->v[++i] : s + 2;
    char *found = lw_find_library(&dirs, name, 0);
    size_t n = found ? strlen(found) : 0;
    if (!(n > 2 && strcmp(found + n - 2, ".a") == 0) &&
        lw_strvec_pushf(out, "-l%s", name))
      rc = LW_ENOMEM;
    free(found);
  }
  lw_strvec_free(&dirs);
  return rc;
}

int lw_host_link_line(const struct lw_options *o, const struct ex_set *set,
                      struct lw_link_line *line) {
  memset(line, 0, sizeof *line);
  if (user_args(&o->linker_args, o->msvc, &line->args) ||
      (lw_links_openmp(set) && !o->msvc &&
       shared_libs(&o->linker_args, &line->shared)) ||
      (o->linker_path &&
       !(line->chain_env = lw_as_linker_chain_env(o->argv0, o->linker_path))))
    return LW_ENOMEM;
  return 0;
}

void lw_link_line_free(struct lw_link_line *line) {
  lw_strvec_free(&line->args);
  lw_strvec_free(&line->shared);
  free(line->chain_env);
  memset(line, 0, sizeof *line);
}
