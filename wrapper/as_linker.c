/* as_linker.c - fatlink as the host linker itself (clang -fuse-ld=, gcc -B
 * with an `ld` that is fatlink): invoked without --linker-path, it picks the
 * real linker - FATLINK_LINKER, else the linker its own name asks for (ld,
 * ld.lld, ld.gold, ...), else ld, from PATH - and fills in what clang would
 * have passed: the host triple (from -m <emulation>, else the first ELF
 * input, else the build's own) and, when OpenMP device code is linked, the
 * OpenMP runtime libraries. A link with no device code to add is the real
 * linker, run in fatlink's place.
 *
 * Loops: the real linker is never fatlink itself (the same file), and every
 * host linker fatlink runs gets FATLINK_HOST_LINK in its environment, so a
 * fatlink started under it (a copy, a script calling fatlink) stops with an
 * error naming the chain instead of linking again. */
#include "internal.h"

#include "ex.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LW_LLVM_LIBDIR
#define LW_LLVM_LIBDIR "/usr/lib/llvm-22/lib"
#endif

static const char chain_var[] = "FATLINK_HOST_LINK";

int lw_as_linker_check_loop(const char *argv0, struct lw_diag *d) {
  const char *chain = getenv(chain_var);
  if (!chain || !*chain)
    return 0;
  return lw_error(d, LW_EINVAL,
                  "linker loop: %s -> %s, which is fatlink again: name the "
                  "real linker with FATLINK_LINKER= or --linker-path=",
                  chain, argv0);
}

char *lw_as_linker_chain_env(const char *argv0, const char *linker) {
  return lw_xasprintf("%s=%s -> %s", chain_var, argv0, linker);
}

/* GNU ld's emulations (-m) on Linux: the ELF files each makes (e_machine,
 * class, byte order) and the triple clang uses for it. */
static const struct {
  const char *emulation;
  unsigned machine;
  int is64, big_endian;
  const char *triple;
} emulations[] = {
    {"elf_x86_64", EM_X86_64, 1, 0, "x86_64-pc-linux-gnu"},
    {"elf32_x86_64", EM_X86_64, 0, 0, "x86_64-pc-linux-gnux32"},
    {"elf_i386", EM_386, 0, 0, "i386-pc-linux-gnu"},
    {"aarch64linux", EM_AARCH64, 1, 0, "aarch64-unknown-linux-gnu"},
    {"aarch64linuxb", EM_AARCH64, 1, 1, "aarch64_be-unknown-linux-gnu"},
    {"armelf_linux_eabi", EM_ARM, 0, 0, "arm-unknown-linux-gnueabi"},
    {"elf64lppc", EM_PPC64, 1, 0, "powerpc64le-unknown-linux-gnu"},
    {"elf64ppc", EM_PPC64, 1, 1, "powerpc64-unknown-linux-gnu"},
    {"elf64lriscv", EM_RISCV, 1, 0, "riscv64-unknown-linux-gnu"},
    {"elf32lriscv", EM_RISCV, 0, 0, "riscv32-unknown-linux-gnu"},
    {"elf64_s390", EM_S390, 1, 1, "s390x-unknown-linux-gnu"},
};

/* The triple clang uses for GNU ld's emulation `emulation`, or NULL. */
static const char *emulation_triple(const char *emulation) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(emulations); i++)
    if (strcmp(emulation, emulations[i].emulation) == 0)
      return emulations[i].triple;
  return NULL;
}

/* The triple of the emulation that makes ELF files like `id`, or NULL. */
static const char *elf_triple(const struct ex_elf_id *id) {
  for (size_t i = 0; i < LW_ARRAY_SIZE(emulations); i++)
    if (emulations[i].machine == id->machine &&
        emulations[i].is64 == id->is64 &&
        emulations[i].big_endian == id->big_endian)
      return emulations[i].triple;
  return NULL;
}

static int same_file(const char *a, const struct stat *b) {
  struct stat st;
  return stat(a, &st) == 0 && st.st_dev == b->st_dev && st.st_ino == b->st_ino;
}

