/* postlink.c - fatlink as DPC++'s `sycl-post-link`: the command line of
 * intel/llvm's tool as its driver and its tests use it, and its outputs - a
 * file table ("[Code|Properties|Symbols]" and a row per module), each
 * module's IR (<stem>_<i>.bc, or .ll with -S), property sets (<stem>_<i>.prop,
 * DPC++'s text form) and entry points (<stem>_<i>.sym) - made by the same
 * post-link code a wrapper link runs (devlink's split). Reached as
 * `sycl-post-link` (a link to fatlink of that name) or `fatpack post-link`.
 * Where the wrapper is stricter on purpose, this follows DPC++: an undefined
 * device function stays a declaration. Options of DPC++-only passes (ESIMD,
 * ...) are refused by name. Outputs already written go when a later step
 * fails. */
#include "fatpack/postlink.h"
#include "plan/plan.h"

#include "aot.h"
#include "dl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pl_options {
  const char *input;   /* "-": stdin */
  const char *output;  /* the first -o FILE: names the modules' files */
  char default_out[256]; /* without -o */
  /* every -o: [TARGET,]FILE; a table with TARGET lists only the modules
   * the device configuration's TARGET can take (all for a name it does
   * not know) */
  struct lw_strvec tables;
  const char *out_dir; /* -out-dir= */
  int text, ir_only, symbols, param_info, program_metadata,
      kernel_names, device_globals;
  enum dl_split_mode split;
  unsigned flags; /* dl_split's */
};

/* Options whose work fatlink does not do: refused by name. */
static const char *const refused[] = {
    "lower-esimd", "lower-esimd-force-stateless-mem",
    "embed-aux-info-as-metadata", "imports",
    "exclude-external-functions", "split-by-optional-features",
    "sanitizer", NULL};

/* Options that change nothing fatlink makes. */
static const char *const ignored[] = {
    "f", "reduce-memory-usage", NULL};

static int listed(const char *const *list, const char *name, size_t len) {
  for (size_t i = 0; list[i]; i++)
    if (strlen(list[i]) == len && memcmp(list[i], name, len) == 0)
      return 1;
  return 0;
}

static void usage(FILE *f) {
  fputs(
      "OVERVIEW: fatlink as DPC++'s sycl-post-link: splits SYCL device code "
      "into modules\n"
      "and writes each one's IR, property sets and entry points, listed in "
      "a file table.\n\n"
      "USAGE: sycl-post-link [options] [INPUT] [-o TABLE] (INPUT: .bc or .ll, "
      "- or none: stdin;\n"
      "       TABLE by default: INPUT's stem and .files, .out for the IR)\n\n"
      "OPTIONS:\n"
      "  -o [TARGET,]FILE      the file table (several: TARGET's lists the "
      "modules that\n"
      "                        device can take); with -ir-output-only the IR\n"
      "  -out-dir=DIR          where the modules' files go\n"
      "  -split=source|kernel|auto|none  one module per translation unit, "
      "per kernel,\n"
      "                        as the code allows, or one (the default)\n"
      "  -symbols              write each module's entry points (.sym)\n"
      "  -properties           property sets (.prop; always written)\n"
      "  -emit-param-info, -emit-program-metadata, -emit-kernel-names,\n"
      "  -emit-exported-symbols, -emit-imported-symbols, -device-globals\n"
      "                        property sets to add\n"
      "  -support-dynamic-linking  SYCL_EXTERNAL functions may come from "
      "other images\n"
      "  -emit-only-kernels-as-entry-points  SYCL_EXTERNAL functions are "
      "not entry points\n"
      "  -spec-const=native|emulation  how specialization constants are "
      "lowered\n"
      "  -generate-device-image-default-spec-consts  also a copy with their "
      "defaults\n"
      "  -O0..-O3, -Os, -Oz    accepted (optLevel comes from sycl-optlevel)\n"
      "  -S                    IR as text (.ll) instead of bitcode (.bc)\n"
      "  -ir-output-only       one module, no table\n"
      "  -split-esimd          ESIMD kernels in modules of their own "
      "(<stem>_esimd_<i>)\n"
      "  -host-pipes           host pipes' SPIR-V decoration (HostAccessINTEL)"
      "\n"
      "Options of DPC++ passes fatlink does not have (-lower-esimd, ...)\n"
      "are refused by name.\n",
      f);
}

