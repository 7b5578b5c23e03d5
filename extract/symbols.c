/* symbols.c - the global symbols an object defines and needs, as a linker
 * sees them: ELF symbol tables through libelf (.symtab of relocatable
 * objects, .dynsym of shared ones), COFF symbol tables (coff.c) and bitcode
 * module globals through the LLVM-C API (lazily loaded: no function body
 * is materialised). Local
 * symbols are not reported. Used for host objects and for device images
 * alike. */
#include "internal.h"

#include <gelf.h>
#include <libelf.h>
#include <llvm-c/Core.h>
#include <string.h>

static int elf_symbols(const unsigned char *buf, size_t len,
                       const char *origin, ex__sym_cb cb, void *ctx,
                       struct lw_diag *d) {
  elf_version(EV_CURRENT);
  Elf *e = elf_memory((char *)buf, len);
  GElf_Ehdr eh;
  if (!e || !gelf_getehdr(e, &eh)) {
    if (e)
      elf_end(e);
    return lw_error_path(d, LW_EFORMAT, origin, "not a valid ELF file: %s",
                         elf_errmsg(-1));
  }
  Elf64_Word want = eh.e_type == ET_DYN ? SHT_DYNSYM : SHT_SYMTAB;
  int rc = 0;
  for (Elf_Scn *scn = NULL; !rc && (scn = elf_nextscn(e, scn)) != NULL;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
      continue;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || sh.sh_entsize == 0)
      break;
    size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 1; !rc && i < n; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(data, (int)i, &sym))
        break;
      int bind = GELF_ST_BIND(sym.st_info), type = GELF_ST_TYPE(sym.st_info);
      if (bind == STB_LOCAL || type == STT_SECTION || type == STT_FILE)
        continue;
      const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
      if (!name || !*name)
        continue;
      rc = cb(ctx, name, sym.st_shndx != SHN_UNDEF, bind == STB_WEAK);
    }
    break;
  }
  elf_end(e);
  return rc;
}

static int is_weak(LLVMLinkage l) {
  return l == LLVMWeakAnyLinkage || l == LLVMWeakODRLinkage ||
         l == LLVMLinkOnceAnyLinkage || l == LLVMLinkOnceODRLinkage ||
         l == LLVMExternalWeakLinkage;
}

static int report(LLVMValueRef v, ex__sym_cb cb, void *ctx) {
  LLVMLinkage l = LLVMGetLinkage(v);
  if (l == LLVMInternalLinkage || l == LLVMPrivateLinkage ||
      l == LLVMAppendingLinkage)
    return 0;
  size_t len;
  const char *name = LLVMGetValueName2(v, &len);
  if (!len || strncmp(name, "llvm.", 5) == 0)
    return 0;
  return cb(ctx, name, !LLVMIsDeclaration(v), is_weak(l));
}

static int bitcode_symbols(const unsigned char *buf, size_t len,
                           const char *origin, ex__sym_cb cb, void *ctx,
                           struct lw_diag *d) {
  LLVMContextRef c;
  LLVMModuleRef m;
  lw_doing(origin, "reading the symbols of its bitcode");
  int rc = ex__open_bitcode(buf, len, origin, &c, &m, d);
  if (rc) {
    lw_done();
    return rc;
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(m); !rc && f;
       f = LLVMGetNextFunction(f))
    rc = report(f, cb, ctx);
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); !rc && g;
       g = LLVMGetNextGlobal(g))
    rc = report(g, cb, ctx);
  for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m); !rc && a;
       a = LLVMGetNextGlobalAlias(a))
    rc = report(a, cb, ctx);
  LLVMDisposeModule(m);
  LLVMContextDispose(c);
  lw_done();
  return rc;
}

int ex__read_symbols(const unsigned char *buf, size_t len, const char *origin,
                     ex__sym_cb cb, void *ctx, struct lw_diag *d) {
  switch (ex_sniff_image_kind(buf, len)) {
  case EX_IMG_OBJECT:
    return elf_symbols(buf, len, origin, cb, ctx, d);
  case EX_IMG_BITCODE:
    return bitcode_symbols(buf, len, origin, cb, ctx, d);
  default: /* COFF's here; no symbols to read in the rest (text) */
    return ex__is_coff(buf, len)
               ? ex__coff_symbols(buf, len, origin, cb, ctx, d)
               : 0;
  }
}
