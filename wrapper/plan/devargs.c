/* devargs.c - the device tools' arguments: --device-linker= and
 * --device-compiler= values ("[<triple>=]<arg>") for a device link's
 * command line, as upstream gives them, and the files the device links'
 * -L and -l find (which the cache's key and the reproducer cover). */
#include "plan/planner.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *lw_device_arg(const char *value, size_t *triple_len) {
  /* A triple never starts with '-' and has one at least, as upstream takes
   * them. */
  const char *eq = strchr(value, '=');
  *triple_len =
      eq && value[0] != '-' && memchr(value, '-', (size_t)(eq - value))
          ? (size_t)(eq - value)
          : 0;
  return *triple_len ? eq + 1 : value;
}

int lw_device_link_libs(const struct lw_options *o, struct lw_strvec *out) {
  const struct lw_strvec *v = &o->device_linker_args;
  for (size_t i = 0; i < v->n; i++) {
    size_t n;
    const char *dir = lw_device_arg(v->v[i], &n);
    for (size_t k = 0; strncmp(dir, "-L", 2) == 0 && k < v->n; k++) {
      const char *l = lw_device_arg(v->v[k], &n);
      for (int so = 0; strncmp(l, "-l", 2) == 0 && so < 2; so++) {
        char *lib =
            lw_xasprintf("%s/lib%s.%s", dir + 2, l + 2, so ? "so" : "a");
        struct stat st;
        int keep = lib && stat(lib, &st) == 0 && S_ISREG(st.st_mode);
        if (!lib || (keep && lw_strvec_push(out, lib))) {
          free(lib);
          return LW_ENOMEM;
        }
        free(lib);
      }
    }
  }
  return 0;
}

/* Arguments of `list` ("[triple=]arg") that apply to `triple`, each after
 * `prefix` (a word of its own) when there is one. */
static int push_for_triple(struct lw_strvec *argv, const struct lw_strvec *list,
                           const char *triple, const char *prefix) {
  for (size_t i = 0; i < list->n; i++) {
    size_t n;
    const char *a = lw_device_arg(list->v[i], &n);
    if (n && (strncmp(list->v[i], triple, n) != 0 || triple[n] != 0))
      continue; /* for another triple */
    if ((prefix && lw_strvec_push(argv, prefix)) || lw_strvec_push(argv, a))
      return LW_ENOMEM;
  }
  return 0;
}

int lw__push_device_args(struct lw_strvec *argv, const struct lw_options *o,
                         const char *triple) {
  /* The linker's first, then the compiler's, as upstream's clang line. */
  return push_for_triple(argv, &o->device_linker_args, triple, "-Xlinker") ||
                 push_for_triple(argv, &o->device_compiler_args, triple, NULL)
             ? LW_ENOMEM
             : 0;
}
