# SPDX-License-Identifier: GPL-2.0
"""'make test': build the test kernel and guest programs, boot, judge.

A run fails when any of these happens, and says which:
  * a KUnit case fails or crashes, or no Rust KUnit suite ran;
  * a guest stage fails or never reports (guest crashed or hung);
  * the kernel prints a report (WARN, BUG, Oops, KASAN, lockdep, hung task,
    soft lockup, RCU stall), whatever the tests said;
  * the guest does not finish within the timeout, or does not boot.
The last line is 'N passed, N failed' (and ', N skipped').
"""

import json
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import kbuild, kunit, lint, tree, vm
from .arches import ARCHES, NODES
from .common import BUILD, HARNESS, HarnessError, StrPath, log, run

# A case of a kselftest in a stage's output (run_kselftest.sh prefixes
# the suite's own KTAP with '# ').
KSFT_CASE = re.compile(r"^# (ok|not ok) \d+ ([\w.]+)( # SKIP.*)?$")
# Where 'make test' writes its verdicts (KTAP and JSON).
RESULTS = BUILD / "results"

# Upstream mm selftests run by the mm-selftests stage: {name: extra sources}.
UPSTREAM_SELFTESTS: dict[str, list[str]] = {
                      "cow": [], "mkdirty": [], "gup_test": [],
                      "ksm_functional_tests": [],
                      "uffd-unit-tests": ["uffd-common.c"]}
# The patched tree with CONFIG_MIGRC=n must behave as vanilla: 'make test
# VARIANT=nomigrc' builds it and runs these stages.
NOMIGRC_PLAN = ["topology", "migrc-absent", "migrc-safety", "demotion",
                "mm-migration"]
# Stages that test MIGRC itself: not run on a vanilla kernel.
MIGRC_ONLY = {"migrc-core", "migrc-records", "migrc-switch", "migrc-defer"}
PROBES = {"fail": "probe-fail", "warn": "probe-warn", "hang": "probe-hang",
          "noboot": "topology"}
# Kernel command line of a probe: "noboot" points the kernel at an init that
# does not exist, so the guest never reaches userspace.
PROBE_APPEND = {"noboot": "rdinit=/no-such-init"}



def guest_programs(build: kbuild.Build) -> dict[str, Path]:
    """Compile the static programs the guest runs; return {name: path}."""
    src, out = build.src, BUILD / "guest-bin" / build.name
    out.mkdir(parents=True, exist_ok=True)
    hdrs = build.out / "usr/include"
    cc = [ARCHES[build.arch].guest_cc, "-static", "-O2", "-Wall", "-no-pie",
          "-U_FORTIFY_SOURCE", "-isystem", str(hdrs)]
    progs: dict[str, Path] = {}

    def compile_(name: str, sources: Sequence[StrPath],
                 flags: Sequence[str] = (),
                 libs: Sequence[str] = ()) -> None:
        dst = out / name
        run(cc + list(flags) + [str(s) for s in sources] + ["-o", str(dst)]
            + list(libs), quiet=True,
            logfile=BUILD / "logs" / f"guest-{name}.log")
        progs[name] = dst

    compile_("memfill", [HARNESS / "guest/memfill.c"])
    compile_("pingpong", [HARNESS / "guest/pingpong.c"], libs=["-lpthread"])
    compile_("bench", [HARNESS / "guest/bench.c"], libs=["-lpthread"])
    mm = src / "tools/testing/selftests/mm"
    # The selftests' generated config header: no liburing in the guest.
    gen = out / "gen"
    gen.mkdir(exist_ok=True)
    (gen / "local_config.h_gen").write_text("/* no liburing */\n")
    flags = ["-I", str(gen), "-I", str(src / "tools/testing/selftests"),
             "-I", str(src), "-isystem", str(src / "tools/include/uapi")]
    libs = ["-lrt", "-lpthread", "-lm"]
    common = [mm / "vm_util.c", mm / "hugepage_settings.c"]
    if ARCHES[build.arch].host_userspace:
        # libnuma exists for the host's architecture only.
        compile_("migration", [mm / "migration.c"] + common, flags=flags,
                 libs=["-lnuma"] + libs)
    # The peer suite MIGRC must pass unchanged (mm-selftests stage; only
    # where the host builds the upstream selftests, as mm-migration).
    for name, extra in (UPSTREAM_SELFTESTS.items()
                        if ARCHES[build.arch].host_userspace else ()):
        compile_(name, [mm / f"{name}.c"] + [mm / e for e in extra] + common,
                 flags=flags, libs=libs)
    return progs


