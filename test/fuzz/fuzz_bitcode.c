/* fuzz_bitcode.c - libFuzzer harness: bitcode inputs with embedded objects
 * (extract/bitcode.c, and bitcode symbols in symbol resolution). The data is
 * a recipe, not bitcode: a flags byte, then up to three payloads split at
 * "\n--next--\n". The harness builds a well-formed module through LLVM-C -
 * each payload a global's initializer named by an !llvm.embedded.objects
 * node, of the right shape or not, for .llvm.offloading or another section,
 * and a function whose name comes from the data - writes it as bitcode and
 * links it, alone or as an archive member pulled in by -u of that function.
 * What varies is what fatlink does with bitcode; LLVM's reader itself is not
 * hardened (its crashes become errors, which link_mutations.py covers). */
#include "ex.h"

#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

enum {
  F_ARCHIVE = 1,       /* the bitcode is a member of an ar archive */
  F_PULL = 2,          /* -u of the function (pulls the member in) */
  F_DEFINE = 4,        /* the function is defined, not only declared */
  F_OTHER_SECTION = 8, /* the first node names another section */
  F_SHORT_NODE = 16,   /* the second node has one operand */
  F_FUNC_NODE = 32,    /* the third node points at the function */
  F_TWICE = 64,        /* the first global is named by two nodes */
};

static LLVMModuleRef build(LLVMContextRef c, unsigned flags,
                           const unsigned char *data, size_t n) {
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("fuzz", c);
  LLVMSetTarget(m, "x86_64-unknown-linux-gnu");
  /* The function: its name is the payloads' first bytes, up to a NUL. */
  char name[33] = "f";
  size_t k = 0;
  while (k < n && k < 32 && data[k] && data[k] != '\n')
    k++;
  if (k)
    memcpy(name, data, k), name[k] = 0;
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c), NULL, 0, 0);
  LLVMValueRef fn = LLVMAddFunction(m, name, fty);
  if (flags & F_DEFINE) {
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, fn, "e"));
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
  }
  static const char sep[] = "\n--next--\n";
  LLVMValueRef first = NULL;
  for (int i = 0; i < 3; i++) {
    const unsigned char *end = memmem(data, n, sep, sizeof sep - 1);
    size_t len = end ? (size_t)(end - data) : n;
    LLVMValueRef init =
        LLVMConstStringInContext2(c, (const char *)data, len, 1);
    LLVMValueRef g = LLVMAddGlobal(m, LLVMTypeOf(init), "llvm.embedded.object");
    LLVMSetInitializer(g, init);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetGlobalConstant(g, 1);
    const char *sec =
        i == 0 && (flags & F_OTHER_SECTION) ? ".llvm.lto" : ".llvm.offloading";
    LLVMSetSection(g, sec);
    LLVMMetadataRef ops[2] = {
        LLVMValueAsMetadata(i == 2 && (flags & F_FUNC_NODE) ? fn : g),
        LLVMMDStringInContext2(c, sec, strlen(sec))};
    unsigned nops = i == 1 && (flags & F_SHORT_NODE) ? 1 : 2;
    LLVMValueRef node =
        LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, ops, nops));
    LLVMAddNamedMetadataOperand(m, "llvm.embedded.objects", node);
    if (i == 0)
      first = node;
    if (!end)
      break;
    n -= len + sizeof sep - 1;
    data = end + sizeof sep - 1;
  }
  if (flags & F_TWICE)
    LLVMAddNamedMetadataOperand(m, "llvm.embedded.objects", first);
  return m;
}

/* A GNU ar archive of one member "fuzz.bc" (no symbol index: the scan reads
 * the member's own symbols), written to fd. */
static int write_archive(int fd, const char *bc, size_t len) {
  char hdr[61];
  snprintf(hdr, sizeof hdr, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", "fuzz.bc/", "0",
           "0", "0", "644", len);
  return write(fd, "!<arch>\n", 8) != 8 || write(fd, hdr, 60) != 60 ||
         write(fd, bc, len) != (ssize_t)len ||
         (len % 2 && write(fd, "\n", 1) != 1);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  if (n < 1)
    return 0;
  unsigned flags = data[0];
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef m = build(c, flags, data + 1, n - 1);
  LLVMMemoryBufferRef mb = LLVMWriteBitcodeToMemoryBuffer(m);
  const char *bc = LLVMGetBufferStart(mb);
  size_t len = LLVMGetBufferSize(mb);
  int fd = memfd_create("input", 0);
  int bad = fd < 0;
  if (!bad && (flags & F_ARCHIVE))
    bad = write_archive(fd, bc, len);
  else if (!bad)
    bad = write(fd, bc, len) != (ssize_t)len;
  if (!bad) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    LLVMValueRef fn = LLVMGetFirstFunction(m);
    struct ex_link_input in[2];
    size_t k = 0;
    if (flags & F_PULL)
      in[k++] =
          (struct ex_link_input){EX_LINK_UNDEFINED, LLVMGetValueName(fn), 0};
    in[k++] = (struct ex_link_input){EX_LINK_FILE, path, 0};
    struct ex_set set = {0};
    struct lw_diag d = {0};
    struct lw_strvec always = {0};
    ex_scan_link(&set, in, k, 1, &always, &d);
    ex_set_free(&set);
  }
  if (fd >= 0)
    close(fd);
  LLVMDisposeMemoryBuffer(mb);
  LLVMDisposeModule(m);
  LLVMContextDispose(c);
  return 0;
}
