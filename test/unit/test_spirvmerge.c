/* test_spirvmerge.c - one SPIR-V module from the parts of one module
 * (dl_spirv_merge), on parts assembled by SPIRV-Tools, as LLVM's back end
 * writes them: what is the same in every part kept once, what may not be
 * merged kept apart, imports joined to their export, the merged module
 * checked by SPIRV-Tools' validator; and what it refuses. */
#include "check.h"
#include "dl.h"

/* libspirv.h defines this constant: fatlink's library holds it too. */
#define kDefaultMaxIdBound test_spirvmerge_max_id_bound
#include "spirv_asm.h"

#include <stdlib.h>
#include <string.h>

/* How many instructions of opcode `op`; with `at` (not 0), only those
 * whose word `at` is `value`. */
static int count_where(const struct lw_buf *b, uint32_t op, int at,
                       uint32_t value) {
  const uint32_t *w = (const uint32_t *)(const void *)b->data;
  int n = 0;
  for (size_t i = 5; i < b->len / 4 && w[i] >> 16; i += w[i] >> 16)
    n += (w[i] & 0xffff) == op && (!at || w[i + at] == value);
  return n;
}

static int count(const struct lw_buf *b, uint32_t op) {
  return count_where(b, op, 0, 0);
}

/* The entry points' names, in order, joined by spaces. */
static void entries(const struct lw_buf *b, char *out, size_t cap) {
  const uint32_t *w = (const uint32_t *)(const void *)b->data;
  out[0] = 0;
  for (size_t i = 5; i < b->len / 4 && w[i] >> 16; i += w[i] >> 16)
    if ((w[i] & 0xffff) == 15) {
      size_t len = strlen(out);
      snprintf(out + len, cap - len, "%s%s", len ? " " : "",
               (const char *)(w + i + 3));
    }
}

/* A part: kernel NAME writes the work-item's id (a built-in, imported as
 * LLVM's back end declares it), a specialization constant (SpecId 3, and
 * one of SpecId SPEC2) and a constant table entry into global variable
 * `dg`, which part 0 defines (exported) and the others import; each part
 * also has a mutable variable of its own with the same initializer. */
static const char *const part_text =
    "OpCapability Addresses\n"
    "OpCapability Linkage\n"
    "OpCapability Kernel\n"
    "OpCapability Int64\n"
    "%std = OpExtInstImport \"OpenCL.std\"\n"
    "OpMemoryModel Physical64 OpenCL\n"
    "OpEntryPoint Kernel %k \"NAME\" %gid %dg %table %mine\n"
    "OpExecutionMode %k ContractionOff\n"
    "OpSource OpenCL_CPP 100000\n"
    "OpName %k \"NAME\"\n"
    "OpName %dg \"dg\"\n"
    "OpDecorate %gid BuiltIn GlobalInvocationId\n"
    "OpDecorate %gid Constant\n"
    "OpDecorate %gid LinkageAttributes \"__spirv_BuiltInGlobalInvocationId\" "
    "Import\n"
    "OpDecorate %dg LinkageAttributes \"dg\" LINK\n"
    "OpDecorate %spec SpecId 3\n"
    "OpDecorate %spec2 SpecId SPEC2\n"
    "OpDecorate %table Constant\n"
    "OpDecorate %mine Alignment 4\n"
    "%void = OpTypeVoid\n"
    "%int = OpTypeInt 32 0\n"
    "%long = OpTypeInt 64 0\n"
    "%c2 = OpConstant %int 2\n"
    "%c0 = OpConstant %int 0\n"
    "%v3long = OpTypeVector %long 3\n"
    "%p_in = OpTypePointer Input %v3long\n"
    "%p_cw = OpTypePointer CrossWorkgroup %int\n"
    "%arr = OpTypeArray %int %c2\n"
    "%p_arr = OpTypePointer UniformConstant %arr\n"
    "%p_uc = OpTypePointer UniformConstant %int\n"
    "%fn = OpTypeFunction %void\n"
    "%spec = OpSpecConstant %int 7\n"
    "%spec2 = OpSpecConstant %int 7\n"
    "%tabinit = OpConstantComposite %arr %c2 %c0\n"
    "%gid = OpVariable %p_in Input\n"
    "%dg = OpVariable %p_cw CrossWorkgroup DGINIT\n"
    "%table = OpVariable %p_arr UniformConstant %tabinit\n"
    "%mine = OpVariable %p_cw CrossWorkgroup %c0\n"
    "%k = OpFunction %void None %fn\n"
    "%entry = OpLabel\n"
    "%id = OpLoad %v3long %gid\n"
    "%x = OpCompositeExtract %long %id 0\n"
    "%x32 = OpUConvert %int %x\n"
    "%sum = OpIAdd %int %x32 %spec\n"
    "%sum2 = OpIAdd %int %sum %spec2\n"
    "%at = OpInBoundsPtrAccessChain %p_uc %table %c0 %c0\n"
    "%t = OpLoad %int %at\n"
    "%all = OpIAdd %int %sum2 %t\n"
    "OpStore %dg %all\n"
    "OpStore %mine %all\n"
    "OpReturn\n"
    "OpFunctionEnd\n";