def kselftests(build: kbuild.Build) -> Path:
    """Build and install the MIGRC kselftest as a developer does
    (make -C tools/testing/selftests TARGETS=migrc install), statically
    for the busybox guest; return the install directory (run_kselftest.sh).

    The suite is userspace: a vanilla kernel runs the one of the MIGRC tree,
    built against its own headers.
    """
    if build.variant == "vanilla":
        tree.materialize(allow_local=True)
    dest = BUILD / "kselftest" / build.name
    shutil.rmtree(dest, ignore_errors=True)
    cmd = ["make", "-C", str(tree.TREE / "tools/testing/selftests"),
           "TARGETS=migrc", f"O={build.out}",
           f"CC={ARCHES[build.arch].guest_cc}", "USERLDFLAGS=-static",
           f"INSTALL_PATH={dest}"]
    # From scratch: a binary linked otherwise (a developer's run_tests in
    # the same O=) would look up to date.
    for target in ("clean", "install"):
        run(cmd + [target], quiet=True,
            logfile=BUILD / "logs" / f"kselftest-{build.name}-{target}.log")
    return dest


def parse_kunit(build: kbuild.Build, guest: vm.GuestRun) -> Any:
    """Parse the KTAP part of the console with the tree's own kunit parser."""
    sys.path.insert(0, str(build.src / "tools/testing/kunit"))
    try:
        import kunit_parser
        import kunit_printer
    finally:
        sys.path.pop(0)
    # Parse silently, then print one line per suite and the log of every
    # case that did not pass: the full listing is in the console log.
    test = kunit_parser.parse_run_tests(guest.kernel_log(),
                                        kunit_printer.null_printer)
    for suite in test.subtests:
        c = suite.counts
        log(f"KUnit suite {suite.name}: {c.passed} passed, {c.failed} "
            f"failed, {c.crashed} crashed, {c.skipped} skipped")
        for case in suite.subtests:
            if case.status.name not in ("SUCCESS", "SKIPPED"):
                print(f"    {case.status.name}: {case.name}")
                for line in case.log[-30:]:
                    print(f"        {line}")
    return test


class Tally:
    """Verdicts of a run, one per test: KUnit case, lint check, guest stage
    and what the judge found (a kernel report, a timeout)."""

    def __init__(self) -> None:
        # (name, verdict: pass|fail|skip, what to say of it)
        self.results: list[tuple[str, str, str]] = []
        # Prefixed to the names of what follows ('x86_64-test-migrc: ').
        self.prefix = ""

    def add(self, verdict: str, what: str, name: str | None = None) -> None:
        """Record one verdict; name defaults to what (its description)."""
        self.results.append((self.prefix + (name or what), verdict, what))

    def count(self, verdict: str) -> int:
        return sum(1 for _, v, _ in self.results if v == verdict)

    @property
    def passed(self) -> int:
        return self.count("pass")

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed - self.skipped

    @property
    def skipped(self) -> int:
        return self.count("skip")

    @property
    def failures(self) -> list[str]:
        return [what for _, v, what in self.results
                if v not in ("pass", "skip")]

    def ktap(self) -> str:
        """The verdicts as KTAP: what was found as a diagnostic line, then
        the result line ('#' in a name would start a directive)."""
        lines = ["KTAP version 1", f"1..{len(self.results)}"]
        for n, (name, verdict, what) in enumerate(self.results, 1):
            if not name.endswith(what):
                lines.append("# " + " ".join(what.split()))
            ok = "not ok" if verdict not in ("pass", "skip") else "ok"
            name = " ".join(name.replace("#", "%23").split())
            lines.append(f"{ok} {n} {name}"
                         + (" # SKIP" if verdict == "skip" else ""))
        return "\n".join(lines) + "\n"

    def json(self) -> str:
        return json.dumps({
            "passed": self.passed, "failed": self.failed,
            "skipped": self.skipped,
            "results": [{"name": n, "result": v, "detail": w}
                        for n, v, w in self.results]}, indent=1) + "\n"

    def write(self, stem: str) -> None:
        """build/results/STEM.ktap and STEM.json."""
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{stem}.ktap").write_text(self.ktap())
        (RESULTS / f"{stem}.json").write_text(self.json())
        log(f"verdicts: {RESULTS / stem}.ktap, {RESULTS / stem}.json")


