#!/bin/sh
# A stand-in for ocloc that misbehaves as OCLOC_STANDIN says (copied as
# "ocloc" into a directory put first on PATH): hang, garbage (writes text
# where the binary goes), crash (dies of SIGSEGV after a message on stderr).
# It checks the command line fatlink gives ocloc first.
out=
while [ $# -gt 0 ]; do
  case $1 in
    -output) out=$2; shift ;;
  esac
  shift
done
[ -n "$out" ] || { echo "ocloc-standin: error: no -output" >&2; exit 2; }
case $OCLOC_STANDIN in
  hang) sleep 60 ;;
  garbage) echo "not a binary" > "$out" ;;
  crash) echo "ocloc-standin: internal error in the GPU back end" >&2; kill -SEGV $$ ;;
esac
