# SPDX-License-Identifier: GPL-2.0
"""'make bench': vanilla Linux 7.3 against MIGRC on the tiered VM.

Both *bench* kernels are built from the same fragments (no debugging; the
variants differ in CONFIG_MIGRC only). Boots alternate between the kernels
(A, B, A, B) to cancel drift; each boot runs every scenario once through
the guest stage 'bench', which prints one 'migrc-bench:' line per scenario.
Results: a table on stdout, build/bench/results.json, build/bench/results.png.
"""

import json
import math
import re
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from . import arches, attribution, kbuild, runner, vm
from .common import BUILD, REPO, HarnessError, StrPath, log

# {scenario: {kernel: [one boot's {metric: value}]}}
Results = dict[str, dict[str, list[dict[str, Any]]]]
# results.json: what _summarize() makes of Results.
Doc = dict[str, Any]
# A step of 'make bench': (repetition, kernel, scenarios of the boot).
Step = tuple[int, str, list[str]]

# The default run: the migration workloads, one boot per kernel and
# repetition running them all. 5 + 5 boots are the fewest whose paired
# ratios give an interval narrow enough to read (t = 2.776 at 4 degrees of
# freedom, against 4.303 for 3 + 3); a boot takes about 6 min, so the run
# fits an hour. QUICK=1 does a quarter of the work in 3 + 3 boots, the
# fewest with an interval at all, in about 14 min.
SCENARIOS = ["migrate", "tiering", "tiering-ro", "tiering-write", "demote-ro",
             "tiering-file"]
REPS = 5
QUICK_REPS = 3
# MICRO=1: the paths MIGRC must not slow down, each in its own boot, 10 + 10
# alternating boots; the verdict is a 95% confidence interval of the ratio.
MICRO = ["alloc-path", "fault-path", "munmap-path", "write-path"]
MICRO_REPS = 10
# MICRO=1 boots count time in guest instructions: with -icount shift=0 the
# guest's clocks advance 1 ns per instruction executed and, with sleep=off,
# jump over idle time. A micro benchmark's ops/s is then ops per 10^9
# instructions, the same from boot to boot whatever the host's load, so a
# 1% difference in the work a path does shows (wall-clock boots of one
# kernel under TCG differ by up to 10%). Caches and TLBs are not modelled:
# this counts the work MIGRC adds, not its cache misses.
ICOUNT_CLOCK = ("-icount", "shift=0,sleep=off")
KERNELS = ["vanilla", "migrc"]
METRICS = ["tlb_shootdowns", "nr_tlb_remote_flush",
           "nr_tlb_remote_flush_received", "nr_tlb_local_flush_all",
           "nr_tlb_local_flush_one", "pgmigrate_success", "pgdemote",
           "pgpromote", "numa_hint_faults", "pgpromote_candidate",
           "pgmigrate_fail", "pgscan_kswapd", "migrc_deferred", "ops_per_s",
           "seconds", "free_kb_end", "shootdowns_per_1k_migrated", "pgfault",
           "hot_node0_pct", "promoted_seen", "demoted_seen", "churn_seen",
           "churn_pct", "churn_pages", "sample_s"]
# The metrics compared boot by boot, with the ratio's 95% interval: the
# shootdowns first (IPIs received, rounds sent, IPIs per migrated page),
# then what explains them (volume, placement, churn, faults), then ops/s.
RATIO_METRICS = ["tlb_shootdowns", "nr_tlb_remote_flush",
                 "shootdowns_per_1k_migrated", "pgmigrate_success",
                 "hot_node0_pct", "churn_pages", "pgfault", "ops_per_s"]
OUT = BUILD / "bench"
# MIGRC's events (debugfs migrc/stats), kept per run (none on vanilla).
MIGRC_EVENTS = re.compile(r"migrc_")
LINE = re.compile(r"migrc-bench: (\S+) (.*)$")


def _config_diff(builds: dict[str, kbuild.Build]) -> list[str]:
    """The .config lines that differ between the kernels, MIGRC's aside."""
    def opts(b: kbuild.Build) -> set[str]:
        return {line for line in (b.out / ".config").read_text().splitlines()
                if line.startswith("CONFIG_") and "MIGRC" not in line}
    a, b = (opts(builds[k]) for k in KERNELS)
    return sorted(a ^ b)


