#!/usr/bin/env python3
"""tilde.py PATH (a block may start with a line '^', then the target
lines, then '$'): read edits from stdin, blocks separated by lines '%%':
the first line of a block is a line of ann/PATH.ann (without its '+'); the
next lines are inserted before it (tag lines and '~' lines). The tag in
force before the insertion is restated after the insertion, and the target
line keeps its own tag."""
import sys
from pathlib import Path
p = Path(__file__).resolve().parent / "ann" / (sys.argv[1] + ".ann")
lines = p.read_text().split("\n")
for block in sys.stdin.read().split("\n%%\n"):
    b = block.strip("\n").split("\n")
    if b[0] == "^":             # a multi-line target, up to a line "$"
        end = b.index("$")
        tl = b[1:end]
        cut = tl.index("|") if "|" in tl else 0
        tl = [t for t in tl if t != "|"]
        targets, ins = ["+" + t for t in tl], b[end + 1:]
    else:
        targets, ins, cut = ["+" + b[0]], b[1:], 0
    target = targets[0]
    # consecutive '+' lines, tag lines between them skipped
    def match(i):
        j = i
        for t in targets:
            while j < len(lines) and lines[j].startswith("="):
                j += 1
            if j >= len(lines) or lines[j] != t:
                return False
            j += 1
        return True
    idx = [i for i, l in enumerate(lines) if l == target and match(i)]
    if len(idx) != 1:
        sys.exit(f"{len(idx)} matches for {target!r}")
    i = idx[0]
    for _ in range(cut):        # move to the insertion point
        i += 1
        while lines[i].startswith("="):
            i += 1
    tag = next(l for l in reversed(lines[:i]) if l.startswith("="))
    # the target keeps `tag` unless the insertion ends with a tag line
    new = ins + ([tag] if not ins[-1].startswith("=") else [])
    lines[i:i] = new
p.write_text("\n".join(lines))
