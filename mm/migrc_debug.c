// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRC shadow debug mode (CONFIG_MIGRC_DEBUG).
 *
 * Checks that no CPU can still read a page through a stale TLB entry of a
 * deferred migration flush when the page leaves the page allocator, when a
 * copy of its data becomes writable, or when an mm's mapping changes, and
 * that no writable PTE is ever deferred. It keeps its own books and derives
 * them from two kinds of events only:
 *
 *  - a PTE is cleared into a migration's read-only batch (rmap): its frame
 *    is marked with a stamp of the shadow clock and with the CPUs that may
 *    cache the translation (the batch's cpumask, as the architecture
 *    collected it);
 *  - a CPU completes a flush (the architecture's flush records on context
 *    switch and in the flush handler, and the completion of a batch flush
 *    sent to a set of CPUs): the CPU is clean up to the shadow clock value
 *    it read before the flush.
 *
 * A mark is clean once every one of its CPUs is clean up to its stamp, or
 * uses no user mm now (see migrc_mark_stale_cpu()). The shadow never
 * reads a page's MIGRC generation, the request pool or the generations the
 * production code records per CPU, so a bug that loses a generation,
 * retires a request too early or prunes a CPU wrongly cannot also blind
 * it.
 *
 * Ordering: a stamp is taken (fully ordered) after the PTE was cleared and
 * the architecture made the invalidation visible (x86: the mm's tlb_gen
 * bump), and after the mark of the mm (its unpublished count, or
 * tlb_flush_batched); a CPU reads the clock
 * (acquire) after it read the production generation and before the flush.
 * So a CPU whose production record covers a batch also has a shadow record
 * covering the batch's stamps: the shadow never reports a page the
 * production code flushed correctly.
 *
 * A third check needs no book at all: when a source is copied while its
 * mark is not clean, the shadow keeps a checksum of the copy; when the
 * source leaves the page allocator its data must still match. A writable
 * TLB entry that survived into the read-only batch (a rule that decides
 * what may be deferred got it wrong) shows up there, as a write that
 * reached the source after the copy.
 *
 * Only the first BITS_PER_LONG CPUs of a mark are tracked.
 */
#define pr_fmt(fmt) "migrc: " fmt

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/cpumask.h>
#include <linux/crc32.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/folio_batch.h>
#include <linux/highmem.h>
#include <linux/kasan.h>
#include <linux/leafops.h>
#include <linux/migrc.h>
#include <linux/mm.h>
#include <linux/page_ext.h>
#include <linux/page_table_check.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

atomic64_t migrc_shadow_clock = ATOMIC64_INIT(0);
DEFINE_PER_CPU(atomic64_t, migrc_shadow_done);

/**
 * struct migrc_mark - the shadow state of one page frame (page_ext)
 * @stamp: shadow clock value when a PTE of the frame went into a read-only
 *         batch (0: no mark)
 * @cpus: the CPUs that may cache that translation (the first BITS_PER_LONG)
 * @copy_stamp: the same for the frame whose data this frame got by
 *              migration (0: none)
 * @copy_cpus: the CPUs of that mark
 * @sum: crc32 of the data a migration copied out of this frame
 * @summed: whether @sum is set, and under which rules (enum migrc_summed)
 *
 * The first pair says who may still read this frame; the second, who may
 * still read an older copy of its data, which must not change meanwhile.
 */
struct migrc_mark {
	u64 stamp;
	unsigned long cpus;
	u64 copy_stamp;
	unsigned long copy_cpus;
	u32 sum;
	u8 summed;
};

enum migrc_summed {
	MIGRC_UNSUMMED,
	MIGRC_SUMMED,
	/*
	 * Taken while a safety rule was broken on purpose: the source may
	 * have been written, as the tests expect. Checked only while a rule
	 * is still broken, so that sources left over from such a test cannot
	 * fail a later one.
	 */
	MIGRC_SUMMED_BROKEN,
};

static bool need_migrc_debug(void)
{
	return true;
}

/*
 * The shadow learns of copies from the page table check, which
 * CONFIG_MIGRC_DEBUG enforces; page_table_check=off on the command line
 * still turns it off. Its page_ext init runs before this one.
 */
