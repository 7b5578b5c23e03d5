/* coff.c - COFF objects (clang --target=x86_64-pc-windows-msvc): sections
 * named .llvm.offloading (COFF has no section types) hold OffloadBinary
 * blobs. Read through LLVM-C's object API (LLVMCreateBinary and its section
 * iterator) rather than a reader of our own: it already validates the
 * headers and section table and works on the mapped bytes without copying,
 * and its section contents point into our buffer. */
#include "internal.h"

#include <llvm-c/Core.h>
#include <llvm-c/Object.h>
#include <stdint.h>
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

static uint32_t u32(const unsigned char *p) {
  return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Is a long section name ("/<offset>" into the string table) there? */
static int name_in_file(const unsigned char *buf, size_t len,
                        const unsigned char *name) {
  if (name[0] != '/')
    return 1;
  uint64_t off = 0;
  int digits = 0;
  for (int k = 1; k < 8 && name[k]; k++, digits++) {
    if (name[k] < '0' || name[k] > '9')
      return 0; /* "//" base64 offsets: no object of ours has them */
    off = off * 10 + (uint64_t)(name[k] - '0');
  }
  /* LLVM drops a string table it cannot use whole (no symbol table
   * pointer, past the end, no NUL at its end) and then fails on the name. */
  uint64_t symtab = u32(buf + 8);
  uint64_t strtab = symtab + (uint64_t)u32(buf + 12) * 18;
  if (!symtab || !digits || strtab + 4 > len)
    return 0;
  uint64_t size = u32(buf + strtab);
  if (size <= 4 || size > len - strtab || buf[strtab + size - 1] != 0)
    return 0;
  return off >= 4 && off < size;
}

/* LLVM-C's object API turns a broken section - raw data past the end of
 * the file, a name outside the string table - into a fatal error when its
 * contents or name are asked for (found by fuzzing): the section table is
 * checked first. */
static int sections_in_file(const unsigned char *buf, size_t len) {
  unsigned n = buf[2] | buf[3] << 8;
  size_t table = 20 + (size_t)(buf[16] | buf[17] << 8);
  if (table > len || (len - table) / 40 < n)
    return 0;
  for (unsigned i = 0; i < n; i++) {
    const unsigned char *h = buf + table + 40 * (size_t)i;
    uint32_t size = u32(h + 16), ptr = u32(h + 20);
    /* 0: no bytes in the file (uninitialised data); otherwise even an
     * empty section's data must start inside the file. */
    if (ptr && (uint64_t)ptr + size > len)
      return 0;
    if (!name_in_file(buf, len, h))
      return 0;
  }
  return 1;
}

static int scan_coff(struct ex_set *set, const unsigned char *buf, size_t len,
                     const char *origin, struct lw_diag *d) {
  if (!sections_in_file(buf, len))
    return lw_error_path(d, LW_EFORMAT, origin,
                         "not a valid COFF object: a section's data or name "
                         "lies outside the file");
  LLVMMemoryBufferRef mb =
      LLVMCreateMemoryBufferWithMemoryRange((const char *)buf, len, origin, 0);
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

int ex__is_coff(const unsigned char *buf, size_t len) {
  return match_coff(buf, len);
}

/* The global symbols of a COFF object's symbol table, for archive member
 * selection: LLVM-C's symbol iterator tells no storage class, so the
 * 18-byte records are read here. External (class 2) symbols are defined
 * in a section (or common: section 0 with a size), undefined otherwise;
 * weak externals (class 105) are weak references. A table outside the
 * file is a format error; aux records are skipped. */
int ex__coff_symbols(const unsigned char *buf, size_t len, const char *origin,
                     ex__sym_cb cb, void *ctx, struct lw_diag *d) {
  enum { RECORD = 18, EXTERNAL = 2, WEAK_EXTERNAL = 105 };
  uint64_t table = u32(buf + 8), n = u32(buf + 12);
  uint64_t strtab = table + n * RECORD;
  if (!table || !n)
    return 0;
  if (strtab + 4 > len)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "not a valid COFF object: its symbol table lies "
                         "outside the file");
  uint64_t strsize = u32(buf + strtab);
  if (strsize < 4 || strsize > len - strtab)
    strsize = 4; /* no string table: long names are not read */
  int rc = 0;
  for (uint64_t i = 0; !rc && i < n; i++) {
    const unsigned char *r = buf + table + i * RECORD;
    int section = (int16_t)(r[12] | r[13] << 8);
    unsigned klass = r[16], naux = r[17];
    i += naux;
    if (klass != EXTERNAL && klass != WEAK_EXTERNAL)
      continue;
    char inline_name[9];
    const char *name = inline_name;
    if (u32(r) == 0) { /* "/offset" into the string table */
      uint64_t off = u32(r + 4);
      if (off < 4 || off >= strsize ||
          !memchr(buf + strtab + off, 0, (size_t)(strsize - off)))
        continue;
      name = (const char *)buf + strtab + off;
    } else {
      memcpy(inline_name, r, 8);
      inline_name[8] = 0;
    }
    if (!*name)
      continue;
    int defined =
        klass == EXTERNAL && (section > 0 || (section == 0 && u32(r + 8)));
    rc = cb(ctx, name, defined, klass == WEAK_EXTERNAL);
  }
  return rc;
}
