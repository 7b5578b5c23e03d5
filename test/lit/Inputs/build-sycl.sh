#!/bin/sh
# build-sycl.sh OUTDIR CLANGXX INPUTS: compiles the SYCL test program's
# translation units into fat objects with clang-22 -fsycl -c.
set -e
out=$1 cxx=$2 in=$3
mkdir -p "$out"
for tu in sycl_a sycl_b sycl_main; do
  "$cxx" -fsycl -O2 -c "$in/$tu.cpp" -o "$out/$tu.o" &
done
wait