static void __init init_migrc_debug(void)
{
	if (static_branch_likely(&page_table_check_disabled))
		pr_err("migrc: page_table_check=off: the shadow does not see copies\n");
}

struct page_ext_operations migrc_debug_ops = {
	.size = sizeof(struct migrc_mark),
	.need = need_migrc_debug,
	.init = init_migrc_debug,
};

static struct migrc_mark *migrc_mark_of(struct page_ext *ext)
{
	return page_ext_data(ext, &migrc_debug_ops);
}

/* The CPUs of a mark that have not recorded a flush since its stamp. */
static unsigned long migrc_mark_behind(u64 stamp, unsigned long cpus)
{
	unsigned long bit, behind = 0;

	if (!stamp)
		return 0;
	for_each_set_bit(bit, &cpus, min_t(unsigned int, nr_cpu_ids,
					   BITS_PER_LONG))
		if (atomic64_read_acquire(per_cpu_ptr(&migrc_shadow_done,
						      bit)) < stamp)
			__set_bit(bit, &behind);
	return behind;
}

/*
 * A CPU of a mark that may still read through a stale entry: the lowest
 * one behind its stamp that uses a user mm now, or -1 if none (the mark
 * is clean). A CPU that uses none (x86: lazy TLB mode, init_mm) catches up
 * with the tlb_gen that each marked unmap raised before it uses an entry
 * again, and records that; the architecture's flushes leave it alone.
 */
static int migrc_mark_stale_cpu(u64 stamp, unsigned long cpus)
{
	unsigned long behind = migrc_mark_behind(stamp, cpus);
	unsigned long bit;

	for_each_set_bit(bit, &behind, BITS_PER_LONG)
		if (migrc_arch_cpu_uses_mm(bit, NULL))
			return bit;
	return -1;
}

/* Never moves back: a late record of an older sample covers less. */
static void migrc_shadow_advance(atomic64_t *done, u64 sampled)
{
	s64 old = atomic64_read(done);

	while (old < (s64)sampled &&
	       !atomic64_try_cmpxchg_release(done, &old, sampled))
		;
}

enum migrc_debug_what {
	MIGRC_DEBUG_LEAVE,
	MIGRC_DEBUG_WRITE,
	MIGRC_DEBUG_WRITABLE,
	MIGRC_DEBUG_BATCHED,
	MIGRC_DEBUG_WRITTEN,
	MIGRC_DEBUG_FILE_CHANGE,
	MIGRC_DEBUG_FILE_WRITER,
};

static const char * const migrc_debug_text[] = {
	[MIGRC_DEBUG_LEAVE] = "leaves the page allocator",
	[MIGRC_DEBUG_WRITE] = "becomes writable (a copy of its data)",
	[MIGRC_DEBUG_WRITABLE] = "was deferred with a writable PTE",
	[MIGRC_DEBUG_BATCHED] = "was unmapped and its mm changed",
	[MIGRC_DEBUG_WRITTEN] = "was written after its migration copied it",
	[MIGRC_DEBUG_FILE_CHANGE] = "changes in the page cache (a copy of its data)",
	[MIGRC_DEBUG_FILE_WRITER] = "gets a writer in the page cache (a copy of its data)",
};

/*
 * Count and report a violation. With a safety rule broken on purpose the
 * tests expect violations: report them without a WARN, which would fail
 * the test run for what it set out to show.
 */
static void migrc_debug_report(enum migrc_debug_what what, unsigned long pfn,
			       u64 stamp, int cpu)
{
	migrc_count(MIGRC_EV_DEBUG_STALE);
	if (migrc_rule_broken()) {
		pr_warn_ratelimited("shadow: pfn %#lx %s while cpu %d may hold a stale entry (stamp %llu)\n",
				    pfn, migrc_debug_text[what], cpu, stamp);
		return;
	}
	WARN(1, "migrc shadow: pfn %#lx %s while cpu %d may hold a stale entry (stamp %llu, cpu clean up to %lld)\n",
	     pfn, migrc_debug_text[what], cpu, stamp,
	     cpu >= 0 ? (s64)atomic64_read(per_cpu_ptr(&migrc_shadow_done, cpu)) :
			-1LL);
}

