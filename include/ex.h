/* ex.h - extraction: finds device images embedded in linker inputs.
 *
 * A scan reads one input (found by content, never by name), and appends every
 * OffloadBinary entry it holds to an ex_set as an ex_image. The set owns the
 * memory the images point into (mapped files, archive members, inflated
 * blobs) until ex_set_free. */
#ifndef EX_H
#define EX_H

#include "lw_base.h"

/* Producer of an image (OffloadBinary OffloadKind; a bit mask upstream). */
enum ex_offload_kind {
  EX_OFK_NONE = 0,
  EX_OFK_OPENMP = 1,
  EX_OFK_CUDA = 2,
  EX_OFK_HIP = 4,
  EX_OFK_SYCL = 8,
  /* Not an OffloadBinary kind: the host side of an FPGA binary that DPC++
   * archives, a bundle entry host-<fpga triple> holding its wrapped
   * descriptor (kernels, property sets). */
  EX_OFK_HOST = 0x8000,
};

/* What an image holds (OffloadBinary ImageKind). */
enum ex_image_kind {
  EX_IMG_NONE = 0,
  EX_IMG_OBJECT,
  EX_IMG_BITCODE,
  EX_IMG_CUBIN,
  EX_IMG_FATBINARY,
  EX_IMG_PTX,
  EX_IMG_SPIRV,
};

struct ex_string {
  char *key;   /* owned, NUL-terminated */
  char *value; /* owned, NUL-terminated copy of value_len bytes */
  size_t value_len;
};

/* One device image. */
struct ex_image {
  uint16_t image_kind;   /* enum ex_image_kind */
  uint16_t offload_kind; /* enum ex_offload_kind */
  uint32_t flags;
  uint32_t version;      /* OffloadBinary version it was read from */
  const char *triple;    /* value of "triple" or "" (points into strings) */
  const char *arch;      /* value of "arch" or "" */
  struct ex_string *strings;
  size_t nstrings;
  const unsigned char *data; /* image bytes, owned by the set */
  size_t size;
  char *origin; /* owned: "file" or "archive(member)" */
  const char *format; /* container: "offload binary", "bundle", ... */
  int linked; /* registered already: in an ELF executable or shared object,
                 or a relocatable link's .llvm.offloading.relocatable */
};

struct ex_set {
  struct ex_image *images;
  size_t n, cap;
  struct ex__owned *owned; /* buffers the images point into */
  int thin_depth; /* thin archives being read, one inside another */
};

/* Scans the file at `path`; inputs without device code add nothing. */
int ex_scan_file(struct ex_set *set, const char *path, struct lw_diag *d);

/* One item of a link line, in order. */
enum ex_link_item {
  EX_LINK_FILE,
  EX_LINK_GROUP_START,
  EX_LINK_GROUP_END,
  EX_LINK_UNDEFINED, /* -u: `path` is a symbol to treat as undefined */
};
struct ex_link_input {
  enum ex_link_item item;
  const char *path;  /* EX_LINK_FILE: the file; EX_LINK_UNDEFINED: symbol */
  int whole_archive; /* --whole-archive in effect */
};

/* Scans what a GNU ld link of `in` reads, in its order: every object and
 * shared object, and exactly the archive members symbol resolution pulls in
 * (all of them under --whole-archive; archives of a group are searched again
 * until nothing changes; members without host symbols join when their device
 * code defines a device symbol the included device code needs, or when they
 * hold FPGA binaries; members with a device image for an architecture in
 * `always` join in any case). The images of everything included go into
 * `set`. Inputs are read on up to `jobs` threads. */
int ex_scan_link(struct ex_set *set, const struct ex_link_input *in, size_t n,
                 int jobs, const struct lw_strvec *always, struct lw_diag *d);

/* Scans a buffer of known origin; the buffer must outlive the set. */
int ex_scan_buffer(struct ex_set *set, const unsigned char *buf, size_t len,
                   const char *origin, struct lw_diag *d);

/* Parses one or more concatenated (8-byte padded) OffloadBinary blobs. */
int ex_parse_offload_binaries(struct ex_set *set, const unsigned char *buf,
                              size_t len, const char *origin,
                              struct lw_diag *d);

/* The bytes of the first member named `member` of the archive at path
 * `archive` (regular or thin), appended to `out`. */
int ex_archive_member(const char *archive, const char *member,
                      struct lw_buf *out, struct lw_diag *d);
/* The names of the members of the archive at path `archive`, in order,
 * appended to `names`. */
int ex_archive_names(const char *archive, struct lw_strvec *names,
                     struct lw_diag *d);

/* Releases every image and owned buffer. */
void ex_set_free(struct ex_set *set);

/* The image kind a buffer's first bytes show (ELF object, bitcode, SPIR-V),
 * or EX_IMG_NONE. */
unsigned ex_sniff_image_kind(const unsigned char *p, size_t n);

