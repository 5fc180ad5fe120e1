// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRC for cold writable anonymous pages.
 *
 * A migration defers its flush only for PTEs no CPU can write through.
 * Memory written once and then only read keeps the writable PTE of its
 * first write until something takes the write bit away, so its demotion
 * flushes as if it were written all day.
 *
 * Two walks visit cold pages and end in a flush of what they changed: the
 * NUMA hinting scan, which leaves top-tier pages alone in tiering mode, and
 * MADV_COLD. They take the write bit from the cold exclusive anonymous
 * pages they pass, and add each such PTE to the range their own mmu_gather
 * flushes (migrc_cold_wrprotect()):
 *
 *  1. Until that flush is complete, a CPU may still write through a cached
 *     writable entry. The walk is counted where migrc_pte_deferrable()
 *     looks: MADV_COLD in mm->migrc_wp_pending (tlb_gather_mmu()), a scan
 *     in its VMA's writable-scan count (migrc_numa_scan_begin(): the VMA
 *     has VM_WRITE, or it would have no writable PTE). A migration meanwhile
 *     flushes at once, as it does under any unflushed write protection.
 *  2. After it, no TLB holds a writable entry of the page, and the PTE is
 *     read-only and dirty on an exclusive page: deferrable.
 *  3. A write faults, and wp_page_reuse() makes the exclusive page writable
 *     again without a copy (after MIGRC's write flush if the mm has
 *     deferred entries). That fault is the price, so the bit is taken only
 *     where a demotion is the likely next migration: on a top-tier node
 *     while demotion is on. The scan takes it only from pages on the
 *     inactive list whose PTE is old: reclaim candidates. An old PTE alone
 *     says little on x86, where reclaim clears the accessed bit without a
 *     flush and a CPU that keeps writing through its cached entry never
 *     sets it again; the LRU position says reclaim found the page cold.
 *     PG_referenced says nothing more: reclaim sets it on the inactive
 *     page it keeps for a second look, the one it just made old. MGLRU
 *     keeps no active flag on its folios, so the scan takes no bit there.
 *  4. A page written again pays that fault, and often a flush of the mm's
 *     deferred entries with it (migrc_flush_before_write()): more than the
 *     share of a demotion's flush the bit saves. So the scan judges each
 *     VMA by what came back: once write faults have reused at least half
 *     as many pages as it took bits from (MIGRC_COLD_SAMPLE at least), it
 *     leaves the VMA's PTEs writable for a pause, twice as long each time
 *     the VMA is judged the same, and from the shortest again once it is
 *     not (migrc_cold_scan_begin()). Memory written once and then read is
 *     never paused; memory written all over is soon left alone.
 *
 * The gather flushes only if it changed something: a scan that finds only
 * such pages in a VMA sends a round vanilla would not, and so does
 * MADV_COLD on a range whose PTEs are all old. MADV_COLD takes the bit
 * whatever the LRU says (the caller said the range is cold), but not in an
 * mm with MMU notifiers: unlike the scan, its walk does not invalidate
 * secondary MMUs, which would keep writable entries of their own.
 *
 * Left alone, each counted: large folios (a PTE-mapped one is split or
 * migrated whole, and its exclusivity is per page), pages not exclusive to
 * the mm (file and shmem pages, KSM pages, pages shared since fork: a
 * write fault would copy them), pages no migration would move now (pinned
 * for DMA, device memory, off the LRU), and VMAs whose writes someone else
 * tracks through write faults or writes by other means (userfaultfd write
 * or read-write protection, soft-dirty tracking, shadow stacks, a
 * secondary MMU MADV_COLD does not tell).
 */
#include <linux/memory-tiers.h>
#include <linux/migrc.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/mmu_notifier.h>
#include <linux/userfaultfd_k.h>
#include <asm/tlb.h>

#include "internal.h"

/* No reason to leave the page alone. */
#define MIGRC_COLD_OK	NR_MIGRC_EVENTS

/* A demotion is the likely next migration of @folio. */
static bool migrc_cold_demotable(struct folio *folio)
{
	return numa_demotion_enabled && node_is_toptier(folio_nid(folio)) &&
	       !migrc_defer_forbidden();
}

