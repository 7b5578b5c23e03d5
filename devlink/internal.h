/* internal.h - private to devlink/. */
#ifndef DL_INTERNAL_H
#define DL_INTERNAL_H

#include "dl.h"

#include <llvm-c/Core.h>

struct dl_module {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  char *triple;
};

#endif
