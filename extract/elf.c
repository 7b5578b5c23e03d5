/* elf.c - ELF objects (relocatable, executable, shared) read with libelf
 * straight from the mapped file: only the section headers, the section name
 * table and the offloading sections themselves are touched.
 *   - SHT_LLVM_OFFLOADING sections, and sections named .llvm.offloading of
 *     any other type, hold OffloadBinary blobs (several per section);
 *   - sections named __CLANG_OFFLOAD_BUNDLE__<id> hold one bundle entry
 *     each (clang-offload-bundler -type=o).
 * Images found in executables and shared objects, and in the section
 * .llvm.offloading.relocatable of a relocatable link's output, are marked
 * `linked`: their device code was registered by their own wrapper already. */
#include "internal.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#ifndef SHT_LLVM_OFFLOADING
#define SHT_LLVM_OFFLOADING 0x6fff4c0b
#endif

static const char bundle_prefix[] = "__CLANG_OFFLOAD_BUNDLE__";

static int match_elf(const unsigned char *head, size_t len) {
  return len >= 4 && memcmp(head, ELFMAG, SELFMAG) == 0;
}

static int scan_section(struct ex_set *set, const unsigned char *buf,
                        size_t len, const GElf_Shdr *sh, const char *name,
                        int linked, const char *origin, struct lw_diag *d) {
  int offloading = sh->sh_type == SHT_LLVM_OFFLOADING ||
                   (name && strcmp(name, ".llvm.offloading") == 0);
  int bundle =
      name && strncmp(name, bundle_prefix, sizeof bundle_prefix - 1) == 0;
  if (!offloading && !bundle)
    return 0;
  if (sh->sh_type == SHT_NOBITS)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "offloading section '%s' has no contents",
                         name ? name : "?");
  if (sh->sh_offset > len || sh->sh_size > len - sh->sh_offset)
    return lw_error_path(d, LW_EFORMAT, origin,
                         "offloading section '%s' runs past the end of the "
                         "file",
                         name ? name : "?");
  const unsigned char *p = buf + sh->sh_offset;
  /* Upstream LLVM's SYCL wrapper leaves the registered images themselves
   * (SPIR-V) in a linked program's .llvm.offloading: registered already,
   * and no OffloadBinary (wrapped.c reads their descriptor). */
  if (offloading && linked &&
      (sh->sh_size < 4 || memcmp(p, "\x10\xff\x10\xad", 4) != 0))
    return 0;
  if (offloading) {
    size_t first = set->n;
    int rc = ex_parse_offload_binaries(set, p, sh->sh_size, origin, d);
    if (!rc && name && strcmp(name, ".llvm.offloading.relocatable") == 0)
      for (size_t i = first; i < set->n; i++)
        set->images[i].linked = 1;
    return rc;
  }
  const char *id = name + sizeof bundle_prefix - 1;
  return ex__add_bundle_entry(set, id, strlen(id), p, sh->sh_size, 0, origin,
                              "bundle section", d);
}

static int scan_elf(struct ex_set *set, const unsigned char *buf, size_t len,
                    const char *origin, struct lw_diag *d) {
  elf_version(EV_CURRENT); /* idempotent; libelf needs it once */
  /* libelf wants a mutable image; it only writes when converting foreign
   * byte order, and the mapping is private anyway. */
  Elf *e = elf_memory((char *)buf, len);
  if (!e || elf_kind(e) != ELF_K_ELF) {
    if (e)
      elf_end(e);
    return lw_error_path(d, LW_EFORMAT, origin, "not a valid ELF file: %s",
                         elf_errmsg(-1));
  }
  size_t first = set->n, shstrndx;
  GElf_Ehdr eh;
  int rc = 0;
  size_t shnum = 0;
  if (!gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx) != 0 ||
      elf_getshdrnum(e, &shnum) != 0)
    rc = lw_error_path(d, LW_EFORMAT, origin, "bad ELF header: %s",
                       elf_errmsg(-1));
  /* libelf shows a section table that lies past the end as no sections at
   * all; such a file is broken, not free of device code. */
  else if (eh.e_shoff > len ||
           (shnum && (eh.e_shentsize == 0 ||
                      shnum > (len - eh.e_shoff) / eh.e_shentsize)))
    rc = lw_error_path(d, LW_EFORMAT, origin,
                       "section header table runs past the end of the file");
  for (Elf_Scn *scn = NULL; !rc && (scn = elf_nextscn(e, scn)) != NULL;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) {
      rc = lw_error_path(d, LW_EFORMAT, origin, "bad ELF section header: %s",
                         elf_errmsg(-1));
      break;
    }
    rc = scan_section(set, buf, len, &sh, elf_strptr(e, shstrndx, sh.sh_name),
                      eh.e_type == ET_EXEC || eh.e_type == ET_DYN, origin, d);
  }
  if (!rc && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN))
    for (size_t i = first; i < set->n; i++)
      set->images[i].linked = 1;
  elf_end(e);
  return rc;
}

const struct ex__format ex__format_elf = {"ELF", match_elf, scan_elf};

int ex_elf_id(const char *path, struct ex_elf_id *id) {
  unsigned char h[sizeof(Elf64_Ehdr)];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, h, sizeof h);
  close(fd);
  if (n < (ssize_t)sizeof(Elf32_Ehdr) || !match_elf(h, (size_t)n))
    return 0;
  elf_version(EV_CURRENT);
  Elf *e = elf_memory((char *)h, (size_t)n);
  GElf_Ehdr eh;
  int ok = e && gelf_getehdr(e, &eh) != NULL;
  elf_end(e);
  if (ok) {
    id->machine = eh.e_machine;
    id->is64 = h[EI_CLASS] == ELFCLASS64;
    id->big_endian = h[EI_DATA] == ELFDATA2MSB;
  }
  return ok;
}
