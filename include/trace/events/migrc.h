/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MIGRC: what the deferral of migration TLB flushes did. The reasons are
 * the names of debugfs migrc/stats (enum migrc_event), without "migrc_".
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM migrc

#if !defined(_TRACE_MIGRC_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_MIGRC_H

#include <linux/tracepoint.h>

/* A read-only batch's flush was deferred under @gen. */
TRACE_EVENT(migrc_publish,

	TP_PROTO(u64 gen, u64 nr_pages, unsigned int nr_cpus),

	TP_ARGS(gen, nr_pages, nr_cpus),

	TP_STRUCT__entry(
		__field(u64,		gen)
		__field(u64,		pages)
		__field(unsigned int,	cpus)
	),

	TP_fast_assign(
		__entry->gen = gen;
		__entry->pages = nr_pages;
		__entry->cpus = nr_cpus;
	),

	TP_printk("gen=%llu pages=%llu cpus=%u",
		  __entry->gen, __entry->pages, __entry->cpus)
);

/*
 * A deferred flush was sent to @cpus CPUs, or avoided (@cpus 0) because
 * @pruned CPUs had flushed on their own; @need is the generation the
 * caller needed, every CPU sent to is clean up to @clean_to afterwards.
 */
TRACE_EVENT(migrc_flush,

	TP_PROTO(const char *reason, u64 need, u64 clean_to, unsigned int cpus,
		 unsigned int pruned),

	TP_ARGS(reason, need, clean_to, cpus, pruned),

	TP_STRUCT__entry(
		__string(reason,	reason)
		__field(u64,		need)
		__field(u64,		clean_to)
		__field(unsigned int,	cpus)
		__field(unsigned int,	pruned)
	),

	TP_fast_assign(
		__assign_str(reason);
		__entry->need = need;
		__entry->clean_to = clean_to;
		__entry->cpus = cpus;
		__entry->pruned = pruned;
	),

	TP_printk("reason=%s need=%llu clean_to=%llu cpus=%u pruned=%u",
		  __get_str(reason), __entry->need, __entry->clean_to,
		  __entry->cpus, __entry->pruned)
);

/* @nr pages, PTEs or batches (by @reason) were not deferred. */
TRACE_EVENT(migrc_refuse,

	TP_PROTO(const char *reason, unsigned long nr),

	TP_ARGS(reason, nr),

	TP_STRUCT__entry(
		__string(reason,	reason)
		__field(unsigned long,	nr)
	),

	TP_fast_assign(
		__assign_str(reason);
		__entry->nr = nr;
	),

	TP_printk("reason=%s nr=%lu", __get_str(reason), __entry->nr)
);

#endif /* _TRACE_MIGRC_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