/* Is `path` this program: fatlink-core, or the fatlink launcher (or a link
 * to either)? The launcher is beside fatlink-core in the build tree, in
 * bin/ of an installed prefix (fatlink-core in libexec/fatlink/). */
static int is_self(const char *path) {
  struct stat self;
  if (stat("/proc/self/exe", &self) == 0 && same_file(path, &self))
    return 1;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 32);
  if (n <= 0)
    return 0;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  char *dir_end = slash ? slash + 1 : exe;
  static const char *const launcher[] = {"fatlink", "../../bin/fatlink"};
  for (size_t i = 0; i < 2; i++) {
    strcpy(dir_end, launcher[i]);
    if (stat(exe, &self) == 0 && same_file(path, &self))
      return 1;
  }
  return 0;
}

/* The linker name fatlink's own name is: "ld" or "ld.<flavour>", or NULL. */
static const char *ld_name(const char *argv0) {
  const char *base = strrchr(argv0, '/');
  base = base ? base + 1 : argv0;
  if (strcmp(base, "ld") == 0 || strncmp(base, "ld.", 3) == 0)
    return base;
  return NULL;
}

int lw_as_linker_named(const char *argv0) { return ld_name(argv0) != NULL; }

int lw_as_wrapper_named(const char *argv0) {
  const char *base = strrchr(argv0, '/');
  return strcmp(base ? base + 1 : argv0, "clang-linker-wrapper") == 0;
}

/* The linker name fatlink's own name asks for. */
static const char *wanted_name(const char *argv0) {
  const char *name = ld_name(argv0);
  return name ? name : "ld";
}

static int find_linker(const char *argv0, char **out, struct lw_diag *d) {
  const char *env = getenv("FATLINK_LINKER");
  const char *name = env && *env ? env : wanted_name(argv0);
  const char *from = env && *env ? "FATLINK_LINKER" : "PATH";
  char *p = strchr(name, '/') ? strdup(name) : lw_find_on_path(name);
  if (!p && strchr(name, '/'))
    return lw_error(d, LW_ENOMEM, "out of memory");
  if (!p)
    return lw_error(d, LW_EINVAL,
                    "no '%s' on PATH to link with: name the linker with "
                    "FATLINK_LINKER= or --linker-path=",
                    name);
  if (access(p, X_OK) != 0) {
    int rc = lw_error(d, LW_EINVAL, "%s: '%s' cannot be run: %s", from, p,
                      strerror(errno));
    free(p);
    return rc;
  }
  if (is_self(p)) {
    int rc = lw_error(d, LW_EINVAL,
                      "linker loop: %s -> %s (%s), which is fatlink itself: "
                      "name the real linker with FATLINK_LINKER= or "
                      "--linker-path=",
                      argv0, p, from);
    free(p);
    return rc;
  }
  *out = p;
  return 0;
}

/* The triple the inputs say: -m <emulation> (the last), else the first ELF
 * input's class and machine. */
static const char *host_triple(const struct lw_options *o) {
  const struct lw_strvec *la = &o->linker_args;
  const char *triple = NULL;
  for (size_t i = 0; i < la->n; i++) {
    const char *e = strcmp(la->v[i], "-m") == 0 && i + 1 < la->n ? la->v[i + 1]
                    : strncmp(la->v[i], "-m", 2) == 0 && la->v[i][2]
                        ? la->v[i] + 2
                        : NULL;
    const char *t = e ? emulation_triple(e) : NULL;
    if (t)
      triple = t;
  }
  if (triple)
    return triple;
  struct lw_inputs in = {0};
  struct lw_diag ignore = {0};
  if (!lw_collect_inputs(la, 0, &in, &ignore))
    for (size_t i = 0; !triple && i < in.n; i++)
      if (in.v[i].item == EX_LINK_FILE) {
        struct ex_elf_id id;
        if (ex_elf_id(in.v[i].path, &id))
          triple = elf_triple(&id);
      }
  lw_inputs_free(&in);
  return triple ? triple : LW_DEFAULT_HOST_TRIPLE;
}

