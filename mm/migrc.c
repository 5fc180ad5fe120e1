// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRC: the C half of the Rust core in rust/kernel/mm/migrc/.
 *
 * Owns the storage that C fast paths read without calling Rust (the global
 * generations and the per-CPU flushed generation), provides the services
 * the Rust core calls (event counting, the default flush), and sets the
 * core up at boot.
 */
#define pr_fmt(fmt) "migrc: " fmt

#include <linux/build_bug.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/kasan.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/migrc.h>
#include <linux/mm.h>
#include <linux/page_ext.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/sched/rt.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/wait_bit.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>
#include <asm/tlb.h>
#include <asm/tlbflush.h>

#include "internal.h"
#include "page_alloc.h"

#define CREATE_TRACE_POINTS
#include <trace/events/migrc.h>

/* Request slots and the cap on pages waiting for a deferred flush. */
#define MIGRC_DEFAULT_SLOTS		64
#define MIGRC_DEFAULT_MAX_PENDING	65536UL

/* How long a test aid (MIGRC_NUMA_HOLD, MIGRC_PUBLISH_HOLD) holds a window. */
#define MIGRC_HOLD_MS			50
/* How long an allocation's skip of pending blocks waits to flush them. */
#define MIGRC_KICK_DELAY_MS		50

struct migrc_gens migrc_gens = {
	.latest = ATOMIC64_INIT(0),
	.retired = ATOMIC64_INIT(0),
};

DEFINE_PER_CPU(atomic64_t, migrc_cpu_gen);

/* Off until the Rust core is set up, then as migrc= and the sysfs switch say. */
DEFINE_STATIC_KEY_FALSE(migrc_defer_key);

/*
 * Whether this context may perform a deferred flush: it sends IPIs and
 * waits for them, which needs task context with interrupts enabled.
 */
static bool migrc_can_flush(void)
{
	return in_task() && !irqs_disabled();
}

/*
 * Flush what is still pending, for allocations that had to skip pages. The
 * flush is pruned: CPUs whose own flushes covered a generation since are
 * not asked again, so waiting first costs nothing here.
 */
static void migrc_flush_work_fn(struct work_struct *work)
{
	migrc_flush_all(MIGRC_EV_ATOMIC_SKIPS);
}

static DECLARE_DELAYED_WORK(migrc_flush_work, migrc_flush_work_fn);

/**
 * migrc_kick_flush - have every pending flush done soon, from any context
 *
 * The flush waits MIGRC_KICK_DELAY_MS: a skipped block is not lost, only
 * unavailable to allocations that cannot flush, and meanwhile the flushes
 * every kernel sends anyway (a migration's normal batch, a context switch
 * that flushes) retire most generations, so the worker sends fewer IPIs or
 * none. Not from NMI (queueing takes locks).
 */
void migrc_kick_flush(void)
{
	if (!delayed_work_pending(&migrc_flush_work))
		queue_delayed_work(system_unbound_wq, &migrc_flush_work,
				   msecs_to_jiffies(MIGRC_KICK_DELAY_MS));
}

/* Where a page could not be made safe: flush without waiting. */
static void migrc_kick_flush_now(void)
{
	mod_delayed_work(system_unbound_wq, &migrc_flush_work, 0);
}

/**
 * migrc_page_flush - slow path of migrc_page_leave()
 * @page: head of the block leaving the allocator
 * @gen: the generation it waits for, not retired
 *
 * Allocations that may not flush (no __GFP_DIRECT_RECLAIM) never take a
 * block whose generation is not retired (ALLOC_MIGRC_CLEAN), so every
 * caller here may flush. Should one not, the page cannot be made safe
 * here: warn, count it, and have the flush done as soon as possible.
 */
