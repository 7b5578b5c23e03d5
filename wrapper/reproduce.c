/* reproduce.c - --reproduce=FILE.tar: what is needed to run this link again
 * elsewhere, packed with libarchive before the link starts (so a link that
 * fails has one too), as lld's --reproduce packs a host link:
 *   <root>/response.txt  fatlink's arguments, response files expanded,
 *                        every file named by its place in the tar
 *   <root>/version.txt   fatlink's and LLVM's versions, the host linker's
 *                        and clang's (--version), the folder it ran in
 *   <root>/device-config.yaml  the device configuration the link used
 *                        (the built-in table, a file given over it)
 *   <root>/<path>        every file the link reads, at its absolute path
 *                        (inputs, archives whole, the libraries -l finds,
 *                        linker scripts, a device configuration file)
 * <root> is FILE's name without ".tar". Unpacked anywhere, `cd <root> &&
 * fatlink @response.txt` runs the link again: -L directories point into the
 * tar too, the output goes to its file name there. What names a tool (the
 * host linker, a launcher) or where results are kept (--cache-dir=, a dump
 * folder) stays out: the link is rebuilt with the tools of the machine it
 * runs on, whose versions version.txt lets you compare. */
#include "internal.h"
#include "run/run.h"

#include "aot.h"
#include "ex.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LW_VERSION
#define LW_VERSION "0.1.0"
#endif
#ifndef LW_LLVM_VERSION
#define LW_LLVM_VERSION "22"
#endif
#ifndef LW_CLANG
#define LW_CLANG "/usr/lib/llvm-22/bin/clang"
#endif

struct pack {
  struct lw_strvec files; /* absolute, normalised, each once */
  struct lw_strvec args;  /* the arguments as the tar names things */
  int oom;
};

/* `path` absolute (from the working directory) with "." and ".." taken
 * out by name, as the tar names it; malloc'd. */
static char *absolute(const char *path) {
  char cwd[4096];
  char *joined = path[0] == '/'               ? strdup(path)
                 : getcwd(cwd, sizeof cwd) ? lw_xasprintf("%s/%s", cwd, path)
                                              : NULL;
  if (!joined)
    return NULL;
  char *out = malloc(strlen(joined) + 2), *save = NULL;
  size_t n = 0;
  for (char *part = strtok_r(joined, "/", &save); out && part;
       part = strtok_r(NULL, "/", &save)) {
    if (strcmp(part, ".") == 0)
      continue;
    if (strcmp(part, "..") == 0) {
      while (n > 0 && out[--n] != '/')
        ;
      continue;
    }
    out[n++] = '/';
    strcpy(out + n, part);
    n += strlen(part);
  }
  if (out && n == 0)
    out[n++] = '/';
  if (out)
    out[n] = 0;
  free(joined);
  return out;
}

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where the tar has `path` (a file to pack, or a directory), relative to
 * its root; malloc'd. A file is packed once. */
static char *in_tar(struct pack *p, const char *path, int file) {
  char *abs = absolute(path);
  if (!abs) {
    p->oom = 1;
    return NULL;
  }
  int seen = 0;
  for (size_t i = 0; file && !seen && i < p->files.n; i++)
    seen = strcmp(p->files.v[i], abs) == 0;
  if (file && !seen && lw_strvec_push(&p->files, abs))
    p->oom = 1;
  char *rel = strdup(abs[1] ? abs + 1 : ".");
  free(abs);
  if (!rel)
    p->oom = 1;
  return rel;
}

static void push(struct pack *p, const char *a) {
  if (lw_strvec_push(&p->args, a))
    p->oom = 1;
}

/* Pushes the first `n` bytes of `opt` followed by where the tar has `path`
 * (a file or a directory that exists; anything else as it was). */
static void push_path_n(struct pack *p, const char *opt, size_t n,
                        const char *path) {
  int file = is_file(path);
  char *rel = file || is_dir(path) ? in_tar(p, path, file) : NULL;
  if (lw_strvec_pushf(&p->args, "%.*s%s", (int)n, opt, rel ? rel : path))
    p->oom = 1;
  free(rel);
}

static void push_path(struct pack *p, const char *opt, const char *path) {
  push_path_n(p, opt, strlen(opt), path);
}