static int parse(int argc, char **argv, struct pl_options *o,
                 struct lw_diag *d) {
  o->input = "-";
  /* No -split (or -split=none): one module, not even split by optional
   * features, as DPC++'s tool does. SYCL_EXTERNAL functions are entry
   * points unless -emit-only-kernels-as-entry-points; a call graph's
   * work-group sizes are not checked. */
  o->split = DL_SPLIT_OFF;
  o->flags = DL_DPCPP_GROUPS | DL_EXTERNAL_ENTRIES | DL_NO_SIZE_CHECK;
  int inputs = 0, spec_const = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      if (inputs++)
        return lw_error(d, LW_EINVAL, "more than one input: '%s'", a);
      o->input = a;
      continue;
    }
    const char *name = a + 1 + (a[1] == '-');
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const char *v = eq ? eq + 1 : NULL;
#define IS(s) (len == sizeof s - 1 && memcmp(name, s, len) == 0)
    if (IS("o") || IS("out-dir")) {
      if (!v && i + 1 >= argc)
        return lw_error(d, LW_EINVAL, "option '-%.*s' needs a value", (int)len,
                        name);
      const char *val = v ? v : argv[++i];
      if (IS("out-dir")) {
        o->out_dir = val;
        continue;
      }
      if (lw_strvec_push(&o->tables, val))
        return lw_error(d, LW_ENOMEM, "out of memory");
      const char *comma = strchr(val, ',');
      if (!o->output || (!comma && strchr(o->output, ',')))
        o->output = val; /* a plain FILE names the files, else the first */
    } else if (IS("S")) {
      o->text = 1;
    } else if (IS("ir-output-only")) {
      o->ir_only = 1;
    } else if (IS("symbols")) {
      o->symbols = 1;
    } else if (IS("properties")) {
      /* written whatever is asked, as DPC++'s tool does */
    } else if (IS("emit-param-info")) {
      o->param_info = 1;
    } else if (IS("emit-program-metadata")) {
      o->program_metadata = 1;
    } else if (IS("device-globals")) {
      o->device_globals = 1;
      o->flags |= DL_IMAGE_SCOPE;
    } else if (IS("emit-kernel-names")) {
      o->kernel_names = 1;
    } else if (IS("emit-exported-symbols")) {
      o->flags |= DL_EMIT_EXPORTED;
    } else if (IS("emit-imported-symbols")) {
      o->flags |= DL_EMIT_IMPORTED;
    } else if (IS("support-dynamic-linking") ||
               IS("allow-device-image-dependencies")) {
      o->flags |= DL_DYNAMIC_LINKING;
    } else if (IS("emit-only-kernels-as-entry-points")) {
      o->flags &= ~(unsigned)DL_EXTERNAL_ENTRIES;
    } else if (IS("generate-device-image-default-spec-consts")) {
      o->flags |= DL_SPEC_DEFAULT;
    } else if (IS("split") && v) {
      o->split = !strcmp(v, "source")   ? DL_SPLIT_PER_SOURCE
                 : !strcmp(v, "kernel") ? DL_SPLIT_PER_KERNEL
                 : !strcmp(v, "auto")   ? DL_SPLIT_AUTO
                 : !strcmp(v, "none")   ? DL_SPLIT_OFF
                                        : (enum dl_split_mode)-1;
      if ((int)o->split < 0)
        return lw_error(d, LW_EINVAL,
                        "invalid -split value '%s' (expected source, kernel, "
                        "auto or none)",
                        v);
    } else if (IS("spec-const") && v) {
      unsigned m = !strcmp(v, "native") || !strcmp(v, "rt") ? DL_SPEC_NATIVE
                   : !strcmp(v, "emulation") || !strcmp(v, "default")
                       ? DL_SPEC_EMULATION
                       : 0;
      if (!m)
        return lw_error(d, LW_EINVAL,
                        "invalid -spec-const value '%s' (expected native, "
                        "emulation, rt or default)",
                        v);
      o->flags |= m;
      spec_const = 1;
    } else if (len == 2 && name[0] == 'O' && strchr("0123sz", name[1]) &&
               !v) {
      /* what DPC++'s tool optimizes ESIMD code with: no pass here; optLevel
       * comes from the entry points' sycl-optlevel, as there */
    } else if (IS("host-pipes")) {
      o->flags |= DL_HOST_PIPES;
    } else if (IS("split-esimd")) {
      o->flags |= DL_SPLIT_ESIMD;
    } else if (IS("safe-strip-dead-debug-info") && v && !strcmp(v, "false")) {
      /* the default: a split module keeps the debug information of its own
       * code only */
    } else if (listed(refused, name, len) || IS("safe-strip-dead-debug-info")) {
      return lw_error(d, LW_ENOTSUP,
                      "option '-%.*s' is not supported: fatlink does not do "
                      "that DPC++ pass",
                      (int)len, name);
    } else if (!listed(ignored, name, len)) {
      return lw_error(d, LW_EINVAL, "unknown option '%s'", a);
    }
