/* dl.h - device linking in process through the LLVM-C API: bitcode images
 * are parsed and linked into one module, which is then compiled to SPIR-V or
 * to a native object by LLVM's own back ends. A dl_module owns its
 * LLVMContext, so one module can be worked on by one thread while others work
 * on other modules. */
#ifndef DL_H
#define DL_H

#include "lw_base.h"

#include <llvm-c/Types.h>
#include <stdio.h>

struct dl_module;

/* One bitcode input: bytes and a name for messages. A library input
 * (`only_needed`) is linked after all user code and gives only the
 * definitions that code or an earlier library uses, and what those use in
 * turn. */
struct dl_input {
  const unsigned char *data;
  size_t size;
  const char *name;
  int only_needed;
};

enum dl_filetype { DL_OBJECT, DL_ASSEMBLY };

/* Registers LLVM's targets; call once before any thread uses devlink. */
void dl_init(void);

/* Parses every input and links them into one module for `triple` (NULL:
 * the first input's), in order, on `threads` threads (1 or 2). Two strong definitions of one name
 * are an error naming both inputs. */
int dl_link(const struct dl_input *inputs, size_t n, const char *triple,
            int threads, struct dl_module **out, struct lw_diag *d);

/* DPC++'s device-code instrumentation hooks (__itt_offload_*, returning
 * void) that no input or library defines get empty bodies, as DPC++'s stub
 * device library gives them (itt.c). Returns how many. */
size_t dl_itt_stubs(struct dl_module *m);

/* Compiles the module for its triple (SPIR-V for spirv*, with canonical
 * ids; native otherwise: for `cpu`, e.g. sm_90 or gfx90a, NULL for the
 * target's default) at `opt_level` 0-3 into `out`. LW_EBADOUT: the
 * back end wrote SPIR-V that cannot be read or breaks what
 * dl_spirv_check_ids checks (codegen.c says why it may). */
int dl_codegen(struct dl_module *m, const char *cpu, int opt_level,
               enum dl_filetype type, struct lw_buf *out, struct lw_diag *d);

/* Has this process (with what it inherited from its parent) emitted no
 * SPIR-V yet? */
int dl_spirv_fresh(void);

/* Gives every block label of the SPIR-V module from spv->data + at on a
 * fresh id, and every branch, merge, phi and debug name of one that label's
 * new id: undoes what LLVM 22's back end takes from an earlier module's
 * labels (llvm-project issue 160613), as spirv.c tells. A module where the
 * labels cannot be told apart is left as it was. 0 or LW_ENOMEM. */
int dl_spirv_labels(struct lw_buf *spv, size_t at, struct lw_diag *d);

/* Checks the SPIR-V module's ids: each below the header's bound, defined
 * once, and every id used defined; LW_EBADOUT and what is wrong when not. */
int dl_spirv_check_ids(const unsigned char *spv, size_t n, struct lw_diag *d);

/* Checks the SPIR-V module as spirv-val does: LW_EBADOUT and the
 * validator's first line when it breaks a rule. */
int dl_spirv_validate(const unsigned char *spv, size_t n, struct lw_diag *d);

/* One SPIR-V module from the parts of one module, each emitted by
 * LLVM's back end from a share of its kernels (dl_parts_module),
 * appended to `out` (spirvmerge.c says how), the parts read on up to
 * `threads` threads; the module is the same whatever `threads` is.
 * LW_ENOTSUP: the parts hold what the merge cannot join. */
int dl_spirv_merge(const struct lw_buf *parts, size_t n, int threads,
                   struct lw_buf *out, struct lw_diag *d);

/* What a SPIR-V module gives and takes by name (linkage.c): the names it
 * exports (LinkageAttributes Export or LinkOnceODR), those it imports, and
 * its entry points', each in the module's order; beside each export and
 * import, its type's signature (linkage.c tells the form). LW_EFORMAT when
 * it is not SPIR-V that SPIRV-Tools can read. */
struct dl_spirv_linkage {
  struct lw_strvec exports, imports, entries;
  struct lw_strvec export_types, import_types;
};
int dl_spirv_linkage(const unsigned char *spv, size_t n,
                     struct dl_spirv_linkage *out, struct lw_diag *d);
void dl_spirv_linkage_free(struct dl_spirv_linkage *l);

/* Gives each function the module imports under names[i] the type types[i]
 * (its exporter's signature) where the two differ only in what pointers of
 * one storage class point to, passing pointers through OpBitcast at each
 * call; how many were retyped goes to *retyped. A module that cannot be
 * read is left as it is. 0 or LW_ENOMEM. */
int dl_spirv_retype_imports(struct lw_buf *spv, const struct lw_strvec *names,
                            const struct lw_strvec *types, size_t *retyped,
                            struct lw_diag *d);

