# SPDX-License-Identifier: GPL-2.0
"""Why each TLB shootdown of a benchmark run was sent.

The bench stage counts shootdown rounds (one per flush_tlb_multi()) and
the IPIs they send (one per CPU asked to run flush_tlb_func()) by kernel
call chain, innermost frame first. classify() names the cause of a chain;
the causes fall into three groups:

  migrc        MIGRC's own flushes (a deferred flush done at last, for a
               page or for an mm whose page tables change) and read-only
               batches it flushed at once (declined). Why MIGRC flushed is
               not guessed from call chains: its trace event migrc_flush
               says (the reason field), counted by a third histogram
               (parse(), summarize_reasons());
  migration    the flush of a migration's normal batch, or a migration
               that flushed as it unmapped (PMD-mapped THP, hugetlb);
  other        everything else: flush_tlb_batched_pending() by caller,
               NUMA scans, munmap, exit, reclaim, ...

On the MIGRC kernel, "migration" and "other" are the *floor*: the rounds a
kernel pays however read-only migrations are flushed (a normal batch may
carry read-only entries MIGRC refused; the migrc_refused_* counters say how
many). On vanilla every migration round is "migration".
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable

# Frames that only carry a flush to the IPI: never the cause.
PLUMBING = frozenset({
    "smp_call_function_many_cond", "on_each_cpu_cond_mask",
    "native_flush_tlb_multi", "flush_tlb_multi", "__flush_tlb_multi",
    "flush_tlb_mm_range", "tlbbatch_flush_cpus", "arch_tlbbatch_flush",
    "flush_tlb_func", "ptep_clear_flush", "flush_tlb_page",
    "flush_tlb_range", "pmdp_invalidate", "pmdp_huge_clear_flush",
    "flush_pmd_tlb_range", "tlb_flush_mmu", "tlb_flush_mmu_tlbonly",
    "tlb_finish_mmu", "migrc_arch_flush",
})

GROUPS = ("migrc", "migration", "other")

# Where a migration came from: the innermost of these frames. Static
# functions may be inlined (demote_folio_list(), do_numa_page()), so their
# callers stand in for them.
MIGRATION_PATHS = (
    ("migrate_misplaced_folio", "promotion"),
    ("do_numa_page", "promotion"),
    ("do_huge_pmd_numa_page", "promotion"),
    ("demote_folio_list", "demotion"),
    ("shrink_folio_list", "demotion"),
    ("do_migrate_pages", "migrate_pages(2)"),
    ("kernel_migrate_pages", "migrate_pages(2)"),
    ("__x64_sys_migrate_pages", "migrate_pages(2)"),
    ("do_pages_move", "move_pages(2)"),
    ("kernel_move_pages", "move_pages(2)"),
    ("__x64_sys_move_pages", "move_pages(2)"),
    ("compact_zone", "compaction"),
)

# Who called flush_tlb_batched_pending(), or sent a flush of its own: the
# first key of this list (most telling first) found in the chain.
CALLERS = (
    ("task_numa_work", "NUMA scan"),
    ("change_prot_numa", "NUMA scan"),
    ("mprotect_fixup", "mprotect"),
    ("do_mprotect_pkey", "mprotect"),
    ("move_page_tables", "mremap"),
    ("madvise_", "madvise"),
    ("exit_mmap", "exit"),
    ("do_vmi_munmap", "munmap"),
    ("vms_complete_munmap_vmas", "munmap"),
    ("__vm_munmap", "munmap"),
    ("do_wp_page", "write fault"),
    ("wp_page_copy", "write fault"),
    ("dup_mmap", "fork"),
    ("change_protection", "mprotect"),
    ("zap_pte_range", "zap"),
    ("shrink_folio_list", "reclaim"),
)

# A read-only batch flushed at once (declined, or left at an early exit):
# arch_tlbbatch_flush() called from these, not from try_to_unmap_flush().
RO_BATCH_FLUSHERS = frozenset({
    "migrc_flush_ro_batch", "migrc_defer_ro_batch", "migrc_scope_publish",
    "migrc_scope_end", "migrate_pages_batch"})


def _first(chain: list[str], table: Iterable[tuple[str, str]]) -> str | None:
    """The label of the first key of table (in its order, most telling
    first) that names a frame of chain; a key ending in "_" is a prefix."""
    for key, label in table:
        for frame in chain:
            if frame == key or (key.endswith("_") and frame.startswith(key)):
                return label
    return None


def _innermost(chain: list[str],
               table: Iterable[tuple[str, str]]) -> str | None:
    """The label of the innermost frame of chain that is a key of table."""
    keys = dict(table)
    for frame in chain:
        if frame in keys:
            return keys[frame]
    return None


def _after(chain: list[str], frame: str) -> str:
    i = chain.index(frame)
    return chain[i + 1] if i + 1 < len(chain) else ""


def _migrc_cause(chain: list[str]) -> str | None:
    """The kind of one of MIGRC's flushes, or None if the chain is not."""
    if "arch_tlbbatch_flush" in chain and \
            _after(chain, "arch_tlbbatch_flush") in RO_BATCH_FLUSHERS:
        return "read-only batch flushed at once"
    # The normal batch's pending unmaps, which flush_tlb_batched_pending()
    # flushes on every kernel; on MIGRC's it tail-calls MIGRC's wrapper.
    if "flush_tlb_batched_unmaps" in chain:
        return None
    # migrc_arch_flush() jumps to tlbbatch_flush_cpus(); the Rust core's
    # mangled names hold "5migrc".
    if any("migrc" in f for f in chain) or (
            "tlbbatch_flush_cpus" in chain and
            _after(chain, "tlbbatch_flush_cpus") != "arch_tlbbatch_flush"):
        return "deferred flush (reasons: migrc_flush)"
    return None


