/* sanitizer.c - what DPC++'s post-link does for device code built with a
 * sanitizer (-fsanitize=address, memory or thread). The instrumentation
 * leaves a table of the module's kernels, a global named
 * __AsanKernelMetadata (__Msan..., __Tsan...; with a suffix, the id of its
 * module, where images are linked at run time), which the sanitizer's
 * runtime reads as a device global:
 *   - before the split, each table is made a device global as DPC++'s
 *     SanitizerKernelMetadata pass makes it: its array wrapped in a struct,
 *     of external linkage, its size in "sycl-device-global-size", and the
 *     HostAccessINTEL decoration the runtime finds it by;
 *   - every module of the split keeps every table (entries.c), so that its
 *     "SYCL/device globals" lists them and "SYCL/misc properties" names the
 *     sanitizer (sanUsed, props.c), as DPC++'s SanitizerUtils tells a
 *     module's sanitizer by a table's name;
 *   - after the split, each module gets an empty kernel
 *     __sanitizerModule<suffix> for each table (DPC++'s
 *     SanitizerPostSplitProcessing), by which the runtime tells the images
 *     apart.
 * LLVM-C can neither retype a variable nor give one string attributes or
 * dso_local: the wrapped table is written as IR text (its attributes are
 * read from the module's text, gattrs.c) and linked in. */
#include "internal.h"

#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *prefix, *sanitizer;
} tables[] = {{"__AsanKernelMetadata", "asan"},
              {"__MsanKernelMetadata", "msan"},
              {"__TsanKernelMetadata", "tsan"}};

const char *dl__sanitizer_table(LLVMValueRef g, const char **suffix) {
  const char *name = LLVMGetValueName2(g, &(size_t){0});
  for (size_t i = 0; i < LW_ARRAY_SIZE(tables); i++) {
    size_t n = strlen(tables[i].prefix);
    if (strncmp(name, tables[i].prefix, n) == 0) {
      if (suffix)
        *suffix = name + n;
      return tables[i].sanitizer;
    }
  }
  return NULL;
}

/* `s` as the inside of an IR string literal. */
static int quoted(struct lw_buf *b, const char *s) {
  int rc = 0;
  for (; *s && !rc; s++) {
    unsigned char c = (unsigned char)*s;
    char esc[4];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
      rc = lw_buf_append(b, s, 1);
    else
      rc = lw_buf_append(b, esc, (size_t)snprintf(esc, sizeof esc, "\\%02X", c));
  }
  return rc;
}

static int text(struct lw_buf *b, const char *s) {
  return lw_buf_append(b, s, strlen(s));
}

static const char decoration_id[] = "_Z20__SanitizerKernelMetadata";

/* The IR text of the wrapped table: `name` of struct type { `ty` },
 * zero for now, with the table's attributes and its size. */
static int wrapped_text(LLVMModuleRef m, LLVMValueRef g, const char *name,
                        const char *ty, const struct dl__gattrs *ga,
                        unsigned long long size, struct lw_buf *b) {
  char num[64];
  const char *dl = LLVMGetDataLayoutStr(m), *triple = LLVMGetTarget(m);
  int rc = text(b, "target datalayout = \"") || quoted(b, dl) ||
           text(b, "\"\ntarget triple = \"") || quoted(b, triple) ||
           text(b, "\"\n%0 = type { ") || text(b, ty) || text(b, " }\n@\"") ||
           quoted(b, name);
  snprintf(num, sizeof num, "%u",
           LLVMGetPointerAddressSpace(LLVMTypeOf(g)));
  rc = rc || text(b, "\" = dso_local local_unnamed_addr addrspace(") ||
       text(b, num) ||
       text(b, ") global %0 zeroinitializer, !spirv.Decorations !0 #0\n"
               "attributes #0 = { ");
  for (size_t i = 0; !rc && i < ga->n; i++)
    for (size_t k = 0; ga->v[i].g == g && !rc && k + 1 < ga->v[i].kv.n;
         k += 2) {
      const char *key = ga->v[i].kv.v[k], *v = ga->v[i].kv.v[k + 1];
      if (strcmp(key, "sycl-device-global-size") == 0)
        continue;
      rc = text(b, "\"") || quoted(b, key) || text(b, "\"") ||
           (*v && (text(b, "=\"") || quoted(b, v) || text(b, "\""))) ||
           text(b, " ");
    }
  char tail[128];
  snprintf(tail, sizeof tail,
           "\"sycl-device-global-size\"=\"%llu\" }\n!0 = !{!1}\n"
           "!1 = !{i32 %d, i32 0, !\"%s\"}\n",
           size, DL__HOST_ACCESS_INTEL, decoration_id);
  return rc || text(b, tail) || lw_buf_append(b, "", 1) ? LW_ENOMEM : 0;
}

/* Table `g` as a device global: wrapped (when it is an array nothing
 * uses, of unnamed types) or decorated where it is. */