def judge(build: kbuild.Build, guest: vm.GuestRun, plan: list[str],
          tally: Tally, require_kunit: bool = True) -> None:
    """Turn one guest run into test results in tally."""
    if guest.rebooted:
        log("note: the first boot stalled before userspace and was "
            "repeated (its console: console-*.log.stalled)")
    if guest.init_line < 0:
        tally.add("fail", "boot: the guest never reached /init")
        tail = guest.console[-40:]
        print("--- last console lines ---\n" + "\n".join(tail))
    if require_kunit and guest.init_line >= 0:
        test = parse_kunit(build, guest)
        c = test.counts
        rust = [t.name for t in test.subtests if t.name.startswith("rust")]
        log(f"KUnit: {c.passed} passed, {c.failed} failed, {c.crashed} "
            f"crashed, {c.skipped} skipped in {len(test.subtests)} suites "
            f"({len(rust)} Rust suites)")
        for name, verdict in [c for t in test.subtests
                              for c in _kunit_cases(t)]:
            tally.add(verdict, f"KUnit: {name}", name=f"kunit {name}")
        if not rust:
            tally.add("fail", "KUnit: no Rust KUnit suite ran")
        if build.variant == "migrc":
            ours = [t for t in test.subtests if t.name.startswith("rust_migrc")]
            cases = sum(t.counts.total() for t in ours)
            log(f"KUnit: {len(ours)} rust_migrc* suites, {cases} cases")
            if not ours:
                tally.add("fail", "KUnit: the rust_migrc* suites did not run")
    for stage in plan:
        verdict, rc = guest.stages.get(stage, ("missing", None))
        out = guest.stage_output(stage)
        if verdict == "missing":
            tally.add("fail", f"stage {stage}: never finished "
                      f"({'timeout' if guest.timed_out else 'guest died'})",
                      name=f"stage {stage}")
        else:
            tally.add(verdict, f"stage {stage}: {verdict} (rc={rc})",
                      name=f"stage {stage}")
        # The kselftest's own cases, as run_kselftest.sh shows them.
        failing = []
        for m in filter(None, map(KSFT_CASE.match, out)):
            tally.add("skip" if m.group(3) else
                      "pass" if m.group(1) == "ok" else "fail",
                      f"{stage}: {m.group(2)}{m.group(3) or ''}",
                      name=f"stage {stage}: {m.group(2)}")
            if m.group(1) != "ok":
                failing.append(m.group(2))
        if failing:
            log(f"stage {stage}: failing cases: {', '.join(failing)}")
        shown = out if verdict != "pass" else \
            [l for l in out if l.startswith(("#", "ok", "not ok", "  "))
             or "ok" in l][-12:]
        log(f"stage {stage}: {verdict.upper()}")
        for line in shown[-60:]:
            print(f"    {line}")
    if guest.timed_out:
        tally.add("fail", f"guest timed out after {guest.seconds:.0f}s"
                  + (f" (silent for {vm.STAGE_SILENCE}s)" if guest.silent
                     else ""))
        print("--- last console lines before the timeout ---")
        print("\n".join(guest.console[-25:]))
    elif guest.poweroff_stuck:
        tally.add("fail", f"the guest finished its plan but did not power "
                  f"off within {vm.POWEROFF_GRACE}s")
        print("\n".join(guest.console[-25:]))
    elif guest.init_line >= 0 and not guest.done:
        tally.add("fail", "guest stopped before finishing its plan")
        print("\n".join(guest.console[-25:]))
    elif guest.exit_code:
        tally.add("fail", f"QEMU exited with status {guest.exit_code}")
    seen = -1
    for n, line in guest.reports:
        if n <= seen:
            continue
        ctx = vm.report_context(guest, n)
        seen = n + len(ctx)
        tally.add("fail", f"kernel report: {vm.report_title(ctx)}")
        print("--- kernel report ---\n" + "\n".join(ctx))


