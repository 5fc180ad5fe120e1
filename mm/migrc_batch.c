// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRC: the read-only batch of a migration.
 *
 * try_to_migrate_one() decides, PTE by PTE, whether a cleared entry may go
 * to the migration's read-only batch (migrc_pte_deferrable() in rmap.c) and
 * hands it over (migrc_ro_add_pending()). From there this file owns it: the
 * scope of the migration that may publish it, the mms it holds entries of,
 * its publication to the Rust core or its flush, and the flush of one mm's
 * deferred entries before that mm's page tables change.
 */
#include <linux/migrc.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <asm/tlbflush.h>

#include "internal.h"

/*
 * The read-only batch of a task belongs to one migrate_pages_batch() call at
 * a time, its owner: only the owner unmaps into it (TTU_MIGRC), and only the
 * owner publishes or flushes it. A migration nested in the owner (direct
 * reclaim demoting, direct compaction, both entered while the owner
 * allocates) is not an owner, so it cannot publish the owner's entries
 * under its own generation and leave the owner's sources without one.
 */
static struct tlbflush_unmap_batch *migrc_ro_batch(void)
{
	return &current->migrc_ro_ubc;
}

/*
 * A PTE of @mm went into the read-only batch, under its PTE lock: the
 * owner's scope records @mm, and the publication of the batch gives @mm
 * its generation; until then @mm counts the batch as unpublished. The
 * increment is made under the PTE lock, so whoever takes that lock next
 * sees it, as with tlb_flush_batched.
 *
 * Return: true if @mm was recorded; false if the scope has no room, and
 * tlb_flush_batched must mark it.
 */
static bool migrc_ro_note_mm(struct mm_struct *mm)
{
	struct migrc_scope *scope = current->migrc_ro_owner;
	unsigned int i;

	if (WARN_ON_ONCE(!scope))
		return false;
	for (i = 0; i < scope->nr_mms; i++)
		if (scope->mms[i] == mm)
			goto added;
	if (scope->nr_mms == ARRAY_SIZE(scope->mms))
		return false;
	/* The batch may outlive the mm's users: exit may be under way. */
	mmgrab(mm);
	atomic_inc(&mm->migrc_ro_unpublished);
	scope->mms[scope->nr_mms++] = mm;
added:
	/* A flush of the whole mm that read an older value missed this PTE. */
	atomic_long_inc(&mm->migrc_ro_added);
	return true;
}

/**
 * migrc_ro_add_pending - batch the flush of a cleared read-only PTE
 * @mm: the mm of the PTE, its PTE lock held
 * @pteval: the PTE as it was, accessible
 * @start: the first address it mapped
 * @end: the end of what it mapped
 *
 * set_tlb_ubc_flush_pending() for a PTE that migrc_pte_deferrable() let
 * into the read-only batch of this task's migration. The architecture
 * makes the invalidation visible (on x86, the mm's tlb_gen bump) as for
 * any batched unmap; the mm is then marked by its scope, or, if the scope
 * has no room, in tlb_flush_batched like any batched unmap. MIGRC_DEBUG's
 * shadow marks the frame last.
 */
void migrc_ro_add_pending(struct mm_struct *mm, pte_t pteval,
			  unsigned long start, unsigned long end)
{
	struct tlbflush_unmap_batch *ro = migrc_ro_batch();
	const struct cpumask *cpus;
	/*
	 * MIGRC_DEBUG: the mm's generation after this unmap's invalidation.
	 * Read before, so that a concurrent bump cannot be taken for it.
	 */
	u64 arch_gen = migrc_arch_mm_gen(mm) + 1;

	arch_tlbbatch_add_pending(&ro->arch, mm, start, end);
	ro->flush_required = true;
	/* As set_tlb_ubc_flush_pending(): the PTE is clear before the mark. */
	barrier();
	/* Broken on purpose: flush_tlb_batched_pending() misses this batch. */
	if (!migrc_broken(MIGRC_BREAK_BATCHED) && !migrc_ro_note_mm(mm))
		tlb_batched_mark_pending(mm);
	cpus = migrc_arch_batch_cpus(&ro->arch);
	if (cpus)
		migrc_debug_mark(mm, pteval, cpus, arch_gen);
}

