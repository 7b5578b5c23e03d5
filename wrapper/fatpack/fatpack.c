/* fatpack.c - look inside fat files and make them: the second binary, built
 * from the same libraries as fatlink.
 *   fatpack list [--json] FILE...       every image: container, format, kind,
 *                                       image kind, triple, arch, size,
 * strings; and the SYCL images a linked program registers, with their property
 * sets fatpack extract FILE... -o DIR      one file per image, predictable
 * names fatpack create --image=file=F,triple=T[,arch=A][,kind=K][,key=V...]...
 *                  -o OUT [--format=offload|bundle] [--compress[=zstd|zlib]]
 *   fatpack cache stats|clear|prune [--cache-dir=DIR] [--cache-size=N]
 *                                       fatlink's cache of device results
 *   fatpack device-config [--device-config-file=F] [NAME]
 *                                       the device configuration fatlink uses
 *                                       (built in, F over it) as YAML
 * Files are found by content, like fatlink does. Every output is written to a
 * temporary beside it and renamed when complete; names come from the image's
 * metadata with anything but [A-Za-z0-9._-] replaced, so nothing is written
 * outside DIR whatever a container calls its members. */
#include "lw_base.h"
#include "cache/cache.h"
#include "fatpack/postlink.h"
#include "run/run.h"

#include "aot.h"
#include "dl.h"
#include "ex.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A JSON string of n bytes: as they are when they are UTF-8, else each
 * byte as the character of its value (Latin-1), as binaries' strings may
 * be anything. NULL when out of memory. */
static json_t *jstr(const char *s, size_t n) {
  json_t *j = json_stringn(s, n);
  if (j)
    return j;
  char *u = malloc(2 * n + 1);
  size_t k = 0;
  for (size_t i = 0; u && i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
      u[k++] = (char)c;
    } else {
      u[k++] = (char)(0xc0 | c >> 6);
      u[k++] = (char)(0x80 | (c & 0x3f));
    }
  }
  j = u ? json_stringn(u, k) : NULL;
  free(u);
  return j;
}

/* Prints ", symbols=a b c" and returns 1 when `v` is LLVM 23's symbols
 * table of a SYCL image (ex_read_symbol_table). */
static int symbol_table(FILE *f, const unsigned char *v, size_t n) {
  size_t count = ex_read_symbol_table(v, n);
  if (count == SIZE_MAX)
    return 0;
  fputs(", symbols=", f);
  for (size_t k = 0; k < count; k++) {
    struct ex_symbol s = ex_symbol_at(v, k);
    fprintf(f, "%s%.*s", k ? " " : "", (int)s.len, s.name);
  }
  return 1;
}

/* An image as a JSON object (NULL when out of memory). */
static json_t *image_json(const struct ex_image *img) {
  json_t *strings = json_object();
  for (size_t i = 0; strings && i < img->nstrings; i++)
    if (json_object_set_new(strings, img->strings[i].key,
                            jstr(img->strings[i].value,
                                 img->strings[i].value_len)))
      json_decref(strings), strings = NULL;
  return json_pack("{s:o, s:s, s:s, s:s, s:I, s:b, s:o}", "container",
                   jstr(img->origin, strlen(img->origin)), "format",
                   img->format ? img->format : "", "kind",
                   ex_offload_kind_name(img->offload_kind), "image",
                   ex_image_kind_name(img->image_kind), "size",
                   (json_int_t)img->size, "linked", img->linked, "strings",
                   strings);
}

static void list_image(FILE *f, const struct ex_image *img) {
  fprintf(f, "%s: %s, kind %s, image %s, triple %s, arch %s, %zu bytes",
          img->origin, img->format ? img->format : "?",
          ex_offload_kind_name(img->offload_kind),
          ex_image_kind_name(img->image_kind),
          img->triple[0] ? img->triple : "-", img->arch[0] ? img->arch : "-",
          img->size);
  for (size_t i = 0; i < img->nstrings; i++) {
    const struct ex_string *s = &img->strings[i];
    if (strcmp(s->key, "triple") == 0 || strcmp(s->key, "arch") == 0)
      continue;
    if (img->version >= 2 && strcmp(s->key, "symbols") == 0 &&
        symbol_table(f, (const unsigned char *)s->value, s->value_len))
      continue;
    fprintf(f, ", %s=%.*s", s->key, (int)s->value_len, s->value);
  }
  if (img->linked)
    fputs(", linked", f);
  fputc('\n', f);
}

