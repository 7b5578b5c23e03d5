#!/usr/bin/env python3
"""md2man.py NAME SECTION OUT IN.md... - a manual page from the docs'
Markdown: '# Title' a section, '## Title' a subsection, '- `item`: text' a
tagged paragraph, ``` blocks as they are, `code` bold, *word* italic; a
line that is only a link to another .md file has that file's text there."""
import os
import re
import sys


def read(path):
    lines = []
    with open(path) as f:
        for raw in f.read().splitlines():
            m = re.match(r"^\[[^\]]*\]\(([^)]+\.md)\)$", raw.strip())
            if m:
                lines += read(os.path.join(os.path.dirname(path), m.group(1)))
            else:
                lines.append(raw)
    return lines


def inline(text):
    text = text.replace("\\", "\\e")
    text = re.sub(r"`([^`]*)`", lambda m: "\\fB" + m.group(1) + "\\fR", text)
    return re.sub(r"\*([^*]+)\*", r"\\fI\1\\fR", text)


def line(text):
    text = inline(text)
    return "\\&" + text if text[:1] in (".", "'") else text


def convert(lines, out):
    para, item, code = [], None, False

    def flush():
        nonlocal para, item
        if item is not None:
            out.append(".TP")
            out.append(line(item[0]))
            out.append(line(" ".join(item[1])))
        elif para:
            out.append(".PP")
            out.append(line(" ".join(para)))
        para, item = [], None

    for raw in lines:
        if raw.startswith("```"):
            flush()
            out.append(".PP" if code else ".nf")
            if code:
                out[-1] = ".fi"
            code = not code
            continue
        if code:
            out.append(line(raw.replace("`", "")))
            continue
        s = raw.rstrip()
        m = re.match(r"^(#+) (.*)$", s)
        if m:
            flush()
            out.append((".SH " if len(m.group(1)) == 1 else ".SS ") +
                       (m.group(2).upper() if len(m.group(1)) == 1
                        else m.group(2)))
            continue
        m = re.match(r"^- `(.+?)`: (.*)$", s)
        if m:
            flush()
            item = ("`" + m.group(1) + "`", [m.group(2)])
            continue
        if not s:
            flush()
        elif item is not None and raw.startswith("  "):
            item[1].append(s.strip())
        else:
            if item is not None:
                flush()
            para.append(s)
    flush()


def main():
    name, section, out_path = sys.argv[1:4]
    out = ['.TH %s %s "" "fatlink" "User Commands"' % (name.upper(), section)]
    for path in sys.argv[4:]:
        convert(read(path), out)
    with open(out_path, "w") as f:
        f.write("\n".join(out) + "\n")


main()
