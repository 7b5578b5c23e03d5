"""make-corpus.py DIR FAT_OBJECT: writes a corpus of malformed inputs, one
file per way of being broken, each of which must be refused with one line.
FAT_OBJECT (an ELF object with an offloading section, from clang) is the
base for the ELF and archive variants."""
import os
import struct
import sys
import zlib

out, fat = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)

def put(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)

MAGIC = b"\x10\xff\x10\xad"

def offload_binary(version=1, image=b"IMAGE123", strings=((b"triple", b"x86_64"),),
                   hdr_size=None):
    """A well-formed blob (v1 layout for version 1, v2 otherwise)."""
    hdr = hdr_size or (40 if version >= 3 else 32)
    ent_off = hdr
    str_ent = ent_off + 40
    esize = 16 if version == 1 else 24
    tab = str_ent + esize * len(strings)
    table = b""
    offs = []
    for k, v in strings:
        offs.append((tab + len(table), tab + len(table) + len(k) + 1, len(v)))
        table += k + b"\0" + v + b"\0"
    img_off = (tab + len(table) + 7) & ~7
    size = (img_off + len(image) + 7) & ~7
    b = bytearray(size)
    b[0:4] = MAGIC
    struct.pack_into("<IQQQ", b, 4, version, size, ent_off, 40 if version == 1 else 1)
    struct.pack_into("<HHIQQQQ", b, ent_off, 2, 1, 0, str_ent, len(strings), img_off, len(image))
    for i, (k, v, vl) in enumerate(offs):
        if version == 1:
            struct.pack_into("<QQ", b, str_ent + 16 * i, k, v)
        else:
            struct.pack_into("<QQQ", b, str_ent + 24 * i, k, v, vl)
    b[tab:tab + len(table)] = table
    b[img_off:img_off + len(image)] = image
    return b

def patched(b, off, fmt, *vals):
    b = bytearray(b)
    struct.pack_into(fmt, b, off, *vals)
    return bytes(b)

ob = offload_binary()
put("ob-truncated-header.bin", bytes(ob[:20]))
put("ob-size-past-end.bin", patched(ob, 8, "<Q", len(ob) + 4096))
put("ob-size-tiny.bin", patched(ob, 8, "<Q", 8))
put("ob-version-0.bin", patched(ob, 4, "<I", 0))
put("ob-version-99.bin", patched(ob, 4, "<I", 99))
put("ob-entries-past-end.bin", patched(ob, 16, "<Q", 1 << 40))
put("ob-entries-overlap-header.bin", patched(ob, 16, "<Q", 8))
put("ob-image-past-end.bin", patched(ob, 32 + 24, "<QQ", 64, 1 << 62))
put("ob-strings-huge-count.bin", patched(ob, 32 + 16, "<Q", 1 << 59))
put("ob-string-offset-past-end.bin", patched(ob, 32 + 40, "<Q", 1 << 33))
b = bytearray(ob)
tail = len(b) - 8
b[tail:] = b"X" * 8
struct.pack_into("<Q", b, 32 + 40, tail)
put("ob-string-unterminated.bin", bytes(b))
ob2 = offload_binary(version=2)
put("ob2-huge-count.bin", patched(ob2, 24, "<Q", 1 << 60))
put("ob2-value-size-past-end.bin", patched(ob2, 32 + 40 + 16, "<Q", 1 << 40))

def v3(method, lie=0, corrupt=False, implausible=False):
    raw = offload_binary(version=3)
    body = bytes(raw[40:])
    packed = zlib.compress(body) if method == "zlib" else None
    if method == "zstd":  # a zstd frame header followed by garbage
        packed = b"\x28\xb5\x2f\xfd" + b"\x00" * 16
    if corrupt:
        packed = packed[:6] + b"\xff" * 10 + packed[16:]
    b = bytearray(raw[:40]) + packed
    inflated = len(raw) + lie if not implausible else 1 << 40
    struct.pack_into("<Q", b, 32, inflated)
    b += b"\0" * ((8 - len(b) % 8) % 8)
    struct.pack_into("<Q", b, 8, len(b))
    return bytes(b)

put("ob3-size-lie.bin", v3("zlib", lie=16))
put("ob3-corrupt-zlib.bin", v3("zlib", corrupt=True))
put("ob3-corrupt-zstd.bin", v3("zstd"))
put("ob3-implausible.bin", v3("zlib", implausible=True))

