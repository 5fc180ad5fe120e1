#!/usr/bin/env python3
"""upregions.py PATH DEFAULT [mA-B] [dA-B=TAG] [N-M=TAG] ...

ann/PATH.ann for an upstream file: the -U0 hunks of upstream..final, the
hunks inside upstream lines A-B merged into one (mA-B), upstream lines
A-B removed by TAG (dA-B=TAG; default: the tag of the hunk's first added
line), final lines N-M added by TAG (default DEFAULT). Later ranges win."""
import re, subprocess, sys
from pathlib import Path
here = Path(__file__).resolve().parent
tree = here.parents[1] / "build/linux"
path, default = sys.argv[1], sys.argv[2]

def blob(rev):
    return subprocess.run(["git", "cat-file", "blob", f"{rev}:{path}"],
                          cwd=tree, check=True, capture_output=True,
                          text=True, errors="surrogateescape").stdout.split("\n")

up, fin = blob("upstream"), blob("final")
diff = subprocess.run(["git", "diff", "-U0", "upstream", "final", "--", path],
                      cwd=tree, check=True, capture_output=True,
                      text=True).stdout
hunks = []
for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", diff, re.M):
    a, b, c, d = (int(x) if x is not None else 1 for x in m.groups())
    hunks.append([a, b, c, d])
merges, dels, adds = [], {}, {}
for r in sys.argv[3:]:
    if r.startswith("m"):
        merges.append(tuple(int(x) for x in r[1:].split("-")))
    elif r.startswith("d"):
        rng, tag = r[1:].split("=")
        a, b = (int(x) for x in rng.split("-"))
        for i in range(a, b + 1):
            dels[i] = tag
    else:
        rng, tag = r.split("=")
        a, b = (int(x) for x in rng.split("-"))
        for i in range(a, b + 1):
            adds[i] = tag

def span(h):        # the upstream lines a hunk covers (insertions: none)
    a, b, c, d = h
    return (a, a + b - 1) if b else (a + 0.5, a + 0.5)

for A, B in merges:
    inside = [h for h in hunks if A - 0.5 <= span(h)[0] and span(h)[1] <= B + 0.5]
    if not inside:
        sys.exit(f"no hunk inside {A}-{B}")
    first, last = inside[0], inside[-1]
    # final line of upstream line A: hunks before A shift it
    shift = sum(h[3] - h[1] for h in hunks if span(h)[1] < A - 0.5 and h not in inside)
    c = A + shift
    d = (B - A + 1) + sum(h[3] - h[1] for h in inside)
    hunks = [h for h in hunks if h not in inside] + [[A, B - A + 1, c, d]]
    hunks.sort(key=lambda h: span(h)[0])

out = []
for a, b, c, d in hunks:
    out.append(f"@@ -{a},{b} +{c},{d} @@")
    first_add = adds.get(c, default) if d else default
    cur = None
    for i in range(a, a + b):
        t = dels.get(i, first_add)
        if t != cur:
            out.append("=" + t); cur = t
        out.append("-" + up[i - 1])
    for i in range(c, c + d):
        t = adds.get(i, default)
        if t != cur:
            out.append("=" + t); cur = t
        out.append("+" + fin[i - 1])
(here / "ann" / (path + ".ann")).write_text("\n".join(out) + "\n")