static const char *after(const char *a, const char *prefix) {
  size_t n = strlen(prefix);
  return strncmp(a, prefix, n) == 0 ? a + n : NULL;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Host linker options whose value is a file the link reads. */
static int reads_file(const char *opt) {
  static const char *const names[] = {
      "-T",           "--script",          "--version-script",
      "--dynamic-list", "--just-symbols",  "--retain-symbols-file",
      "-dT",          "--default-script"};
  for (size_t i = 0; i < LW_ARRAY_SIZE(names); i++)
    if (strcmp(opt, names[i]) == 0)
      return 1;
  return 0;
}

/* Rewrites argument i (and its value when separate) of `args`; returns how
 * many it took. */
static size_t rewrite(struct pack *p, const struct lw_options *o,
                      const struct lw_strvec *args, size_t i) {
  const char *a = args->v[i], *v;
  const char *next = i + 1 < args->n ? args->v[i + 1] : NULL;
  if (after(a, "--reproduce=") || after(a, "--cache-dir=") ||
      after(a, "--sycl-dump-device-code="))
    return 1;
  if ((v = after(a, "--wrapper-time-trace="))) {
    if (lw_strvec_pushf(&p->args, "--wrapper-time-trace=%s", base_name(v)))
      p->oom = 1;
    return 1;
  }
  if ((v = after(a, "--device-config-file=")))
    return push_path(p, "--device-config-file=", v), 1;
  if ((v = after(a, "-fsycl-device-config-file=")))
    return push_path(p, "-fsycl-device-config-file=", v), 1;
  if ((v = after(a, "--sycl-device-library-location="))) {
    /* the libraries found there, of either list */
    const struct lw_strvec *lists[2] = {&o->device_libs,
                                        &o->nvptx_device_libs};
    for (size_t l = 0; l < 2; l++)
      for (size_t k = 0; k < lists[l]->n; k++) {
        char *lib = lw_xasprintf("%s/%s", v, lists[l]->v[k]);
        if (lib && is_file(lib))
          free(in_tar(p, lib, 1));
        p->oom |= !lib;
        free(lib);
      }
    return push_path(p, "--sycl-device-library-location=", v), 1;
  }
  if ((v = after(a, "--device-linker="))) {
    /* [triple=]-L<dir>: the directory (lw_reproduce packs what the device
     * links' -l options find there) */
    size_t n;
    const char *arg = lw_device_arg(v, &n);
    if (strncmp(arg, "-L", 2) != 0 || !is_dir(arg + 2))
      return push(p, a), 1;
    return push_path_n(p, a, (size_t)(arg + 2 - a), arg + 2), 1;
  }
  struct lw_output_arg out = lw_output_arg_at(args, i, o->msvc);
  if (out.index >= 0) {
    if (out.count == 2)
      push(p, a);
    size_t opt = out.count == 2 ? 0 : (size_t)(out.value - a);
    if (lw_strvec_pushf(&p->args, "%.*s%s", (int)opt, a,
                        base_name(out.value)))
      p->oom = 1;
    return (size_t)out.count;
  }
  if ((strcmp(a, "-L") == 0 || strcmp(a, "--library-path") == 0 ||
       reads_file(a)) && next) {
    push(p, a);
    push_path(p, "", next);
    return 2;
  }
  if ((v = after(a, "--library-path=")))
    return push_path(p, "--library-path=", v), 1;
  if (strncmp(a, "-L", 2) == 0)
    return push_path(p, "-L", a + 2), 1;
  if (strncmp(a, "-T", 2) == 0 && a[2] != 't' && a[2] != 'd' && a[2] != 'b')
    return push_path(p, "-T", a + 2), 1; /* not -Ttext, -Tdata, -Tbss */
  if (a[0] == '-' && a[1] == '-' && (v = strchr(a, '='))) {
    char *opt = strndup(a, (size_t)(v - a));
    if (opt && reads_file(opt))
      push_path_n(p, a, (size_t)(v + 1 - a), v + 1);
    else
      push(p, a);
    p->oom |= !opt;
    free(opt);
    return 1;
  }
  if ((lw_takes_separate_value(a, o->msvc) || strcmp(a, "-mllvm") == 0 ||
       strcmp(a, "-Xlinker") == 0) && next) {
    push(p, a);
    push(p, next);
    return 2;
  }
  if (a[0] != '-' && is_file(a))
    return push_path(p, "", a), 1;
  push(p, a);
  return 1;
}

/* Appends file `path` of the machine to the tar as `name`. */
static int put_file(struct archive *ar, const char *path, const char *name,
                    struct lw_diag *d) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    int rc = lw_error_path(d, LW_EIO, path, "cannot read it for "
                                            "--reproduce: %s",
                           strerror(errno));
    if (fd >= 0)
      close(fd);
    return rc;
  }
  struct archive_entry *e = archive_entry_new();
  int rc = e ? 0 : lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc) {
    archive_entry_set_pathname(e, name);
    archive_entry_set_size(e, st.st_size);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, st.st_mode & 0777);
    archive_entry_set_mtime(e, st.st_mtime, 0);
    if (archive_write_header(ar, e) != ARCHIVE_OK)
      rc = lw_error(d, LW_EIO, "cannot write the reproducer: %s",
                    archive_error_string(ar));
  }
  char buf[1 << 16];
  for (ssize_t n; !rc && (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      rc = lw_error_path(d, LW_EIO, path, "cannot read it for --reproduce: "
                                          "%s",
                         strerror(errno));
    else if (archive_write_data(ar, buf, (size_t)n) != n)
      rc = lw_error(d, LW_EIO, "cannot write the reproducer: %s",
                    archive_error_string(ar));
  }
  archive_entry_free(e);
  close(fd);
  return rc;
}

