#!/bin/sh
# A stand-in for Intel's opencl-aot (proprietary, not in Debian), copied as
# "opencl-aot" into a directory put first on PATH. It checks the command
# line fatlink gives it - opencl-aot --device=cpu|fpga_fast_emu [options]
# -o OUT IN, IN being SPIR-V - and writes a plausible binary naming what it
# was given.
case $1 in
  --device=cpu|--device=fpga_fast_emu) device=${1#--device=} ;;
  *) echo "opencl-aot-standin: error: want --device=cpu or fpga_fast_emu first, got '$1'" >&2; exit 2 ;;
esac
shift
opts=
while [ $# -gt 2 ] && [ "$1" != "-o" ]; do opts="$opts $1"; shift; done
[ "$1" = "-o" ] && [ $# -eq 3 ] || { echo "opencl-aot-standin: error: want -o OUT IN at the end" >&2; exit 2; }
out=$2 in=$3
magic=$(od -An -tx1 -N4 "$in" | tr -d ' \n')
[ "$magic" = "03022307" ] || { echo "opencl-aot-standin: error: $in is not SPIR-V ($magic)" >&2; exit 2; }
printf 'OPENCL-AOT-STANDIN\ndevice: %s\noptions:%s\nspirv: %s bytes\n' "$device" "$opts" "$(wc -c < "$in")" > "$out"
