#!/usr/bin/env python3
"""check_docs.py: the options reference (docs/options.md) and the manual
pages list what the programs have. Every option `fatlink --help` prints must
have its entry in the reference and in fatlink(1) as `man -l` renders it,
and no entry may name an option fatlink does not have; every command of
`fatpack --help` must be in fatpack(1). --drop=OPTION takes that option's
entry out of both first (the planted test: the check must then fail)."""
import argparse
import os
import re
import subprocess
import sys


def key(spelling):
    """--name=<v> -> --name=; -mllvm <v> -> -mllvm; -Wl,<v> -> -Wl,"""
    m = re.match(r"^(-[^=<, ]*(?:=|,)?)", spelling)
    return m.group(1)


def help_keys(fatlink):
    text = subprocess.run([fatlink, "--help"], capture_output=True,
                          text=True, check=True).stdout
    body = text.split("OPTIONS:\n", 1)[1]
    return [key(m.group(1)) for m in
            re.finditer(r"^  (-\S+(?: <value>)?)", body, re.M)]


def doc_keys(lines):
    return [key(m.group(1)) for m in
            (re.match(r"^- `(-[^`]+)`:", l) for l in lines) if m]


def render(page):
    env = dict(os.environ, MANWIDTH="250", LANG="C", LC_ALL="C")
    return subprocess.run(["man", "-E", "ascii", "-l", page],
                          capture_output=True, text=True, check=True,
                          env=env).stdout


def man_keys(text):
    return [key(m.group(1)) for m in
            re.finditer(r"^ {7}(-[^ \n]+(?: <[^>\n]*>)?)", text, re.M)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fatlink", required=True)
    ap.add_argument("--fatpack", required=True)
    ap.add_argument("--options", required=True)
    ap.add_argument("--man-dir", required=True)
    ap.add_argument("--drop")
    a = ap.parse_args()
    want = help_keys(a.fatlink)
    with open(a.options) as f:
        lines = f.read().splitlines()
    man = render(os.path.join(a.man_dir, "fatlink.1")).splitlines()
    if a.drop:
        lines = [l for l in lines if not l.startswith("- `" + a.drop)]
        man = [l for l in man if not l.startswith(" " * 7 + a.drop)]
    bad = []
    for where, have in (("the options reference", doc_keys(lines)),
                        ("fatlink(1)", man_keys("\n".join(man)))):
        for k in want:
            if k not in have:
                bad.append("%s misses %s" % (where, k))
        for k in sorted(set(have) - set(want)):
            bad.append("%s has %s, which fatlink does not" % (where, k))
    usage = subprocess.run([a.fatpack, "--help"], capture_output=True,
                           text=True).stdout
    page = render(os.path.join(a.man_dir, "fatpack.1"))
    for cmd in sorted(set(re.findall(r"fatpack ([a-z-]+)", usage))):
        if "fatpack " + cmd not in page:
            bad.append("fatpack(1) misses fatpack %s" % cmd)
    for b in bad:
        print(b)
    print("%d options, %d problems" % (len(want), len(bad)))
    return 1 if bad else 0


sys.exit(main())
