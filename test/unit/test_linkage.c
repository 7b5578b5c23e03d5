/* test_linkage.c - what a SPIR-V module gives and takes by name
 * (dl_spirv_linkage), and imports retyped to their exporters' types
 * (dl_spirv_retype_imports), on modules assembled by SPIRV-Tools and
 * checked by its validator. */
#include "check.h"
#include "dl.h"

/* libspirv.h defines this constant: fatlink's library holds it too. */
#define kDefaultMaxIdBound test_linkage_max_id_bound
#include "spirv_asm.h"

#include <stdlib.h>
#include <string.h>

/* How many instructions of opcode `op`. */
static int count(const struct lw_buf *b, uint32_t op) {
  const uint32_t *w = (const uint32_t *)(const void *)b->data;
  int n = 0;
  for (size_t at = 5; at < b->len / 4 && w[at] >> 16; at += w[at] >> 16)
    n += (w[at] & 0xffff) == op;
  return n;
}

/* A kernel calling `smooth` (imported: a pointer to bytes, as LLVM's back
 * end declares it) and `first` (imported: returns such a pointer); it
 * exports `helper`. %RET and %ARG are put in by the caller. */
static const char *const program =
    "OpCapability Addresses\n"
    "OpCapability Linkage\n"
    "OpCapability Kernel\n"
    "OpCapability GenericPointer\n"
    "OpCapability Int8\n"
    "OpMemoryModel Physical64 OpenCL\n"
    "OpEntryPoint Kernel %k \"k\"\n"
    "OpDecorate %smooth LinkageAttributes \"smooth\" Import\n"
    "OpDecorate %first LinkageAttributes \"first\" Import\n"
    "OpDecorate %helper LinkageAttributes \"helper\" Export\n"
    "%void = OpTypeVoid\n"
    "%uint = OpTypeInt 32 0\n"
    "%uchar = OpTypeInt 8 0\n"
    "%float = OpTypeFloat 32\n"
    "%pu8 = OpTypePointer Generic %uchar\n"
    "%pcw = OpTypePointer CrossWorkgroup %float\n"
    "%pcwu8 = OpTypePointer CrossWorkgroup %uchar\n"
    "%fsmooth = OpTypeFunction %float %pu8 %uint\n"
    "%ffirst = OpTypeFunction %pu8 %pu8\n"
    "%fk = OpTypeFunction %void %pcwu8 %pcw\n"
    "%fhelper = OpTypeFunction %uint %uint\n"
    "%uint_3 = OpConstant %uint 3\n"
    "%smooth = OpFunction %float None %fsmooth\n"
    "%sp = OpFunctionParameter %pu8\n"
    "%sn = OpFunctionParameter %uint\n"
    "OpFunctionEnd\n"
    "%first = OpFunction %pu8 None %ffirst\n"
    "%fp = OpFunctionParameter %pu8\n"
    "OpFunctionEnd\n"
    "%helper = OpFunction %uint None %fhelper\n"
    "%hx = OpFunctionParameter %uint\n"
    "%hl = OpLabel\n"
    "OpReturnValue %hx\n"
    "OpFunctionEnd\n"
    "%k = OpFunction %void None %fk\n"
    "%kp = OpFunctionParameter %pcwu8\n"
    "%ko = OpFunctionParameter %pcw\n"
    "%kl = OpLabel\n"
    "%g = OpPtrCastToGeneric %pu8 %kp\n"
    "%p = OpFunctionCall %pu8 %first %g\n"
    "%v = OpFunctionCall %float %smooth %p %uint_3\n"
    "OpStore %ko %v\n"
    "OpReturn\n"
    "OpFunctionEnd\n";