/**
 * migrc_pte_refused - a cleared PTE may not go to the read-only batch
 * @why: the reason (a REFUSED_ event), counted and traced
 *
 * Return: true; false only when the rule "dirty" is broken on purpose
 * (CONFIG_MIGRC_DEBUG), and the PTE goes to the read-only batch anyway.
 */
bool migrc_pte_refused(enum migrc_event why)
{
	migrc_refuse(why, 1);
	return !migrc_broken(MIGRC_BREAK_DIRTY);
}

/* Raise @mm's generation to @gen; concurrent publishers only raise it. */
static void migrc_mm_advance_gen(struct mm_struct *mm, u64 gen)
{
	s64 old = atomic64_read(&mm->migrc_ro_gen);

	while ((u64)old < gen &&
	       !atomic64_try_cmpxchg(&mm->migrc_ro_gen, &old, gen))
		;
}

/*
 * The scope's read-only batch was published under @gen, or flushed (@gen
 * 0): each of its mms gets the generation, then counts the batch as
 * published.
 */
static void migrc_scope_release_mms(struct migrc_scope *scope, u64 gen)
{
	unsigned int i;

	for (i = 0; i < scope->nr_mms; i++) {
		struct mm_struct *mm = scope->mms[i];

		if (gen)
			migrc_mm_advance_gen(mm, gen);
		/*
		 * Release: the generation (or the flush) comes first. Pairs
		 * with the acquire in migrc_flush_mm_deferred().
		 */
		atomic_dec_return_release(&mm->migrc_ro_unpublished);
		mmdrop(mm);
		scope->mms[i] = NULL;
	}
	scope->nr_mms = 0;
}

/*
 * Flush the read-only entries MIGRC deferred for @mm, before a change of
 * @mm's page tables that must not race with them (called under the PTE
 * lock of the table that changes). While a batch with a PTE of @mm is not
 * published, every CPU of @mm is flushed, unless such a flush already
 * covered every PTE added to those batches; otherwise only the CPUs of @mm
 * whose flush record does not cover @mm's newest generation, and none once
 * that generation is retired. A CPU outside mm_cpumask catches up with the
 * mm's tlb_gen, which the unmap raised, when it switches to @mm.
 */
static void migrc_flush_mm_deferred(struct mm_struct *mm,
				    enum migrc_event cause)
{
	long added;
	u64 gen;

	/* Pairs with the release in migrc_scope_release_mms(). */
	if (atomic_read_acquire(&mm->migrc_ro_unpublished) &&
	    !migrc_broken(MIGRC_BREAK_UNPUBLISHED)) {
		/* Each PTE's tlb_gen bump came before its increment. */
		added = atomic_long_read_acquire(&mm->migrc_ro_added);
		/* Pairs with the release below: that flush is complete. */
		if (added == atomic_long_read_acquire(&mm->migrc_ro_flushed))
			return;
		migrc_flush_cpus_now(mm_cpumask(mm),
				     MIGRC_EV_FORCED_UNPUBLISHED);
		/* A racing flusher may store an older value: one more flush. */
		atomic_long_set_release(&mm->migrc_ro_flushed, added);
		return;
	}
	gen = atomic64_read(&mm->migrc_ro_gen);
	if (migrc_gen_retired(gen))
		return;
	if (migrc_flush_cpus_upto(mm_cpumask(mm), gen, cause))
		migrc_count(cause);
}

/**
 * migrc_flush_tlb_batched_pending - flush_tlb_batched_pending() with MIGRC
 * @mm: the mm whose page tables change, PTE lock of the table held
 *
 * The batched unmaps of @mm, then the read-only entries MIGRC deferred for
 * it (only the CPUs that may still hold one). MIGRC_DEBUG's shadow checks
 * that none of @mm's CPUs is left behind a deferred unmap.
 */