/*
 * Why a writable PTE of @page in @vma keeps its write bit. @notified: the
 * walk invalidates secondary MMUs (mmu_notifier) around its changes.
 */
static enum migrc_event migrc_cold_refusal(struct vm_area_struct *vma,
					   struct page *page, int nr,
					   bool notified)
{
	struct folio *folio = page_folio(page);

	if (nr != 1 || folio_test_large(folio))
		return MIGRC_EV_COLD_REFUSED_LARGE;
	if (!folio_test_anon(folio) || folio_test_ksm(folio) ||
	    !PageAnonExclusive(page))
		return MIGRC_EV_COLD_REFUSED_SHARED;
	if (folio_is_zone_device(folio) || !folio_test_lru(folio) ||
	    folio_maybe_dma_pinned(folio))
		return MIGRC_EV_COLD_REFUSED_PINNED;
	if (userfaultfd_protected(vma) || vma_soft_dirty_enabled(vma) ||
	    (vma->vm_flags & VM_SHADOW_STACK) ||
	    (!notified && mm_has_notifiers(vma->vm_mm)))
		return MIGRC_EV_COLD_REFUSED_TRACKED;
	return MIGRC_COLD_OK;
}

#ifdef CONFIG_NUMA_BALANCING
/*
 * Bits a VMA's scans take before their reuse is judged; the pauses, in
 * seconds: 1, 2, 4, ... 2^(MIGRC_COLD_PAUSE_MAX - 1).
 */
#define MIGRC_COLD_SAMPLE	256
#define MIGRC_COLD_PAUSE_MAX	6U

/* Whether the scan leaves the writable PTEs of @vma alone for now. */
static bool migrc_cold_paused(struct vm_area_struct *vma)
{
	struct vma_numab_state *ns = vma->numab_state;

	return ns && READ_ONCE(ns->migrc_cold_pause) &&
	       time_before(jiffies, READ_ONCE(ns->migrc_cold_resume));
}

/**
 * migrc_cold_scan_begin - judge the cold write protection of a VMA
 * @vma: the VMA a NUMA hinting scan is about to change, mmap_lock held
 *
 * Once the scan has taken MIGRC_COLD_SAMPLE write bits here since the last
 * judgement, pause if write faults reused at least half as many pages
 * meanwhile, for twice the last pause (one second first), or end the
 * pauses if fewer. Both counts start again from zero, so that each
 * judgement is of bits taken after the one before: a paused VMA is judged
 * again once the scan, back after the pause, has taken as many again.
 * Scans of an mm rarely overlap (task_numa_work() starts one per scan
 * period); the fields are heuristics, and a lost update costs nothing but
 * a judgement.
 */
void migrc_cold_scan_begin(struct vm_area_struct *vma)
{
	struct vma_numab_state *ns = vma->numab_state;
	unsigned int pause = READ_ONCE(ns->migrc_cold_pause);
	int taken, reused;

	if (migrc_cold_paused(vma))
		return;
	taken = atomic_read(&ns->migrc_cold_taken);
	if (taken < MIGRC_COLD_SAMPLE)
		return;
	reused = atomic_read(&ns->migrc_cold_reused);
	if (reused >= taken / 2) {
		pause = min(pause + 1, MIGRC_COLD_PAUSE_MAX);
		WRITE_ONCE(ns->migrc_cold_resume,
			   jiffies + (HZ << (pause - 1)));
	} else {
		pause = 0;
	}
	WRITE_ONCE(ns->migrc_cold_pause, pause);
	/* What came in meanwhile counts towards the next judgement. */
	atomic_sub(taken, &ns->migrc_cold_taken);
	atomic_sub(reused, &ns->migrc_cold_reused);
}

/**
 * migrc_cold_count_reuse - a write fault gave an exclusive anonymous page
 *                          of @vma its write bit back
 * @vma: the faulting VMA, its lock or mmap_lock held
 *
 * Counted where the scan has taken bits since the last judgement (see
 * migrc_cold_scan_begin()).
 */
void migrc_cold_count_reuse(struct vm_area_struct *vma)
{
	struct vma_numab_state *ns = READ_ONCE(vma->numab_state);

	if (ns && atomic_read(&ns->migrc_cold_taken))
		atomic_inc(&ns->migrc_cold_reused);
}

