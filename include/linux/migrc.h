/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MIGRC: deferred TLB flushes for the migration of read-only folios.
 *
 * When every mapping of a migrated folio was read-only and clean, the TLB
 * flush of the migration is deferred until the source page leaves the page
 * allocator again, and then sent only to CPUs that have not flushed since.
 * The core (generations, request batching, cpumask pruning) is Rust:
 * rust/kernel/mm/migrc/. This header declares the C API it exports, the
 * storage C owns for it, and the inline helpers fast paths use.
 *
 * Ordering rules (see Documentation/mm/migrc.rst and the Rust module docs):
 * a generation is published with release after the architecture made the
 * invalidation visible; a CPU samples it with acquire before a flush and
 * records the sample with release after; the retired watermark is stored
 * with release and read with acquire by whoever skips a flush because of it.
 */
#ifndef _LINUX_MIGRC_H
#define _LINUX_MIGRC_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/gfp_types.h>
#include <linux/jump_label.h>
#include <linux/migrc_events.h>
#include <linux/mm_types.h>
#include <linux/percpu.h>
#include <linux/pgtable.h>
#include <asm/tlbflush.h>

struct address_space;
struct cpumask;
struct dentry;
struct arch_tlbflush_unmap_batch;

/**
 * struct migrc_gens - global MIGRC generation state
 * @latest: the last published generation (0: none yet)
 * @retired: every request up to this generation is flushed or pruned
 *
 * Same layout as the Rust `GenCounter` (checked at build time). Written
 * only by the Rust core; read by C fast paths through the helpers below.
 */
struct migrc_gens {
	atomic64_t latest;
	atomic64_t retired;
};

/*
 * Fault injection for the tests (CONFIG_MIGRC_DEBUG only; the names exist
 * in every configuration, so that callers need no #ifdef): the bit numbers
 * of /sys/kernel/debug/migrc/break, one per line of
 * <linux/migrc_break_defs.h>.
 */
enum migrc_break {
#define MIGRC_BREAK_RULE(NAME, ...)	MIGRC_BREAK_##NAME,
#define MIGRC_TEST_AID(NAME, ...)	MIGRC_##NAME,
#include <linux/migrc_break_defs.h>
#undef MIGRC_BREAK_RULE
#undef MIGRC_TEST_AID
	NR_MIGRC_BREAKS
};

#ifdef CONFIG_MIGRC_DEBUG
extern unsigned long migrc_break_mask;

/* Whether @bit is set: a rule broken, or a test aid on. */
static inline bool migrc_broken(enum migrc_break bit)
{
	return unlikely(test_bit(bit, &migrc_break_mask));
}

bool migrc_rule_broken(void);
void migrc_debug_debugfs_init(struct dentry *dir);
#else
static inline bool migrc_broken(enum migrc_break bit)
{
	return false;
}

static inline bool migrc_rule_broken(void)
{
	return false;
}

static inline void migrc_debug_debugfs_init(struct dentry *dir) { }
#endif

/* The mms a scope tracks by generation; more fall back to tlb_flush_batched. */
#define MIGRC_SCOPE_MMS		4

/**
 * struct migrc_scope - one migration's claim on its task's read-only batch
 * @owner: this migration owns the batch: it alone unmaps into it and
 *         publishes or flushes it (false for a migration nested in another)
 * @nr_mms: how many of @mms are set
 * @mms: the mms with a PTE in the batch, each counted in its
 *       migrc_ro_unpublished and held by mmgrab() until the batch is
 *       published or flushed
 *
 * Lives on the stack of migrate_pages_batch(), between migrc_scope_begin()
 * and migrc_scope_end().
 */
struct migrc_scope {
	bool owner;
	unsigned int nr_mms;
	struct mm_struct *mms[MIGRC_SCOPE_MMS];
};

/*
 * The shadow debug mode (CONFIG_MIGRC_DEBUG, mm/migrc_debug.c): its own
 * record of which frames CPUs may still read through stale entries, built
 * from rmap's unmaps into a read-only batch and the architecture's flush
 * completions, never from the generations it checks.
 */
#ifdef CONFIG_MIGRC_DEBUG
extern struct page_ext_operations migrc_debug_ops;
extern atomic64_t migrc_shadow_clock;

