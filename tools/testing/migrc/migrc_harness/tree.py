# SPDX-License-Identifier: GPL-2.0
"""The materialized kernel tree: pristine upstream + our patch series + overlay.

Layout of this repository:

* overlay: every file under one of OVERLAY_ROOTS (but the harness,
  NOT_OVERLAY) is a file MIGRC *adds* to the kernel, kept at its kernel
  path, in its final version.  An overlay file must not exist upstream;
  upstream files are changed only through patches.
* patches/series: the ordered list of patches, one per line, optionally
  followed by the overlay paths (files or directories) that the same
  logical commit adds.  Overlay files claimed by no line are added in one
  commit before the first patch.  A patch may also change overlay files
  an earlier line added: a file enters the series in its final version
  minus the changes of the later patches (reverse-applied), so each commit
  holds the version of its time.

The tree under build/linux is a git repository whose history is
'upstream' followed by one commit per series line, so 'git log upstream..'
reads like the series an mm maintainer would review.  Commits are built in
a temporary index; the work tree is moved to the result in one step, so a
patch that fails to apply leaves the tree as it was, and files whose
content did not change keep their timestamps (fast incremental builds).

'migrc sync' goes the other way: it turns the commits in build/linux back
into overlay files, patches and the series file.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from . import hostsetup
from .common import BUILD, REPO, HarnessError, StrPath, log, out, run

OVERLAY_ROOTS = ("Documentation", "arch", "include", "kernel", "lib", "mm",
                 "rust", "samples", "scripts", "tools")
# The harness: a tool of this repository, not part of the kernel change;
# it runs from here and never enters the tree.
NOT_OVERLAY = ("tools/testing/migrc/",)
PATCHES = REPO / "patches"
SERIES = PATCHES / "series"
TREE = BUILD / "linux"
VANILLA = BUILD / "linux-vanilla"
UNCLAIMED_SUBJECT = "migrc: add overlay files not claimed by a patch"
BRANCH = "migrc"
FINGERPRINT = "migrc-fingerprint"

IDENT = {"GIT_AUTHOR_NAME": "MIGRC harness",
         "GIT_AUTHOR_EMAIL": "migrc@localhost",
         "GIT_COMMITTER_NAME": "MIGRC harness",
         "GIT_COMMITTER_EMAIL": "migrc@localhost"}


def _git(*args: str, cwd: StrPath | None = None,
         env: dict[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    """git in cwd (default: the tree), with the harness's identity."""
    where = TREE if cwd is None else cwd
    e = dict(os.environ)
    e.update(IDENT)
    if env:
        e.update(env)
    return subprocess.run(["git", *args], cwd=where, env=e, text=True,
                          capture_output=True, check=False) \
        if not check else _git_checked(args, where, e)