/* Appends `text` to the tar as <root>/<leaf>. */
static int put_text(struct archive *ar, const char *root, const char *leaf,
                    const struct lw_buf *text, struct lw_diag *d) {
  struct archive_entry *e = archive_entry_new();
  char *name = lw_xasprintf("%s/%s", root, leaf);
  if (!e || !name) {
    archive_entry_free(e);
    free(name);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  archive_entry_set_pathname(e, name);
  free(name);
  archive_entry_set_size(e, (la_int64_t)text->len);
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0644);
  int rc = archive_write_header(ar, e) != ARCHIVE_OK ||
                   archive_write_data(ar, text->data, text->len) !=
                       (la_ssize_t)text->len
               ? lw_error(d, LW_EIO, "cannot write the reproducer: %s",
                          archive_error_string(ar))
               : 0;
  archive_entry_free(e);
  return rc;
}

/* The first line `tool --version` prints, in `line` ("?" when it does not
 * run). */
static void tool_version(const char *tool, char *line, size_t cap) {
  snprintf(line, cap, "?");
  int fd[2];
  if (!tool || pipe(fd) != 0)
    return;
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(fd[1], 1);
    if (null >= 0)
      dup2(null, 0), dup2(null, 2);
    char *const argv[] = {(char *)tool, "--version", NULL};
    execv(tool, argv);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  for (ssize_t r; pid > 0 && n + 1 < cap &&
                  (r = read(fd[0], line + n, cap - 1 - n)) != 0;)
    if (r > 0)
      n += (size_t)r;
    else if (errno != EINTR)
      break;
  close(fd[0]);
  int status;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  line[n] = 0;
  line[strcspn(line, "\n")] = 0;
  if (!line[0] || pid <= 0)
    snprintf(line, cap, "?");
}

static int version_text(const struct lw_options *o, struct lw_buf *b) {
  char cwd[4096], linker[256], clang[256];
  tool_version(o->linker_path, linker, sizeof linker);
  tool_version(LW_CLANG, clang, sizeof clang);
  char *s = lw_xasprintf(
      "fatlink %s (LLVM %s)\nhost linker: %s: %s\nclang: %s: %s\n"
      "ran in: %s\n",
      LW_VERSION, LW_LLVM_VERSION,
      o->linker_path ? o->linker_path : "(none)", linker, LW_CLANG, clang,
      getcwd(cwd, sizeof cwd) ? cwd : "?");
  int rc = s ? lw_buf_append(b, s, strlen(s)) : LW_ENOMEM;
  free(s);
  return rc;
}

/* The device configuration as the link reads it, as YAML; nothing when
 * the file given cannot be read (the link says why). */
static int device_config_text(const struct lw_options *o, struct lw_buf *b) {
  struct aot_config c = {0};
  struct lw_diag ignore = {0};
  char *text = NULL;
  size_t len = 0;
  FILE *f = NULL;
  int rc = 0;
  if (aot_config_load(&c, o->device_config, &ignore) == 0 &&
      (f = open_memstream(&text, &len)) != NULL) {
    int bad = aot_config_write(&c, NULL, f, &ignore);
    bad |= fclose(f) != 0;
    if (!bad)
      rc = lw_buf_append(b, text, len);
  }
  free(text);
  aot_config_free(&c);
  return rc;
}