void migrc_debug_mark(struct mm_struct *mm, pte_t pteval,
		      const struct cpumask *cpus, u64 arch_gen);
void migrc_debug_leave(struct page *page, unsigned int order);
void migrc_debug_remap(softleaf_t old, unsigned long pfn, unsigned long nr);
void migrc_debug_discard(struct page *page, unsigned int order);
void migrc_debug_write(struct page *page, unsigned long nr);
void migrc_debug_file_change(struct folio *folio);
void migrc_debug_mm_flushed(struct mm_struct *mm, u64 sampled);
void migrc_debug_record(u64 sampled);
void migrc_debug_flushed_cpus(const struct cpumask *mask, u64 sampled);
void migrc_debug_hold_src(struct folio *src);

/*
 * The architecture's side of the shadow: an arch header may define these
 * (x86: <asm/tlbflush.h>); without them the check of an mm's flush finds
 * no CPU behind, as nothing is ever deferred there.
 */
#ifndef migrc_arch_mm_gen
/**
 * migrc_arch_mm_gen - the architecture's flush generation of @mm
 * @mm: an mm
 *
 * Read just before an unmap's invalidation, plus one, it is at most the
 * generation that covers the unmap, even with concurrent invalidations.
 *
 * Return: 0 where the architecture has none.
 */
static inline u64 migrc_arch_mm_gen(struct mm_struct *mm)
{
	return 0;
}
#endif

#ifndef migrc_arch_cpu_behind
/**
 * migrc_arch_cpu_behind - whether this CPU may use a stale entry of @mm
 * @mm: an mm
 * @gen: the architecture's generation of @mm after a deferred unmap
 *
 * Called with interrupts disabled (an IPI), so that no switch or flush
 * runs halfway.
 *
 * Return: true if this CPU may still use an entry invalidated at @gen.
 */
static inline bool migrc_arch_cpu_behind(struct mm_struct *mm, u64 gen)
{
	return false;
}
#endif

/* The shadow clock, read (acquire) before a flush it will be recorded for. */
static inline u64 migrc_debug_clock(void)
{
	return atomic64_read_acquire(&migrc_shadow_clock);
}

#ifndef migrc_arch_cpu_uses_mm
/**
 * migrc_arch_cpu_uses_mm - whether @cpu may use translations of @mm now
 * @cpu: a CPU
 * @mm: an mm whose PTE was cleared, its invalidation visible; NULL for
 *      any user mm
 *
 * Return: false if @cpu catches up with that invalidation before it can
 * use a translation it invalidated; true if it may not.
 */
static inline bool migrc_arch_cpu_uses_mm(unsigned int cpu,
					  struct mm_struct *mm)
{
	return true;
}
#endif

/* A new mm (fork, exec) starts without the shadow state of its parent. */
static inline void migrc_debug_mm_init(struct mm_struct *mm)
{
	atomic64_set(&mm->migrc_debug_stamp, 0);
	atomic64_set(&mm->migrc_debug_arch_gen, 0);
	atomic64_set(&mm->migrc_debug_checked, 0);
}
#else
static inline void migrc_debug_mark(struct mm_struct *mm, pte_t pteval,
				    const struct cpumask *cpus, u64 arch_gen) { }
static inline void migrc_debug_mm_init(struct mm_struct *mm) { }
static inline u64 migrc_arch_mm_gen(struct mm_struct *mm)
{
	return 0;
}

static inline void migrc_debug_leave(struct page *page, unsigned int order) { }
static inline void migrc_debug_remap(softleaf_t old, unsigned long pfn,
				     unsigned long nr) { }
static inline void migrc_debug_discard(struct page *page,
				       unsigned int order) { }
static inline void migrc_debug_write(struct page *page, unsigned long nr) { }
static inline void migrc_debug_file_change(struct folio *folio) { }
static inline void migrc_debug_mm_flushed(struct mm_struct *mm, u64 sampled) { }
static inline void migrc_debug_record(u64 sampled) { }
static inline void migrc_debug_flushed_cpus(const struct cpumask *mask,
					    u64 sampled) { }
static inline void migrc_debug_hold_src(struct folio *src) { }
static inline u64 migrc_debug_clock(void)
{
	return 0;
}
#endif