int lw_as_linker_setup(struct lw_options *o, struct lw_diag *d) {
  /* Under upstream's name fatlink is what clang runs, which always names
   * the host linker: it is not the host linker itself then (fatlink and the
   * ld names are); a link without one is upstream's error (main.c). */
  if (!o->linker_path && lw_as_wrapper_named(o->argv0))
    return 0;
  /* clang -B <dir> looks for its linker where it found fatlink, and an
   * installed libexec/fatlink/ has both names: the linker that name asks
   * for is then the real one, from PATH (or FATLINK_LINKER). */
  int named_self = o->linker_path && is_self(o->linker_path);
  if (o->linker_path && !named_self)
    return 0;
  char *linker = NULL;
  int rc = find_linker(named_self ? o->linker_path : o->argv0, &linker, d);
  if (rc)
    return rc;
  rc = lw_strvec_push(&o->storage, linker);
  free(linker);
  if (rc)
    return lw_error(d, LW_ENOMEM, "out of memory");
  o->linker_path = o->storage.v[o->storage.n - 1];
  o->as_linker = !named_self;
  if (!o->host_triple)
    o->host_triple = host_triple(o);
  return 0;
}

static int has_arg(const struct lw_strvec *v, const char *a) {
  for (size_t i = 0; i < v->n; i++)
    if (strcmp(v->v[i], a) == 0)
      return 1;
  return 0;
}

int lw_links_openmp(const struct ex_set *set) {
  for (size_t i = 0; i < set->n; i++)
    if (!set->images[i].linked && set->images[i].offload_kind == EX_OFK_OPENMP)
      return 1;
  return 0;
}

int lw_as_linker_runtime(struct lw_options *o, const struct ex_set *set) {
  if (!lw_links_openmp(set))
    return 0;
  /* What clang -fopenmp adds: the registration object calls libomptarget,
   * and the host code libomp. */
  if (!has_arg(&o->linker_args, "-L" LW_LLVM_LIBDIR) &&
      lw_strvec_push(&o->linker_args, "-L" LW_LLVM_LIBDIR))
    return LW_ENOMEM;
  if (!has_arg(&o->linker_args, "-lomp") &&
      !has_arg(&o->linker_args, "-liomp5") &&
      !has_arg(&o->linker_args, "-lgomp") &&
      lw_strvec_push(&o->linker_args, "-lomp"))
    return LW_ENOMEM;
  if (!has_arg(&o->linker_args, "-lomptarget") &&
      lw_strvec_push(&o->linker_args, "-lomptarget"))
    return LW_ENOMEM;
  return 0;
}

int lw_as_linker_needs_work(const struct ex_set *set) {
  for (size_t i = 0; i < set->n; i++)
    if (!set->images[i].linked)
      return 1;
  return 0;
}

/* The real linker's command line when fatlink steps aside. */
static int exec_argv(const struct lw_options *o, struct lw_strvec *argv) {
  int oom = lw_strvec_push(argv, o->linker_path) ||
            (o->long_version && lw_strvec_push(argv, "--version")) ||
            (o->help && lw_strvec_push(argv, "--help"));
  for (size_t i = 0; !oom && i < o->linker_args.n; i++)
    oom = lw_strvec_push(argv, o->linker_args.v[i]);
  return oom ? LW_ENOMEM : 0;
}

int lw_as_linker_can_exec(const struct lw_options *o) {
  struct lw_strvec argv = {0};
  int fits = !exec_argv(o, &argv) && lw_args_fit(&argv);
  lw_strvec_free(&argv);
  return fits;
}

int lw_as_linker_exec(const struct lw_options *o, struct lw_diag *d) {
  struct lw_strvec argv = {0};
  char *chain = lw_as_linker_chain_env(o->argv0, o->linker_path);
  int oom = !chain || setenv(chain_var, chain + sizeof chain_var, 1) != 0 ||
            exec_argv(o, &argv);
  free(chain);
  if (oom) {
    lw_strvec_free(&argv);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  fflush(NULL);
  execv(argv.v[0], argv.v);
  int rc =
      lw_error_path(d, LW_ETOOL, argv.v[0], "cannot run: %s", strerror(errno));
  lw_strvec_free(&argv);
  return rc;
}
