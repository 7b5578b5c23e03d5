/* wrp.h - wrapping: builds the host-side registration module that hands
 * device images to an offloading runtime at program start-up (DPC++ SYCL
 * descriptor through __sycl_register_lib, libomptarget descriptor through
 * __tgt_register_lib). The result is an LLVM module; devlink compiles it. */
#ifndef WRP_H
#define WRP_H

#include "dl.h"
#include "lw_base.h"

/* Property value types, as the DPC++ runtime numbers them. */
enum { WRP_PROP_UINT32 = 1, WRP_PROP_BYTE_ARRAY = 2, WRP_PROP_STRING = 3 };

struct wrp_prop {
  const char *name;
  uint32_t type;
  uint32_t u32;               /* WRP_PROP_UINT32 */
  const unsigned char *bytes; /* BYTE_ARRAY: raw bytes incl. the 8-byte
                                 bit-size header; STRING: NUL-terminated */
  size_t size;
};

struct wrp_propset {
  const char *name;
  const struct wrp_prop *props;
  size_t n;
};

/* Binary formats of a SYCL device image. */
enum { WRP_FMT_NONE = 0, WRP_FMT_NATIVE = 1, WRP_FMT_SPIRV = 2,
       WRP_FMT_LLVMBC = 3 };

struct wrp_sycl_image {
  const unsigned char *data;
  size_t size;
  const char *target; /* "spir64", "spir64_gen", ... */
  uint8_t format;     /* WRP_FMT_* */
  const char *compile_opts, *link_opts;
  const struct lw_strvec *entries; /* kernel names */
  const struct wrp_propset *sets;
  size_t nsets;
};

struct wrp_omp_image {
  const unsigned char *data; /* the linked device image (e.g. a .so) */
  size_t size;
  const char *triple, *arch;
};

struct wrp_request {
  const char *host_triple;
  const struct wrp_sycl_image *sycl;
  size_t nsycl;
  const struct wrp_omp_image *omp;
  size_t nomp;
};

/* Builds the registration module for every image of `req`. */
int wrp_build(const struct wrp_request *req, struct dl_module **out,
              struct lw_diag *d);

/* Encodes a DPC++ byte-array property value: 64-bit size in bits, then the
 * bytes. Appends to `out`. */
int wrp_encode_byte_array(const void *data, size_t size, struct lw_buf *out);

#endif
