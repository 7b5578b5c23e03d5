"""gen-stress.py DIR KERNELS FUNCS CALLS SEED: writes stress.cpp and main.cpp
into DIR: FUNCS noinline device functions of assorted shapes (loops, nested
loops, if-chains, switches; each reading one of a few global tables) and
KERNELS SYCL kernels, each calling CALLS of them (picked by SEED). Split per
kernel, every module holds most of the functions again: many machine
functions with many blocks, module after module - the shape on which LLVM
22's SPIR-V back end, emitting one module after another in a process,
gives labels ids of earlier modules (llvm-project issue 160613)."""
import os
import random
import sys

out_dir = sys.argv[1]
kernels, funcs, calls, seed = (int(a) for a in sys.argv[2:6])
r = random.Random(seed)
tables = max(1, funcs // 10)
src = ["template <typename N, typename F>",
       "[[clang::sycl_kernel_entry_point(N)]] void st(F f) { f(); }"]
for g in range(tables):
    src.append("static float tab%d[8] = {%s};" % (
        g, ", ".join("%.2ff" % r.uniform(-1, 1) for _ in range(8))))
BODIES = [
    "for (int k = 0; k < n; k++) v = v * tab{g}[k & 7] + {f}.5f; return v;",
    "if (v > {m}.0f) v -= tab{g}[n & 7]; else if (v < -1.0f) v = -v; "
    "else v += 1.0f; return v;",
    "switch (n & 3) {{ case 0: v += tab{g}[0]; break; case 1: v *= {m}.0f; "
    "break; case 2: v -= tab{g}[2]; break; default: v = v * v; }} return v;",
    "for (int a = 0; a < n; a++) for (int b = 0; b < a; b++) {{ "
    "if ((a ^ b) & 1) v += tab{g}[b & 7]; else v -= {m}.25f; }} return v;",
]
for f in range(funcs):
    body = r.choice(BODIES).format(g=r.randrange(tables), f=f, m=f % 7 + 1)
    src.append("[[gnu::noinline]] float f%d(float v, int n) { %s }" % (f, body))
for k in range(kernels):
    src.append("struct K%d;" % k)
src.append("void run(float *p, int n) {")
for k in range(kernels):
    called = " + ".join("f%d(p[x], n)" % c
                        for c in r.sample(range(funcs), min(calls, funcs)))
    src.append("  st<K%d>([=]() { for (int x = 0; x < n; x++) p[x] = %s; });"
               % (k, called))
src.append("}")
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "stress.cpp"), "w") as f:
    f.write("\n".join(src) + "\n")
with open(os.path.join(out_dir, "main.cpp"), "w") as f:
    f.write("int main() { return 0; }\n")
