# SPDX-License-Identifier: GPL-2.0
"""'make patches' and 'make check-patches': the series as reviewers get it.

'make patches' exports build/linux's commits on top of upstream (every
overlay file and upstream edit) with 'git format-patch', in the parts of
PARTS, each into its own directory of build/patches/ with a cover letter
made from its template. The template's placeholders are filled from the
code and results/, so the letter cannot go stale: @RESULTS@ (the figures
of results/bench-x86_64.json for the part's scenarios), @KNOBS@ (the
safety rules the part adds and the selftests that catch each, from
run_migrc_safety.sh), @KUNIT@ (the Rust KUnit cases), @BUILT@ (how many
of the part's patches 'make check-patches' built), @CHECKPATCH@ (the
checkpatch findings left in the part, each with its reason: ACCEPTED
below) and @BASE@.

'make check-patches' then:
  1. runs scripts/checkpatch.pl --strict on every patch: an error fails,
     and so does a warning or check that ACCEPTED gives no reason for;
  2. applies the series with 'git am' to a fresh clone of the pristine
     upstream tree, one patch at a time, and after each one builds vmlinux
     twice, with CONFIG_MIGRC=y (plus its debug mode, KUnit suites and
     sample) and with CONFIG_MIGRC=n, from the lean base config (a patch
     that touches only files no kernel build reads, NOT_BUILT, keeps the
     kernels of the patch before); after each selftest patch it also
     builds the kselftest with its own Makefile.
A patch whose tree and configs were built before (DONE) is applied but
not built again, so a run cut short resumes where it stopped.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable
from typing import Any
from pathlib import Path

from . import bench, hostsetup, kbuild, tree
from .common import (BUILD, HARNESS, REPO, HarnessError, StrPath, log, out,
                     run)

OUT = BUILD / "patches"
CHECK = BUILD / "patch-check"


class Part:
    """A part of the series, posted on its own with its cover letter."""

    def __init__(self, name: str, template: str, first: str | None,
                 scenarios: tuple[str, ...], outro: str) -> None:
        self.name = name                  # its directory in build/patches
        self.template = REPO / "patches" / template
        self.first = first                # subject of its first patch
        self.scenarios = scenarios        # its rows of results/
        self.outro = outro                # what those scenarios do


PARTS = [
    Part("1-anon", "cover-letter.in", None,
         ("migrate", "tiering-ro", "demote-ro"),
         "migrate: 64 MiB read-only, 3 reader CPUs, migrate_pages() "
         "ping-pong. tiering-ro: 640 MiB made read-only after the fill, "
         "NUMA balancing in tiering mode, demotion on, random lookups in a "
         "sliding hot window. demote-ro: NUMA balancing off, reclaim "
         "demotes a read-only region's cold part, move_pages() brings it "
         "back."),
    Part("2-pagecache", "cover-letter-pagecache.in",
         "mm/migrc: defer the flush of page-cache folios nobody may write",
         ("tiering-file",),
         "tiering-file: the tiering workload on a 640 MiB tmpfs file "
         "written and closed first, then mapped from a read-only "
         "descriptor by every thread and never written."),
    Part("3-cold", "cover-letter-cold.in",
         "mm/migrc: take the write bit from cold pages in walks that flush "
         "anyway",
         ("tiering", "tiering-write"),
         "tiering: the tiering workload on 640 MiB written once at start "
         "and left writable (tiering-write: 20% of the lookups write)."),
]
RESULTS = REPO / "results/bench-x86_64.json"
MICRO_RESULTS = REPO / "results/bench-micro-x86_64.json"

# checkpatch findings the series keeps: (file regex, message regex, reason).
# The file is "" for findings about the commit message or the whole patch.
ACCEPTED = [
    ("", r"does MAINTAINERS need updating",
     "the patch that adds the MIGRC option adds the MAINTAINERS entry "
     "\"MEMORY MANAGEMENT - MIGRC\" for every file the series adds; "
     "checkpatch asks again in each later patch that adds one."),
    (r"^tools/testing/(selftests/)?migrc/", r"Use of volatile is usually wrong",
     "the tests read through volatile pointers on purpose: every load must "
     "go through the TLB, and loads the compiler merged or hoisted would "
     "hide a stale translation."),
    (r"^tools/testing/selftests/migrc/", r"spaces preferred around that '\*'",
     "'FIXTURE_DATA(migrc) *self' is the kselftest harness idiom; "
     "checkpatch takes the macro call for an operand of a multiplication."),
    (r"^tools/testing/(selftests/)?migrc/", r"Prefer using the BIT macro",
     "user-space tests: BIT() is a kernel macro, not in the uapi headers "
     "they build against."),
    (r"^include/trace/events/", r"Lines should not end with a '\('|"
     r"Alignment should match open parenthesis",
     "TRACE_EVENT() is written the way every header in include/trace/events "
     "is: TP_STRUCT__entry( and friends open a block, and the fields "
     "are aligned as a table."),
    (r"^tools/testing/migrc/guest/bench\.c$",
     r"char \* array declaration might be better as static const",
     "the argv of posix_spawn() holds a command read from the environment "
     "at run time."),
]
# The findings ACCEPTED keeps, by reason: [(patch number, file, message)].
Accepted = dict[str, list[tuple[str, str, str]]]


def _bench_rows(part: Part) -> str:
    """A cover letter's results table, from the committed bench run."""
    doc = json.loads(RESULTS.read_text())
    sc = doc["scenarios"]
    # A paired run gives each row its ratio and interval; older files, the
    # change of the medians and their spread.
    paired = doc.get("paired")

    def med(s: str, kernel: str, m: str) -> float:
        return sc[s][kernel]["median"][m]

    rows: list[tuple[str, str, str, str, str]] = []

    def row(label: str, s: str, m: str, fmt: str = "{:,.0f}") -> None:
        r = (paired or {}).get(s, {}).get(m)
        if r:
            mean, ci, _ = bench.ratio_cell(r)
            rows.append((label, fmt.format(r["vanilla_median"]),
                         fmt.format(r["migrc_median"]), mean, ci))
            return
        v, g = med(s, "vanilla", m), med(s, "migrc", m)
        change = f"{100 * (g - v) / v:+.1f}%" if v else "-"
        rows.append((label, fmt.format(v), fmt.format(g), change,
                     f"{bench.spread(sc[s]['vanilla'], m)}/"
                     f"{bench.spread(sc[s]['migrc'], m)}"))

    if "migrate" in part.scenarios and "migrate" in sc:
        row("migrate: TLB shootdown IPIs", "migrate", "tlb_shootdowns")
        row("migrate: reader words/s", "migrate", "ops_per_s")
    for s in part.scenarios:
        if s in sc and s != "migrate":
            row(f"{s}: shootdowns/1k migrated", s,
                "shootdowns_per_1k_migrated", "{:.2f}")
            row(f"{s}: ops/s", s, "ops_per_s")
    head = ("", "vanilla", "MIGRC", "MIGRC/vanilla", "95% CI") if paired \
        else ("", "vanilla", "MIGRC", "change", "spread")
    w = [max(len(r[i]) for r in rows + [head]) for i in range(5)]
    lines = ["  " + "  ".join(c.ljust(w[0]) if i == 0 else c.rjust(w[i])
                              for i, c in enumerate(r))
             for r in [head] + rows]
    nodes = ", ".join(f"node {i}: {n['mib']} MiB"
                      + ("" if n["cpus"] else " without CPUs")
                      for i, n in enumerate(doc["nodes"]))
    intro = (
        f"'make bench' (tools/testing/migrc): {doc['repetitions']} boots "
        "of each kernel, alternating, in QEMU "
        f"TCG with {doc['vcpus']} vCPUs ({nodes}, HMAT tiers), "
        f"{doc['qemu'].split(' (')[0]}. Both kernels are Linux "
        f"{doc['kernel_version']} from the same config; the MIGRC one adds "
        "this series" + _separate_runs(doc) + ".")
    outro = part.outro + " Shootdowns per migrated page, because each " \
        "run migrates a different amount. " + (
            "Medians of the boots; MIGRC/vanilla: geometric mean of the "
            "ratios of each repetition's two boots, with its 95% confidence "
            "interval." if paired else
            "Medians of the boots; spread: (max - min) / median over the "
            "boots, vanilla/MIGRC.")
    micro = _micro_rows() if part.first is None else ""
    return (_wrap(intro, 0) + "\n\n" + "\n".join(lines) + "\n\n"
            + _wrap(outro, 0) + micro)


