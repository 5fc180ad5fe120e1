# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the shootdown attribution (migrc_harness.attribution)."""

import unittest

from migrc_harness import attribution as at

# Call chains as the bench stage prints them, innermost frame first.
PROMOTION = ("smp_call_function_many_cond<on_each_cpu_cond_mask<"
             "native_flush_tlb_multi<flush_tlb_multi<tlbbatch_flush_cpus<"
             "arch_tlbbatch_flush<try_to_unmap_flush<migrate_pages_batch<"
             "migrate_pages<migrate_misplaced_folio<do_numa_page<"
             "handle_mm_fault<do_user_addr_fault<exc_page_fault")
ALLOC_EXIT = ("smp_call_function_many_cond<on_each_cpu_cond_mask<"
              "native_flush_tlb_multi<tlbbatch_flush_cpus<migrc_arch_flush<"
              "_RNvNtNtNtCs1_6kernel2mm5migrc3ffi16migrc_flush_upto<"
              "migrc_flush_upto<migrc_page_flush<get_page_from_freelist<"
              "__alloc_frozen_pages_noprof")
NUMA_SCAN = ("smp_call_function_many_cond<on_each_cpu_cond_mask<"
             "native_flush_tlb_multi<flush_tlb_mm_range<"
             "flush_tlb_batched_pending<change_pte_range<"
             "change_protection<change_prot_numa<task_numa_work<"
             "task_work_run")
DEMOTE_PMD = ("smp_call_function_many_cond<on_each_cpu_cond_mask<"
              "native_flush_tlb_multi<flush_tlb_mm_range<pmdp_invalidate<"
              "set_pmd_migration_entry<try_to_migrate_one<rmap_walk_anon<"
              "try_to_migrate<migrate_pages_batch<migrate_pages<"
              "demote_folio_list<shrink_folio_list<kswapd")
RO_DECLINED = ("smp_call_function_many_cond<on_each_cpu_cond_mask<"
               "native_flush_tlb_multi<tlbbatch_flush_cpus<"
               "arch_tlbbatch_flush<migrc_defer_ro_batch<"
               "migrc_scope_publish<migrate_pages_batch<migrate_pages")
PENDING_CAP = ("native_flush_tlb_multi<tlbbatch_flush_cpus<migrc_arch_flush<"
             "migrc_flush_all<migrc_defer_ro_batch<migrc_scope_publish<"
             "migrate_pages_batch")
WRITE = ("native_flush_tlb_multi<tlbbatch_flush_cpus<migrc_arch_flush<"
         "migrc_flush_all<migrc_flush_pending<do_wp_page<handle_mm_fault")
MUNMAP = ("smp_call_function_many_cond<on_each_cpu_cond_mask<"
          "native_flush_tlb_multi<flush_tlb_mm_range<tlb_finish_mmu<"
          "vms_clear_ptes<vms_complete_munmap_vmas<do_vmi_align_munmap<"
          "do_vmi_munmap<__vm_munmap")


def cls(chain):
    return at.classify(chain.split("<"))


# The same causes with the frames a Clang build leaves: MIGRC's C functions
# end in jumps (no frame), static helpers are inlined. RUST and the REAL_*
# chains are copied from a 'make bench QUICK=1' console.
RUST = ("_RNvMNtNtNtCsl7L7n58I0Vr_6kernel2mm5migrc6engineINtB2_6EngineNtNtB4_"
        "3ffi14KernelPlatformE10flush_uptoB8_")
REAL_CAP = ("smp_call_function_many_cond<tlbbatch_flush_cpus<" + RUST +
             "<migrc_scope_publish<migrate_pages_batch<migrate_pages<"
             "shrink_folio_list<shrink_node<kswapd<kthread<ret_from_fork<"
             "ret_from_fork_asm")
REAL_WRITE = ("tlbbatch_flush_cpus<" + RUST + "<wp_page_reuse<do_wp_page<"
              "handle_mm_fault<do_user_addr_fault<exc_page_fault<"
              "asm_exc_page_fault")
REAL_DEMOTE = ("arch_tlbbatch_flush<try_to_unmap_flush<migrate_pages_batch<"
               "migrate_pages<shrink_folio_list<shrink_node<kswapd<kthread<"
               "ret_from_fork<ret_from_fork_asm")
REAL_PROMOTE = ("smp_call_function_many_cond<arch_tlbbatch_flush<"
                "try_to_unmap_flush<migrate_pages_batch<migrate_pages<"
                "migrate_misplaced_folio<handle_mm_fault<do_user_addr_fault<"
                "exc_page_fault<asm_exc_page_fault")
