/* dl.h - device linking in process through the LLVM-C API: bitcode images
 * are parsed and linked into one module, which is then compiled to SPIR-V or
 * to a native object by LLVM's own back ends. A dl_module owns its
 * LLVMContext, so one module can be worked on by one thread while others work
 * on other modules. */
#ifndef DL_H
#define DL_H

#include "lw_base.h"

#include <llvm-c/Types.h>

struct dl_module;

/* One bitcode input: bytes and a name for messages. */
struct dl_input {
  const unsigned char *data;
  size_t size;
  const char *name;
};

enum dl_filetype { DL_OBJECT, DL_ASSEMBLY };

/* Registers LLVM's targets; call once before any thread uses devlink. */
void dl_init(void);

/* Parses every input and links them into one module for `triple`. */
int dl_link(const struct dl_input *inputs, size_t n, const char *triple,
            struct dl_module **out, struct lw_diag *d);

/* Kernel names (functions with the SPIR kernel calling convention), in
 * module order; `*names` is a vector the caller frees. */
int dl_kernel_names(struct dl_module *m, struct lw_strvec *names);

/* Compiles the module for its triple (SPIR-V for spirv*, native otherwise)
 * at `opt_level` 0-3 into `out`. */
int dl_codegen(struct dl_module *m, int opt_level, enum dl_filetype type,
               struct lw_buf *out, struct lw_diag *d);

/* Textual IR of the module (malloc'd), for --save-temps. */
char *dl_print(struct dl_module *m);

/* Wraps a module built elsewhere (e.g. by wrap/); takes ownership of both
 * the module and its context. */
int dl_module_adopt(LLVMContextRef ctx, LLVMModuleRef mod, const char *triple,
                    struct dl_module **out);

/* Frees the module and its context. */
void dl_module_free(struct dl_module *m);

/* Forwards `-mllvm` style options to LLVM (once, before any job runs).
 * Returns 0, or LW_EINVAL with the first unknown option named in `d`. */
int dl_set_llvm_options(const struct lw_strvec *opts, struct lw_diag *d);

#endif
