/* inputs.c - reads the host linker's arguments the way GNU ld does (or,
 * for a PE/COFF host of the MSVC environment, link.exe), to know
 * which files it will read: positional inputs, and the libraries that -l
 * finds in the -L directories (every -L counts, wherever it stands; a
 * directory is searched for lib<name>.so before lib<name>.a unless linking
 * statically; -l:<file> names the file). Options that take their value as the
 * next argument are listed so their values are not taken for inputs. A
 * positional input that does not exist is reported by the scan that reads
 * it. */
#include "internal.h"

#include "ex.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* GNU ld options whose value may be the next argument. */
static const char *const separate[] = {
    "-o", "-L", "-l", "-m", "-T", "-e", "-u", "-y", "-z", "-h", "-R", "-F",
    "-f", "-G", "-Y", "-A", "-b", "-c", "-a", "-P", "-O",
    "-dynamic-linker", "--dynamic-linker", "-soname", "--soname", "-rpath",
    "--rpath", "-rpath-link", "--rpath-link", "-Map", "--Map", "-plugin",
    "--plugin", "-plugin-opt", "--plugin-opt", "--version-script",
    "--dynamic-list", "--defsym", "--wrap", "--script", "--output",
    "--library", "--library-path", "--entry", "--undefined",
    "--trace-symbol", "--format", "--architecture", "--auxiliary",
    "--filter", "--retain-symbols-file", "--sysroot", "--sort-section",
    "--exclude-libs", "--audit", "--depaudit", "--image-base",
    "-Ttext", "-Tdata", "-Tbss",
    "--section-start", "--just-symbols", "--require-defined", "-init",
    "-fini", "--init", "--fini", "--oformat", "-dT",
    "--default-script", "--package-metadata", "--dependency-file",
    "--error-handling-script", "-assert",
    "--task-link", };

int lw_takes_separate_value(const char *a, int msvc) {
  if (msvc) /* link.exe's options join their values with ':' */
    return 0;
  for (size_t i = 0; i < LW_ARRAY_SIZE(separate); i++)
    if (strcmp(a, separate[i]) == 0)
      return 1;
  return 0;
}

/* A link.exe option `a` named `name` (case aside, - or / before it), with
 * its value after ':'; the value or NULL. */
static const char *msvc_option(const char *a, const char *name) {
  size_t n = strlen(name);
  if ((a[0] != '-' && a[0] != '/') || strncasecmp(a + 1, name, n) != 0 ||
      a[1 + n] != ':')
    return NULL;
  return a + n + 2;
}

struct lw_output_arg lw_output_arg_at(const struct lw_strvec *args, size_t i,
                                      int msvc) {
  const char *a = args->v[i];
  if (msvc) {
    const char *v = msvc_option(a, "out");
    return v ? (struct lw_output_arg){(int)i, 1, v}
             : (struct lw_output_arg){-1, 0, NULL};
  }
  if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < args->n)
    return (struct lw_output_arg){(int)i, 2, args->v[i + 1]};
  if (strncmp(a, "--output=", 9) == 0)
    return (struct lw_output_arg){(int)i, 1, a + 9};
  if (strncmp(a, "-o", 2) == 0 && a[2])
    return (struct lw_output_arg){(int)i, 1, a + 2};
  return (struct lw_output_arg){-1, 0, NULL};
}

struct lw_output_arg lw_find_output_arg(const struct lw_strvec *args,
                                        int msvc) {
  struct lw_output_arg out = {-1, 0, NULL};
  for (size_t i = 0; i < args->n; i++) {
    struct lw_output_arg here = lw_output_arg_at(args, i, msvc);
    if (here.count) {
      out = here;
      i += (size_t)here.count - 1;
    } else if (lw_takes_separate_value(args->v[i], msvc)) {
      i++;
    }
  }
  return out;
}

static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