void migrc_flush_tlb_batched_pending(struct mm_struct *mm)
{
	/* MIGRC_DEBUG's clock, read before the mm's marks. */
	u64 shadow = migrc_debug_clock();

	flush_tlb_batched_unmaps(mm);
	migrc_flush_mm_deferred(mm, MIGRC_EV_FORCED_MM);
	migrc_debug_mm_flushed(mm, shadow);
}

/* Flush the read-only batch now, as if MIGRC did not exist. */
static void migrc_flush_ro_batch(struct migrc_scope *scope)
{
	struct tlbflush_unmap_batch *ro = migrc_ro_batch();
	const struct cpumask *cpus;

	if (ro->flush_required) {
		/* MIGRC's flush, which the shadow sees, if the arch could defer. */
		cpus = migrc_arch_batch_cpus(&ro->arch);
		if (cpus) {
			migrc_flush_cpus(cpus);
			migrc_arch_batch_clear(&ro->arch);
		} else {
			arch_tlbbatch_flush(&ro->arch);
		}
		ro->flush_required = false;
	}
	migrc_scope_release_mms(scope, 0);
}

/**
 * migrc_scope_begin - claim this task's read-only batch for a migration
 * @scope: the migration's scope, on its stack
 *
 * The first migration of the task owns the batch until migrc_scope_end();
 * a migration nested inside it does not, and may not defer.
 */
void migrc_scope_begin(struct migrc_scope *scope)
{
	scope->nr_mms = 0;
	scope->owner = !current->migrc_ro_owner;
	if (scope->owner) {
		current->migrc_ro_owner = scope;
		return;
	}
	migrc_count(MIGRC_EV_NESTED);
}

/*
 * Defer the read-only batch's flush: publish its CPUs to the Rust core.
 * Return: the generation, or 0 if the batch was empty or flushed now.
 */
static u64 migrc_defer_ro_batch(struct migrc_scope *scope,
				unsigned long nr_pages)
{
	struct tlbflush_unmap_batch *ro = migrc_ro_batch();
	const struct cpumask *cpus;
	u64 gen;

	if (!ro->flush_required)
		return 0;
	/* Test aid: the window between the last unmap and the publication. */
	migrc_hold(MIGRC_PUBLISH_HOLD);
	cpus = migrc_arch_batch_cpus(&ro->arch);
	if (!cpus) {
		migrc_refuse(MIGRC_EV_DECLINED_ARCH, 1);
		goto flush;
	}
	if (migrc_defer_forbidden()) {
		migrc_refuse(MIGRC_EV_DECLINED_DEBUG, 1);
		goto flush;
	}
	/* The Rust engine decides, a full pool included: 0 means flush now. */
	gen = migrc_publish(cpus, nr_pages);
	if (!gen)
		goto flush;
	migrc_arch_batch_clear(&ro->arch);
	ro->flush_required = false;
	migrc_scope_release_mms(scope, gen);
	return gen;
flush:
	migrc_flush_ro_batch(scope);
	return 0;
}

/**
 * migrc_scope_publish - defer the flush of the scope's read-only batch
 * @scope: a scope begun by this task
 * @nr_pages: pages of the unmapped folios, to be freed with the generation
 *
 * Called once every folio of the batch is unmapped, before any is moved:
 * the read-only batch holds the CPUs that may cache read-only, clean
 * translations of those folios, and their invalidations (the tlb_gen bump of
 * each mm on x86) are already visible, so they may be published.
 *
 * Return: the generation the sources must be freed with (see
 * folio_free_migrated()), or 0 when nothing is deferred: the scope does not
 * own the batch, the batch is empty, or it was declined and flushed now.
 */