void migrc_page_flush(struct page *page, u64 gen)
{
	if (likely(migrc_can_flush())) {
		migrc_count(MIGRC_EV_ALLOC_WAITS);
		migrc_flush_upto(gen, MIGRC_EV_ALLOC_WAITS);
		return;
	}
	migrc_count(MIGRC_EV_UNSAFE_ALLOC);
	WARN_ONCE(1, "migrc: pfn %#lx (gen %llu) handed out where no flush is possible\n",
		  page_to_pfn(page), gen);
	migrc_kick_flush_now();
}

/**
 * migrc_flush_pending - perform every published deferred flush now
 * @cause: the event to count
 *
 * For the paths where data may change or memory leaves the allocator
 * other than by allocation. Task context, interrupts enabled.
 */
void migrc_flush_pending(enum migrc_event cause)
{
	if (WARN_ON_ONCE(!migrc_can_flush()))
		return;
	migrc_count(cause);
	migrc_flush_all(cause);
}

/**
 * migrc_src_still_used - a migrated source was not freed by its migration
 * @gen: the generation it should have carried
 *
 * Someone else (a speculative reference) will free it, without the
 * generation: flush now.
 */
void migrc_src_still_used(u64 gen)
{
	/* Part of the allocator rule: this flush stands in for the exit's. */
	if (migrc_gen_retired(gen) || migrc_broken(MIGRC_BREAK_ALLOC))
		return;
	migrc_count(MIGRC_EV_FORCED_SRC_BUSY);
	migrc_flush_upto(gen, MIGRC_EV_FORCED_SRC_BUSY);
}

/**
 * migrc_put_src - drop a migration's reference on its source
 * @src: the source, moved
 * @gen: the generation of its deferred flush, or 0
 *
 * With a deferred flush pending (@gen), only the last reference may free
 * the source, and it must hand @gen to the page allocator: take that
 * reference by freezing the count. If someone else still holds one (a
 * speculative reference: KSM, the swap cache, page_idle, DAMON), they will
 * free the page without @gen, maybe right after our put: flush first.
 */
void migrc_put_src(struct folio *src, u64 gen)
{
	/* A test aid: a speculative reference as KSM or GUP-fast take. */
	if (migrc_broken(MIGRC_HOLD_SRC))
		migrc_debug_hold_src(src);
	if (!gen) {
		folio_put(src);
		return;
	}
	if (folio_ref_freeze(src, 1)) {
		folio_free_migrated(src, gen);
		return;
	}
	migrc_src_still_used(gen);
	folio_put(src);
}

/**
 * migrc_defer_forbidden - whether freeing may touch a deferred page's data
 *
 * Page poisoning and init_on_free write the source page when it is freed,
 * and hardware tag-based KASAN retags it, while stale read-only entries may
 * still map it; debug_pagealloc unmaps it from the kernel. Defer nothing
 * then. Generic and software tag-based KASAN only poison shadow memory.
 *
 * Return: true if deferring must be refused.
 */
bool migrc_defer_forbidden(void)
{
	return page_poisoning_enabled_static() || want_init_on_free() ||
	       debug_pagealloc_enabled_static() || kasan_hw_tags_enabled();
}

/**
 * migrc_hold - sleep where a test aid widens a race window
 * @aid: the test aid (MIGRC_NUMA_HOLD, MIGRC_PUBLISH_HOLD)
 *
 * Nothing happens unless the aid is set through the break knob
 * (CONFIG_MIGRC_DEBUG). Task context.
 */
void migrc_hold(enum migrc_break aid)
{
	if (migrc_broken(aid))
		msleep(MIGRC_HOLD_MS);
}