static void test_linkage(void) {
  struct lw_buf b = {0};
  CHECK(assemble(program, &b) == 0);
  CHECK(valid(&b));
  struct dl_spirv_linkage l;
  struct lw_diag d = {0};
  CHECK(dl_spirv_linkage(b.data, b.len, &l, &d) == 0);
  CHECK(l.entries.n == 1 && strcmp(l.entries.v[0], "k") == 0);
  CHECK(l.imports.n == 2 && strcmp(l.imports.v[0], "smooth") == 0 &&
        strcmp(l.imports.v[1], "first") == 0);
  CHECK(l.import_types.n == 2 &&
        strcmp(l.import_types.v[0], "(F32;P8;I8;I32;)") == 0 &&
        strcmp(l.import_types.v[1], "(P8;I8;P8;I8;)") == 0);
  CHECK(l.exports.n == 1 && strcmp(l.exports.v[0], "helper") == 0 &&
        strcmp(l.export_types.v[0], "(I32;I32;)") == 0);
  dl_spirv_linkage_free(&l);

  /* Not SPIR-V: refused, by name of the problem. */
  static const unsigned char junk[24] = {0x03, 0x02, 0x23, 0x07, 1, 2, 3};
  CHECK(dl_spirv_linkage(junk, sizeof junk, &l, &d) == LW_EFORMAT);
  CHECK(strstr(d.msg, "not a readable SPIR-V module") != NULL);
  CHECK(dl_spirv_linkage(junk, 6, &l, &d) == LW_EFORMAT);
  lw_buf_free(&b);
}

static void test_retype(void) {
  struct lw_buf b = {0}, was = {0};
  struct lw_diag d = {0};
  CHECK(assemble(program, &b) == 0);
  CHECK(lw_buf_append(&was, b.data, b.len) == 0);
  struct lw_strvec names = {0}, types = {0};
  size_t n = 9;

  /* smooth's exporter takes floats (pointee only differs): retyped, its
   * call passes the pointer through a bitcast; float* is a new type. */
  lw_strvec_push(&names, "smooth");
  lw_strvec_push(&types, "(F32;P8;F32;I32;)");
  CHECK(dl_spirv_retype_imports(&b, &names, &types, &n, &d) == 0 && n == 1);
  CHECK(valid(&b));
  CHECK(count(&b, 124 /* OpBitcast */) == 1);
  struct dl_spirv_linkage l;
  CHECK(dl_spirv_linkage(b.data, b.len, &l, &d) == 0);
  CHECK(strcmp(l.import_types.v[0], "(F32;P8;F32;I32;)") == 0);
  CHECK(strcmp(l.import_types.v[1], "(P8;I8;P8;I8;)") == 0);
  dl_spirv_linkage_free(&l);

  /* first's returns a float pointer too: the result comes back through a
   * bitcast; the types made before are found, not made again. */
  lw_strvec_push(&names, "first");
  lw_strvec_push(&types, "(P8;F32;P8;F32;)");
  size_t types_before = (size_t)count(&b, 32 /* OpTypePointer */);
  CHECK(dl_spirv_retype_imports(&b, &names, &types, &n, &d) == 0 && n == 1);
  CHECK(valid(&b));
  CHECK(count(&b, 124) == 3);
  CHECK((size_t)count(&b, 32) == types_before);
  CHECK(dl_spirv_linkage(b.data, b.len, &l, &d) == 0);
  CHECK(strcmp(l.import_types.v[1], "(P8;F32;P8;F32;)") == 0);
  dl_spirv_linkage_free(&l);

  /* Left as they are: a different storage class, a parameter of another
   * type, a different count, a type this file cannot make, an export. */
  static const char *const no[][2] = {{"smooth", "(F32;P5;F32;I32;)"},
                                      {"smooth", "(F32;P8;I8;F32;)"},
                                      {"smooth", "(F32;P8;I8;)"},
                                      {"smooth", "(F32;P8;?;I32;)"},
                                      {"helper", "(I32;I8;)"}};
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    struct lw_strvec nn = {0}, tt = {0};
    lw_strvec_push(&nn, no[i][0]);
    lw_strvec_push(&tt, no[i][1]);
    CHECK(assemble(program, &b) == 0);
    CHECK(dl_spirv_retype_imports(&b, &nn, &tt, &n, &d) == 0 && n == 0);
    CHECK(b.len == was.len && memcmp(b.data, was.data, b.len) == 0);
    lw_strvec_free(&nn);
    lw_strvec_free(&tt);
  }

  /* A module that cannot be read is left for spirv-link to refuse. */
  b.len = 0;
  lw_buf_append(&b, "\x03\x02\x23\x07junkjunkjunkjunk", 20);
  CHECK(dl_spirv_retype_imports(&b, &names, &types, &n, &d) == 0 && n == 0);
  lw_strvec_free(&names);
  lw_strvec_free(&types);
  lw_buf_free(&b);
  lw_buf_free(&was);
}

int main(void) {
  test_linkage();
  test_retype();
  return check_report("linkage");
}