def _separate_runs(doc: dict[str, Any]) -> str:
    """The states of the series the committed runs measured, if they were
    not all made on the series as it is."""
    runs = doc.get("separate_runs") or {}
    return (" as it was when they ran: " + "; ".join(runs.values())
            if runs else "")


def _micro_rows() -> str:
    """The fast paths: 'make bench MICRO=1', the ratio and its 95% CI."""
    if not MICRO_RESULTS.exists():
        return ""
    doc = json.loads(MICRO_RESULTS.read_text())
    lines = [f"  {'':12}  {'MIGRC/vanilla':>13}  {'95% CI':>16}"]
    for sc, r in doc["ratios"].items():
        if "ci95" in r:
            lo, hi = r["ci95"]
            lines.append(f"  {sc:12}  {r['ratio_mean']:13.4f}  "
                         f"[{lo:.4f}, {hi:.4f}]")
    intro = (f"Fast paths ('make bench MICRO=1'): {doc['repetitions']} + "
             f"{doc['repetitions']} alternating boots, one scenario per boot; "
             "geometric mean of the per-repetition throughput ratios and "
             "its 95% confidence interval.")
    return "\n\n" + _wrap(intro, 0) + "\n\n" + "\n".join(lines)


def _checkpatch_text(accepted_hits: Accepted) -> str:
    if not accepted_hits:
        return "checkpatch --strict reports nothing."
    parts = ["checkpatch --strict reports no errors. What it still reports:"]
    for reason, hits in accepted_hits.items():
        names = sorted({h[0] for h in hits}, key=int)
        msgs = sorted({h[2] for h in hits})
        parts.append(f"\n- \"{msgs[0]}\"\n  ({len(hits)}x in patch "
                     f"{', '.join(names)})\n  " + _wrap(reason, 2))
    return "\n".join(parts)