#ifdef CONFIG_NUMA_BALANCING
/**
 * migrc_numa_scan_begin - count a NUMA hinting scan in its VMA, not its mm
 * @tlb: the scan's gather, set up by change_prot_numa()
 * @vma: the VMA the scan is about to change, mmap_lock held for read
 *
 * tlb_gather_mmu() counted the scan in mm->migrc_wp_pending, which refuses
 * every read-only migration of the mm. But the scan makes the present PTEs
 * of @vma PROT_NONE and flushes them once it is done with @vma, so the
 * entries its pending flush may hide are entries of @vma: only a migration
 * of a PTE of @vma must know (see migrc_pte_deferrable()).
 *
 * A scan of a VMA that may be written is counted in its numab_state
 * (task_numa_work() sets it up before it scans), raised before the scan
 * changes a PTE: the PTE lock of a changed PTE publishes it, as it does
 * migrc_wp_pending. Only then does the scan leave the mm's count.
 *
 * A VMA without VM_WRITE (nor a shadow stack, which mprotect() may leave
 * writable by shadow-stack stores) is not counted at all: it has no
 * writable PTE, and no CPU holds a writable entry of one, since the
 * mprotect() that took VM_WRITE away flushed before it released mmap_lock,
 * which the scan holds for read. Any other write protection still
 * unflushed is counted in migrc_wp_pending by itself.
 *
 * Return: where the scan is counted; pass it to migrc_numa_scan_flushed().
 */
enum migrc_numa_scan migrc_numa_scan_begin(struct mmu_gather *tlb,
					   struct vm_area_struct *vma)
{
	struct vma_numab_state *ns = vma->numab_state;

	mmap_assert_locked(vma->vm_mm);
	/* A shadow stack is written through PTEs without _PAGE_RW. */
	if ((vma->vm_flags & (VM_WRITE | VM_SHADOW_STACK)) &&
	    !migrc_broken(MIGRC_BREAK_NUMA_RO)) {
		/* Nowhere else to count it: it stays in the mm's count. */
		if (WARN_ON_ONCE(!ns))
			return MIGRC_SCAN_IN_MM;
		atomic_inc(&ns->migrc_writable_scans);
		migrc_tlb_no_writable(tlb);
		migrc_cold_scan_begin(vma);
		return MIGRC_SCAN_IN_VMA;
	}
	migrc_tlb_no_writable(tlb);
	return MIGRC_SCAN_NOWHERE;
}

/**
 * migrc_numa_scan_end - a scan has changed its last page table
 *
 * Called before tlb_finish_mmu(). The test aid MIGRC_NUMA_HOLD sleeps here,
 * as a scan preempted after its last page table would, before the flush:
 * with the rule numa_ro broken, a scan of a writable VMA is counted nowhere,
 * and migrations defer under its unflushed PROT_NONE entries.
 */
void migrc_numa_scan_end(void)
{
	migrc_hold(MIGRC_NUMA_HOLD);
}

/**
 * migrc_numa_scan_flushed - the scan's flush is complete
 * @vma: the VMA given to migrc_numa_scan_begin()
 * @counted: what migrc_numa_scan_begin() returned
 *
 * Called after tlb_finish_mmu(): no CPU holds an entry the scan changed.
 */
void migrc_numa_scan_flushed(struct vm_area_struct *vma,
			     enum migrc_numa_scan counted)
{
	struct vma_numab_state *ns = vma->numab_state;

	if (counted != MIGRC_SCAN_IN_VMA)
		return;
	/* Not before the flush has completed on every CPU. */
	smp_mb__before_atomic();
	atomic_dec(&ns->migrc_writable_scans);
	/*
	 * Fully ordered: a waiter that sees the new value sees the count
	 * lowered, and wake_up_var() sees the waiter queued or the waiter
	 * sees the new value (migrc_numa_scan_wait()).
	 */
	atomic_inc_return(&ns->migrc_scans_flushed);
	wake_up_var(&ns->migrc_scans_flushed);
}

/*
 * How long a hinting fault waits at most for the scan in flight: far more
 * than a scan's walk of its part of a VMA takes, on bare metal and under
 * emulation, but a bound if the scanning thread is preempted for long.
 */
#define MIGRC_SCAN_WAIT_MS		100