#undef IS
  }
  /* DPC++'s cleanup of every module it writes: what is no entry point
   * becomes internal, and goes when nothing uses it - unless images may
   * depend on each other */
  if (!(o->flags & DL_DYNAMIC_LINKING))
    o->flags |= DL_INTERNALIZE;
  /* Without -spec-const the getters stay as they are (but a default-value
   * copy is still made when asked for). */
  if (!spec_const)
    o->flags |= DL_SPEC_KEEP;
  if (!o->output) { /* DPC++'s default: <input stem>.files (.out) here */
    const char *base = lw_base_name(o->input), *dot = strrchr(base, '.');
    int stem = dot && dot > base ? (int)(dot - base) : (int)strlen(base);
    snprintf(o->default_out, sizeof o->default_out, "%.*s%s", stem, base,
             o->ir_only ? ".out" : ".files");
    if (lw_strvec_push(&o->tables, o->default_out))
      return lw_error(d, LW_ENOMEM, "out of memory");
    o->output = o->default_out;
  }
  if (o->ir_only && o->tables.n > 1)
    return lw_error(d, LW_EINVAL, "-ir-output-only writes one file: one -o");
  if (strchr(o->output, ',')) /* TARGET,FILE only: FILE names the files */
    o->output = strchr(o->output, ',') + 1;
  return 0;
}

/* The files this run wrote, removed if a later step fails. */
struct written {
  struct lw_strvec paths;
};

static int write_out(struct written *w, const char *path, const void *p,
                     size_t n, struct lw_diag *d) {
  if (strcmp(path, "-") == 0)
    return fwrite(p, 1, n, stdout) == n ? 0
                                       : lw_error(d, LW_EIO, "cannot write "
                                                             "standard output");
  if (lw_strvec_push(&w->paths, path))
    return lw_error(d, LW_ENOMEM, "out of memory");
  return lw_write_file(path, p, n, d);
}

/* A module's IR as -S asks: text or bitcode. */
static int write_module(struct written *w, struct dl_module *m, int text,
                        const char *path, struct lw_diag *d) {
  if (text) {
    char *ir = dl_print(m);
    int rc = ir ? write_out(w, path, ir, strlen(ir), d)
                : lw_error(d, LW_ENOMEM, "out of memory");
    free(ir);
    return rc;
  }
  struct lw_buf bc = {0};
  int rc = dl_module_bitcode(m, &bc) ? lw_error(d, LW_ENOMEM, "out of memory")
                                     : write_out(w, path, bc.data, bc.len, d);
  lw_buf_free(&bc);
  return rc;
}

/* The sets DPC++ writes only when asked for. */
static int wanted(const struct pl_options *o, const char *set) {
  if (!strcmp(set, "SYCL/kernel param opt"))
    return o->param_info;
  if (!strcmp(set, "SYCL/program metadata"))
    return o->program_metadata;
  if (!strcmp(set, "SYCL/kernel names"))
    return o->kernel_names;
  if (!strcmp(set, "SYCL/device globals"))
    return o->device_globals;
  return 1;
}

static int write_props(struct written *w, const struct pl_options *o,
                       const struct dl_props *all, const char *path,
                       struct lw_diag *d) {
  struct dl_props shown = {0};
  for (size_t i = 0; i < all->n; i++) {
    const struct dl_propset *s = &all->s[i];
    if (!wanted(o, s->name))
      continue;
    shown.s[shown.n++] = *s; /* shares the properties: not freed here */
  }
  struct lw_buf text = {0};
  int rc = dl_props_write_text(&shown, &text)
               ? lw_error(d, LW_ENOMEM, "out of memory")
               : write_out(w, path, text.data, text.len, d);
  lw_buf_free(&text);
  return rc;
}