def classify(chain: list[str]) -> tuple[str, str]:
    """(group, cause) of one call chain, innermost frame first."""
    cause = _migrc_cause(chain)
    if cause:
        return "migrc", f"migrc: {cause}"
    names = set(chain)
    if names & {"migrate_pages_batch", "try_to_migrate_one",
                "migrate_folio_unmap", "unmap_and_move_huge_page",
                "migrate_pages"}:
        how = "batch" if "try_to_unmap_flush" in names else "unbatched"
        path = _innermost(chain, MIGRATION_PATHS) or "other"
        return "migration", f"migration {how}: {path}"
    pending = names & {"flush_tlb_batched_pending", "flush_tlb_batched_unmaps"}
    if pending:
        by = _first(chain, CALLERS) or _after(chain, min(pending)) or "?"
        return "other", f"batched pending: {by}"
    if "try_to_unmap_flush" in names or "try_to_unmap_flush_dirty" in names:
        flusher = "try_to_unmap_flush" if "try_to_unmap_flush" in names \
            else "try_to_unmap_flush_dirty"
        return "other", f"unmap batch: {_after(chain, flusher) or '?'}"
    caller = _first(chain, CALLERS)
    if caller:
        return "other", caller
    rest = [f for f in chain if f not in PLUMBING]
    return "other", f"other: {rest[0] if rest else '?'}"


CHAIN = re.compile(r"migrc-bench-chain: (\S+) (rounds|ipis)(-dropped)? "
                   r"(\d+) (\S+)$")
FLUSH = re.compile(r"migrc-bench-flush: (\S+) (\S+) (\d+) (\d+)$")


def parse(lines: Iterable[str]) -> dict:
    """{scenario: {"rounds"|"ipis": {chain: count}, "dropped": n,
    "reasons": {reason: {"flushes": n, "cpus": n}}}} from the
    'migrc-bench-chain:' and 'migrc-bench-flush:' lines of one boot."""
    out: dict = {}
    for line in lines:
        f = FLUSH.search(line)
        if f:
            sc, reason, flushes, cpus = f.groups()
            per = out.setdefault(sc, {"rounds": {}, "ipis": {},
                                      "dropped": 0, "reasons": {}})
            slot = per["reasons"].setdefault(reason,
                                             {"flushes": 0, "cpus": 0})
            slot["flushes"] += int(flushes)
            slot["cpus"] += int(cpus)
            continue
        m = CHAIN.search(line)
        if not m:
            continue
        sc, kind, dropped, count, chain = m.groups()
        per = out.setdefault(sc, {"rounds": {}, "ipis": {}, "dropped": 0,
                                  "reasons": {}})
        if dropped:
            per["dropped"] += int(count)
            continue
        per[kind][chain] = per[kind].get(chain, 0) + int(count)
    return out


def by_cause(chains: dict) -> dict:
    """{"rounds"|"ipis": {chain: n}} -> {(group, cause): {"rounds", "ipis"}}."""
    out: dict = {}
    for kind in ("rounds", "ipis"):
        for chain, n in chains.get(kind, {}).items():
            key = classify(chain.split("<"))
            slot = out.setdefault(key, {"rounds": 0, "ipis": 0})
            slot[kind] += n
    return out


def summarize(runs: list[dict]) -> dict:
    """Medians over runs of each cause's rounds and IPIs, and the groups'.

    runs: one by_cause() result per run. Returns
    {"causes": {"group|cause": {"rounds": m, "ipis": m}},
     "groups": {group: {"rounds": m, "ipis": m}},
     "floor": {"rounds": m, "ipis": m}}; a cause absent from a run counts
    as 0 there.
    """
    if not runs:
        return {}
    keys = sorted({k for r in runs for k in r})
    causes = {}
    for key in keys:
        causes["|".join(key)] = {
            kind: statistics.median(r.get(key, {}).get(kind, 0)
                                    for r in runs)
            for kind in ("rounds", "ipis")}
    groups = {}
    for g in GROUPS:
        groups[g] = {kind: statistics.median(
            sum(v[kind] for k, v in r.items() if k[0] == g) for r in runs)
            for kind in ("rounds", "ipis")}
    floor = {kind: statistics.median(
        sum(v[kind] for k, v in r.items() if k[0] != "migrc") for r in runs)
        for kind in ("rounds", "ipis")}
    return {"causes": causes, "groups": groups, "floor": floor}


def summarize_reasons(runs: list[dict]) -> dict:
    """Medians over runs of MIGRC's own flushes by the reason its trace
    event gives: {reason: {"flushes": m, "cpus": m}}; runs: one parse()
    "reasons" per run, a reason absent from a run counting as 0 there."""
    reasons = sorted({r for run in runs for r in run})
    return {r: {kind: statistics.median(run.get(r, {}).get(kind, 0)
                                        for run in runs)
                for kind in ("flushes", "cpus")}
            for r in reasons}
