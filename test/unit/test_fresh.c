/* test_fresh.c - work in a child forked for it alone (wrapper/fresh.c):
 * its output comes back whole (more than a pipe holds), its error with its
 * code, message and what it made before failing, its death as an error;
 * what it changes stays in it. And the SPIR-V check every module passes
 * (devlink/spirv.c): a valid module, one whose id bound is broken, and a
 * module of SPV_INTEL_function_pointers, whose rules Debian 12's validator
 * does not know; block labels taken from an earlier module given back;
 * the renumbering of the back end's modules checks their ids too. */
#include "check.h"
#include "run/run.h"

#include "dl.h"
#include "../../devlink/internal.h" /* dl__spirv_canonical_ids */

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

/* Renumbering checks what dl_spirv_check_ids does, in its parse: an id
 * used and never defined is named by its new number. */
static void test_canonical_ids(void) {
  uint32_t m[64];
  struct lw_diag d = {0};
  memcpy(m, minimal, sizeof minimal);
  struct lw_buf b = {(unsigned char *)m, sizeof minimal, 0};
  CHECK(dl__spirv_canonical_ids(&b, &d) == 0);
  CHECK(memcmp(m, minimal, sizeof minimal) == 0); /* numbered as it was */

  m[3] = 6;
  m[23] = 5; /* the function's type: an id nothing defines, the 4th seen */
  CHECK(dl__spirv_canonical_ids(&b, &d) == LW_EBADOUT);
  CHECK(strcmp(d.msg, "invalid SPIR-V: ID 4 is used but not defined") == 0);

  memcpy(m, minimal, sizeof minimal);
  m[25] = 3; /* the label's id: the function's */
  memset(&d, 0, sizeof d);
  CHECK(dl__spirv_canonical_ids(&b, &d) == LW_EBADOUT);
  CHECK(strstr(d.msg, "Id 3 is defined more than once") != NULL);
}

/* A module as LLVM 22's back end writes them: void function F (%3) with
 * blocks %4, %l2, %l3 (a branch on %true, %6, to %l2 or %l3, %l2 on to
 * %l3), function G (%9) with block %gl; %true named "t" and, with
 * `name_label`, %l3 named "b". Issue 160613 gives a label an earlier
 * module's id: l2/l3/gl other than 7/8/10. Returns its size in words. */
static size_t module(uint32_t *w, uint32_t l2, uint32_t l3, uint32_t gl,
                     int name_label) {
  size_t n = 0;
  uint32_t head[] = {0x07230203, 0x00010400, 0x00070000, 11, 0,
                     2 << 16 | 17, 4, 2 << 16 | 17, 6, 2 << 16 | 17, 5,
                     3 << 16 | 14, 2, 2, 3 << 16 | 5, 6, 't'};
  memcpy(w, head, sizeof head);
  n = sizeof head / 4;
  if (name_label) {
    w[n++] = 3 << 16 | 5;
    w[n++] = l3;
    w[n++] = 'b';
  }
  uint32_t body[] = {2 << 16 | 19, 1, 3 << 16 | 33, 2, 1, 2 << 16 | 20, 5,
                     3 << 16 | 41, 5, 6,
                     5 << 16 | 54, 1, 3, 0, 2, 2 << 16 | 248, 4,
                     4 << 16 | 250, 6, l2, l3, 2 << 16 | 248, l2,
                     2 << 16 | 249, l3, 2 << 16 | 248, l3, 1 << 16 | 253,
                     1 << 16 | 56,
                     5 << 16 | 54, 1, 9, 0, 2, 2 << 16 | 248, gl,
                     1 << 16 | 253, 1 << 16 | 56};
  memcpy(w + n, body, sizeof body);
  return n + sizeof body / 4;
}

/* Runs dl_spirv_labels on w[0..n) in place; its result. */
static int relabel(uint32_t *w, size_t n) {
  struct lw_buf b = {0};
  struct lw_diag d = {0};
  int rc = lw_buf_append(&b, w, n * 4);
  if (!rc)
    rc = dl_spirv_labels(&b, 0, &d);
  if (!rc && b.len == n * 4)
    memcpy(w, b.data, n * 4);
  else if (!rc)
    rc = -1;
  lw_buf_free(&b);
  return rc;
}

static int valid(const uint32_t *w, size_t n) {
  struct lw_diag d = {0};
  return dl_spirv_check_ids((const unsigned char *)w, n * 4, &d) == 0 &&
         dl_spirv_validate((const unsigned char *)w, n * 4, &d) == 0;
}

/* A label taken from an earlier module is given back its own id: the
 * module is the one written with nothing taken; where the labels cannot
 * be told apart, it is left as it was. */
static void test_labels(void) {
  uint32_t good[96], w[96], was[96];
  size_t n = module(good, 7, 8, 10, 0);
  CHECK(valid(good, n));
  CHECK(relabel(good, n) == 0);
  CHECK(valid(good, n));
  CHECK(good[3] == 15); /* four labels, fresh from the bound on */

  /* %l3 takes %true's id; G's label F's %l2; %l3 an id past the bound */
  static const uint32_t taken[][3] = {{7, 6, 10}, {7, 8, 7}, {7, 30, 10}};
  for (size_t i = 0; i < 3; i++) {
    CHECK(module(w, taken[i][0], taken[i][1], taken[i][2], 0) == n);
    CHECK(!valid(w, n));
    CHECK(relabel(w, n) == 0);
    CHECK(valid(w, n));
    if (i < 2) /* the same module, word for word */
      CHECK(memcmp(w, good, n * 4) == 0);
    else       /* fresh ids above the one past the bound */
      CHECK(w[3] == 35 && w[33] == 31);
  }

  /* A debug name of the id both a label and %true have: %true's, when the
   * module names no label */
  n = module(w, 7, 6, 10, 0);
  CHECK(relabel(w, n) == 0 && valid(w, n) && w[15] == 6);

  /* Left as it was: F's two blocks of one id; a name that may be either
   * the label's or %true's, in a module that names a label */
  static const uint32_t left[][4] = {{7, 7, 10, 0}, {7, 6, 10, 1}};
  for (size_t i = 0; i < 2; i++) {
    n = module(w, left[i][0], left[i][1], left[i][2], (int)left[i][3]);
    memcpy(was, w, n * 4);
    CHECK(relabel(w, n) == 0);
    CHECK(memcmp(w, was, n * 4) == 0);
    CHECK(!valid(w, n));
  }
  /* A named label whose id nothing else has is renamed with it */
  n = module(w, 7, 8, 10, 1);
  CHECK(relabel(w, n) == 0 && valid(w, n) && w[18] == 13);
}

int main(void) {
  test_fresh_call();
  test_validate();
  test_check_ids();
  test_canonical_ids();
  test_labels();
  return check_report("fresh");
}