char *lw_find_library(const struct lw_strvec *dirs, const char *name,
                      int statik) {
  for (size_t i = 0; i < dirs->n; i++) {
    char *p;
    if (name[0] == ':') {
      p = lw_xasprintf("%s/%s", dirs->v[i], name + 1);
      if (p && is_file(p))
        return p;
      free(p);
      continue;
    }
    if (!statik) {
      p = lw_xasprintf("%s/lib%s.so", dirs->v[i], name);
      if (p && is_file(p))
        return p;
      free(p);
    }
    p = lw_xasprintf("%s/lib%s.a", dirs->v[i], name);
    if (p && is_file(p))
      return p;
    free(p);
  }
  return NULL;
}

/* The value of option `a` if it is spelled `flag` (joined, `=`, or
 * separate at args[i+1]). */
static const char *value_of(const struct lw_strvec *args, size_t *i,
                            const char *shortf, const char *longf) {
  const char *a = args->v[*i];
  size_t n = strlen(shortf), ln = strlen(longf);
  if (strcmp(a, shortf) == 0 || strcmp(a, longf) == 0)
    return *i + 1 < args->n ? args->v[++*i] : NULL;
  if (strncmp(a, longf, ln) == 0 && a[ln] == '=')
    return a + ln + 1;
  if (strncmp(a, shortf, n) == 0 && a[n])
    return a + n;
  return NULL;
}

static int push(struct lw_inputs *in, enum ex_link_item item,
                const char *path, int whole) {
  if (lw_grow(&in->v, in->n, &in->cap, sizeof *in->v, 32))
    return LW_ENOMEM;
  /* Paths are kept as index + 1 until the end: the vector may move. */
  in->v[in->n++] = (struct ex_link_input){
      item, path ? (const char *)(uintptr_t)(in->paths.n + 1) : NULL, whole};
  if (path && lw_strvec_push(&in->paths, path))
    return LW_ENOMEM;
  return 0;
}

/* link.exe's command line (a PE/COFF host of the MSVC environment, as
 * lld-link reads it): -libpath: directories, then inputs in order - a file
 * named without a directory that is not in the current one (foo.lib,
 * m.obj, -defaultlib:foo) found in them; options start with '-' or '/' (a
 * '/' argument that is a file is an input). */
static int msvc_inputs(const struct lw_strvec *args, struct lw_inputs *in) {
  struct lw_strvec dirs = {0};
  int rc = 0;
  for (size_t i = 0; !rc && i < args->n; i++) {
    const char *v = msvc_option(args->v[i], "libpath");
    if (v && lw_strvec_push(&dirs, v))
      rc = LW_ENOMEM;
  }
  for (size_t i = 0; !rc && i < args->n; i++) {
    const char *a = args->v[i], *lib = msvc_option(a, "defaultlib");
    if (!lib && (a[0] == '-' || (a[0] == '/' && !is_file(a))))
      continue;
    const char *name = lib ? lib : a;
    if (!lib && (strchr(name, '/') || is_file(name))) {
      rc = push(in, EX_LINK_FILE, name, 0);
      continue;
    }
    /* a file by name: in the -libpath: directories, as it is or, without
     * an extension, with .lib */
    const char *base = lw_base_name(name);
    int ext = strchr(base, '.') != NULL;
    char *found = NULL;
    for (size_t k = 0; !found && k < dirs.n; k++) {
      char *p = lw_xasprintf("%s/%s%s", dirs.v[k], name, ext ? "" : ".lib");
      if (p && is_file(p))
        found = p;
      else
        free(p);
    }
    if (found)
      rc = push(in, EX_LINK_FILE, found, 0);
    else if (!lib)
      rc = push(in, EX_LINK_FILE, name, 0); /* the scan reports it */
    free(found);
  }
  lw_strvec_free(&dirs);
  return rc;
}

