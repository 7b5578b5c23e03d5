/* test_icd.c - a small OpenCL implementation for tests, loaded by the real
 * ICD loader (ocl-icd) through OCL_ICD_VENDORS. It stands in for a CPU
 * runtime that takes SPIR-V (Intel's), which Debian does not have: PoCL 3.1
 * takes SPIR 1.2 bitcode only, and for Intel's FPGA emulator (an
 * accelerator device).
 * One platform, a CPU device and an accelerator device ("fatlink test FPGA
 * emulator"; FLTEST_NO_ACCELERATOR=1 hides it), both with SPIR-V IL. A
 * program built from SPIR-V (which must start with the SPIR-V magic) gets a
 * recognisable binary:
 *   FLTESTCPU1\n  (FLTESTEMU1\n on the accelerator)
 *   options: <the build options>\n
 *   kernels: <the module's OpEntryPoint names>\n
 *   spirv: <its size in bytes>\n
 * Build options are checked: "-fail-please" fails the build with a log, any
 * word not starting with '-' is refused as an invalid option. A program made
 * from such a binary (clCreateProgramWithBinary) builds, and creates exactly
 * the kernels its binary lists. Nothing runs: enqueueing is not there. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct _cl_icd_dispatch table;

struct _cl_platform_id {
  struct _cl_icd_dispatch *dispatch;
};
struct _cl_device_id {
  struct _cl_icd_dispatch *dispatch;
  cl_device_type type;
  const char *name, *magic;
};
struct _cl_context {
  struct _cl_icd_dispatch *dispatch;
  int refs;
  cl_device_id dev;
};
struct _cl_program {
  struct _cl_icd_dispatch *dispatch;
  int refs, built;
  cl_device_id dev;
  char *spirv_kernels; /* space-separated entry point names */
  size_t spirv_size;
  char *binary;        /* after a build, or given */
  size_t binary_size;
  char log[256];
};
struct _cl_kernel {
  struct _cl_icd_dispatch *dispatch;
};

static struct _cl_platform_id platform = {&table};
static struct _cl_device_id cpu = {&table, CL_DEVICE_TYPE_CPU,
                                    "fatlink test CPU", "FLTESTCPU1\n"};
static struct _cl_device_id accel = {&table, CL_DEVICE_TYPE_ACCELERATOR,
                                      "fatlink test FPGA emulator",
                                      "FLTESTEMU1\n"};
enum { MAGIC_LEN = 11 };

static cl_int give_bytes(const void *p, size_t n, size_t size, void *value,
                         size_t *ret) {
  if (ret)
    *ret = n;
  if (value) {
    if (size < n)
      return CL_INVALID_VALUE;
    memcpy(value, p, n);
  }
  return CL_SUCCESS;
}

static cl_int give(const char *s, size_t size, void *value, size_t *ret) {
  return give_bytes(s, strlen(s) + 1, size, value, ret);
}

static cl_int CL_API_CALL platform_info(cl_platform_id p,
                                        cl_platform_info what, size_t size,
                                        void *value, size_t *ret) {
  (void)p;
  switch (what) {
  case CL_PLATFORM_ICD_SUFFIX_KHR: return give("FLTEST", size, value, ret);
  case CL_PLATFORM_NAME: return give("fatlink test platform", size, value, ret);
  case CL_PLATFORM_VENDOR: return give("fatlink", size, value, ret);
  case CL_PLATFORM_VERSION: return give("OpenCL 3.0 test", size, value, ret);
  case CL_PLATFORM_PROFILE: return give("FULL_PROFILE", size, value, ret);
  case CL_PLATFORM_EXTENSIONS:
    return give("cl_khr_icd cl_khr_il_program", size, value, ret);
  default: return CL_INVALID_VALUE;
  }
}

static cl_int CL_API_CALL device_ids(cl_platform_id p, cl_device_type type,
                                     cl_uint n, cl_device_id *out,
                                     cl_uint *num) {
  (void)p;
  cl_device_id found[2];
  cl_uint k = 0;
  if (type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT))
    found[k++] = &cpu;
  if ((type & CL_DEVICE_TYPE_ACCELERATOR) && !getenv("FLTEST_NO_ACCELERATOR"))
    found[k++] = &accel;
  if (!k)
    return CL_DEVICE_NOT_FOUND;
  if (num)
    *num = k;
  for (cl_uint i = 0; out && i < n && i < k; i++)
    out[i] = found[i];
  return CL_SUCCESS;
}

