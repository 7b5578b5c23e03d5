/* cpu.c - the spir64_x86_64 back end: an OpenCL CPU device compiles the
 * module, which is what Intel's opencl-aot does with its CPU runtime.
 *   in process  through the ICD loader: the first CPU device of any
 *               platform that takes SPIR-V (CL_DEVICE_IL_VERSION, OpenCL
 *               2.1+); clCreateProgramWithIL, clBuildProgram with the
 *               --cpu-tool-arg options, CL_PROGRAM_BINARIES.
 *   tool        opencl-aot --device=cpu <options> -o OUT IN, when it is on
 *               PATH (and the only way with --aot-in-process=off).
 * Debian's CPU device, PoCL 3.1, takes SPIR 1.2 bitcode only (cl_khr_spir),
 * written by an LLVM as old as its own; LLVM 22's bitcode is not that, so
 * such a device is reported, not tried. The platforms are looked at once. */
#define CL_TARGET_OPENCL_VERSION 300
#include "aot.h"

#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t find_once = PTHREAD_ONCE_INIT;
static cl_device_id cpu;     /* a CPU device that takes SPIR-V */
static char found[512];      /* what was found instead, for the error */

static void info(cl_device_id dev, cl_device_info what, char *buf,
                 size_t n) {
  buf[0] = 0;
  if (clGetDeviceInfo(dev, what, n - 1, buf, NULL) != CL_SUCCESS)
    buf[0] = 0;
  buf[n - 1] = 0;
}

static void find(void) {
  cl_platform_id plats[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) {
    snprintf(found, sizeof found, "no OpenCL platform");
    return;
  }
  size_t at = 0;
  for (cl_uint p = 0; p < np && p < 16 && !cpu; p++) {
    cl_device_id devs[8];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_CPU, 8, devs, &nd) !=
        CL_SUCCESS)
      continue;
    for (cl_uint k = 0; k < nd && k < 8 && !cpu; k++) {
      char name[128], il[256], ext[4096];
      info(devs[k], CL_DEVICE_NAME, name, sizeof name);
      info(devs[k], CL_DEVICE_IL_VERSION, il, sizeof il);
      if (strstr(il, "SPIR-V")) {
        cpu = devs[k];
        break;
      }
      info(devs[k], CL_DEVICE_EXTENSIONS, ext, sizeof ext);
      if (at < sizeof found)
        at += (size_t)snprintf(found + at, sizeof found - at, "%s'%s' (%s)",
                               at ? ", " : "", name,
                               strstr(ext, "cl_khr_spir")
                                   ? "SPIR 1.2 bitcode only, which LLVM 22 "
                                     "does not write"
                                   : "no SPIR-V");
    }
  }
  if (!cpu && !at)
    snprintf(found, sizeof found, "no OpenCL CPU device");
}

int aot_cpu_in_process(const char **why) {
  pthread_once(&find_once, find);
  *why = found;
  return cpu != NULL;
}

int aot_cpu_argv(const struct lw_strvec *args, const char *tool,
                 const char *in, const char *out, struct lw_strvec *argv) {
  return lw_strvec_push(argv, tool) ||
                 lw_strvec_push(argv, "--device=cpu") ||
                 lw_strvec_extend_from(argv, args) ||
                 lw_strvec_push(argv, "-o") || lw_strvec_push(argv, out) ||
                 lw_strvec_push(argv, in)
             ? LW_ENOMEM
             : 0;
}

/* The build log, in one line (lw_error_line). */
static void build_log(cl_program prog, char *line, size_t cap) {
  size_t n = 0;
  line[0] = 0;
  if (clGetProgramBuildInfo(prog, cpu, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) !=
          CL_SUCCESS ||
      n == 0)
    return;
  char *log = malloc(n);
  if (log && clGetProgramBuildInfo(prog, cpu, CL_PROGRAM_BUILD_LOG, n, log,
                                   NULL) == CL_SUCCESS)
    lw_error_line(log, strnlen(log, n), line, cap);
  free(log);
}

int aot_cpu_run(const struct lw_strvec *args, const unsigned char *spv,
                size_t n, struct lw_buf *image, struct lw_diag *d) {
  const char *why;
  if (!aot_cpu_in_process(&why))
    return lw_error(d, LW_ENOTSUP, "no OpenCL CPU device takes SPIR-V: %s",
                    why);
  struct lw_buf opts = {0};
  for (size_t i = 0; i < args->n; i++)
    if ((i && lw_buf_append(&opts, " ", 1)) ||
        lw_buf_append(&opts, args->v[i], strlen(args->v[i])))
      return lw_error(d, LW_ENOMEM, "out of memory");
  if (lw_buf_append(&opts, "", 1))
    return lw_error(d, LW_ENOMEM, "out of memory");
  cl_int err = CL_SUCCESS;
  cl_program prog = NULL;
  cl_context ctx = clCreateContext(NULL, 1, &cpu, NULL, NULL, &err);
  if (ctx)
    prog = clCreateProgramWithIL(ctx, spv, n, &err);
  int rc = 0;
  if (!prog) {
    rc = lw_error(d, LW_ETOOL, "OpenCL did not take the SPIR-V (error %d)",
                  err);
  } else if ((err = clBuildProgram(prog, 1, &cpu, (const char *)opts.data,
                                   NULL, NULL)) != CL_SUCCESS) {
    char line[300];
    build_log(prog, line, sizeof line);
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