/*
 * The CPUs of @cpus that may use a PTE of @mm just cleared. Any other
 * catches up with the unmap's invalidation before it uses a translation
 * of @mm, and records that: a CPU outside mm_cpumask when it switches to
 * @mm, one the architecture finds not using @mm now (x86: lazy TLB mode,
 * init_mm or another mm loaded) when it uses @mm again. No flush needs to
 * reach those CPUs, and the flush of another mm whose copy of the page
 * becomes writable (migrc_flush_mm_before_write()) may not. Call after
 * the invalidation and the stamp, both fully ordered.
 */
static unsigned long migrc_mark_cpus(struct mm_struct *mm,
				     const struct cpumask *cpus)
{
	unsigned long mine = cpumask_bits(cpus)[0] &
			     cpumask_bits(mm_cpumask(mm))[0];
	unsigned long bit;

	for_each_set_bit(bit, &mine, min_t(unsigned int, nr_cpu_ids,
					   BITS_PER_LONG))
		if (!migrc_arch_cpu_uses_mm(bit, mm))
			__clear_bit(bit, &mine);
	return mine;
}

/**
 * migrc_debug_mark - a PTE was cleared into a read-only batch
 * @mm: its mm
 * @pteval: the PTE as it was
 * @cpus: the CPUs of the batch so far, as the architecture collected them
 * @arch_gen: the architecture's generation of @mm that covers this unmap
 *            (at most: see migrc_arch_mm_gen())
 *
 * Called by rmap under the PTE lock, after the architecture added the PTE
 * to the batch and the mm was marked (migrc_ro_note_mm()).
 */
void migrc_debug_mark(struct mm_struct *mm, pte_t pteval,
		      const struct cpumask *cpus, u64 arch_gen)
{
	unsigned long pfn = pte_pfn(pteval);
	struct page_ext *ext;
	struct migrc_mark *m;
	u64 stamp;

	if (pte_write(pteval))
		migrc_debug_report(MIGRC_DEBUG_WRITABLE, pfn, 0, -1);
	if (!pfn_valid(pfn))
		return;
	/* Fully ordered: after the invalidation and the batched mark. */
	stamp = atomic64_inc_return(&migrc_shadow_clock);
	/* The stamp first: a reader of the generation sees its stamp. */
	migrc_shadow_advance(&mm->migrc_debug_stamp, stamp);
	migrc_shadow_advance(&mm->migrc_debug_arch_gen, arch_gen);
	ext = page_ext_get(pfn_to_page(pfn));
	if (!ext)
		return;
	m = migrc_mark_of(ext);
	/* The CPUs of the last mark that did not flush since stay in it. */
	WRITE_ONCE(m->cpus, migrc_mark_behind(READ_ONCE(m->stamp),
					      READ_ONCE(m->cpus)) |
			    migrc_mark_cpus(mm, cpus));
	/* Pairs with the acquire loads of the checks: the CPUs come first. */
	smp_store_release(&m->stamp, stamp);
	page_ext_put(ext);
}

/*
 * The checksum of a page's data. migrc_debug_leave() reads a page before
 * the allocator unpoisons it: KASAN's checks are suspended meanwhile, so
 * that a changed source is reported by the shadow's own warning, not as a
 * use-after-free of the shadow itself.
 */
static u32 migrc_page_sum(struct page *page)
{
	void *addr = kmap_local_page(page);
	u32 sum;

	kasan_disable_current();
	sum = crc32(0, kasan_reset_tag(addr), PAGE_SIZE);
	kasan_enable_current();
	kunmap_local(addr);
	return sum;
}

/* Whether a source copied by a migration changed since, while it was free. */
static bool migrc_source_changed(struct page *page, struct migrc_mark *m)
{
	u8 summed = READ_ONCE(m->summed);

	if (summed == MIGRC_UNSUMMED)
		return false;
	WRITE_ONCE(m->summed, MIGRC_UNSUMMED);
	/* memory_failure() may have taken the frame away: do not read it. */
	if (PageHWPoison(page))
		return false;
	if (summed == MIGRC_SUMMED_BROKEN && !migrc_rule_broken())
		return false;
	return migrc_page_sum(page) != READ_ONCE(m->sum);
}

