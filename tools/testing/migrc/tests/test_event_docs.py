# SPDX-License-Identifier: GPL-2.0
"""The lint that keeps the documented events and vmstat totals equal to the list."""

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
        defs = ('MIGRC_EVENT(A, "a", SENT)\t/* x */\n'
                'MIGRC_EVENT(B, "b", NONE)\nMIGRC_EVENT(C, "c", SENT)\n')
        border = "======= ====\n"
        rst = ("Statistics\n==========\n\n"
               + border + "migrc_sent total\n" + border + "\n"
               + border + "migrc_a one\n        more\nmigrc_c three\n"
               + border + "\nmigrc_d is prose after the table\n\n"
               "Next\n====\n\n" + border + "migrc_e elsewhere\n" + border)
        self.assertEqual(lint.defined_events(defs),
                         ["migrc_a", "migrc_b", "migrc_c"])
        self.assertEqual(lint.defined_totals(defs), ["migrc_sent"])
        self.assertEqual(lint.documented_tables(rst),
                         [["migrc_sent"], ["migrc_a", "migrc_c"]])
        moved = rst.replace("migrc_a one", "migrc_b two\nmigrc_a one")
        self.assertEqual(lint.documented_tables(moved)[1],
                         ["migrc_b", "migrc_a", "migrc_c"])


if __name__ == "__main__":
    unittest.main()