REAL_SCAN = ("flush_tlb_mm_range<flush_tlb_batched_pending<change_protection<"
             "change_prot_numa<task_numa_work<task_work_run<"
             "resume_user_mode_work<irqentry_exit<"
             "asm_sysvec_apic_timer_interrupt")
TAIL_WRITE = ("smp_call_function_many_cond<on_each_cpu_cond_mask<"
              "native_flush_tlb_multi<tlbbatch_flush_cpus<" + RUST +
              "<do_wp_page<__handle_mm_fault<handle_mm_fault")
TAIL_ALLOC = ("native_flush_tlb_multi<tlbbatch_flush_cpus<" + RUST +
              "<get_page_from_freelist<__alloc_frozen_pages_noprof")
TAIL_CAP = ("native_flush_tlb_multi<tlbbatch_flush_cpus<" + RUST +
             "<migrc_scope_publish<migrate_pages_batch<migrate_pages")
TAIL_BUSY = ("native_flush_tlb_multi<tlbbatch_flush_cpus<" + RUST +
             "<migrate_pages_batch<migrate_pages<migrate_misplaced_folio")
RUST_MM = ("_RNvMNtNtNtCsl7L7n58I0Vr_6kernel2mm5migrc6engineINtB2_6EngineNtNtB4_"
           "3ffi14KernelPlatformE15flush_cpus_uptoB8_")
MM_MUNMAP = ("native_flush_tlb_multi<tlbbatch_flush_cpus<" + RUST_MM +
             "<migrc_flush_cpus_upto<flush_tlb_batched_pending<zap_pte_range<"
             "unmap_page_range<unmap_vmas<vms_clear_ptes<"
             "vms_complete_munmap_vmas<do_vmi_munmap")
# The normal batch's pending unmaps, flushed by the MIGRC kernel's
# flush_tlb_batched_pending() (a tail call into MIGRC's wrapper): not
# MIGRC's own flush, as on vanilla (a 7.3.4 bench boot, exit).
PENDING_UNMAPS = ("flush_tlb_mm_range<flush_tlb_batched_unmaps<"
                  "migrc_flush_tlb_batched_pending<__zap_vma_range<"
                  "unmap_vmas<exit_mmap<__mmput<do_exit<do_group_exit")
MM_UNPUBLISHED = ("smp_call_function_many_cond<tlbbatch_flush_cpus<"
                  "change_protection<mprotect_fixup<do_mprotect_pkey")
INLINE_RO = ("native_flush_tlb_multi<tlbbatch_flush_cpus<arch_tlbbatch_flush<"
             "migrate_pages_batch<migrate_pages<do_migrate_pages")
INLINE_DEMOTE = ("native_flush_tlb_multi<tlbbatch_flush_cpus<"
                 "arch_tlbbatch_flush<try_to_unmap_flush<migrate_pages_batch<"
                 "migrate_pages<shrink_folio_list<balance_pgdat<kswapd")
KSWAPD_UNMAP = ("native_flush_tlb_multi<tlbbatch_flush_cpus<"
                "arch_tlbbatch_flush<try_to_unmap_flush<shrink_folio_list<"
                "balance_pgdat<kswapd")