/* GNU ld's command line. */
static int gnu_inputs(const struct lw_strvec *args, struct lw_inputs *inputs) {
  struct lw_strvec dirs = {0};
  int rc = 0;
  /* First pass: every -L, and every -u (ld enters those symbols as
   * undefined before reading any input). */
  for (size_t i = 0; !rc && i < args->n; i++) {
    const char *a = args->v[i], *v;
    if (strncmp(a, "-L", 2) == 0 || strncmp(a, "--library-path", 14) == 0) {
      v = value_of(args, &i, "-L", "--library-path");
      if (v && lw_strvec_push(&dirs, v))
        rc = LW_ENOMEM;
    } else if (strncmp(a, "-u", 2) == 0 ||
               strncmp(a, "--undefined", 11) == 0 ||
               strncmp(a, "--require-defined", 17) == 0) {
      v = strncmp(a, "--require-defined", 17) != 0
              ? value_of(args, &i, "-u", "--undefined")
              : value_of(args, &i, "--require-defined", "--require-defined");
      if (v)
        rc = push(inputs, EX_LINK_UNDEFINED, v, 0);
    } else if (lw_takes_separate_value(a, 0)) {
      i++;
    }
  }
  int statik = 0, whole = 0;
  for (size_t i = 0; !rc && i < args->n; i++) {
    const char *a = args->v[i];
    if (strcmp(a, "-Bstatic") == 0 || strcmp(a, "-static") == 0 ||
        strcmp(a, "-dn") == 0 || strcmp(a, "-non_shared") == 0) {
      statik = 1;
    } else if (strcmp(a, "-Bdynamic") == 0 || strcmp(a, "-dy") == 0 ||
               strcmp(a, "-call_shared") == 0) {
      statik = 0;
    } else if (strcmp(a, "--whole-archive") == 0) {
      whole = 1;
    } else if (strcmp(a, "--no-whole-archive") == 0) {
      whole = 0;
    } else if (strcmp(a, "--start-group") == 0 || strcmp(a, "-(") == 0) {
      rc = push(inputs, EX_LINK_GROUP_START, NULL, 0);
    } else if (strcmp(a, "--end-group") == 0 || strcmp(a, "-)") == 0) {
      rc = push(inputs, EX_LINK_GROUP_END, NULL, 0);
    } else if (strncmp(a, "-l", 2) == 0 || strncmp(a, "--library", 9) == 0) {
      if (strncmp(a, "--library-path", 14) == 0) {
        value_of(args, &i, "-L", "--library-path");
        continue;
      }
      const char *v = value_of(args, &i, "-l", "--library");
      char *p = v ? lw_find_library(&dirs, v, statik) : NULL;
      /* Not found: the host linker reports it in its own words. */
      if (p)
        rc = push(inputs, EX_LINK_FILE, p, whole);
      else if (v && !inputs->missing)
        inputs->missing = v;
      free(p);
    } else if (a[0] == '-' && a[1]) {
      if (lw_takes_separate_value(a, 0))
        i++;
    } else {
      /* A missing input is reported when it is read. */
      rc = push(inputs, EX_LINK_FILE, a, whole);
    }
  }
  lw_strvec_free(&dirs);
  return rc;
}

int lw_collect_inputs(const struct lw_strvec *args, int msvc,
                      struct lw_inputs *inputs, struct lw_diag *d) {
  int rc = msvc ? msvc_inputs(args, inputs) : gnu_inputs(args, inputs);
  /* Now that the strings no longer move, point the items at them. */
  for (size_t i = 0; i < inputs->n; i++)
    if (inputs->v[i].path)
      inputs->v[i].path = inputs->paths.v[(uintptr_t)inputs->v[i].path - 1];
  if (rc == LW_ENOMEM)
    lw_error(d, rc, "out of memory");
  return rc;
}

void lw_inputs_free(struct lw_inputs *in) {
  free(in->v);
  lw_strvec_free(&in->paths);
  memset(in, 0, sizeof *in);
}