/* ---- property sets (props.c) --------------------------------------------- */

/* Property value types, as the DPC++ runtime numbers them. */
enum { DL_PROP_UINT32 = 1, DL_PROP_BYTE_ARRAY = 2 };

struct dl_prop {
  char *name;
  uint32_t type;
  uint32_t u32;         /* DL_PROP_UINT32 */
  struct lw_buf bytes;  /* DL_PROP_BYTE_ARRAY: bit-size header and data */
};

struct dl_propset {
  const char *name;
  struct dl_prop *p;
  size_t n, cap;
};

struct dl_props {
  struct dl_propset s[20]; /* at most one of each known set */
  size_t n;
};

/* A copy of `src` with the byte-array property `name` = data[0..size) added
 * to set `set_name` (a string that outlives the copy); LW_ENOMEM or 0. */
int dl_props_with_bytes(const struct dl_props *src, const char *set_name,
                        const char *name, const void *data, size_t size,
                        struct dl_props *out);

/* Frees what the split computed for a group (dl_group.props). */
void dl_props_free(struct dl_props *p);

/* The property `name` of set `set`, or NULL. */
const struct dl_prop *dl_props_find(const struct dl_props *p, const char *set,
                                    const char *name);

/* A uint32 property's value, or a byte array's little-endian uint32
 * elements: up to `max` go to `out`; returns how many there are. */
size_t dl_prop_u32s(const struct dl_prop *pr, uint32_t *out, size_t max);

/* A text form of property sets, which fatlink keeps beside FPGA images in
 * archives: "[<set>]" lines, then "<name>=1|<decimal>" (uint32) or
 * "<name>=2|<bytes>" (byte array, its bit-size header included, in
 * DPC++'s base64: six bits a character, low bits first). Only
 * sets the DPC++ runtime knows may be named. */
int dl_props_write_text(const struct dl_props *p, struct lw_buf *out);
int dl_props_read_text(const char *text, size_t len, struct dl_props *out,
                       struct lw_diag *d);

/* Appends a byte-array property value: `bits` as a 64-bit count, then the
 * bytes. */
int dl_encode_byte_array(const void *data, size_t size, uint64_t bits,
                         struct lw_buf *out);

/* ---- DPC++'s wrapped device images (wrapped.c) -------------------------- */

/* What DPC++'s clang-offload-wrapper put into a module for one image: its
 * target string, its kernels (offload entries) and its property sets. */
struct dl_wrapped_image {
  char *target;
  struct lw_strvec kernels;
  struct dl_props props;
};

/* Reads the SYCL device-image descriptors of such a module (bitcode, as
 * DPC++ keeps it beside an FPGA binary: bundle entry host-<fpga triple>);
 * `origin` names it in errors. *out gets *n images, in order. */
int dl_wrapped_read(const void *bitcode, size_t size, const char *origin,
                    struct dl_wrapped_image **out, size_t *n,
                    struct lw_diag *d);
void dl_wrapped_free(struct dl_wrapped_image *w, size_t n);

/* ---- split (split.c) ---------------------------------------------------- */

enum dl_split_mode {
  DL_SPLIT_OFF,
  DL_SPLIT_PER_SOURCE,
  DL_SPLIT_PER_KERNEL,
  DL_SPLIT_AUTO,
};

/* One device module to be: its kernels and every global value they need.
 * With dynamic linking, a translation unit's SYCL_EXTERNAL functions are
 * entry points too (`exports`), split like kernels, so that another
 * image can import them even when no kernel here calls them. */
struct dl_group {
  char *id; /* split scope and feature key, for messages */
  struct lw_strvec kernels;
  struct lw_strvec exports;
  struct lw_strvec entries; /* kernels and exports (DL_DPCPP_GROUPS: and
                               virtual functions), in module order */
  struct lw_strvec asserts; /* its kernels that can reach
                               __devicelib_assert_fail */
  struct lw_strvec keep; /* sorted names */
  char *vf_set;          /* the set of virtual functions that are its
                            entry points (no kernels), or NULL */
  int vf_dummy;          /* their copy with empty bodies (virtual.c) */
  int esimd;             /* its entry points are all ESIMD functions */
  int esimd_part;        /* DL_SPLIT_ESIMD: the ESIMD part of the category
                            of the last group without ESIMD kernels (one
                            module in DPC++ until it splits off ESIMD) */
  unsigned spec_mode;    /* how its specialization constants are lowered
                            (one DL_SPEC_*), 0 when it uses none */
  struct lw_strvec spec_ids; /* their symbolic ids, in the order met */
  uint32_t *spec_at;         /* each one's first SpecId (native) or offset in
                                the buffer (emulation) */
  size_t cost;           /* instructions in the functions it keeps */
  const char *sanitizer; /* what its kernel tables name ("asan", ...;
                            devlink/sanitizer.c), or NULL */
  struct dl_props props; /* the module's property sets */
};

