/* llvmopts.c - LLVM's process-wide options for the code fatlink generates
 * in process (SPIR-V modules and the registration object): fatlink's own
 * settings, the SPIR-V extensions the back end may use, then the user's
 * -mllvm list. They are set once, before any job runs. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <llvm-c/Support.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs LLVM's option parser on argv in a forked child and collects what the
 * child writes to file descriptor `fd` (1 or 2; the other goes to
 * /dev/null), NUL-terminated. The LLVM-C parser neither exits nor stops on
 * an unknown option or a bad value: it drops the option, saying so on
 * stderr at most. A child lets fatlink look first: --help-list-hidden
 * lists every option this libLLVM registers (the help printer exits the
 * child, not us), and a value the parser refuses leaves its message. */
static int parse_in_child(int argc, const char **argv, int fd,
                          struct lw_buf *out, struct lw_diag *d) {
  int fds[2];
  if (pipe(fds) != 0)
    return lw_error(d, LW_EIO, "cannot check LLVM options: pipe failed");
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return lw_error(d, LW_EIO, "cannot check LLVM options: fork failed");
  }
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(fds[1], fd);
    if (null >= 0)
      dup2(null, fd == 1 ? 2 : 1);
    close(fds[0]);
    LLVMParseCommandLineOptions(argc, argv, NULL);
    _exit(0);
  }
  close(fds[1]);
  char chunk[65536];
  ssize_t n;
  int rc = 0;
  while ((n = read(fds[0], chunk, sizeof chunk)) > 0)
    if (!rc && lw_buf_append(out, chunk, (size_t)n))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  close(fds[0]);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (!rc && lw_buf_append(out, "", 1))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  return rc;
}

/* The name in an option "-name", "--name" or either with "=value"; NULL
 * when there is none. */
static const char *option_name(const char *opt, size_t *len) {
  const char *name = opt;
  while (*name == '-')
    name++;
  *len = strcspn(name, "=");
  return name == opt || *len == 0 || *len > 200 ? NULL : name;
}

/* Is `opt` in the help list, whose lines start "  -name" or "  --name"? */
static int known(const char *list, const char *opt) {
  size_t len;
  const char *name = option_name(opt, &len);
  if (!name)
    return 0;
  char line[256];
  for (int dashes = 1; dashes <= 2; dashes++) {
    snprintf(line, sizeof line, "\n  %s%.*s", dashes == 1 ? "-" : "--",
             (int)len, name);
    size_t n = strlen(line);
    for (const char *p = list; (p = strstr(p, line)) != NULL; p += n)
      if (p[n] == '=' || p[n] == ' ' || p[n] == '\n' || p[n] == 0)
        return 1;
  }
  return 0;
}

/* fatlink's own settings of LLVM's options.
 * -disable-lsr: SPIR-V is handed to a device compiler that optimises the
 * loops for the real device; LoopStrengthReduce would first rewrite each
 * loop for the SPIR-V target's generic cost model (a plain indexed loop
 * becomes three induction variables stepping an i8 pointer) and takes half
 * of the back end's time. DPC++'s translator (llvm-spirv) runs no such pass
 * either. `-mllvm -disable-lsr=false` restores it.
 * -translator-compatibility-mode and -avoid-spirv-capabilities=Shader: what
 * DPC++'s driver gives LLVM's SPIR-V back end, so that the SPIR-V is what
 * the device compilers take from DPC++'s translator: without the first, a
 * pointer compared with another (`p ? p : "..."`) becomes OpPtrNotEqual,
 * which Intel's GPU compiler (ocloc) refuses.
 * -strip-global-constants: a split module keeps no compile unit of another
 * translation unit for the sake of its constants' debug information alone
 * (what DPC++'s post-link strips; split.c runs the pass).
 * The SPIR-V extensions (-spirv-ext) come after: see below. */
static const char *const defaults[] = {
    "-disable-lsr", "-translator-compatibility-mode",
    "-avoid-spirv-capabilities=Shader", "-strip-global-constants"};

/* The SPIR-V extensions the back end may use: the set DPC++'s driver
 * enables for its SPIR targets when it makes SPIR-V with LLVM's back end
 * (-fsycl-use-spirv-backend-for-spirv-gen), which the Intel GPU and CPU
 * runtimes accept. LLVM 22 names SPV_INTEL_arbitrary_precision_integers
 * SPV_ALTERA_arbitrary_precision_integers. An extension changes only the
 * modules that use what it adds, e.g. SPV_INTEL_function_pointers for SYCL
 * virtual functions (vtables) and SPV_EXT_relaxed_printf_string_address_space
 * for printf with a format string outside the constant address space
 * (DPC++'s assert and experimental printf can make one); without it the
 * back end stops. --spirv-extensions edits the set; -mllvm -spirv-ext=
 * replaces it. */
