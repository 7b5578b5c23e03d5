#!/bin/sh
# CUDA relocatable-device-code programs linked by fatlink and by upstream's
# clang-linker-wrapper, side by side.
#
#   cuda-programs.sh build DIR FATLINK_BINDIR [CUDA_PATH]
#       compiles test/lit/Inputs/cuda/ with clang++-22 and links every
#       program twice: DIR/<name>.fatlink (clang++ -B FATLINK_BINDIR) and
#       DIR/<name>.upstream (LLVM 22's clang-linker-wrapper).
#   cuda-programs.sh run DIR
#       runs each pair (on a machine with an NVIDIA GPU of sm_80 or sm_90:
#       the binaries need only the driver, cudart is linked statically) and
#       compares what they print; exits non-zero on any difference or
#       failure.
#
# The programs: saxpy (kernels in one TU calling __device__ functions of
# another that comes from a static archive, two architectures in one
# fatbinary), globals (__device__, __constant__, an extern __device__
# variable of another TU, managed memory, mixed with an object
# compiled without -fgpu-rdc; one architecture), relocatable (saxpy's
# device code linked and registered by a -r link of each tool first).
set -eu
cmd=$1 dir=$2
case $cmd in
build)
  bindir=$3 cuda=${4:-/usr/local/cuda}
  src=$(cd "$(dirname "$0")/../lit/Inputs/cuda" && pwd)
  mkdir -p "$dir"
  cd "$dir"
  cxx="clang++-22 -Wno-unknown-cuda-version --cuda-path=$cuda"
  rdc="-x cuda -fgpu-rdc --offload-new-driver"
  two="--offload-arch=sm_80 --offload-arch=sm_90"
  for f in saxpy_main kernels helpers; do
    $cxx $rdc $two -O2 -c "$src/$f.cu" -o $f.o
  done
  rm -f libhelpers.a
  llvm-ar-22 rcs libhelpers.a helpers.o
  for f in globals globals_def; do
    $cxx $rdc --offload-arch=sm_90 -O2 -c "$src/$f.cu" -o $f.o
  done
  $cxx -x cuda --offload-new-driver --offload-arch=sm_90 -O2 -c "$src/plain.cu" -o plain.o
  libs="-L$cuda/lib64 -lcudart_static -ldl -lrt -lpthread"
  link() { # name objects...
    name=$1
    shift
    $cxx -fgpu-rdc --offload-new-driver -B "$bindir" "$@" $libs -o $name.fatlink
    PATH=/usr/lib/llvm-22/bin:$PATH $cxx -fgpu-rdc --offload-new-driver "$@" $libs -o $name.upstream
  }
  link saxpy saxpy_main.o kernels.o libhelpers.a
  link globals globals.o globals_def.o plain.o
  # relocatable: the device code linked and registered by a -r link first,
  # then the program links that object.
  $cxx -fgpu-rdc --offload-new-driver -B "$bindir" -r kernels.o helpers.o -o part.fatlink.o
  PATH=/usr/lib/llvm-22/bin:$PATH $cxx -fgpu-rdc --offload-new-driver -r kernels.o helpers.o -o part.upstream.o
  $cxx -fgpu-rdc --offload-new-driver -B "$bindir" saxpy_main.o part.fatlink.o $libs -o relocatable.fatlink
  PATH=/usr/lib/llvm-22/bin:$PATH $cxx -fgpu-rdc --offload-new-driver saxpy_main.o part.upstream.o $libs \
    -o relocatable.upstream
  ;;
run)
  cd "$dir"
  status=0
  for f in *.fatlink; do
    name=${f%.fatlink}
    rc_f=0 rc_u=0
    ./$name.fatlink > $name.fatlink.out 2>&1 || rc_f=$?
    ./$name.upstream > $name.upstream.out 2>&1 || rc_u=$?
    echo "$name: fatlink exit $rc_f: $(cat $name.fatlink.out)"
    echo "$name: upstream exit $rc_u: $(cat $name.upstream.out)"
    if [ $rc_f -ne 0 ] || [ $rc_u -ne 0 ] ||
       ! cmp -s $name.fatlink.out $name.upstream.out; then
      echo "$name: FAILED"
      status=1
    fi
  done
  exit $status
  ;;
*)
  echo "usage: $0 build DIR FATLINK_BINDIR [CUDA_PATH] | run DIR" >&2
  exit 2
  ;;
esac