def _git_checked(args: Sequence[str], cwd: StrPath,
                 env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(["git", *args], cwd=cwd, env=env, text=True,
                       capture_output=True)
    if p.returncode != 0:
        raise HarnessError(f"git {' '.join(args)} failed:\n{p.stderr}")
    return p


def overlay_files() -> list[str]:
    """Repository-relative paths of every overlay file, sorted."""
    files = out(["git", "ls-files", "--cached", "--others",
                 "--exclude-standard", "--", *OVERLAY_ROOTS], cwd=REPO)
    return sorted(f for f in files.splitlines()
                  if f and (REPO / f).is_file()
                  and not f.startswith(NOT_OVERLAY))


def read_series() -> list[tuple[str, list[str]]]:
    """[(patch name, [overlay path prefixes])] in series order."""
    entries: list[tuple[str, list[str]]] = []
    if not SERIES.exists():
        return entries
    for n, line in enumerate(SERIES.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, *claims = line.split()
        if not (PATCHES / name).is_file():
            raise HarnessError(f"{SERIES}:{n}: no such patch {name}")
        entries.append((name, [c.rstrip("/") for c in claims]))
    return entries


def _claims(entries: Iterable[tuple[str, Iterable[str]]],
            files: Sequence[str]) -> dict[str, str]:
    """Map each series entry to the overlay files it claims."""
    owner: dict[str, str] = {}
    for name, claims in entries:
        for c in claims:
            hit = [f for f in files if f == c or f.startswith(c + "/")]
            if not hit:
                raise HarnessError(f"series: {name} claims {c}, "
                                   f"which matches no overlay file")
            for f in hit:
                if f in owner and owner[f] != name:
                    raise HarnessError(f"series: {f} claimed by both "
                                       f"{owner[f]} and {name}")
                owner[f] = name
    return owner


def fingerprint(base: str) -> str:
    """Hash of everything that determines the materialized tree."""
    h = hashlib.sha256()
    h.update(base.encode())
    h.update(SERIES.read_bytes() if SERIES.exists() else b"")
    for name, _ in read_series():
        h.update(name.encode())
        h.update((PATCHES / name).read_bytes())
    for f in overlay_files():
        p = REPO / f
        h.update(f.encode())
        h.update(b"x" if os.access(p, os.X_OK) else b"-")
        h.update(p.read_bytes())
    return h.hexdigest()


def _upstream_commit() -> str:
    return out(["git", "-C", str(hostsetup.UPSTREAM), "rev-parse",
                "refs/tags/upstream^{commit}"])


def _ensure_clone() -> None:
    """Clone the cache's upstream repository into build/linux if needed.

    The clone borrows the cache's objects (--shared), so it is redone when
    the cache's upstream commit changed (new Debian version) or is gone.
    """
    if (TREE / ".git").exists():
        have = _git("rev-parse", "-q", "--verify",
                    "refs/tags/upstream^{commit}", check=False).stdout.strip()
        ok = _git("cat-file", "-e", "HEAD^{tree}", check=False).returncode
        if have == _upstream_commit() and ok == 0:
            return
        log(f"{TREE} is based on another upstream commit: cloning it again")
        for d in (VANILLA, TREE):
            if d.exists():
                shutil.rmtree(d)
    log(f"cloning the upstream repository into {TREE}")
    TREE.parent.mkdir(parents=True, exist_ok=True)
    tmp = TREE.with_name(TREE.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    run(["git", "clone", "-q", "--shared", "--no-checkout",
         str(hostsetup.UPSTREAM), str(tmp)])
    _git("checkout", "-q", "-B", BRANCH, "refs/tags/upstream", cwd=tmp)
    tmp.rename(TREE)


def _mailinfo(patch: Path) -> tuple[dict[str, str], str, bool]:
    """Split a format-patch file into (author env, message, has_diff)."""
    with tempfile.TemporaryDirectory() as tmp:
        msg, diff = Path(tmp) / "msg", Path(tmp) / "diff"
        with open(patch) as mail:
            p = subprocess.run(["git", "mailinfo", "-b", str(msg),
                                str(diff)], stdin=mail, capture_output=True,
                               text=True)
        if p.returncode != 0:
            raise HarnessError(f"{patch.name}: not a git format-patch file")
        info = dict(l.split(": ", 1) for l in p.stdout.splitlines()
                    if ": " in l)
        body = msg.read_text()
        has_diff = "diff --git " in diff.read_text()
    env = {}
    if info.get("Author"):
        env["GIT_AUTHOR_NAME"] = info["Author"]
    if info.get("Email"):
        env["GIT_AUTHOR_EMAIL"] = info["Email"]
    if info.get("Date"):
        env["GIT_AUTHOR_DATE"] = info["Date"]
    subject = info.get("Subject", patch.stem)
    return env, subject + "\n\n" + body, has_diff


def _show_failing_hunk(patch: Path, stderr: str) -> str:
    lines = [l for l in stderr.splitlines() if l.strip()]
    return (f"patch {patch.name} does not apply to the tree:\n"
            + "\n".join("    " + l for l in lines[-60:])
            + f"\nFix {PATCHES / patch.name} (or edit build/linux and run "
            f"'make sync'); the tree was left unchanged.")


def _build_commits(base: str) -> str:
    """Create the series commits on top of base; return the final commit.

    Everything happens in a private index: the work tree is not touched.
    """
    files = overlay_files()
    upstream_files = set()
    if files:
        p = _git("ls-tree", "-r", "--name-only", base, "--", *files)
        upstream_files = set(p.stdout.split())
    if upstream_files:
        raise HarnessError(
            "overlay files that exist upstream (change them with a patch, "
            "never by copying):\n  " + "\n  ".join(sorted(upstream_files)))
    entries = read_series()
    owner = _claims(entries, files)
    with tempfile.TemporaryDirectory() as tmp:
        states = _overlay_states(entries, owner, files, Path(tmp))
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git("read-tree", base, env=env)
        head = base

        def set_overlay(now: OverlayState, before: OverlayState) -> None:
            for f, (mode, oid) in now.items():
                if before.get(f) != (mode, oid):
                    _git("update-index", "--add", "--cacheinfo",
                         f"{mode},{oid},{f}", env=env)

        def commit(message: str,
                   extra_env: dict[str, str] | None = None) -> str:
            tree = _git("write-tree", env=env).stdout.strip()
            e = dict(env)
            e.update(extra_env or {})
            return _git("commit-tree", tree, "-p", head, "-m", message,
                        env=e).stdout.strip()

        if states[0]:
            set_overlay(states[0], {})
            head = commit(UNCLAIMED_SUBJECT + "\n\nFiles MIGRC adds to the "
                          "kernel tree that no patch in the series claims.")
        upstream_only = [f"--exclude={f}" for f in files]
        for j, (name, _) in enumerate(entries, 1):
            patch = PATCHES / name
            author, message, has_diff = _mailinfo(patch)
            if has_diff:
                p = _git("apply", "--cached", "-v", "--whitespace=nowarn",
                         *upstream_only, str(patch), env=env, check=False)
                if p.returncode != 0:
                    raise HarnessError(_show_failing_hunk(patch, p.stderr))
            set_overlay(states[j], states[j - 1])
            head = commit(message, author)
    return head


# An overlay at one point of the series: {path: (mode, blob id)}.
OverlayState = dict[str, tuple[str, str]]


def _overlay_states(entries: list[tuple[str, list[str]]],
                    owner: dict[str, str], files: list[str],
                    tmp: Path) -> list[OverlayState]:
    """The overlay after each series line (index 0: after the unclaimed
    files' commit): the final files, with the later patches' changes to
    them reverse-applied and the files a line adds taken out before it."""
    env = {"GIT_INDEX_FILE": str(tmp / "overlay-index")}
    _git("read-tree", "--empty", env=env)
    for f in files:
        src = REPO / f
        oid = _git("hash-object", "-w", "--", str(src)).stdout.strip()
        mode = "100755" if os.access(src, os.X_OK) else "100644"
        _git("update-index", "--add", "--cacheinfo", f"{mode},{oid},{f}",
             env=env)

    def state() -> OverlayState:
        listing = _git("ls-files", "-s", env=env).stdout.splitlines()
        return {path: (mode, oid) for mode, oid, _, path in
                (l.replace("\t", " ", 1).split(" ", 3) for l in listing)}

    overlay_only = [f"--include={f}" for f in files]
    states = [state()]
    for name, _ in reversed(entries):
        patch = PATCHES / name
        if _mailinfo(patch)[2]:
            p = _git("apply", "--cached", "-R", "--whitespace=nowarn",
                     *overlay_only, str(patch), env=env, check=False)
            if p.returncode != 0:
                raise HarnessError(
                    f"{name}: its changes to overlay files do not "
                    f"reverse-apply to their later versions:\n{p.stderr}")
        added = [f for f in files if owner.get(f) == name]
        if added:
            _git("update-index", "--force-remove", "--", *added, env=env)
        states.append(state())
    states.reverse()
    unclaimed = {f for f in files if f not in owner}
    if set(states[0]) != unclaimed:
        raise HarnessError("series: overlay files changed by a patch before "
                           "the line that adds them: "
                           + ", ".join(sorted(set(states[0]) - unclaimed)))
    return states


def materialize(force: bool = False, allow_local: bool = False) -> Path:
    """Bring build/linux to upstream + series + overlay; return its path.

    With allow_local (builds), a tree holding work that is not in the
    repository is used as it is, with a warning, so that the edit-build
    loop inside build/linux needs no sync.
    """
    hostsetup.prepare_upstream()
    _ensure_clone()
    base = _git("rev-parse", "refs/tags/upstream^{commit}").stdout.strip()
    fp = fingerprint(base)
    stamp = TREE / ".git" / FINGERPRINT
    head = _git("rev-parse", "HEAD").stdout.strip()
    recorded = stamp.read_text().split() if stamp.exists() else []
    dirty = _git("status", "--porcelain", "--untracked-files=no").stdout
    if recorded and recorded[1] == head and not dirty and recorded[0] == fp:
        return TREE
    local_work = dirty or (recorded and recorded[1] != head)
    if local_work and allow_local and not force:
        log(f"note: {TREE} has changes that are not in the repository; "
            f"building it as it is ('make sync' keeps them)")
        return TREE
    if local_work and not force:
        raise HarnessError(
            f"{TREE} has changes that are not in the repository "
            f"(uncommitted edits or new commits).\n"
            f"Run 'make sync' to turn them into overlay files and patches, "
            f"or 'make tree FORCE=1' to discard them.")
    log("materializing the kernel tree (upstream + patches + overlay)")
    final = _build_commits(base)
    _git("reset", "-q", "--hard", final)
    _git("checkout", "-q", "-B", BRANCH)
    stamp.write_text(f"{fp} {final} {_patches_fingerprint()}\n")
    n = _git("rev-list", "--count", f"{base}..{final}").stdout.strip()
    log(f"tree ready: {TREE} ({n} commits on top of upstream)")
    return TREE


def vanilla_tree() -> Path:
    """A worktree of the pristine upstream source, for vanilla builds."""
    materialize(allow_local=True)
    if not (VANILLA / ".git").exists():
        log(f"adding the vanilla worktree {VANILLA}")
        if VANILLA.exists():
            shutil.rmtree(VANILLA)
        _git("worktree", "prune")
        _git("worktree", "add", "-q", "--detach", str(VANILLA),
             "refs/tags/upstream")
    elif _git("rev-parse", "HEAD", cwd=VANILLA).stdout != \
            _git("rev-parse", "refs/tags/upstream^{commit}").stdout:
        _git("checkout", "-q", "--detach", "refs/tags/upstream", cwd=VANILLA)
    return VANILLA


def _compress_claims(added: Iterable[str], new_files: Sequence[str],
                     upstream_dirs: set[str]) -> list[str]:
    """Claim a whole directory when the commit adds every file under it and
    the directory does not exist upstream (rust/kernel/mm/migrc, not mm)."""
    added = set(added)
    claims = set(added)
    for f in sorted(added):
        parts = f.split("/")
        for i in range(len(parts) - 1, 0, -1):
            d = "/".join(parts[:i])
            under = [n for n in new_files if n.startswith(d + "/")]
            if d in upstream_dirs or not set(under) <= added:
                break
            claims -= set(under)
            claims = {c for c in claims if not c.startswith(d + "/")}
            claims.add(d)
    return sorted(claims)


def _slug(subject: str) -> str:
    s = re.sub(r"^\[[^]]*\]\s*", "", subject)
    s = re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-")
    return s[:52].rstrip("-")


def _blob(rev: str, path: str) -> bytes | None:
    p = subprocess.run(["git", "cat-file", "blob", f"{rev}:{path}"], cwd=TREE,
                       capture_output=True)
    return p.stdout if p.returncode == 0 else None


def _sync_overlay(head_new_files: set[str]) -> None:
    """Three-way update of the overlay: materialized -> (repo, tree HEAD).

    A file changed only in the tree is taken from the tree, a file changed
    only in the repository is kept, a file changed differently on both
    sides stops the sync before anything is written.
    """
    stamp = TREE / ".git" / FINGERPRINT
    recorded = stamp.read_text().split() if stamp.exists() else []
    base = recorded[1] if len(recorded) > 1 else None
    if len(recorded) > 2 and recorded[2] != _patches_fingerprint():
        raise HarnessError("patches/ changed in the repository since the last "
                           "'make tree': run 'make tree' first, or undo it")
    writes, deletes, both = {}, [], []
    for f in sorted(set(overlay_files()) | set(head_new_files)):
        repo = (REPO / f).read_bytes() if (REPO / f).exists() else None
        head = _blob("HEAD", f) if f in head_new_files else None
        was = _blob(base, f) if base else None
        if repo == head or head == was:
            continue                    # same, or only the repo changed
        if repo == was:
            if head is None:
                deletes.append(f)       # deleted in the tree
            else:
                writes[f] = head        # changed only in the tree
        else:
            both.append(f)
    if both:
        raise HarnessError(
            "changed both in the repository and in build/linux since the "
            "last 'make tree':\n  " + "\n  ".join(both)
            + "\nKeep one side (commit it in build/linux or undo it in the "
            "repository), then sync.")
    for f in deletes:
        log(f"sync: removing overlay file {f}")
        (REPO / f).unlink()
    for f, data in writes.items():
        log(f"sync: overlay {f}")
        dst = REPO / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        mode = _git("ls-tree", "HEAD", "--", f).stdout.split()[0]
        dst.chmod(0o755 if mode == "100755" else 0o644)


def _patches_fingerprint() -> str:
    h = hashlib.sha256()
    # What 'make tree' applies; patches/cover-letter.in is not part of it.
    for p in sorted(PATCHES.glob("*.patch")) + [SERIES]:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def sync() -> None:
    """Turn the commits in build/linux back into overlay, patches and series.

    Each commit after upstream becomes one series line: its changes to
    upstream files, and to overlay files an earlier commit added, become
    the patch; the new files it adds become the overlay files that line
    claims.  Overlay files (final versions) are updated three-way (see
    _sync_overlay), so edits made in the repository meanwhile survive.
    """
    if not (TREE / ".git").exists():
        raise HarnessError("no tree to sync from: run 'make tree' first")
    if _git("status", "--porcelain", "--untracked-files=no").stdout:
        raise HarnessError(f"{TREE} has uncommitted changes: commit them "
                           f"there first ('git -C {TREE} commit -a')")
    base = _git("rev-parse", "refs/tags/upstream^{commit}").stdout.strip()
    commits = _git("rev-list", "--reverse", "--first-parent",
                   f"{base}..HEAD").stdout.split()
    upstream_all = set(_git("ls-tree", "-r", "--name-only",
                            base).stdout.splitlines())
    head_files = set(_git("ls-tree", "-r", "--name-only",
                          "HEAD").stdout.splitlines())
    new_files = sorted(head_files - upstream_all)
    bad = [f for f in new_files if f.split("/", 1)[0] not in OVERLAY_ROOTS]
    if bad:
        raise HarnessError("new files outside the overlay roots "
                           f"{OVERLAY_ROOTS}: {bad}")
    _sync_overlay(set(new_files))
    # Patches and series.
    upstream_dirs = {f.rsplit("/", 1)[0] for f in upstream_all if "/" in f}
    lines: list[str] = []
    written: set[str] = set()
    for c in commits:
        subject = _git("log", "-1", "--format=%s", c).stdout.strip()
        changed = _git("diff-tree", "--no-commit-id", "-r", "--name-only",
                       "--root", c).stdout.split()
        up = [f for f in changed if f in upstream_all]
        # The commit that adds an overlay file claims it; a later commit's
        # changes to it go into that commit's patch.
        added_here = set(_git("diff-tree", "--no-commit-id", "-r",
                              "--name-only", "--diff-filter=A", "--root",
                              c).stdout.split())
        added = [f for f in changed if f in added_here and f in head_files]
        evolved = [f for f in changed if f not in upstream_all
                   and f not in added_here and f in head_files]
        gone = [f for f in changed
                if f not in upstream_all and f not in head_files]
        if gone:
            raise HarnessError(
                f"commit {c[:12]} ({subject}) touches overlay files that a "
                f"later commit deletes ({', '.join(gone)}): the overlay "
                "keeps final versions only; fold the deletion into it")
        if subject == UNCLAIMED_SUBJECT and not up and not evolved:
            continue
        if not up and not added and not evolved:
            raise HarnessError(f"commit {c[:12]} ({subject}) changes "
                               "nothing: drop it and sync again")
        name = f"{len(lines) + 1:04d}-{_slug(subject)}.patch"
        # Zero commit ids (format-patch --zero-commit): patch files change
        # only when their content does, not on every rebase.
        header = re.sub(r"^From [0-9a-f]{40} ", "From " + "0" * 40 + " ",
                        _git("log", "-1", "--format=email", c).stdout)
        diff = ""
        if up or evolved:
            diff = _git("diff-tree", "-p", "--stat", "--no-commit-id",
                        f"{c}^", c, "--", *up, *evolved).stdout
        (PATCHES / name).parent.mkdir(parents=True, exist_ok=True)
        (PATCHES / name).write_text(header.rstrip("\n") + "\n---\n" + diff)
        written.add(name)
        lines.append(" ".join([name] + _compress_claims(added, new_files,
                                                         upstream_dirs)))
    for old in PATCHES.glob("*.patch"):
        if old.name not in written:
            old.unlink()
    SERIES.write_text(
        "# Patches to upstream Linux files, applied in order by "
        "'make tree'.\n# After a patch name: the overlay files that belong "
        "to the same commit.\n" + "".join(l + "\n" for l in lines))
    # The tree now matches the repository again.
    # The tree matches the repository again, unless the repository kept
    # edits of its own: then the next 'make tree' must materialize them.
    head = _git("rev-parse", "HEAD").stdout.strip()
    same = set(overlay_files()) == set(new_files) and all(
        (REPO / f).read_bytes() == _blob("HEAD", f) for f in new_files)
    fp = fingerprint(base) if same else "repository-ahead"
    (TREE / ".git" / FINGERPRINT).write_text(
        f"{fp} {head} {_patches_fingerprint()}\n")
    log(f"sync: {len(lines)} patches, {len(new_files)} overlay files")
