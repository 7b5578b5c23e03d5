/* hostlink.c - the host linker's command line: the user's arguments in their
 * order, every spelling of the output replaced by one -o naming a temporary
 * (renamed over the real output only when everything succeeded), and the
 * registration object placed before every other input, as upstream does, so
 * archives later on the line can satisfy the runtime symbols it references.
 * The arguments are walked as ld reads them, so an option's value is never
 * taken for an output spelling. */
#include "internal.h"

#include <string.h>

int lw_host_link_argv(const struct lw_options *o, const char *out_path,
                      const char *wrapper_obj, struct lw_strvec *argv) {
  const struct lw_strvec *la = &o->linker_args;
  if (lw_strvec_push(argv, o->linker_path) || lw_strvec_push(argv, "-o") ||
      lw_strvec_push(argv, out_path))
    return LW_ENOMEM;
  if (wrapper_obj && lw_strvec_push(argv, wrapper_obj))
    return LW_ENOMEM;
  for (size_t i = 0; i < la->n; i++) {
    struct lw_output_arg out = lw_output_arg_at(la, i);
    if (out.count) {
      i += (size_t)out.count - 1;
      continue;
    }
    if (lw_strvec_push(argv, la->v[i]))
      return LW_ENOMEM;
    if (lw_takes_separate_value(la->v[i]) && i + 1 < la->n &&
        lw_strvec_push(argv, la->v[++i]))
      return LW_ENOMEM;
  }
  return 0;
}
