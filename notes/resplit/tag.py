#!/usr/bin/env python3
"""tag.py PATH N=TAG [N=TAG ...]: give hunk N (1-based) of ann/PATH.ann one tag."""
import re, sys
from pathlib import Path
p = Path(__file__).resolve().parent / "ann" / (sys.argv[1] + ".ann")
want = {int(a.split("=")[0]): a.split("=")[1] for a in sys.argv[2:]}
out, n = [], 0
for l in p.read_text().split("\n"):
    if l.startswith("@@"):
        n += 1
        out.append(l)
        if n in want:
            out.append("=" + want[n])
        continue
    if l.startswith("=") and n in want:
        continue
    out.append(l)
# a hunk whose tag was not set inherits the previous hunk's: restate it
res, cur, pending = [], None, None
for l in out:
    if l.startswith("@@"):
        res.append(l); pending = cur; continue
    if l.startswith("="):
        cur = l; pending = None; res.append(l); continue
    if pending and l[:1] in "+-~":
        res.append(pending); pending = None
    res.append(l)
p.write_text("\n".join(res))