def _parse(guest: vm.GuestRun) -> dict[str, dict[str, Any]]:
    """{scenario: {metric: value}} of one boot; each scenario's shootdowns
    by cause go to 'causes' ({(group, cause): {"rounds", "ipis"}}) and the
    histogram entries lost to 'chains_dropped'."""
    lines = guest.stage_output("bench")
    runs: dict[str, dict[str, Any]] = {}
    for line in lines:
        m = LINE.search(line)
        if not m:
            continue
        kv = dict(p.split("=", 1) for p in m.group(2).split() if "=" in p)
        runs[m.group(1)] = {k: float(v) for k, v in kv.items()
                            if re.fullmatch(r"-?[0-9.]+", v)}
    for vals in runs.values():
        # Tiering migrates a different number of pages in every run: the
        # shootdowns per migrated page compare kernels where totals cannot.
        if vals.get("pgmigrate_success"):
            vals["shootdowns_per_1k_migrated"] = \
                1000 * vals.get("tlb_shootdowns", 0) / vals["pgmigrate_success"]
        vals.update(churn(vals))
    for sc, chains in attribution.parse(lines).items():
        if sc in runs:
            # The raw chains too, so a later classifier can sort them again.
            runs[sc]["chains"] = {k: chains[k] for k in ("rounds", "ipis")}
            runs[sc]["causes"] = attribution.by_cause(chains)
            runs[sc]["chains_dropped"] = chains["dropped"]
            if chains["reasons"]:
                runs[sc]["flush_reasons"] = chains["reasons"]
    return runs


def churn(vals: dict[str, Any]) -> dict[str, float]:
    """The churn of a tiering run from its placement samples: the pages
    seen promoted and demoted again within one window's time, scaled from
    the sampled pages to the region (churn_pages), and as a share of the
    promotions seen (churn_pct). Nothing without samples."""
    if "churn_seen" not in vals or not vals.get("sample_stride"):
        return {}
    out = {"churn_pages": vals["churn_seen"] * vals["sample_stride"]}
    if vals.get("promoted_seen"):
        out["churn_pct"] = 100 * vals["churn_seen"] / vals["promoted_seen"]
    return out


# Two-sided 95% quantiles of Student's t, by degrees of freedom (1..30).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
        2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
        2.048, 2.045, 2.042]