def _wrap(text: str, indent: int, width: int = 72) -> str:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width - indent:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return ("\n" + " " * indent).join(lines)


def _git(*args: str) -> str:
    return out(["git", "-C", str(tree.TREE), *args])


def _part_ranges() -> list[tuple[Part, str, str]]:
    """(part, first commit's parent, last commit) of each part, in order."""
    base = _git("rev-parse", "refs/tags/upstream^{commit}")
    commits = _git("rev-list", "--reverse", f"{base}..{tree.BRANCH}").split()
    subjects = [_git("log", "-1", "--format=%s", c) for c in commits]
    starts = []
    for part in PARTS:
        if part.first is None:
            starts.append(0)
        elif part.first in subjects:
            starts.append(subjects.index(part.first))
        else:
            raise HarnessError(f"part {part.name}: no patch '{part.first}'")
    ranges = []
    for i, part in enumerate(PARTS):
        lo, hi = starts[i], (starts[i + 1] if i + 1 < len(PARTS)
                             else len(commits))
        if hi <= lo:
            raise HarnessError(f"part {part.name} has no patch")
        ranges.append((part, commits[lo - 1] if lo else base,
                       commits[hi - 1]))
    return ranges


def _format_part(part: Part, start: str, end: str) -> list[Path]:
    """git format-patch of one part; return its paths (cover first)."""
    base = _git("rev-parse", "refs/tags/upstream^{commit}")
    dest = OUT / part.name
    # The cover letter's From: is the committer; make it the series'.
    ident = ["-c", "user.name=MIGRC developers", "-c",
             "user.email=migrc@localhost"]
    # --base=upstream: a later part lists the earlier parts' patches as
    # its prerequisites.
    run(["git", "-C", str(tree.TREE), *ident, "format-patch", "-q",
         "--cover-letter", "--zero-commit", f"--base={base}",
         "-o", str(dest), f"{start}..{end}"], quiet=True)
    return sorted(dest.glob("*.patch"))


