/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events MIGRC counts: MIGRC_EVENT(NAME, "text", VMSTAT). The one
 * list, included where the enum migrc_event and the table of counters are
 * generated (no include guard, like lsm_hook_defs.h). Every event is a line
 * "migrc_<text> <count>" of /sys/kernel/debug/migrc/stats; VMSTAT names the
 * /proc/vmstat item it also adds to (migrc_pages_deferred, _flushes_sent,
 * _flushes_pruned, _flushes_forced), or is NONE. The Rust core names the
 * events it counts by their enum constant (bindgen).
 *
 * Units: "pages" are base pages; "PTEs" are cleared page table entries,
 * one per mapping of a page; "batches" are the read-only batches of one
 * migrate_pages_batch() call.
 */

/* The Rust core, rust/kernel/mm/migrc/. */
MIGRC_EVENT(PAGES_DEFERRED, "pages_deferred", PAGES_DEFERRED)	/* pages */
MIGRC_EVENT(REQUESTS_PUBLISHED, "requests_published", NONE)	/* batches */
MIGRC_EVENT(REQUESTS_RETIRED, "requests_retired", NONE)
MIGRC_EVENT(DECLINED_EXHAUSTED, "declined_exhausted", NONE)
MIGRC_EVENT(DECLINED_PENDING_CAP, "declined_pending_cap", NONE)	/* publications */
MIGRC_EVENT(FLUSHES_SENT, "flushes_sent", FLUSHES_SENT)		/* IPI rounds */
MIGRC_EVENT(FLUSHES_PRUNED, "flushes_pruned", FLUSHES_PRUNED)	/* rounds not sent */
MIGRC_EVENT(CPUS_FLUSHED, "cpus_flushed", NONE)
MIGRC_EVENT(CPUS_PRUNED, "cpus_pruned", NONE)
MIGRC_EVENT(REQUESTS_FOLDED, "requests_folded", NONE)		/* batches: pool full */

/* Flushes the C glue forces, by cause. */
MIGRC_EVENT(FORCED_WRITE, "forced_write", FLUSHES_FORCED)	/* a PTE became writable */
MIGRC_EVENT(FORCED_SRC_BUSY, "forced_src_busy", FLUSHES_FORCED)	/* a source still used */
MIGRC_EVENT(FORCED_RANGE, "forced_range", FLUSHES_FORCED)	/* offlining, reporting */
MIGRC_EVENT(FORCED_MM, "forced_mm", FLUSHES_FORCED)		/* an mm's PTEs change */
MIGRC_EVENT(FORCED_UNPUBLISHED, "forced_unpublished", FLUSHES_FORCED)	/* ... before publication */
MIGRC_EVENT(FORCED_OFF, "forced_off", FLUSHES_FORCED)		/* MIGRC switched off */
MIGRC_EVENT(FORCED_FILE, "forced_file", FLUSHES_FORCED)		/* a file got a writer */
MIGRC_EVENT(FORCED_FILE_RACE, "forced_file_race", FLUSHES_FORCED)	/* ... as it migrated */
MIGRC_EVENT(ALLOC_WAITS, "alloc_waits", NONE)			/* a page left, flush due */
MIGRC_EVENT(ATOMIC_SKIPS, "atomic_skips", NONE)			/* atomic alloc skipped one */

/* Read-only batches the C glue flushed at once. */
MIGRC_EVENT(DECLINED_ARCH, "declined_arch", NONE)
MIGRC_EVENT(DECLINED_DEBUG, "declined_debug", NONE)		/* freeing touches pages */

/* Must stay 0. */
MIGRC_EVENT(UNSAFE_ALLOC, "unsafe_alloc", NONE)			/* see migrc_page_flush() */
MIGRC_EVENT(DEBUG_STALE, "debug_stale", NONE)			/* MIGRC_DEBUG found one */

/* Page-cache pages whose flush was deferred, by kind. */
MIGRC_EVENT(DEFERRED_FILE, "deferred_file", NONE)		/* pages */
MIGRC_EVENT(DEFERRED_SHMEM, "deferred_shmem", NONE)		/* pages */

/* Migrations run inside another: their scope does not own the batch. */
MIGRC_EVENT(NESTED, "nested", NONE)

/* Migrations whose flush was not deferred, by reason. */
MIGRC_EVENT(REFUSED_NESTED, "refused_nested", NONE)		/* pages */
MIGRC_EVENT(REFUSED_FILE, "refused_file", NONE)			/* pages: no regular file */
MIGRC_EVENT(REFUSED_FILE_FS, "refused_file_fs", NONE)		/* pages: fs not covered */
MIGRC_EVENT(REFUSED_FILE_WRITER, "refused_file_writer", NONE)	/* pages: file has a writer */
MIGRC_EVENT(REFUSED_LARGE, "refused_large", NONE)		/* pages: hugetlb, PMD */
MIGRC_EVENT(REFUSED_REASON, "refused_reason", NONE)		/* pages: MR_* */
MIGRC_EVENT(REFUSED_WRITABLE, "refused_writable", NONE)		/* PTEs */
MIGRC_EVENT(REFUSED_DIRTY_SHARED, "refused_dirty_shared", NONE)	/* PTEs */
MIGRC_EVENT(REFUSED_FLUSH_PENDING, "refused_flush_pending", NONE)	/* PTEs */
MIGRC_EVENT(NUMA_FAULT_WAITED, "numa_fault_waited", NONE)	/* faults */
MIGRC_EVENT(NUMA_FAULT_WAIT_TIMEOUT, "numa_fault_wait_timeout", NONE) /* faults */

/* Cold writable anonymous pages (mm/migrc_cold.c). */
MIGRC_EVENT(COLD_WRPROTECTED, "cold_wrprotected", NONE)		/* PTEs */
MIGRC_EVENT(COLD_SKIPPED_ACTIVE, "cold_skipped_active", NONE)	/* PTEs */
MIGRC_EVENT(COLD_SKIPPED_REUSED, "cold_skipped_reused", NONE)	/* PTEs */
MIGRC_EVENT(COLD_REFUSED_SHARED, "cold_refused_shared", NONE)	/* PTEs */
MIGRC_EVENT(COLD_REFUSED_PINNED, "cold_refused_pinned", NONE)	/* PTEs */
MIGRC_EVENT(COLD_REFUSED_TRACKED, "cold_refused_tracked", NONE)	/* PTEs */
MIGRC_EVENT(COLD_REFUSED_LARGE, "cold_refused_large", NONE)	/* PTEs */