/**
 * migrc_numa_scan_wait - a hinting fault waits for the scan in flight
 * @vma: the VMA of a hinting fault about to migrate a page, its lock or
 *       mmap_lock held
 * @folio: the folio it is about to migrate, isolated
 *
 * The scan that made the faulting PTE PROT_NONE flushes when it is done
 * with its part of @vma. Until then a CPU may still hold the writable
 * entry from before the scan, and a migration of the page refuses to defer
 * and flushes by itself (migrc_pte_deferrable()): a second round to the
 * same CPUs. Wait for the scan's flush instead; the page has no writable
 * entry left then, and its migration has nothing to flush (the PTE is not
 * accessible once no flush of the mm is pending) or defers like any other
 * of a PROT_NONE PTE (while another one is). A hinting fault on a PTE the
 * scan changed comes from a CPU that cached no entry of it, so the scan is
 * usually still walking: the wait is the rest of its walk. (A scan holds
 * mmap_lock for read, as the fault does, and waits for nothing a fault
 * holds.) The wait is bounded (MIGRC_SCAN_WAIT_MS), and skipped where it
 * cannot pay off: for a large folio, which MIGRC never defers, where
 * deferral is off (migrc_defer_forbidden()), and for a real-time task,
 * whose latency is worth more than a round of IPIs.
 *
 * The wait decides nothing: under the PTE lock the migration looks at the
 * VMA again, and flushes if another scan has begun meanwhile or the wait
 * timed out.
 */
void migrc_numa_scan_wait(struct vm_area_struct *vma, struct folio *folio)
{
	struct vma_numab_state *ns = READ_ONCE(vma->numab_state);
	int flushed;

	if (folio_test_large(folio) || rt_or_dl_task(current) ||
	    migrc_defer_forbidden() || migrc_broken(MIGRC_NUMA_NOWAIT))
		return;
	/* Pairs with the increment in migrc_numa_scan_flushed(). */
	flushed = atomic_read_acquire(&ns->migrc_scans_flushed);
	if (!atomic_read(&ns->migrc_writable_scans))
		return;
	/* Counted only once the scan's flush has been seen. */
	if (wait_var_event_timeout(&ns->migrc_scans_flushed,
				   atomic_read(&ns->migrc_scans_flushed) !=
				   flushed,
				   msecs_to_jiffies(MIGRC_SCAN_WAIT_MS)))
		migrc_count(MIGRC_EV_NUMA_FAULT_WAITED);
	else
		migrc_count(MIGRC_EV_NUMA_FAULT_WAIT_TIMEOUT);
}
#endif /* CONFIG_NUMA_BALANCING */

/* An event that adds to no /proc/vmstat item (debugfs only). */
#define MIGRC_NONE	NR_VM_EVENT_ITEMS

