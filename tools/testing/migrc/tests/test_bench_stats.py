# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the benchmark statistics (migrc_harness.bench.ratio_ci)."""

import math
import unittest

from migrc_harness import bench


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
