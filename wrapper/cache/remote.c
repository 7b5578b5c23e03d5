/* remote.c - the cache's remote storage, shared by many machines: Redis
 * (hiredis) or HTTP with GET and PUT (libcurl; what ccache's http: storage
 * speaks, e.g. nginx with WebDAV). An entry is stored as the local cache
 * writes it (store.c: header, hash, payload) under its key's hex: Redis key
 * "fatlink:<hex>", HTTP <url>/<hex>. Every operation is bounded by the
 * timeout, connecting included; what the server says or fails to say is
 * reported to store.c, which decides what it means for the link.
 *
 * The two libraries are loaded when a remote layer is opened, not with
 * fatlink: libcurl brings 30 libraries with it, which cost every link 9 ms
 * to load and every forked SPIR-V worker their page tables (measured: the
 * 100-unit program's cold link at -j2, 0.93 -> 0.99 s with them linked). */
#include "cache/cache.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct lw_remote {
  int redis;          /* else HTTP */
  char *host;         /* Redis */
  int port, db;
  char *base;         /* HTTP: the URL, without a trailing '/' */
  char *name;         /* for messages */
  long timeout_ms;
  pid_t owner;        /* the process that opened it */
  pthread_mutex_t mu; /* the Redis connection: one command at a time */
  redisContext *rc;
  pid_t rc_pid;       /* the process whose connection rc is */
  int curl_ready;     /* curl_global_init done */
  void *lib;          /* libhiredis or libcurl, and what is used of it: */
  redisContext *(*connect)(const char *, int, struct timeval);
  int (*set_timeout)(redisContext *, struct timeval);
  void *(*command)(redisContext *, const char *, ...);
  void (*free_context)(redisContext *);
  void (*free_reply)(void *);
  CURLcode (*global_init)(long);
  void (*global_cleanup)(void);
  CURL *(*easy_init)(void);
  CURLcode (*setopt)(CURL *, CURLoption, ...);
  CURLcode (*perform)(CURL *);
  CURLcode (*getinfo)(CURL *, CURLINFO, ...);
  void (*easy_cleanup)(CURL *);
  const char *(*strerror)(CURLcode);
};

/* Debian 12's sonames (libhiredis0.14, libcurl4). */
static const char *const redis_lib = "libhiredis.so.0.14";
static const char *const curl_lib = "libcurl.so.4";