/**
 * struct migrc_sample - what a CPU read before a flush that makes it clean
 * @gen: the latest published MIGRC generation
 * @shadow: the shadow debug mode's clock (0 without CONFIG_MIGRC_DEBUG)
 */
struct migrc_sample {
	u64 gen;
	u64 shadow;
};

/* Where a NUMA hinting scan is counted until its flush: mm/migrc.c. */
enum migrc_numa_scan {
	MIGRC_SCAN_IN_MM,	/* mm->migrc_wp_pending, as every gather */
	MIGRC_SCAN_NOWHERE,	/* a VMA no CPU can write through */
	MIGRC_SCAN_IN_VMA,	/* the VMA's numab_state */
};

#ifdef CONFIG_MIGRC

extern struct migrc_gens migrc_gens;
DECLARE_STATIC_KEY_FALSE(migrc_defer_key);
DECLARE_PER_CPU(atomic64_t, migrc_cpu_gen);

/* Implemented in Rust: rust/kernel/mm/migrc/ffi.rs. */
int migrc_rust_init(unsigned int slots, unsigned long max_pending_pages);
u64 migrc_publish(const struct cpumask *mask, unsigned long nr_pages);
unsigned int migrc_flush_upto(u64 gen, enum migrc_event cause);
unsigned int migrc_flush_cpus_upto(const struct cpumask *mask, u64 gen,
				   enum migrc_event cause);
void migrc_flush_all(enum migrc_event cause);

/* Implemented in C for the Rust core: mm/migrc.c and the architecture. */
void migrc_stat_add(enum migrc_event ev, u64 nr);
void migrc_trace_publish(u64 gen, u64 nr_pages, unsigned int nr_cpus);
void migrc_trace_flush(enum migrc_event cause, u64 need, u64 clean_to,
		       unsigned int cpus, unsigned int pruned);
u64 migrc_stat_read(enum migrc_event ev);
void migrc_flush_cpus(const struct cpumask *mask);
void migrc_flush_cpus_now(const struct cpumask *mask, enum migrc_event cause);
void migrc_refuse(enum migrc_event why, unsigned long nr);
atomic64_t *migrc_cpu_flushed_gen(unsigned int cpu);

/* The read-only batch of a migration: mm/migrc_batch.c. */
void migrc_scope_begin(struct migrc_scope *scope);
u64 migrc_scope_publish(struct migrc_scope *scope, unsigned long nr_pages);
void migrc_scope_end(struct migrc_scope *scope);
void migrc_flush_mm_before_write(struct mm_struct *mm);
bool migrc_mm_maybe_stale(struct mm_struct *mm);

void migrc_hold(enum migrc_break aid);

/* NUMA hinting scans: mm/migrc.c. */
struct mmu_gather;
enum migrc_numa_scan migrc_numa_scan_begin(struct mmu_gather *tlb,
					   struct vm_area_struct *vma);
void migrc_numa_scan_end(void);
void migrc_numa_scan_flushed(struct vm_area_struct *vma,
			     enum migrc_numa_scan counted);
void migrc_numa_scan_wait(struct vm_area_struct *vma, struct folio *folio);

/* C glue: mm/migrc.c and the architecture. */
void migrc_page_flush(struct page *page, u64 gen);
void migrc_flush_pending(enum migrc_event cause);
void migrc_src_still_used(u64 gen);
bool migrc_defer_forbidden(void);
void migrc_kick_flush(void);

/*
 * The architecture's flush: an arch header (x86: <asm/tlbflush.h>) that
 * can defer a read-only batch defines all three. Without them, every batch
 * is flushed at once as without MIGRC (counted in migrc_declined_arch).
 * arm64 is one such: MIGRC saves the IPIs of a read-only batch, and arm64
 * sends none, as arch_tlbbatch_add_pending() has already broadcast a TLBI
 * for every page and arch_tlbbatch_flush() only waits for them with a DSB.
 * The defaults serve built-in code only: Rust's bindgen reads this header
 * as a module would, and x86 declares flush_tlb_all() for built-in code
 * alone.
 */
#if !defined(migrc_arch_batch_cpus) && !defined(MODULE)
/**
 * migrc_arch_batch_cpus - the CPUs a read-only batch must flush, if deferrable
 * @batch: a batch filled by arch_tlbbatch_add_pending()
 *
 * Return: the CPUs the batch must flush, or NULL to flush it at once.
 */
