#!/usr/bin/env python3
"""regions.py PATH DEFAULT [N-M=TAG ...]: ann/PATH.ann for a new file from
line ranges of the final file (build/linux 'final' branch); lines outside
every range get DEFAULT. Later ranges win."""
import subprocess, sys
from pathlib import Path
here = Path(__file__).resolve().parent
path, default = sys.argv[1], sys.argv[2]
text = subprocess.run(["git", "cat-file", "blob", f"final:{path}"],
                      cwd=here.parents[1] / "build/linux", check=True,
                      capture_output=True, text=True).stdout
lines = text.split("\n")[:-1]
tags = [default] * len(lines)
for r in sys.argv[3:]:
    rng, tag = r.split("=")
    a, b = (int(x) for x in rng.split("-"))
    for i in range(a - 1, b):
        tags[i] = tag
out, cur = [f"@@ -0,0 +1,{len(lines)} @@"], None
for t, l in zip(tags, lines):
    if t != cur:
        out.append("=" + t)
        cur = t
    out.append("+" + l)
(here / "ann" / (path + ".ann")).write_text("\n".join(out) + "\n")