static int fix_table(LLVMModuleRef m, LLVMValueRef g,
                     const struct dl__gattrs *ga, struct lw_diag *d) {
  LLVMTypeRef vt = LLVMGlobalGetValueType(g);
  LLVMValueRef init = LLVMGetInitializer(g);
  char *ty = LLVMPrintTypeToString(vt);
  if (!ty)
    return lw_error(d, LW_ENOMEM, "out of memory");
  if (!init || LLVMGetFirstUse(g) ||
      LLVMGetTypeKind(vt) != LLVMArrayTypeKind || strchr(ty, '%')) {
    LLVMDisposeMessage(ty);
    dl__host_access(g, 0, decoration_id); /* read */
    return 0;
  }
  LLVMTargetDataRef td = LLVMCreateTargetData(LLVMGetDataLayoutStr(m));
  unsigned long long size = LLVMABISizeOfType(td, vt);
  LLVMDisposeTargetData(td);
  size_t len;
  const char *gname = LLVMGetValueName2(g, &len);
  char *name = strndup(gname, len);
  char *old = name ? lw_xasprintf("%s_del", name) : NULL;
  struct lw_buf b = {0};
  int rc = old ? wrapped_text(m, g, name, ty, ga, size, &b) : LW_ENOMEM;
  LLVMDisposeMessage(ty);
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMMemoryBufferRef mb =
      rc ? NULL
         : LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)b.data,
                                                     b.len - 1, "sanitizer");
  LLVMModuleRef snip = NULL;
  char *msg = NULL;
  if (!rc && (!mb || LLVMParseIRInContext(ctx, mb, &snip, &msg))) {
    rc = lw_error(d, LW_ELLVM, "cannot make sanitizer table '%s' a device "
                               "global: %s",
                  name, msg ? msg : "out of memory");
  }
  LLVMDisposeMessage(msg);
  lw_buf_free(&b);
  if (!rc) {
    LLVMSetValueName2(g, old, strlen(old));
    if (LLVMLinkModules2(m, snip)) {
      LLVMSetValueName2(g, name, len);
      rc = lw_error(d, LW_ELLVM, "cannot make sanitizer table '%s' a device "
                                 "global",
                    name);
    }
  }
  LLVMValueRef w = rc ? NULL : LLVMGetNamedGlobal(m, name);
  if (w) {
    LLVMSetInitializer(w, LLVMConstNamedStruct(LLVMGlobalGetValueType(w),
                                               &init, 1));
    LLVMSetAlignment(w, LLVMGetAlignment(g));
    /* its other metadata goes with it */
    unsigned deco = LLVMGetMDKindIDInContext(ctx, "spirv.Decorations", 17);
    size_t n;
    LLVMValueMetadataEntry *md = LLVMGlobalCopyAllMetadata(g, &n);
    for (unsigned i = 0; i < n; i++) {
      unsigned kind = LLVMValueMetadataEntriesGetKind(md, i);
      if (kind != deco)
        LLVMGlobalSetMetadata(w, kind,
                              LLVMValueMetadataEntriesGetMetadata(md, i));
    }
    if (md)
      LLVMDisposeValueMetadataEntries(md);
    LLVMDeleteGlobal(g);
  }
  free(old);
  free(name);
  return rc;
}

int dl__sanitizer_tables(LLVMModuleRef m, struct lw_diag *d) {
  size_t n = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
    n += !LLVMIsDeclaration(g) && dl__sanitizer_table(g, NULL) != NULL;
  if (!n)
    return 0;
  LLVMValueRef *all = calloc(n, sizeof *all);
  struct dl__gattrs ga;
  if (!all || dl__gattrs_read(m, &ga)) {
    free(all);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  n = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
    if (!LLVMIsDeclaration(g) && dl__sanitizer_table(g, NULL))
      all[n++] = g;
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++)
    rc = fix_table(m, all[i], &ga, d);
  dl__gattrs_free(&ga);
  free(all);
  return rc;
}

/* LLVM-C cannot set dso_local; a value of hidden visibility is dso_local,
 * and stays so when its visibility is default again. */
static void dso_local(LLVMValueRef v) {
  LLVMSetVisibility(v, LLVMHiddenVisibility);
  LLVMSetVisibility(v, LLVMDefaultVisibility);
}

int dl__sanitizer_modules(LLVMModuleRef m) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, 0);
  LLVMBuilderRef b = NULL;
  int rc = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g && !rc;
       g = LLVMGetNextGlobal(g)) {
    const char *suffix;
    if (LLVMIsDeclaration(g) || !dl__sanitizer_table(g, &suffix))
      continue;
    char *name = lw_xasprintf("__sanitizerModule%s", suffix);
    if (!name || (!b && !(b = LLVMCreateBuilderInContext(ctx)))) {
      free(name);
      rc = LW_ENOMEM;
      break;
    }
    if (!LLVMGetNamedFunction(m, name)) {
      static const char entry[] = "sycl-entry-point";
      LLVMValueRef f = LLVMAddFunction(m, name, fty);
      LLVMSetLinkage(f, LLVMWeakODRLinkage);
      LLVMSetFunctionCallConv(f, LLVMSPIRKERNELCallConv);
      dso_local(f);
      LLVMAddAttributeAtIndex(
          f, LLVMAttributeFunctionIndex,
          LLVMCreateStringAttribute(ctx, entry, sizeof entry - 1, "", 0));
      LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f,
                                                                "entry"));
      LLVMBuildRetVoid(b);
    }
    free(name);
  }
  if (b)
    LLVMDisposeBuilder(b);
  return rc;
}
