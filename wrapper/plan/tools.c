/* tools.c - where the plan finds the tools that are not LLVM's: the CUDA
 * toolkit's (ptxas, fatbinary), which the CUDA and SYCL planners run and
 * the cache keys name. */
#include "plan/planner.h"

#include <stdlib.h>
#include <string.h>

char *lw__cuda_tool(const struct lw_options *o, const char *name) {
  if (o->cuda_path)
    return lw_xasprintf("%s/bin/%s", o->cuda_path, name);
  return lw_on_path(name) ? strdup(name)
                          : lw_xasprintf("/usr/local/cuda/bin/%s", name);
}
