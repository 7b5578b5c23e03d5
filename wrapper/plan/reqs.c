/* reqs.c - a module's device requirements, as the aspect filter (aot/)
 * takes them, read from the property sets the post-link wrote (devlink/):
 * for the SYCL planner's AOT outs and for fatlink as sycl-post-link. */
#include "plan/plan.h"

#include "aot.h"
#include "dl.h"

#include <string.h>

void lw_aot_reqs(const struct dl_props *props, struct aot_reqs *r,
                 uint32_t *aspects, uint32_t *fixed, size_t max) {
  memset(r, 0, sizeof *r);
  static const char set[] = "SYCL/device requirements";
  const struct dl_prop *pr = dl_props_find(props, set, "aspects");
  if (pr) {
    r->aspects = aspects;
    r->naspects = dl_prop_u32s(pr, aspects, max);
    if (r->naspects > max)
      r->naspects = max;
  }
  /* An ESIMD image's sub-group size (1) is no device's to support: it
   * runs one work-item a thread on any Intel GPU (DPC++ exempts it too). */
  if ((pr = dl_props_find(props, set, "reqd_sub_group_size")) &&
      !dl_props_find(props, "SYCL/misc properties", "isEsimdImage"))
    dl_prop_u32s(pr, &r->sg, 1);
  if ((pr = dl_props_find(props, set, "fixed_target"))) {
    r->has_fixed = 1;
    r->fixed = fixed;
    r->nfixed = dl_prop_u32s(pr, fixed, max);
    if (r->nfixed > max)
      r->nfixed = max;
  }
}
