/* checks.c - what the post-link refuses or warns about before splitting:
 *   - external functions nothing defines, with who calls them (SPIR-V
 *     built-ins and LLVM intrinsics are the runtime's and the back end's,
 *     specialization-constant getters are lowered per module, native
 *     SPIR-V inputs define some, linked after emission;
 *     with dynamic linking, SYCL_EXTERNAL functions another image may
 *     define);
 *   - aspects that do not exist (lw_aspect_name: cmake/aspects.def;
 *     negative numbers are DPC++'s internal ones, used only to split);
 *   - a kernel whose call graph asks for two different work-group or
 *     sub-group sizes;
 *   - (warning) a SYCL_EXTERNAL function using an aspect its declaration
 *     does not list (!sycl_declared_aspects), as "Behavior for optional
 *     kernel features" describes. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fname(LLVMValueRef f) {
  size_t len;
  return LLVMGetValueName2(f, &len);
}

/* LLVM's intrinsics, SPIR-V built-ins, and libdevice's queries that the
 * NVPTX back end answers (NVVMReflect). */
static int builtin(const char *name) {
  return strncmp(name, "llvm.", 5) == 0 || strstr(name, "__spirv_") != NULL ||
         strcmp(name, "__nvvm_reflect") == 0;
}

int dl__bf16_devicelib(LLVMValueRef f) {
  const char *n = fname(f);
  return LLVMIsDeclaration(f) &&
         (strncmp(n, "__devicelib_ConvertFToBF16INTEL", 31) == 0 ||
          strncmp(n, "__devicelib_ConvertBF16ToFINTEL", 31) == 0);
}

static int undefined(LLVMModuleRef m, unsigned flags,
                     const struct lw_strvec *elsewhere, struct lw_diag *d) {
  struct lw_buf msg = {0};
  int n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (!LLVMIsDeclaration(f) || !LLVMGetFirstUse(f) || builtin(fname(f)) ||
        dl__spec_getter(f) ||
        (elsewhere && lw_strvec_find(elsewhere, fname(f)) < elsewhere->n) ||
        ((flags & DL_DYNAMIC_LINKING) && dl__importable(f)))
      continue;
    char part[512];
    snprintf(part, sizeof part, "%s'%s' (called by", n++ ? "; " : "",
             fname(f));
    lw_buf_append(&msg, part, strlen(part));
    int callers = 0;
    LLVMValueRef named[16]; /* each caller once (a loop unrolled calls
                               again): the first 16 are told apart */
    for (LLVMUseRef u = LLVMGetFirstUse(f); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (!LLVMIsAInstruction(user))
        continue;
      LLVMValueRef caller =
          LLVMGetBasicBlockParent(LLVMGetInstructionParent(user));
      int seen = 0;
      for (int k = 0; k < callers && k < 16 && !seen; k++)
        seen = named[k] == caller;
      if (seen)
        continue;
      if (callers < 16)
        named[callers] = caller;
      snprintf(part, sizeof part, "%s'%s'", callers++ ? ", " : " ",
               fname(caller));
      lw_buf_append(&msg, part, strlen(part));
    }
    lw_buf_append(&msg, ")", 1);
  }
  int rc = 0;
  if (n && !lw_buf_append(&msg, "", 1))
    rc = lw_error(d, LW_EINVAL, "undefined device function%s: %s",
                  n > 1 ? "s" : "", (char *)msg.data);
  lw_buf_free(&msg);
  return rc;
}

/* Checks one aspect list; returns the values in `out` (up to 64). */
static int aspect_list(LLVMValueRef f, const char *kind, int64_t *out,
                       int *n, struct lw_diag *d) {
  const char *names[64];
  *n = dl__md_ints(f, kind, out, names, 64);
  for (int i = 0; i < *n && i < 64; i++) {
    if (out[i] < 0)
      continue; /* internal */
    const char *known = lw_aspect_name(out[i]);
    if (names[i] && known && strcmp(names[i], known) != 0)
      return lw_error(d, LW_EINVAL,
                      "function '%s': aspect '%s' has number %lld, which is "
                      "'%s'",
                      fname(f), names[i], (long long)out[i], known);
    if (!known)
      return lw_error(d, LW_EINVAL, "function '%s': unknown aspect %s%s%lld",
                      fname(f), names[i] ? names[i] : "",
                      names[i] ? " " : "number ", (long long)out[i]);
  }
  return 0;
}

static int aspects_ok(LLVMModuleRef m, struct lw_strvec *warnings,
                      struct lw_diag *d) {
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    int64_t used[64], declared[64];
    int nu, nd;
    int rc = aspect_list(f, "sycl_used_aspects", used, &nu, d);
    if (!rc)
      rc = aspect_list(f, "sycl_declared_aspects", declared, &nd, d);
    if (rc)
      return rc;
    for (int i = 0; nd >= 0 && i < nu && i < 64; i++) {
      int listed = used[i] < 0;
      for (int k = 0; k < nd && k < 64 && !listed; k++)
        listed = declared[k] == used[i];
      if (!listed &&
          lw_strvec_pushf(warnings,
                          "function '%s' uses aspect '%s' which is not "
                          "listed in its declaration",
                          fname(f), lw_aspect_name(used[i])))
        return lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
  return 0;
}

static int same(const int64_t *a, int na, const int64_t *b, int nb) {
  if (na != nb)
    return 0;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i])
      return 0;
  return 1;
}

int dl__check_kernel(LLVMValueRef kernel, const struct dl__set *reach,
                     struct lw_diag *d) {
  static const char *const kinds[] = {"reqd_work_group_size",
                                      "intel_reqd_sub_group_size"};
  for (size_t k = 0; k < LW_ARRAY_SIZE(kinds); k++) {
    int64_t want[8], got[8];
    int nw = -1;
    const char *from = NULL;
    for (size_t i = 0; i < reach->cap; i++) {
      LLVMValueRef f = reach->v[i];
      if (!f || !LLVMIsAFunction(f))
        continue;
      int n = dl__md_ints(f, kinds[k], got, NULL, 8);
      if (n < 0)
        continue;
      if (nw < 0) {
        memcpy(want, got, sizeof want);
        nw = n;
        from = fname(f);
      } else if (!same(want, nw, got, n)) {
        return lw_error(d, LW_EINVAL,
                        "kernel '%s': conflicting %s in '%s' and '%s'",
                        fname(kernel), kinds[k], from, fname(f));
      }
    }
  }
  return 0;
}

int dl__check_module(LLVMModuleRef m, unsigned flags,
                     const struct lw_strvec *elsewhere,
                     struct lw_strvec *warnings, struct lw_diag *d) {
  int rc = flags & DL_ALLOW_UNDEFINED ? 0 : undefined(m, flags, elsewhere, d);
  return rc ? rc : aspects_ok(m, warnings, d);
}
