// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRC: the C half of the Rust core in rust/kernel/mm/migrc/.
 *
 * Owns the storage that C fast paths read without calling Rust (the global
 * generations and the per-CPU flushed generation), provides the services
 * the Rust core calls (vmstat counting, the default flush), and sets the
 * core up at boot.
 */
#define pr_fmt(fmt) "migrc: " fmt

#include <linux/build_bug.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/migrc.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>
#include <linux/vmstat.h>
#include <asm/tlbflush.h>

/* Request slots and the cap on pages waiting for a deferred flush. */
#define MIGRC_DEFAULT_SLOTS		64
#define MIGRC_DEFAULT_MAX_PENDING	65536UL

struct migrc_gens migrc_gens = {
	.latest = ATOMIC64_INIT(0),
	.retired = ATOMIC64_INIT(0),
};

DEFINE_PER_CPU(atomic64_t, migrc_cpu_gen);

static_assert(MIGRC_CPUS_PRUNED - MIGRC_PAGES_DEFERRED + 1 ==
	      NR_MIGRC_STAT_ITEMS);

/**
 * migrc_stat_add - count a MIGRC event in /proc/vmstat
 * @item: the event
 * @nr: how many
 *
 * Called by the Rust core; safe in any context.
 */
void migrc_stat_add(enum migrc_stat_item item, u64 nr)
{
	if (item < NR_MIGRC_STAT_ITEMS)
		count_vm_events(MIGRC_PAGES_DEFERRED + item, nr);
}

/**
 * migrc_stat_read - the current total of a MIGRC event
 * @item: the event
 *
 * Return: the sum over all CPUs, as /proc/vmstat shows it.
 */
u64 migrc_stat_read(enum migrc_stat_item item)
{
	u64 sum = 0;
	int cpu;

	if (item >= NR_MIGRC_STAT_ITEMS)
		return 0;
	for_each_possible_cpu(cpu)
		sum += per_cpu(vm_event_states, cpu).event[MIGRC_PAGES_DEFERRED +
							   item];
	return sum;
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
 * migrc_arch_flush - flush stale user translations on a set of CPUs
 * @mask: the CPUs to flush
 *
 * Default for architectures without a targeted flush: flush everything
 * everywhere, which is always enough. Called by the Rust core in task
 * context with interrupts enabled; returns when every CPU is flushed.
 */
void __weak migrc_arch_flush(const struct cpumask *mask)
{
	flush_tlb_all();
}

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

	debugfs_create_file("state", 0444, dir, NULL, &migrc_state_fops);
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
	if (!migrc_boot_enabled)
		migrc_set_enabled(false);
	migrc_sysfs_init();
	pr_info("ready: %u request slots, at most %lu pages pending, %s\n",
		MIGRC_DEFAULT_SLOTS, MIGRC_DEFAULT_MAX_PENDING,
		migrc_enabled() ? "enabled" : "disabled (migrc=off)");
	return 0;
}
subsys_initcall(migrc_init);
