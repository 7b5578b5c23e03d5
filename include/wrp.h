/* wrp.h - wrapping: builds the host-side registration module that hands
 * device images to an offloading runtime at program start-up (DPC++ SYCL
 * descriptor through __sycl_register_lib, libomptarget descriptor through
 * __tgt_register_lib, CUDA and HIP fatbinaries through
 * __cudaRegisterFatBinary and __hipRegisterFatBinary). The result is an LLVM
 * module in a context of its own, which the caller owns (devlink compiles it).
 */
#ifndef WRP_H
#define WRP_H

#include "dl.h"
#include "lw_base.h"

#include <llvm-c/Core.h>

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
  const struct dl_propset *sets;
  size_t nsets;
  const char *triple; /* the device triple (LLVM 22's layout names it) */
};

/* Which SYCL runtime's registration: DPC++'s (sycl.c), upstream LLVM 22's
 * (sycl_llvm22.c) or LLVM 23's: one OffloadBinary of every image, which the
 * caller makes (sycl_llvm23.c registers it). */
enum wrp_sycl_abi { WRP_SYCL_DPCPP, WRP_SYCL_LLVM22, WRP_SYCL_LLVM23 };

struct wrp_omp_image {
  const unsigned char *binary; /* an OffloadBinary holding the linked
                                  device image (e.g. a .so), embedded as is */
  size_t size;
  size_t image_offset, image_size; /* where the image is in it */
};

/* A CUDA or HIP fatbinary of every architecture's device image. */
struct wrp_fatbin {
  const unsigned char *data; /* NULL: none */
  size_t size;
};

struct wrp_request {
  const char *host_triple;
  const struct wrp_sycl_image *sycl;
  size_t nsycl;
  const struct wrp_omp_image *omp;
  size_t nomp;
  int relocatable; /* -r: images in a section the output keeps */
  enum wrp_sycl_abi sycl_abi;
  struct wrp_fatbin sycl_binary; /* LLVM 23: the OffloadBinary of `sycl` */
  struct wrp_fatbin cuda, hip;
};

/* Builds the registration module for every image of `req`. */
int wrp_build(const struct wrp_request *req, LLVMContextRef *ctx,
              LLVMModuleRef *mod, struct lw_diag *d);

#endif
