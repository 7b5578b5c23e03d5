#!/bin/sh
# make-fat.sh IN.ll OUT.o: assembles device IR and wraps it into a host
# object the way clang embeds device code (an OffloadBinary of kind sycl,
# triple spirv64, in .llvm.offloading).
set -e
llvm-as "$1" -o "$2.bc"
"$FATPACK" create --image=file="$2.bc",triple=spirv64-unknown-unknown,arch=generic,kind=sycl -o "$2.bin"
"$CLANG" -c -x c /dev/null -Xclang -fembed-offload-object="$2.bin" -o "$2"
rm -f "$2.bc" "$2.bin"
