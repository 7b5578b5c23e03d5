/* test_fresh.c - work in a child forked for it alone (wrapper/fresh.c):
 * its output comes back whole (more than a pipe holds), its error with its
 * code, message and what it made before failing, its death as an error;
 * what it changes stays in it. And the SPIR-V check every module passes
 * (devlink/spirv.c): a valid module, one whose id bound is broken, and a
 * module of SPV_INTEL_function_pointers, whose rules Debian 12's validator
 * does not know. */
#include "check.h"
#include "run/run.h"

#include "dl.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int state = 1;

enum how { SEND, FAIL, DIE, SILENT, BIG };

static int child(void *ctx, struct lw_buf *out, struct lw_diag *d) {
  enum how how = *(enum how *)ctx;
  state = 2; /* the child's own */
  if (how == DIE)
    raise(SIGKILL);
  if (how == SILENT)
    _exit(3);
  if (how == BIG) {
    for (int i = 0; i < 1 << 20; i++) {
      unsigned char c = (unsigned char)(i * 7);
      if (lw_buf_append(out, &c, 1))
        return LW_ENOMEM;
    }
    return 0;
  }
  if (lw_buf_append(out, "made", 4))
    return LW_ENOMEM;
  return how == FAIL ? lw_error(d, LW_EBADOUT, "the child says no") : 0;
}

static int call(enum how how, struct lw_buf *out, struct lw_diag *d) {
  memset(d, 0, sizeof *d);
  out->len = 0;
  return lw_fresh_call(child, &how, out, d);
}

static void test_fresh_call(void) {
  struct lw_buf out = {0};
  struct lw_diag d;
  CHECK(call(SEND, &out, &d) == 0);
  CHECK(out.len == 4 && memcmp(out.data, "made", 4) == 0);
  CHECK(state == 1);

  CHECK(call(FAIL, &out, &d) == LW_EBADOUT);
  CHECK(strcmp(d.msg, "the child says no") == 0);
  CHECK(out.len == 4 && memcmp(out.data, "made", 4) == 0);

  CHECK(call(DIE, &out, &d) == LW_ETOOL);
  CHECK(strcmp(d.msg, "its process was killed by signal 9") == 0);

  CHECK(call(SILENT, &out, &d) == LW_ETOOL);
  CHECK(strcmp(d.msg, "its process failed") == 0);
  CHECK(out.len == 0);

  CHECK(call(BIG, &out, &d) == 0);
  int same = out.len == 1u << 20;
  for (size_t i = 0; same && i < out.len; i++)
    same = out.data[i] == (unsigned char)(i * 7);
  CHECK(same);
  lw_buf_free(&out);
}

/* OpCapability Addresses, Kernel, Linkage; OpMemoryModel Physical64
 * OpenCL; a void function with one block (spirv-as, SPIR-V 1.4). */
static const uint32_t minimal[] = {
    0x07230203, 0x00010400, 0x00070000, 0x00000005, 0x00000000, 0x00020011,
    0x00000004, 0x00020011, 0x00000006, 0x00020011, 0x00000005, 0x0003000e,
    0x00000002, 0x00000002, 0x00020013, 0x00000001, 0x00030021, 0x00000002,
    0x00000001, 0x00050036, 0x00000001, 0x00000003, 0x00000000, 0x00000002,
    0x000200f8, 0x00000004, 0x000100fd, 0x00010038};

static void test_validate(void) {
  uint32_t m[64];
  struct lw_diag d = {0};
  memcpy(m, minimal, sizeof minimal);
  CHECK(dl_spirv_validate((const unsigned char *)m, sizeof minimal, &d) == 0);

  m[3] = 2; /* the id bound: ids 2 to 4 are past it */
  CHECK(dl_spirv_validate((const unsigned char *)m, sizeof minimal, &d) ==
        LW_EBADOUT);
  CHECK(strncmp(d.msg, "invalid SPIR-V: ", 16) == 0);
  CHECK(!strchr(d.msg, '\n'));

  /* The label id defined twice, as LLVM 22 breaks modules. */
  memcpy(m, minimal, sizeof minimal);
  m[25] = 3; /* %l = %f */
  memset(&d, 0, sizeof d);
  CHECK(dl_spirv_validate((const unsigned char *)m, sizeof minimal, &d) ==
        LW_EBADOUT);

  /* Declaring SPV_INTEL_function_pointers waives only the validator's
   * two complaints the extension answers (e2e tests link such modules):
   * a label defined twice is still refused, as is a module of a size no
   * SPIR-V has. */
  static const char ext[] = "SPV_INTEL_function_pointers";
  size_t words = (sizeof ext + 3) / 4;
  memcpy(m, minimal, 5 * 4);
  m[5] = (uint32_t)((1 + words) << 16 | 10); /* OpExtension */
  memset(m + 6, 0, words * 4);
  memcpy(m + 6, ext, sizeof ext);
  memcpy(m + 6 + words, minimal + 5, sizeof minimal - 5 * 4);
  size_t n = sizeof minimal + (1 + words) * 4;
  m[6 + words + 20] = 3; /* the label id again */
  memset(&d, 0, sizeof d);
  CHECK(dl_spirv_validate((const unsigned char *)m, n, &d) == LW_EBADOUT);
  CHECK(dl_spirv_validate((const unsigned char *)m, 18, &d) == LW_EBADOUT);
}

/* The ids' check catches what LLVM 22 breaks, each in one line. */
static void test_check_ids(void) {
  uint32_t m[64];
  struct lw_diag d = {0};
  memcpy(m, minimal, sizeof minimal);
  CHECK(dl_spirv_check_ids((const unsigned char *)m, sizeof minimal, &d) == 0);

  m[3] = 2;
  CHECK(dl_spirv_check_ids((const unsigned char *)m, sizeof minimal, &d) ==
        LW_EBADOUT);
  CHECK(strcmp(d.msg, "invalid SPIR-V: ID 2 is not below the header's ID "
                      "bound") == 0);

  memcpy(m, minimal, sizeof minimal);
  m[25] = 3;
  memset(&d, 0, sizeof d);
  CHECK(dl_spirv_check_ids((const unsigned char *)m, sizeof minimal, &d) ==
        LW_EBADOUT);
  CHECK(strcmp(d.msg, "invalid SPIR-V: Id 3 is defined more than once") == 0);

  memcpy(m, minimal, sizeof minimal);
  m[3] = 6;
  m[23] = 5; /* the function's type: an id nothing defines */
  memset(&d, 0, sizeof d);
  CHECK(dl_spirv_check_ids((const unsigned char *)m, sizeof minimal, &d) ==
        LW_EBADOUT);
  CHECK(strcmp(d.msg, "invalid SPIR-V: ID 5 is used but not defined") == 0);

  m[3] = 0;
  memset(&d, 0, sizeof d);
  CHECK(dl_spirv_check_ids((const unsigned char *)m, sizeof minimal, &d) ==
        LW_EBADOUT);
  CHECK(strcmp(d.msg, "invalid SPIR-V: the header's ID bound is 0") == 0);
  CHECK(dl_spirv_check_ids((const unsigned char *)m, 18, &d) == LW_EBADOUT);
}

int main(void) {
  test_fresh_call();
  test_validate();
  test_check_ids();
  return check_report("fresh");
}
