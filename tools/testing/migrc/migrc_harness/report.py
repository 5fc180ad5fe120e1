# SPDX-License-Identifier: GPL-2.0
"""'make results': the README's benchmark tables, from the committed runs.

results/bench-x86_64.json (the default 'make bench') and
results/bench-micro-x86_64.json ('make bench MICRO=1') are copies of
build/bench/results*.json. This module turns them into the Markdown
between the README's 'results: begin' and 'results: end' markers, so the
tables never drift from the figures they show.
"""

import json
import re
from typing import Any

from .bench import FORMAT, ratio_cell, ratio_verdict, spread
from .common import REPO, HarnessError, log

RESULTS = REPO / "results"
DEFAULT = RESULTS / "bench-x86_64.json"
MICRO = RESULTS / "bench-micro-x86_64.json"
README = REPO / "README.md"
BLOCK = re.compile(r"(<!-- results: begin -->\n).*?(<!-- results: end -->)",
                   re.S)

# (metric, label, format) rows of the headline table: the shootdowns.
SHOOTDOWN_ROWS = [
    ("tlb_shootdowns", "shootdown IPIs", "{:,.0f}"),
    ("nr_tlb_remote_flush", "shootdown rounds", "{:,.0f}"),
    ("shootdowns_per_1k_migrated", "IPIs per 1k migrated pages", "{:,.2f}")]
# ... and of the table of what explains them and what they cost.
PLACEMENT_ROWS = [
    ("pgmigrate_success", "pages migrated", "{:,.0f}"),
    ("migrc_deferred", "pages deferred", "{:,.0f}"),
    ("hot_node0_pct", "hot window on node 0", "{:.1f}%"),
    ("churn_pages", "churn (pages)", "{:,.0f}"),
    ("churn_pct", "churn (% of promotions seen)", "{:.1f}%"),
    ("pgfault", "page faults", "{:,.0f}"),
    ("ops_per_s", "ops/s", "{:,.4g}")]
# (metric, label, format) rows of the table of a file without pairs.
ROWS = [("tlb_shootdowns", "TLB shootdown IPIs", "{:,.0f}"),
        ("shootdowns_per_1k_migrated", "shootdowns per 1k migrated pages",
         "{:,.2f}"),
        ("pgmigrate_success", "pages migrated", "{:,.0f}"),
        ("migrc_deferred", "pages deferred", "{:,.0f}"),
        ("ops_per_s", "ops/s", "{:,.4g}")]


def _change(v: float, g: float) -> str:
    return f"{100 * (g - v) / v:+.1f}%" if v else "-"


def paired_table(doc: dict[str, Any],
                 rows: list[tuple[str, str, str]]) -> list[str]:
    """Per scenario and metric: the medians of the boots paired by
    repetition, the mean ratio MIGRC / vanilla, its 95% interval and what
    it supports. A metric without a ratio (none on vanilla, as the pages
    deferred) shows the medians of all boots."""
    out = ["| scenario | metric | vanilla | MIGRC | MIGRC / vanilla | "
           "95% CI | verdict |",
           "|---|---|---|---|---|---|---|"]
    for sc, per in doc["scenarios"].items():
        ratios = doc["paired"].get(sc, {})
        for m, label, fmt in rows:
            r = ratios.get(m)
            if r is not None and r["vanilla_median"] is not None:
                v, g = r["vanilla_median"], r["migrc_median"]
                cells = ratio_cell(r)
            else:
                v = per.get("vanilla", {}).get("median", {}).get(m)
                g = per.get("migrc", {}).get("median", {}).get(m)
                cells = ("-", "-", "-")
            if v is None or g is None:
                continue
            out.append(f"| {sc} | {label} | {fmt.format(v)} | "
                       f"{fmt.format(g)} | " + " | ".join(cells) + " |")
    return out


def _provenance(doc: dict[str, Any]) -> str:
    """Which state of the repository a run measured."""
    c = doc["commit"]
    head = (c.get("head") or "unknown")[:12]
    tree = "with local changes" if c.get("dirty") else "clean"
    linux = f", build/linux at {c['linux_head'][:12]}" \
        if c.get("linux_head") else ""
    return f"commit {head} ({tree}{linux})"


def legacy_table(doc: dict[str, Any]) -> list[str]:
    """Medians per scenario and metric, both kernels, change and spread:
    a file from before the boots were paired (no 'paired')."""
    out = ["| scenario | metric | vanilla | MIGRC | change | spread v / M |",
           "|---|---|---|---|---|---|"]
    for sc, per in doc["scenarios"].items():
        van, mig = per.get("vanilla"), per.get("migrc")
        if not van or not mig:
            continue
        for m, label, fmt in ROWS:
            v, g = van["median"].get(m), mig["median"].get(m)
            if v is None or g is None:
                continue
            out.append(f"| {sc} | {label} | {fmt.format(v)} | "
                       f"{fmt.format(g)} | {_change(v, g)} | "
                       f"{spread(van, m)} / {spread(mig, m)} |")
    return out


