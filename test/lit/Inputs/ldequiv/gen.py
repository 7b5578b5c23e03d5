"""gen.py DIR: writes the sources of the archive-semantics scenarios. Every
function lives in its own file and runs an OpenMP target region, so each
object carries device code; calls between them make the host references
that decide which archive members a link pulls in."""
import os
import sys

# name -> functions it calls (host references)
FUNCS = {
    "a1": ["b1"], "a2": [], "a3": [],  # liba
    "b1": ["a2"], "b2": [],            # libb: b1 needs a2 (needs a group)
    "c1": [],                          # libc_: pulled only by -u
    "w1": [],                          # only weakly referenced by main
    "s1": [],                          # defined by a shared library too
}

HOST_ONLY = {"b2"}  # no device code at all

def source(name, calls):
    decls = "".join("int f_%s(void);\n" % c for c in calls)
    body = "".join(" r += f_%s();" % c for c in calls)
    target = "" if name in HOST_ONLY else "#pragma omp target map(tofrom: r)\n"
    return ("%sint f_%s(void) {\n  int r = 0;\n%s"
            "  r += 1;\n %s\n  return r;\n}\n" % (decls, name, target, body))

def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, calls in FUNCS.items():
        with open(os.path.join(out, name + ".c"), "w") as f:
            f.write(source(name, calls))
    with open(os.path.join(out, "main.c"), "w") as f:
        f.write("int f_a1(void); int f_s1(void);\n"
                "__attribute__((weak)) int f_w1(void);\n"
                "int main(void) { return f_a1() + f_s1() + (f_w1 ? f_w1() : 0); }\n")

main()
