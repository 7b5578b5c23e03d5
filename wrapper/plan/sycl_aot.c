/* sycl_aot.c - what a SYCL target's modules become: the JIT SPIR-V image
 * and native images for AOT devices (seeds 001, 003, 004).
 *   outs    for generic SPIR-V, the --sycl-targets names (spir64 is the JIT
 *           image; without the option, only it); for an image of an AOT
 *           triple (spir64_gen + intel_gpu_<dev>, spir64_x86_64,
 *           spir64_fpga), its own device. Each name is found in the device
 *           configuration, whose aot-toolchain gives the back end (ocloc:
 *           Intel GPUs; opencl-aot: CPUs; aoc: FPGAs) and whose options,
 *           with --gpu-tool-arg/--cpu-tool-arg/--fpga-tool-arg after them,
 *           are the tool's; "-device a,b" makes one out per device.
 *   filter  when a module's SPIR-V is ready its "SYCL/device requirements"
 *           go through the aspect filter for each AOT out; a module kept
 *           away from a device is said with --wrapper-verbose.
 *   aot     one job per module and device. Intel GPUs: ocloc in process
 *           (libocloc) or spawned; CPUs: an OpenCL CPU device in process
 *           (through the ICD loader) or the opencl-aot tool; FPGAs: aoc for
 *           hardware and simulation (-hardware/-simulation in
 *           --fpga-tool-arg), else the emulator: an OpenCL accelerator
 *           device in process or opencl-aot --device=fpga_fast_emu. Spawned
 *           with --aot-in-process=off or when the library or device is
 *           missing.
 * Wrap then registers, for each module, the JIT image (if asked) and every
 * native image beside it, all with the module's kernels and property sets;
 * a kernel no requested target got is a warning. */
#include "plan/planner.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The AOT tools, found on PATH when spawned. */
#define LW_OCLOC "ocloc"
#define LW_OPENCL_AOT "opencl-aot"

/* ---- outs ---------------------------------------------------------------- */

static int load_config(struct lw_plan *p, struct lw_diag *d) {
  if (p->have_config)
    return 0;
  int rc = aot_config_load(&p->config, p->o->device_config, d);
  for (size_t i = 0; i < p->config.warnings.n; i++)
    lw__warn(p, "%s", p->config.warnings.v[i]);
  p->have_config = !rc;
  if (rc)
    aot_config_free(&p->config);
  return rc;
}

static void out_free(struct sycl_out *o) {
  free(o->name);
  free(o->compile_target);
  lw_strvec_free(&o->args);
}

static int same_out(const struct sycl_out *a, const struct sycl_out *b) {
  if (a->kind != b->kind || a->args.n != b->args.n)
    return 0;
  for (size_t i = 0; i < a->args.n; i++)
    if (strcmp(a->args.v[i], b->args.v[i]) != 0)
      return 0;
  return 1;
}

/* Adds `o` (taking its contents) unless the target has the same already. */
static int add_out(struct target *t, struct sycl_out *o, struct lw_diag *d) {
  for (size_t i = 0; i < t->nouts; i++)
    if (same_out(&t->outs[i], o)) {
      out_free(o);
      return 0;
    }
  struct sycl_out *n = realloc(t->outs, (t->nouts + 1) * sizeof *n);
  if (!n) {
    out_free(o);
    return lw_error(d, LW_ENOMEM, "out of memory");
  }
  t->outs = n;
  t->outs[t->nouts++] = *o;
  return 0;
}

/* One out per device of the last "-device a,b" in o->args; earlier -device
 * pairs are dropped (the user's --gpu-tool-arg comes after the
 * configuration's options and wins). */
