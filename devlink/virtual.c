/* virtual.c - SYCL virtual functions (sycl_ext_oneapi_virtual_functions),
 * as DPC++'s design for them has the JIT flow: a function marked
 * "indirectly-callable"="<set>" belongs to a set of virtual functions; each
 * set becomes a device image of its own, whatever the split (split.c makes
 * the functions of a set the entry points of one group), and every other
 * image keeps them as declarations, so that a kernel that only creates an
 * object (its vtable names every virtual function) neither carries their
 * code nor inherits the optional features they use (callgraph.c does not
 * walk into them). The runtime links the set images a kernel needs:
 *   SYCL/virtual functions  virtual-functions-set = the set (string), in
 *                           the set's image; dummy-image = 1 in its copy
 *                           with every body emptied, made when the set
 *                           uses optional features (the runtime takes it
 *                           for kernels that only create objects, on
 *                           devices without those features);
 *                           uses-virtual-functions-set = the sets, comma
 *                           separated and sorted, that the image's
 *                           functions call ("calls-indirectly") or whose
 *                           functions its vtables name. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const char set_name[] = "SYCL/virtual functions";

const char *dl__vf_set(LLVMValueRef f, unsigned *len) {
  return dl__fn_attr(f, "indirectly-callable", len);
}

int dl__vf_foreign(LLVMValueRef f, const char *vf_set) {
  unsigned len;
  const char *set = dl__vf_set(f, &len);
  return set &&
         !(vf_set && strlen(vf_set) == len && memcmp(vf_set, set, len) == 0);
}

static int string_prop(struct dl_props *p, const char *name, const char *s,
                       size_t len) {
  struct dl_prop *pr = dl__prop_new(p, set_name, name);
  if (!pr)
    return LW_ENOMEM;
  pr->type = DL_PROP_BYTE_ARRAY;
  return dl_encode_byte_array(s, len, (uint64_t)len * 8, &pr->bytes);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int dl__vf_props(const struct dl__fns *fns, const struct dl_group *gr,
                 struct dl_props *out) {
  if (gr->vf_set) {
    int rc = string_prop(out, "virtual-functions-set", gr->vf_set,
                         strlen(gr->vf_set));
    if (rc || !gr->vf_dummy)
      return rc;
    struct dl_prop *pr = dl__prop_new(out, set_name, "dummy-image");
    if (!pr)
      return LW_ENOMEM;
    pr->type = DL_PROP_UINT32;
    pr->u32 = 1;
    return 0;
  }
  struct lw_strvec used = {0};
  int rc = 0;
  for (size_t k = 0; !rc && k < fns->n; k++) {
    LLVMValueRef f = fns->v[k];
    /* The sets its code calls into, and those of the virtual functions it
     * names (a vtable: DPC++'s front end says so with calls-indirectly
     * too, where it sees the definitions). */
    unsigned len;
    const char *v = dl__vf_set(f, &len);
    if (!v && !LLVMIsDeclaration(f))
      v = dl__fn_attr(f, "calls-indirectly", &len);
    char *list = v ? strndup(v, len) : NULL;
    if (v && !list)
      rc = LW_ENOMEM;
    for (char *save = NULL, *t = list ? strtok_r(list, ",", &save) : NULL;
         !rc && t; t = strtok_r(NULL, ",", &save))
      rc = lw_strvec_push(&used, t);
    free(list);
  }
  if (!rc && used.n) {
    qsort(used.v, used.n, sizeof *used.v, cmp_str);
    struct lw_buf all = {0};
    for (size_t i = 0; !rc && i < used.n; i++)
      if (!i || strcmp(used.v[i], used.v[i - 1]) != 0)
        rc = (all.len ? lw_buf_append(&all, ",", 1) : 0) ||
                     lw_buf_append(&all, used.v[i], strlen(used.v[i]))
                 ? LW_ENOMEM
                 : 0;
    if (!rc)
      rc = string_prop(out, "uses-virtual-functions-set", (char *)all.data,
                       all.len);
    lw_buf_free(&all);
  }
  lw_strvec_free(&used);
  return rc;
}
