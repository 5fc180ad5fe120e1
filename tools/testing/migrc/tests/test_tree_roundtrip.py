# SPDX-License-Identifier: GPL-2.0
"""A history of commits that add and then change overlay files goes
through 'make sync' (tree.sync) and back through 'make tree'
(tree._build_commits): every commit must come back with the same tree."""

import contextlib
import io
import subprocess
import tempfile
import unittest
from pathlib import Path

from migrc_harness import tree

IDENT = ["-c", "user.name=t", "-c", "user.email=t@localhost"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENT, *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


class RoundTrip(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        self.work, self.repo = root / "tree", root / "repo"
        self.work.mkdir()
        self.repo.mkdir()
        git(self.repo, "init", "-q")
        git(self.work, "init", "-q")
        self.saved = (tree.TREE, tree.REPO, tree.PATCHES, tree.SERIES)
        tree.TREE, tree.REPO = self.work, self.repo
        tree.PATCHES = self.repo / "patches"
        tree.SERIES = tree.PATCHES / "series"

    def tearDown(self) -> None:
        tree.TREE, tree.REPO, tree.PATCHES, tree.SERIES = self.saved
        self.tmp.cleanup()

    def commit(self, subject: str, files: dict[str, str]) -> str:
        for path, text in files.items():
            write(self.work, path, text)
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", subject)
        return git(self.work, "rev-parse", "HEAD")

    def test_overlay_files_that_change_across_commits(self) -> None:
        base = self.commit("upstream", {"mm/a.c": "a\n",
                                        "include/linux/mm.h": "mm\n"})
        git(self.work, "tag", "upstream")
        history = [
            self.commit("mm: add new.c", {"mm/a.c": "a\nb\n",
                                          "mm/new.c": "one\n"}),
            self.commit("mm: new.c grows, x.h", {
                "mm/new.c": "one\ntwo\n", "include/linux/x.h": "x\n"}),
            self.commit("mm: only new.c changes", {
                "mm/new.c": "zero\none\ntwo\n"}),
        ]
        with contextlib.redirect_stdout(io.StringIO()):
            tree.sync()
        # The overlay holds the final versions; the series claims each
        # added file on the line that adds it.
        self.assertEqual((self.repo / "mm/new.c").read_text(),
                         "zero\none\ntwo\n")
        series = [l.split() for l in tree.SERIES.read_text().splitlines()
                  if not l.startswith("#")]
        self.assertEqual([l[1:] for l in series],
                         [["mm/new.c"], ["include/linux/x.h"], []])
        rebuilt = tree._build_commits(base)
        chain = git(self.work, "rev-list", "--reverse",
                    f"{base}..{rebuilt}").split()
        self.assertEqual(
            [git(self.work, "rev-parse", f"{c}^{{tree}}") for c in chain],
            [git(self.work, "rev-parse", f"{c}^{{tree}}") for c in history])


if __name__ == "__main__":
    unittest.main()