/* The property sets of a registered image in fatlink's text form. */
static int props_text(const struct ex_wrapped_image *im, struct lw_buf *out) {
  struct dl_props p = {0};
  int rc = 0;
  for (size_t i = 0; !rc && i < im->nsets && p.n < LW_ARRAY_SIZE(p.s); i++) {
    const struct ex_wrapped_set *ws = &im->sets[i];
    struct dl_propset *ps = &p.s[p.n++];
    ps->name = ws->name;
    if (ws->n && !(ps->p = calloc(ws->n, sizeof *ps->p)))
      rc = LW_ENOMEM;
    for (size_t k = 0; !rc && k < ws->n; k++) {
      struct dl_prop *pr = &ps->p[ps->n++];
      pr->type = ws->p[k].type;
      pr->u32 = (uint32_t)ws->p[k].value;
      if (!(pr->name = strdup(ws->p[k].name)) ||
          (pr->type != DL_PROP_UINT32 &&
           lw_buf_append(&pr->bytes, ws->p[k].data, ws->p[k].value)))
        rc = LW_ENOMEM;
    }
  }
  if (!rc)
    rc = dl_props_write_text(&p, out);
  dl_props_free(&p);
  return rc;
}

static const char *image_format(uint8_t f) {
  return f == 1 ? "native" : f == 2 ? "SPIR-V" : f == 3 ? "LLVM IR" : "none";
}

/* The SYCL images a linked program registers (a DPC++ descriptor): each
 * with its kernels and property sets. */
static int list_registered(FILE *f, const char *path, json_t *json,
                           struct lw_diag *d) {
  struct lw_buf file = {0};
  struct ex_wrapped w;
  int rc = lw_read_file(path, &file, d);
  if (!rc)
    rc = ex_wrapped_read(file.data, file.len, path, &w, d);
  for (size_t i = 0; !rc && i < w.n; i++) {
    const struct ex_wrapped_image *im = &w.img[i];
    struct lw_buf text = {0};
    if ((rc = props_text(im, &text) ? lw_error(d, LW_ENOMEM, "out of memory")
                                    : 0))
      break;
    if (json) {
      json_t *entries = json_array();
      for (size_t k = 0; entries && k < im->nentries; k++)
        if (json_array_append_new(entries, jstr(im->entries[k],
                                                strlen(im->entries[k]))))
          json_decref(entries), entries = NULL;
      json_t *o = json_pack(
          "{s:o, s:I, s:o, s:s, s:I, s:o, s:o}", "container",
          jstr(path, strlen(path)), "registered", (json_int_t)i, "target",
          jstr(im->target, strlen(im->target)), "format",
          image_format(im->format), "size", (json_int_t)im->size, "entries",
          entries, "properties", jstr((const char *)text.data, text.len));
      if (!o || json_array_append_new(json, o))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    } else {
      fprintf(f,
              "%s: registered SYCL image %zu, target %s, %s, %zu bytes, "
              "%zu entr%s",
              path, i, im->target, image_format(im->format), im->size,
              im->nentries, im->nentries == 1 ? "y" : "ies");
      for (size_t k = 0; k < im->nentries; k++)
        fprintf(f, "%s%s", k ? " " : ": ", im->entries[k]);
      fputc('\n', f);
      for (size_t at = 0; at < text.len;) {
        const char *line = (const char *)text.data + at;
        size_t n = strcspn(line, "\n");
        fprintf(f, "    %.*s\n", (int)n, line);
        at += n + 1;
      }
    }
    lw_buf_free(&text);
  }
  if (!rc)
    ex_wrapped_free(&w);
  lw_buf_free(&file);
  return rc;
}

static int scan_all(char **files, int n, struct ex_set *set,
                    struct lw_diag *d) {
  for (int i = 0; i < n; i++) {
    int rc = ex_scan_file(set, files[i], d);
    if (rc)
      return rc;
  }
  return 0;
}

