/* elf.c - ELF objects (relocatable, executable, shared) read with libelf
 * straight from the mapped file: only the section headers and the offloading
 * sections themselves are touched. Every SHT_LLVM_OFFLOADING section may hold
 * several OffloadBinary blobs. */
#include "internal.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

#ifndef SHT_LLVM_OFFLOADING
#define SHT_LLVM_OFFLOADING 0x6fff4c0b
#endif

static int match_elf(const unsigned char *head, size_t len) {
  return len >= 4 && memcmp(head, ELFMAG, SELFMAG) == 0;
}

static int scan_elf(struct ex_set *set, const unsigned char *buf, size_t len,
                    const char *origin, struct lw_diag *d) {
  /* libelf wants a mutable image; it only writes when converting foreign
   * byte order, which ELF_C_READ_MMAP avoids for native files. */
  elf_version(EV_CURRENT); /* idempotent; libelf needs it once */
  Elf *e = elf_memory((char *)buf, len);
  if (!e || elf_kind(e) != ELF_K_ELF) {
    if (e)
      elf_end(e);
    return lw_error_path(d, LW_EFORMAT, origin, "not a valid ELF file: %s",
                         elf_errmsg(-1));
  }
  int rc = 0;
  Elf_Scn *scn = NULL;
  size_t shnum;
  if (elf_getshdrnum(e, &shnum) != 0)
    rc = lw_error_path(d, LW_EFORMAT, origin, "bad ELF section table: %s",
                       elf_errmsg(-1));
  while (!rc && (scn = elf_nextscn(e, scn)) != NULL) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) {
      rc = lw_error_path(d, LW_EFORMAT, origin, "bad ELF section header: %s",
                         elf_errmsg(-1));
      break;
    }
    if (sh.sh_type != SHT_LLVM_OFFLOADING)
      continue;
    if (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset) {
      rc = lw_error_path(d, LW_EFORMAT, origin,
                         "offloading section runs past the end of the file");
      break;
    }
    rc = ex_parse_offload_binaries(set, buf + sh.sh_offset, sh.sh_size,
                                   origin, d);
  }
  elf_end(e);
  return rc;
}

const struct ex__format ex__format_elf = {"ELF", match_elf, scan_elf};
