/* config.c - the device configuration: the built-in table (aot/devices.json,
 * turned into C by cmake/DeviceConfig.cmake) and a user's YAML file over it
 * ("Implementation Design for Device Configuration File"):
 *   intel_gpu_skl:
 *     aspects: [fp16, 6, atomic64]      # names or numbers
 *     may_support_other_aspects: false
 *     sub-group-sizes: [8, 16, 32]
 *     aot-toolchain: ocloc
 *     aot-toolchain-options: -device skl
 * The file is read with libyaml's event parser, which gives every event's
 * position; anything but this shape is refused where it starts, so deep
 * nesting, anchors and aliases never build up. */
#include "aot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

struct aot__builtin {
  const char *name;
  int other;
  const unsigned *aspects;
  size_t naspects;
  const unsigned *sg;
  size_t nsg;
  const char *toolchain, *options;
};

#include "aot_devices.inc"

/* Limits far beyond any real table, so a hostile file costs little. */
enum { MAX_FILE = 1 << 20, MAX_LIST = 256, MAX_TARGETS = 2048 };

static const char *const keys[] = {"aspects", "may_support_other_aspects",
                                   "sub-group-sizes", "aot-toolchain",
                                   "aot-toolchain-options"};

/* ---- the table ----------------------------------------------------------- */

static void device_free(struct aot_device *e) {
  free(e->name);
  free(e->aspects);
  free(e->sg_sizes);
  free(e->toolchain);
  free(e->options);
  memset(e, 0, sizeof *e);
}

static int copy_list(unsigned **out, const unsigned *v, size_t n) {
  *out = NULL;
  if (!n)
    return 0;
  if (!(*out = malloc(n * sizeof **out)))
    return LW_ENOMEM;
  memcpy(*out, v, n * sizeof **out);
  return 0;
}

/* intel_gpu_<name>: ocloc, "-device <name>", unless the entry says. */
static int auto_detect(struct aot_device *e) {
  static const char prefix[] = "intel_gpu_";
  if (strncmp(e->name, prefix, sizeof prefix - 1) != 0)
    return 0;
  if (!e->toolchain[0]) {
    free(e->toolchain);
    if (!(e->toolchain = strdup("ocloc")))
      return LW_ENOMEM;
  }
  if (!e->options[0]) {
    free(e->options);
    if (!(e->options = lw_xasprintf("-device %s", e->name + sizeof prefix - 1)))
      return LW_ENOMEM;
  }
  return 0;
}

static int from_builtin(struct aot_device *e, const struct aot__builtin *b) {
  memset(e, 0, sizeof *e);
  e->may_support_other_aspects = b->other;
  e->naspects = b->naspects;
  e->nsg = b->nsg;
  if (!(e->name = strdup(b->name)) || !(e->toolchain = strdup(b->toolchain)) ||
      !(e->options = strdup(b->options)) ||
      copy_list(&e->aspects, b->aspects, b->naspects) ||
      copy_list(&e->sg_sizes, b->sg, b->nsg)) {
    device_free(e);
    return LW_ENOMEM;
  }
  return 0;
}

static const struct aot__builtin *builtin(const char *name) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(aot__builtins); i++)
    if (strcmp(aot__builtins[i].name, name) == 0)
      return &aot__builtins[i];
  return NULL;
}