static int write_tar(const char *path, const char *root,
                     const struct pack *p, const struct lw_options *o,
                     struct lw_diag *d) {
  struct archive *ar = archive_write_new();
  if (!ar)
    return lw_error(d, LW_ENOMEM, "out of memory");
  int rc = archive_write_set_format_pax_restricted(ar) != ARCHIVE_OK ||
                   archive_write_open_filename(ar, path) != ARCHIVE_OK
               ? lw_error_path(d, LW_EIO, path, "cannot write: %s",
                               archive_error_string(ar))
               : 0;
  struct lw_buf text = {0};
  if (!rc && lw_response_file_text(&p->args, 0, &text))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc)
    rc = put_text(ar, root, "response.txt", &text, d);
  text.len = 0;
  if (!rc && version_text(o, &text))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc)
    rc = put_text(ar, root, "version.txt", &text, d);
  text.len = 0;
  if (!rc && device_config_text(o, &text))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (!rc && text.len)
    rc = put_text(ar, root, "device-config.yaml", &text, d);
  lw_buf_free(&text);
  for (size_t i = 0; !rc && i < p->files.n; i++) {
    char *entry = lw_xasprintf("%s%s", root, p->files.v[i]);
    rc = entry ? put_file(ar, p->files.v[i], entry, d)
               : lw_error(d, LW_ENOMEM, "out of memory");
    free(entry);
  }
  if (archive_write_close(ar) != ARCHIVE_OK && !rc)
    rc = lw_error_path(d, LW_EIO, path, "cannot write: %s",
                       archive_error_string(ar));
  archive_write_free(ar);
  return rc;
}

char *lw_reproduce_dir_tar(const char *output) {
  const char *dir = getenv("FATLINK_REPRODUCE_DIR");
  return dir && *dir ? lw_xasprintf("%s/%s-%ld.tar", dir, base_name(output),
                                    (long)getpid())
                     : NULL;
}

int lw_reproduce(const struct lw_options *o, struct lw_diag *d) {
  struct pack p = {{0}, {0}, 0};
  for (size_t i = 0; i < o->args.n;)
    i += rewrite(&p, o, &o->args, i);
  /* What the link reads beyond its arguments: the libraries -l finds. */
  struct lw_inputs in = {0};
  struct lw_diag ignore = {0}; /* a missing input is the link's to report */
  lw_collect_inputs(&o->linker_args, o->msvc, &in, &ignore);
  for (size_t i = 0; i < in.n; i++)
    if (in.v[i].item == EX_LINK_FILE && is_file(in.v[i].path))
      free(in_tar(&p, in.v[i].path, 1));
  lw_inputs_free(&in);
  /* And what the device links' -l find in their -L directories. */
  struct lw_strvec libs = {0};
  p.oom |= lw_device_link_libs(o, &libs) != 0;
  for (size_t i = 0; i < libs.n; i++)
    free(in_tar(&p, libs.v[i], 1));
  lw_strvec_free(&libs);
  const char *base = base_name(o->reproduce);
  size_t len = strlen(base);
  char *root = len > 4 && strcmp(base + len - 4, ".tar") == 0
                   ? strndup(base, len - 4)
                   : strdup(base);
  struct lw_tmp *t = NULL;
  int rc = p.oom || !root ? lw_error(d, LW_ENOMEM, "out of memory") : 0;
  /* Its folder must be there (else the temporary beside it is what an
   * error would name). */
  char *dir = !rc ? strdup(o->reproduce) : NULL;
  char *slash = dir ? strrchr(dir, '/') : NULL;
  if (slash)
    *slash = 0;
  if (!rc && !dir)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  else if (!rc && slash && slash != dir && !is_dir(dir))
    rc = lw_error_path(d, LW_EIO, o->reproduce, "cannot write it: no "
                                                "folder '%s'",
                       dir);
  free(dir);
  if (!rc)
    rc = lw_tmp_create_beside(o->reproduce, &t, d);
  if (!rc)
    rc = write_tar(lw_tmp_path(t), root, &p, o, d);
  if (!rc)
    rc = lw_tmp_commit(&t, o->reproduce, d);
  free(root);
  lw_strvec_free(&p.files);
  lw_strvec_free(&p.args);
  return rc;
}