/* What an ELF file is for: its e_machine, class and byte order. */
struct ex_elf_id {
  unsigned machine;
  int is64, big_endian;
};
/* Reads the ELF header of the file at `path` into `id`: 1, or 0 when it is
 * not an ELF file. */
int ex_elf_id(const char *path, struct ex_elf_id *id);

/* Name of an offload kind ("openmp", "sycl", ...) or "none". */
const char *ex_offload_kind_name(unsigned kind);
/* Name of an image kind ("o", "bc", "spv", ...) as upstream spells it. */
const char *ex_image_kind_name(unsigned kind);

/* An image to serialise. */
struct ex_write_image {
  uint16_t image_kind, offload_kind;
  uint32_t flags;
  const struct ex_string *strings; /* key/value pairs, value_len honoured */
  size_t nstrings;
  const unsigned char *data;
  size_t size;
};

/* Appends one version-1 OffloadBinary holding `img` to `out`; sets
 * `*image_off` (may be NULL) to the offset of the image within the blob. */
int ex_write_offload_binary(const struct ex_write_image *img,
                            struct lw_buf *out, size_t *image_off);
/* Appends one OffloadBinary of `version` (1: one image; 2: several) holding
 * imgs[0..n); image_offs[k] (may be NULL) gets where image k is in it.
 * LW_EINVAL for a count or version it cannot write, LW_ENOMEM. */
int ex_write_offload_binaries(const struct ex_write_image *imgs, size_t n,
                              uint32_t version, struct lw_buf *out,
                              size_t *image_offs);

/* An OpenMP SPIR-V image packed as libomptarget's Level Zero plugin takes
 * it: an ELF for Intel Graphics Technology with INTELONEOMPOFFLOAD notes
 * and the SPIR-V in section __openmp_offload_spirv_0, as upstream packs it
 * (spirv_elf.c), appended to *out. LW_ENOMEM when it cannot be made. */
int ex_write_spirv_elf(const void *spirv, size_t n, struct lw_buf *out);

/* LLVM 23's "symbols" value of a SYCL image: a u32 count, per name a u32
 * offset (from the value's start) and u32 size, then the names, each
 * ending in NUL. Appends the table of names[0..n) to `out`; LW_ENOMEM. */
int ex_write_symbol_table(const char *const *names, size_t n,
                          struct lw_buf *out);
/* A name in such a table: `len` bytes at `name` (a NUL follows). */
struct ex_symbol {
  const char *name;
  size_t len;
};
/* The number of names of the table in v[0..n), every one checked in
 * bounds; SIZE_MAX when v is not such a table. */
size_t ex_read_symbol_table(const unsigned char *v, size_t n);
/* Name k of a table ex_read_symbol_table accepted (pointing into v). */
struct ex_symbol ex_symbol_at(const unsigned char *v, size_t k);

/* One entry of a bundle to write: `id` as the bundler spells it. */
struct ex_bundle_entry {
  const char *id;
  const unsigned char *data;
  size_t size;
};

/* Spells the bundle id of an image: "<kind>-<arch>-<vendor>-<os>-<env>-<target
 * id>" from a triple of three or four components (malloc'd). */
char *ex_bundle_id(const char *kind, const char *triple, const char *arch);

/* Appends a binary bundle of `n` entries to `out`. */
int ex_write_bundle(const struct ex_bundle_entry *e, size_t n,
                    struct lw_buf *out);

/* Appends `in` compressed as a version-3 CCOB bundle (zstd when `zstd`,
 * else zlib); the header's hash field is left 0 (readers only print it). */
int ex_write_compressed_bundle(const unsigned char *in, size_t len, int zstd,
                               struct lw_buf *out);

/* ---- images a linked program registers (wrapped.c) ----------------------- */

/* A property as the DPC++ runtime reads it: type 1 is a uint32 `value`,
 * type 2 a byte array of `value` bytes at `data` (its 64-bit bit count
 * first). */
struct ex_wrapped_prop {
  const char *name;
  uint32_t type;
  uint64_t value;
  const unsigned char *data;
};

struct ex_wrapped_set {
  const char *name;
  struct ex_wrapped_prop *p;
  size_t n;
};

/* One device image of a DPC++ binaries descriptor. Every pointer points
 * into the program's bytes. */
struct ex_wrapped_image {
  uint16_t version;
  uint8_t kind, format;
  const char *target;
  const unsigned char *data;
  size_t size;
  const char **entries; /* the offload entries' names */
  size_t nentries;
  struct ex_wrapped_set *sets;
  size_t nsets;
};

struct ex_wrapped {
  struct ex_wrapped_image *img;
  size_t n;
};

/* Reads the SYCL device images that the linked program `buf` (an ELF
 * executable or shared object; `origin` names it) registers through a
 * binaries descriptor; none (n == 0) when it has none or no symbol table. A
 * descriptor that cannot be read is LW_EFORMAT. */
int ex_wrapped_read(const unsigned char *buf, size_t len, const char *origin,
                    struct ex_wrapped *out, struct lw_diag *d);
void ex_wrapped_free(struct ex_wrapped *w);

#endif