/**
 * migrc_debug_leave - check a block leaving the page allocator
 * @page: its first page
 * @order: its order
 *
 * Every page must be clean: a CPU that could still read one through a
 * stale entry would read the next owner's data. A migrated source must
 * still hold the data its migration copied: a write after the copy went
 * through an entry the migration did not flush, and is lost. Clears the
 * marks.
 */
void migrc_debug_leave(struct page *page, unsigned int order)
{
	struct page_ext_iter iter;
	struct page_ext *ext;
	unsigned long i = 0;

	rcu_read_lock();
	for_each_page_ext(page, 1UL << order, ext, iter) {
		struct migrc_mark *m = migrc_mark_of(ext);
		/* Pairs with migrc_debug_mark(): its CPUs are visible. */
		u64 stamp = smp_load_acquire(&m->stamp);
		int cpu = migrc_mark_stale_cpu(stamp, READ_ONCE(m->cpus));

		if (cpu >= 0)
			migrc_debug_report(MIGRC_DEBUG_LEAVE,
					   page_to_pfn(page) + i, stamp, cpu);
		if (migrc_source_changed(page + i, m))
			migrc_debug_report(MIGRC_DEBUG_WRITTEN,
					   page_to_pfn(page) + i, stamp, -1);
		/* A new page: no one reads it, it is no copy of anything. */
		if (stamp)
			WRITE_ONCE(m->stamp, 0);
		WRITE_ONCE(m->copy_stamp, 0);
		i++;
	}
	rcu_read_unlock();
}

/*
 * A page-cache folio got a copy whose CPUs may read an older one: its
 * mapping remembers the newest stamp, so that a new writer looks.
 * Called while the migration holds the folio locked: its mapping stays.
 */
static void migrc_debug_mapping_copied(struct folio *folio, u64 stamp)
{
	if (!folio_test_anon(folio) && folio->mapping)
		migrc_shadow_advance(&folio->mapping->migrc_debug_copied,
				     stamp);
}

/*
 * @dst holds the data of @src, copied by a migration. Until the CPUs that
 * may still read the source are clean, the copy must not change: they
 * would read the old data after the new data was written. The copy
 * remembers them (the source's own mark, or, if no CPU of it is behind its
 * stamp, what the source remembered as a copy itself). A source with a
 * CPU behind gets the checksum of the copy, which migrc_debug_leave()
 * compares with its data.
 */
static void migrc_debug_copy(struct page *src, struct page *dst)
{
	struct page_ext *s = page_ext_get(src);
	struct page_ext *d = s ? page_ext_get(dst) : NULL;
	struct migrc_mark *ms, *md;
	unsigned long cpus;
	u64 stamp;

	if (d) {
		ms = migrc_mark_of(s);
		md = migrc_mark_of(d);
		/* Pairs with the release stores of the marks. */
		stamp = smp_load_acquire(&ms->stamp);
		cpus = READ_ONCE(ms->cpus);
		/*
		 * Lazy CPUs count: one that wrote through a stale writable
		 * entry before it went idle must show in the checksum.
		 */
		if (!migrc_mark_behind(stamp, cpus)) {
			/* As above, for the copy mark. */
			stamp = smp_load_acquire(&ms->copy_stamp);
			cpus = READ_ONCE(ms->copy_cpus);
		} else if (READ_ONCE(ms->summed) == MIGRC_UNSUMMED) {
			/* Once per source: each of its entries maps the copy. */
			WRITE_ONCE(ms->sum, migrc_page_sum(dst));
			WRITE_ONCE(ms->summed, migrc_rule_broken() ?
				   MIGRC_SUMMED_BROKEN : MIGRC_SUMMED);
		}
		WRITE_ONCE(md->copy_cpus, cpus);
		/* Pairs with migrc_debug_write(): the CPUs come first. */
		smp_store_release(&md->copy_stamp, stamp);
		page_ext_put(d);
		if (cpus)
			migrc_debug_mapping_copied(page_folio(dst), stamp);
	}
	if (s)
		page_ext_put(s);
}