static inline const struct cpumask *
migrc_arch_batch_cpus(struct arch_tlbflush_unmap_batch *batch)
{
	return NULL;
}

/**
 * migrc_arch_batch_clear - forget a batch whose flush was deferred
 * @batch: the batch
 */
static inline void migrc_arch_batch_clear(struct arch_tlbflush_unmap_batch *batch)
{
}

/**
 * migrc_arch_flush - flush stale user translations on a set of CPUs
 * @mask: the CPUs to flush
 *
 * Called in task context with interrupts enabled; returns when every CPU
 * in @mask is flushed. Flushing everything everywhere is always enough.
 */
static inline void migrc_arch_flush(const struct cpumask *mask)
{
	flush_tlb_all();
}
#endif

/* Page-cache folios: mm/migrc_file.c (a writer's hook is in <linux/fs.h>). */
bool migrc_file_deferrable(struct folio *src, enum migrc_event *refused);
void migrc_file_deferred(struct address_space *mapping, u64 gen, long nr);
void migrc_file_partial_truncate(struct folio *folio);

/**
 * migrc_sample_flush - sample the latest generation before a flush
 *
 * Acquire pairs with the release publication of a generation, so the
 * invalidations of every request up to the sample are visible to the flush
 * that follows. The shadow clock is read after it: a CPU whose generation
 * covers a request then also has a shadow sample covering its unmaps.
 *
 * Return: the sample, to pass to migrc_record_local_flush().
 */
static inline struct migrc_sample migrc_sample_flush(void)
{
	struct migrc_sample s;

	s.gen = atomic64_read_acquire(&migrc_gens.latest);
	s.shadow = migrc_debug_clock();
	return s;
}

/**
 * migrc_record_local_flush - record that this CPU is clean up to @s
 * @s: a value of migrc_sample_flush() taken before the flush
 *
 * Call after a flush (or address-space switch) that removes every stale
 * user translation this CPU could use. Release pairs with the acquire load
 * of the pruning side. Call with preemption disabled.
 */
static inline void migrc_record_local_flush(struct migrc_sample s)
{
	/* The shadow first: the release below publishes both. */
	migrc_debug_record(s.shadow);
	atomic64_set_release(this_cpu_ptr(&migrc_cpu_gen), s.gen);
}

/**
 * migrc_gen_retired - whether every flush up to @gen is done
 * @gen: a generation (0 is always retired)
 *
 * The acquire load pairs with the release store that moved the watermark,
 * so a caller that skips a flush because of it observes those flushes.
 *
 * Return: true if the flushes up to @gen are all done.
 */
static inline bool migrc_gen_retired(u64 gen)
{
	return gen <= (u64)atomic64_read_acquire(&migrc_gens.retired);
}

/**
 * migrc_any_pending - whether some published flush is not done yet
 *
 * One acquire load of each watermark: the cheap test in front of every
 * forced flush. A generation published after the load of @latest belongs to
 * a migration whose destination is not mapped yet, so it cannot matter to a
 * caller that already holds the PTE lock of a mapping of the data.
 *
 * Return: true if a published flush is still pending.
 */
static inline bool migrc_any_pending(void)
{
	return !migrc_gen_retired(atomic64_read_acquire(&migrc_gens.latest));
}

/**
 * migrc_enabled - whether new migrations may defer their flush
 *
 * The switch of /sys/kernel/mm/migrc/enabled and migrc=off, and off when
 * the Rust core could not be set up. Switching off stops new deferrals
 * only: what is pending stays safe, and is flushed by the switch.
 *
 * Return: true if a migration may unmap into its read-only batch.
 */
static inline bool migrc_enabled(void)
{
	return static_branch_likely(&migrc_defer_key);
}

/*
 * The generation a free block waits for lives in its head page's
 * __folio_index: unused while the page is free (the allocator keeps its
 * state in lru, private and page_type), written at every free and copied
 * to every new block head (merges store it only when not 0: both heads
 * then held 0), cleared when a page that carried one leaves the allocator.
 * Zero means "nothing pending". MIGRC needs 64-bit, so the field holds the
 * full generation and "newer" is a plain maximum.
 */
static_assert(sizeof_field(struct page, __folio_index) == sizeof(u64));

