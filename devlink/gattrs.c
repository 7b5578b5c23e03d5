/* gattrs.c - the string attributes of a module's global variables, which
 * DPC++'s front end uses to mark device globals ("sycl-device-global-size",
 * "sycl-unique-id", "sycl-device-image-scope") and specialization ids.
 * LLVM-C cannot read a global variable's attributes, so they are read from
 * the module's text: a variable printed without its initializer ends in
 * " #N" when it has an attribute group, and the module's text holds the
 * groups as lines `attributes #N = { "key"="value" "flag" ... }`. The
 * module is printed only when some variable has a group, which clang's own
 * globals never do. */
#include "internal.h"

#include <llvm-c/Core.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Unescapes a quoted IR string at *p (just past the opening quote) into
 * `out`, NUL-terminated; leaves *p past the closing quote. */
static int unquote(const char **p, struct lw_buf *out) {
  const char *s = *p;
  int rc = 0;
  while (*s && *s != '"' && !rc) {
    char c = *s++;
    if (c == '\\' && s[0] && s[1]) {
      char hex[3] = {s[0], s[1], 0};
      c = (char)strtol(hex, NULL, 16);
      s += 2;
    }
    rc = lw_buf_append(out, &c, 1);
  }
  if (*s == '"')
    s++;
  *p = s;
  return rc ? rc : lw_buf_append(out, "", 1);
}

/* Parses the group `#id` from the module text into "key\0value\0" pairs
 * (a bare flag has an empty value). 0 when absent too. */
static int parse_group(const char *text, unsigned id, struct lw_strvec *out) {
  char head[48];
  int hn = snprintf(head, sizeof head, "\nattributes #%u = { ", id);
  const char *p = strstr(text, head);
  if (!p)
    return 0;
  p += hn;
  int rc = 0;
  while (*p && *p != '}' && *p != '\n' && !rc) {
    if (*p != '"') {
      p++; /* an enum attribute or a space */
      continue;
    }
    p++;
    struct lw_buf key = {0}, val = {0};
    rc = unquote(&p, &key);
    if (!rc && p[0] == '=' && p[1] == '"') {
      p += 2;
      rc = unquote(&p, &val);
    } else if (!rc) {
      rc = lw_buf_append(&val, "", 1);
    }
    if (!rc && (lw_strvec_push(out, (const char *)key.data) ||
                lw_strvec_push(out, (const char *)val.data)))
      rc = LW_ENOMEM;
    lw_buf_free(&key);
    lw_buf_free(&val);
  }
  return rc;
}

/* The attribute group number a variable has, or -1. */
static long group_of(LLVMValueRef g) {
  LLVMValueRef init = LLVMGetInitializer(g);
  if (init)
    LLVMSetInitializer(g, NULL); /* print no (possibly huge) data */
  char *s = LLVMPrintValueToString(g);
  if (init)
    LLVMSetInitializer(g, init);
  const char *hash = s ? strrchr(s, '#') : NULL;
  long id = -1;
  if (hash && hash > s && hash[-1] == ' ' && hash[1] >= '0' && hash[1] <= '9')
    id = strtol(hash + 1, NULL, 10);
  LLVMDisposeMessage(s);
  return id;
}

int dl__gattrs_read(LLVMModuleRef m, struct dl__gattrs *out) {
  memset(out, 0, sizeof *out);
  char *text = NULL;
  int rc = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g && !rc;
       g = LLVMGetNextGlobal(g)) {
    long id = group_of(g);
    if (id < 0)
      continue;
    if (!text && !(text = LLVMPrintModuleToString(m)))
      return LW_ENOMEM;
    struct dl__gattr *ng = realloc(out->v, (out->n + 1) * sizeof *ng);
    if (!ng) {
      rc = LW_ENOMEM;
      break;
    }
    out->v = ng;
    memset(&ng[out->n], 0, sizeof *ng);
    ng[out->n].g = g;
    rc = parse_group(text, (unsigned)id, &ng[out->n++].kv);
  }
  LLVMDisposeMessage(text);
  if (rc)
    dl__gattrs_free(out);
  return rc;
}

const char *dl__gattr(const struct dl__gattrs *a, LLVMValueRef g,
                      const char *key) {
  for (size_t i = 0; i < a->n; i++)
    if (a->v[i].g == g)
      for (size_t k = 0; k + 1 < a->v[i].kv.n; k += 2)
        if (strcmp(a->v[i].kv.v[k], key) == 0)
          return a->v[i].kv.v[k + 1];
  return NULL;
}

int dl__image_scope(const struct dl__gattrs *a, LLVMValueRef g) {
  const char *scope = dl__gattr(a, g, "sycl-device-image-scope");
  if (!scope)
    scope = dl__gattr(a, g, "device_image_scope"); /* older spelling */
  return scope && strcmp(scope, "false") != 0;
}

void dl__gattrs_free(struct dl__gattrs *a) {
  for (size_t i = 0; i < a->n; i++)
    lw_strvec_free(&a->v[i].kv);
  free(a->v);
  memset(a, 0, sizeof *a);
}