static void migrc_cold_took(struct vm_area_struct *vma)
{
	if (vma->numab_state)
		atomic_inc(&vma->numab_state->migrc_cold_taken);
}
#else
static bool migrc_cold_paused(struct vm_area_struct *vma)
{
	return false;
}

static void migrc_cold_took(struct vm_area_struct *vma) { }
#endif /* CONFIG_NUMA_BALANCING */

/*
 * Take the write bit from the PTE at @ptep (under its PTE lock), if it is
 * writable and maps a small exclusive anonymous page nobody else tracks
 * writes of, keeping it dirty, and add it to @tlb's flush range. @tlb
 * flushes what it gathered before the walk is done, and is counted where
 * migrations look until then. @scan: the NUMA scan, which invalidates
 * secondary MMUs around its changes and pauses where pages come back.
 */
static void migrc_cold_wrprotect(struct mmu_gather *tlb,
				 struct vm_area_struct *vma, unsigned long addr,
				 pte_t *ptep, int nr, bool scan)
{
	pte_t old = ptep_get(ptep);
	enum migrc_event refused;
	struct page *page;

	if (!pte_write(old) || !(vma->vm_flags & VM_WRITE))
		return;
	page = vm_normal_page(vma, addr, old);
	if (!page)
		return;
	refused = migrc_cold_refusal(vma, page, nr, scan);
	if (refused != MIGRC_COLD_OK) {
		migrc_stat_add(refused, nr);
		return;
	}
	if (scan && migrc_cold_paused(vma)) {
		migrc_stat_add(MIGRC_EV_COLD_SKIPPED_REUSED, nr);
		return;
	}
	old = ptep_modify_prot_start(vma, addr, ptep);
	ptep_modify_prot_commit(vma, addr, ptep, old, pte_wrprotect(old));
	/* The rule: no deferral may rely on it before the walk flushed it. */
	if (!migrc_broken(MIGRC_BREAK_COLD))
		tlb_flush_pte_range(tlb, addr, PAGE_SIZE);
	migrc_stat_add(MIGRC_EV_COLD_WRPROTECTED, 1);
	if (scan)
		migrc_cold_took(vma);
}

/**
 * migrc_scan_cold - a NUMA hinting scan leaves a writable, old PTE alone
 * @tlb: the scan's gather (change_prot_numa())
 * @vma: the PTE's VMA, mmap_lock held
 * @addr: the PTE's address
 * @ptep: the PTE, under its PTE lock
 * @folio: the folio it maps
 * @nr: how many PTEs from @ptep on map @folio
 *
 * The PTE was not accessed since reclaim last aged it. If @folio is also
 * a reclaim candidate (on the inactive list) that demotion may move, and
 * @vma's pages did not come back through write faults lately, take the
 * write bit, so that its demotion defers. change_protection() invalidates
 * secondary MMUs around the scan.
 */
void migrc_scan_cold(struct mmu_gather *tlb, struct vm_area_struct *vma,
		     unsigned long addr, pte_t *ptep, struct folio *folio,
		     int nr)
{
	/* MGLRU keeps no active flag on its folios: no reclaim candidates. */
	if (lru_gen_enabled() || !migrc_cold_demotable(folio))
		return;
	if (folio_test_active(folio)) {
		migrc_stat_add(MIGRC_EV_COLD_SKIPPED_ACTIVE, nr);
		return;
	}
	migrc_cold_wrprotect(tlb, vma, addr, ptep, nr, true);
}

/**
 * migrc_madvise_cold_page - MADV_COLD deactivates a page only @vma maps
 * @tlb: the madvise gather
 * @vma: the PTE's VMA, mmap_lock held
 * @addr: the PTE's address
 * @ptep: the PTE, under its PTE lock
 * @folio: the folio it maps
 * @nr: how many PTEs from @ptep on map @folio
 *
 * The caller said the range is cold: if demotion may move @folio, take the
 * write bit of a writable PTE.
 */
void migrc_madvise_cold_page(struct mmu_gather *tlb,
			     struct vm_area_struct *vma, unsigned long addr,
			     pte_t *ptep, struct folio *folio, int nr)
{
	if (migrc_cold_demotable(folio))
		migrc_cold_wrprotect(tlb, vma, addr, ptep, nr, false);
}
