/* tools.c - where the plan finds the tools that are not LLVM's: the CUDA
 * toolkit's (ptxas, fatbinary, libdevice), which the CUDA and SYCL planners
 * use and the cache keys name. */
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

char *lw__cuda_tool(const struct lw_options *o, const char *name) {
  if (o->cuda_path)
    return lw_xasprintf("%s/bin/%s", o->cuda_path, name);
  return lw_on_path(name) ? strdup(name)
                          : lw_xasprintf("/usr/local/cuda/bin/%s", name);
}