def _kunit_cases(test: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(suite.case, pass|fail|skip) of every KUnit case under test."""
    from kunit_parser import TestStatus
    name = f"{prefix}{test.name}"
    if not test.subtests:
        if test.status == TestStatus.SUCCESS:
            return [(name, "pass")]
        if test.status in (TestStatus.SKIPPED, TestStatus.NO_TESTS):
            return [(name, "skip")]
        return [(name, "fail")]
    out = []
    for t in test.subtests:
        out += _kunit_cases(t, f"{name}." if test.name else "")
    return out


def test(probe: str | None = None, timeout: int | None = None,
         stages: list[str] | None = None, flavor: str = "test",
         variant: str = "migrc", arch: str = "x86_64") -> int:
    """Build, boot and judge the default test plan (or one harness probe).

    stages: the guest stages to run instead of the arch's plan ([] runs only
    the KUnit suites at boot).
    """
    tally = Tally()
    build = kbuild.Build(flavor, variant, arch)
    setup = ARCHES[arch].host_setup
    if setup:
        setup()
    for old in RESULTS.glob("test.*"):
        old.unlink()
    full = variant == "migrc" and stages is None and not probe
    try:
        run_one(build, tally, probe, timeout, stages)
        if full and arch == "x86_64":
            kunit_verdicts(tally, kernel=build)
    except HarnessError as e:
        tally.add("fail", f"the harness stopped: {str(e).splitlines()[0]}",
                  name="harness")
        raise
    finally:
        tally.write("test")
    return summarize(tally)


def kunit_verdicts(tally: Tally, suite: str | None = None,
                   kernel: kbuild.Build | None = None) -> None:
    """MIGRC's Rust KUnit suites through kunit.py, into tally: kunit.py's
    own kernel, or kernel, built already (its .kunitconfig checked by
    kunit.py config first)."""
    tally.prefix = "kunit.py: "
    if kernel is None:
        log("MIGRC's KUnit suites with the kernel's kunit.py "
            "(its own build: build/kunit)")
    else:
        log("the .kunitconfig with kunit.py config, then MIGRC's KUnit "
            f"suites with kunit.py exec on {kernel.name}")
        rc, lines = kunit.config()
        tally.add("fail" if rc else "pass",
                  f"kunit.py config: exit {rc}", name="config")
        if rc:
            print("\n".join(f"    {l}" for l in lines))
        suite = suite or "rust_migrc*"
    rc, found = kunit.kunit(suite, None if kernel is None else kernel.out)
    for name, status in found:
        verdict = {"PASS": "pass", "SKIP": "skip"}.get(status, "fail")
        tally.add(verdict, f"kunit.py: {name}: {status}", name=name)
    if not any(name.startswith("rust_migrc") for name, _ in found):
        tally.add("fail", "kunit.py: no rust_migrc* case ran")
    elif rc:
        tally.add("fail", f"kunit.py exited with status {rc}")


def migrc_event_names(src: StrPath) -> tuple[list[str], list[str]]:
    """MIGRC's events (debugfs migrc/stats) and the /proc/vmstat totals
    they add to, in order, from the one list in
    include/linux/migrc_event_defs.h; empty if the tree has none."""
    header = Path(src) / lint.EVENT_DEFS
    if not header.exists():
        return [], []
    defs = header.read_text()
    return lint.defined_events(defs), lint.defined_totals(defs)


def run_one(build: kbuild.Build, tally: Tally, probe: str | None,
            timeout: int | None, stages: list[str] | None) -> None:
    """Build one kernel, boot it with a plan, add the verdicts to tally."""
    variant = build.variant
    tally.prefix = f"{build.name}: "
    kernel = build.build()
    # The static checks belong to the full plan of the MIGRC kernel
    # ('make lint' runs them alone); on arm64, clippy's record only.
    if not probe and stages is None and variant == "migrc":
        lint.run_all(build, tally)
    initrd = test_initramfs(build)
    arch = ARCHES[build.arch]
    plan = list(arch.plan) if stages is None else list(stages)
    if variant == "nomigrc" and stages is None:
        plan = list(NOMIGRC_PLAN)
    if variant != "migrc":
        plan = [p for p in plan if p not in MIGRC_ONLY]
    if probe:
        plan = [PROBES[probe]]
    if timeout is None:
        timeout = 60 if probe == "hang" else arch.test_timeout
    guest = vm.boot(kernel, initrd, plan, timeout,
                    BUILD / "logs" / f"console-{build.name}.log",
                    extra_append=_boot_append(build, probe),
                    echo=_live_echo, arch=build.arch,
                    nodes=arch.test_nodes if build.flavor == "test" else NODES)
    log(f"guest finished in {guest.seconds:.0f}s "
        f"(console: {BUILD / 'logs' / f'console-{build.name}.log'})")
    judge(build, guest, plan, tally, require_kunit=not probe)


def test_initramfs(build: kbuild.Build,
                   files: dict[str, str] | None = None) -> Path:
    """The test VM's initramfs for build: guest programs, the installed
    kselftests (/kselftest) and the tree's list of MIGRC events."""
    # migrc-core checks debugfs and /proc/vmstat against the tree's list.
    events, totals = migrc_event_names(build.src)
    return vm.build_initramfs(
        guest_programs(build), arch=build.arch,
        files={"/migrc/migrc-events": "".join(f"{n}\n" for n in events),
               "/migrc/migrc-vmstat": "".join(f"{n}\n" for n in totals),
               **(files or {})},
        trees={"/kselftest": kselftests(build)})


