# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the console parser (migrc_harness.vm) and of the verdicts
the judge draws from a boot (migrc_harness.runner.judge)."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path
from typing import Any, cast

from migrc_harness import kbuild, kunit, runner, vm

# A boot as the guest's /init prints it (guest/init), with kernel
# timestamps and serial line ends.
BOOT = """\
[    0.000000] Linux version 7.3.4
[    1.234567] Run /init as init process\r
migrc-guest: init 7.3.4
migrc-guest: begin migrc-core
  migrc core ok
migrc-guest: end migrc-core pass rc=0
migrc-guest: begin migrc-safety
ok 1 migrc.reuse_leak
not ok 2 migrc.lost_write
migrc-guest: end migrc-safety fail rc=1
migrc-guest: done
"""

WARN = """\
[   12.500000] ------------[ cut here ]------------
[   12.500001] WARNING: CPU: 1 PID: 77 at mm/migrc.c:104 migrc_page_flush+0x1/0x2
[   12.500002] Modules linked in:
"""


def parse(text):
    run = vm.GuestRun()
    for line in text.splitlines():
        vm._take(run, line.rstrip("\r"), None)
    return run


class NoBuild:
    variant = "migrc"


def judged(run, plan):
    tally = runner.Tally()
    with contextlib.redirect_stdout(io.StringIO()):
        runner.judge(cast(Any, NoBuild()), run, plan, tally,
                     require_kunit=False)
    return tally


class Console(unittest.TestCase):
    def test_stages_and_verdicts(self):
        r = parse(BOOT)
        self.assertEqual(r.init_line, 2)
        self.assertTrue(r.done)
        self.assertEqual(r.order, ["migrc-core", "migrc-safety"])
        self.assertEqual(r.stages["migrc-core"], ("pass", 0))
        self.assertEqual(r.stages["migrc-safety"], ("fail", 1))

    def test_stage_output_is_what_the_stage_printed(self):
        r = parse(BOOT)
        self.assertEqual(r.stage_output("migrc-safety"),
                         ["ok 1 migrc.reuse_leak", "not ok 2 migrc.lost_write"])
        self.assertEqual(r.stage_output("migrc-core"), ["  migrc core ok"])
        self.assertEqual(r.stage_output("absent"), [])

    def test_kernel_log_ends_where_userspace_starts(self):
        r = parse(BOOT)
        self.assertEqual(len(r.kernel_log()), 2)

    def test_a_warning_is_a_report_with_its_headline(self):
        r = parse(BOOT + WARN)
        self.assertEqual(len(r.reports), 2)   # the cut line and WARNING:
        n = r.reports[0][0]
        title = vm.report_title(vm.report_context(r, n))
        self.assertTrue(title.startswith("WARNING: CPU: 1 PID: 77"), title)


class Judge(unittest.TestCase):
    PLAN = ["migrc-core", "migrc-safety"]

    def test_a_failed_stage_fails_the_run(self):
        t = judged(parse(BOOT), self.PLAN)
        self.assertEqual((t.passed, t.failed), (1, 1))
        self.assertIn("stage migrc-safety: fail (rc=1)", t.failures)

    def test_a_missing_stage_fails(self):
        t = judged(parse(BOOT), self.PLAN + ["migrc-knobs"])
        self.assertIn("stage migrc-knobs: never finished (guest died)",
                      t.failures)

    def test_a_kernel_warning_fails_the_run(self):
        t = judged(parse(BOOT + WARN), ["migrc-core"])
        self.assertEqual(len(t.failures), 1)
        self.assertTrue(t.failures[0].startswith("kernel report: WARNING:"))

    def test_no_init_fails(self):
        t = judged(parse("[    0.1] Linux version 7.3.4\n"), [])
        self.assertIn("boot: the guest never reached /init", t.failures)

    def test_stopping_before_done_fails(self):
        t = judged(parse(BOOT.replace("migrc-guest: done\n", "")),
                   ["migrc-core"])
        self.assertIn("guest stopped before finishing its plan", t.failures)

    def test_qemu_exit_status_fails(self):
        r = parse(BOOT)
        r.exit_code = 1
        t = judged(r, ["migrc-core"])
        self.assertIn("QEMU exited with status 1", t.failures)

    def test_timeout_fails(self):
        r = parse(BOOT.replace("migrc-guest: done\n", ""))
        r.timed_out = True
        t = judged(r, ["migrc-core"])
        self.assertTrue(any(f.startswith("guest timed out")
                            for f in t.failures), t.failures)