static inline u64 migrc_page_gen(const struct page *page)
{
	return page->__folio_index;
}

static inline void migrc_page_set_gen(struct page *page, u64 gen)
{
	page->__folio_index = gen;
}

static inline u64 migrc_newer_gen(u64 a, u64 b)
{
	return a > b ? a : b;
}

/**
 * migrc_page_clean - whether no CPU can use a stale entry for a free block
 * @page: head of a free block
 *
 * Return: true if the flush the block waits for, if any, is done.
 */
static inline bool migrc_page_clean(const struct page *page)
{
	u64 gen = migrc_page_gen(page);

	return likely(!gen) || migrc_gen_retired(gen);
}

/**
 * migrc_keep_back - whether a free block goes behind clean ones
 * @gen: the generation it waits for (0: none)
 *
 * The allocator hands clean blocks out first, so that a deferred flush can
 * wait until its CPUs have flushed on their own (the test aid reuse_first
 * of CONFIG_MIGRC_DEBUG hands pending blocks out first instead).
 *
 * Return: true if the block should be taken only when no clean one is left.
 */
static inline bool migrc_keep_back(u64 gen)
{
	return gen && !migrc_gen_retired(gen) &&
	       !migrc_broken(MIGRC_REUSE_FIRST);
}

/**
 * migrc_alloc_clean_only - whether an allocation may take clean blocks only
 * @gfp: its flags
 *
 * A block whose flush is pending performs it as it leaves the allocator,
 * which sends IPIs and waits: only allocations that may enter direct
 * reclaim can. (The rule alloc of CONFIG_MIGRC_DEBUG lets every allocation
 * take them.)
 *
 * Return: true if the allocation must skip blocks whose flush is pending.
 */
static inline bool migrc_alloc_clean_only(gfp_t gfp)
{
	return !(gfp & __GFP_DIRECT_RECLAIM) && !migrc_broken(MIGRC_BREAK_ALLOC);
}

/**
 * migrc_page_leave - a block leaves the page allocator
 * @page: head of the block
 * @order: its order
 *
 * Every exit from the free lists calls this before anyone can write or map
 * the block: it performs the deferred flush the block still waits for (one
 * inline test when none) and forgets the generation.
 */
static inline void migrc_page_leave(struct page *page, unsigned int order)
{
	u64 gen = migrc_page_gen(page);

	/* A block that waits for nothing leaves without a store. */
	if (unlikely(gen)) {
		migrc_page_set_gen(page, 0);
		if (!migrc_gen_retired(gen) &&
		    !migrc_broken(MIGRC_BREAK_ALLOC))
			migrc_page_flush(page, gen);
	}
	migrc_debug_leave(page, order);
}

/**
 * migrc_flush_before_write - force deferred flushes before data may change
 * @mm: the mm whose read-only PTE becomes writable or is written through
 * @page: the page that PTE maps (may be NULL)
 *
 * Called where a read-only mapping becomes writable without a TLB flush
 * (write-fault reuse, swap-in, FOLL_FORCE), under the PTE lock of that
 * mapping. Task context, interrupts on. Only @mm's CPUs are flushed, and
 * only if @mm has a batched unmap not flushed yet: see
 * migrc_flush_mm_before_write().
 */
static inline void migrc_flush_before_write(struct mm_struct *mm,
					    struct page *page)
{
	if (unlikely(migrc_any_pending()) && !migrc_broken(MIGRC_BREAK_WRITE))
		migrc_flush_mm_before_write(mm);
	migrc_debug_write(page, 1);
}

/**
 * migrc_wp_pending_add - count a pending TLB flush that may hide a writable
 *                        entry
 * @mm: the mm whose PTEs change
 * @nr: 1 in inc_tlb_flush_pending(), -1 in dec_tlb_flush_pending(); -1 and
 *      back to 1 for a gather that write-protects nothing
 *      (migrc_tlb_no_writable(), migrc_tlb_finish())
 *
 * Ordered as tlb_flush_pending is (see inc_tlb_flush_pending()): raised
 * before the PTEs change, so their PTL publishes it, and lowered only after
 * the flush has completed.
 */
static inline void migrc_wp_pending_add(struct mm_struct *mm, int nr)
{
	atomic_add(nr, &mm->migrc_wp_pending);
}

