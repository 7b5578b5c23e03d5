#!/bin/sh
# A stand-in for an llvm-spirv built for LLVM 22 (Debian has only
# llvm-spirv-15): it checks the argv fatlink gives a translator - the
# --llvm-spirv-options words first, then the input bitcode, -o and the
# output - logs it to $STANDIN_LOG, and makes real SPIR-V with llc.
set -e
[ "$1" = "--spirv-ext=+all" ] && [ "$2" = "-spirv-max-version=1.4" ] || {
  echo "llvm-spirv stand-in: error: options not passed first, verbatim: $*" >&2
  exit 2
}
[ "$#" -eq 5 ] && [ "$4" = "-o" ] || {
  echo "llvm-spirv stand-in: error: expected OPTS IN.bc -o OUT.spv: $*" >&2
  exit 2
}
case "$3" in *.bc) ;; *) echo "llvm-spirv stand-in: error: input $3" >&2; exit 2 ;; esac
echo "$*" >> "$STANDIN_LOG"
exec llc -mtriple=spirv64-unknown-unknown -filetype=obj "$3" -o "$5"
