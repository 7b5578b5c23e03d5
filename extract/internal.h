/* internal.h - private to extract/: the format table and ownership helpers. */
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
extern const struct ex__format ex__format_archive;
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

/* Appends an image; the set takes the strings and origin. */
int ex__add_image(struct ex_set *set, struct ex_image *img);

#endif