static size_t position(const struct aot_config *c, const char *name) {
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (strcmp(c->v[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

const struct aot_device *aot_config_find(const struct aot_config *c,
                                         const char *name) {
  size_t i = position(c, name);
  return i < c->n && strcmp(c->v[i].name, name) == 0 ? &c->v[i] : NULL;
}

/* Puts `e` in the table (taking its contents), replacing an entry of the
 * same name. */
static int put(struct aot_config *c, struct aot_device *e) {
  size_t i = position(c, e->name);
  if (i < c->n && strcmp(c->v[i].name, e->name) == 0) {
    device_free(&c->v[i]);
  } else {
    if (lw_grow(&c->v, c->n, &c->cap, sizeof *c->v, 128))
      return LW_ENOMEM;
    memmove(&c->v[i + 1], &c->v[i], (c->n - i) * sizeof *c->v);
    c->n++;
  }
  c->v[i] = *e;
  memset(e, 0, sizeof *e);
  return 0;
}

/* ---- the user's file ------------------------------------------------------ */

struct reader {
  const char *file;
  yaml_parser_t parser;
  yaml_event_t ev;
  int have; /* ev holds an event to delete */
  struct aot_config *c;
  struct lw_diag *d;
};

static int fail(struct reader *r, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct reader *r, const yaml_mark_t *m, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return lw_error(r->d, LW_EFORMAT, "%s:%zu:%zu: %s", r->file, m->line + 1,
                  m->column + 1, msg);
}

/* The next event; anchors and aliases are refused here, for every event. */
static int next(struct reader *r) {
  if (r->have)
    yaml_event_delete(&r->ev);
  r->have = 0;
  if (!yaml_parser_parse(&r->parser, &r->ev)) {
    yaml_mark_t m = r->parser.problem_mark;
    return fail(r, &m, "invalid YAML: %s",
                r->parser.problem ? r->parser.problem : "parse error");
  }
  r->have = 1;
  const yaml_event_t *e = &r->ev;
  const yaml_char_t *anchor =
      e->type == YAML_SCALAR_EVENT           ? e->data.scalar.anchor
      : e->type == YAML_SEQUENCE_START_EVENT ? e->data.sequence_start.anchor
      : e->type == YAML_MAPPING_START_EVENT  ? e->data.mapping_start.anchor
                                             : NULL;
  if (e->type == YAML_ALIAS_EVENT || anchor)
    return fail(r, &e->start_mark,
                "anchors and aliases are not supported in a device "
                "configuration file");
  return 0;
}

static const char *scalar(const struct reader *r) {
  return (const char *)r->ev.data.scalar.value;
}

static int plain(const struct reader *r) {
  return r->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static int expect(struct reader *r, yaml_event_type_t t, const char *what) {
  if (r->ev.type != t)
    return fail(r, &r->ev.start_mark, "expected %s", what);
  return 0;
}

/* A plain decimal number in [lo, hi]. */
static int number(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi || (*s == '0' && s[1]))
    return 0;
  *out = v;
  return 1;
}

/* A flow or block sequence of aspects (names or numbers) or of sub-group
 * sizes, starting at the current event. */
static int read_list(struct reader *r, int aspects, unsigned **out,
                     size_t *n) {
  const char *what = aspects ? "a list of aspects" : "a list of sub-group sizes";
  int rc = expect(r, YAML_SEQUENCE_START_EVENT, what);
  free(*out);
  *out = NULL;
  *n = 0;
  size_t cap = 0;
  while (!rc && !(rc = next(r)) && r->ev.type != YAML_SEQUENCE_END_EVENT) {
    if ((rc = expect(r, YAML_SCALAR_EVENT,
                     aspects ? "an aspect name or number"
                             : "a sub-group size")))
      break;
    long v = -1;
    const char *s = scalar(r);
    if (aspects) {
      if (plain(r) && number(s, 0, 1 << 20, &v)) {
        if (!lw_aspect_name(v))
          rc = fail(r, &r->ev.start_mark, "unknown aspect number %ld", v);
      } else if ((v = lw_aspect_number(s, strlen(s))) < 0) {
        rc = fail(r, &r->ev.start_mark, "unknown aspect '%s'", s);
      }
    } else if (!plain(r) || !number(s, 1, 4096, &v)) {
      rc = fail(r, &r->ev.start_mark,
                "'%s' is not a sub-group size (an integer from 1 to 4096)", s);
    }
    if (!rc && *n == MAX_LIST)
      rc = fail(r, &r->ev.start_mark, "more than %d values", MAX_LIST);
    if (!rc && lw_grow(out, *n, &cap, sizeof **out, 8))
      rc = lw_error(r->d, LW_ENOMEM, "out of memory");
    if (!rc)
      (*out)[(*n)++] = (unsigned)v;
  }
  return rc;
}

static int read_string(struct reader *r, const char *key, char **out) {
  if (r->ev.type != YAML_SCALAR_EVENT)
    return fail(r, &r->ev.start_mark, "'%s' expects a string", key);
  free(*out);
  *out = strdup(scalar(r));
  return *out ? 0 : lw_error(r->d, LW_ENOMEM, "out of memory");
}

static int read_bool(struct reader *r, int *out) {
  static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES"};
  static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO"};
  if (r->ev.type == YAML_SCALAR_EVENT && plain(r))
    for (size_t i = 0; i < LW_ARRAY_SIZE(yes); i++) {
      if (strcmp(scalar(r), yes[i]) == 0)
        return *out = 1, 0;
      if (strcmp(scalar(r), no[i]) == 0)
        return *out = 0, 0;
    }
  return fail(r, &r->ev.start_mark,
              "'may_support_other_aspects' expects true or false");
}

/* One target's mapping, over its current entry (or the built-in one, or
 * nothing). */
static int read_entry(struct reader *r, const char *name,
                      const yaml_mark_t *at) {
  struct aot_device e = {0};
  const struct aot_device *cur = aot_config_find(r->c, name);
  const struct aot__builtin *b = builtin(name);
  int rc = 0;
  if (cur && cur->from_user) {
    char *w = lw_xasprintf("%s:%zu:%zu: target '%s' is given twice; the later "
                           "entry wins",
                           r->file, at->line + 1, at->column + 1, name);
    if (!w || lw_strvec_push(&r->c->warnings, w))
      rc = LW_ENOMEM;
    free(w);
  }
  if (!rc)
    rc = b ? from_builtin(&e, b) : 0;
  if (!rc && !b &&
      (!(e.name = strdup(name)) || !(e.toolchain = strdup("")) ||
       !(e.options = strdup(""))))
    rc = LW_ENOMEM;
  if (rc) {
    device_free(&e);
    return lw_error(r->d, LW_ENOMEM, "out of memory");
  }
  if (r->ev.type != YAML_MAPPING_START_EVENT)
    rc = fail(r, &r->ev.start_mark,
              "target '%s' expects a mapping of its properties (%s, ...)",
              name, keys[0]);
  unsigned seen = 0;
  while (!rc && !(rc = next(r)) && r->ev.type != YAML_MAPPING_END_EVENT) {
    if ((rc = expect(r, YAML_SCALAR_EVENT, "a property name")))
      break;
    size_t k;
    for (k = 0; k < LW_ARRAY_SIZE(keys); k++)
      if (strcmp(scalar(r), keys[k]) == 0)
        break;
    if (k == LW_ARRAY_SIZE(keys)) {
      rc = fail(r, &r->ev.start_mark,
                "unknown key '%s' (known: aspects, may_support_other_aspects, "
                "sub-group-sizes, aot-toolchain, aot-toolchain-options)",
                scalar(r));
      break;
    }
    if (seen & (1u << k)) {
      rc = fail(r, &r->ev.start_mark, "key '%s' is given twice", keys[k]);
      break;
    }
    seen |= 1u << k;
    if ((rc = next(r)))
      break;
    switch (k) {
    case 0: rc = read_list(r, 1, &e.aspects, &e.naspects); break;
    case 1: rc = read_bool(r, &e.may_support_other_aspects); break;
    case 2: rc = read_list(r, 0, &e.sg_sizes, &e.nsg); break;
    case 3: rc = read_string(r, keys[k], &e.toolchain); break;
    default: rc = read_string(r, keys[k], &e.options); break;
    }
  }
  e.from_user = 1;
  if (!rc && auto_detect(&e))
    rc = lw_error(r->d, LW_ENOMEM, "out of memory");
  if (!rc && put(r->c, &e))
    rc = lw_error(r->d, LW_ENOMEM, "out of memory");
  device_free(&e);
  return rc;
}

static int read_file(struct aot_config *c, const char *file, FILE *f,
                     struct lw_diag *d) {
  struct reader r = {.file = file, .c = c, .d = d};
  if (!yaml_parser_initialize(&r.parser))
    return lw_error(d, LW_ENOMEM, "out of memory");
  yaml_parser_set_input_file(&r.parser, f);
  int rc = next(&r) || expect(&r, YAML_STREAM_START_EVENT, "a YAML stream") ||
           next(&r);
  rc = rc ? d->code : 0;
  if (!rc && r.ev.type == YAML_DOCUMENT_START_EVENT) {
    rc = next(&r);
    /* An empty document is an empty mapping. */
    int empty = !rc && r.ev.type == YAML_SCALAR_EVENT && plain(&r) &&
                !*scalar(&r);
    if (!rc && !empty)
      rc = expect(&r, YAML_MAPPING_START_EVENT,
                  "a mapping from target names to their properties");
    for (size_t n = 0; !rc && !empty && !(rc = next(&r)) &&
                       r.ev.type != YAML_MAPPING_END_EVENT;
         n++) {
      if ((rc = expect(&r, YAML_SCALAR_EVENT, "a target name")))
        break;
      if (n == MAX_TARGETS) {
        rc = fail(&r, &r.ev.start_mark, "more than %d targets", MAX_TARGETS);
        break;
      }
      char *name = strdup(scalar(&r));
      yaml_mark_t at = r.ev.start_mark;
      if (!name)
        rc = lw_error(d, LW_ENOMEM, "out of memory");
      else if (!*name)
        rc = fail(&r, &at, "empty target name");
      if (!rc && !(rc = next(&r)))
        rc = read_entry(&r, name, &at);
      free(name);
    }
    if (!rc && !(rc = next(&r)))
      rc = expect(&r, YAML_DOCUMENT_END_EVENT, "the end of the document");
    if (!rc && !(rc = next(&r)) && r.ev.type != YAML_STREAM_END_EVENT)
      rc = fail(&r, &r.ev.start_mark,
                "more than one YAML document in a device configuration file");
  }
  if (r.have)
    yaml_event_delete(&r.ev);
  yaml_parser_delete(&r.parser);
  return rc;
}

int aot_config_load(struct aot_config *c, const char *file,
                    struct lw_diag *d) {
  memset(c, 0, sizeof *c);
  int rc = 0;
  for (size_t i = 0; !rc && i < LW_ARRAY_SIZE(aot__builtins); i++) {
    struct aot_device e;
    if (from_builtin(&e, &aot__builtins[i]))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    else if (auto_detect(&e) || put(c, &e))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    device_free(&e);
  }
  if (rc || !file)
    return rc;
  FILE *f = fopen(file, "rb");
  struct stat st;
  if (!f)
    return lw_error_path(d, LW_EIO, file, "cannot read the device "
                         "configuration file: %s", strerror(errno));
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
    rc = lw_error_path(d, LW_EIO, file,
                       "the device configuration file is not a regular file");
  else if (st.st_size > MAX_FILE)
    rc = lw_error_path(d, LW_EFORMAT, file,
                       "device configuration file of %lld bytes: the limit "
                       "is %d",
                       (long long)st.st_size, MAX_FILE);
  else
    rc = read_file(c, file, f, d);
  fclose(f);
  return rc;
}

char *aot_config_names(const struct aot_config *c) {
  struct lw_buf b = {0};
  for (size_t i = 0; i < c->n; i++)
    if ((i && lw_buf_append(&b, ", ", 2)) ||
        lw_buf_append(&b, c->v[i].name, strlen(c->v[i].name))) {
      lw_buf_free(&b);
      return NULL;
    }
  if (lw_buf_append(&b, "", 1)) {
    lw_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

void aot_config_free(struct aot_config *c) {
  for (size_t i = 0; i < c->n; i++)
    device_free(&c->v[i]);
  free(c->v);
  lw_strvec_free(&c->warnings);
  memset(c, 0, sizeof *c);
}

/* ---- writing ------------------------------------------------------------- */

static int emit_scalar(yaml_emitter_t *em, const char *s, int plain_only) {
  yaml_event_t ev;
  yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, -1, 1, 1,
                               plain_only ? YAML_PLAIN_SCALAR_STYLE
                                          : YAML_ANY_SCALAR_STYLE);
  return yaml_emitter_emit(em, &ev);
}

static int emit_list(yaml_emitter_t *em, const unsigned *v, size_t n,
                     int aspects) {
  yaml_event_t ev;
  yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                       YAML_FLOW_SEQUENCE_STYLE);
  int ok = yaml_emitter_emit(em, &ev);
  for (size_t i = 0; ok && i < n; i++) {
    char num[16];
    const char *name = aspects ? lw_aspect_name(v[i]) : NULL;
    snprintf(num, sizeof num, "%u", v[i]);
    ok = emit_scalar(em, name ? name : num, 1);
  }
  yaml_sequence_end_event_initialize(&ev);
  return ok && yaml_emitter_emit(em, &ev);
}

static int emit_device(yaml_emitter_t *em, const struct aot_device *e) {
  yaml_event_t ev;
  int ok = emit_scalar(em, e->name, 0);
  yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                      YAML_BLOCK_MAPPING_STYLE);
  ok = ok && yaml_emitter_emit(em, &ev) && emit_scalar(em, keys[0], 1) &&
       emit_list(em, e->aspects, e->naspects, 1) &&
       emit_scalar(em, keys[1], 1) &&
       emit_scalar(em, e->may_support_other_aspects ? "true" : "false", 1) &&
       emit_scalar(em, keys[2], 1) && emit_list(em, e->sg_sizes, e->nsg, 0);
  if (ok && e->toolchain[0])
    ok = emit_scalar(em, keys[3], 1) && emit_scalar(em, e->toolchain, 0);
  if (ok && e->options[0])
    ok = emit_scalar(em, keys[4], 1) && emit_scalar(em, e->options, 0);
  yaml_mapping_end_event_initialize(&ev);
  return ok && yaml_emitter_emit(em, &ev);
}

int aot_config_write(const struct aot_config *c, const char *name, FILE *f,
                     struct lw_diag *d) {
  const struct aot_device *only = name ? aot_config_find(c, name) : NULL;
  if (name && !only) {
    char *known = aot_config_names(c);
    int rc = lw_error(d, LW_EINVAL, "unknown target '%s' (known: %s)", name,
                      known ? known : "?");
    free(known);
    return rc;
  }
  yaml_emitter_t em;
  yaml_event_t ev;
  if (!yaml_emitter_initialize(&em))
    return lw_error(d, LW_ENOMEM, "out of memory");
  yaml_emitter_set_output_file(&em, f);
  yaml_emitter_set_width(&em, -1);
  yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
  int ok = yaml_emitter_emit(&em, &ev);
  yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
  ok = ok && yaml_emitter_emit(&em, &ev);
  yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                      YAML_BLOCK_MAPPING_STYLE);
  ok = ok && yaml_emitter_emit(&em, &ev);
  for (size_t i = 0; ok && i < c->n; i++)
    if (!only || &c->v[i] == only)
      ok = emit_device(&em, &c->v[i]);
  yaml_mapping_end_event_initialize(&ev);
  ok = ok && yaml_emitter_emit(&em, &ev);
  yaml_document_end_event_initialize(&ev, 1);
  ok = ok && yaml_emitter_emit(&em, &ev);
  yaml_stream_end_event_initialize(&ev);
  ok = ok && yaml_emitter_emit(&em, &ev) && yaml_emitter_flush(&em);
  int rc = ok ? 0 : lw_error(d, LW_EIO, "cannot write YAML: %s",
                             em.problem ? em.problem : "write error");
  yaml_emitter_delete(&em);
  return rc;
}