static int add_gen_outs(struct target *t, struct sycl_out *o,
                        struct lw_diag *d) {
  size_t at = o->args.n;
  for (size_t i = 0; i + 1 < o->args.n; i++)
    if (strcmp(o->args.v[i], "-device") == 0)
      at = i;
  if (at == o->args.n) {
    int rc = lw_error(d, LW_EINVAL,
                      "SYCL target '%s': no device for ocloc (give "
                      "--gpu-tool-arg=\"-device <name>\" or an intel_gpu_<name> "
                      "target)",
                      o->name);
    out_free(o);
    return rc;
  }
  struct lw_strvec devices = {0};
  int rc = lw_strvec_split(&devices, o->args.v[at + 1], ',');
  for (size_t k = 0; !rc && k < devices.n; k++) {
    struct sycl_out one = {.kind = AOT_GEN, .dev = o->dev};
    for (size_t i = 0; !rc && i < o->args.n; i++) {
      if (strcmp(o->args.v[i], "-device") == 0 && i + 1 < o->args.n) {
        if (i++ != at)
          continue;
        rc = lw_strvec_push(&one.args, "-device") ||
             lw_strvec_push(&one.args, devices.v[k]);
        continue;
      }
      rc = lw_strvec_push(&one.args, o->args.v[i]);
    }
    one.name = devices.n > 1 || strcmp(o->name, "spir64_gen") == 0
                   ? lw_xasprintf("%s -device %s", o->name, devices.v[k])
                   : strdup(o->name);
    /* ocloc spells some devices with '-' (adl-s), DPC++ targets with '_'. */
    one.compile_target = lw_xasprintf("intel_gpu_%s", devices.v[k]);
    for (char *c = one.compile_target; c && *c; c++)
      if (*c == '-')
        *c = '_';
    /* A device named only by -device is filtered as the configuration's
     * intel_gpu_<device>, when it has one. */
    const struct aot_device *known =
        one.compile_target && o->dev && strcmp(o->dev->name, "spir64_gen") == 0
            ? aot_config_find(&t->plan->config, one.compile_target)
            : NULL;
    if (known)
      one.dev = known;
    if (rc || !one.name || !one.compile_target) {
      out_free(&one);
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    } else {
      rc = add_out(t, &one, d);
    }
  }
  lw_strvec_free(&devices);
  out_free(o);
  return rc == LW_ENOMEM ? lw_error(d, rc, "out of memory") : rc;
}

static int add_named(struct target *t, const char *name, struct lw_diag *d) {
  const struct lw_plan *p = t->plan;
  const struct aot_device *dev =
      aot_config_find(&p->config, strcmp(name, "spirv64") == 0 ? "spir64"
                                                                 : name);
  if (!dev) {
    char *known = aot_config_names(&p->config);
    int rc = lw_error(d, LW_EINVAL, "unknown SYCL target '%s' (known: %s)",
                      name, known ? known : "?");
    free(known);
    return rc;
  }
  struct sycl_out o = {.kind = AOT_JIT, .dev = dev, .name = strdup(dev->name)};
  if (!o.name)
    return lw_error(d, LW_ENOMEM, "out of memory");
  const struct lw_strvec *extra = NULL;
  if (strcmp(dev->toolchain, "ocloc") == 0) {
    o.kind = AOT_GEN;
    extra = &p->o->gpu_tool_args;
  } else if (strcmp(dev->toolchain, "opencl-aot") == 0 ||
             strcmp(dev->toolchain, "aoc") == 0) {
    o.kind = dev->toolchain[0] == 'a' ? AOT_FPGA : AOT_CPU;
    extra = o.kind == AOT_FPGA ? &p->o->fpga_tool_args : &p->o->cpu_tool_args;
    if (!(o.compile_target = strdup(aot_runtime_target(o.kind)))) {
      out_free(&o);
      return lw_error(d, LW_ENOMEM, "out of memory");
    }
  } else if (strcmp(dev->name, "spir64") != 0) {
    int rc = lw_error(d, LW_ENOTSUP,
                      dev->toolchain[0]
                          ? "SYCL target '%s': AOT toolchain '%s' is not "
                            "supported yet (fatlink runs ocloc, opencl-aot "
                            "and aoc)"
                          : "SYCL target '%s' has no AOT toolchain in the "
                            "device configuration%s",
                      dev->name, dev->toolchain);
    out_free(&o);
    return rc;
  }
  int rc = 0;
  if (o.kind != AOT_JIT) {
    rc = lw_split_args(dev->name, dev->options, &o.args, d);
    if (!rc && lw_strvec_extend_from(&o.args, extra))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
  }
  if (rc) {
    out_free(&o);
    return rc;
  }
  return o.kind == AOT_GEN ? add_gen_outs(t, &o, d) : add_out(t, &o, d);
}