def _built(start: str, end: str) -> str:
    """What 'make check-patches' showed of the part's patches: built with
    CONFIG_MIGRC=y and =n (by their trees, as it records them), or left to
    the patch before because they touch nothing a kernel build reads."""
    commits = _git("rev-list", "--reverse", f"{start}..{end}").split()
    done = _built_before()
    shown = 0
    for c in commits:
        touched = _git("diff-tree", "--no-commit-id", "-r", "--name-only",
                       c).split()
        if (_build_key(tree.TREE, c) in done
                or all(f.startswith(NOT_BUILT) for f in touched)):
            shown += 1
    if shown == len(commits):
        return ("Every patch builds with CONFIG_MIGRC=y and =n (x86_64, "
                "LLVM 22, Rust 1.96; 'make check-patches').")
    return (f"'make check-patches' has built {shown} of these "
            f"{len(commits)} patches with CONFIG_MIGRC=y and =n so far.")


def _knobs(end: str, since: str) -> str:
    """The round trips the part from @since to @end adds to
    run_migrc_safety.sh: each safety rule broken on purpose, with the
    selftests that must then fail."""
    def pairs(rev: str) -> list[tuple[str, str]]:
        path = "tools/testing/selftests/migrc/run_migrc_safety.sh"
        try:
            script = _git("show", f"{rev}:{path}")
        except HarnessError:
            return []
        m = re.search(r'^knob_tests="([^"]*)"', script, re.M)
        words = m.group(1).split() if m else []
        return [(w.partition(":")[0], w.partition(":")[2]) for w in words]
    before = set(pairs(since))
    tests: dict[str, list[str]] = {}
    for rule, test in pairs(end):
        if (rule, test) not in before:
            tests.setdefault(rule, []).append(test)
    if not tests:
        raise HarnessError(f"no round trip added between {since[:12]} and "
                           f"{end[:12]}")
    w = max(len(r) for r in tests) + 2
    return "\n".join([f"  {'rule broken':{w}}tests that fail"]
                     + [f"  {r:{w}}{', '.join(t)}" for r, t in tests.items()])


def _kunit(end: str) -> str:
    """The Rust KUnit cases of MIGRC's core at @end."""
    files = _git("ls-tree", "--name-only", end,
                 "rust/kernel/mm/migrc/").split()
    suites = cases = 0
    for f in files:
        if f.endswith(".rs"):
            text = _git("show", f"{end}:{f}")
            suites += len(re.findall(r"#\[macros::kunit_tests\(", text))
            cases += len(re.findall(r"^\s*#\[test\]", text, re.M))
    return f"{cases} cases in {suites} rust_migrc_* suites"


def _checkpatch(patches: Iterable[Path],
                label: str) -> tuple[list[str], list[str], Accepted]:
    """checkpatch --strict over every patch: (errors, unexplained, accepted).
    A finding names its patch as "<label> patch <number>"."""
    errors: list[str] = []
    unexplained: list[str] = []
    accepted: Accepted = {}
    # spdxcheck.py needs Debian's python3 (python3-ply), whatever comes
    # first on PATH.
    env = {"PATH": "/usr/bin:" + os.environ.get("PATH", "")}
    for p in patches:
        num = p.name[:4].lstrip("0")
        r = run([str(tree.TREE / "scripts/checkpatch.pl"), "--strict",
                 "--terse", "--showfile", "--no-summary", str(p)],
                cwd=tree.TREE, env=env, check=False, capture=True, quiet=True)
        for line in r.stdout.splitlines():
            m = re.match(r"^(.*?):\d+: (ERROR|WARNING|CHECK): (.*)$", line)
            if not m:
                continue
            fname, kind, msg = m.groups()
            fname = "" if fname == p.name or fname.endswith(".patch") or \
                fname == "MAINTAINERS" else fname
            hit = (num, fname, msg)
            if kind == "ERROR":
                errors.append(f"{label} patch {num}: {line}")
                continue
            for frx, mrx, reason in ACCEPTED:
                if re.search(mrx, msg) and (not frx or re.search(frx, fname)):
                    accepted.setdefault(reason, []).append(hit)
                    break
            else:
                unexplained.append(f"{label} patch {num}: {line}")
    return errors, unexplained, accepted