/* A new mm (fork, exec): nothing pending, nothing deferred. */
static inline void migrc_mm_init(struct mm_struct *mm)
{
	atomic_set(&mm->migrc_wp_pending, 0);
	atomic_set(&mm->migrc_ro_unpublished, 0);
	atomic64_set(&mm->migrc_ro_gen, 0);
	atomic_long_set(&mm->migrc_ro_added, 0);
	atomic_long_set(&mm->migrc_ro_flushed, 0);
}

/**
 * migrc_wp_pending - whether a pending flush of @mm may hide a writable entry
 * @mm: the mm of the PTE in question
 *
 * As mm_tlb_flush_pending(), and with the same guarantee: called under the
 * PTL of a PTE, it sees any change of that PTE that is not flushed yet.
 *
 * Return: true if a change of the PTE that may have left a writable TLB
 * entry behind is not flushed yet.
 */
static inline bool migrc_wp_pending(const struct mm_struct *mm)
{
	return atomic_read(&mm->migrc_wp_pending);
}

#ifdef CONFIG_NUMA_BALANCING
/**
 * migrc_vma_writable_scan - whether a NUMA hinting scan of @vma, which may
 *                           be written, is not flushed yet
 * @vma: the VMA of a PTE a migration just cleared, under its PTE lock
 *
 * Return: true if a writable entry of a PTE of @vma that such a scan made
 * PROT_NONE may still be cached.
 */
static inline bool migrc_vma_writable_scan(const struct vm_area_struct *vma)
{
	const struct vma_numab_state *ns = READ_ONCE(vma->numab_state);

	return ns && atomic_read(&ns->migrc_writable_scans);
}
#else
static inline bool migrc_vma_writable_scan(const struct vm_area_struct *vma)
{
	return false;
}
#endif

/**
 * migrc_numa_fault_wait - a hinting fault is about to migrate a folio
 * @vma: the faulting VMA, its lock or mmap_lock held
 * @folio: the folio, isolated
 *
 * While the scan that made the PTE PROT_NONE has not flushed, the
 * migration would send a flush of its own: wait for the scan's instead
 * (migrc_numa_scan_wait()).
 */
static inline void migrc_numa_fault_wait(struct vm_area_struct *vma,
					 struct folio *folio)
{
	if (migrc_enabled() && migrc_vma_writable_scan(vma))
		migrc_numa_scan_wait(vma, folio);
}

/* Cold writable anonymous pages: mm/migrc_cold.c. */
void migrc_scan_cold(struct mmu_gather *tlb, struct vm_area_struct *vma,
		     unsigned long addr, pte_t *ptep, struct folio *folio,
		     int nr);
void migrc_madvise_cold_page(struct mmu_gather *tlb,
			     struct vm_area_struct *vma, unsigned long addr,
			     pte_t *ptep, struct folio *folio, int nr);
#ifdef CONFIG_NUMA_BALANCING
void migrc_cold_scan_begin(struct vm_area_struct *vma);
void migrc_cold_count_reuse(struct vm_area_struct *vma);
#else
static inline void migrc_cold_count_reuse(struct vm_area_struct *vma) { }
#endif

/**
 * migrc_write_reused - a write fault makes an exclusive anonymous page
 *                      writable again in place
 * @vma: the faulting VMA, its lock or mmap_lock held
 *
 * The NUMA scan may have taken that write bit: it judges each VMA by how
 * many come back this way (migrc_cold_scan_begin()).
 */
static inline void migrc_write_reused(struct vm_area_struct *vma)
{
	if (migrc_enabled())
		migrc_cold_count_reuse(vma);
}

/**
 * migrc_numa_scan_skip - a NUMA hinting scan leaves a present PTE as it is
 * @tlb: the scan's gather
 * @vma: the PTE's VMA
 * @addr: the PTE's address
 * @ptep: the PTE, under its PTE lock
 * @pte: its value
 * @folio: the folio it maps, or NULL
 * @nr: how many PTEs from @ptep on map @folio
 *
 * A writable PTE nobody accessed since reclaim last aged it may lose its
 * write bit to the scan's flush (migrc_scan_cold()).
 */