static int cmd_list(int argc, char **argv, struct lw_diag *d) {
  int json = 0, nfiles = 0;
  char **files = calloc((size_t)argc + 1, sizeof *files);
  if (!files)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = 1;
    else
      files[nfiles++] = argv[i];
  }
  int rc = nfiles ? 0 : lw_error(d, LW_EINVAL, "list: no input files");
  struct ex_set set = {0};
  if (!rc)
    rc = scan_all(files, nfiles, &set, d);
  json_t *all = json ? json_array() : NULL;
  if (!rc && json && !all)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < set.n; i++) {
    if (!json)
      list_image(stdout, &set.images[i]);
    else if (json_array_append_new(all, image_json(&set.images[i])))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  for (int i = 0; !rc && i < nfiles; i++)
    rc = list_registered(stdout, files[i], all, d);
  if (!rc && json &&
      (json_dumpf(all, stdout, JSON_INDENT(2)) ||
       fputc('\n', stdout) == EOF))
    rc = lw_error(d, LW_EIO, "cannot write the list");
  json_decref(all);
  ex_set_free(&set);
  free(files);
  return rc;
}

/* Replaces every byte but [A-Za-z0-9._-] with '_'; a leading '.' too, so no
 * name is hidden, "." or "..". */
static void sanitize(char *s) {
  for (char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
      *p = '_';
  if (s[0] == '.')
    s[0] = '_';
}

static int write_atomic(const char *path, const void *p, size_t n,
                        struct lw_diag *d) {
  struct lw_tmp *t;
  int rc = lw_tmp_create_beside(path, &t, d);
  if (rc)
    return rc;
  FILE *f = fopen(lw_tmp_path(t), "wb");
  if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
    lw_tmp_cleanup();
    return lw_error_path(d, LW_EIO, path, "cannot write: %s", strerror(errno));
  }
  return lw_tmp_commit(&t, path, d);
}

static int cmd_extract(int argc, char **argv, struct lw_diag *d) {
  const char *dir = NULL;
  int nfiles = 0;
  char **files = calloc((size_t)argc + 1, sizeof *files);
  if (!files)
    return lw_error(d, LW_ENOMEM, "out of memory");
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      dir = argv[++i];
    else
      files[nfiles++] = argv[i];
  }
  int rc = 0;
  if (!dir || !nfiles)
    rc = lw_error(d, LW_EINVAL, "extract: usage: fatpack extract FILE... -o DIR");
  struct stat st;
  if (!rc && mkdir(dir, 0777) != 0 && errno != EEXIST)
    rc = lw_error_path(d, LW_EIO, dir, "cannot create: %s", strerror(errno));
  if (!rc && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
    rc = lw_error_path(d, LW_EIO, dir, "not a directory");
  struct ex_set set = {0};
  if (!rc)
    rc = scan_all(files, nfiles, &set, d);
  for (size_t i = 0; !rc && i < set.n; i++) {
    const struct ex_image *img = &set.images[i];
    /* The container file's base name, then any member names as they are
     * (sanitize() below makes every '/' in them harmless). */
    const char *paren = strchr(img->origin, '('), *base = img->origin;
    for (const char *p = img->origin; *p && (!paren || p < paren); p++)
      if (*p == '/')
        base = p + 1;
    char *name = lw_xasprintf("%s.%zu.%s.%s.%s.%s", base,
                              i, ex_offload_kind_name(img->offload_kind),
                              img->triple[0] ? img->triple : "none",
                              img->arch[0] ? img->arch : "generic",
                              img->image_kind ? ex_image_kind_name(img->image_kind)
                                              : "bin");
    char *path = NULL;
    if (name) {
      sanitize(name);
      path = lw_xasprintf("%s/%s", dir, name);
    }
    rc = path ? write_atomic(path, img->data, img->size, d)
              : lw_error(d, LW_ENOMEM, "out of memory");
    if (!rc)
      printf("%s\n", path);
    free(name);
    free(path);
  }
  ex_set_free(&set);
  free(files);
  return rc;
}

struct image_spec {
  struct lw_strvec kv; /* "key", "value" pairs */
  const char *file, *kind, *triple, *arch, *image;
  struct lw_buf data;
};

static const char *kv_get(const struct lw_strvec *kv, const char *key) {
  const char *v = NULL;
  for (size_t i = 0; i + 1 < kv->n; i += 2)
    if (strcmp(kv->v[i], key) == 0)
      v = kv->v[i + 1];
  return v;
}

