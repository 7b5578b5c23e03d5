/* internal.h - private to extract/: the image set (set.c), the format table
 * (scan.c) and what one format file offers another. */
#ifndef EX_INTERNAL_H
#define EX_INTERNAL_H

#include "ex.h"

/* A buffer the set owns: either malloc'd or mapped. */
struct ex__owned {
  void *p;
  size_t len;
  int mapped;
  struct ex__owned *next;
};

/* Takes ownership of malloc'd memory `p`. Returns 0 or LW_ENOMEM (then `p` is
 * freed). */
int ex__own(struct ex_set *set, void *p, size_t len, int mapped);

/* Maps (or, when small, reads) a regular file into memory the set owns;
 * an empty file gives len 0. Errors name the file `name`. */
int ex__map_file(struct ex_set *set, const char *path, const char *name,
                 const unsigned char **buf, size_t *len, struct lw_diag *d);

/* A container format: `match` looks at the first bytes, `scan` walks the
 * content and appends images. One file of extract/ for each. */
struct ex__format {
  const char *name;
  int (*match)(const unsigned char *head, size_t len);
  int (*scan)(struct ex_set *set, const unsigned char *buf, size_t len,
              const char *origin, struct lw_diag *d);
};

extern const struct ex__format ex__format_elf;
extern const struct ex__format ex__format_coff;
extern const struct ex__format ex__format_offload_binary;
extern const struct ex__format ex__format_bitcode;
extern const struct ex__format ex__format_bundle;
extern const struct ex__format ex__format_ccob;
extern const struct ex__format ex__format_text_bundle;

/* Adds the bundle entry `id` (unless it is the host's) as an image;
 * `image_kind` 0 means sniff it. `format` names the container. */
int ex__add_bundle_entry(struct ex_set *set, const char *id, size_t idlen,
                         const unsigned char *data, size_t size,
                         unsigned image_kind, const char *origin,
                         const char *format, struct lw_diag *d);

/* Parses a binary bundle. */
int ex__parse_bundle(struct ex_set *set, const unsigned char *buf, size_t len,
                     const char *origin, const char *format,
                     struct lw_diag *d);

/* Parses OffloadBinary blobs like ex_parse_offload_binaries, naming the
 * container `format` in the images. */
int ex__parse_offload_binaries(struct ex_set *set, const unsigned char *buf,
                               size_t len, const char *origin,
                               const char *format, struct lw_diag *d);

/* Moves every image and owned buffer of `src` to the end of `dst`; `src`
 * is left empty. 0 or LW_ENOMEM (then nothing moved). */
int ex__set_move(struct ex_set *dst, struct ex_set *src);

/* Appends an image; the set takes the strings and origin. */
int ex__add_image(struct ex_set *set, struct ex_image *img);

/* ---- archive.c ----------------------------------------------------------- */

/* Called for each member of an archive with its bytes (the set owns them)
 * and its name, "archive(member)". */
typedef int (*ex__member_cb)(void *ctx, const unsigned char *buf, size_t len,
                             const char *origin, struct lw_diag *d);
/* Is this an archive (regular or thin)? */
int ex__archive_match(const unsigned char *head, size_t len);
/* Calls `cb` on each member of the archive in buf (a thin one's member
 * files, nested at most 16 deep). */
int ex__archive_members(struct ex_set *set, const unsigned char *buf,
                        size_t len, const char *origin, ex__member_cb cb,
                        void *ctx, struct lw_diag *d);

/* ---- bitcode.c ------------------------------------------------------------ */

#include <llvm-c/Types.h>

/* Loads a bitcode module lazily in a new context (function bodies are not
 * materialised); a reader error is one line in `d`. The caller disposes of
 * module and context. */
int ex__open_bitcode(const unsigned char *buf, size_t len, const char *origin,
                     LLVMContextRef *ctx, LLVMModuleRef *mod,
                     struct lw_diag *d);

/* ---- thin.c ------------------------------------------------------------- */

/* Called for each member of a thin archive with its name, the path of its
 * file (malloc'd, the callee owns it) and its header's offset. */
typedef int (*ex__thin_cb)(void *ctx, const char *name, char *path,
                           size_t header);
/* Walks the members of the thin archive `archive` held in buf. */
int ex__thin_members(const unsigned char *buf, size_t len,
                     const char *archive, ex__thin_cb cb, void *ctx,
                     struct lw_diag *d);

/* ---- symtab.c: a set of symbol names with a state each ------------------ */

struct ex__sym {
  const char *name;
  uint32_t hash;
  int state;
};
struct ex__symtab {
  struct ex__sym *e;
  size_t n, cap;
  struct ex__symblock *blocks; /* the names */
};
/* The state of `name`, 0 when unknown. */
int ex__sym_get(struct ex__symtab *t, const char *name);
/* The state of `name`, entered with state 0 if new; NULL when out of
 * memory. The pointer is valid until the next insertion. */
int *ex__sym_ref(struct ex__symtab *t, const char *name);
void ex__symtab_free(struct ex__symtab *t);

/* ---- symbols.c ----------------------------------------------------------- */

/* Called for each global symbol; a non-zero return stops the walk. */
typedef int (*ex__sym_cb)(void *ctx, const char *name, int defined, int weak);

/* Reports the global symbols of an ELF object or shared object (dynamic
 * symbols) or a bitcode module; other content reports none. */
int ex__read_symbols(const unsigned char *buf, size_t len, const char *origin,
                     ex__sym_cb cb, void *ctx, struct lw_diag *d);
/* coff.c: is `buf` a COFF object, and its global symbols (as
 * ex__read_symbols reports them). */
int ex__is_coff(const unsigned char *buf, size_t len);
int ex__coff_symbols(const unsigned char *buf, size_t len, const char *origin,
                     ex__sym_cb cb, void *ctx, struct lw_diag *d);

#endif