static const char *const dpcpp_extensions[] = {
    "SPV_EXT_relaxed_printf_string_address_space",
    "SPV_EXT_shader_atomic_float16_add",
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_shader_atomic_float_min_max",
    "SPV_INTEL_2d_block_io",
    "SPV_ALTERA_arbitrary_precision_integers",
    "SPV_INTEL_bfloat16_conversion",
    "SPV_INTEL_bindless_images",
    "SPV_INTEL_cache_controls",
    "SPV_INTEL_float_controls2",
    "SPV_INTEL_fp_max_error",
    "SPV_INTEL_function_pointers",
    "SPV_INTEL_inline_assembly",
    "SPV_INTEL_joint_matrix",
    "SPV_INTEL_long_composites",
    "SPV_INTEL_subgroups",
    "SPV_INTEL_tensor_float32_conversion",
    "SPV_INTEL_variable_length_array",
    "SPV_KHR_16bit_storage",
    "SPV_KHR_cooperative_matrix",
    "SPV_KHR_expect_assume",
    "SPV_KHR_float_controls",
    "SPV_KHR_linkonce_odr",
    "SPV_KHR_no_integer_wrap_decoration",
    "SPV_KHR_non_semantic_info",
    "SPV_KHR_shader_clock",
    "SPV_KHR_uniform_group_instructions",
};

static ssize_t find(const struct lw_strvec *v, const char *s) {
  for (size_t i = 0; i < v->n; i++)
    if (strcmp(v->v[i], s) == 0)
      return (ssize_t)i;
  return -1;
}

static int cat(struct lw_buf *b, const char *a, const char *z) {
  return lw_buf_append(b, a, strlen(a)) || lw_buf_append(b, z, strlen(z))
             ? LW_ENOMEM
             : 0;
}

/* The -spirv-ext= option for DPC++'s set edited by `edits` (NULL: none):
 * comma-separated "+NAME" or "NAME" (add), "-NAME" (take out), "all"
 * (every extension LLVM knows) and "none" (start from nothing), applied in
 * order. NULL in *out when no extension is left. */
static int spirv_ext_option(const char *edits, char **out,
                            struct lw_diag *d) {
  struct lw_strvec on = {0}, off = {0}, items = {0};
  int all = 0, rc = 0;
  *out = NULL;
  for (size_t i = 0; !rc && i < sizeof dpcpp_extensions / sizeof *dpcpp_extensions; i++)
    rc = lw_strvec_push(&on, dpcpp_extensions[i]) ? LW_ENOMEM : 0;
  if (!rc && edits)
    rc = lw_strvec_split(&items, edits, ',');
  for (size_t i = 0; !rc && i < items.n; i++) {
    const char *e = items.v[i];
    if (!strcmp(e, "all") || !strcmp(e, "none")) {
      all = e[0] == 'a';
      lw_strvec_free(&on);
      lw_strvec_free(&off);
      continue;
    }
    int add = *e != '-';
    const char *name = e + (*e == '+' || *e == '-');
    if (!*name) {
      rc = lw_error(d, LW_EINVAL,
                    "--spirv-extensions: '%s' names no extension (expected "
                    "+NAME, -NAME, all or none)",
                    e);
      break;
    }
    struct lw_strvec *to = add ? &on : &off, *from = add ? &off : &on;
    ssize_t at = find(from, name);
    if (at >= 0) { /* the later edit wins */
      free(from->v[at]);
      memmove(from->v + at, from->v + at + 1,
              (from->n - (size_t)at - 1) * sizeof *from->v);
      from->n--;
    }
    if (find(to, name) < 0 && !(add && all) && lw_strvec_push(to, name))
      rc = LW_ENOMEM;
  }
  struct lw_buf b = {0};
  if (!rc && (all || on.n)) {
    rc = cat(&b, "-spirv-ext=", all ? "all" : "");
    for (size_t i = 0; !rc && i < on.n; i++)
      rc = cat(&b, i ? ",+" : "+", on.v[i]);
    for (size_t i = 0; !rc && all && i < off.n; i++)
      rc = cat(&b, ",-", off.v[i]);
    if (!rc && lw_buf_append(&b, "", 1))
      rc = LW_ENOMEM;
    if (rc)
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    else
      *out = (char *)b.data;
  }
  if (rc)
    lw_buf_free(&b);
  lw_strvec_free(&on);
  lw_strvec_free(&off);
  lw_strvec_free(&items);
  return rc;
}