/* Loads the library and its functions into r; 0, or -1 with why. */
static int load(struct lw_remote *r, char *why, size_t n) {
  const char *name = r->redis ? redis_lib : curl_lib;
  struct {
    void *fn;
    const char *sym;
  } *f, redis_fns[] = {{&r->connect, "redisConnectWithTimeout"},
                       {&r->set_timeout, "redisSetTimeout"},
                       {&r->command, "redisCommand"},
                       {&r->free_context, "redisFree"},
                       {&r->free_reply, "freeReplyObject"},
                       {NULL, NULL}},
    curl_fns[] = {{&r->global_init, "curl_global_init"},
                  {&r->global_cleanup, "curl_global_cleanup"},
                  {&r->easy_init, "curl_easy_init"},
                  {&r->setopt, "curl_easy_setopt"},
                  {&r->perform, "curl_easy_perform"},
                  {&r->getinfo, "curl_easy_getinfo"},
                  {&r->easy_cleanup, "curl_easy_cleanup"},
                  {&r->strerror, "curl_easy_strerror"},
                  {NULL, NULL}};
  if (!(r->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
    snprintf(why, n, "%s", dlerror());
    return -1;
  }
  for (f = r->redis ? redis_fns : curl_fns; f->fn; f++)
    if (!(*(void **)f->fn = dlsym(r->lib, f->sym))) {
      snprintf(why, n, "%s has no %s", name, f->sym);
      return -1;
    }
  return 0;
}

/* redis://host[:port][/db] */
static int parse_redis(struct lw_remote *r, const char *s) {
  const char *end = s + strcspn(s, ":/");
  if (end == s)
    return -1;
  r->host = strndup(s, (size_t)(end - s));
  r->port = 6379;
  char *after = NULL;
  if (*end == ':') {
    long p = strtol(end + 1, &after, 10);
    if (after == end + 1 || p <= 0 || p > 65535)
      return -1;
    r->port = (int)p;
    end = after;
  }
  if (*end == '/' && end[1]) {
    long db = strtol(end + 1, &after, 10);
    if (after == end + 1 || *after || db < 0 || db > 1000000)
      return -1;
    r->db = (int)db;
  } else if (*end && strcmp(end, "/") != 0) {
    return -1;
  }
  return r->host ? 0 : -2;
}

int lw_remote_open(const char *url, long timeout_ms, struct lw_remote **out,
                   struct lw_diag *d) {
  *out = NULL;
  struct lw_remote *r = calloc(1, sizeof *r);
  if (!r || !(r->name = strdup(url))) {
    free(r);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  r->timeout_ms = timeout_ms;
  r->owner = getpid();
  pthread_mutex_init(&r->mu, NULL);
  int bad = 0;
  if (strncasecmp(url, "redis://", 8) == 0) {
    r->redis = 1;
    bad = parse_redis(r, url + 8);
  } else if (strncasecmp(url, "http://", 7) == 0 ||
             strncasecmp(url, "https://", 8) == 0) {
    const char *host = url + (url[4] == ':' ? 7 : 8);
    size_t n = strlen(url);
    while (n > (size_t)(host - url) && url[n - 1] == '/')
      n--; /* <url>/<key> */
    bad = !*host || *host == '/'            ? -1
          : (r->base = strndup(url, n)) ? 0
                                        : -2;
  } else {
    bad = -1;
  }
  char why[512];
  if (!bad && load(r, why, sizeof why))
    bad = -3;
  if (!bad && !r->redis && r->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    bad = -2;
  else if (!bad && !r->redis)
    r->curl_ready = 1;
  if (bad) {
    lw_remote_close(r);
    if (bad == -3)
      return lw_error(d, LW_EINVAL,
                      "--cache-remote: %s (Debian package %s)", why,
                      strstr(url, "redis") == url ? "libhiredis0.14"
                                                  : "libcurl4");
    return bad == -2 ? lw_error(d, LW_ENOMEM, "out of memory")
                     : lw_error(d, LW_EINVAL,
                                "invalid --cache-remote URL '%s' (expected "
                                "redis://host[:port][/db] or "
                                "http://host[:port]/path)",
                                url);
  }
  *out = r;
  return 0;
}

const char *lw_remote_name(const struct lw_remote *r) { return r->name; }

void lw_remote_close(struct lw_remote *r) {
  if (!r)
    return;
  if (r->rc)
    r->free_context(r->rc);
  if (r->curl_ready)
    r->global_cleanup();
  if (r->lib)
    dlclose(r->lib);
  pthread_mutex_destroy(&r->mu);
  free(r->host);
  free(r->base);
  free(r->name);
  free(r);
}

static void say(char *why, size_t n, const char *fmt, const char *what) {
  snprintf(why, n, fmt, what);
}

/* What a failed Redis connection says; its timeouts in the words curl's
 * get (hiredis 0.14 reports them as EAGAIN). */
static void redis_why(const struct lw_remote *r, const redisContext *c,
                      const char *fmt, char *why, size_t n) {
  char t[64];
  snprintf(t, sizeof t, "timed out after %ld ms", r->timeout_ms);
  int timeout = c->err == REDIS_ERR_IO &&
                (strcmp(c->errstr, strerror(EAGAIN)) == 0 ||
                 strcmp(c->errstr, strerror(ETIMEDOUT)) == 0);
  say(why, n, fmt, timeout ? t : c->errstr[0] ? c->errstr : "no reply");
}

/* ---- Redis ---------------------------------------------------------------- */

/* The connection, made (and the database chosen) the first time; NULL with
 * why on failure. A forked child (the SPIR-V workers) makes its own: the
 * parent's socket is the parent's. Under lock(). */
static redisContext *redis(struct lw_remote *r, char *why, size_t n) {
  if (r->rc && r->rc_pid != getpid()) {
    r->free_context(r->rc); /* this process's copy of the parent's */
    r->rc = NULL;
  }
  if (r->rc)
    return r->rc;
  struct timeval tv = {r->timeout_ms / 1000, (r->timeout_ms % 1000) * 1000};
  redisContext *c = r->connect(r->host, r->port, tv);
  if (!c || c->err) {
    if (c)
      redis_why(r, c, "cannot connect: %s", why, n);
    else
      say(why, n, "%s", "out of memory");
    if (c)
      r->free_context(c);
    return NULL;
  }
  r->set_timeout(c, tv);
  if (r->db) {
    redisReply *rep = r->command(c, "SELECT %d", r->db);
    int ok = rep && rep->type == REDIS_REPLY_STATUS;
    say(why, n, "SELECT: %s",
        rep && rep->type == REDIS_REPLY_ERROR ? rep->str : c->errstr);
    r->free_reply(rep);
    if (!ok) {
      r->free_context(c);
      return NULL;
    }
  }
  r->rc_pid = getpid();
  return r->rc = c;
}

/* The opening process has threads; a forked child has one, and may not
 * take a lock that another thread held when it was forked. */
static void lock(struct lw_remote *r) {
  if (getpid() == r->owner)
    pthread_mutex_lock(&r->mu);
}

static void unlock(struct lw_remote *r) {
  if (getpid() == r->owner)
    pthread_mutex_unlock(&r->mu);
}

/* A command's reply, or NULL (the connection is dropped: the next command
 * connects again). Under r->mu. */
static redisReply *command(struct lw_remote *r, char *why, size_t n,
                           const char *fmt, const char *key, const void *v,
                           size_t vn) {
  redisContext *c = redis(r, why, n);
  if (!c)
    return NULL;
  redisReply *rep = v ? r->command(c, fmt, key, v, vn)
                      : r->command(c, fmt, key);
  if (!rep) {
    redis_why(r, c, "%s", why, n);
    r->free_context(c);
    r->rc = NULL;
  }
  return rep;
}

static int redis_get(struct lw_remote *r, const char *key, struct lw_buf *out,
                     char *why, size_t n) {
  lock(r);
  redisReply *rep = command(r, why, n, "GET fatlink:%s", key, NULL, 0);
  int rc = !rep ? -1
           : rep->type == REDIS_REPLY_NIL    ? 0
           : rep->type == REDIS_REPLY_STRING ? 1
                                              : -1;
  if (rc < 0 && rep)
    say(why, n, "GET: %s",
        rep->type == REDIS_REPLY_ERROR ? rep->str : "an unexpected reply");
  if (rc == 1 && lw_buf_append(out, rep->str, rep->len))
    rc = 0;
  r->free_reply(rep);
  unlock(r);
  return rc;
}

static int redis_put(struct lw_remote *r, const char *key, const void *data,
                     size_t size, char *why, size_t n) {
  lock(r);
  redisReply *rep = command(r, why, n, "SET fatlink:%s %b", key, data, size);
  int rc = rep && rep->type == REDIS_REPLY_STATUS ? 0 : -1;
  if (rep && rc)
    say(why, n, "SET: %s",
        rep->type == REDIS_REPLY_ERROR ? rep->str : "an unexpected reply");
  r->free_reply(rep);
  unlock(r);
  return rc;
}

/* ---- HTTP ----------------------------------------------------------------- */

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  return lw_buf_append(ud, p, size * n) ? 0 : size * n;
}

struct upload {
  const unsigned char *p;
  size_t left;
};

static size_t on_upload(char *p, size_t size, size_t n, void *ud) {
  struct upload *u = ud;
  size_t k = size * n < u->left ? size * n : u->left;
  memcpy(p, u->p, k);
  u->p += k;
  u->left -= k;
  return k;
}

/* One request: its HTTP status, or -1 with why. */
static long request(struct lw_remote *r, const char *key,
                    const struct upload *put, struct lw_buf *body, char *why,
                    size_t n) {
  char *url = lw_xasprintf("%s/%s", r->base, key);
  CURL *h = url ? r->easy_init() : NULL;
  if (!h) {
    free(url);
    say(why, n, "%s", "out of memory");
    return -1;
  }
  struct upload u = put ? *put : (struct upload){0};
  r->setopt(h, CURLOPT_URL, url);
  r->setopt(h, CURLOPT_NOSIGNAL, 1L); /* threads */
  r->setopt(h, CURLOPT_CONNECTTIMEOUT_MS, r->timeout_ms);
  r->setopt(h, CURLOPT_TIMEOUT_MS, r->timeout_ms);
  r->setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  r->setopt(h, CURLOPT_WRITEDATA, body);
  if (put) {
    r->setopt(h, CURLOPT_UPLOAD, 1L);
    r->setopt(h, CURLOPT_READFUNCTION, on_upload);
    r->setopt(h, CURLOPT_READDATA, &u);
    r->setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)put->left);
  }
  long status = -1;
  CURLcode e = r->perform(h);
  if (e == CURLE_OK)
    r->getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  else if (e == CURLE_OPERATION_TIMEDOUT)
    snprintf(why, n, "timed out after %ld ms", r->timeout_ms);
  else
    say(why, n, "%s", r->strerror(e));
  r->easy_cleanup(h);
  free(url);
  return status;
}