def _boot_append(build: kbuild.Build, probe: str | None) -> str:
    """What a test boot adds to the command line: the probe's, and the
    test kernel's (see arches)."""
    return " ".join(filter(None, (
        PROBE_APPEND.get(probe or "", ""),
        ARCHES[build.arch].test_append if build.flavor == "test" else "")))


def kunit_only(suite: str | None) -> int:
    """'make kunit': kunit.py alone; verdicts in build/results/kunit.*."""
    tally = Tally()
    kunit_verdicts(tally, suite)
    tally.write("kunit")
    return summarize(tally)


def lint_only() -> int:
    """'make lint': the static checks of 'make test', without booting."""
    tally = Tally()
    build = kbuild.Build("test", "migrc")
    build.build()
    lint.run_all(build, tally)
    return summarize(tally)


def _live_echo(line: str) -> None:
    """Show guest progress live, without the whole boot log."""
    if "migrc-guest:" in line:
        log("guest: " + line.split("migrc-guest: ", 1)[1])


def summarize(tally: Tally) -> int:
    if tally.failures:
        print("\nFailures:")
        for f in tally.failures:
            print(f"  - {f}")
    line = f"{tally.passed} passed, {tally.failed} failed"
    if tally.skipped:
        line += f", {tally.skipped} skipped"
    print(line, flush=True)
    return 1 if tally.failed else 0


def check_harness() -> int:
    """Each probe must make the run fail, for the probe's own reason."""
    expect = {"fail": "stage probe-fail: fail",
              "warn": "kernel report: WARNING",
              "hang": "timed out",
              "noboot": "boot: the guest never reached /init"}
    ok = True
    for probe, needle in expect.items():
        log(f"=== harness probe '{probe}': expecting a failure ===")
        build = kbuild.Build("test", "migrc")
        kernel = build.build()
        initrd = vm.build_initramfs(guest_programs(build))
        plan = [PROBES[probe]]
        guest = vm.boot(kernel, initrd, plan, 60 if probe == "hang" else 600,
                        BUILD / "logs" / f"console-probe-{probe}.log",
                        extra_append=_boot_append(build, probe),
                        echo=_live_echo)
        tally = Tally()
        judge(build, guest, plan, tally, require_kunit=False)
        caught = [f for f in tally.failures if needle in f]
        verdict = "detected" if caught else "MISSED"
        log(f"probe {probe}: {verdict}: {caught or tally.failures}")
        ok = ok and bool(caught)
    n = len(expect)
    print(f"{n if ok else 0} passed, {0 if ok else n} failed")
    return 0 if ok else 1