/* Does the user's list set the option `opt` names? */
static int user_sets(const struct lw_strvec *opts, const char *opt) {
  size_t len, ulen;
  const char *name = option_name(opt, &len);
  for (size_t i = 0; i < opts->n; i++) {
    const char *u = option_name(opts->v[i], &ulen);
    if (u && ulen == len && memcmp(u, name, len) == 0)
      return 1;
  }
  return 0;
}

/* LLVM refuses an extension name with a message on stderr and drops the
 * whole option: a child tries the option first, and its message becomes
 * the error. */
static int check_spirv_ext(const char *opt, struct lw_diag *d) {
  const char *argv[2] = {"fatlink", opt};
  struct lw_buf msg = {0};
  int rc = parse_in_child(2, argv, 2, &msg, d);
  if (!rc && msg.len > 1) {
    char *text = (char *)msg.data;
    text[strcspn(text, "\n")] = 0;
    const char *why = strstr(text, "option: ");
    rc = lw_error(d, LW_EINVAL, "--spirv-extensions: %s",
                  why ? why + 8 : text);
  }
  lw_buf_free(&msg);
  return rc;
}

int dl_set_llvm_options(const struct lw_strvec *opts, const char *spirv_ext,
                        int trusted, struct lw_diag *d) {
  int rc = 0;
  if (!trusted && opts->n) {
    struct lw_buf list = {0};
    const char *argv[2] = {"fatlink", "--help-list-hidden"};
    rc = parse_in_child(2, argv, 1, &list, d);
    for (size_t i = 0; !rc && i < opts->n; i++)
      if (!known((const char *)list.data, opts->v[i]))
        rc = lw_error(d, LW_EINVAL, "unknown LLVM option '%s'", opts->v[i]);
    lw_buf_free(&list);
    if (rc)
      return rc;
  }
  char *ext = NULL;
  if (!user_sets(opts, "-spirv-ext"))
    rc = spirv_ext_option(spirv_ext, &ext, d);
  if (!rc && ext && spirv_ext && !trusted)
    rc = check_spirv_ext(ext, d);
  size_t ndef = sizeof defaults / sizeof *defaults;
  const char **argv = rc ? NULL : calloc(ndef + opts->n + 2, sizeof *argv);
  if (!rc && !argv)
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  if (rc) {
    free(ext);
    return rc;
  }
  int argc = 0;
  argv[argc++] = "fatlink";
  for (size_t i = 0; i < ndef; i++)
    if (!user_sets(opts, defaults[i]))
      argv[argc++] = defaults[i];
  if (ext)
    argv[argc++] = ext;
  for (size_t i = 0; i < opts->n; i++)
    argv[argc++] = opts->v[i];
  LLVMParseCommandLineOptions(argc, argv, NULL);
  free(argv);
  free(ext);
  return 0;
}

/* The option a help line names ("  --name=<v>   - ..." -> "name"), or
 * NULL for a line that names none (a value's "    =x", a heading). */
static const char *line_option(const char *line, size_t *len) {
  if (strncmp(line, "  -", 3) != 0)
    return NULL;
  return option_name(line + 2, len);
}

int dl_llvm_help(const char *request, const char *const (*own)[2],
                 size_t nown, FILE *out, struct lw_diag *d) {
  const char *argv[2] = {"fatlink", request};
  struct lw_buf help = {0};
  int rc = parse_in_child(2, argv, 1, &help, d);
  if (rc) {
    lw_buf_free(&help);
    return rc;
  }
  /* The tool's own options go into "General options:", in order, their
   * descriptions where that section's are. */
  char *text = (char *)help.data;
  char *general = strstr(text, "\nGeneral options:\n");
  size_t col = 0;
  if (general) {
    const char *first = strstr(general, "\n  -");
    const char *dash = first ? strstr(first, " - ") : NULL;
    if (dash && !memchr(first + 1, '\n', (size_t)(dash - first - 1)))
      col = (size_t)(dash - first);
  }
  size_t next = 0;
  for (char *line = text; line && *line;) {
    char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line + 1) : strlen(line);
    size_t len = 0;
    const char *name = general && line > general ? line_option(line, &len)
                                                 : NULL;
    int section_end = general && line > general + 1 && *line != ' ' &&
                      *line != '\n';
    while (next < nown &&
           (section_end || (name && strncmp(own[next][0], name, len) < 0))) {
      int w = fprintf(out, "  --%s", own[next][0]);
      int pad = w > 0 && (size_t)w < col ? (int)(col - (size_t)w) : 1;
      fprintf(out, "%*s- %s\n", pad, "", own[next][1]);
      next++;
    }
    if (section_end)
      general = NULL;
    fwrite(line, 1, n, out);
    line = end ? end + 1 : NULL;
  }
  lw_buf_free(&help);
  return fflush(out) ? lw_error(d, LW_EIO, "cannot write the help") : 0;
}