static int parse_image(const char *spec, struct image_spec *im,
                       struct lw_diag *d) {
  struct lw_strvec pieces = {0};
  int rc = lw_strvec_split(&pieces, spec, ',') ? LW_ENOMEM : 0;
  if (rc)
    lw_error(d, rc, "out of memory");
  for (size_t i = 0; !rc && i < pieces.n; i++) {
    char *p = pieces.v[i], *eq = strchr(p, '=');
    if (!eq || eq == p)
      rc = lw_error(d, LW_EINVAL, "--image: '%s' is not key=value", p);
    else {
      *eq = 0;
      if (lw_strvec_push(&im->kv, p) || lw_strvec_push(&im->kv, eq + 1))
        rc = lw_error(d, LW_ENOMEM, "out of memory");
    }
  }
  lw_strvec_free(&pieces);
  if (rc)
    return rc;
  im->file = kv_get(&im->kv, "file");
  im->kind = kv_get(&im->kv, "kind");
  im->triple = kv_get(&im->kv, "triple");
  im->arch = kv_get(&im->kv, "arch");
  im->image = kv_get(&im->kv, "image");
  if (!im->file || !im->triple)
    return lw_error(d, LW_EINVAL, "--image: 'file' and 'triple' are required");
  return lw_read_file(im->file, &im->data, d);
}

static const char *const offload_kinds[] = {"none", "openmp", "cuda", "hip",
                                            "sycl"};
static const uint16_t offload_values[] = {EX_OFK_NONE, EX_OFK_OPENMP,
                                          EX_OFK_CUDA, EX_OFK_HIP,
                                          EX_OFK_SYCL};
static const char *const image_kinds[] = {"none", "o",      "bc", "cubin",
                                          "fatbin", "s", "spv"};

/* Image kind: image=<name>, else the file's extension (as
 * llvm-offload-binary does). */
static uint16_t image_kind_of(const struct image_spec *im) {
  const char *name = im->image;
  if (!name) {
    const char *dot = strrchr(im->file, '.');
    name = dot ? dot + 1 : "";
  }
  for (size_t i = 0; i < LW_ARRAY_SIZE(image_kinds); i++)
    if (strcmp(name, image_kinds[i]) == 0)
      return (uint16_t)i;
  return EX_IMG_NONE;
}

static int write_offload(struct image_spec *ims, size_t n, struct lw_buf *out,
                         struct lw_diag *d) {
  for (size_t i = 0; i < n; i++) {
    struct image_spec *im = &ims[i];
    uint16_t kind = EX_OFK_NONE;
    if (im->kind) {
      size_t k;
      for (k = 0; k < LW_ARRAY_SIZE(offload_kinds); k++)
        if (strcmp(im->kind, offload_kinds[k]) == 0)
          break;
      if (k == LW_ARRAY_SIZE(offload_kinds))
        return lw_error(d, LW_EINVAL, "--image: unknown kind '%s'", im->kind);
      kind = offload_values[k];
    }
    size_t ns = 0;
    struct ex_string strs[64];
    for (size_t j = 0; j + 1 < im->kv.n; j += 2) {
      const char *k = im->kv.v[j];
      if (!strcmp(k, "file") || !strcmp(k, "kind") || !strcmp(k, "image"))
        continue;
      if (ns == LW_ARRAY_SIZE(strs))
        return lw_error(d, LW_EINVAL, "--image: too many strings");
      strs[ns++] = (struct ex_string){im->kv.v[j], im->kv.v[j + 1],
                                      strlen(im->kv.v[j + 1])};
    }
    struct ex_write_image wi = {image_kind_of(im), kind, 0, strs, ns,
                                im->data.data, im->data.len};
    if (ex_write_offload_binary(&wi, out, NULL))
      return lw_error(d, LW_ENOMEM, "out of memory");
  }
  return 0;
}

static int write_bundle(struct image_spec *ims, size_t n, struct lw_buf *out,
                        struct lw_diag *d) {
  struct ex_bundle_entry *e = calloc(n, sizeof *e);
  if (!e)
    return lw_error(d, LW_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    char *id = ex_bundle_id(ims[i].kind ? ims[i].kind : "host", ims[i].triple,
                            ims[i].arch);
    if (!id)
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    e[i] = (struct ex_bundle_entry){id, ims[i].data.data, ims[i].data.len};
  }
  if (!rc && ex_write_bundle(e, n, out))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    free((char *)e[i].id);
  free(e);
  return rc;
}

