/* props.c - the property sets of a device module, encoded as the DPC++
 * runtime reads them, in the order DPC++'s post-link writes them (sets as
 * it adds them, properties too, device requirements by name):
 *   SYCL/device requirements  aspects (uint32 array, always), fixed_target,
 *                             joint_matrix, joint_matrix_mad (strings),
 *                             reqd_sub_group_size, reqd_work_group_size_uint64_t
 *                             (uint64 array), work_group_num_dim
 *   SYCL/kernel names         <kernel> = 1
 *   SYCL/kernel param opt     <kernel> = bit array of eliminated parameters
 *                             (sycl_kernel_omit_args, which DPC++'s front
 *                             end writes; without it none are: one zero
 *                             bit per parameter)
 *   SYCL/misc properties      optLevel, isEsimdImage (an ESIMD module),
 *                             sanUsed (string), sycl-grf-size,
 *                             specConstsReplacedWithDefault (specconst.c)
 *   SYCL/program metadata     <f>@reqd_work_group_size, @reqd_sub_group_size,
 *                             @work_group_num_dim, @max_work_group_size
 *   SYCL/assert used          <kernel> = 1 when it can reach
 *                             __devicelib_assert_fail
 *   SYCL/exported symbols     <function> = 1 for each SYCL_EXTERNAL function
 *                             that is an entry point (dynamic linking,
 *                             -emit-exported-symbols)
 *   SYCL/imported symbols     <function> = 1 for each SYCL_EXTERNAL function
 *                             left to another image (-emit-imported-symbols)
 *   SYCL/device globals       <unique id> = {u32 size, u32 image scope},
 *                             and in program metadata
 *                             <unique id>@global_id_mapping = its name
 *   SYCL/host pipes           <unique id> = {u32 size of its element}
 *   SYCL/specialization constants (and their default values): specconst.c
 *   SYCL/virtual functions    virtual.c
 * Arrays are byte-array properties: a 64-bit little-endian bit count, then
 * the little-endian elements. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int u32(struct dl_propset *s, const char *name, uint32_t v) {
  struct dl_prop *p = dl__prop_add(s, name);
  if (!p)
    return LW_ENOMEM;
  p->type = DL_PROP_UINT32;
  p->u32 = v;
  return 0;
}

/* An array of `n` little-endian integers of `width` bytes. */
static int array(struct dl_propset *s, const char *name, const int64_t *v,
                 int n, int width) {
  struct dl_prop *p = dl__prop_add(s, name);
  if (!p)
    return LW_ENOMEM;
  p->type = DL_PROP_BYTE_ARRAY;
  unsigned char b[8 * 64];
  for (int i = 0; i < n && i < 64; i++)
    for (int k = 0; k < width; k++)
      b[i * width + k] = (unsigned char)((uint64_t)v[i] >> (8 * k));
  size_t len = (size_t)(n < 64 ? n : 64) * (size_t)width;
  return dl_encode_byte_array(b, len, (uint64_t)len * 8, &p->bytes);
}

