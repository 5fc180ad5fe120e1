# SPDX-License-Identifier: GPL-2.0
"""The lint that keeps the documented /proc/vmstat events equal to the list."""

import unittest

from migrc_harness import lint
from migrc_harness.common import REPO


class EventDocsTest(unittest.TestCase):
    def test_the_repository_agrees(self) -> None:
        ok, summary, details = lint.event_docs(None)
        self.assertTrue(ok, "\n".join([summary, *details]))
        defs = (REPO / lint.EVENT_DEFS).read_text()
        self.assertGreater(len(lint.defined_events(defs)), 20)

    def test_a_missing_or_moved_row_is_found(self) -> None:
        defs = ('MIGRC_EVENT(A, "a")\t/* x */\n'
                'MIGRC_EVENT(B, "b")\nMIGRC_EVENT(C, "c")\n')
        rst = ("Statistics\n==========\n\n"
               "======= ====\nmigrc_a one\n        more\nmigrc_c three\n"
               "======= ====\n\nmigrc_d is prose after the table\n")
        self.assertEqual(lint.defined_events(defs),
                         ["migrc_a", "migrc_b", "migrc_c"])
        self.assertEqual(lint.documented_events(rst), ["migrc_a", "migrc_c"])
        moved = rst.replace("migrc_a one", "migrc_b two\nmigrc_a one")
        self.assertEqual(lint.documented_events(moved),
                         ["migrc_b", "migrc_a", "migrc_c"])


if __name__ == "__main__":
    unittest.main()
