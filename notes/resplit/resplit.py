#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Rebuild the series from its final tree, one patch per logical change.

Issue 17's one-time tool. Every line the series adds or removes is
annotated with the patch that adds or removes it, in ann/<path>.ann, one
file per file the series touches:

  @@ -a,b +c,d @@    a hunk of 'git diff -U0 upstream final' (the old
                     range locates it in the upstream file)
  =ID                the patch of the lines below (sticky)
  =ID..END           ... and, for '~' lines, the patch that drops them
  +text              a line of the final file, there from patch ID on
  -text              an upstream line, there until patch ID
  ~text              an intermediate line: from ID until END, never final
  *                  (a new file) every line of the final file

  ./resplit.py init FINAL     write ann/ from upstream..FINAL (default tags
                              from 'git blame' through OLD_TO_NEW)
  ./resplit.py build FINAL    commit the series on refs/heads/resplit in
                              build/linux (plumbing only; the work tree is
                              not touched) and check its last tree is
                              FINAL's
  ./resplit.py sizes          lines each patch adds and removes
  ./resplit.py show FINAL PATH ID   PATH as patch ID leaves it
"""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANN = HERE / "ann"
TREE = HERE.parents[1] / "build" / "linux"
sys.path.insert(0, str(HERE))
import spec  # noqa: E402

INF = 10 ** 6


def git(*args, env=None, inp=None, check=True):
    e = dict(os.environ, **(env or {}))
    p = subprocess.run(["git", *args], cwd=TREE, env=e, input=inp,
                       capture_output=True)
    if check and p.returncode:
        sys.exit(f"git {' '.join(args)}: {p.stderr.decode()}")
    return p.stdout


def blob(rev, path):
    p = subprocess.run(["git", "cat-file", "blob", f"{rev}:{path}"], cwd=TREE,
                       capture_output=True)
    return p.stdout.decode() if p.returncode == 0 else None


def order():
    ids = [p[0] for p in spec.PATCHES]
    return {pid: i for i, pid in enumerate(ids, 1)}


def changed_files(final):
    out = git("diff", "--name-only", "--no-renames", "upstream", final)
    return out.decode().split()


# --- init -----------------------------------------------------------------

def blame_commits(final, path):
    """Final line number -> commit subject that added it (upstream files)."""
    out = git("blame", "--line-porcelain", "upstream.." + final, "--", path)
    subj, res, cur, n = {}, {}, None, 0
    for line in out.decode(errors="replace").splitlines():
        m = re.match(r"^([0-9a-f]{40}) \d+ (\d+)", line)
        if m:
            cur, n = m.group(1), int(m.group(2))
        elif line.startswith("summary "):
            subj[cur] = line[8:]
        elif line.startswith("\t"):
            res[n] = subj.get(cur, "")
    return res


def init(final):
    ANN.mkdir(exist_ok=True)
    for path in changed_files(final):
        dst = ANN / (path + ".ann")
        if dst.exists():
            continue
        diff = git("diff", "-U0", "--no-renames", "upstream", final, "--",
                   path).decode(errors="surrogateescape")
        blame = blame_commits(final, path) if blob("upstream", path) else {}
        lines, tag, newno = [], None, 0
        for l in diff.splitlines():
            if l.startswith("@@"):
                lines.append(l)
                newno = int(re.match(r"@@ -\S+ \+(\d+)", l).group(1))
                continue
            if l[:1] not in "+-" or l.startswith(("+++", "---")):
                continue
            if l.startswith("+"):
                t = spec.OLD_TO_NEW.get(blame.get(newno, ""),
                                        spec.DEFAULT.get(path, "?"))
                newno += 1
            else:
                t = tag or spec.DEFAULT.get(path, "?")
            if t != tag:
                lines.append("=" + t)
                tag = t
            lines.append(l)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text("\n".join(lines) + "\n")
        print(f"ann: {path}")


# --- build ----------------------------------------------------------------

class Hunk:
    def __init__(self, old_start, old_len):
        self.old_start, self.old_len = old_start, old_len
        self.items = []         # (kind, text, born, dies)


def parse_ann(path, pos, final_text):
    hunks, born, dies = [], None, None
    for n, l in enumerate((ANN / (path + ".ann")).read_text().split("\n"), 1):
        where = f"{path}.ann:{n}"
        if l.startswith("@@"):
            m = re.match(r"@@ -(\d+)(?:,(\d+))? \+", l)
            start, ln = int(m.group(1)), int(m.group(2) or 1)
            hunks.append(Hunk(start, ln))
        elif l == "*":
            if born is None or hunks:
                sys.exit(f"{where}: '*' needs =ID and no hunk before it")
            h = Hunk(0, 0)
            h.items = [("+", t, born, INF)
                       for t in final_text.split("\n")[:-1]]
            hunks.append(h)
        elif l.startswith("="):
            a, _, b = l[1:].strip().partition("..")
            if a not in pos or (b and b not in pos):
                sys.exit(f"{where}: unknown patch in '{l}'")
            born, dies = pos[a], pos[b] if b else None
        elif l and l[0] in "+-~":
            if born is None:
                sys.exit(f"{where}: line before any =ID")
            kind, text = l[0], l[1:]
            if kind == "+":
                hunks[-1].items.append((kind, text, born, INF))
            elif kind == "-":
                hunks[-1].items.append((kind, text, 0, born))
            else:
                if dies is None or dies <= born:
                    sys.exit(f"{where}: '~' needs =ID..END with END later")
                hunks[-1].items.append((kind, text, born, dies))
        elif l.strip():
            sys.exit(f"{where}: cannot parse '{l}'")
    return hunks


def version(upstream_lines, hunks, k):
    """The file's lines after patch k (0: upstream)."""
    out, at = [], 1
    for h in hunks:
        # -U0: a pure insertion's old start is the line *before* it.
        first = h.old_start if h.old_len else h.old_start + 1
        out += upstream_lines[at - 1:first - 1]
        at = first + h.old_len
        for kind, text, born, dies in h.items:
            if born <= k < dies:
                out.append(text)
    out += upstream_lines[at - 1:]
    return out