static cl_int CL_API_CALL device_info(cl_device_id dev, cl_device_info what,
                                      size_t size, void *value, size_t *ret) {
  cl_platform_id plat = &platform;
  switch (what) {
  case CL_DEVICE_TYPE:
    return give_bytes(&dev->type, sizeof dev->type, size, value, ret);
  case CL_DEVICE_PLATFORM:
    return give_bytes(&plat, sizeof plat, size, value, ret);
  case CL_DEVICE_NAME: return give(dev->name, size, value, ret);
  case CL_DEVICE_VERSION: return give("OpenCL 3.0", size, value, ret);
  case CL_DEVICE_IL_VERSION:
    return give("SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2 SPIR-V_1.3 SPIR-V_1.4",
                size, value, ret);
  case CL_DEVICE_EXTENSIONS: return give("cl_khr_il_program", size, value, ret);
  default: return CL_INVALID_VALUE;
  }
}

static cl_int CL_API_CALL device_keep(cl_device_id dev) {
  (void)dev;
  return CL_SUCCESS;
}

static cl_context CL_API_CALL create_context(
    const cl_context_properties *props, cl_uint n, const cl_device_id *devs,
    void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
    void *user, cl_int *err) {
  (void)props;
  (void)notify;
  (void)user;
  if (n != 1 || (devs[0] != &cpu && devs[0] != &accel)) {
    if (err)
      *err = CL_INVALID_DEVICE;
    return NULL;
  }
  struct _cl_context *c = calloc(1, sizeof *c);
  c->dispatch = &table;
  c->refs = 1;
  c->dev = devs[0];
  if (err)
    *err = CL_SUCCESS;
  return c;
}

