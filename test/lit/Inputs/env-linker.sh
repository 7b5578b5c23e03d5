#!/bin/sh
# env-linker.sh: a host-linker stand-in that writes the GLIBC_TUNABLES it
# was given (or "unset") into its -o output.
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out=$2; fi
  shift
done
echo "tunables=[${GLIBC_TUNABLES-unset}]" > "$out"
