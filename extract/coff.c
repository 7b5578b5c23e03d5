/* coff.c - COFF objects (clang --target=x86_64-pc-windows-msvc): sections
 * named .llvm.offloading (COFF has no section types) hold OffloadBinary
 * blobs. Read through LLVM-C's object API (LLVMCreateBinary and its section
 * iterator) rather than a reader of our own: it already validates the
 * headers and section table and works on the mapped bytes without copying,
 * and its section contents point into our buffer. */
#include "internal.h"

#include <llvm-c/Core.h>
#include <llvm-c/Object.h>
#include <string.h>

static int match_coff(const unsigned char *head, size_t len) {
  if (len < 20)
    return 0;
  unsigned machine = head[0] | head[1] << 8;
  unsigned nsections = head[2] | head[3] << 8;
  unsigned opt_header = head[16] | head[17] << 8;
  /* x86-64, i386, ARM64, ARMNT objects: no optional header in objects. */
  return (machine == 0x8664 || machine == 0x14c || machine == 0xaa64 ||
          machine == 0x1c4) &&
         nsections > 0 && nsections < 0xff00 && opt_header == 0;
}

static int scan_coff(struct ex_set *set, const unsigned char *buf, size_t len,
                     const char *origin, struct lw_diag *d) {
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(
      (const char *)buf, len, origin, 0);
  if (!mb)
    return lw_error(d, LW_ENOMEM, "out of memory");
  char *msg = NULL;
  lw_doing(origin, "reading it as COFF");
  LLVMBinaryRef bin = LLVMCreateBinary(mb, NULL, &msg);
  int rc = 0;
  if (!bin || LLVMBinaryGetType(bin) != LLVMBinaryTypeCOFF) {
    rc = lw_error_path(d, LW_EFORMAT, origin, "not a valid COFF object%s%s",
                       msg ? ": " : "", msg ? msg : "");
  } else {
    LLVMSectionIteratorRef it = LLVMObjectFileCopySectionIterator(bin);
    for (; !rc && !LLVMObjectFileIsSectionIteratorAtEnd(bin, it);
         LLVMMoveToNextSection(it)) {
      const char *name = LLVMGetSectionName(it);
      if (!name || strncmp(name, ".llvm.offloading", 16) != 0)
        continue;
      const char *p = LLVMGetSectionContents(it);
      uint64_t size = LLVMGetSectionSize(it);
      if (!p || (const unsigned char *)p < buf || size > len ||
          (size_t)((const unsigned char *)p - buf) > len - size) {
        rc = lw_error_path(d, LW_EFORMAT, origin,
                           "offloading section runs past the end of the file");
        break;
      }
      rc = ex__parse_offload_binaries(set, (const unsigned char *)p, size,
                                      origin, "COFF section", d);
    }
    LLVMDisposeSectionIterator(it);
  }
  if (msg)
    LLVMDisposeMessage(msg);
  if (bin)
    LLVMDisposeBinary(bin);
  LLVMDisposeMemoryBuffer(mb);
  lw_done();
  return rc;
}

const struct ex__format ex__format_coff = {"COFF", match_coff, scan_coff};