static int http_get(struct lw_remote *r, const char *key, struct lw_buf *out,
                    char *why, size_t n) {
  long status = request(r, key, NULL, out, why, n);
  if (status == 200)
    return 1;
  out->len = 0;
  if (status == 404)
    return 0;
  if (status > 0)
    snprintf(why, n, "GET: HTTP status %ld", status);
  return -1;
}

static int http_put(struct lw_remote *r, const char *key, const void *data,
                    size_t size, char *why, size_t n) {
  struct upload u = {data, size};
  struct lw_buf ignored = {0};
  long status = request(r, key, &u, &ignored, why, n);
  lw_buf_free(&ignored);
  if (status >= 200 && status < 300)
    return 0;
  if (status > 0)
    snprintf(why, n, "PUT: HTTP status %ld", status);
  return -1;
}

int lw_remote_get(struct lw_remote *r, const char *key, struct lw_buf *out,
                  char *why, size_t n) {
  return r->redis ? redis_get(r, key, out, why, n)
                  : http_get(r, key, out, why, n);
}

int lw_remote_put(struct lw_remote *r, const char *key, const void *data,
                  size_t size, char *why, size_t n) {
  return r->redis ? redis_put(r, key, data, size, why, n)
                  : http_put(r, key, data, size, why, n);
}