struct dl_split {
  struct dl_group *g;
  size_t n;
  struct lw_buf bitcode;    /* the linked module, when n > 1 */
  char *triple;
  struct dl_module *whole;  /* the linked module itself, when n <= 1 */
  struct dl_module *linked; /* with DL_KEEP_LINKED and n > 1, the linked
                               module until dl_split_release (its bitcode
                               serves) */
  size_t batch_size;        /* groups per batch (split.c), when n > 1 */
  size_t nbatches;
  struct lw_buf *batch;     /* each batch's module, once made
                               (nbatches, when batch_size > 1) */
  size_t super_size;        /* batches per super-batch, or 0 */
  size_t nsupers;
  struct lw_buf *super;     /* each super-batch's module, once made */
  struct lw_strvec warnings; /* one line each, for the user */
  unsigned flags;            /* dl_split's */
  /* dl_split_units: each group's module is made from its unit's bitcode */
  size_t *unit_of;            /* by group */
  struct lw_buf *unit_bitcode; /* by unit */
  size_t nunits;
};

/* What dl_split may accept and must write besides the split itself. */
enum {
  DL_ALLOW_UNDEFINED = 1, /* a relocatable link: anything may stay undefined */
  DL_DYNAMIC_LINKING = 2, /* SYCL_EXTERNAL functions may come from another
                             image at run time (-support-dynamic-linking) */
  DL_EMIT_IMPORTED = 4,   /* SYCL/imported symbols (-emit-imported-symbols) */
  DL_EMIT_EXPORTED = 8,   /* SYCL/exported symbols (-emit-exported-symbols) */
  /* The ways to lower specialization constants that are asked for (none:
   * native); a group that uses them is made once for each, the copies
   * following each other (specconst.c). */
  DL_SPEC_NATIVE = 16,    /* SPIR-V specialization constants */
  DL_SPEC_EMULATION = 32, /* loads from the kernel's spec-constant buffer */
  DL_SPEC_DEFAULT = 64,   /* their default values */
  DL_SPEC_KEEP = 4096,    /* none: the getters stay (DPC++'s tool without
                             -spec-const) */
  DL_SPEC_MODES =
      DL_SPEC_NATIVE | DL_SPEC_EMULATION | DL_SPEC_DEFAULT | DL_SPEC_KEEP,
  /* DPC++'s sycl-post-link's ways (wrapper/fatpack/postlink.c): */
  DL_EXTERNAL_ENTRIES = 128, /* SYCL_EXTERNAL functions are entry points
                                (split like kernels, in .sym) without
                                dynamic linking too */
  DL_DPCPP_GROUPS = 256,     /* entry points grouped and ordered as
                                DPC++'s tool does: by each one's own
                                attributes and metadata (none without a
                                split), groups from the greatest category
                                down */
  DL_NO_SIZE_CHECK = 512,    /* a call graph may disagree on work-group and
                                sub-group sizes */
  DL_INTERNALIZE = 1024,     /* a split module's functions other than its
                                entry points become internal */
  DL_IMAGE_SCOPE = 8192,     /* a device global of device_image_scope
                                may be in one image only (-device-globals:
                                an error otherwise, as in DPC++) */
  DL_SPLIT_ESIMD = 2048,     /* with DL_DPCPP_GROUPS: a category's ESIMD
                                kernels in a module of their own, after its
                                SPMD one (-split-esimd); without, together
                                (the wrapper always keeps them apart) */
  DL_HOST_PIPES = 16384,     /* host pipes get their SPIR-V decoration
                                (HostAccessINTEL) as DPC++'s compile-time
                                properties pass gives it (-host-pipes) */
  DL_KEEP_LINKED = 32768,    /* the linked module stays (out->linked) for
                                the caller to free with dl_split_release,
                                e.g. on another thread */
};

/* Groups the kernels of *m by `mode` and by optional features (and by the
 * DL_SPEC_* modes in `flags`) and computes each group's property sets
 * (`opt_level` gives optLevel where no entry point's sycl-optlevel does;
 * -1: none); takes the module
 * (*m becomes NULL). Undefined device functions are an error unless
 * `flags` allow them or they are in `elsewhere` (names that SPIR-V linked
 * with the modules defines; NULL: none). */
int dl_split(struct dl_module **m, enum dl_split_mode mode, int opt_level,
             unsigned flags, const struct lw_strvec *elsewhere,
             struct dl_split *out, struct lw_diag *d);

