/* tools.c - where the plan finds what it reads beside its inputs: the
 * device libraries the options name, and the CUDA toolkit's tools and
 * libdevice, which the planners use and the cache keys name. */
#include "plan/planner.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *lw__cuda_libdevice(const struct lw_options *o) {
  char *path = lw_xasprintf("%s/nvvm/libdevice/libdevice.10.bc",
                            o->cuda_path ? o->cuda_path : "/usr/local/cuda");
  if (path && access(path, R_OK) != 0) {
    free(path);
    path = NULL;
  }
  return path;
}

int lw__device_lib_paths(const struct lw_options *o,
                         const struct lw_strvec *names, struct lw_strvec *out) {
  int rc = 0;
  for (size_t i = 0; !rc && i < names->n; i++)
    rc = o->device_lib_dir && names->v[i][0] != '/'
             ? lw_strvec_pushf(out, "%s/%s", o->device_lib_dir, names->v[i])
             : lw_strvec_push(out, names->v[i]);
  return rc;
}

char *lw__cuda_tool(const struct lw_options *o, const char *name) {
  if (o->cuda_path)
    return lw_xasprintf("%s/bin/%s", o->cuda_path, name);
  return lw_on_path(name) ? strdup(name)
                          : lw_xasprintf("/usr/local/cuda/bin/%s", name);
}
