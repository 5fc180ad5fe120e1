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

/*
 * Take the write bit from the PTE at @ptep (under its PTE lock), if it is
 * writable and maps a small exclusive anonymous page nobody else tracks
 * writes of, keeping it dirty, and add it to @tlb's flush range. @tlb
 * flushes what it gathered before the walk is done, and is counted where
 * migrations look until then.
 */
static void migrc_cold_wrprotect(struct mmu_gather *tlb,
				 struct vm_area_struct *vma, unsigned long addr,
				 pte_t *ptep, int nr, bool notified)
{
	pte_t old = ptep_get(ptep);
	enum migrc_event refused;
	struct page *page;

	if (!pte_write(old) || !(vma->vm_flags & VM_WRITE))
		return;
	page = vm_normal_page(vma, addr, old);
	if (!page)
		return;
	refused = migrc_cold_refusal(vma, page, nr, notified);
	if (refused != MIGRC_COLD_OK) {
		migrc_stat_add(refused, nr);
		return;
	}
	old = ptep_modify_prot_start(vma, addr, ptep);
	ptep_modify_prot_commit(vma, addr, ptep, old, pte_wrprotect(old));
	/* The rule: no deferral may rely on it before the walk flushed it. */
	if (!migrc_broken(MIGRC_BREAK_COLD))
		tlb_flush_pte_range(tlb, addr, PAGE_SIZE);
	migrc_stat_add(MIGRC_EV_COLD_WRPROTECTED, 1);
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
 * a reclaim candidate (on the inactive list) that demotion may move, take
 * the write bit, so that its demotion defers. change_protection()
 * invalidates secondary MMUs around the scan.
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
