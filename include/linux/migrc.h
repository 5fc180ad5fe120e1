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
#include <linux/percpu.h>

struct cpumask;

/*
 * Events the Rust core counts; reported in /proc/vmstat as migrc_* in this
 * order. Must match `Stat` in rust/kernel/mm/migrc/stats.rs (checked at
 * build time) and the MIGRC_* vm_event_items.
 */
enum migrc_stat_item {
	MIGRC_STAT_PAGES_DEFERRED,
	MIGRC_STAT_REQUESTS_PUBLISHED,
	MIGRC_STAT_REQUESTS_RETIRED,
	MIGRC_STAT_DECLINED_DISABLED,
	MIGRC_STAT_DECLINED_POOL_FULL,
	MIGRC_STAT_DECLINED_PENDING_CAP,
	MIGRC_STAT_FLUSHES_SENT,
	MIGRC_STAT_FLUSHES_PRUNED,
	MIGRC_STAT_CPUS_FLUSHED,
	MIGRC_STAT_CPUS_PRUNED,
	NR_MIGRC_STAT_ITEMS
};

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

#ifdef CONFIG_MIGRC

extern struct migrc_gens migrc_gens;
DECLARE_PER_CPU(atomic64_t, migrc_cpu_gen);

/* Implemented in Rust: rust/kernel/mm/migrc/ffi.rs. */
int migrc_rust_init(unsigned int slots, unsigned long max_pending_pages);
s64 migrc_publish(const struct cpumask *mask, unsigned long nr_pages);
unsigned int migrc_flush_upto(u64 gen);
void migrc_flush_all(void);
u64 migrc_decode_page_gen(unsigned long stored);
bool migrc_enabled(void);
bool migrc_set_enabled(bool on);

/* Implemented in C for the Rust core: mm/migrc.c and the architecture. */
void migrc_stat_add(enum migrc_stat_item item, u64 nr);
u64 migrc_stat_read(enum migrc_stat_item item);
void migrc_arch_flush(const struct cpumask *mask);
atomic64_t *migrc_cpu_flushed_gen(unsigned int cpu);

/**
 * migrc_sample_gen - sample the latest generation before a flush
 *
 * Acquire pairs with the release publication of a generation, so the
 * invalidations of every request up to the sample are visible to the flush
 * that follows. Return: the sample, to pass to migrc_record_local_flush().
 */
static inline u64 migrc_sample_gen(void)
{
	return atomic64_read_acquire(&migrc_gens.latest);
}

/**
 * migrc_record_local_flush - record that this CPU is clean up to @sampled
 * @sampled: a value of migrc_sample_gen() taken before the flush
 *
 * Call after a flush (or address-space switch) that removes every stale
 * user translation this CPU could use. Release pairs with the acquire load
 * of the pruning side. Call with preemption disabled.
 */
static inline void migrc_record_local_flush(u64 sampled)
{
	atomic64_set_release(this_cpu_ptr(&migrc_cpu_gen), sampled);
}

/**
 * migrc_gen_retired - whether every flush up to @gen is done
 * @gen: a generation (0 is always retired)
 *
 * The acquire load pairs with the release store that moved the watermark,
 * so a caller that skips a flush because of it observes those flushes.
 */
static inline bool migrc_gen_retired(u64 gen)
{
	return gen <= (u64)atomic64_read_acquire(&migrc_gens.retired);
}

#else /* !CONFIG_MIGRC */

static inline u64 migrc_sample_gen(void) { return 0; }
static inline void migrc_record_local_flush(u64 sampled) { }
static inline bool migrc_gen_retired(u64 gen) { return true; }

#endif /* CONFIG_MIGRC */

#endif /* _LINUX_MIGRC_H */