/**
 * migrc_debug_remap - a user entry is set, maybe where a migration entry was
 * @old: the entry it replaces, as a leaf entry (none if it was present)
 * @pfn: the first page the new entry maps
 * @nr: how many pages from @pfn
 *
 * From the page table check, for every present user entry set. A
 * migration entry that gives way to another page is a migration's copy
 * being mapped, still locked by its migration: nobody wrote it since the
 * copy. The shadow learns of copies here rather than from the migration,
 * which calls no MIGRC hook between the copy and the unlock; the one copy
 * it cannot see, of a source no entry maps any more, had all its entries
 * zapped, and every zap flushes the deferred entries of its mm.
 */
void migrc_debug_remap(softleaf_t old, unsigned long pfn, unsigned long nr)
{
	unsigned long src, i;

	if (!softleaf_is_migration(old) || !pfn_valid(pfn))
		return;
	src = softleaf_to_pfn(old);
	/*
	 * A failed migration or a split maps its source again: no copy.
	 * MIGRC never defers hugetlb, whose contiguous entries (arm64) all
	 * name the head page.
	 */
	if (page_folio(pfn_to_page(src)) == page_folio(pfn_to_page(pfn)) ||
	    folio_test_hugetlb(page_folio(pfn_to_page(pfn))))
		return;
	for (i = 0; i < nr; i++)
		migrc_debug_copy(pfn_to_page(src + i), pfn_to_page(pfn + i));
}

/**
 * migrc_debug_discard - free pages whose data the host may take away
 * @page: the first page of the block
 * @order: its order
 *
 * Free page reporting lets the hypervisor discard reported pages, which
 * read back as zeroes: their checksums no longer say anything.
 */
void migrc_debug_discard(struct page *page, unsigned int order)
{
	struct page_ext_iter iter;
	struct page_ext *ext;

	rcu_read_lock();
	for_each_page_ext(page, 1UL << order, ext, iter)
		WRITE_ONCE(migrc_mark_of(ext)->summed, MIGRC_UNSUMMED);
	rcu_read_unlock();
}

/*
 * The data of @page may change: no CPU may still read an older copy.
 * Return whether a CPU of the copy is still behind its stamp (stale or
 * not: a lazy one may use the mm again).
 */
static bool migrc_debug_check_copy(struct page *page,
				   enum migrc_debug_what what)
{
	struct page_ext *ext = page_ext_get(page);
	struct migrc_mark *m;
	unsigned long cpus;
	u64 stamp;
	int cpu;

	if (!ext)
		return false;
	m = migrc_mark_of(ext);
	/* Pairs with migrc_debug_copy(): its CPUs are visible. */
	stamp = smp_load_acquire(&m->copy_stamp);
	cpus = READ_ONCE(m->copy_cpus);
	cpu = migrc_mark_stale_cpu(stamp, cpus);
	if (cpu >= 0)
		migrc_debug_report(what, page_to_pfn(page), stamp, cpu);
	page_ext_put(ext);
	return migrc_mark_behind(stamp, cpus);
}

/* The same for every page of @folio. */
static bool migrc_debug_check_folio(struct folio *folio,
				    enum migrc_debug_what what)
{
	long i, nr = folio_nr_pages(folio);
	bool behind = false;

	for (i = 0; i < nr; i++)
		behind |= migrc_debug_check_copy(folio_page(folio, i), what);
	return behind;
}

/**
 * migrc_debug_write - PTEs of pages are about to become writable
 * @page: the first page (may be NULL)
 * @nr: how many pages from @page
 *
 * From migrc_flush_before_write() (an entry made writable in place) and
 * from the page table check of every writable entry set (a fault, a
 * migration's restored entry, ...): CONFIG_MIGRC_DEBUG enforces
 * CONFIG_PAGE_TABLE_CHECK, so no path that maps a page writable needs a
 * call of its own.
 */