/* The split of inputs[0..n) (user code only) made in units (units.c):
 * each input linked with what it needs of the others and split on its
 * own, on `threads` threads, with no module of the whole program; the
 * groups as dl_split's would be, in the same order, their modules made
 * (dl_split_module) from their unit's bitcode. 1 when the inputs must be
 * linked whole instead (dl_link, dl_split): what this cannot take, and
 * any error, which the whole link then words; 0 when split; LW_ENOMEM. */
int dl_split_units(const struct dl_input *inputs, size_t n,
                   const char *triple, enum dl_split_mode mode, int opt_level,
                   unsigned flags, const struct lw_strvec *elsewhere,
                   int threads, struct dl_split *out, struct lw_diag *d);

/* Frees the linked module kept by DL_KEEP_LINKED: what the split needs is
 * in its bitcode. Any one thread, while others make super-batches (they
 * read only the bitcode); dl_split_free does it too. */
void dl_split_release(struct dl_split *s);

/* Which batch group i is in: groups come in batches of consecutive
 * groups (fixed by the split alone), and a process building modules makes
 * each batch's module once, so that a process that builds a batch's
 * modules pays for loading the linked module once per batch. */
size_t dl_split_batch(const struct dl_split *s, size_t i);

/* Makes super-batch k's module (once): batches' modules are then made
 * from it, not from the linked module; threads may make different
 * super-batches at once. */
int dl_split_make_super(struct dl_split *s, size_t k, struct lw_diag *d);

/* Makes batch b's module (once; nothing to do for batches of one group),
 * so that the processes forked after share it. */
int dl_split_make_batch(struct dl_split *s, size_t b, struct lw_diag *d);

/* Builds group i's module, the same whichever process builds it and
 * whatever it built before (making its batch's first if need be); one
 * thread at a time. */
int dl_split_module(struct dl_split *s, size_t i, struct dl_module **out,
                    struct lw_diag *d);

/* ---- parts (parts.c): one module emitted on several processes ---------- */

struct dl_parts {
  size_t n;                /* parts; 0: the module is emitted whole */
  struct lw_buf bitcode;   /* the module, built and lowered */
  char *triple;
  struct lw_strvec *kernels; /* per part: its kernels, in module order */
  struct lw_strvec *keep;  /* per part: the sorted names it defines (the
                              first part: everything else external too) */
};

/* Cuts group i's module into parts of about `part_cost` instructions (at
 * most `max_parts`), for dl_parts_module, when it is big enough and may be
 * cut (else out->n is 0 and *why, when not NULL, says why not); the group
 * is then built (dl_split_module): the split's only module is gone from
 * it (one part, the whole module, when it is found uncuttable only then).
 * One thread at a time, as dl_split_module. */
int dl_parts_make(struct dl_split *s, size_t i, size_t part_cost,
                  size_t max_parts, struct dl_parts *out, const char **why,
                  struct lw_diag *d);

/* Builds part k's module: to be emitted, alone in its process, and its
 * SPIR-V merged with the others' (dl_spirv_merge). */
int dl_parts_module(const struct dl_parts *p, size_t k, struct dl_module **out,
                    struct lw_diag *d);

void dl_parts_free(struct dl_parts *p);

/* The module's bitcode (a cache key), appended to `out`; LW_ENOMEM. */
int dl_module_bitcode(struct dl_module *m, struct lw_buf *out);

void dl_split_free(struct dl_split *s);

/* Writes the module's bitcode to `path`. */
int dl_write_bitcode(struct dl_module *m, const char *path, struct lw_diag *d);

/* Textual IR of the module (malloc'd), for --save-temps. */
char *dl_print(struct dl_module *m);

/* Wraps a module built elsewhere (e.g. by wrap/); takes ownership of both
 * the module and its context. */
int dl_module_adopt(LLVMContextRef ctx, LLVMModuleRef mod, const char *triple,
                    struct dl_module **out);

/* Frees the module and its context. */
void dl_module_free(struct dl_module *m);

/* Sets LLVM's process-wide options, once, before any job runs: fatlink's
 * own (llvmopts.c says which and why; one the user's list names is left to
 * the user), the SPIR-V extensions (DPC++'s set, edited by `spirv_ext`, a
 * --spirv-extensions value or NULL), then `opts`, `-mllvm` style. Unless
 * `trusted` (a helper given its parent's lists), the names are checked
 * first: LW_EINVAL names the first unknown option or extension in `d`. */
int dl_set_llvm_options(const struct lw_strvec *opts, const char *spirv_ext,
                        int trusted, struct lw_diag *d);

/* LLVM's answer to the help request `request` (-help, -help-hidden,
 * ...) on `out`, with the tool's own LLVM-style options `own` ({name with
 * its value, "description"}, sorted by name) among the general options,
 * as a tool that registers them lists them. */
int dl_llvm_help(const char *request, const char *const (*own)[2],
                 size_t nown, FILE *out, struct lw_diag *d);

#endif