def paired(per: dict[str, list[dict[str, Any]]], metric: str
           ) -> tuple[dict[int, tuple[float, float]], list[int]]:
    """One metric's (vanilla, migrc) values by repetition, and the
    repetitions left out because a kernel's boot lacks the metric. A run
    says its repetition ('rep'); runs of older files, which do not, are
    numbered in order, as they were booted."""
    def by_rep(runs: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
        return {int(r.get("rep", i)): r for i, r in enumerate(runs)}

    van, mig = by_rep(per.get("vanilla", [])), by_rep(per.get("migrc", []))
    pairs, missing = {}, []
    for rep in sorted(van.keys() | mig.keys()):
        v, m = van.get(rep, {}), mig.get(rep, {})
        if metric in v and metric in m:
            pairs[rep] = (float(v[metric]), float(m[metric]))
        else:
            missing.append(rep)
    return pairs, missing


def ratio_ci(per: dict[str, list[dict[str, Any]]],
             metric: str = "ops_per_s") -> dict[str, Any]:
    """MIGRC over vanilla for one metric of runs that alternated: the
    medians of the paired boots, the ratio of the medians, and the geometric
    mean of the ratios of the two boots of each repetition with its 95%
    confidence interval (a t interval on the logs, exponentiated: pairing
    neighbouring boots cancels drift). A repetition missing the metric on
    either kernel is left out whole ('missing'). A zero has no log: a
    repetition with a zero on one kernel leaves the metric without an
    interval ('zeros' names it; leaving the pair out would drop the boots
    that differ most), one with zeros on both is left out ('both_zero')."""
    byrep, missing = paired(per, metric)
    zeros: dict[str, list[int]] = {k: [r for r, p in byrep.items()
                                       if p[i] == 0 and p[1 - i] != 0]
                                   for i, k in enumerate(KERNELS)}
    both = [r for r, (v, m) in byrep.items() if v == 0 and m == 0]
    van = [v for v, _ in byrep.values()]
    mig = [m for _, m in byrep.values()]
    logs = [math.log(m / v) for v, m in byrep.values() if v and m]
    out: dict[str, Any] = {
        "metric": metric, "pairs": len(logs),
        "vanilla_median": statistics.median(van) if van else None,
        "migrc_median": statistics.median(mig) if mig else None}
    if missing:
        out["missing"] = missing
    if both:
        out["both_zero"] = both
    if any(zeros.values()):
        out["zeros"] = {k: r for k, r in zeros.items() if r}
        return out
    if van and mig and statistics.median(van):
        out["ratio_of_medians"] = statistics.median(mig) / \
            statistics.median(van)
    if len(logs) >= 2:
        mean = statistics.fmean(logs)
        half = T975[min(len(logs) - 1, len(T975)) - 1] * \
            statistics.stdev(logs) / math.sqrt(len(logs))
        out["ratio_mean"] = math.exp(mean)
        out["ci95"] = [math.exp(mean - half), math.exp(mean + half)]
    return out


def ratio_verdict(lo: float, hi: float, metric: str = "ops_per_s") -> str:
    """What a 95% interval of MIGRC / vanilla supports."""
    below, above = ("slower", "faster") if metric == "ops_per_s" else \
        ("lower", "higher")
    return below if hi < 1 else above if lo > 1 else "no difference shown"


def ratio_cell(r: dict[str, Any]) -> tuple[str, str, str]:
    """The mean ratio, its 95% interval and the verdict as text; where
    there is no interval, why."""
    if "ci95" in r:
        lo, hi = r["ci95"]
        return (f"{r['ratio_mean']:.3f}", f"[{lo:.3f}, {hi:.3f}]",
                ratio_verdict(lo, hi, r["metric"]))
    if "zeros" in r:
        why = "; ".join(f"0 on {k} in boot {', '.join(str(x + 1) for x in reps)}"
                        for k, reps in r["zeros"].items())
        return "-", "-", why
    return "-", "-", f"{r['pairs']} pair(s): no interval"


def _micro_table(doc: Doc) -> None:
    """One line per scenario: medians, their ratio and its 95% interval;
    'slower' only when the whole interval lies below 1."""
    print(f"{doc['repetitions']} + {doc['repetitions']} alternating boots, "
          "one scenario per boot")
    print(f"{'scenario':13} {'vanilla ops/s':>14} {'migrc ops/s':>14} "
          f"{'ratio of medians':>17} {'mean ratio':>10} {'95% CI':>17}  "
          "verdict")
    for sc, r in doc["ratios"].items():
        if "ci95" not in r:
            continue
        lo, hi = r["ci95"]
        verdict = ratio_verdict(lo, hi)
        print(f"{sc:13} {r['vanilla_median']:14.5g} {r['migrc_median']:14.5g} "
              f"{r['ratio_of_medians']:17.4f} {r['ratio_mean']:10.4f} "
              f"[{lo:.4f}, {hi:.4f}]  {verdict}")


class _Progress:
    """One line per step: kernel, repetition, scenario, time spent and an
    estimate of the time left (from the boots done so far)."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps, self.t0 = steps, time.monotonic()
        self.boot0, self.step = self.t0, 0

    def boot(self, i: int) -> None:
        self.step, self.boot0 = i, time.monotonic()

    def left(self) -> str:
        now = time.monotonic()
        if not self.step:
            return "estimate after the first boot"
        per_boot = (self.boot0 - self.t0) / self.step
        left = per_boot * (len(self.steps) - self.step) - (now - self.boot0)
        return f"about {max(left, 0) / 60:.1f} min left"

    def echo(self, line: str) -> None:
        if "migrc-guest:" in line:
            log("guest: " + line.split("migrc-guest: ", 1)[1])
            return
        m = re.search(r"bench: (\S+) starts$", line)
        if m:
            rep, kernel = self.steps[self.step][:2]
            done = (time.monotonic() - self.t0) / 60
            log(f"  {kernel} {rep + 1}: {m.group(1)} ({done:.1f} min, "
                f"{self.left()})")


def _pick(arg: str | None, known: list[str], what: str) -> list[str]:
    """The comma-separated subset of known named by arg (all if None)."""
    if not arg:
        return list(known)
    picked = [x for x in arg.split(",") if x]
    unknown = [x for x in picked if x not in known]
    if unknown:
        raise HarnessError(f"unknown {what}: {', '.join(unknown)} "
                           f"(known: {', '.join(known)})")
    return picked


def _check_workload(path: StrPath) -> Path:
    """A user workload must be a static executable: the VM has no libc."""
    p = Path(path)
    if not p.is_file():
        raise HarnessError(f"WORKLOAD {path}: no such file")
    head = p.read_bytes()[:4]
    if head != b"\x7fELF":
        raise HarnessError(f"WORKLOAD {path}: not an ELF executable")
    if _has_interp(p):
        raise HarnessError(f"WORKLOAD {path}: dynamically linked; build it "
                           "with -static")
    return p.resolve()


def _has_interp(p: Path) -> bool:
    out = subprocess.run(["readelf", "-lW", str(p)], capture_output=True,
                         text=True).stdout
    return "INTERP" in out


def boot_cmdline(group: list[str], quick: bool, append: str) -> str:
    """The kernel command line a bench boot adds: its scenarios, the
    quarter-size flag, and the user's APPEND."""
    return " ".join(filter(None, (f"harness.bench={':'.join(group)}",
                                  "harness.quick=1" if quick else "",
                                  append)))


def bench(quick: bool = False, reps: int | None = None,
          workload: StrPath | None = None, args: str = "",
          scenarios: str | None = None, kernels: str | None = None,
          micro: bool = False, append: str = "") -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    binary = _check_workload(workload) if workload else None
    default = MICRO if micro else SCENARIOS
    names = _pick(scenarios, SCENARIOS + MICRO, "scenarios") \
        if scenarios else list(default)
    booted = _pick(kernels, KERNELS, "kernels")
    builds = {k: kbuild.Build("bench", k) for k in KERNELS}
    images = {k: builds[k].build() for k in booted}
    if len(booted) == len(KERNELS):
        diff = _config_diff(builds)
        if diff:
            raise HarnessError("the bench kernels differ beyond CONFIG_MIGRC:"
                               "\n  " + "\n  ".join(diff[:20]))
    # What was built: taken before the boots, which take an hour.
    commit = run_commit()
    progs = runner.guest_programs(builds[booted[-1]])
    if binary:
        progs["user-workload"] = binary
        names.append("user")
    initrd = vm.build_initramfs(
        progs, name="initramfs-bench",
        files={"/migrc/user-args": args + "\n"} if binary else None)
    reps = reps or (MICRO_REPS if micro else QUICK_REPS if quick else REPS)
    results: Results = {s: {k: [] for k in booted} for s in names}
    # One boot per (repetition, kernel) runs every scenario; MICRO=1 boots
    # once per scenario as well, so no scenario runs after another's
    # leftovers. Kernels alternate within a repetition to cancel drift.
    # The order swaps every repetition (A B, B A, ...), so a steady drift
    # does not favour the kernel that boots second.
    groups = [[sc] for sc in names] if micro else [names]
    steps = [(r, k, g) for r in range(reps) for g in groups
             for k in (booted if r % 2 == 0 else booted[::-1])]
    progress = _Progress(steps)
    for i, (rep, kernel, group) in enumerate(steps):
        progress.boot(i)
        log(f"bench {i + 1}/{len(steps)}: boot {kernel}, repetition "
            f"{rep + 1} ({(time.monotonic() - progress.t0) / 60:.1f} min, "
            f"{progress.left()})")
        name = f"{kernel}-{rep}" + (f"-{group[0]}" if micro else "")
        guest = vm.boot(images[kernel], initrd, ["bench"], 3600,
                        BUILD / "logs" / f"console-bench-{name}.log",
                        extra_append=boot_cmdline(group, quick or micro,
                                                  append),
                        echo=progress.echo,
                        clock=ICOUNT_CLOCK if micro else (),
                        hang=None)
        verdict = guest.stages.get("bench", ("missing", None))[0]
        if verdict != "pass" or guest.reports or guest.exit_code:
            raise HarnessError(f"bench boot of {kernel} failed ({verdict}); "
                               f"see build/logs/console-bench-{name}.log")
        for sc, vals in _parse(guest).items():
            log(f"  {sc}: " + ", ".join(
                f"{m}={vals[m]:g}" for m in ("tlb_shootdowns", "ops_per_s",
                                             "migrc_deferred") if m in vals))
            if vals.get("chains_dropped"):
                log(f"  warning: {sc} on {kernel}: the shootdown histograms "
                    f"dropped {vals['chains_dropped']:g} entries; its "
                    "attribution is incomplete")
            # Pairs are made by repetition, not by position in the list.
            vals["rep"] = rep
            results[sc][kernel].append(vals)
    doc = _summarize(results, reps)
    doc |= {"commit": commit, "quick": quick or micro,
            "minutes": round((time.monotonic() - progress.t0) / 60, 1)}
    if append:
        doc["append"] = append
    out = OUT / ("results-micro.json" if micro else "results.json")
    if micro:
        clock = {"clock": " ".join(ICOUNT_CLOCK)}
        doc["ratios"] = {sc: ratio_ci(per) | clock
                         for sc, per in results.items()
                         if all(per.get(k) for k in KERNELS)}
        out.write_text(json.dumps(doc, indent=1) + "\n")
        _micro_table(doc)
    else:
        out.write_text(json.dumps(doc, indent=1) + "\n")
        _table(doc)
        _cause_table(doc)
        print()
        _paired_table(doc)
        _chart(doc)
    log(f"results: {out}")
    return 0


def _git(repo: Path, *args: str) -> str | None:
    """A git command's output in repo, None if it fails."""
    r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                       text=True)
    return r.stdout.rstrip("\n") if r.returncode == 0 else None


