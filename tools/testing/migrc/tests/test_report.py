# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the README's benchmark tables (migrc_harness.report)."""

import contextlib
import io
import json
import subprocess
import unittest
from unittest import mock

from migrc_harness import bench, report
from migrc_harness.common import HarnessError


def agg(**median):
    return {"median": median, "min": median, "max": median}


class Tables(unittest.TestCase):
    def test_legacy_table_change_and_missing_metrics(self):
        doc = {"scenarios": {"demote-ro": {
            "vanilla": agg(tlb_shootdowns=1000.0, ops_per_s=10.0),
            "migrc": agg(tlb_shootdowns=50.0, ops_per_s=11.0)}}}
        rows = report.legacy_table(doc)
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


def boot(rep, ipis, migrated, ops, hot=None):
    vals = {"rep": rep, "tlb_shootdowns": ipis, "nr_tlb_remote_flush": ipis / 2,
            "pgmigrate_success": migrated, "ops_per_s": ops,
            "pgfault": 1000.0, "migrc_deferred": 0.0,
            "shootdowns_per_1k_migrated": 1000 * ipis / migrated}
    if hot is not None:
        vals |= {"hot_node0_pct": hot, "churn_seen": 10.0,
                 "promoted_seen": 100.0, "sample_stride": 16.0}
        vals |= bench.churn(vals)
    return vals


def summarized():
    """A default run of 3 + 3 boots through bench._summarize."""
    van = [boot(r, 1000.0 + 10 * r, 10000.0, 100.0, 60.0) for r in range(3)]
    mig = [boot(r, 100.0 + r, 20000.0, 90.0 + r, 80.0) | {
        "migrc_deferred": 5000.0} for r in range(3)]
    mig[1]["churn_seen"] = 0.0
    mig[1] |= bench.churn(mig[1])
    results = {"tiering-ro": {"vanilla": van, "migrc": mig}}
    qemu = subprocess.CompletedProcess([], 0, "QEMU emulator version 7.2\n")
    with mock.patch.object(bench.subprocess, "run", return_value=qemu):
        doc = bench._summarize(results, 3)
    doc["commit"] = {"head": "abcdef1234567890", "dirty": False,
                     "linux_head": "0123456789abcdef"}
    doc["minutes"] = 13.6
    return json.loads(json.dumps(doc))


class PairedRun(unittest.TestCase):
    def test_default_tables_of_a_paired_run(self):
        doc = summarized()
        self.assertEqual(doc["format"], bench.FORMAT)
        text = "\n".join(report.default_tables(doc, "x.json"))
        self.assertIn("3 + 3 alternating boots, commit abcdef123456 (clean, "
                      "build/linux at 0123456789ab), 14 min", text)
        rows = text.splitlines()
        ipis = [r for r in rows if "| shootdown IPIs |" in r]
        self.assertEqual(len(ipis), 1)
        self.assertRegex(ipis[0], r"\| 1,010 \| 101 \| 0\.100 \| "
                                  r"\[0\.\d+, 0\.\d+\] \| lower \|$")
        # Deferred pages have no ratio (none on vanilla): medians only.
        self.assertIn("| tiering-ro | pages deferred | 0 | 5,000 | - | - "
                      "| - |", rows)
        # MIGRC saw no churn in its second boot: no interval, and why.
        churn = [r for r in rows if "| churn (pages) |" in r]
        self.assertTrue(churn[0].endswith("| - | - | 0 on migrc in boot 2 |"),
                        churn)
        self.assertIn("| tiering-ro | hot window on node 0 | 60.0% | 80.0% "
                      "| 1.333 | [1.333, 1.333] | higher |", rows)
        self.assertTrue([r for r in rows if "| ops/s |" in r
                         and r.endswith("| slower |")], rows)

    def test_the_console_table_of_a_paired_run(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench._paired_table(summarized())
        self.assertRegex(out.getvalue(), r"tiering-ro\s+tlb_shootdowns\s+"
                         r"1010\s+101\s+0\.100\s+\[0\.\d+, 0\.\d+\]\s+lower")

    def test_the_cover_letter_of_a_paired_run(self):
        import tempfile
        from pathlib import Path

        from migrc_harness import patches

        part = [p for p in patches.PARTS if "tiering-ro" in p.scenarios][0]
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "bench.json"
            path.write_text(json.dumps(summarized()))
            with mock.patch.object(patches, "RESULTS", path):
                text = patches._bench_rows(part)
        self.assertRegex(text, r"tiering-ro: shootdowns/1k migrated +101\.00 "
                         r"+5\.05 +0\.050 +\[0\.050, 0\.050\]")
        self.assertIn("95% confidence", text.replace("\n", " "))

    def test_a_merged_run_is_refused(self):
        doc = summarized()
        doc["separate_runs"] = {"tiering-file": "another run"}
        with self.assertRaises(HarnessError):
            report.default_tables(doc, "x.json")

    def test_an_old_file_is_shown_as_awaiting_a_rerun(self):
        doc = {"repetitions": 3, "separate_runs": {"a": "b"},
               "scenarios": {"migrate": {
                   "vanilla": agg(tlb_shootdowns=10.0),
                   "migrc": agg(tlb_shootdowns=5.0)}}}
        rows = report.default_tables(doc, "x.json")
        self.assertIn("awaiting a rerun", rows[0])
        self.assertIn("| migrate | TLB shootdown IPIs | 10 | 5 | -50.0% | "
                      "0% / 0% |", rows)


if __name__ == "__main__":
    unittest.main()
