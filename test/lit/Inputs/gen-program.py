"""gen-program.py DIR TUS KERNELS SEED: writes the realistic SYCL program of
test/bench/real_link.py (helpers with loops, math built-ins, structs by
value, mixed kernel sizes, SYCL_EXTERNAL helpers shared across units) into
DIR as common.h, tu0.cpp ... and main.cpp: tests that need enough device
code for fatlink's workers."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
from real_link import write_sources  # noqa: E402

os.makedirs(sys.argv[1], exist_ok=True)
write_sources(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