/* The OpenCL device of a CPU or FPGA-emulator out. */
static enum aot_cl_device cl_device(const struct sycl_out *out) {
  return out->kind == AOT_FPGA ? AOT_CL_FPGA_EMU : AOT_CL_CPU;
}

/* FPGA hardware and simulation: aoc, which must be on PATH. Otherwise in
 * process (the library loads, a device takes SPIR-V) unless
 * --aot-in-process=off; else the tool, which for OpenCL devices must be on
 * PATH. Decided once per out, when the target is planned. */
/* The launcher of out's back end: its own, else --tool-launcher's (or
 * NULL). */
static const struct lw_strvec *launcher(const struct lw_options *o,
                                        const struct sycl_out *out) {
  const struct lw_strvec *own = out->kind == AOT_GEN   ? &o->gpu_launcher
                                : out->kind == AOT_CPU ? &o->cpu_launcher
                                                       : &o->fpga_launcher;
  return own->n ? own : o->tool_launcher.n ? &o->tool_launcher : NULL;
}

static int decide_in_process(const struct target *t, struct sycl_out *out,
                             struct lw_diag *d) {
  /* A launcher runs the tool where it says: in process steps aside, and
   * the tool need not be on this machine's PATH. */
  const struct lw_strvec *l = launcher(t->plan->o, out);
  int tools = t->plan->o->aot_tools || l;
  if (out->kind == AOT_GEN) {
    out->in_process = !tools && aot_ocloc_in_process();
    return 0;
  }
  if (out->kind == AOT_FPGA && (out->aoc = aot_fpga_uses_aoc(&out->args))) {
    if (l || lw_on_path(LW_AOC))
      return 0;
    return lw_error(d, LW_ENOTSUP,
                    "SYCL target '%s': %s is not on PATH (FPGA hardware and "
                    "simulation builds need Intel's aoc)",
                    out->name, LW_AOC);
  }
  const char *why = "not looked for with --aot-in-process=off";
  out->in_process = !tools && aot_cl_in_process(cl_device(out), &why);
  if (out->in_process || l || lw_on_path(LW_OPENCL_AOT))
    return 0;
  return lw_error(d, LW_ENOTSUP,
                  "SYCL target '%s': no OpenCL %s device takes SPIR-V (%s) "
                  "and %s is not on PATH",
                  out->name, aot_cl_device_name(cl_device(out)), why,
                  LW_OPENCL_AOT);
}

/* NVIDIA and AMD GPUs are not compiled from SPIR-V: their images come from
 * the inputs' own SYCL code for the GPU's triple and arch (sycl_native.c).
 * 1 when `name` is one (d->code: 0, or the error when the link has no such
 * code), else 0. */
static int native_gpu(const struct lw_plan *p, const char *name,
                      struct lw_diag *d) {
  static const struct {
    const char *prefix, *triple;
  } gpus[] = {{"nvidia_gpu_", "nvptx64-nvidia-cuda"},
              {"amd_gpu_", "amdgcn-amd-amdhsa"}};
  d->code = 0;
  for (size_t g = 0; g < LW_ARRAY_SIZE(gpus); g++) {
    size_t n = strlen(gpus[g].prefix);
    if (strncmp(name, gpus[g].prefix, n) != 0)
      continue;
    for (size_t k = 0; k < p->n; k++)
      if (p->t[k].kind == EX_OFK_SYCL &&
          strncmp(p->t[k].triple, gpus[g].triple,
                  strcspn(gpus[g].triple, "-") + 1) == 0 &&
          strcmp(p->t[k].arch, name + n) == 0)
        return 1;
    lw_error(d, LW_EINVAL,
             "--sycl-targets=%s: the inputs hold no SYCL device code for "
             "%s %s (compile with -fsycl --offload-targets=spirv64,%s "
             "--offload-arch=%s)",
             name, gpus[g].triple, name + n, gpus[g].triple, name + n);
    return 1;
  }
  return 0;
}