class Verdicts(unittest.TestCase):
    """What 'make test' writes under build/results: KTAP and JSON."""

    def test_ktap_has_a_line_per_verdict(self):
        t = judged(parse(BOOT + WARN), self.PLAN)
        lines = t.ktap().splitlines()
        self.assertEqual(lines[:2], ["KTAP version 1", "1..3"])
        self.assertEqual(lines[2:6], [
            "# stage migrc-core: pass (rc=0)", "ok 1 stage migrc-core",
            "# stage migrc-safety: fail (rc=1)",
            "not ok 2 stage migrc-safety"])
        self.assertTrue(lines[6].startswith("not ok 3 kernel report: "
                                            "WARNING: CPU: 1"), lines[6])

    def test_kselftest_cases_are_verdicts_of_their_own(self):
        boot = BOOT.replace("ok 1 migrc.reuse_leak\n", "# ok 1 migrc.a\n"
                            "# ok 2 migrc.b # SKIP no ext4\n"
                            "# not ok 3 migrc.c\n"
                            "# # alloc broken: not ok 1 migrc.a\n")
        t = judged(parse(boot), self.PLAN)
        names = [(n, v) for n, v, _ in t.results]
        self.assertEqual(names[2:5], [
            ("stage migrc-safety: migrc.a", "pass"),
            ("stage migrc-safety: migrc.b", "skip"),
            ("stage migrc-safety: migrc.c", "fail")])
        self.assertEqual(len(names), 5, names)

    def test_skips_names_and_hashes(self):
        t = runner.Tally()
        t.prefix = "k: "
        t.add("skip", "KUnit: a.b", name="kunit a.b")
        t.add("fail", "Oops: 0000 [#1] SMP")
        self.assertEqual(t.ktap().splitlines()[2:],
                         ["# KUnit: a.b", "ok 1 k: kunit a.b # SKIP",
                          "not ok 2 k: Oops: 0000 [%231] SMP"])
        doc = json.loads(t.json())
        self.assertEqual((doc["passed"], doc["failed"], doc["skipped"]),
                         (0, 1, 1))
        self.assertEqual(doc["results"][0],
                         {"name": "k: kunit a.b", "result": "skip",
                          "detail": "KUnit: a.b"})

    def test_the_trees_kunit_parser_reads_it(self):
        """The KTAP is what tools/testing/kunit reads (when a tree is
        there: the harness's unit tests run without one too)."""
        parser = vm.REPO / "build/linux/tools/testing/kunit"
        if not (parser / "kunit_parser.py").exists():
            self.skipTest("no materialized tree")
        import sys
        sys.path.insert(0, str(parser))
        try:
            import kunit_parser
            import kunit_printer
        finally:
            sys.path.pop(0)
        t = runner.Tally()
        t.add("pass", "stage a: pass", name="stage a")
        t.add("fail", "Oops: [#1]")
        t.add("skip", "lint b", name="lint b")
        test = kunit_parser.parse_run_tests(t.ktap().splitlines(),
                                            kunit_printer.null_printer)
        c = test.counts
        self.assertEqual((c.passed, c.failed, c.skipped, c.errors),
                         (1, 1, 1, 0))

    PLAN = ["migrc-core", "migrc-safety"]


class KunitJson(unittest.TestCase):
    def test_cases_of_nested_groups(self):
        doc = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
            {"name": "rust_migrc_gen", "sub_groups": [],
             "test_cases": [{"name": "wraps", "status": "PASS"},
                            {"name": "retires", "status": "FAIL"}]}]}
        self.assertEqual(kunit.cases(doc),
                         [("rust_migrc_gen.wraps", "PASS"),
                          ("rust_migrc_gen.retires", "FAIL")])

    def test_make_test_runs_the_suites_on_its_own_kernel(self):
        """exec boots the given build with the filter; config builds
        and boots nothing; run builds kunit.py's own kernel."""
        ex = kunit.command("exec", "rust_migrc*", Path("/k/x86_64-test"))
        self.assertEqual(ex[1], "exec")
        self.assertIn("--build_dir=/k/x86_64-test", ex)
        self.assertEqual(ex[-1], "rust_migrc*")
        self.assertNotIn(f"--jobs={kbuild.jobs()}", ex)
        conf = kunit.command("config")
        self.assertEqual(conf[1], "config")
        self.assertIn(f"--build_dir={kunit.BUILD_DIR}", conf)
        self.assertFalse([a for a in conf if a.startswith(("--json",
                                                           "--qemu"))])
        self.assertIn(f"--jobs={kbuild.jobs()}", kunit.command("run"))



class PowerOff(unittest.TestCase):
    """The boot's timeout ends with the guest's plan (CI of 95ba8aa: the
    guest said "done" seconds before its 3,000 s and was judged timed
    out); a guest that then does not power off still fails."""

    def boot(self, script, timeout, grace):
        saved = vm.qemu_args, vm.POWEROFF_GRACE
        vm.qemu_args = lambda *a, **k: ["sh", "-c", script]
        vm.POWEROFF_GRACE = grace
        try:
            with contextlib.redirect_stdout(io.StringIO()), \
                    tempfile.TemporaryDirectory() as d:
                return vm.boot("k", "i", ["migrc-core"], timeout,
                               Path(d) / "console.log")
        finally:
            vm.qemu_args, vm.POWEROFF_GRACE = saved

    PLAN = ("echo 'migrc-guest: init x'; echo 'migrc-guest: begin "
            "migrc-core'; echo 'migrc-guest: end migrc-core pass rc=0'; ")

    def test_done_just_before_the_timeout_passes(self):
        r = self.boot(self.PLAN + "sleep 1.5; echo 'migrc-guest: done'; "
                      "sleep 1; exit 0", 2, 5)
        self.assertTrue(r.done)
        self.assertFalse(r.timed_out or r.poweroff_stuck)
        self.assertEqual(judged(r, ["migrc-core"]).failed, 0)

    def test_a_guest_that_does_not_power_off_fails(self):
        r = self.boot(self.PLAN + "echo 'migrc-guest: done'; "
                      "exec sleep 60", 30, 1)
        self.assertTrue(r.done and r.poweroff_stuck)
        self.assertLess(r.seconds, 10)
        self.assertGreater(judged(r, ["migrc-core"]).failed, 0)

    def test_a_report_after_done_fails(self):
        r = self.boot(self.PLAN + "echo 'migrc-guest: done'; "
                      "echo '[ 9.1] BUG: unable to handle page fault'; "
                      "exit 0", 30, 5)
        self.assertEqual(len(r.reports), 1)
        self.assertGreater(judged(r, ["migrc-core"]).failed, 0)

    def test_unfinished_plan_still_times_out(self):
        r = self.boot("echo 'migrc-guest: init x'; echo 'migrc-guest: begin "
                      "migrc-core'; exec sleep 60", 2, 5)
        self.assertTrue(r.timed_out)
        self.assertGreater(judged(r, ["migrc-core"]).failed, 0)

if __name__ == "__main__":
    unittest.main()

