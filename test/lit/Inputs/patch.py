"""patch.py IN OUT OFFSET HEX: copies IN to OUT with the bytes at OFFSET
(negative: from the end) replaced by HEX. Makes corrupt test inputs."""
import sys

data = bytearray(open(sys.argv[1], "rb").read())
off = int(sys.argv[3], 0)
if off < 0:
    off += len(data)
new = bytes.fromhex(sys.argv[4])
data[off:off + len(new)] = new
open(sys.argv[2], "wb").write(data)