static int plan_outs(struct target *t, struct lw_diag *d) {
  struct lw_plan *p = t->plan;
  const struct lw_options *o = p->o;
  int rc = 0;
  if (t->aot == AOT_JIT && !o->sycl_targets.n) {
    struct sycl_out jit = {.kind = AOT_JIT, .name = strdup("spir64")};
    return jit.name ? add_out(t, &jit, d)
                    : lw_error(d, LW_ENOMEM, "out of memory");
  }
  if ((rc = load_config(p, d)))
    return rc;
  if (t->aot == AOT_JIT) {
    for (size_t i = 0; !rc && i < o->sycl_targets.n; i++)
      rc = native_gpu(p, o->sycl_targets.v[i], d)
               ? d->code
               : add_named(t, o->sycl_targets.v[i], d);
    return rc;
  }
  /* An AOT triple's image: its arch names the device when the
   * configuration knows it (intel_gpu_skl), else the triple's own entry. */
  const char *name = t->arch[0] && aot_config_find(&p->config, t->arch)
                         ? t->arch
                         : aot_runtime_target(t->aot);
  return add_named(t, name, d);
}

int lw__aot_plan_target(struct target *t, struct lw_diag *d) {
  int rc = plan_outs(t, d);
  for (size_t k = 0; !rc && k < t->nouts; k++)
    if (t->outs[k].kind != AOT_JIT)
      rc = decide_in_process(t, &t->outs[k], d);
  return rc;
}

/* How out k takes specialization constants (DL_SPEC_*): as -spec-const=
 * says, else native for the JIT image and emulation for the device of an
 * AOT triple's image (its front end passes kernels the buffer); a device
 * of generic SPIR-V gets the default values, having no buffer; and with
 * -generate-device-image-default-spec-consts, AOT devices get images with
 * the default values too, which the runtime takes when no constant is set. */
unsigned lw__aot_spec_modes(const struct target *t, size_t k) {
  const struct lw_options *o = t->plan->o;
  int aot = t->outs[k].kind != AOT_JIT;
  unsigned m = o->sycl_spec_const  ? o->sycl_spec_const
               : !aot              ? DL_SPEC_NATIVE
               : t->aot != AOT_JIT ? DL_SPEC_EMULATION
                                   : DL_SPEC_DEFAULT;
  return m | (aot && o->sycl_default_spec_images ? DL_SPEC_DEFAULT : 0);
}

int lw__aot_takes(const struct target *t, size_t k, size_t module) {
  unsigned mode = module < t->split.n ? t->split.g[module].spec_mode : 0;
  return !mode || (mode & lw__aot_spec_modes(t, k));
}

int lw__aot_check_virtual(const struct target *t, struct lw_diag *d) {
  for (size_t i = 0; i < t->split.n; i++)
    for (size_t k = 0; t->split.g[i].vf_set && k < t->nouts; k++)
      if (t->outs[k].kind != AOT_JIT)
        return lw_error(d, LW_ENOTSUP,
                        "SYCL virtual functions (set '%s') for %s are not "
                        "supported yet: an AOT image needs the sets its "
                        "device supports linked in, not left to the "
                        "runtime",
                        t->split.g[i].vf_set, t->outs[k].name);
  return 0;
}

void lw__aot_spec_warning(const struct target *t) {
  if (t->aot != AOT_JIT || t->plan->o->sycl_spec_const)
    return;
  size_t i;
  for (i = 0; i < t->split.n; i++)
    if (t->split.g[i].spec_mode)
      break;
  for (size_t k = 0; i < t->split.n && k < t->nouts; k++)
    if (t->outs[k].kind != AOT_JIT)
      lw__warn(t->plan,
               "the %s images for %s hold the default values of their "
               "specialization constants: code compiled for JIT SPIR-V "
               "passes kernels no specialization-constant buffer (compile "
               "it for the AOT target to set them at run time)",
               t->triple, t->outs[k].name);
}

/* ---- filter and compile -------------------------------------------------- */

struct aot_job {
  struct sycl_module *m;
  size_t k;   /* the out */
  int cached; /* the image came from the cache */
  unsigned char key[LW_HASH_SIZE];
  int keyed;
};

/* The image from the cache, if it has it (not for aoc, whose runs leave
 * reports and read libraries and dependency files besides the SPIR-V). */
