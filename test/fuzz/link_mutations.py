#!/usr/bin/env python3
"""link_mutations.py [--runs N] [--seed S] [--build DIR] [--keep DIR] [--whole]

Links SYCL fat objects whose embedded device bitcode had a few random bytes
changed (bit flips, 0x00/0xff bytes, large 32-bit values, cuts) and sorts
what fatlink did: ok, a one-line error (exit 1), the one-line error of a
crash inside LLVM (handled-crash), LLVM's fatal error, or a crash of fatlink
itself (crash<signal>), a run over 20 s (timeout), an error of more than one
line (-multiline), a temporary left (-tmpleft); and says the slowest run
and the largest peak memory of a link (GNU time's maximum resident set),
counting those over 2 GB. With --whole the fat object
itself is mutated (ELF, offload binary and bitcode alike), as the issue's
first experiment did. A failed host link (linker-error) shows ld's own
lines before fatlink's. Inputs of each unusual kind
are kept (--keep) to become regression inputs. The bitcode is the
specialization-constant test's (test/lit/Inputs/postlink/specconst.ll)."""
import argparse
import os
import time
import random
import shutil
import subprocess
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLVM = "/usr/lib/llvm-22/bin"


def mutate(r, bc):
    b = bytearray(bc)
    for _ in range(r.randint(1, 4)):
        k = r.randrange(len(b))
        op = r.random()
        if op < 0.4:
            b[k] ^= 1 << r.randrange(8)
        elif op < 0.6:
            b[k] = 0
        elif op < 0.8:
            b[k] = 0xff
        elif op < 0.95:
            b[k:k + 4] = r.randrange(1 << 32).to_bytes(4, "little")
        else:
            del b[k:]
    return bytes(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--keep", default=None)
    ap.add_argument("--whole", action="store_true",
                    help="mutate the whole fat object, not only its bitcode")
    a = ap.parse_args()
    fat = os.path.join(a.build, "bin", "fatlink")
    fatpack = os.path.join(a.build, "bin", "fatpack")
    work = tempfile.mkdtemp(prefix="fatlink-mutations-")
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    try:
        w = lambda n: os.path.join(work, n)  # noqa: E731
        ll = open(os.path.join(SRC, "test/lit/Inputs/postlink/specconst.ll")).read()
        open(w("in.ll"), "w").write(ll.replace(" BUF)", " null)"))
        subprocess.check_call([LLVM + "/llvm-as", w("in.ll"), "-o", w("in.bc")])
        subprocess.check_call(["clang-22", "-c", os.path.join(SRC, "test/runtime/sycl_rt.c"),
                               "-o", w("rt.o")])
        subprocess.run(["clang-22", "-c", "-x", "c", "-", "-o", w("main.o")], check=True,
                       input=b"int main(void) { return 0; }\n")
        bc = open(w("in.bc"), "rb").read()
        subprocess.check_call([fatpack, "create", "--image=file=%s,triple=spirv64-unknown-"
                               "unknown,arch=generic,kind=sycl" % w("in.bc"), "-o", w("in.bin")])
        subprocess.check_call(["clang-22", "-c", "-x", "c", "/dev/null", "-Xclang",
                               "-fembed-offload-object=" + w("in.bin"), "-o", w("in.o")])
        fat_obj = open(w("in.o"), "rb").read()
        r = random.Random(a.seed)
        stats = {}
        slowest, peak, over_2g = 0.0, 0, 0
        for i in range(a.runs):
            if a.whole:
                open(w("m.o"), "wb").write(mutate(r, fat_obj))
                shutil.copy(w("m.o"), w("m.bc"))  # what --keep keeps
            else:
                open(w("m.bc"), "wb").write(mutate(r, bc))
                subprocess.check_call([fatpack, "create", "--image=file=%s,triple=spirv64-"
                                       "unknown-unknown,arch=generic,kind=sycl" % w("m.bc"),
                                       "-o", w("m.bin")])
                subprocess.check_call(["clang-22", "-c", "-x", "c", "/dev/null", "-Xclang",
                                       "-fembed-offload-object=" + w("m.bin"), "-o", w("m.o")])
            try:
                start = time.monotonic()
                p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", w("peak"), fat,
                                    "--linker-path=/usr/bin/ld", "-o", w("out"), w("main.o"),
                                    w("m.o"), w("rt.o"), "-lc"], capture_output=True, timeout=20,
                                   env=dict(os.environ, TMPDIR=tmp))
                slowest = max(slowest, time.monotonic() - start)
                kb = open(w("peak")).read().split()
                kb = int(kb[-1]) if kb and kb[-1].isdigit() else 0
                peak = max(peak, kb)
                over_2g += kb > 2 * 1024 * 1024
                # Lines end at "\n" only: a name from a mutated input may
                # hold a byte that str.splitlines() would take for one
                # (0x85, NEL, in latin-1); a terminal does not. GNU time's
                # own lines: a status, or the signal that killed it.
                lines = p.stderr.decode("latin1").rstrip("\n").split("\n")
                killed = [x for x in lines if x.startswith("Command terminated by signal")]
                err = "\n".join(x for x in lines if not x.startswith("Command "))
                rc = -int(killed[0].split()[-1]) if killed else p.returncode
                kind = ("crash%d" % -rc if rc < 0 else "ok" if rc == 0 else
                        "handled-crash" if "LLVM crashed" in err else
                        "llvm-error" if "LLVM error" in err else
                        "linker-error" if "'/usr/bin/ld': failed" in err else "error%d" % rc)
                lines = [x for x in err.split("\n") if x and "cannot find entry symbol" not in x]
                # A host link that failed passes ld's own diagnostics through
                # (a mutated object fatlink saw no device code in goes to ld).
                if rc != 0 and len(lines) != 1 and kind != "linker-error":
                    kind += "-multiline"
                if os.listdir(tmp):
                    kind += "-tmpleft"
                    shutil.rmtree(tmp)
                    os.makedirs(tmp)
            except subprocess.TimeoutExpired:
                kind = "timeout"
            stats[kind] = stats.get(kind, 0) + 1
            if a.keep and kind not in ("ok", "error1", "linker-error") and stats[kind] <= 3:
                os.makedirs(a.keep, exist_ok=True)
                shutil.copy(w("m.bc"), os.path.join(a.keep, "%s_%d.bc" % (kind, i)))
        print("link_mutations: %d runs (seed %d): %s" % (a.runs, a.seed, ", ".join(
            "%s %d" % kv for kv in sorted(stats.items()))))
        print("link_mutations: slowest link %.1f s, largest peak %d MB, %d over 2 GB" %
              (slowest, peak // 1024, over_2g))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