static cl_int CL_API_CALL retain_context(cl_context c) {
  c->refs++;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL release_context(cl_context c) {
  if (--c->refs == 0)
    free(c);
  return CL_SUCCESS;
}

static struct _cl_program *new_program(cl_context c) {
  struct _cl_program *p = calloc(1, sizeof *p);
  p->dispatch = &table;
  p->refs = 1;
  p->dev = c->dev;
  return p;
}

/* The names of the module's OpEntryPoint instructions (opcode 15: word 1
 * the execution model, word 2 the function, then the name). */
static char *entry_points(const uint32_t *w, size_t words) {
  size_t cap = 1024, len = 0;
  char *names = calloc(1, cap);
  for (size_t i = 5; i < words;) {
    uint32_t op = w[i] & 0xffff, n = w[i] >> 16;
    if (n == 0 || i + n > words)
      break;
    if (op == 15 && n > 3) {
      const char *s = (const char *)&w[i + 3];
      size_t sl = strnlen(s, (n - 3) * 4);
      if (len + sl + 2 > cap)
        names = realloc(names, cap = 2 * (len + sl + 2));
      if (len)
        names[len++] = ' ';
      memcpy(names + len, s, sl);
      len += sl;
      names[len] = 0;
    }
    i += n;
  }
  return names;
}

static cl_program CL_API_CALL create_with_il(cl_context c, const void *il,
                                             size_t size, cl_int *err) {
  if (size < 20 || size % 4 || *(const uint32_t *)il != 0x07230203u) {
    if (err)
      *err = CL_INVALID_VALUE;
    return NULL;
  }
  struct _cl_program *p = new_program(c);
  p->spirv_kernels = entry_points(il, size / 4);
  p->spirv_size = size;
  if (err)
    *err = CL_SUCCESS;
  return p;
}

static cl_program CL_API_CALL create_with_binary(
    cl_context c, cl_uint n, const cl_device_id *devs, const size_t *lengths,
    const unsigned char **bins, cl_int *status, cl_int *err) {
  (void)devs;
  int ok = n == 1 && lengths[0] > MAGIC_LEN &&
           memcmp(bins[0], c->dev->magic, MAGIC_LEN) == 0;
  if (status)
    status[0] = ok ? CL_SUCCESS : CL_INVALID_BINARY;
  if (!ok) {
    if (err)
      *err = CL_INVALID_BINARY;
    return NULL;
  }
  struct _cl_program *p = new_program(c);
  p->binary = malloc(lengths[0] + 1);
  memcpy(p->binary, bins[0], lengths[0]);
  p->binary[lengths[0]] = 0;
  p->binary_size = lengths[0];
  if (err)
    *err = CL_SUCCESS;
  return p;
}

static cl_int CL_API_CALL build(cl_program p, cl_uint n,
                                const cl_device_id *devs, const char *options,
                                void(CL_CALLBACK *notify)(cl_program, void *),
                                void *user) {
  (void)n;
  (void)devs;
  (void)notify;
  (void)user;
  options = options ? options : "";
  if (p->binary) { /* from a binary: nothing to compile */
    p->built = 1;
    return CL_SUCCESS;
  }
  if (strstr(options, "-fail-please")) {
    snprintf(p->log, sizeof p->log,
             "test ICD: compiling the module\ntest ICD: error: the build "
             "failed as asked (-fail-please)\n");
    return CL_BUILD_PROGRAM_FAILURE;
  }
  for (const char *o = options; *o;) {
    o += strspn(o, " ");
    if (*o && *o != '-')
      return CL_INVALID_BUILD_OPTIONS;
    o += strcspn(o, " ");
  }
  size_t cap = strlen(options) + strlen(p->spirv_kernels) + 128;
  p->binary = malloc(cap);
  p->binary_size = (size_t)snprintf(p->binary, cap,
                                    "%soptions: %s\nkernels: %s\nspirv: %zu\n",
                                    p->dev->magic, options, p->spirv_kernels,
                                    p->spirv_size);
  p->built = 1;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL build_info(cl_program p, cl_device_id dev,
                                     cl_program_build_info what, size_t size,
                                     void *value, size_t *ret) {
  (void)dev;
  if (what == CL_PROGRAM_BUILD_LOG)
    return give(p->log, size, value, ret);
  return CL_INVALID_VALUE;
}

static cl_int CL_API_CALL program_info(cl_program p, cl_program_info what,
                                       size_t size, void *value, size_t *ret) {
  cl_uint one = 1;
  cl_device_id dev = p->dev;
  size_t bsize = p->built ? p->binary_size : 0;
  switch (what) {
  case CL_PROGRAM_NUM_DEVICES:
    return give_bytes(&one, sizeof one, size, value, ret);
  case CL_PROGRAM_DEVICES:
    return give_bytes(&dev, sizeof dev, size, value, ret);
  case CL_PROGRAM_BINARY_SIZES:
    return give_bytes(&bsize, sizeof bsize, size, value, ret);
  case CL_PROGRAM_BINARIES:
    if (ret)
      *ret = sizeof(unsigned char *);
    if (value) {
      unsigned char **out = value;
      if (size < sizeof *out || !p->built)
        return CL_INVALID_PROGRAM_EXECUTABLE;
      memcpy(out[0], p->binary, p->binary_size);
    }
    return CL_SUCCESS;
  default: return CL_INVALID_VALUE;
  }
}

static cl_int CL_API_CALL retain_program(cl_program p) {
  p->refs++;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL release_program(cl_program p) {
  if (--p->refs)
    return CL_SUCCESS;
  free(p->spirv_kernels);
  free(p->binary);
  free(p);
  return CL_SUCCESS;
}

static cl_kernel CL_API_CALL create_kernel(cl_program p, const char *name,
                                           cl_int *err) {
  const char *list = p->binary ? strstr(p->binary, "kernels: ") : NULL;
  int found = 0;
  size_t n = strlen(name);
  for (const char *k = list ? list + 9 : ""; *k && *k != '\n' && !found;) {
    size_t len = strcspn(k, " \n");
    found = len == n && memcmp(k, name, n) == 0;
    k += len + (k[len] == ' ');
  }
  if (!p->built || !found) {
    if (err)
      *err = p->built ? CL_INVALID_KERNEL_NAME : CL_INVALID_PROGRAM_EXECUTABLE;
    return NULL;
  }
  struct _cl_kernel *k = calloc(1, sizeof *k);
  k->dispatch = &table;
  if (err)
    *err = CL_SUCCESS;
  return k;
}

static cl_int CL_API_CALL release_kernel(cl_kernel k) {
  free(k);
  return CL_SUCCESS;
}

static void fill(void) {
  table.clGetPlatformInfo = platform_info;
  table.clGetDeviceIDs = device_ids;
  table.clGetDeviceInfo = device_info;
  table.clRetainDevice = device_keep;
  table.clReleaseDevice = device_keep;
  table.clCreateContext = create_context;
  table.clRetainContext = retain_context;
  table.clReleaseContext = release_context;
  table.clCreateProgramWithIL = create_with_il;
  table.clCreateProgramWithBinary = create_with_binary;
  table.clBuildProgram = build;
  table.clGetProgramBuildInfo = build_info;
  table.clGetProgramInfo = program_info;
  table.clRetainProgram = retain_program;
  table.clReleaseProgram = release_program;
  table.clCreateKernel = create_kernel;
  table.clReleaseKernel = release_kernel;
}

CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n,
                                                       cl_platform_id *out,
                                                       cl_uint *num) {
  fill();
  if (num)
    *num = 1;
  if (out && n)
    out[0] = &platform;
  return CL_SUCCESS;
}

/* The loader also looks this one up by name (cl_khr_icd). */
CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p,
                                                  cl_platform_info what,
                                                  size_t size, void *value,
                                                  size_t *ret) {
  return platform_info(p, what, size, value, ret);
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *n) {
  return strcmp(n, "clIcdGetPlatformIDsKHR") == 0
             ? (void *)clIcdGetPlatformIDsKHR
             : NULL;
}