def run_commit() -> dict[str, Any]:
    """What a run measured: this repository's HEAD, whether its work tree
    differed from it (untracked files too: an overlay file may be new), and
    the HEAD of build/linux, whose commits 'make sync' may not have taken
    back yet."""
    status = _git(REPO, "status", "--porcelain") or ""
    out: dict[str, Any] = {"head": _git(REPO, "rev-parse", "HEAD"),
                           "dirty": bool(status)}
    if status:
        out["dirty_paths"] = [line[3:] for line in status.splitlines()][:20]
    linux = BUILD / "linux"
    out["linux_head"] = _git(linux, "rev-parse", "HEAD") \
        if (linux / ".git").exists() else None
    return out


# results.json's layout: 2 added the ratios of the boots paired by
# repetition with their intervals ('paired'), 'commit', and the placement
# figures.
FORMAT = 2


def _summarize(results: Results, reps: int) -> Doc:
    # 'make bench' boots x86_64 only.
    qemu = subprocess.run([arches.ARCHES["x86_64"].qemu[0], "--version"],
                          capture_output=True, text=True).stdout.split("\n")[0]
    doc: Doc = {"format": FORMAT, "kernel_version": "7.3", "qemu": qemu,
                "vcpus": arches.VCPUS,
                "nodes": [{"mib": n[0], "cpus": n[1]} for n in arches.NODES],
                "repetitions": reps, "scenarios": {}, "paired": {}}
    for sc, per in results.items():
        doc["scenarios"][sc] = {}
        if all(per.get(k) for k in KERNELS):
            doc["paired"][sc] = {
                m: ratio_ci(per, m) for m in RATIO_METRICS
                if any(m in r for k in KERNELS for r in per[k])}
        for kernel, runs in per.items():
            agg: dict[str, Any] = {"median": {}, "min": {}, "max": {},
                                   "runs": runs}
            for m in METRICS:
                vals = [r[m] for r in runs if m in r]
                if vals:
                    agg["median"][m] = statistics.median(vals)
                    agg["min"][m] = min(vals)
                    agg["max"][m] = max(vals)
            for m in sorted({k for r in runs for k in r
                             if MIGRC_EVENTS.match(k)}):
                agg["median"][m] = statistics.median(r.get(m, 0)
                                                     for r in runs)
            causes = attribution.summarize(
                [r["causes"] for r in runs if "causes" in r])
            for r in runs:
                # JSON keys are strings: "group|cause".
                r["causes"] = {"|".join(k): v
                               for k, v in r.get("causes", {}).items()}
            reasons = [r["flush_reasons"] for r in runs
                       if "flush_reasons" in r]
            if causes and reasons:
                causes["reasons"] = attribution.summarize_reasons(reasons)
            if causes:
                agg["attribution"] = causes
            doc["scenarios"][sc][kernel] = agg
    return doc