void migrc_debug_write(struct page *page, unsigned long nr)
{
	unsigned long i;

	for (i = 0; page && i < nr; i++)
		migrc_debug_check_copy(page + i, MIGRC_DEBUG_WRITE);
}

/**
 * migrc_debug_file_change - the data of a page-cache folio may change
 * @folio: the folio, locked or mapped by a PTE the caller is making writable
 *
 * Called where write(2) and its relatives, a truncation or a writable
 * mapping may change the page cache in place (mm/migrc_file.c must have
 * flushed for the writer before).
 */
void migrc_debug_file_change(struct folio *folio)
{
	migrc_debug_check_folio(folio, MIGRC_DEBUG_FILE_CHANGE);
}

/**
 * migrc_debug_file_writer - a writer got access to a mapping
 * @mapping: the page cache the writer may now change
 *
 * From migrc_file_new_writer(), after the flush mm/migrc_file.c owes the
 * writer: no CPU may still read an older copy of a folio of @mapping, or
 * it would read the old data once the writer wrote. The write itself is
 * checked too (migrc_debug_file_change(), migrc_debug_write()), but a
 * flush that comes in between for any other reason hides a missed one
 * there. The page cache is walked only while a copy the shadow saw enter
 * it may have a CPU behind; once none has, the mapping forgets it.
 */
void migrc_debug_file_writer(struct address_space *mapping)
{
	u64 copied = atomic64_read(&mapping->migrc_debug_copied);
	struct folio_batch fbatch;
	bool behind = false;
	pgoff_t index = 0;
	unsigned int i;

	if (!copied)
		return;
	folio_batch_init(&fbatch);
	while (filemap_get_folios(mapping, &index, ULONG_MAX, &fbatch)) {
		for (i = 0; i < folio_batch_count(&fbatch); i++)
			behind |= migrc_debug_check_folio(fbatch.folios[i],
							  MIGRC_DEBUG_FILE_WRITER);
		folio_batch_release(&fbatch);
	}
	/* Unless a newer copy came in meanwhile: it is for the next writer. */
	if (!behind)
		atomic64_cmpxchg(&mapping->migrc_debug_copied, copied, 0);
}

struct migrc_mm_check {
	struct mm_struct *mm;
	u64 gen, stamp;
};

/* On each CPU of the mm, with interrupts disabled: ask the architecture. */
static void migrc_mm_check_cpu(void *arg)
{
	struct migrc_mm_check *c = arg;

	if (migrc_arch_cpu_behind(c->mm, c->gen))
		migrc_debug_report(MIGRC_DEBUG_BATCHED, 0, c->stamp,
				   smp_processor_id());
}

/**
 * migrc_debug_mm_flushed - check flush_tlb_batched_pending()
 * @mm: the mm whose PTEs the caller is about to change
 * @sampled: the shadow clock read before the mm's marks were
 *
 * No CPU running @mm may still be behind the invalidation of a PTE of @mm
 * that was deferred before @sampled; each CPU of the mm says so itself, in
 * an IPI, where no switch or flush can run halfway. Each mark is checked
 * once.
 */
void migrc_debug_mm_flushed(struct mm_struct *mm, u64 sampled)
{
	struct migrc_mm_check c = {
		.mm = mm,
		/* The generation first: its mark's stamp is then visible. */
		.gen = atomic64_read_acquire(&mm->migrc_debug_arch_gen),
	};

	c.stamp = atomic64_read_acquire(&mm->migrc_debug_stamp);
	/* A stamp after the sample may belong to another page table. */
	if (!c.stamp || c.stamp > sampled ||
	    c.stamp <= (u64)atomic64_read(&mm->migrc_debug_checked))
		return;
	on_each_cpu_mask(mm_cpumask(mm), migrc_mm_check_cpu, &c, true);
	migrc_shadow_advance(&mm->migrc_debug_checked, c.stamp);
}

/**
 * migrc_debug_record - this CPU completed a flush
 * @sampled: the shadow clock read before the flush
 *
 * Call with preemption disabled.
 */
