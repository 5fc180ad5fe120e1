#!/usr/bin/env python3
"""Commit the final tree as refs/heads/final in build/linux: HEAD's tree,
the work tree's changes to upstream files, and every overlay file of the
repository (tracked or new). Plumbing only: nothing is checked out."""
import os, subprocess, sys, tempfile
from pathlib import Path
R = Path(__file__).resolve().parents[2]
T = R / "build/linux"
def git(*a, cwd=T, env=None, inp=None):
    p = subprocess.run(["git", *a], cwd=cwd, env=dict(os.environ, **(env or {})),
                       input=inp, capture_output=True)
    if p.returncode:
        sys.exit(p.stderr.decode())
    return p.stdout.decode()
tmp = tempfile.mkdtemp()
env = {"GIT_INDEX_FILE": tmp + "/idx"}
git("read-tree", "HEAD", env=env)
def put(path, data, mode="100644"):
    oid = git("hash-object", "-w", "--stdin", inp=data).strip()
    git("update-index", "--add", "--cacheinfo", f"{mode},{oid},{path}", env=env)
overlay = set(git("ls-files", cwd=R).split()) | \
    set(git("ls-files", "--others", "--exclude-standard", cwd=R).split())
skip = ("notes/", "results/", "patches/", ".ci/")
overlay = {f for f in overlay if "/" in f and not f.startswith(skip)}
for f in git("diff", "--name-only").split():
    if f not in overlay:
        put(f, (T / f).read_bytes())
for f in sorted(overlay):
    put(f, (R / f).read_bytes(), "100755" if os.access(R / f, os.X_OK) else "100644")
# overlay files HEAD has and the repository no longer has
base = git("rev-parse", "upstream").strip()
for f in git("diff", "--name-only", "--diff-filter=A", base, "HEAD").split():
    if f not in overlay and not (T / f).exists():
        git("update-index", "--force-remove", f, env=env)
t = git("write-tree", env=env).strip()
c = git("commit-tree", t, "-p", "HEAD", inp=b"final state for the re-split\n").strip()
git("update-ref", "refs/heads/final", c)
print("final =", c, len(overlay), "overlay files")