BMAGIC = b"__CLANG_OFFLOAD_BUNDLE__"

def bundle(entries):
    hdr = BMAGIC + struct.pack("<Q", len(entries))
    off = len(hdr) + sum(24 + len(i) for i, _ in entries)
    table, data = b"", b""
    for bid, payload in entries:
        table += struct.pack("<QQQ", off + len(data), len(payload), len(bid)) + bid
        data += payload
    return hdr + table + data

bu = bundle([(b"host-x86_64-unknown-linux-gnu-", b"HOST"),
             (b"openmp-x86_64-pc-linux-gnu-", b"\x7fELFdevice")])
put("bundle-truncated.bin", bu[:30])
put("bundle-huge-count.bin", patched(bu, 24, "<Q", 1 << 62))
put("bundle-entry-past-end.bin", patched(bu, 32, "<QQ", 10, 1 << 50))
put("bundle-id-past-end.bin", patched(bu, 32 + 16, "<Q", 1 << 20))
put("bundle-bad-id.bin", bundle([(b"nodash", b"x")]))
put("bundle-unknown-kind.bin", bundle([(b"weird-x86_64-pc-linux-gnu-", b"x")]))

def ccob(version, method, payload, size=None, file_size=None):
    hdr = {1: 16, 2: 20, 3: 32}.get(version, 32)
    size = len(bu) if size is None else size
    total = hdr + len(payload) if file_size is None else file_size
    if version == 1:
        h = b"CCOB" + struct.pack("<HHIQ", 1, method, size, 0)
    elif version == 2:
        h = b"CCOB" + struct.pack("<HHIIQ", 2, method, total, size, 0)
    else:
        h = b"CCOB" + struct.pack("<HHQQQ", version, method, total, size, 0)
    return h + payload

z = zlib.compress(bu)
put("ccob-unknown-method.bin", ccob(3, 7, z))
put("ccob-bad-version.bin", ccob(9, 0, z))
put("ccob-truncated.bin", ccob(3, 0, z)[:12])
put("ccob-file-size-past-end.bin", ccob(3, 0, z, file_size=1 << 30))
put("ccob-size-lie.bin", ccob(2, 0, z, size=len(bu) + 100))
put("ccob-implausible.bin", ccob(3, 0, z, size=1 << 40))
put("ccob-corrupt-zlib.bin", ccob(1, 0, z[:4] + b"\xff" * 8 + z[12:]))
put("ccob-corrupt-zstd.bin", ccob(3, 1, b"\x28\xb5\x2f\xfd" + b"\x11" * 24))
put("ccob-empty-stream.bin", ccob(3, 0, b""))

# ELF variants of a real fat object.
elf = open(fat, "rb").read()
shoff, = struct.unpack_from("<Q", elf, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3a)
for i in range(shnum):
    sh = shoff + i * shentsize
    if struct.unpack_from("<I", elf, sh + 4)[0] == 0x6fff4c0b:
        put("elf-section-past-end.o", patched(elf, sh + 0x18, "<Q", len(elf) - 4))
        put("elf-section-huge.o", patched(elf, sh + 0x20, "<Q", 1 << 62))
        put("elf-section-nobits.o", patched(elf, sh + 4, "<I", 8))
        break
put("elf-shoff-past-end.o", patched(elf, 0x28, "<Q", len(elf) + 100))
put("elf-truncated.o", elf[:len(elf) // 2])

# Archives.
def ar_member(name, data, size=None):
    size = len(data) if size is None else size
    h = ("%-16s%-12s%-6s%-6s%-8s%-10d" % (name, "0", "0", "0", "644", size)).encode() + b"`\n"
    return h + data + (b"\n" if len(data) % 2 else b"")

put("ar-member-past-end.a", b"!<arch>\n" + ar_member("big.o/", elf[:100], size=len(elf) * 4))
put("ar-member-corrupt.a", b"!<arch>\n" + ar_member("bad.bin/", bytes(ob[:20])))
put("ar-bad-header.a", b"!<arch>\n" + b"this is not a member header, just sixty bytes of noise......")
put("thin-missing-member.a", b"!<thin>\n" + ("%-16s%-12s%-6s%-6s%-8s%-10d`\n" % ("gone.o/", "0", "0", "0", "644", 10)).encode())
put("thin-bad-header.a", b"!<thin>\n" + b"x" * 60)