u64 migrc_scope_publish(struct migrc_scope *scope, unsigned long nr_pages)
{
	if (!scope->owner)
		return 0;
	VM_WARN_ON_ONCE(current->migrc_ro_owner != scope);
	return migrc_defer_ro_batch(scope, nr_pages);
}

/**
 * migrc_scope_end - give the read-only batch up
 * @scope: the scope of migrc_scope_begin()
 *
 * Whatever the owner unmapped and did not publish (an early exit) is
 * flushed now.
 */
void migrc_scope_end(struct migrc_scope *scope)
{
	if (!scope->owner)
		return;
	VM_WARN_ON_ONCE(current->migrc_ro_owner != scope);
	migrc_flush_ro_batch(scope);
	current->migrc_ro_owner = NULL;
}

/**
 * migrc_flush_mm_before_write - flush @mm if it may hold a stale read-only
 *                               entry of a deferred migration
 * @mm: the mm whose read-only PTE becomes writable or is written through
 *
 * The data of that PTE's page may change now; a CPU of @mm that still
 * caches the PTE's translation to the source of a deferred migration
 * would read the old data after the write. No other mm can: MIGRC defers
 * anonymous folios only, and the page is exclusive to @mm (reuse, swap-in
 * and FOLL_FORCE check that); any other mm that mapped it when it was
 * migrated flushed that address when it stopped mapping it (copy-on-write
 * or unmap). The other mms' deferred flushes stay deferred.
 *
 * A read-only batch records @mm in its scope under the PTE lock the caller
 * holds now (set_tlb_ubc_flush_pending()), and gives @mm its generation
 * when it is published: migrc_flush_mm_deferred() flushes only the CPUs of
 * @mm that may still hold such an entry, and nothing once the generation
 * is retired. A batch whose scope had no room for @mm counts in
 * mm->tlb_flush_batched like any batched unmap: then all of @mm's CPUs are
 * flushed and the batches marked flushed.
 */
void migrc_flush_mm_before_write(struct mm_struct *mm)
{
	/* MIGRC_DEBUG's clock, read before the mm's marks. */
	u64 shadow = migrc_debug_clock();
	int batch;

	migrc_flush_mm_deferred(mm, MIGRC_EV_FORCED_WRITE);
	/* A read-only batch the scope had no room to track, or another. */
	if (tlb_batched_unflushed(mm, &batch)) {
		/*
		 * The batch flush, not flush_tlb_mm(): every CPU of the mask
		 * brings its loaded mm up to date and records it (a CPU
		 * running another mm catches up with @mm's tlb_gen when it
		 * switches back), so the shadow sees each of them clean.
		 */
		migrc_flush_cpus_now(mm_cpumask(mm), MIGRC_EV_FORCED_WRITE);
		tlb_batched_mark_flushed(mm, batch);
	}
	/* The shadow checks that nothing of @mm is left unflushed. */
	migrc_debug_mm_flushed(mm, shadow);
}

/**
 * migrc_mm_maybe_stale - whether a CPU may still cache a stale read-only
 *                        entry of @mm
 * @mm: the mm of a PTE that could become writable
 *
 * Called under the PTE lock of that PTE. True whenever
 * migrc_flush_before_write() could find something to flush there (and
 * sometimes when not). A PTE rebuilt read-only instead of writable then
 * takes a write fault, and its flush, only if it really is written.
 *
 * Nothing is pending when every published generation is retired: a
 * deferral of this PTE published its generation before the destination
 * was mapped, under the PTE lock.
 *
 * Return: false if no CPU can still cache a deferred entry of that PTE.
 */
bool migrc_mm_maybe_stale(struct mm_struct *mm)
{
	int batch;

	if (!migrc_any_pending())
		return false;
	/* Pairs with the release in migrc_scope_release_mms(). */
	if (atomic_read_acquire(&mm->migrc_ro_unpublished))
		return true;
	if (!migrc_gen_retired(atomic64_read(&mm->migrc_ro_gen)))
		return true;
	return tlb_batched_unflushed(mm, &batch);
}