def export() -> tuple[list[Path], list[str], list[str]]:
    """'make patches': write each part and its cover letter to OUT."""
    tree.materialize()
    if OUT.exists():
        shutil.rmtree(OUT)
    version = hostsetup.source_version(hostsetup.fetch_source_deb())
    series: list[Path] = []
    errors: list[str] = []
    unexplained: list[str] = []
    for part, start, end in _part_ranges():
        patches = _format_part(part, start, end)
        cover, mine = patches[0], patches[1:]
        e, u, accepted = _checkpatch(mine, part.name)
        errors += e
        unexplained += u
        subject, body = part.template.read_text().split("\n", 1)
        values = {
            "@RESULTS@": _bench_rows(part),
            "@KNOBS@": _knobs(end, start),
            "@KUNIT@": _kunit(end),
            "@BUILT@": _wrap(_built(start, end), 2),
            "@CHECKPATCH@": _checkpatch_text(accepted),
            "@BASE@": (f"Linux 7.3 as Debian ships it\n"
                       f"({hostsetup.SOURCE_PKG} {version})"),
        }
        body = body.strip("\n")
        for key, value in values.items():
            body = body.replace(key, value)
        left = re.findall(r"@[A-Z]+@", body)
        if left:
            raise HarnessError(f"{part.template.name}: unknown {left}")
        text = cover.read_text()
        for placeholder, value in (("*** SUBJECT HERE ***", subject),
                                   ("*** BLURB HERE ***", body)):
            if placeholder not in text:
                raise HarnessError(f"{cover.name}: no '{placeholder}' to fill")
            text = text.replace(placeholder, value)
        cover.write_text(text)
        log(f"{part.name}: {len(mine)} patches and a cover letter in "
            f"{OUT / part.name}")
        for p in patches:
            print(f"  {p.name}")
        series += mine
    return series, errors, unexplained


# What no vmlinux build reads: a patch that touches only these builds
# the same kernels as the patch before it.
NOT_BUILT = ("Documentation/", "tools/testing/", "MAINTAINERS")

# The configurations every patch is built with.
BUILDS = {"y": ["base.config", "x86_64.config", "migrc.config",
                "migrc-test.config"],
          "n": ["base.config", "x86_64.config", "nomigrc.config"]}


# One line per patch whose kernels built: its tree and configs' key.
DONE = CHECK / "built-trees"


def _build_key(src: StrPath, rev: str = "HEAD") -> str:
    """The tree of @rev in @src and the config fragments it is built with."""
    h = hashlib.sha256(out(["git", "-C", str(src), "rev-parse",
                            f"{rev}^{{tree}}"]).encode())
    for frags in BUILDS.values():
        for f in frags:
            h.update((HARNESS / "configs" / f).read_bytes())
    return h.hexdigest()


def _built_before() -> set[str]:
    return set(DONE.read_text().split()) if DONE.exists() else set()


def _fresh_tree() -> Path:
    """A clone of the pristine upstream tree at CHECK/linux, reset to it."""
    src = CHECK / "linux"
    if not (src / ".git").exists():
        if src.exists():
            shutil.rmtree(src)
        CHECK.mkdir(parents=True, exist_ok=True)
        log(f"cloning pristine upstream into {src}")
        run(["git", "clone", "-q", "--shared", "--no-checkout",
             str(hostsetup.UPSTREAM), str(src)], quiet=True)
    git = ["git", "-C", str(src)]
    run(git + ["am", "--abort"], check=False, capture=True, quiet=True)
    run(git + ["checkout", "-q", "-f", "--detach", "refs/tags/upstream"],
        quiet=True)
    run(git + ["clean", "-q", "-fdx"], quiet=True)
    return src


def _configure(src: StrPath, outdir: Path, frags: Iterable[str]) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    allconf = outdir / "fragments.config"
    allconf.write_text("".join((HARNESS / "configs" / f).read_text()
                               for f in frags))
    _make(src, outdir, "alldefconfig", f"KCONFIG_ALLCONFIG={allconf}",
          logname=f"{outdir.name}-config")


def _make(src: StrPath, outdir: StrPath, *targets: str,
          logname: str) -> subprocess.CompletedProcess[str]:
    cmd = ["make", "-C", str(src), f"O={outdir}", f"-j{kbuild.jobs()}",
           *kbuild.make_vars(), *targets]
    return run(cmd, env=kbuild.make_env(), quiet=True,
               logfile=BUILD / "logs" / f"{logname}.log")


