#!/bin/sh
# A stand-in for Intel's aoc (proprietary, not in Debian), copied as "aoc"
# into a directory put first on PATH. It checks the command line fatlink
# gives it - aoc -o OUT IN [-library-list=LIST] -sycl [-rtl]
# [-dep-files=A,@L] [-output-report-folder=R] [options] - with IN SPIR-V or
# an AOCR this stand-in wrote, every library in LIST an AOCO and every
# dependency file present, and writes a recognisable AOCX (or, with -rtl,
# AOCR) naming what it was given; the report folder gets a report.txt.
# AOC_STANDIN=fail|hang|crash|nothing misbehaves as asked; slow takes a
# second. Hanging with FATLINK_TEST_MARK set, it starts a child of its own
# (as aoc starts compilers) and writes the child's pid there
# (Inputs/interrupt.py).
err() { echo "aoc-standin: error: $*" >&2; exit 2; }
[ "$1" = "-o" ] && [ -n "$2" ] && [ -n "$3" ] || err "want -o OUT IN first"
out=$2 in=$3
shift 3
libs= deps= rtl= report= opts=
if [ "${1#-library-list=}" != "$1" ]; then
  list=${1#-library-list=}
  [ -f "$list" ] || err "no library list $list"
  while read -r lib; do
    [ -n "$lib" ] || continue
    head -c 11 "$lib" 2>/dev/null | grep -q "^AOCO-LIB" || err "$lib is not an AOCO"
    libs="$libs $(sed -n 2p "$lib")"
  done < "$list"
  shift
fi
[ "$1" = "-sycl" ] || err "want -sycl after the input, got '$1'"
shift
[ "$1" = "-rtl" ] && { rtl=1; shift; }
if [ "${1#-dep-files=}" != "$1" ]; then
  for d in $(echo "${1#-dep-files=}" | tr ',' ' '); do
    case $d in
      @*) [ -f "${d#@}" ] || err "no dependency list ${d#@}"
          while read -r f; do [ -f "$f" ] || err "no dependency file $f"; deps="$deps $(basename "$f")"; done < "${d#@}" ;;
      *) [ -f "$d" ] || err "no dependency file $d"; deps="$deps $(basename "$d")" ;;
    esac
  done
  shift
fi
[ "${1#-output-report-folder=}" != "$1" ] && { report=${1#-output-report-folder=}; shift; }
opts="$*"
magic=$(od -An -tx1 -N4 "$in" | tr -d ' \n')
if [ "$magic" = "03022307" ]; then
  what="spirv $(wc -c < "$in") bytes"
elif head -n 1 "$in" | grep -q "^AOC-STANDIN AOCR"; then
  [ -z "$rtl" ] || err "-rtl given an AOCR"
  what="aocr ($(sed -n 's/^input: //p' "$in"))"
else
  err "$in is neither SPIR-V nor an AOCR ($magic)"
fi
case $AOC_STANDIN in
  fail) echo "aoc-standin: Compiler Error: the design does not fit" >&2; exit 1 ;;
  hang) if [ -n "$FATLINK_TEST_MARK" ]; then
          sleep 60 & echo $! > "$FATLINK_TEST_MARK"; wait
        else sleep 60; fi ;;
  slow) sleep 1 ;;
  crash) echo "aoc-standin: internal error" >&2; kill -SEGV $$ ;;
  nothing) exit 0 ;;
esac
if [ -n "$report" ]; then
  mkdir -p "$report" && echo "aoc-standin report for $what" > "$report/report.txt"
fi
printf 'AOC-STANDIN %s\ninput: %s\nlibraries:%s\ndeps:%s\noptions: %s\n' \
  "$([ -n "$rtl" ] && echo AOCR || echo AOCX)" "$what" "$libs" "$deps" "$opts" > "$out"