def file_versions(path, final, pos):
    up = blob("upstream", path)
    fin = blob(final, path)
    up_lines = up.split("\n") if up is not None else []
    hunks = parse_ann(path, pos, fin or "")
    # The '-' lines must be upstream's, the final version FINAL's.
    removed = [t for h in hunks for k, t, _, _ in h.items if k == "-"]
    expect = []
    for h in hunks:
        if h.old_len:
            expect += up_lines[h.old_start - 1:h.old_start - 1 + h.old_len]
    if removed != expect:
        sys.exit(f"{path}: the '-' lines are not upstream's")
    last = version(up_lines, hunks, len(spec.PATCHES)) + \
        ([] if up is not None else [""])
    if "\n".join(last) != (fin or ""):
        sys.exit(f"{path}: the annotation does not rebuild the final file")
    n = len(spec.PATCHES)
    res = []
    for k in range(n + 1):
        if up is None:
            items = [(b, d) for h in hunks for _, _, b, d in h.items]
            exists = any(b <= k < d for b, d in items)
            res.append("\n".join(version([], hunks, k) + [""])
                       if exists else None)
        else:
            res.append("\n".join(version(up_lines, hunks, k)))
    return res


def build(final):
    pos = order()
    files = changed_files(final)
    missing = [f for f in files if not (ANN / (f + ".ann")).exists()]
    if missing:
        sys.exit("no annotation: " + ", ".join(missing))
    vers = {f: file_versions(f, final, pos) for f in files}
    modes = {}
    for f in files:
        ls = git("ls-tree", final, "--", f).decode().split()
        modes[f] = ls[0] if ls else "100644"
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"),
               "GIT_AUTHOR_NAME": "MIGRC developers",
               "GIT_AUTHOR_EMAIL": "migrc@localhost",
               "GIT_COMMITTER_NAME": "MIGRC developers",
               "GIT_COMMITTER_EMAIL": "migrc@localhost",
               # One date for the whole series: a rebuild changes no patch
               # whose content did not change.
               "GIT_AUTHOR_DATE": spec.DATE,
               "GIT_COMMITTER_DATE": spec.DATE}
        git("read-tree", "upstream", env=env)
        head = git("rev-parse", "upstream^{commit}").decode().strip()
        for k, (pid, subject, body) in enumerate(spec.PATCHES, 1):
            touched = 0
            for f in files:
                before, now = vers[f][k - 1], vers[f][k]
                if before == now:
                    continue
                touched += 1
                if now is None:
                    git("update-index", "--force-remove", "--", f, env=env)
                    continue
                oid = git("hash-object", "-w", "--stdin",
                          inp=now.encode("utf-8", "surrogateescape"),
                          env=env).decode().strip()
                git("update-index", "--add", "--cacheinfo",
                    f"{modes[f]},{oid},{f}", env=env)
            if not touched:
                sys.exit(f"patch {k} ({pid}) changes nothing")
            t = git("write-tree", env=env).decode().strip()
            msg = subject + "\n\n" + body.strip() + \
                "\n\nSigned-off-by: MIGRC developers <migrc@localhost>\n"
            head = git("commit-tree", t, "-p", head, inp=msg.encode(),
                       env=env).decode().strip()
        git("update-ref", "refs/heads/resplit", head)
    diff = git("diff", "--stat", final, "resplit").decode()
    if diff:
        sys.exit("the last tree differs from FINAL:\n" + diff)
    print(f"refs/heads/resplit: {len(spec.PATCHES)} patches, last tree = "
          f"{final}")


