/* hostlink.c - the host linker's command line: the user's arguments in their
 * order, the output redirected to a temporary (renamed over the real output
 * only when everything succeeded), and the registration object placed before
 * every other input, as upstream does, so archives later on the line can
 * satisfy the runtime symbols it references. */
#include "internal.h"

#include <string.h>

int lw_host_link_argv(const struct lw_options *o, const char *out_path,
                      const char *wrapper_obj, struct lw_strvec *argv) {
  const struct lw_strvec *la = &o->linker_args;
  int out = lw_find_output_arg(la);
  if (lw_strvec_push(argv, o->linker_path) || lw_strvec_push(argv, "-o") ||
      lw_strvec_push(argv, out_path))
    return LW_ENOMEM;
  if (wrapper_obj && lw_strvec_push(argv, wrapper_obj))
    return LW_ENOMEM;
  for (size_t i = 0; i < la->n; i++) {
    if (out >= 1 && (i == (size_t)out - 1 || i == (size_t)out))
      continue; /* the user's "-o file", replaced above */
    if (lw_strvec_push(argv, la->v[i]))
      return LW_ENOMEM;
  }
  return 0;
}