void migrc_debug_record(u64 sampled)
{
	migrc_shadow_advance(this_cpu_ptr(&migrc_shadow_done), sampled);
}

/**
 * migrc_debug_flushed_cpus - a flush sent to @mask completed
 * @mask: the CPUs it was sent to
 * @sampled: the shadow clock read before it was sent
 *
 * For the architecture's batch flush: when it returns, no CPU of @mask can
 * use a translation invalidated before it was sent.
 */
void migrc_debug_flushed_cpus(const struct cpumask *mask, u64 sampled)
{
	unsigned int cpu;

	for_each_cpu(cpu, mask)
		migrc_shadow_advance(per_cpu_ptr(&migrc_shadow_done, cpu),
				     sampled);
}

/*
 * MIGRC_HOLD_SRC, a test aid: a speculative reference on a migrated source
 * (as KSM, GUP-fast or page_idle take one) that is dropped as soon as it is
 * the last one. Its holder then does what the next owner of the frame
 * would: the final put frees the page without any MIGRC generation, and an
 * allocation right away on the same CPU takes it back and writes it, all
 * with interrupts off. A migration must have done its deferred flush before
 * it let go of its own reference. One source is held at a time.
 */
static struct folio *migrc_held;
static bool migrc_holder_running;

static void migrc_hold_fn(struct work_struct *work)
{
	struct folio *folio = READ_ONCE(migrc_held);
	unsigned long deadline = jiffies + HZ;
	/* The pcp list the put fills: the frame's zone, movable. */
	gfp_t gfp = GFP_ATOMIC | __GFP_HIGHMEM | __GFP_MOVABLE |
		    __GFP_THISNODE | __GFP_NOWARN;
	int nid = folio_nid(folio);
	bool reused = false;
	struct page *page;

	/* Pairs with the acquire in migrc_debug_hold_src(): it may go on. */
	smp_store_release(&migrc_holder_running, true);

	while (folio_ref_count(folio) > 1 && time_before(jiffies, deadline))
		cpu_relax();
	/*
	 * The put, the reuse and the write at once, without letting a flush
	 * IPI in between: a flush the migration sends only after its own put
	 * comes too late.
	 */
	local_irq_disable();
	folio_put(folio);
	page = alloc_pages_node(nid, gfp, 0);
	if (page) {
		reused = page == &folio->page;
		memset(page_address(page), 0x4c, PAGE_SIZE);
	}
	local_irq_enable();
	if (page)
		__free_page(page);
	/* Whether the aid did what it is for: the frame came straight back. */
	pr_info_ratelimited("hold_src: the freed source %s taken back\n",
			    reused ? "was" : "was not");
	WRITE_ONCE(migrc_holder_running, false);
	/* The slot is free only once this holder is done with it. */
	smp_store_release(&migrc_held, NULL);
}

static DECLARE_WORK(migrc_hold_work, migrc_hold_fn);

/**
 * migrc_debug_hold_src - take a speculative reference on a migrated source
 * @src: the source, just migrated, still referenced by the migration
 */
void migrc_debug_hold_src(struct folio *src)
{
	unsigned int cpu;

	static atomic_t nr_seen;

	/* One source in 64: each costs the migration a wait for the holder. */
	if (atomic_inc_return(&nr_seen) % 64 || folio_test_large(src) ||
	    cmpxchg(&migrc_held, NULL, src))
		return;
	folio_get(src);
	/* Another CPU than this one, which still holds its reference. */
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu >= nr_cpu_ids)
		cpu = raw_smp_processor_id();
	queue_work_on(cpu, system_highpri_wq, &migrc_hold_work);
	/* The holder watches the count before the migration drops its own. */
	/* Pairs with the release in migrc_hold_fn(). */
	for (int i = 0; i < 100 && !smp_load_acquire(&migrc_holder_running); i++)
		usleep_range(1000, 2000);
}

/*
 * Fault injection: /sys/kernel/debug/migrc/break breaks a safety rule on
 * purpose, or sets a test aid, by name (one bit of migrc_break_mask each).
 */
unsigned long migrc_break_mask;
/* A bit of migrc_break_mask per line of migrc_break_defs.h. */
static_assert(NR_MIGRC_BREAKS <= BITS_PER_LONG);