static int cmd_create(int argc, char **argv, struct lw_diag *d) {
  const char *out = NULL, *format = "offload", *compress = NULL;
  struct image_spec *ims = calloc((size_t)argc + 1, sizeof *ims);
  size_t n = 0;
  int rc = ims ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
  for (int i = 0; !rc && i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--image=", 8) == 0)
      rc = parse_image(a + 8, &ims[n++], d);
    else if (strcmp(a, "-o") == 0 && i + 1 < argc)
      out = argv[++i];
    else if (strncmp(a, "--format=", 9) == 0)
      format = a + 9;
    else if (strcmp(a, "--compress") == 0)
      compress = "zstd";
    else if (strncmp(a, "--compress=", 11) == 0)
      compress = a + 11;
    else
      rc = lw_error(d, LW_EINVAL, "create: unknown argument '%s'", a);
  }
  if (!rc && (!out || !n))
    rc = lw_error(d, LW_EINVAL, "create: usage: fatpack create --image=... -o OUT");
  if (!rc && strcmp(format, "offload") != 0 && strcmp(format, "bundle") != 0)
    rc = lw_error(d, LW_EINVAL, "create: unknown --format '%s'", format);
  if (!rc && compress &&
      (strcmp(format, "bundle") != 0 ||
       (strcmp(compress, "zstd") != 0 && strcmp(compress, "zlib") != 0)))
    rc = lw_error(d, LW_EINVAL,
                  "create: --compress=zstd|zlib needs --format=bundle");
  struct lw_buf buf = {0};
  if (!rc)
    rc = strcmp(format, "bundle") == 0 ? write_bundle(ims, n, &buf, d)
                                       : write_offload(ims, n, &buf, d);
  if (!rc && compress) {
    struct lw_buf z = {0};
    if (ex_write_compressed_bundle(buf.data, buf.len,
                                   strcmp(compress, "zstd") == 0, &z))
      rc = lw_error(d, LW_EIO, "create: compression failed");
    lw_buf_free(&buf);
    buf = z;
  }
  if (!rc)
    rc = write_atomic(out, buf.data, buf.len, d);
  lw_buf_free(&buf);
  for (size_t i = 0; ims && i < n; i++) {
    lw_strvec_free(&ims[i].kv);
    lw_buf_free(&ims[i].data);
  }
  free(ims);
  return rc;
}

static int cmd_device_config(int argc, char **argv, struct lw_diag *d) {
  const char *file = NULL, *name = NULL;
  static const char opt[] = "--device-config-file=";
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], opt, sizeof opt - 1) == 0)
      file = argv[i] + sizeof opt - 1;
    else if (argv[i][0] != '-' && !name)
      name = argv[i];
    else
      return lw_error(d, LW_EINVAL, "device-config: usage: fatpack "
                      "device-config [--device-config-file=F] [NAME]");
  }
  struct aot_config c;
  int rc = aot_config_load(&c, file, d);
  for (size_t i = 0; i < c.warnings.n; i++)
    fprintf(stderr, "fatpack: warning: %s\n", c.warnings.v[i]);
  if (!rc)
    rc = aot_config_write(&c, name, stdout, d);
  aot_config_free(&c);
  return rc;
}

static void usage(FILE *f) {
  fputs("USAGE: fatpack list [--json] FILE...\n"
        "       fatpack extract FILE... -o DIR\n"
        "       fatpack create --image=file=F,triple=T[,arch=A][,kind=K]"
        "[,image=I][,key=V...]... -o OUT\n"
        "                      [--format=offload|bundle] "
        "[--compress[=zstd|zlib]]\n"
        "       fatpack device-config [--device-config-file=F] [NAME]\n"
        "       fatpack cache stats|clear|prune [--cache-dir=DIR] "
        "[--cache-size=N] [--json]\n"
        "       fatpack post-link [sycl-post-link's options] INPUT -o TABLE\n",
        f);
}

/* fatpack cache stats|clear|prune [--cache-dir=DIR] [--cache-size=N]: the
 * cache fatlink keeps device results in (FATLINK_CACHE_DIR when no
 * --cache-dir). */
