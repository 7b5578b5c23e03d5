/* spirv_elf.c - an OpenMP SPIR-V device image as libomptarget's Level Zero
 * plugin takes it and as upstream's wrapper packs it: an ELF shared object
 * for Intel Graphics Technology (no program headers) whose notes of owner
 * INTELONEOMPOFFLOAD give the version ("1.0"), the image count and each
 * image's index, format (1: SPIR-V) and compile options (none), and whose
 * section __openmp_offload_spirv_0 holds the SPIR-V; laid out as upstream
 * lays it out (libelf writes it, with the offsets given here). */
#include "internal.h"

#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char owner[] = "INTELONEOMPOFFLOAD";
/* Section names, sorted, as upstream's string table has them. */
static const char shstrtab[] = "\0.note.inteloneompoffload\0.shstrtab\0"
                               ".strtab\0__openmp_offload_spirv_0";
enum { NAME_NOTE = 1, NAME_SHSTRTAB = 26, NAME_STRTAB = 36, NAME_SPIRV = 44 };

static size_t pad4(size_t n) { return (n + 3) & ~(size_t)3; }

/* Appends one note (owner, type, desc) as ELF lays notes out. */
static int note(struct lw_buf *b, uint32_t type, const char *desc, size_t len) {
  static const unsigned char zero[4];
  uint32_t h[3] = {sizeof owner, (uint32_t)len, type};
  return lw_buf_append(b, h, sizeof h) ||
         lw_buf_append(b, owner, sizeof owner) ||
         lw_buf_append(b, zero, pad4(sizeof owner) - sizeof owner) ||
         lw_buf_append(b, desc, len) || lw_buf_append(b, zero, pad4(len) - len);
}

static int section(Elf *e, uint32_t name, uint32_t type, uint64_t off,
                   const void *data, size_t size, uint64_t align) {
  Elf_Scn *s = elf_newscn(e);
  Elf_Data *d = s ? elf_newdata(s) : NULL;
  GElf_Shdr sh;
  if (!d || !gelf_getshdr(s, &sh))
    return -1;
  d->d_buf = (void *)data;
  d->d_size = size;
  d->d_align = align ? align : 1;
  d->d_type = ELF_T_BYTE;
  sh.sh_name = name;
  sh.sh_type = type;
  sh.sh_offset = off;
  sh.sh_size = size;
  sh.sh_addralign = align;
  return gelf_update_shdr(s, &sh) ? 0 : -1;
}

int ex_write_spirv_elf(const void *spirv, size_t n, struct lw_buf *out) {
  struct lw_buf notes = {0};
  static const char aux[] = "0\0"
                            "1\0"; /* index 0, SPIR-V, no options */
  if (note(&notes, 1, "1.0", 3) || note(&notes, 3, aux, sizeof aux) ||
      note(&notes, 2, "1", 1)) {
    lw_buf_free(&notes);
    return LW_ENOMEM;
  }
  int fd = memfd_create("spirv-elf", MFD_CLOEXEC);
  Elf *e = fd >= 0 && elf_version(EV_CURRENT) != EV_NONE
               ? elf_begin(fd, ELF_C_WRITE, NULL)
               : NULL;
  uint64_t at = 64, spv = at + notes.len, strtab = spv + n;
  uint64_t shs = strtab + 1, shoff = (shs + sizeof shstrtab + 7) & ~7ull;
  GElf_Ehdr eh;
  int rc = e && gelf_newehdr(e, ELFCLASS64) && gelf_getehdr(e, &eh) ? 0 : -1;
  if (!rc) {
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_type = ET_DYN;
    eh.e_machine = EM_INTELGT;
    eh.e_version = EV_CURRENT;
    eh.e_shoff = shoff;
    eh.e_shstrndx = 4;
    rc = gelf_update_ehdr(e, &eh) ? 0 : -1;
  }
  if (e)
    elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
  if (!rc)
    rc = section(e, NAME_NOTE, SHT_NOTE, at, notes.data, notes.len, 0) ||
         section(e, NAME_SPIRV, SHT_PROGBITS, spv, spirv, n, 0) ||
         section(e, NAME_STRTAB, SHT_STRTAB, strtab, "", 1, 1) ||
         section(e, NAME_SHSTRTAB, SHT_STRTAB, shs, shstrtab, sizeof shstrtab,
                 1);
  if (!rc && elf_update(e, ELF_C_WRITE) < 0)
    rc = -1;
  if (e)
    elf_end(e);
  lw_buf_free(&notes);
  off_t size = !rc ? lseek(fd, 0, SEEK_END) : -1;
  void *m = size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0)
                     : MAP_FAILED;
  rc = m != MAP_FAILED && !lw_buf_append(out, m, (size_t)size) ? 0 : LW_ENOMEM;
  if (m != MAP_FAILED)
    munmap(m, (size_t)size);
  if (fd >= 0)
    close(fd);
  return rc;
}