static const char * const migrc_break_names[NR_MIGRC_BREAKS] = {
#define MIGRC_BREAK_RULE(NAME, name) \
	[MIGRC_BREAK_##NAME] = #name,
#define MIGRC_TEST_AID(NAME, name) \
	[MIGRC_##NAME] = #name,
#include <linux/migrc_break_defs.h>
#undef MIGRC_BREAK_RULE
#undef MIGRC_TEST_AID
};

/* Which bits break a safety rule; the others are test aids. */
static const bool migrc_break_is_rule[NR_MIGRC_BREAKS] = {
#define MIGRC_BREAK_RULE(NAME, ...) \
	[MIGRC_BREAK_##NAME] = true,
#define MIGRC_TEST_AID(NAME, ...)
#include <linux/migrc_break_defs.h>
#undef MIGRC_BREAK_RULE
#undef MIGRC_TEST_AID
};

/* Whether @mask breaks a safety rule. */
static bool migrc_mask_breaks_rule(unsigned long mask)
{
	unsigned int bit;

	for_each_set_bit(bit, &mask, NR_MIGRC_BREAKS)
		if (migrc_break_is_rule[bit])
			return true;
	return false;
}

/**
 * migrc_rule_broken - whether a safety rule is broken on purpose now
 *
 * Return: true if a rule (not a test aid) is set in the break knob.
 */
bool migrc_rule_broken(void)
{
	return migrc_mask_breaks_rule(READ_ONCE(migrc_break_mask));
}

/*
 * /sys/kernel/debug/migrc/break: the rules broken on purpose, by name
 * ("alloc write", or "none"). For the tests that prove they catch a
 * missed flush; a kernel with a rule broken leaks data.
 */
static int migrc_break_show(struct seq_file *m, void *unused)
{
	unsigned long mask = READ_ONCE(migrc_break_mask);
	unsigned int bit, n = 0;

	for_each_set_bit(bit, &mask, NR_MIGRC_BREAKS)
		seq_printf(m, "%s%s", n++ ? " " : "", migrc_break_names[bit]);
	seq_puts(m, n ? "\n" : "none\n");
	return 0;
}

static int migrc_break_open(struct inode *inode, struct file *file)
{
	return single_open(file, migrc_break_show, NULL);
}

static ssize_t migrc_break_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	char buf[128], *s, *word;
	unsigned long mask = 0;
	int i;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	s = strim(buf);
	while ((word = strsep(&s, " \t"))) {
		if (!*word || !strcmp(word, "none"))
			continue;
		i = match_string(migrc_break_names,
				 ARRAY_SIZE(migrc_break_names), word);
		if (i < 0)
			return -EINVAL;
		mask |= BIT(i);
	}
	/* Once per newly broken rule: the tests restore them often. */
	if (migrc_mask_breaks_rule(mask & ~READ_ONCE(migrc_break_mask)))
		pr_warn("breaking safety rules on purpose (%#lx): stale TLB entries may leak data\n",
			mask);
	WRITE_ONCE(migrc_break_mask, mask);
	return count;
}

static const struct file_operations migrc_break_fops = {
	.open = migrc_break_open,
	.read = seq_read,
	.write = migrc_break_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/*
 * /sys/kernel/debug/migrc/rules: every word the break knob takes, one per
 * line, "rule <name>" or "aid <name>", so that tests need no kernel header.
 */
static int migrc_rules_show(struct seq_file *m, void *unused)
{
	unsigned int bit;

	for (bit = 0; bit < NR_MIGRC_BREAKS; bit++)
		seq_printf(m, "%s %s\n", migrc_break_is_rule[bit] ? "rule" : "aid",
			   migrc_break_names[bit]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(migrc_rules);

/**
 * migrc_debug_debugfs_init - the fault-injection files of debugfs migrc/
 * @dir: the directory
 */
void migrc_debug_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("break", 0600, dir, NULL, &migrc_break_fops);
	debugfs_create_file("rules", 0444, dir, NULL, &migrc_rules_fops);
}
