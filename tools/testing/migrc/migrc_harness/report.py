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

from .bench import ratio_verdict, spread
from .common import REPO, HarnessError, log

RESULTS = REPO / "results"
DEFAULT = RESULTS / "bench-x86_64.json"
MICRO = RESULTS / "bench-micro-x86_64.json"
README = REPO / "README.md"
BLOCK = re.compile(r"(<!-- results: begin -->\n).*?(<!-- results: end -->)",
                   re.S)

# (metric, label, format) rows of the main table, where present.
ROWS = [("tlb_shootdowns", "TLB shootdown IPIs", "{:,.0f}"),
        ("shootdowns_per_1k_migrated", "shootdowns per 1k migrated pages",
         "{:,.2f}"),
        ("pgmigrate_success", "pages migrated", "{:,.0f}"),
        ("migrc_deferred", "pages deferred", "{:,.0f}"),
        ("ops_per_s", "ops/s", "{:,.4g}")]


def _change(v: float, g: float) -> str:
    return f"{100 * (g - v) / v:+.1f}%" if v else "-"


def main_table(doc: dict) -> list[str]:
    """Medians per scenario and metric, both kernels, change and spread."""
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


def floor_table(doc: dict) -> list[str]:
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


def micro_table(doc: dict) -> list[str]:
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
    parts = [f"Default run, medians of {doc['repetitions']} boots per kernel "
             f"(`{DEFAULT.relative_to(REPO)}`):", ""]
    parts += main_table(doc)
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


def update_readme() -> None:
    """Rewrite the README's results block from results/."""
    text = README.read_text()
    if not BLOCK.search(text):
        raise HarnessError("README.md: no '<!-- results: begin -->' ... "
                           "'<!-- results: end -->' block")
    new = BLOCK.sub(lambda m: m.group(1) + tables() + m.group(2), text)
    README.write_text(new)
    log("README.md: results tables regenerated from results/")