def lint(final):
    """Blank-line artifacts of intermediate versions: two blank lines, a
    blank line after '{' or before '}', at the start or end of a file."""
    pos = order()
    ids = [p[0] for p in spec.PATCHES]
    found = 0
    for f in changed_files(final):
        if not f.endswith((".c", ".h", ".rs", "Kconfig")):
            continue
        vers = file_versions(f, final, pos)

        def triples(text):
            ls = (text or "").split("\n")
            return {(ls[i - 1] if i else None, ls[i + 1] if i + 1 < len(ls)
                     else None) for i, l in enumerate(ls) if not l.strip()}
        known = triples(blob("upstream", f)) | triples(vers[-1])
        for k in range(1, len(ids) + 1):
            if vers[k] is None or vers[k] == vers[k - 1]:
                continue
            ls = vers[k].split("\n")[:-1]
            for i, l in enumerate(ls):
                if l.strip():
                    continue
                prev = ls[i - 1].rstrip() if i else None
                nxt = ls[i + 1].strip() if i + 1 < len(ls) else None
                why = ("two blank lines" if nxt == "" else
                       "at the start" if prev is None else
                       "at the end" if nxt is None else
                       "after {" if prev.endswith("{") else
                       "before }" if nxt in ("}", "};") else None)
                ctx = (ls[i - 1] if i else None,
                       ls[i + 1] if i + 1 < len(ls) else None)
                if why and ctx not in known:
                    found += 1
                    print(f"patch {k} ({ids[k - 1]}): {f}:{i + 1}: blank "
                          f"line {why}")
    print(f"{found} blank-line artifacts")


def sizes():
    revs = git("rev-list", "--reverse", "upstream..resplit").decode().split()
    tot = 0
    for n, r in enumerate(revs, 1):
        st = git("show", "--numstat", "--format=%s", r).decode().splitlines()
        subj, add, rem = st[0], 0, 0
        for l in st[1:]:
            p = l.split("\t")
            if len(p) == 3 and p[0] != "-":
                add += int(p[0])
                rem += int(p[1])
        tot += add + rem
        flag = "  <-- over 600" if add + rem > 600 else ""
        print(f"{n:3} {add:5} +{rem:4} -  {subj}{flag}")
    print(f"total {tot} lines changed")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "init":
        init(sys.argv[2])
    elif cmd == "build":
        build(sys.argv[2])
    elif cmd == "sizes":
        sizes()
    elif cmd == "lint":
        lint(sys.argv[2])
    elif cmd == "show":         # show FINAL PATH ID: the file after patch ID
        v = file_versions(sys.argv[3], sys.argv[2], order())
        sys.stdout.write(v[order()[sys.argv[4]]] or "")
    else:
        sys.exit(__doc__)