def _paired_table(doc: Doc) -> None:
    """The headline: per scenario and metric of RATIO_METRICS, the medians
    of the paired boots, the mean ratio MIGRC / vanilla, its 95% interval
    and what the interval supports."""
    n = doc["repetitions"]
    print(f"{n} + {n} alternating boots; MIGRC / vanilla: geometric mean of "
          "the ratios of each repetition's two boots, 95% interval")
    print(f"{'scenario':14} {'metric':27} {'vanilla':>11} {'migrc':>11} "
          f"{'ratio':>7} {'95% CI':>16}  verdict")
    for sc, ratios in doc.get("paired", {}).items():
        for m, r in ratios.items():
            if r["vanilla_median"] is None:
                continue
            mean, ci, verdict = ratio_cell(r)
            print(f"{sc:14} {m:27} {r['vanilla_median']:11.4g} "
                  f"{r['migrc_median']:11.4g} {mean:>7} {ci:>16}  {verdict}")


def _table(doc: Doc) -> None:
    cols = ["tlb_shootdowns", "nr_tlb_remote_flush_received",
            "shootdowns_per_1k_migrated", "migrc_deferred",
            "pgmigrate_success", "pgdemote", "pgpromote", "numa_hint_faults",
            "pgpromote_candidate", "pgmigrate_fail", "pgscan_kswapd",
            "hot_node0_pct", "churn_pct", "pgfault", "ops_per_s", "seconds",
            "sample_s", "free_kb_end"]
    print(f"medians of {doc['repetitions']} runs; spread = (max - min) / "
          "median")
    print(f"{'scenario':14} {'metric':27} {'vanilla':>11} {'migrc':>11} "
          f"{'change':>8} {'spread v/m':>13}")
    for sc, per in doc["scenarios"].items():
        for m in cols:
            van, mig = per.get("vanilla", {}), per.get("migrc", {})
            v = van.get("median", {}).get(m)
            g = mig.get("median", {}).get(m)
            if v is None or g is None or (not v and not g):
                continue
            change = f"{100 * (g - v) / v:+.1f}%" if v else "-"
            sp = f"{spread(van, m)}/{spread(mig, m)}"
            print(f"{sc:14} {m:27} {v:11.4g} {g:11.4g} {change:>8} "
                  f"{sp:>13}")