/* A string, as DPC++ keeps one: a byte array of its characters. */
static int string(struct dl_propset *s, const char *name, const char *v,
                  size_t len) {
  struct dl_prop *p = dl__prop_add(s, name);
  if (!p)
    return LW_ENOMEM;
  p->type = DL_PROP_BYTE_ARRAY;
  return dl_encode_byte_array((const unsigned char *)v, len,
                              (uint64_t)len * 8, &p->bytes);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int unique(int64_t *v, int n) {
  if (n > 1)
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (k == 0 || v[k - 1] != v[i])
      v[k++] = v[i];
  return k;
}

/* The functions a module's properties look at: the group's, in module
 * order. */
#define FOR_FUNCTIONS(f, fns)                                                  \
  for (size_t fi_ = 0; fi_ < (fns)->n; fi_++)                                 \
    for (LLVMValueRef f = (fns)->v[fi_]; f; f = NULL)

static int requirements(const struct dl__fns *fns, const struct dl_group *gr,
                        struct dl_props *out) {
  const struct lw_strvec *kernels = &gr->kernels;
  struct dl_propset *s = dl__propset(out, "SYCL/device requirements");
  int64_t aspects[256], targets[64], wg[8], v[64];
  int na = 0, nt = 0, nwg = -1, wgnd = -1, sg = -1, wg_differ = 0;
  /* the joint matrix combinations used: the last function's that says */
  const char *jm = NULL, *jm_mad = NULL;
  unsigned jm_len = 0, jm_mad_len = 0;
  FOR_FUNCTIONS(f, fns) {
    /* Another image's virtual functions, or a dummy image's, which do
     * nothing, use nothing here. */
    int n = gr->vf_dummy || dl__vf_foreign(f, gr->vf_set)
                ? 0
                : dl__md_ints(f, "sycl_used_aspects", v, NULL, 64);
    for (int i = 0; i < n && i < 64; i++)
      if (v[i] >= 0 && na < 256)
        aspects[na++] = v[i]; /* negative ones only steer the split */
    n = dl__md_ints(f, "sycl_fixed_targets", v, NULL, 64);
    for (int i = 0; i < n && i < 64 && nt < 64; i++)
      targets[nt++] = v[i];
    int64_t one;
    if (dl__md_ints(f, "work_group_num_dim", &one, NULL, 1) >= 1 && nwg < 0)
      wgnd = (int)one;
    int64_t wg2[8];
    n = dl__md_ints(f, "reqd_work_group_size", nwg < 0 ? wg : wg2, NULL, 8);
    if (n > 8)
      n = 8;
    if (n > 0 && nwg < 0)
      nwg = n;
    else if (n > 0) /* two sizes (no split): none is the image's */
      wg_differ |= n != nwg || memcmp(wg, wg2, (size_t)n * sizeof *wg) != 0;
    unsigned l = 0;
    const char *str = dl__md_string(f, "sycl_joint_matrix", &l);
    if (str && l)
      jm = str, jm_len = l;
    if ((str = dl__md_string(f, "sycl_joint_matrix_mad", &l)) && l)
      jm_mad = str, jm_mad_len = l;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    int entry = 0;
    for (size_t k = 0; k < kernels->n && !entry; k++)
      entry = strcmp(kernels->v[k], name) == 0;
    if (entry && sg < 0 &&
        dl__md_ints(f, "intel_reqd_sub_group_size", &one, NULL, 1) >= 1)
      sg = (int)one;
  }
  na = unique(aspects, na);
  nt = unique(targets, nt);
  /* by name, as DPC++ gathers them (a std::map) */
  int rc = array(s, "aspects", aspects, na, 4);
  if (!rc && nt)
    rc = array(s, "fixed_target", targets, nt, 4);
  if (!rc && jm)
    rc = string(s, "joint_matrix", jm, jm_len);
  if (!rc && jm_mad)
    rc = string(s, "joint_matrix_mad", jm_mad, jm_mad_len);
  if (!rc && sg >= 0)
    rc = u32(s, "reqd_sub_group_size", (uint32_t)sg);
  if (!rc && nwg > 0 && !wg_differ)
    rc = array(s, "reqd_work_group_size_uint64_t", wg, nwg, 8);
  if (!rc && wgnd >= 0)
    rc = u32(s, "work_group_num_dim", (uint32_t)wgnd);
  return rc;
}

static int per_function(LLVMModuleRef mod, const struct dl__fns *fns,
                        const struct lw_strvec *kernels, struct dl_props *out) {
  /* DPC++ writes the parameter set even when it is empty, not the names */
  struct dl_propset *param = dl__propset(out, "SYCL/kernel param opt");
  int rc = 0;
  char key[1024];
  int64_t v[8];
  FOR_FUNCTIONS(f, fns) {
    if (rc)
      break;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    int entry = 0;
    for (size_t k = 0; k < kernels->n && !entry; k++)
      entry = strcmp(kernels->v[k], name) == 0;
    if (entry) {
      /* DPC++'s front end records which of the kernel's original
       * parameters it eliminated (one i1 each); without that, none is. */
      int64_t omit[512];
      int nomit = dl__md_ints(f, "sycl_kernel_omit_args", omit, NULL, 512);
      if (nomit < 0)
        nomit = dl__md_ints(f, "spir_kernel_omit_args", omit, NULL, 512);
      unsigned nparams = nomit >= 0 && nomit <= 512 ? (unsigned)nomit
                                                    : LLVMCountParams(f);
      rc = u32(dl__propset(out, "SYCL/kernel names"), name, 1);
      if (!rc && nparams) {
        struct dl_prop *p = dl__prop_add(param, name);
        unsigned char bitsv[64] = {0};
        for (int b = 0; nomit > 0 && b < nomit && b < 512; b++)
          if (omit[b])
            bitsv[b / 8] |= (unsigned char)(1u << (b % 8));
        size_t bytes = (nparams + 7) / 8;
        rc = !p ? LW_ENOMEM
                : dl_encode_byte_array(bitsv, bytes < 64 ? bytes : 64,
                                       nparams, &p->bytes);
        if (p)
          p->type = DL_PROP_BYTE_ARRAY;
      }
    }
    static const struct {
      const char *md, *suffix;
      int array;
    } meta[] = {{"reqd_work_group_size", "@reqd_work_group_size", 1},
                {"intel_reqd_sub_group_size", "@reqd_sub_group_size", 0},
                {"work_group_num_dim", "@work_group_num_dim", 0},
                {"max_work_group_size", "@max_work_group_size", 1}};
    for (size_t k = 0; !rc && k < LW_ARRAY_SIZE(meta); k++) {
      int n = dl__md_ints(f, meta[k].md, v, NULL, 8);
      if (n < 1)
        continue;
      snprintf(key, sizeof key, "%.*s%s", (int)len, name, meta[k].suffix);
      struct dl_propset *pm = dl__propset(out, "SYCL/program metadata");
      rc = meta[k].array ? array(pm, key, v, n < 3 ? n : 3, 4)
                         : u32(pm, key, (uint32_t)v[0]);
    }
  }
  return rc;
}

/* SYCL/misc properties, in DPC++'s order: an image of ESIMD entry points
 * only, the register file size and optimization level its entry points
 * ask for (`opt_level` where none does; -1: none), and the sanitizer its
 * code was instrumented for (the name of the instrumentation's kernel
 * table says which: entries.c). */
static int misc(LLVMModuleRef mod, const struct dl_group *gr, int opt_level,
                struct dl_props *out) {
  static const char m[] = "SYCL/misc properties";
  /* an image of ESIMD entry points only (split.c) */
  int rc = gr->esimd && gr->entries.n
               ? u32(dl__propset(out, m), "isEsimdImage", 1)
               : 0;
  /* the first entry point's that has them */
  const char *grf = NULL, *opt = NULL;
  for (size_t i = 0; i < gr->entries.n && (!grf || !opt); i++) {
    LLVMValueRef f = LLVMGetNamedFunction(mod, gr->entries.v[i]);
    unsigned len;
    if (f && !grf)
      grf = dl__fn_attr(f, "sycl-grf-size", &len);
    if (f && !opt)
      opt = dl__fn_attr(f, "sycl-optlevel", &len);
  }
  if (!rc && grf)
    rc = u32(dl__propset(out, m), "sycl-grf-size",
             (uint32_t)strtoul(grf, NULL, 10));
  if (opt)
    opt_level = atoi(opt);
  if (!rc && opt_level >= 0)
    rc = u32(dl__propset(out, m), "optLevel", (uint32_t)opt_level);
  if (!rc && gr->sanitizer)
    rc = string(dl__propset(out, m), "sanUsed", gr->sanitizer,
                strlen(gr->sanitizer));
  return rc;
}

/* The unique id and size (attribute `size_attr`) of a device global or
 * host pipe `g` of the module (`what` names it in an error). */
static int id_and_size(const struct dl__gattrs *ga, LLVMValueRef g,
                       const char *size_attr, const char *what,
                       const char **id, uint32_t *size, struct lw_diag *d) {
  const char *v = dl__gattr(ga, g, size_attr);
  const char *name = LLVMGetValueName2(g, &(size_t){0});
  char *end;
  unsigned long n = strtoul(v, &end, 10);
  *id = dl__gattr(ga, g, "sycl-unique-id");
  if (!*id || !**id)
    return lw_error(d, LW_EINVAL, "%s '%s' has no sycl-unique-id attribute",
                    what, name);
  if (!*v || *end || n > UINT32_MAX)
    return lw_error(d, LW_EINVAL, "%s '%s': %s '%s' is not a size", what,
                    name, size_attr, v);
  *size = (uint32_t)n;
  return 0;
}

/* Each device global the module has (DPC++ marks them with the attribute
 * sycl-device-global-size): by its sycl-unique-id, its size and whether it
 * is device_image_scope, as two uint32; each host pipe (an FPGA's pipe to
 * the host, marked sycl-host-pipe-size) by its id, its element's size as
 * one uint32 (DPC++'s HostPipes.cpp). */
static int device_globals(const struct dl__set *only,
                          const struct dl__gattrs *ga, struct dl_props *out,
                          struct lw_diag *d) {
  for (size_t i = 0; i < ga->n; i++) {
    LLVMValueRef g = ga->v[i].g;
    const char *id;
    uint32_t size;
    int rc = 0;
    /* (a sanitizer's table without an id: not one the runtime reads) */
    if (!dl__set_has(only, g) ||
        (dl__sanitizer_table(g, NULL) && !dl__gattr(ga, g, "sycl-unique-id")))
      continue;
    if (dl__gattr(ga, g, "sycl-host-pipe-size")) {
      if ((rc = id_and_size(ga, g, "sycl-host-pipe-size", "host pipe", &id,
                            &size, d)))
        return rc;
      if (array(dl__propset(out, "SYCL/host pipes"), id,
                &(int64_t){size}, 1, 4))
        return lw_error(d, LW_ENOMEM, "out of memory");
    }
    if (!dl__gattr(ga, g, "sycl-device-global-size"))
      continue;
    if ((rc = id_and_size(ga, g, "sycl-device-global-size", "device global",
                          &id, &size, d)))
      return rc;
    size_t len;
    const char *name = LLVMGetValueName2(g, &len);
    int64_t v[2] = {size, dl__image_scope(ga, g)};
    if (array(dl__propset(out, "SYCL/device globals"), id, v, 2, 4))
      return lw_error(d, LW_ENOMEM, "out of memory");
    /* The runtime finds the variable in the image by its name. */
    char *key = lw_xasprintf("%s@global_id_mapping", id);
    struct dl_prop *m =
        key ? dl__prop_add(dl__propset(out, "SYCL/program metadata"), key)
            : NULL;
    free(key);
    if (!m || dl_encode_byte_array(name, len, (uint64_t)len * 8, &m->bytes))
      return lw_error(d, LW_ENOMEM, "out of memory");
    m->type = DL_PROP_BYTE_ARRAY;
  }
  return 0;
}

/* The functions the module leaves to other images: with dynamic linking
 * the SYCL_EXTERNAL ones it only declares and those it will (imports.c);
 * always the bfloat16 device library's. */
static int imported(const struct dl__fns *fns, const struct dl_group *gr,
                    unsigned flags, struct dl_props *out) {
  int rc = 0;
  FOR_FUNCTIONS(f, fns) {
    size_t len;
    if (!rc && (dl__bf16_devicelib(f) ||
                ((flags & DL_DYNAMIC_LINKING) &&
                 (LLVMIsDeclaration(f) || dl__foreign(f, gr, flags)) &&
                 dl__importable(f) && !dl__vf_set(f, &(unsigned){0}))))
      rc = u32(dl__propset(out, "SYCL/imported symbols"),
               LLVMGetValueName2(f, &len), 1);
  }
  return rc;
}

int dl__props(LLVMModuleRef mod, const struct dl__set *only,
              const struct dl__fns *fns, const struct dl_group *gr,
              int opt_level, const struct dl__gattrs *ga, unsigned flags,
              struct dl_props *out, struct lw_diag *d) {
  const struct lw_strvec *kernels = &gr->kernels;
  memset(out, 0, sizeof *out);
  int rc = requirements(fns, gr, out);
  if (!rc)
    rc = per_function(mod, fns, kernels, out);
  if (!rc)
    rc = misc(mod, gr, opt_level, out);
  /* The runtime watches for a failed assert after these kernels run. */
  for (size_t i = 0; !rc && i < gr->asserts.n; i++)
    rc = u32(dl__propset(out, "SYCL/assert used"), gr->asserts.v[i], 1);
  if (!rc && (flags & DL_EMIT_IMPORTED))
    rc = imported(fns, gr, flags, out);
  /* spir_func ones: a kernel of another backend's code is no export */
  for (size_t i = 0; !rc && (flags & DL_EMIT_EXPORTED) && i < gr->exports.n;
       i++) {
    LLVMValueRef f = LLVMGetNamedFunction(mod, gr->exports.v[i]);
    if (f && dl__is_exportable(f))
      rc = u32(dl__propset(out, "SYCL/exported symbols"), gr->exports.v[i], 1);
  }
  if (!rc)
    rc = dl__vf_props(fns, gr, out);
  if (rc) {
    dl_props_free(out);
    return lw_error(d, rc, "out of memory");
  }
  if ((rc = device_globals(only, ga, out, d))) {
    dl_props_free(out);
    return rc;
  }
  dl__props_sort(out);
  return 0;
}

