/* filter.c - the aspect filter of "Behavior for optional kernel features": may
 * a module with these device requirements be compiled for a target of the
 * device configuration?
 *   aspects               every one the target lists, unless the target
 *                         may support aspects it does not list;
 *   reqd_sub_group_size   one of the target's sizes (an empty list: sizes
 *                         not known, nothing is dropped for them);
 *   fixed_target          at least one of its aspects the target lists. */
#include "aot.h"

#include <stdio.h>

static int has(const unsigned *v, size_t n, uint32_t x) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == x)
      return 1;
  return 0;
}

static const char *name_of(uint32_t aspect, char *buf, size_t n) {
  const char *s = lw_aspect_name(aspect);
  if (s)
    return s;
  snprintf(buf, n, "%u", aspect);
  return buf;
}

int aot_filter(const struct aot_device *dev, const struct aot_reqs *r,
               char *why, size_t n) {
  char num[16];
  if (!dev->may_support_other_aspects)
    for (size_t i = 0; i < r->naspects; i++)
      if (!has(dev->aspects, dev->naspects, r->aspects[i])) {
        snprintf(why, n, "it uses aspect %s, which %s does not support",
                 name_of(r->aspects[i], num, sizeof num), dev->name);
        return 1;
      }
  if (r->sg && dev->nsg && !has(dev->sg_sizes, dev->nsg, r->sg)) {
    snprintf(why, n, "it requires sub-group size %u, which %s does not have",
             r->sg, dev->name);
    return 1;
  }
  if (r->has_fixed) {
    for (size_t i = 0; i < r->nfixed; i++)
      if (has(dev->aspects, dev->naspects, r->fixed[i]))
        return 0;
    snprintf(why, n, "its fixed targets do not include %s", dev->name);
    return 1;
  }
  return 0;
}