def spread(agg: dict[str, Any], m: str) -> str:
    """(max - min) / median of one metric over a kernel's runs."""
    med = agg["median"].get(m)
    if not med or m not in agg.get("max", {}):
        return "-"
    return f"{100 * (agg['max'][m] - agg['min'][m]) / med:.0f}%"


def _cause_table(doc: Doc) -> None:
    """Per scenario: each kernel's shootdown rounds and IPIs by cause
    (medians), the floor (what MIGRC's kernel sends that is not its own)
    and MIGRC's distance to it."""
    for sc, per in doc["scenarios"].items():
        att = {k: a.get("attribution") for k, a in per.items()
               if a.get("attribution")}
        if not att:
            continue
        print(f"\n{sc}: shootdown rounds / IPIs by cause (medians)")
        causes = sorted({c for a in att.values() for c in a["causes"]})
        print(f"  {'cause':52} " + " ".join(f"{k:>17}" for k in att))
        for c in causes:
            vals = [a["causes"].get(c, {"rounds": 0, "ipis": 0})
                    for a in att.values()]
            print(f"  {c.split('|', 1)[1][:52]:52} " + " ".join(
                f"{v['rounds']:8g}/{v['ipis']:<8g}" for v in vals))
        mig = att.get("migrc")
        if not mig:
            continue
        for reason, v in mig.get("reasons", {}).items():
            print(f"  {'MIGRC flush, reason ' + reason:52} "
                  f"{v['flushes']:8g} flushes, {v['cpus']:g} CPUs asked")
        floor, own = mig["floor"], mig["groups"]["migrc"]
        total = per["migrc"]["median"]
        above = 100 * own["ipis"] / floor["ipis"] if floor["ipis"] else 0.0
        print(f"  floor (MIGRC kernel, not MIGRC's own): "
              f"{floor['rounds']:g} rounds / {floor['ipis']:g} IPIs; "
              f"MIGRC's own {own['rounds']:g} / {own['ipis']:g}: "
              f"{above:+.1f}% above the floor")
        refused = {k: v for k, v in total.items()
                   if k.startswith("migrc_refused") and v}
        if refused:
            print("  refusals (median): " + ", ".join(
                f"{k[len('migrc_refused_'):]}={v:g}"
                for k, v in refused.items()))