def check(first: int = 1) -> int:
    """'make check-patches': checkpatch, git am, and a build per patch.

    @first: the first patch to build (FROM=n, for a series that grew on a
    machine without the record of the run that built the patches before:
    those are checked and applied, not built).
    """
    series, errors, unexplained = export()
    t0 = time.monotonic()
    for e in errors + unexplained:
        print("  " + e)
    if errors or unexplained:
        raise HarnessError(
            f"checkpatch: {len(errors)} errors, {len(unexplained)} findings "
            "without a reason (fix them, or give the reason in ACCEPTED in "
            "migrc_harness/patches.py)")
    log(f"checkpatch --strict: no errors; every remaining finding has its "
        f"reason in the cover letter")
    src = _fresh_tree()
    env = {k: v for k, v in tree.IDENT.items() if 'COMMITTER' in k}
    done = _built_before()
    earlier = 0
    for i, patch in enumerate(series, 1):
        # Whitespace errors (a blank line at the end of a file) would make
        # a maintainer's 'git am' warn: fail on them.
        run(["git", "-C", str(src), "am", "-q", "--whitespace=error-all",
             str(patch)], env=env, quiet=True)
        touched = out(["git", "-C", str(src), "diff-tree", "--no-commit-id",
                       "-r", "--name-only", "HEAD"]).split()
        subject = out(["git", "-C", str(src), "log", "-1", "--format=%s"])
        log(f"[{i}/{len(series)}] {subject} "
            f"({time.monotonic() - t0:.0f}s so far)")
        has_kconfig = "config MIGRC\n" in (src / "mm/Kconfig").read_text()
        built = [f for f in touched if not f.startswith(NOT_BUILT)]
        if i < first:
            log(f"  applied, not built (FROM={first})")
        elif not built and i > 1:
            log("  touches nothing a kernel build reads: the kernels of "
                "the patch before stand")
        build_now = i >= first and (bool(built) or i == first)
        key = _build_key(src)
        if build_now and key in done:
            log("  this tree was built before (build/patch-check/"
                "built-trees): not built again")
            earlier += 1
            build_now = False
        for name, frags in BUILDS.items() if build_now else ():
            outdir = CHECK / f"kbuild-{name}"
            _configure(src, outdir, frags)
            want = name if has_kconfig else "n"
            have = kbuild.config_value(outdir, "CONFIG_MIGRC") or "n"
            if have != want:
                raise HarnessError(f"patch {i}: CONFIG_MIGRC is {have} in "
                                   f"the {name} build, not {want}")
            s = time.monotonic()
            _make(src, outdir, "vmlinux", logname=f"patch-check-{i:02d}-{name}")
            log(f"  CONFIG_MIGRC={name}: vmlinux built "
                f"({time.monotonic() - s:.0f}s)")
        if build_now:
            with DONE.open("a") as f:
                f.write(key + "\n")
        if i >= first and any(f.startswith("tools/testing/selftests/migrc/")
                              for f in touched):
            outdir = CHECK / "kbuild-y"
            _make(src, outdir, "headers", logname=f"patch-check-{i:02d}-hdr")
            sel = CHECK / "selftests"
            sel.mkdir(exist_ok=True)
            run(["make", "-C", str(src / "tools/testing/selftests/migrc"),
                 f"OUTPUT={sel}", "CC=gcc",
                 f"KHDR_INCLUDES=-isystem {outdir / 'usr/include'}"],
                quiet=True, logfile=BUILD / "logs" / "patch-check-selftest.log")
            log(f"  kselftest migrc_safety built with its Makefile")
    applied = out(["git", "-C", str(src), "rev-list", "--count",
                   "refs/tags/upstream..HEAD"])
    log(f"the series applies with git am ({applied} commits) and every patch "
        f"builds with CONFIG_MIGRC=y and =n (the kernels of a patch that "
        f"touches only NOT_BUILT files are those of the patch before; "
        f"{earlier} built by an earlier run of the same tree"
        + (f"; patches 1-{first - 1} not built: FROM={first}" if first > 1
           else "") + ") "
        f"({(time.monotonic() - t0) / 60:.1f} min)")
    return 0