def floor_table(doc: dict[str, Any]) -> list[str]:
    """Per scenario: the migrations' own rounds on each kernel, the floor
    and MIGRC's own flushes (medians of the attribution)."""
    out = ["| scenario | migration batches, vanilla | migration batches, "
           "MIGRC | floor (rounds / IPIs) | MIGRC's own (rounds / IPIs) | "
           "above the floor (IPIs) |",
           "|---|---|---|---|---|---|"]
    for sc, per in doc["scenarios"].items():
        att = {k: a.get("attribution") for k, a in per.items()}
        if not att.get("vanilla") or not att.get("migrc"):
            continue
        van, mig = att["vanilla"], att["migrc"]
        floor, own = mig["floor"], mig["groups"]["migrc"]
        above = 100 * own["ipis"] / floor["ipis"] if floor["ipis"] else 0.0
        out.append(f"| {sc} | {van['groups']['migration']['rounds']:,.0f} | "
                   f"{mig['groups']['migration']['rounds']:,.0f} | "
                   f"{floor['rounds']:,.0f} / {floor['ipis']:,.0f} | "
                   f"{own['rounds']:,.0f} / {own['ipis']:,.0f} | "
                   f"{above:+.1f}% |")
    return out


def micro_table(doc: dict[str, Any]) -> list[str]:
    """Per fast path: medians, mean ratio and its 95% interval, how the
    guest counted time, and whether the interval shows the 1% target (its
    low end at 0.99 or above: MIGRC at most 1% slower)."""
    out = ["| scenario | vanilla ops/s | MIGRC ops/s | MIGRC / vanilla | "
           "95% CI | verdict | guest time | within 1% |",
           "|---|---|---|---|---|---|---|---|"]
    for sc, r in doc["ratios"].items():
        if "ci95" not in r:
            continue
        lo, hi = r["ci95"]
        verdict = ratio_verdict(lo, hi)
        clock = "instructions" if r.get("clock") else "wall clock"
        within = "shown" if lo >= 0.99 else "not shown"
        out.append(f"| {sc} | {r['vanilla_median']:,.0f} | "
                   f"{r['migrc_median']:,.0f} | {r['ratio_mean']:.4f} | "
                   f"[{lo:.4f}, {hi:.4f}] | {verdict} | {clock} | "
                   f"{within} |")
    return out


def tables() -> str:
    """The Markdown of the README's results block."""
    if not DEFAULT.exists():
        raise HarnessError(f"{DEFAULT}: no committed benchmark run")
    doc = json.loads(DEFAULT.read_text())
    parts = default_tables(doc, str(DEFAULT.relative_to(REPO)))
    parts += ["", "Shootdown rounds by cause (medians; the floor is what "
              "the MIGRC kernel sends that is not MIGRC's own):", ""]
    parts += floor_table(doc)
    if MICRO.exists():
        micro = json.loads(MICRO.read_text())
        parts += ["", f"Fast paths (`make bench MICRO=1`, "
                  f"`{MICRO.relative_to(REPO)}`): {micro['repetitions']} + "
                  f"{micro['repetitions']} alternating boots, one scenario "
                  "per boot; the mean ratio is the geometric mean of the "
                  "per-repetition ratios; a scenario whose guest time is "
                  "instructions ran with `-icount shift=0,sleep=off` (ops/s "
                  "is ops per 10^9 guest instructions), the others in wall "
                  "clock time:", ""]
        parts += micro_table(micro)
    return "\n".join(parts) + "\n"


def default_tables(doc: dict[str, Any], name: str) -> list[str]:
    """The tables of the default run: paired, with intervals, from one run;
    a file of the format before, as it is, marked as awaiting a rerun."""
    n = doc["repetitions"]
    if doc.get("format", 1) < FORMAT:
        return [f"Default run, medians of {n} boots per kernel (`{name}`, "
                "a format without pairs or intervals"
                + (", scenarios from separate runs"
                   if doc.get("separate_runs") else "")
                + "; awaiting a rerun of `make bench`):", ""] + \
            legacy_table(doc)
    if doc.get("separate_runs"):
        raise HarnessError(f"{name}: the tables must come from one run; "
                           "this one merges several (separate_runs)")
    quick = ", `QUICK=1`" if doc.get("quick") else ""
    return [f"Default run (`{name}`{quick}): {n} + {n} alternating boots, "
            f"{_provenance(doc)}, {doc.get('minutes', 0):.0f} min. "
            "MIGRC / vanilla: geometric mean of the ratios of the two boots "
            "of each repetition, with its 95% interval; the medians are "
            "those of the paired boots. Shootdowns:", ""] + \
        paired_table(doc, SHOOTDOWN_ROWS) + \
        ["", "Migration volume, placement (sampled in the tiering "
         "scenarios) and cost:", ""] + \
        paired_table(doc, PLACEMENT_ROWS)


def update_readme() -> None:
    """Rewrite the README's results block from results/."""
    text = README.read_text()
    if not BLOCK.search(text):
        raise HarnessError("README.md: no '<!-- results: begin -->' ... "
                           "'<!-- results: end -->' block")
    new = BLOCK.sub(lambda m: m.group(1) + tables() + m.group(2), text)
    README.write_text(new)
    log("README.md: results tables regenerated from results/")