static int write_symbols(struct written *w, const struct dl_group *g,
                         const char *path, struct lw_diag *d) {
  struct lw_buf text = {0};
  int rc = 0;
  for (size_t k = 0; k < g->entries.n && !rc; k++)
    rc = lw_buf_append(&text, g->entries.v[k], strlen(g->entries.v[k])) ||
         lw_buf_append(&text, "\n", 1);
  rc = rc ? lw_error(d, LW_ENOMEM, "out of memory")
          : write_out(w, path, text.data, text.len, d);
  lw_buf_free(&text);
  return rc;
}

/* <stem>_<i>.<ext>: the output's path without its extension, in -out-dir
 * when given. */
/* OUT<part>_I.EXT; part: "_esimd" for an ESIMD module, which takes the
 * number of the module it was split from, and "_TARGET" before it for the
 * property file of a table for a TARGET, as in DPC++. */
static char *file_name(const struct pl_options *o, size_t i, const char *part,
                       const char *ext) {
  const char *base = lw_base_name(o->output);
  const char *dot = strrchr(base, '.');
  size_t stem = dot && dot > base ? (size_t)(dot - o->output)
                                  : strlen(o->output);
  if (o->out_dir)
    return lw_xasprintf("%s/%.*s%s_%zu.%s", o->out_dir,
                        (int)(stem - (size_t)(base - o->output)), base, part,
                        i, ext);
  return lw_xasprintf("%.*s%s_%zu.%s", (int)stem, o->output, part, i, ext);
}

/* A file table of -o [TARGET,]FILE: with a TARGET the device configuration
 * knows, only the modules that device can take (its aspect filter, as an
 * AOT link applies it); with any TARGET, property files of its own that
 * name it (compile_target). */
struct table {
  const char *path;
  char target[128];
  const struct aot_device *dev;
  struct lw_buf text;
};

/* Module i's row in table t: its property file for t (written here), or
 * nothing when t's device cannot take it. */
static int add_row(struct written *w, const struct pl_options *o,
                   struct table *t, const struct dl_group *g, size_t id,
                   const char *code, const char *sym, struct lw_diag *d) {
  if (t->dev) {
    uint32_t aspects[64], fixed[64];
    struct aot_reqs r;
    char why[256];
    lw_aot_reqs(&g->props, &r, aspects, fixed, 64);
    if (aot_filter(t->dev, &r, why, sizeof why))
      return 0;
  }
  /* _TARGET as DPC++ names it; an ESIMD module's keeps _esimd after it
   * (DPC++ drops it, and the module of the same number overwrites the
   * file) */
  char part[140];
  snprintf(part, sizeof part, "%s%s%s", t->target[0] ? "_" : "", t->target,
           g->esimd ? "_esimd" : "");
  char *prop = file_name(o, id, part, "prop");
  struct dl_props named = {0};
  int rc = prop ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc && t->target[0] &&
      dl_props_with_bytes(&g->props, "SYCL/device requirements",
                          "compile_target", t->target, strlen(t->target),
                          &named))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc)
    rc = write_props(w, o, t->target[0] ? &named : &g->props, prop, d);
  if (!rc && (lw_buf_append(&t->text, code, strlen(code)) ||
              lw_buf_append(&t->text, "|", 1) ||
              lw_buf_append(&t->text, prop, strlen(prop)) ||
              (sym && (lw_buf_append(&t->text, "|", 1) ||
                       lw_buf_append(&t->text, sym, strlen(sym)))) ||
              lw_buf_append(&t->text, "\n", 1)))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  dl_props_free(&named);
  free(prop);
  return rc;
}

