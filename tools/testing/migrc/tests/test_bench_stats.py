# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the benchmark statistics (migrc_harness.bench.ratio_ci)."""

import math
import unittest

from migrc_harness import bench, vm


def runs(values):
    return [{"ops_per_s": v} for v in values]


class RatioCI(unittest.TestCase):
    def test_equal_kernels_interval_holds_one(self):
        van = [100, 103, 98, 101, 99, 102, 100, 97, 104, 100]
        mig = [101, 102, 99, 100, 100, 101, 99, 98, 103, 101]
        r = bench.ratio_ci({"vanilla": runs(van), "migrc": runs(mig)})
        self.assertEqual(r["pairs"], 10)
        lo, hi = r["ci95"]
        self.assertLess(lo, 1.0)
        self.assertGreater(hi, 1.0)
        self.assertLess(hi - lo, 0.03)

    def test_slower_kernel_interval_below_one(self):
        van = [100, 103, 98, 101, 99, 102, 100, 97, 104, 100]
        mig = [v * 0.95 for v in van]
        r = bench.ratio_ci({"vanilla": runs(van), "migrc": runs(mig)})
        self.assertAlmostEqual(r["ratio_mean"], 0.95)
        self.assertAlmostEqual(r["ratio_of_medians"], 0.95)
        # Every pair has the same ratio: the interval is that ratio.
        self.assertAlmostEqual(r["ci95"][0], 0.95)
        self.assertAlmostEqual(r["ci95"][1], 0.95)

    def test_interval_width_uses_t_quantile(self):
        # Log ratios +d and -d alternately: mean 0, sd = d * sqrt(n / (n-1)).
        d, n = 0.01, 4
        van = [1.0] * n
        mig = [math.exp(d if i % 2 else -d) for i in range(n)]
        r = bench.ratio_ci({"vanilla": runs(van), "migrc": runs(mig)})
        half = 3.182 * d * math.sqrt(n / (n - 1)) / math.sqrt(n)
        self.assertAlmostEqual(math.log(r["ci95"][1]), half)
        self.assertAlmostEqual(math.log(r["ci95"][0]), -half)

    def test_a_missing_run_drops_its_pair_only(self):
        van = runs([100, 200, 100])
        mig = runs([50, 100, 50])
        van[1] = {}
        r = bench.ratio_ci({"vanilla": van, "migrc": mig})
        self.assertEqual(r["pairs"], 2)
        self.assertAlmostEqual(r["ratio_mean"], 0.5)

    def test_one_pair_has_no_interval(self):
        r = bench.ratio_ci({"vanilla": runs([1.0]), "migrc": runs([2.0])})
        self.assertNotIn("ci95", r)
        self.assertEqual(r["ratio_of_medians"], 2.0)


def with_reps(values, reps):
    return [{"tlb_shootdowns": v, "rep": r} for v, r in zip(values, reps)]


class Pairing(unittest.TestCase):
    """The default run's per-metric ratios: boots paired by repetition."""

    def test_pairs_follow_the_repetition_not_the_position(self):
        # MIGRC's list in another order: pairing by position would mix
        # repetitions 0 and 1 (ratios 0.25 and 4 instead of 1 and 1).
        per = {"vanilla": with_reps([100, 400, 200], [0, 1, 2]),
               "migrc": with_reps([400, 100, 200], [1, 0, 2])}
        r = bench.ratio_ci(per, "tlb_shootdowns")
        self.assertEqual(r["pairs"], 3)
        self.assertAlmostEqual(r["ratio_mean"], 1.0)
        self.assertAlmostEqual(r["ci95"][0], 1.0)
        self.assertAlmostEqual(r["ci95"][1], 1.0)

    def test_a_repetition_of_one_kernel_only_is_missing(self):
        per = {"vanilla": with_reps([100, 100, 100], [0, 1, 2]),
               "migrc": with_reps([50, 50], [0, 2])}
        pairs, missing = bench.paired(per, "tlb_shootdowns")
        self.assertEqual(sorted(pairs), [0, 2])
        self.assertEqual(missing, [1])
        r = bench.ratio_ci(per, "tlb_shootdowns")
        self.assertEqual(r["missing"], [1])
        self.assertAlmostEqual(r["ratio_mean"], 0.5)

    def test_a_zero_on_one_kernel_withholds_the_interval(self):
        # Leaving the pair out would keep only MIGRC's worst boots.
        per = {"vanilla": with_reps([100, 120, 90, 110, 100], range(5)),
               "migrc": with_reps([5, 0, 6, 4, 5], range(5))}
        r = bench.ratio_ci(per, "tlb_shootdowns")
        self.assertEqual(r["zeros"], {"migrc": [1]})
        self.assertNotIn("ci95", r)
        self.assertNotIn("ratio_mean", r)
        self.assertEqual(r["migrc_median"], 5)
        self.assertEqual(bench.ratio_cell(r),
                         ("-", "-", "0 on migrc in boot 2"))

    def test_zeros_on_both_kernels_are_left_out(self):
        per = {"vanilla": with_reps([0, 10, 20, 40], range(4)),
               "migrc": with_reps([0, 5, 10, 20], range(4))}
        r = bench.ratio_ci(per, "tlb_shootdowns")
        self.assertEqual(r["both_zero"], [0])
        self.assertEqual(r["pairs"], 3)
        self.assertAlmostEqual(r["ratio_mean"], 0.5)
        self.assertEqual(bench.ratio_cell(r),
                         ("0.500", "[0.500, 0.500]", "lower"))

    def test_verdict_words_follow_the_metric(self):
        self.assertEqual(bench.ratio_verdict(0.9, 0.95), "slower")
        self.assertEqual(bench.ratio_verdict(0.9, 0.95, "pgfault"), "lower")
        self.assertEqual(bench.ratio_verdict(1.1, 1.2, "tlb_shootdowns"),
                         "higher")
        self.assertEqual(bench.ratio_verdict(0.9, 1.2, "tlb_shootdowns"),
                         "no difference shown")

    def test_older_files_pair_in_boot_order(self):
        per = {"vanilla": runs([100, 200]), "migrc": runs([50, 100])}
        pairs, missing = bench.paired(per, "ops_per_s")
        self.assertEqual(pairs, {0: (100.0, 50.0), 1: (200.0, 100.0)})
        self.assertEqual(missing, [])


