/* base.c - error text, diagnostics, byte buffers and string vectors shared by
 * every fatlink library (see include/lw_base.h). */
#include "lw_base.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *lw_strerror(int code) {
  switch (code) {
#define XX(name, value, text)                                                  \
  case value:                                                                  \
    return text;
    LW_ERRNO_MAP(XX)
#undef XX
  }
  return "unknown error";
}

static int verror(struct lw_diag *d, int code, const char *prefix,
                  const char *fmt, va_list ap) {
  if (d && d->code == 0) {
    size_t off = 0;
    d->code = code;
    if (prefix)
      off = (size_t)snprintf(d->msg, sizeof d->msg, "'%s': ", prefix);
    if (off < sizeof d->msg)
      vsnprintf(d->msg + off, sizeof d->msg - off, fmt, ap);
    /* One line: newlines inside a message become spaces. */
    for (char *p = d->msg; *p; p++)
      if (*p == '\n' || *p == '\r')
        *p = ' ';
  }
  return code;
}

int lw_error(struct lw_diag *d, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(d, code, NULL, fmt, ap);
  va_end(ap);
  return code;
}

int lw_error_path(struct lw_diag *d, int code, const char *path,
                  const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(d, code, path, fmt, ap);
  va_end(ap);
  return code;
}

int lw_buf_append(struct lw_buf *b, const void *p, size_t n) {
  if (n == 0)
    return 0;
  if (b->len + n < b->len)
    return LW_ENOMEM;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
      cap *= 2;
    unsigned char *nd = realloc(b->data, cap);
    if (!nd)
      return LW_ENOMEM;
    b->data = nd;
    b->cap = cap;
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

void lw_buf_free(struct lw_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

static int strvec_take(struct lw_strvec *sv, char *s) {
  if (!s)
    return LW_ENOMEM;
  /* Room for s and the NULL after it. */
  if (lw_grow(&sv->v, sv->n + 1, &sv->cap, sizeof *sv->v, 16)) {
    free(s);
    return LW_ENOMEM;
  }
  sv->v[sv->n++] = s;
  sv->v[sv->n] = NULL;
  return 0;
}

int lw_strvec_push(struct lw_strvec *sv, const char *s) {
  return strvec_take(sv, strdup(s));
}

static char *vxasprintf(const char *fmt, va_list ap) {
  char *s = NULL;
  return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

int lw_strvec_pushf(struct lw_strvec *sv, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vxasprintf(fmt, ap);
  va_end(ap);
  return strvec_take(sv, s);
}

int lw_strvec_extend_from(struct lw_strvec *sv, const struct lw_strvec *src) {
  for (size_t i = 0; i < src->n; i++)
    if (lw_strvec_push(sv, src->v[i]))
      return LW_ENOMEM;
  return 0;
}

size_t lw_strvec_find(const struct lw_strvec *sv, const char *s) {
  size_t i = 0;
  while (i < sv->n && strcmp(sv->v[i], s) != 0)
    i++;
  return i;
}

int lw_grow(void *arr, size_t n, size_t *cap, size_t size, size_t first) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : first;
  if (ncap < n + 1 || ncap > SIZE_MAX / size)
    return LW_ENOMEM;
  void *old;
  memcpy(&old, arr, sizeof old); /* any object pointer, as void * */
  void *nv = realloc(old, ncap * size);
  if (!nv)
    return LW_ENOMEM;
  memcpy(arr, &nv, sizeof nv);
  *cap = ncap;
  return 0;
}

int lw_strvec_split(struct lw_strvec *sv, const char *s, char sep) {
  while (*s) {
    const char *e = strchr(s, sep);
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (n) {
      char *piece = strndup(s, n);
      int rc = piece ? lw_strvec_push(sv, piece) : LW_ENOMEM;
      free(piece);
      if (rc)
        return rc;
    }
    s += n + (e != NULL);
  }
  return 0;
}

void lw_strvec_free(struct lw_strvec *sv) {
  for (size_t i = 0; i < sv->n; i++)
    free(sv->v[i]);
  free(sv->v);
  sv->v = NULL;
  sv->n = sv->cap = 0;
}

char *lw_xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vxasprintf(fmt, ap);
  va_end(ap);
  return s;
}

int lw_read_stream(FILE *f, const char *name, struct lw_buf *out,
                   struct lw_diag *d) {
  unsigned char chunk[65536];
  size_t n;
  int rc = 0;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    if ((rc = lw_buf_append(out, chunk, n)))
      break;
  if (!rc && ferror(f))
    rc = lw_error_path(d, LW_EIO, name, "read error");
  else if (rc)
    lw_error_path(d, rc, name, "out of memory");
  return rc;
}

int lw_read_file(const char *path, struct lw_buf *out, struct lw_diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return lw_error_path(d, LW_EIO, path, "%s", strerror(errno));
  int rc = lw_read_stream(f, path, out, d);
  fclose(f);
  return rc;
}

void lw_report_error(const char *prog, struct lw_diag *d, int rc) {
  /* One line, whatever bytes the input gave the message (a name from
   * malformed bitcode may hold a newline). */
  for (char *c = d->msg; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = '?';
  fprintf(stderr, "%s: error: %s\n", prog,
          d->msg[0] ? d->msg : lw_strerror(rc));
}

int lw_write_file(const char *path, const void *p, size_t n,
                  struct lw_diag *d) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return lw_error_path(d, LW_EIO, path, "cannot write");
  size_t w = n ? fwrite(p, 1, n, f) : 0;
  if (fclose(f) != 0 || w != n)
    return lw_error_path(d, LW_EIO, path, "write error");
  return 0;
}

const char *lw_base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

char *lw_find_on_path(const char *tool) {
  /* As execvp looks: an empty entry is the working directory. */
  const char *path = getenv("PATH");
  if (!path)
    path = "/usr/bin:/bin";
  while (*path) {
    size_t n = strcspn(path, ":");
    char *p = lw_xasprintf("%.*s/%s", (int)n, n ? path : ".", tool);
    struct stat st;
    if (p && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
      return p;
    free(p);
    path += n + (path[n] == ':');
  }
  return NULL;
}

int lw_on_path(const char *tool) {
  char *p = lw_find_on_path(tool);
  int found = p != NULL;
  free(p);
  return found;
}

void lw__bug(const char *file, int line, const char *msg) {
  fprintf(stderr, "fatlink: BUG: %s:%d: %s\n", file, line, msg);
  abort();
}

void lw_error_line(const char *text, size_t n, char *line, size_t cap) {
  const char *p = text ? text : "", *end = p + (text ? n : 0);
  const char *best = "", *best_end = best;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
    if (le > p) {
      best = p;
      best_end = le;
      int err = 0;
      for (const char *q = p; q + 5 <= le && !err; q++)
        err = strncasecmp(q, "error", 5) == 0;
      if (err)
        break;
    }
    p = nl ? nl + 1 : end;
  }
  snprintf(line, cap, "%.*s", (int)(best_end - best), best);
}

/* ---- what this thread is doing ------------------------------------------- */

static __thread char doing[600];
static __thread volatile int doing_set;
static __thread int has_altstack;
static __thread volatile int doing_input;

static void doing_text(const char *origin, const char *what);

void lw_doing(const char *origin, const char *what) {
  doing_text(origin ? origin : "?", what);
}

void lw_doing_step(const char *what) { doing_text(NULL, what); }

int lw_doing_blames_input(void) { return doing_input; }

static void doing_text(const char *origin, const char *what) {
  if (!has_altstack) {
    /* Never unmapped: the thread's stack for a crash, for as long as it
     * lives (pool threads live as long as the process). */
    stack_t st = {.ss_size = 64 * 1024};
    st.ss_sp = mmap(NULL, st.ss_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (st.ss_sp != MAP_FAILED && sigaltstack(&st, NULL) == 0)
      has_altstack = 1;
    else if (st.ss_sp != MAP_FAILED)
      munmap(st.ss_sp, st.ss_size);
  }
  doing_set = 0;
  if (origin)
    snprintf(doing, sizeof doing, "'%s': %s", origin, what);
  else
    snprintf(doing, sizeof doing, "%s", what);
  doing_input = origin != NULL;
  doing_set = 1;
}

void lw_done(void) { doing_set = 0; }

const char *lw_doing_now(void) { return doing_set ? doing : NULL; }