static int run(const struct pl_options *o, struct written *w,
               struct lw_diag *d) {
  struct lw_buf in = {0};
  int rc = 0;
  if (strcmp(o->input, "-") == 0)
    rc = lw_read_stream(stdin, "<stdin>", &in, d);
  else
    rc = lw_read_file(o->input, &in, d);
  struct dl_module *m = NULL;
  struct dl_split s = {0};
  if (!rc) {
    struct dl_input input = {in.data, in.len,
                             strcmp(o->input, "-") ? o->input : "<stdin>", 0};
    dl_init();
    struct lw_strvec none = {0}; /* LLVM's options as the wrapper sets them */
    rc = dl_set_llvm_options(&none, NULL, 1, d);
    if (!rc)
      rc = dl_link(&input, 1, NULL, 1, &m, d);
  }
  /* -ir-output-only: one module, never split (as DPC++'s tool). */
  if (!rc)
    rc = dl_split(&m, o->ir_only ? DL_SPLIT_OFF : o->split, -1,
                  o->flags | DL_ALLOW_UNDEFINED, NULL, &s, d);
  if (!rc && o->ir_only) {
    struct dl_module *one = NULL;
    if (s.n == 1) /* lowered and cleaned as a split's module */
      rc = dl_split_module(&s, 0, &one, d);
    else if (!s.n)
      one = s.whole, s.whole = NULL;
    else
      rc = lw_error(d, LW_EINVAL,
                    "-ir-output-only: the device code makes %zu modules", s.n);
    if (!rc)
      rc = write_module(w, one, o->text, o->output, d);
    dl_module_free(one);
  }
  lw_buf_free(&in);
  for (size_t k = 0; !rc && k < s.warnings.n; k++)
    fprintf(stderr, "sycl-post-link: warning: %s\n", s.warnings.v[k]);
  /* the tables; the device configuration once, when one is for a TARGET */
  size_t nt = o->ir_only ? 0 : o->tables.n;
  struct table *tables = calloc(nt ? nt : 1, sizeof *tables);
  struct aot_config cfg = {0};
  if (!rc && !tables)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  int targets = 0;
  for (size_t t = 0; !rc && t < nt; t++) {
    const char *spec = o->tables.v[t], *comma = strchr(spec, ',');
    tables[t].path = comma ? comma + 1 : spec;
    if (comma) {
      snprintf(tables[t].target, sizeof tables[t].target, "%.*s",
               (int)(comma - spec), spec);
      targets = 1;
    }
    if (lw_buf_append(&tables[t].text, "[Code|Properties", 16) ||
        (o->symbols && lw_buf_append(&tables[t].text, "|Symbols", 8)) ||
        lw_buf_append(&tables[t].text, "]\n", 2))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  if (!rc && targets)
    rc = aot_config_load(&cfg, NULL, d);
  for (size_t t = 0; !rc && t < nt; t++)
    if (tables[t].target[0])
      tables[t].dev = aot_config_find(&cfg, tables[t].target);
  /* Device code without kernels is one module as it is, as in DPC++. */
  struct dl_group none = {0};
  size_t n = o->ir_only ? 0 : s.n ? s.n : s.whole ? 1 : 0;
  size_t id = 0, next_id = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    struct dl_module *gm = NULL;
    const struct dl_group *g = s.n ? &s.g[i] : &none;
    if (!g->esimd_part)
      id = next_id++;
    if (s.n)
      rc = dl_split_module(&s, i, &gm, d);
    else
      gm = s.whole, s.whole = NULL;
    const char *part = g->esimd ? "_esimd" : "";
    char *code = file_name(o, id, part, o->text ? "ll" : "bc");
    char *sym = o->symbols ? file_name(o, id, part, "sym") : NULL;
    if (!rc && (!code || (o->symbols && !sym)))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    if (!rc)
      rc = write_module(w, gm, o->text, code, d);
    dl_module_free(gm);
    if (!rc && sym)
      rc = write_symbols(w, g, sym, d);
    for (size_t t = 0; !rc && t < nt; t++)
      rc = add_row(w, o, &tables[t], g, id, code, sym, d);
    free(code);
    free(sym);
  }
  for (size_t t = 0; !rc && t < nt; t++)
    rc = write_out(w, tables[t].path, tables[t].text.data,
                   tables[t].text.len, d);
  for (size_t t = 0; t < nt; t++)
    lw_buf_free(&tables[t].text);
  free(tables);
  aot_config_free(&cfg);
  dl_split_free(&s);
  dl_module_free(m);
  return rc;
}

int lw_post_link_main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-help") ||
        !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
  struct lw_diag d = {0};
  struct pl_options o = {0};
  struct written w = {{0}};
  int rc = parse(argc, argv, &o, &d);
  if (!rc)
    rc = run(&o, &w, &d);
  if (rc) {
    for (size_t i = 0; i < w.paths.n; i++)
      unlink(w.paths.v[i]);
    lw_report_error("sycl-post-link", &d, rc);
  }
  lw_strvec_free(&w.paths);
  lw_strvec_free(&o.tables);
  return rc ? 1 : 0;
}

int lw_post_link_named(const char *argv0) {
  return strcmp(lw_base_name(argv0), "sycl-post-link") == 0;
}
