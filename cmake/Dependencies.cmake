# Finds every dependency the CMake way, from Debian 12 packages:
# LLVM 22 through its CMake package (shared libLLVM, used through LLVM-C),
# libelf, libarchive, libyaml, libuv, zlib and zstd through pkg-config,
# OpenCL through FindOpenCL.
find_package(LLVM REQUIRED CONFIG
  HINTS /usr/lib/llvm-22/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "LLVM 22 is required, found ${LLVM_PACKAGE_VERSION}")
endif()
message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} in ${LLVM_TOOLS_BINARY_DIR}")
if(NOT LLVM_LINK_LLVM_DYLIB AND NOT TARGET LLVM)
  message(FATAL_ERROR "LLVM ${LLVM_PACKAGE_VERSION} has no shared libLLVM")
endif()
add_library(fatlink_llvm INTERFACE)
target_include_directories(fatlink_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_link_libraries(fatlink_llvm INTERFACE LLVM)

find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
pkg_check_modules(LIBYAML REQUIRED IMPORTED_TARGET yaml-0.1)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(SPIRV_TOOLS REQUIRED IMPORTED_TARGET SPIRV-Tools)
pkg_check_modules(LIBB2 REQUIRED IMPORTED_TARGET libb2)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
pkg_check_modules(LIBCURL REQUIRED IMPORTED_TARGET libcurl)
find_package(OpenCL REQUIRED)

# The clang that links OpenMP device objects (same LLVM as ours).
set(FATLINK_CLANG "${LLVM_TOOLS_BINARY_DIR}/clang" CACHE FILEPATH
    "clang used for OpenMP device links")
set(FATLINK_LLVM_BIN "${LLVM_TOOLS_BINARY_DIR}")
# The objcopy that makes a relocatable link's output private (-r).
set(FATLINK_OBJCOPY "${LLVM_TOOLS_BINARY_DIR}/llvm-objcopy" CACHE FILEPATH
    "llvm-objcopy used after a relocatable link")
# The bundler that makes HIP fatbinaries.
set(FATLINK_OFFLOAD_BUNDLER "${LLVM_TOOLS_BINARY_DIR}/clang-offload-bundler"
    CACHE FILEPATH "clang-offload-bundler used for HIP fatbinaries")
# The linker of SYCL code objects for AMD GPUs (lld-22).
set(FATLINK_LLD "${LLVM_TOOLS_BINARY_DIR}/ld.lld" CACHE FILEPATH
    "ld.lld used for SYCL code objects of AMD GPUs")
# The archiver of --fpga-link-type archives.
set(FATLINK_AR "${LLVM_TOOLS_BINARY_DIR}/llvm-ar" CACHE FILEPATH
    "llvm-ar used for FPGA archive links")