static int cmd_cache(int argc, char **argv, struct lw_diag *d) {
  const char *dir = getenv("FATLINK_CACHE_DIR"), *what = NULL;
  uint64_t size = (uint64_t)5 << 30;
  int rc = 0, json = 0;
  for (int i = 0; !rc && i < argc; i++) {
    if (!strncmp(argv[i], "--cache-dir=", 12))
      dir = argv[i] + 12;
    else if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (!strncmp(argv[i], "--cache-size=", 13))
      rc = lw_parse_size("--cache-size", argv[i] + 13, &size, d);
    else if (!what && (!strcmp(argv[i], "stats") || !strcmp(argv[i], "clear") ||
                       !strcmp(argv[i], "prune")))
      what = argv[i];
    else
      rc = lw_error(d, LW_EINVAL, "cache: unexpected argument '%s'", argv[i]);
  }
  if (!rc && (!what || !dir || !*dir))
    rc = lw_error(d, LW_EINVAL,
                  "cache: usage: fatpack cache stats|clear|prune "
                  "[--cache-dir=DIR] [--cache-size=N] [--json] (or "
                  "FATLINK_CACHE_DIR)");
  struct stat st;
  if (!rc && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
    rc = lw_error_path(d, LW_EIO, dir, "no cache directory there");
  if (rc)
    return rc;
  struct lw_cache_stats cs;
  size_t removed = 0;
  if (!strcmp(what, "stats"))
    rc = lw_cache_stats(dir, &cs);
  else
    rc = lw_cache_prune(dir, what[0] == 'c' ? 0 : size, &removed);
  if (rc)
    return lw_error(d, rc, "out of memory");
  if (json) {
    json_t *j =
        what[0] != 's'
            ? json_pack("{s:s, s:I}", "dir", dir, "removed",
                        (json_int_t)removed)
            : json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "dir",
                        dir, "entries", (json_int_t)cs.entries, "bytes",
                        (json_int_t)cs.bytes, "local_hits",
                        (json_int_t)cs.n[LW_CACHE_LOCAL_HITS], "remote_hits",
                        (json_int_t)cs.n[LW_CACHE_REMOTE_HITS], "misses",
                        (json_int_t)cs.n[LW_CACHE_MISSES], "remote_stores",
                        (json_int_t)cs.n[LW_CACHE_REMOTE_STORED],
                        "remote_errors",
                        (json_int_t)cs.n[LW_CACHE_REMOTE_ERRORS]);
    if (!j || json_dumpf(j, stdout, JSON_INDENT(2)) || putchar('\n') == EOF)
      rc = lw_error(d, LW_EIO, "cannot write the stats");
    json_decref(j);
  } else if (what[0] == 's') {
    printf("%s: %zu entries, %llu bytes\n"
           "%llu local hits, %llu remote hits, %llu misses, %llu remote "
           "stores, %llu remote errors\n",
           dir, cs.entries, (unsigned long long)cs.bytes,
           (unsigned long long)cs.n[LW_CACHE_LOCAL_HITS],
           (unsigned long long)cs.n[LW_CACHE_REMOTE_HITS],
           (unsigned long long)cs.n[LW_CACHE_MISSES],
           (unsigned long long)cs.n[LW_CACHE_REMOTE_STORED],
           (unsigned long long)cs.n[LW_CACHE_REMOTE_ERRORS]);
  } else {
    printf("%s: %zu entries removed\n", dir, removed);
  }
  return rc;
}

int main(int argc, char **argv) {
  struct lw_diag d = {0};
  int rc;
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2;
  }
  if (!strcmp(argv[1], "post-link"))
    return lw_post_link_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "list"))
    rc = cmd_list(argc - 2, argv + 2, &d);
  else if (!strcmp(argv[1], "extract"))
    rc = cmd_extract(argc - 2, argv + 2, &d);
  else if (!strcmp(argv[1], "create"))
    rc = cmd_create(argc - 2, argv + 2, &d);
  else if (!strcmp(argv[1], "device-config"))
    rc = cmd_device_config(argc - 2, argv + 2, &d);
  else if (!strcmp(argv[1], "cache"))
    rc = cmd_cache(argc - 2, argv + 2, &d);
  else
    rc = lw_error(&d, LW_EINVAL,
                  "unknown command '%s' (list, extract, create, device-config, "
                  "cache, post-link)",
                  argv[1]);
  if (rc) {
    lw_tmp_cleanup();
    fprintf(stderr, "fatpack: error: %s\n", d.msg[0] ? d.msg : lw_strerror(rc));
    return 1;
  }
  return 0;
}