# One boot's line of a tiering scenario, as the stage prints it.
TIERING = ("migrc-bench: tiering-ro ops=100000000 seconds=31.0 "
           "ops_per_s=3225806.5 threads=4 window_mib=256 sweeps=1.00 "
           "write_pct=0 hot_node0_pct=87.5 place_samples=32 "
           "sample_stride=16 promoted_seen=2000 demoted_seen=1500 "
           "churn_seen=300 sample_s=1.20 tlb_shootdowns=230 "
           "pgmigrate_success=100000 pgfault=51234 wall_s=70.00")


class Placement(unittest.TestCase):
    def test_churn_scaled_from_the_samples(self):
        c = bench.churn({"churn_seen": 300.0, "promoted_seen": 2000.0,
                         "sample_stride": 16.0})
        self.assertEqual(c, {"churn_pages": 4800.0, "churn_pct": 15.0})

    def test_no_promotion_seen_has_no_share(self):
        c = bench.churn({"churn_seen": 0.0, "promoted_seen": 0.0,
                         "sample_stride": 16.0})
        self.assertEqual(c, {"churn_pages": 0.0})

    def test_scenarios_without_samples_have_no_churn(self):
        self.assertEqual(bench.churn({"tlb_shootdowns": 5.0}), {})

    def test_parse_a_tiering_line(self):
        run = vm.GuestRun(console=["migrc-guest: begin bench", TIERING,
                                   "migrc-guest: end bench pass rc=0"])
        vals = bench._parse(run)["tiering-ro"]
        self.assertEqual(vals["hot_node0_pct"], 87.5)
        self.assertEqual(vals["pgfault"], 51234)
        self.assertEqual(vals["churn_pages"], 4800)
        self.assertEqual(vals["churn_pct"], 15.0)
        self.assertAlmostEqual(vals["shootdowns_per_1k_migrated"], 2.3)


class Provenance(unittest.TestCase):
    def test_commit_dirty_and_no_linux_tree(self):
        import subprocess
        import tempfile
        from pathlib import Path
        from unittest import mock

        with tempfile.TemporaryDirectory() as d:
            repo = Path(d)
            git = ["git", "-C", d, "-c", "user.name=t", "-c",
                   "user.email=t@t"]
            subprocess.run(git + ["init", "-q"], check=True)
            (repo / "a").write_text("1\n")
            subprocess.run(git + ["add", "a"], check=True)
            subprocess.run(git + ["commit", "-qm", "a"], check=True)
            with mock.patch.object(bench, "REPO", repo), \
                    mock.patch.object(bench, "BUILD", repo / "build"):
                clean = bench.run_commit()
                (repo / "a").write_text("2\n")
                dirty = bench.run_commit()
        self.assertEqual(len(clean["head"]), 40)
        self.assertFalse(clean["dirty"])
        self.assertIsNone(clean["linux_head"])
        self.assertTrue(dirty["dirty"])
        self.assertEqual(dirty["dirty_paths"], ["a"])
        self.assertEqual(dirty["head"], clean["head"])


class Tables(unittest.TestCase):
    """The tables `make bench` prints from a summarized run."""

    def test_tables_render_the_committed_run(self):
        import contextlib
        import io
        import json
        from pathlib import Path

        path = Path(__file__).resolve().parents[4] / "results" / \
            "bench-x86_64.json"
        doc = json.loads(path.read_text())
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench._table(doc)
            bench._cause_table(doc)
        text = out.getvalue()
        row = [line for line in text.splitlines()
               if line.startswith("tiering-ro") and "tlb_shootdowns " in line]
        self.assertEqual(len(row), 1, text)
        self.assertRegex(row[0], r"[+-]\d+\.\d%\s+\d+%/\d+%$")
        self.assertIn("floor", text)



class BootCmdline(unittest.TestCase):
    def test_scenarios_quick_and_append(self):
        self.assertEqual(bench.boot_cmdline(["a", "b"], True, "migrc=off"),
                         "harness.bench=a:b harness.quick=1 migrc=off")
        self.assertEqual(bench.boot_cmdline(["a"], False, ""),
                         "harness.bench=a")


if __name__ == "__main__":
    unittest.main()
