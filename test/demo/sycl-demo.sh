#!/bin/sh
# sycl-demo.sh BUILD_DIR: compiles a two-TU SYCL program with clang++-22
# -fsycl, links it through fatlink (clang -B BUILD_DIR/bin finds it as
# clang-linker-wrapper) and runs it. Debian has no SYCL runtime, so the
# program carries test/runtime/sycl_rt.c, which prints what was registered.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
in=$src/lit/Inputs
for tu in sycl_a sycl_b sycl_main; do
  clang++-22 -fsycl -O2 -c "$in/$tu.cpp" -o "$work/$tu.o"
done
clang-22 -c "$src/runtime/sycl_rt.c" -o "$work/rt.o"
clang++-22 -fsycl -B "$build/bin" -Wl,--wrapper-verbose \
  "$work/sycl_a.o" "$work/sycl_b.o" "$work/sycl_main.o" "$work/rt.o" \
  -o "$work/demo"
SYCL_RT_DUMP="$work/image" "$work/demo"
spirv-val "$work/image0.spv" && echo "demo: image 0 is valid SPIR-V"