# Each chain and the (group, cause) it must get.
EXPECTED = (
    (PROMOTION, ("migration", "migration batch: promotion")),
    (ALLOC_EXIT, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (NUMA_SCAN, ("other", "batched pending: NUMA scan")),
    (DEMOTE_PMD, ("migration", "migration unbatched: demotion")),
    (RO_DECLINED, ("migrc", "migrc: read-only batch flushed at once")),
    (PENDING_CAP, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (WRITE, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (MUNMAP, ("other", "munmap")),
    ("native_flush_tlb_multi<flush_tlb_mm_range<frobnicate<do_syscall_64",
     ("other", "other: frobnicate")),
    (REAL_CAP, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (REAL_WRITE, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (REAL_DEMOTE, ("migration", "migration batch: demotion")),
    (REAL_PROMOTE, ("migration", "migration batch: promotion")),
    (REAL_SCAN, ("other", "batched pending: NUMA scan")),
    (TAIL_WRITE, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (TAIL_ALLOC, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (TAIL_CAP, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (TAIL_BUSY, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (INLINE_RO, ("migrc", "migrc: read-only batch flushed at once")),
    (INLINE_DEMOTE, ("migration", "migration batch: demotion")),
    (KSWAPD_UNMAP, ("other", "unmap batch: shrink_folio_list")),
    (MM_MUNMAP, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    (PENDING_UNMAPS, ("other", "batched pending: exit")),
    (MM_UNPUBLISHED, ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    ("tlbbatch_flush_cpus<" + RUST + "<numa_rebuild_single_mapping<"
     "handle_mm_fault", ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
    ("tlbbatch_flush_cpus<" + RUST + "<process_scheduled_works<"
     "worker_thread<kthread", ("migrc", "migrc: deferred flush (reasons: migrc_flush)")),
)


class Classify(unittest.TestCase):
    def test_each_chain(self):
        for chain, want in EXPECTED:
            with self.subTest(chain=chain):
                self.assertEqual(cls(chain), want)


class ParseAndSum(unittest.TestCase):
    LINES = [
        "[  12.3] migrc-bench-chain: tiering rounds 7 " + PROMOTION,
        "migrc-bench-chain: tiering ipis 20 " + PROMOTION,
        "migrc-bench-chain: tiering rounds 3 " + NUMA_SCAN,
        "migrc-bench-chain: tiering ipis 9 " + NUMA_SCAN,
        "migrc-bench-chain: tiering rounds 2 " + ALLOC_EXIT,
        "migrc-bench-chain: tiering ipis 2 " + ALLOC_EXIT,
        "migrc-bench-chain: tiering rounds-dropped 1 -",
        "migrc-bench-chain: tiering ipis-dropped 0 -",
        "migrc-bench: tiering ops=1",
    ]

    def test_parse(self):
        got = at.parse(self.LINES)["tiering"]
        self.assertEqual(got["rounds"][PROMOTION], 7)
        self.assertEqual(got["ipis"][NUMA_SCAN], 9)
        self.assertEqual(got["dropped"], 1)

    def test_parse_adds_up_a_chain_seen_twice(self):
        got = at.parse(["migrc-bench-chain: migrate rounds 2 a<b",
                        "migrc-bench-chain: migrate rounds 3 a<b"])
        self.assertEqual(got["migrate"]["rounds"], {"a<b": 5})

    def test_parse_counts_migrc_flushes_by_reason(self):
        got = at.parse(["migrc-bench-flush: tiering forced_write 3 6",
                        "migrc-bench-flush: tiering alloc_exit 2 4",
                        "migrc-bench-flush: tiering forced_write 1 2"])
        self.assertEqual(got["tiering"]["reasons"],
                         {"forced_write": {"flushes": 4, "cpus": 8},
                          "alloc_exit": {"flushes": 2, "cpus": 4}})
        self.assertEqual(got["tiering"]["rounds"], {})

    def test_reasons_median_counts_absent_reason_as_zero(self):
        runs: list[dict] = [{"forced_write": {"flushes": 4, "cpus": 8}}, {},
                {"forced_write": {"flushes": 6, "cpus": 12},
                 "alloc_exit": {"flushes": 1, "cpus": 2}}]
        got = at.summarize_reasons(runs)
        self.assertEqual(got["forced_write"], {"flushes": 4, "cpus": 8})
        self.assertEqual(got["alloc_exit"], {"flushes": 0, "cpus": 0})

    def test_parse_ignores_other_lines(self):
        self.assertEqual(at.parse(["migrc-bench: migrate ops=1",
                                   "migrc-bench-chain: x rounds many a<b"]),
                         {})

    def test_floor_leaves_out_migrc(self):
        runs = [at.by_cause(at.parse(self.LINES)["tiering"])]
        s = at.summarize(runs)
        self.assertEqual(s["floor"], {"rounds": 10, "ipis": 29})
        self.assertEqual(s["groups"]["migrc"], {"rounds": 2, "ipis": 2})
        self.assertEqual(
            s["causes"]["migration|migration batch: promotion"]["ipis"], 20)

    def test_median_counts_absent_cause_as_zero(self):
        a = {("other", "munmap"): {"rounds": 4, "ipis": 4}}
        b: dict[tuple[str, str], dict[str, int]] = {}
        c = {("other", "munmap"): {"rounds": 6, "ipis": 6}}
        s = at.summarize([a, b, c])
        self.assertEqual(s["causes"]["other|munmap"]["rounds"], 4)

    def test_no_runs(self):
        self.assertEqual(at.summarize([]), {})


if __name__ == "__main__":
    unittest.main()
