# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the README's benchmark tables (migrc_harness.report)."""

import unittest

from migrc_harness import report


def agg(**median):
    return {"median": median, "min": median, "max": median}


class Tables(unittest.TestCase):
    def test_main_table_change_and_missing_metrics(self):
        doc = {"scenarios": {"demote-ro": {
            "vanilla": agg(tlb_shootdowns=1000.0, ops_per_s=10.0),
            "migrc": agg(tlb_shootdowns=50.0, ops_per_s=11.0)}}}
        rows = report.main_table(doc)
        self.assertIn("| demote-ro | TLB shootdown IPIs | 1,000 | 50 | "
                      "-95.0% | 0% / 0% |", rows)
        self.assertIn("| demote-ro | ops/s | 10 | 11 | +10.0% | 0% / 0% |",
                      rows)
        # No per-1k row without pgmigrate_success.
        self.assertFalse([r for r in rows if "per 1k" in r])

    def test_floor_table(self):
        def att(migration, migrc, other):
            return {"groups": {"migration": {"rounds": migration},
                               "migrc": {"rounds": migrc, "ipis": migrc * 2}},
                    "floor": {"rounds": other + migration,
                              "ipis": 2 * (other + migration)}}
        doc = {"scenarios": {"tiering-ro": {
            "vanilla": {"attribution": att(3000, 0, 100)},
            "migrc": {"attribution": att(90, 5, 100)}}}}
        rows = report.floor_table(doc)
        self.assertEqual(rows[2], "| tiering-ro | 3,000 | 90 | 190 / 380 | "
                                  "5 / 10 | +2.6% |")

    def test_micro_verdicts(self):
        doc = {"ratios": {
            "alloc-path": {"vanilla_median": 100.0, "migrc_median": 97.0,
                           "ratio_mean": 0.97, "ci95": [0.96, 0.98]},
            "write-path": {"vanilla_median": 100.0, "migrc_median": 100.0,
                           "ratio_mean": 1.0, "ci95": [0.995, 1.01],
                           "clock": "-icount shift=0,sleep=off"},
            "fault-path": {"vanilla_median": 100.0, "migrc_median": 100.0,
                           "ratio_mean": 1.0, "ci95": [0.97, 1.03]}}}
        rows = report.micro_table(doc)
        self.assertTrue(rows[2].endswith("| slower | wall clock | not shown |"))
        self.assertTrue(rows[3].endswith(
            "| no difference shown | instructions | shown |"))
        self.assertTrue(rows[4].endswith(
            "| no difference shown | wall clock | not shown |"))


if __name__ == "__main__":
    unittest.main()
