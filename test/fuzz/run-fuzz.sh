#!/bin/sh
# run-fuzz.sh HARNESS NAME SECONDS SRCDIR CORPUSDIR: runs a libFuzzer harness
# for SECONDS on a corpus seeded from the test inputs (made once in
# CORPUSDIR/NAME, where what the fuzzer finds stays) and the inputs of past
# findings (test/fuzz/regressions/NAME), then prints
# "NAME: N executions, K findings" (findings: crash-*/leak-*/timeout-* files
# libFuzzer writes, kept in CORPUSDIR/NAME-findings). Exit 1 on a finding.
set -u
h=$1 name=$2 secs=$3 src=$4 dir=$5
corpus=$dir/$name found=$dir/$name-findings
mkdir -p "$corpus" "$found"
if [ -z "$(ls -A "$corpus")" ]; then
  case $name in
  scan|wrapped|link)
    # Every small binary test input, and objects made like the tests'.
    find "$src/test/lit/Inputs" -type f -size -64k ! -name '*.ll' ! -name '*.c' \
      ! -name '*.cpp' ! -name '*.py' ! -name '*.sh' -exec cp {} "$corpus"/ \; ;;
  bitcode)
    # Recipes (see fuzz_bitcode.c): flags, then offload binaries made by
    # llvm-offload-binary from test inputs, and past OffloadBinary findings.
    ob=/usr/lib/llvm-22/bin/llvm-offload-binary
    "$ob" -o "$corpus/ob1" --image=file="$src/test/lit/Inputs/omp_a.c,triple=x86_64-unknown-linux-gnu,arch=native,kind=openmp"
    "$ob" -o "$corpus/ob2" --image=file="$src/test/lit/Inputs/sycl_a.cpp,triple=spirv64-unknown-unknown,kind=sycl,compile-opts=-g" \
      --image=file="$src/test/lit/Inputs/fpga_a.cpp,triple=spir64_fpga-unknown-unknown,arch=,kind=sycl"
    cp "$src"/test/fuzz/regressions/scan/offload-* "$corpus"/
    for f in "$corpus"/*; do
      for fl in 4 7 45 86; do
        { printf "\\$(printf %o $fl)"; cat "$f"; } >"$f-$fl"
      done
      rm "$f"
    done ;;
  config)
    cp "$src"/test/lit/Inputs/aot/*.yaml "$corpus"/ ;;
  options)
    printf -- '--linker-path=/usr/bin/ld\0-o\0out\0a.o\0-Wl,--sycl-targets=spir64,intel_gpu_skl\0--cache-size=5G' > "$corpus/argv1"
    printf -- '@-o out "a b.o" @nested\0--\0-lc' > "$corpus/rsp1"
    printf -- '--sycl-post-link-options=-split=kernel -spec-const=native\0-Xlinker\0--tool-launcher=srun -N1' > "$corpus/argv2" ;;
  esac
fi
# What fuzzing found before, fixed since: run again every time.
[ -d "$src/test/fuzz/regressions/$name" ] && cp "$src/test/fuzz/regressions/$name"/* "$corpus"/
log=$dir/$name.log
# FUZZ_SEED (ctest sets 1): the same mutations on the same corpus each time.
ASAN_OPTIONS=detect_leaks=1 "$h" "$corpus" -max_total_time="$secs" -timeout=10 \
  -rss_limit_mb=4096 -artifact_prefix="$found/" -print_final_stats=1 \
  ${FUZZ_SEED:+-seed=$FUZZ_SEED} >"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
n=$(ls -A "$found" | wc -l)
echo "$name: ${execs:-0} executions, $n findings (log $log)"
[ "$rc" -eq 0 ] && [ "$n" -eq 0 ] || { tail -30 "$log"; exit 1; }