def _bar(doc: Doc, sc: str, metric: str
         ) -> tuple[float, float, float] | None:
    """A chart bar: MIGRC as % of vanilla and the whisker's ends. The mean
    paired ratio and its 95% interval where the run has them; for files
    without pairs, the ratio of the medians and MIGRC's min and max."""
    r = doc.get("paired", {}).get(sc, {}).get(metric)
    if r is not None:
        if "ci95" not in r:
            return None
        return (100 * r["ratio_mean"], 100 * r["ci95"][0],
                100 * r["ci95"][1])
    van, mig = doc["scenarios"][sc]["vanilla"], doc["scenarios"][sc]["migrc"]
    base = van["median"].get(metric)
    if not base or metric not in mig["median"]:
        return None
    med, lo, hi = (mig[k][metric] for k in ("median", "min", "max"))
    return 100 * med / base, 100 * lo / base, 100 * hi / base


def _chart(doc: Doc) -> None:
    """MIGRC relative to vanilla per scenario: shootdown IPIs (per migrated
    page where pages migrate; the medians written on the bars) and
    throughput, whiskers the 95% interval; and the placement of the tiering
    runs: the hot window's share on node 0, both kernels, with the churn."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("no matplotlib: no results.png")
        return
    scs = [sc for sc, per in doc["scenarios"].items()
           if all(per.get(k, {}).get("median") for k in KERNELS)]
    if not scs:
        return
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    interval = "95% interval" if doc.get("paired") else "min-max"
    panels = ((axes[0], "tlb_shootdowns", "TLB shootdown IPIs, % of vanilla, "
               "per migrated page if any (lower is better)"),
              (axes[1], "ops_per_s", "ops/s, % of vanilla (TCG: mostly IPI "
               "cost and pages copied)"))
    for ax, panel_metric, title in panels:
        xs, meds, lo, hi, labels = [], [], [], [], []
        for i, sc in enumerate(scs):
            metric = panel_metric
            van = doc["scenarios"][sc]["vanilla"]["median"]
            mig = doc["scenarios"][sc]["migrc"]["median"]
            if metric == "tlb_shootdowns" and \
                    van.get("shootdowns_per_1k_migrated"):
                # The volume migrated differs between runs: compare rates.
                metric = "shootdowns_per_1k_migrated"
            bar = _bar(doc, sc, metric)
            if bar is None:
                continue
            xs.append(i)
            meds.append(bar[0])
            lo.append(max(bar[0] - bar[1], 0))
            hi.append(max(bar[2] - bar[0], 0))
            labels.append(f"{van[metric]:,.4g}\u2192{mig[metric]:,.4g}")
        bars = ax.bar(xs, meds, 0.6, yerr=[lo, hi], capsize=3,
                      color=["tab:green" if (m < 100) ==
                             (panel_metric == "tlb_shootdowns")
                             else "tab:red" for m in meds])
        if panel_metric == "tlb_shootdowns":
            ax.bar_label(bars, labels, fontsize=7, padding=2)
        ax.axhline(100, color="black", linewidth=0.8)
        ax.set_xticks(range(len(scs)), scs, rotation=20)
        ax.set_title(title, fontsize=9)
    _placement_panel(axes[2], doc)
    fig.suptitle(f"MIGRC vs vanilla Linux {doc['kernel_version']}, "
                 f"{doc['repetitions']} + {doc['repetitions']} boots, "
                 f"whiskers: {interval} ({doc['vcpus']} vCPUs, TCG)",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(OUT / "results.png", dpi=110)
    log(f"chart: {OUT / 'results.png'}")


def _placement_panel(ax: Any, doc: Doc) -> None:
    """Per tiering scenario, both kernels: the median share of the hot
    window on node 0, the churn share of the promotions written above."""
    scs = [sc for sc, per in doc["scenarios"].items()
           if all("hot_node0_pct" in per.get(k, {}).get("median", {})
                  for k in KERNELS)]
    for j, kernel in enumerate(KERNELS):
        xs = [i + (j - 0.5) * 0.38 for i in range(len(scs))]
        meds = [doc["scenarios"][sc][kernel]["median"] for sc in scs]
        bars = ax.bar(xs, [m["hot_node0_pct"] for m in meds], 0.38,
                      label=kernel)
        ax.bar_label(bars, [f"churn {m['churn_pct']:.0f}%"
                            if "churn_pct" in m else "" for m in meds],
                     fontsize=6, padding=2, rotation=90)
    ax.set_ylim(0, 130)
    ax.set_xticks(range(len(scs)), scs, rotation=20)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("hot window on node 0, % (medians); churn: promotions "
                 "undone within a window", fontsize=9)