/* Each event's name in debugfs migrc/stats, and its /proc/vmstat item. */
static const struct {
	const char *name;
	enum vm_event_item vmstat;
} migrc_event_info[NR_MIGRC_EVENTS] = {
#define MIGRC_EVENT(name, text, vm) \
	[MIGRC_EV_##name] = { text, MIGRC_##vm },
#include <linux/migrc_event_defs.h>
#undef MIGRC_EVENT
};

/* The count of every event on one CPU. */
struct migrc_event_counts {
	unsigned long n[NR_MIGRC_EVENTS];
};

static DEFINE_PER_CPU(struct migrc_event_counts, migrc_event_counts);

/**
 * migrc_stat_add - count a MIGRC event
 * @ev: the event
 * @nr: how many
 *
 * Counts @ev for debugfs migrc/stats, and in the /proc/vmstat total it
 * belongs to, if any. Safe in any context; the Rust core counts through it
 * too.
 */
void migrc_stat_add(enum migrc_event ev, u64 nr)
{
	if (ev >= NR_MIGRC_EVENTS)
		return;
	this_cpu_add(migrc_event_counts.n[ev], nr);
	if (migrc_event_info[ev].vmstat != MIGRC_NONE)
		count_vm_events(migrc_event_info[ev].vmstat, nr);
}

/**
 * migrc_stat_read - the current total of a MIGRC event
 * @ev: the event
 *
 * Return: the sum over all CPUs, as debugfs migrc/stats shows it.
 */
u64 migrc_stat_read(enum migrc_event ev)
{
	u64 sum = 0;
	int cpu;

	if (ev >= NR_MIGRC_EVENTS)
		return 0;
	for_each_possible_cpu(cpu)
		sum += per_cpu(migrc_event_counts, cpu).n[ev];
	return sum;
}

/* The name of @ev in debugfs migrc/stats and in trace events. */
static const char *migrc_event_name(enum migrc_event ev)
{
	return ev < NR_MIGRC_EVENTS ? migrc_event_info[ev].name : "unknown";
}

/**
 * migrc_refuse - a migration did not defer its flush
 * @why: the reason, a REFUSED_ or DECLINED_ event
 * @nr: how many pages, PTEs or batches (as the event counts them)
 *
 * Counts @why and traces it (migrc:migrc_refuse). Safe in any context.
 */
void migrc_refuse(enum migrc_event why, unsigned long nr)
{
	migrc_stat_add(why, nr);
	trace_migrc_refuse(migrc_event_name(why), nr);
}

/**
 * migrc_trace_publish - trace a batch whose flush the Rust core deferred
 * @gen: its generation
 * @nr_pages: the source pages that will carry @gen
 * @nr_cpus: the CPUs that may cache a stale entry of them
 */
void migrc_trace_publish(u64 gen, u64 nr_pages, unsigned int nr_cpus)
{
	trace_migrc_publish(gen, nr_pages, nr_cpus);
}

/**
 * migrc_trace_flush - trace a deferred flush, sent or avoided
 * @cause: why it was needed (the event its caller counts)
 * @need: the generation needed (0 for a flush of unpublished entries)
 * @clean_to: the generation the CPUs sent to are clean up to
 * @cpus: CPUs sent to; 0 when pruning avoided the flush
 * @pruned: CPUs left out because they had flushed since
 *
 * For the Rust core's flushes and migrc_flush_cpus_now().
 */
void migrc_trace_flush(enum migrc_event cause, u64 need, u64 clean_to,
		       unsigned int cpus, unsigned int pruned)
{
	trace_migrc_flush(migrc_event_name(cause), need, clean_to, cpus,
			  pruned);
}

/**
 * migrc_cpu_flushed_gen - the flushed-generation slot of a CPU
 * @cpu: a possible CPU
 *
 * Return: a pointer to @cpu's slot, valid forever.
 */
atomic64_t *migrc_cpu_flushed_gen(unsigned int cpu)
{
	if (cpu >= nr_cpu_ids)
		return NULL;
	return per_cpu_ptr(&migrc_cpu_gen, cpu);
}

/**
 * migrc_flush_cpus - MIGRC's flush of a set of CPUs
 * @mask: the CPUs, not empty
 *
 * The architecture's flush, migrc_arch_flush(); MIGRC_DEBUG's shadow then
 * records @mask clean up to its clock as read before. For the Rust core's
 * flushes and every read-only batch C flushes. Task context, interrupts
 * enabled.
 */
void migrc_flush_cpus(const struct cpumask *mask)
{
	/* MIGRC_DEBUG: the CPUs are clean up to this once the flush returns. */
	u64 shadow = migrc_debug_clock();

	migrc_arch_flush(mask);
	migrc_debug_flushed_cpus(mask, shadow);
}

/**
 * migrc_flush_cpus_now - flush a set of CPUs without pruning
 * @mask: the CPUs, not empty
 * @cause: why (counted and traced)
 *
 * For the deferred entries of an mm that no generation covers yet: every
 * CPU of @mask is flushed. Task context, interrupts enabled.
 */
void migrc_flush_cpus_now(const struct cpumask *mask, enum migrc_event cause)
{
	migrc_count(cause);
	migrc_flush_cpus(mask);
	migrc_trace_flush(cause, 0, 0, cpumask_weight(mask), 0);
}

/*
 * /sys/kernel/debug/migrc/stats: every event MIGRC counts, one line
 * "migrc_<name> <count>" each (the names /proc/vmstat would use), in the
 * order of migrc_event_defs.h.
 */
static int migrc_stats_show(struct seq_file *m, void *unused)
{
	enum migrc_event ev;

	for (ev = 0; ev < NR_MIGRC_EVENTS; ev++)
		seq_printf(m, "migrc_%s %llu\n", migrc_event_info[ev].name,
			   migrc_stat_read(ev));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(migrc_stats);

/*
 * /sys/kernel/debug/migrc/state: the generations, and each CPU's flushed
 * generation, for debugging and for the tests that check the arch hooks.
 */
static int migrc_state_show(struct seq_file *m, void *unused)
{
	int cpu;

	seq_printf(m, "latest %lld\nretired %lld\n",
		   (s64)atomic64_read(&migrc_gens.latest),
		   (s64)atomic64_read(&migrc_gens.retired));
	for_each_possible_cpu(cpu)
		seq_printf(m, "cpu%d %lld\n", cpu,
			   (s64)atomic64_read(per_cpu_ptr(&migrc_cpu_gen, cpu)));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(migrc_state);

static int __init migrc_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("migrc", NULL);

	debugfs_create_file("stats", 0444, dir, NULL, &migrc_stats_fops);
	debugfs_create_file("state", 0444, dir, NULL, &migrc_state_fops);
	migrc_debug_debugfs_init(dir);
	return 0;
}
late_initcall(migrc_debugfs_init);

/* migrc=off on the kernel command line: set up, but defer nothing. */
static bool migrc_boot_enabled __initdata = true;

static int __init migrc_setup(char *str)
{
	if (kstrtobool(str, &migrc_boot_enabled))
		pr_warn("ignoring invalid migrc=%s\n", str);
	return 1;
}
__setup("migrc=", migrc_setup);

/*
 * Allow new migrations to defer, or stop them and flush what is pending: a
 * migration that read the switch on before it went off may still publish
 * afterwards, and its pages wait for their flush as always.
 */
static void migrc_set_enabled(bool on)
{
	if (on) {
		static_branch_enable(&migrc_defer_key);
		return;
	}
	static_branch_disable(&migrc_defer_key);
	migrc_flush_pending(MIGRC_EV_FORCED_OFF);
}

/* /sys/kernel/mm/migrc/enabled: the runtime switch. */
static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", migrc_enabled());
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	bool on;
	int err = kstrtobool(buf, &on);

	if (err)
		return err;
	/* Switching off also flushes everything pending (task context). */
	migrc_set_enabled(on);
	return count;
}

static struct kobj_attribute migrc_enabled_attr = __ATTR_RW(enabled);

static struct attribute *migrc_attrs[] = {
	&migrc_enabled_attr.attr,
	NULL,
};

static const struct attribute_group migrc_attr_group = {
	.attrs = migrc_attrs,
};

static void __init migrc_sysfs_init(void)
{
	struct kobject *kobj = kobject_create_and_add("migrc", mm_kobj);

	if (!kobj || sysfs_create_group(kobj, &migrc_attr_group))
		pr_warn("no /sys/kernel/mm/migrc: cannot switch at runtime\n");
}

static int __init migrc_init(void)
{
	int ret = migrc_rust_init(MIGRC_DEFAULT_SLOTS,
				  MIGRC_DEFAULT_MAX_PENDING);

	if (ret) {
		pr_warn("not enabled (error %d): every migration flushes at once\n",
			ret);
		return 0;
	}
	if (migrc_boot_enabled)
		migrc_set_enabled(true);
	migrc_sysfs_init();
	pr_info("ready: %u request slots, at most %lu pages pending, %s\n",
		MIGRC_DEFAULT_SLOTS, MIGRC_DEFAULT_MAX_PENDING,
		migrc_enabled() ? "enabled" : "disabled (migrc=off)");
	return 0;
}
subsys_initcall(migrc_init);