/* The part text with NAME, LINK, DGINIT and SPEC2 put in. */
static int make_part(const char *name, int exports, unsigned spec2,
                     const char *text, struct lw_buf *out) {
  struct lw_buf t = {0};
  char spec[16];
  snprintf(spec, sizeof spec, "%u", spec2);
  for (const char *p = text; *p;) {
    const char *put = NULL;
    size_t skip = 0;
    if (strncmp(p, "NAME", 4) == 0)
      put = name, skip = 4;
    else if (strncmp(p, "LINK", 4) == 0)
      put = exports ? "Export" : "Import", skip = 4;
    else if (strncmp(p, " DGINIT", 7) == 0)
      put = exports ? " %c0" : "", skip = 7;
    else if (strncmp(p, "SPEC2", 5) == 0)
      put = spec, skip = 5;
    if (put) {
      lw_buf_append(&t, put, strlen(put));
      p += skip;
    } else {
      lw_buf_append(&t, p++, 1);
    }
  }
  lw_buf_append(&t, "", 1);
  int rc = assemble((const char *)t.data, out);
  lw_buf_free(&t);
  return rc;
}

int main(void) {
  struct lw_buf parts[3] = {{0}}, out = {0};
  struct lw_diag d = {0};
  char names[256];
  CHECK(make_part("k0", 1, 4, part_text, &parts[0]) == 0);
  CHECK(make_part("k1", 0, 4, part_text, &parts[1]) == 0);
  CHECK(make_part("k2", 0, 5, part_text, &parts[2]) == 0);
  for (int k = 0; k < 3; k++)
    CHECK(valid(&parts[k]));

  /* Three parts: one module, valid, with their kernels in order. */
  CHECK(dl_spirv_merge(parts, 3, 2, &out, &d) == 0);
  CHECK(valid(&out));
  entries(&out, names, sizeof names);
  CHECK(strcmp(names, "k0 k1 k2") == 0);
  CHECK(count(&out, 54 /* OpFunction */) == 3);
  CHECK(count(&out, 16 /* OpExecutionMode */) == 3);
  /* Kept once: capabilities, the instruction set, the source, types,
   * constants, the built-in, the constant table. */
  CHECK(count(&out, 17 /* OpCapability */) == 4);
  CHECK(count(&out, 11 /* OpExtInstImport */) == 1);
  CHECK(count(&out, 3 /* OpSource */) == 1);
  CHECK(count(&out, 21 /* OpTypeInt */) == 2);
  CHECK(count(&out, 43 /* OpConstant */) == 2);
  CHECK(count_where(&out, 59 /* OpVariable */, 3, 1 /* Input */) == 1);
  CHECK(count_where(&out, 59, 3, 0 /* UniformConstant */) == 1);
  /* dg once (the export; the imports joined to it), each part's mutable
   * variable apart: 1 + 3 of storage class CrossWorkgroup. */
  CHECK(count_where(&out, 59, 3, 5 /* CrossWorkgroup */) == 4);
  CHECK(count_where(&out, 71 /* OpDecorate */, 2, 41 /* Linkage */) == 2);
  CHECK(count_where(&out, 5 /* OpName */, 0, 0) == 4);
  /* Specialization constants: SpecId 3 once, SpecId 4 once, SpecId 5. */
  CHECK(count(&out, 50 /* OpSpecConstant */) == 3);
  CHECK(count_where(&out, 71, 2, 1 /* SpecId */) == 3);
  /* The same parts, the same module. */
  struct lw_buf again = {0};
  CHECK(dl_spirv_merge(parts, 3, 2, &again, &d) == 0);
  CHECK(again.len == out.len && memcmp(again.data, out.data, out.len) == 0);
  lw_buf_free(&again);

  /* One part: itself, ids renumbered. */
  out.len = 0;
  CHECK(dl_spirv_merge(parts, 1, 2, &out, &d) == 0);
  CHECK(valid(&out));
  CHECK(out.len == parts[0].len);

  /* A function one part exports and another imports: the import's
   * declaration goes, its calls call the export. */
  static const char *const fn_text =
      "OpCapability Addresses\n"
      "OpCapability Linkage\n"
      "OpCapability Kernel\n"
      "OpMemoryModel Physical64 OpenCL\n"
      "OpEntryPoint Kernel %k \"NAME\"\n"
      "OpDecorate %helper LinkageAttributes \"helper\" LINK\n"
      "%void = OpTypeVoid\n"
      "%int = OpTypeInt 32 0\n"
      "%c1 = OpConstant %int 1\n"
      "%fn = OpTypeFunction %void\n"
      "%hfn = OpTypeFunction %int %int\n"
      "BODY"
      "%k = OpFunction %void None %fn\n"
      "%entry = OpLabel\n"
      "%r = OpFunctionCall %int %helper %c1\n"
      "OpReturn\n"
      "OpFunctionEnd\n";
  static const char *const def =
      "%helper = OpFunction %int None %hfn\n"
      "%x = OpFunctionParameter %int\n"
      "%hb = OpLabel\n"
      "%y = OpIAdd %int %x %c1\n"
      "OpReturnValue %y\n"
      "OpFunctionEnd\n";
  static const char *const decl =
      "%helper = OpFunction %int None %hfn\n"
      "%x = OpFunctionParameter %int\n"
      "OpFunctionEnd\n";
  struct lw_buf fparts[2] = {{0}};
  for (int k = 0; k < 2; k++) {
    char text[2048];
    const char *body = strstr(fn_text, "BODY");
    snprintf(text, sizeof text, "%.*s%s%s", (int)(body - fn_text), fn_text,
             k ? decl : def, body + 4);
    CHECK(make_part(k ? "f1" : "f0", !k, 4, text, &fparts[k]) == 0);
    CHECK(valid(&fparts[k]));
  }
  out.len = 0;
  memset(&d, 0, sizeof d);
  CHECK(dl_spirv_merge(fparts, 2, 2, &out, &d) == 0);
  CHECK(valid(&out));
  entries(&out, names, sizeof names);
  CHECK(strcmp(names, "f0 f1") == 0);
  CHECK(count(&out, 54 /* OpFunction */) == 3);
  CHECK(count_where(&out, 71, 2, 41 /* Linkage */) == 1);
  CHECK(count(&out, 57 /* OpFunctionCall */) == 2);
  lw_buf_free(&fparts[0]);
  lw_buf_free(&fparts[1]);

  /* Two parts exporting one name: refused. */
  struct lw_buf twice[2] = {{0}};
  CHECK(make_part("k0", 1, 4, part_text, &twice[0]) == 0);
  CHECK(make_part("k1", 1, 4, part_text, &twice[1]) == 0);
  out.len = 0;
  CHECK(dl_spirv_merge(twice, 2, 2, &out, &d) == LW_ENOTSUP);
  CHECK(strstr(d.msg, "exported by two parts") != NULL);
  CHECK(out.len == 0);

  /* Memory models that differ, and a decoration group: refused. */
  static const char *const other_model =
      "OpCapability Addresses\n"
      "OpCapability Kernel\n"
      "OpMemoryModel Physical32 OpenCL\n";
  static const char *const group =
      "OpCapability Addresses\n"
      "OpCapability Kernel\n"
      "OpMemoryModel Physical64 OpenCL\n"
      "%g = OpDecorationGroup\n"
      "OpGroupDecorate %g %int\n"
      "%int = OpTypeInt 32 0\n";
  CHECK(assemble(other_model, &twice[1]) == 0);
  out.len = 0;
  memset(&d, 0, sizeof d);
  struct lw_buf pair[2] = {parts[0], twice[1]};
  CHECK(dl_spirv_merge(pair, 2, 2, &out, &d) == LW_ENOTSUP);
  CHECK(strstr(d.msg, "memory models") != NULL);
  CHECK(assemble(group, &twice[1]) == 0);
  pair[1] = twice[1];
  memset(&d, 0, sizeof d);
  CHECK(dl_spirv_merge(pair, 2, 2, &out, &d) == LW_ENOTSUP);
  CHECK(strstr(d.msg, "decoration group") != NULL);

  /* Not SPIR-V. */
  static const unsigned char junk[24] = "not a SPIR-V module...";
  pair[1] = (struct lw_buf){(unsigned char *)junk, sizeof junk, 0};
  memset(&d, 0, sizeof d);
  CHECK(dl_spirv_merge(pair, 2, 2, &out, &d) == LW_EBADOUT);
  CHECK(out.len == 0);

  lw_buf_free(&twice[0]);
  lw_buf_free(&twice[1]);
  for (int k = 0; k < 3; k++)
    lw_buf_free(&parts[k]);
  lw_buf_free(&out);
  return check_report("spirvmerge");
}
