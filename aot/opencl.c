/* opencl.c - the back ends that are OpenCL devices: an OpenCL CPU device
 * compiles a spir64_x86_64 module, and the FPGA emulator (an accelerator
 * device) a spir64_fpga module in emulation, which is what Intel's
 * opencl-aot does with those runtimes.
 *   in process  through the ICD loader: the first device of the type, on
 *               any platform, that takes SPIR-V (CL_DEVICE_IL_VERSION,
 *               OpenCL 2.1+); clCreateProgramWithIL, clBuildProgram with
 *               the --cpu-tool-arg / --fpga-tool-arg options,
 *               CL_PROGRAM_BINARIES.
 *   tool        opencl-aot --device=cpu|fpga_fast_emu <options> -o OUT IN,
 *               when it is on PATH (and the only way with
 *               --aot-in-process=off).
 * Debian's CPU device, PoCL 3.1, takes SPIR 1.2 bitcode only (cl_khr_spir),
 * written by an LLVM as old as its own; LLVM 22's bitcode is not that, so
 * such a device is reported, not tried. The platforms are looked at once
 * for each type of device. */
#define CL_TARGET_OPENCL_VERSION 300
#include "aot.h"

#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What was found for each aot_cl_device: a device that takes SPIR-V, or
 * what there is instead, for the error. */
static struct look {
  pthread_once_t once;
  cl_device_type type;
  const char *what, *tool_name;
  cl_device_id dev;
  char found[512];
} looks[] = {
    [AOT_CL_CPU] = {PTHREAD_ONCE_INIT, CL_DEVICE_TYPE_CPU, "CPU", "cpu",
                    NULL, ""},
    [AOT_CL_FPGA_EMU] = {PTHREAD_ONCE_INIT, CL_DEVICE_TYPE_ACCELERATOR,
                         "FPGA emulator", "fpga_fast_emu", NULL, ""},
};

static void info(cl_device_id dev, cl_device_info what, char *buf,
                 size_t n) {
  buf[0] = 0;
  if (clGetDeviceInfo(dev, what, n - 1, buf, NULL) != CL_SUCCESS)
    buf[0] = 0;
  buf[n - 1] = 0;
}

static void find(struct look *l) {
  cl_platform_id plats[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) {
    snprintf(l->found, sizeof l->found, "no OpenCL platform");
    return;
  }
  size_t at = 0;
  for (cl_uint p = 0; p < np && p < 16 && !l->dev; p++) {
    cl_device_id devs[8];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], l->type, 8, devs, &nd) != CL_SUCCESS)
      continue;
    for (cl_uint k = 0; k < nd && k < 8 && !l->dev; k++) {
      char name[128], il[256], ext[4096];
      info(devs[k], CL_DEVICE_NAME, name, sizeof name);
      info(devs[k], CL_DEVICE_IL_VERSION, il, sizeof il);
      if (strstr(il, "SPIR-V")) {
        l->dev = devs[k];
        break;
      }
      info(devs[k], CL_DEVICE_EXTENSIONS, ext, sizeof ext);
      if (at < sizeof l->found)
        at += (size_t)snprintf(l->found + at, sizeof l->found - at,
                               "%s'%s' (%s)", at ? ", " : "", name,
                               strstr(ext, "cl_khr_spir")
                                   ? "SPIR 1.2 bitcode only, which LLVM 22 "
                                     "does not write"
                                   : "no SPIR-V");
    }
  }
  if (!l->dev && !at)
    snprintf(l->found, sizeof l->found, "no OpenCL %s device", l->what);
}

static void find_cpu(void) { find(&looks[AOT_CL_CPU]); }
static void find_emu(void) { find(&looks[AOT_CL_FPGA_EMU]); }

static struct look *look(enum aot_cl_device which) {
  struct look *l = &looks[which];
  pthread_once(&l->once, which == AOT_CL_CPU ? find_cpu : find_emu);
  return l;
}

int aot_cl_in_process(enum aot_cl_device which, const char **why) {
  struct look *l = look(which);
  *why = l->found;
  return l->dev != NULL;
}

const char *aot_cl_device_name(enum aot_cl_device which) {
  return looks[which].what;
}

int aot_cl_argv(enum aot_cl_device which, const struct lw_strvec *args,
                const char *tool, const char *in, const char *out,
                struct lw_strvec *argv) {
  return lw_strvec_push(argv, tool) ||
                 lw_strvec_pushf(argv, "--device=%s", looks[which].tool_name) ||
                 lw_strvec_extend_from(argv, args) ||
                 lw_strvec_push(argv, "-o") || lw_strvec_push(argv, out) ||
                 lw_strvec_push(argv, in)
             ? LW_ENOMEM
             : 0;
}

/* The build log, in one line (lw_error_line). */
static void build_log(cl_program prog, cl_device_id dev, char *line,
                      size_t cap) {
  size_t n = 0;
  line[0] = 0;
  if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) !=
          CL_SUCCESS ||
      n == 0)
    return;
  char *log = malloc(n);
  if (log && clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log,
                                   NULL) == CL_SUCCESS)
    lw_error_line(log, strnlen(log, n), line, cap);
  free(log);
}

int aot_cl_run(enum aot_cl_device which, const struct lw_strvec *args,
               const unsigned char *spv, size_t n, struct lw_buf *image,
               struct lw_diag *d) {
  struct look *l = look(which);
  cl_device_id dev = l->dev;
  if (!dev)
    return lw_error(d, LW_ENOTSUP, "no OpenCL %s device takes SPIR-V: %s",
                    l->what, l->found);
  struct lw_buf opts = {0};
  for (size_t i = 0; i < args->n; i++)
    if ((i && lw_buf_append(&opts, " ", 1)) ||
        lw_buf_append(&opts, args->v[i], strlen(args->v[i])))
      return lw_error(d, LW_ENOMEM, "out of memory");
  if (lw_buf_append(&opts, "", 1))
    return lw_error(d, LW_ENOMEM, "out of memory");
  cl_int err = CL_SUCCESS;
  cl_program prog = NULL;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (ctx)
    prog = clCreateProgramWithIL(ctx, spv, n, &err);
  int rc = 0;
  if (!prog) {
    rc = lw_error(d, LW_ETOOL, "OpenCL did not take the SPIR-V (error %d)",
                  err);
  } else if ((err = clBuildProgram(prog, 1, &dev, (const char *)opts.data,
                                   NULL, NULL)) != CL_SUCCESS) {
    char line[300];
    build_log(prog, dev, line, sizeof line);
    rc = lw_error(d, LW_ETOOL, "OpenCL build failed (error %d)%s%s", err,
                  line[0] ? ": " : "", line);
  } else {
    size_t size = 0;
    err = clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size,
                           NULL);
    unsigned char *bin = err == CL_SUCCESS && size ? malloc(size) : NULL;
    if (bin)
      err = clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin,
                             NULL);
    if (!bin || err != CL_SUCCESS)
      rc = lw_error(d, LW_ETOOL, "OpenCL gave no program binary (error %d)",
                    err);
    else if (lw_buf_append(image, bin, size))
      rc = lw_error(d, LW_ENOMEM, "out of memory");
    free(bin);
  }
  if (prog)
    clReleaseProgram(prog);
  if (ctx)
    clReleaseContext(ctx);
  lw_buf_free(&opts);
  return rc;
}