static inline void migrc_numa_scan_skip(struct mmu_gather *tlb,
					struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep,
					pte_t pte, struct folio *folio, int nr)
{
	if (migrc_enabled() && folio && pte_write(pte) && !pte_young(pte))
		migrc_scan_cold(tlb, vma, addr, ptep, folio, nr);
}

/**
 * migrc_madvise_cold - MADV_COLD deactivates a page only @vma maps
 * @tlb: the madvise gather
 * @vma: the PTE's VMA
 * @addr: the PTE's address
 * @ptep: the PTE, under its PTE lock
 * @pte: its value
 * @folio: the folio it maps
 * @nr: how many PTEs from @ptep on map @folio
 *
 * The range is cold by the caller's word: a writable PTE may lose its
 * write bit to the madvise flush (migrc_madvise_cold_page()).
 */
static inline void migrc_madvise_cold(struct mmu_gather *tlb,
				      struct vm_area_struct *vma,
				      unsigned long addr, pte_t *ptep,
				      pte_t pte, struct folio *folio, int nr)
{
	if (migrc_enabled() && pte_write(pte))
		migrc_madvise_cold_page(tlb, vma, addr, ptep, folio, nr);
}

#else /* !CONFIG_MIGRC */

static inline void migrc_scope_begin(struct migrc_scope *scope)
{
	scope->owner = false;
}

static inline u64 migrc_scope_publish(struct migrc_scope *scope,
				      unsigned long nr_pages)
{
	return 0;
}

static inline void migrc_scope_end(struct migrc_scope *scope) { }

static inline struct migrc_sample migrc_sample_flush(void)
{
	return (struct migrc_sample){ };
}

static inline void migrc_record_local_flush(struct migrc_sample s) { }
static inline bool migrc_gen_retired(u64 gen) { return true; }
static inline bool migrc_any_pending(void) { return false; }
static inline bool migrc_enabled(void) { return false; }
static inline u64 migrc_page_gen(const struct page *page)
{
	return 0;
}

static inline void migrc_page_set_gen(struct page *page, u64 gen) { }
static inline u64 migrc_newer_gen(u64 a, u64 b)
{
	return 0;
}

static inline bool migrc_page_clean(const struct page *page) { return true; }
static inline bool migrc_keep_back(u64 gen) { return false; }
static inline bool migrc_alloc_clean_only(gfp_t gfp) { return false; }
static inline void migrc_page_leave(struct page *page, unsigned int order) { }
static inline void migrc_flush_before_write(struct mm_struct *mm,
					    struct page *page) { }
static inline void migrc_flush_pending(enum migrc_event cause) { }
static inline void migrc_stat_add(enum migrc_event ev, u64 nr) { }
static inline void migrc_refuse(enum migrc_event why, unsigned long nr) { }
static inline void migrc_wp_pending_add(struct mm_struct *mm, int nr) { }
static inline void migrc_mm_init(struct mm_struct *mm) { }
struct mmu_gather;
static inline enum migrc_numa_scan
migrc_numa_scan_begin(struct mmu_gather *tlb, struct vm_area_struct *vma)
{
	return MIGRC_SCAN_IN_MM;
}

static inline void migrc_numa_scan_flushed(struct vm_area_struct *vma,
					   enum migrc_numa_scan counted) { }
static inline void migrc_numa_fault_wait(struct vm_area_struct *vma,
					 struct folio *folio) { }

static inline bool migrc_mm_maybe_stale(struct mm_struct *mm)
{
	return false;
}

static inline void migrc_numa_scan_end(void) { }
static inline void migrc_file_partial_truncate(struct folio *folio) { }
static inline void migrc_numa_scan_skip(struct mmu_gather *tlb,
					struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep,
					pte_t pte, struct folio *folio,
					int nr) { }
static inline void migrc_madvise_cold(struct mmu_gather *tlb,
				      struct vm_area_struct *vma,
				      unsigned long addr, pte_t *ptep,
				      pte_t pte, struct folio *folio,
				      int nr) { }
static inline void migrc_write_reused(struct vm_area_struct *vma) { }

#endif /* CONFIG_MIGRC */

/* Count one MIGRC event of the C glue (migrc_stat_add()). */
static inline void migrc_count(enum migrc_event ev)
{
	migrc_stat_add(ev, 1);
}

#endif /* _LINUX_MIGRC_H */
