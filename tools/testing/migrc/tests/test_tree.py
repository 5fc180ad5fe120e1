# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the series bookkeeping (migrc_harness.tree): which patch
of patches/series claims which overlay file, and how 'make sync' names the
files a commit adds."""

import unittest

from migrc_harness import tree
from migrc_harness.common import HarnessError

FILES = ["include/linux/migrc.h", "mm/migrc.c",
         "rust/kernel/mm/migrc/engine.rs", "rust/kernel/mm/migrc/mod.rs",
         "tools/testing/migrc/migrc"]


class Claims(unittest.TestCase):
    def test_a_file_or_a_directory_is_claimed(self):
        owner = tree._claims([("0002-core.patch", ["include/linux/migrc.h",
                                                   "rust/kernel/mm/migrc"]),
                              ("0012-harness.patch", ["tools/testing/migrc"])],
                             FILES)
        self.assertEqual(owner["rust/kernel/mm/migrc/engine.rs"],
                         "0002-core.patch")
        self.assertEqual(owner["tools/testing/migrc/migrc"],
                         "0012-harness.patch")
        self.assertNotIn("mm/migrc.c", owner)

    def test_a_prefix_is_a_directory_not_a_name(self):
        # "mm/migr" is no directory: it must not claim mm/migrc.c.
        with self.assertRaises(HarnessError):
            tree._claims([("0001-x.patch", ["mm/migr"])], FILES)

    def test_two_owners_are_refused(self):
        with self.assertRaises(HarnessError):
            tree._claims([("0002-a.patch", ["rust/kernel/mm/migrc"]),
                          ("0003-b.patch", ["rust/kernel/mm/migrc/mod.rs"])],
                         FILES)


class CompressClaims(unittest.TestCase):
    def test_a_new_directory_is_claimed_whole(self):
        added = ["rust/kernel/mm/migrc/engine.rs",
                 "rust/kernel/mm/migrc/mod.rs"]
        self.assertEqual(
            tree._compress_claims(added, FILES, {"rust/kernel/mm", "mm"}),
            ["rust/kernel/mm/migrc"])

    def test_an_upstream_directory_is_not(self):
        self.assertEqual(
            tree._compress_claims(["mm/migrc.c"], FILES, {"mm"}),
            ["mm/migrc.c"])

    def test_a_directory_partly_added_is_not(self):
        self.assertEqual(
            tree._compress_claims(["rust/kernel/mm/migrc/mod.rs"], FILES,
                                  {"rust/kernel/mm"}),
            ["rust/kernel/mm/migrc/mod.rs"])


class Slug(unittest.TestCase):
    def test_subject_to_file_name(self):
        self.assertEqual(tree._slug("mm/migrc: defer under a zap"),
                         "mm-migrc-defer-under-a-zap")


if __name__ == "__main__":
    unittest.main()