static int aot_lookup(struct aot_job *a, const char *what, struct lw_diag *d) {
  struct sycl_module *m = a->m;
  const struct lw_plan *p = m->t->plan;
  const struct sycl_out *out = &m->t->outs[a->k];
  if (!p->cache || out->aoc || p->o->dry_run)
    return 0;
  int rc = lw__aot_key(launcher(p->o, out), out, m->image.data, m->image.len,
                       a->key, d);
  if (rc)
    return rc;
  a->keyed = 1;
  a->cached = lw_cache_get(p->cache, a->key, what, &m->aot[a->k].image);
  return 0;
}

char *lw__kernel_list(const struct lw_strvec *k, size_t shown) {
  struct lw_buf b = {0};
  int rc = 0;
  for (size_t i = 0; !rc && i < k->n && i < shown; i++)
    rc = (i ? lw_buf_append(&b, ", ", 2) : 0) ||
         lw_buf_append(&b, k->v[i], strlen(k->v[i]));
  char more[32] = "";
  if (k->n > shown)
    snprintf(more, sizeof more, " and %zu more", k->n - shown);
  if (rc || lw_buf_append(&b, more, strlen(more) + 1)) {
    lw_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

/* The step's name in messages. */
static const char *step(const struct lw_job *j, const struct sycl_out *out) {
  if (out->kind == AOT_GEN)
    return j->kind->run ? "ocloc in process" : "ocloc";
  if (out->aoc)
    return "aoc";
  if (out->kind == AOT_FPGA)
    return j->kind->run ? "OpenCL FPGA emulator build in process"
                        : "opencl-aot";
  return j->kind->run ? "OpenCL CPU build in process" : "opencl-aot";
}

static int aot_prepare(struct lw_graph *g, struct lw_job *j,
                       struct lw_diag *d) {
  (void)g;
  struct aot_job *a = j->data;
  struct sycl_module *m = a->m;
  const struct sycl_out *out = &m->t->outs[a->k];
  const struct lw_options *o = m->t->plan->o;
  int rc = aot_lookup(a, j->what, d);
  if (rc || a->cached || j->kind->run)
    return rc; /* nothing to run; or in process: all stays in memory */
  j->launcher = launcher(o, out);
  /* The module's SPIR-V as a file, once for all its devices. */
  if (!m->spv && !(rc = lw_tmp_create("sycl-spirv64", "spv", &m->spv, d)) &&
      !o->dry_run)
    rc = lw_write_file(lw_tmp_path(m->spv), m->image.data, m->image.len, d);
  if (!rc)
    rc = lw_tmp_create("sycl-native",
                       out->kind != AOT_FPGA                  ? "bin"
                       : o->fpga_link == LW_FPGA_EARLY ? "aocr"
                                                               : "aocx",
                       &m->aot[a->k].out, d);
  if (rc)
    return rc;
  const char *in = lw_tmp_path(m->spv), *res = lw_tmp_path(m->aot[a->k].out);
  if (out->aoc) {
    const char *libs = NULL, *deps = NULL;
    if ((rc = lw__fpga_library_list(m->t->plan, &libs, d)) ||
        (aot_fpga_for_hardware(&out->args) &&
         (rc = lw__fpga_dep_files(m->t->plan, &deps, d))))
      return rc;
    char *report = aot_aoc_report_folder(o->output, m->index,
                                         m->t->nmodules);
    struct aot_aoc req = {LW_AOC, in,   res,  &out->args,
                          o->fpga_link == LW_FPGA_EARLY, libs, deps, report};
    rc = report ? aot_aoc_argv(&req, &j->argv) : LW_ENOMEM;
    free(report);
  } else {
    rc = out->kind == AOT_GEN
             ? aot_ocloc_argv(&out->args, LW_OCLOC, in, res, &j->argv)
             : aot_cl_argv(cl_device(out), &out->args, LW_OPENCL_AOT, in, res,
                           &j->argv);
  }
  return rc ? lw_error(d, LW_ENOMEM, "out of memory") : 0;
}

static int aot_run(struct lw_job *j, struct lw_diag *d) {
  struct aot_job *a = j->data;
  if (a->cached)
    return 0;
  /* libocloc and the OpenCL runtime are tools in this process: fatlink's
   * memory bound would fail their allocations (a 4,000-kernel program's
   * 1,200 compiles grew past it, and libocloc aborted on the failure). */
  lw_bound_end();
  struct sycl_module *m = a->m;
  const struct sycl_out *out = &m->t->outs[a->k];
  struct lw_diag why = {0};
  int rc = out->kind == AOT_GEN
               ? aot_ocloc_run(&out->args, m->image.data, m->image.len,
                               &m->aot[a->k].image, &why)
               : aot_cl_run(cl_device(out), &out->args, m->image.data,
                            m->image.len, &m->aot[a->k].image, &why);
  /* Named like a tool's failure: which step, which module. */
  return rc ? lw_error(d, rc, "%s: %.3000s", j->what, why.msg) : 0;
}

/* ocloc writes an ELF file (one device) or an ar archive (several); a CPU
 * runtime's binary format is its own. */
static int plausible(enum aot_target kind, const struct lw_buf *b) {
  if (kind != AOT_GEN)
    return b->len > 0;
  return (b->len >= 4 && memcmp(b->data, "\177ELF", 4) == 0) ||
         (b->len >= 8 && memcmp(b->data, "!<arch>\n", 8) == 0);
}

static int aot_done(struct lw_graph *g, struct lw_job *j, struct lw_diag *d) {
  (void)g;
  struct aot_job *a = j->data;
  struct sycl_module *m = a->m;
  struct aot_image *im = &m->aot[a->k];
  const struct target *t = m->t;
  const struct sycl_out *out = &t->outs[a->k];
  if (t->plan->o->dry_run)
    return 0;
  int rc = im->out ? lw_read_file(lw_tmp_path(im->out), &im->image, d) : 0;
  if (!rc && !plausible(out->kind, &im->image))
    rc = lw_error(d, LW_ETOOL, "%s: no device binary came out (%zu bytes%s)",
                  j->what, im->image.len,
                  out->kind == AOT_GEN ? ", neither ELF nor an archive" : "");
  if (!rc && a->keyed && !a->cached)
    lw_cache_put(t->plan->cache, a->key, im->image.data, im->image.len);
  static const struct dl_props none; /* a SPIR-V input's module */
  if (!rc &&
      dl_props_with_bytes(m->index < t->split.n ? &t->split.g[m->index].props
                                                : &none,
                          "SYCL/device requirements", "compile_target",
                          out->compile_target, strlen(out->compile_target),
                          &im->props))
    rc = lw_error(d, LW_ENOMEM, "out of memory");
  return rc;
}

static const struct lw_job_kind aot_tool_kind = {
    .name = "aot", .prepare = aot_prepare, .done = aot_done, .free_data = free};

/* aoc runs for hours on hardware builds. */
static const struct lw_job_kind aot_aoc_kind = {
    .name = "aoc", .prepare = aot_prepare, .done = aot_done, .free_data = free,
    .long_running = 1};

/* In process: libocloc and the OpenCL runtime bring their own compilers,
 * not fatlink's LLVM. */
static const struct lw_job_kind aot_inproc_kind = {
    .name = "aot", .prepare = aot_prepare, .run = aot_run, .done = aot_done,
    .free_data = free, .no_llvm = 1};

/* What an AOT compile may take (--wrapper-memory), with what the
 * compiles of its kind share: measured with Debian 12's ocloc on the
 * 4,000-kernel program's modules, 117 MiB resident for 10 KB of SPIR-V
 * and 158 MiB for 51 KB, of which concurrent ocloc processes share about
 * 50 MiB (their libraries: 8 at once took 63 MiB each): 64 MiB and 1,000
 * times the module each, 48 MiB shared. In process, the libraries are
 * this process's. The CPU device's compiler is taken to be alike; aoc's
 * hardware compiles take gigabytes. */
static void aot_footprint(struct lw_job *j, const struct sycl_out *out,
                          size_t spv) {
  j->footprint = (out->aoc ? UINT64_C(2) << 30 : UINT64_C(64) << 20) +
                 1000 * (uint64_t)spv;
  j->footprint_shared = out->in_process ? 0 : UINT64_C(48) << 20;
}

int lw__aot_module_ready(struct lw_graph *g, struct sycl_module *m,
                         struct lw_diag *d) {
  struct target *t = m->t;
  if (!m->aot && !(m->aot = calloc(t->nouts ? t->nouts : 1, sizeof *m->aot)))
    return lw_error(d, LW_ENOMEM, "out of memory");
  static const struct dl_props none;
  const struct dl_group *gr =
      m->index < t->split.n ? &t->split.g[m->index] : NULL;
  uint32_t aspects[64], fixed[64];
  struct aot_reqs r;
  lw_aot_reqs(gr ? &gr->props : &none, &r, aspects, fixed, 64);
  for (size_t k = 0; k < t->nouts; k++) {
    const struct sycl_out *out = &t->outs[k];
    if (out->kind == AOT_JIT || !lw__aot_takes(t, k, m->index))
      continue;
    char why[256];
    if (aot_filter(out->dev, &r, why, sizeof why)) {
      m->aot[k].dropped = 1;
      if (t->plan->o->verbose) {
        char *ks = gr ? lw__kernel_list(&gr->kernels, 3) : NULL;
        fprintf(stderr,
                "fatlink: module %zu of %s (%s) is not compiled for %s: %s\n",
                m->index, t->triple, ks ? ks : "?", out->name, why);
        free(ks);
      }
      continue;
    }
    struct aot_job *a = calloc(1, sizeof *a);
    if (!a)
      return lw_error(d, LW_ENOMEM, "out of memory");
    *a = (struct aot_job){.m = m, .k = k};
    struct lw_job *aj =
        lw_graph_add(g, out->aoc          ? &aot_aoc_kind
                        : out->in_process ? &aot_inproc_kind
                                          : &aot_tool_kind,
                     a, NULL, 0);
    if (!aj) {
      free(a);
      return lw_error(d, LW_ENOMEM, "out of memory");
    }
    aot_footprint(aj, out, m->image.len);
    /* named now: a job may wait for memory before it starts */
    if (!(aj->what = lw_xasprintf("%s for module %zu of %s (%s)",
                                  step(aj, out), m->index, t->triple,
                                  out->name)))
      return lw_error(d, LW_ENOMEM, "out of memory");
    if (lw_graph_add_dep(g, t->plan->wrap, aj))
      return lw_error(d, LW_ENOMEM, "out of memory");
  }
  return 0;
}

void lw__aot_check_coverage(const struct target *t) {
  for (size_t k = 0; k < t->nouts; k++)
    if (t->outs[k].kind == AOT_JIT)
      return; /* the JIT image has every kernel */
  for (size_t i = 0; i < t->nmodules && i < t->split.n; i++) {
    const struct sycl_module *m = &t->modules[i];
    size_t k, taken = 0;
    for (k = 0; k < t->nouts; k++) {
      if (!lw__aot_takes(t, k, i))
        continue; /* a copy of the module for other outs */
      taken++;
      if (m->aot && !m->aot[k].dropped)
        break;
    }
    if (k < t->nouts || !taken)
      continue;
    const struct lw_strvec *ks = &t->split.g[i].kernels;
    for (size_t n = 0; n < ks->n; n++)
      lw__warn(t->plan,
               "kernel '%s' has no image for any requested SYCL target (the "
               "device configuration says none supports it)",
               ks->v[n]);
  }
}

void lw__aot_free_plan(struct lw_plan *p) {
  if (p->have_config)
    aot_config_free(&p->config);
  p->have_config = 0;
}

void lw__aot_free(struct target *t) {
  for (size_t i = 0; i < t->nmodules; i++) {
    struct sycl_module *m = &t->modules[i];
    for (size_t k = 0; m->aot && k < t->nouts; k++) {
      lw_buf_free(&m->aot[k].image);
      dl_props_free(&m->aot[k].props);
    }
    free(m->aot);
    m->aot = NULL;
  }
  for (size_t k = 0; k < t->nouts; k++)
    out_free(&t->outs[k]);
  free(t->outs);
  t->outs = NULL;
  t->nouts = 0;
}
