/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events MIGRC counts: MIGRC_EVENT(NAME, "text"), reported in
 * /proc/vmstat as migrc_<text>. The one list, included where the enum
 * migrc_event, the vm_event_item range and the vmstat names are generated
 * (no include guard, like lsm_hook_defs.h). The Rust core names the events
 * it counts by their enum constant (bindgen).
 *
 * Units: "pages" are base pages; "PTEs" are cleared page table entries,
 * one per mapping of a page; "batches" are the read-only batches of one
 * migrate_pages_batch() call.
 */

/* The Rust core, rust/kernel/mm/migrc/. */
MIGRC_EVENT(PAGES_DEFERRED, "pages_deferred")		/* pages */
MIGRC_EVENT(REQUESTS_PUBLISHED, "requests_published")	/* batches */
MIGRC_EVENT(REQUESTS_RETIRED, "requests_retired")
MIGRC_EVENT(DECLINED_DISABLED, "declined_disabled")	/* batches */
MIGRC_EVENT(DECLINED_EXHAUSTED, "declined_exhausted")
MIGRC_EVENT(DECLINED_PENDING_CAP, "declined_pending_cap") /* publications */
MIGRC_EVENT(FLUSHES_SENT, "flushes_sent")		/* IPI rounds */
MIGRC_EVENT(FLUSHES_PRUNED, "flushes_pruned")		/* rounds not sent */
MIGRC_EVENT(CPUS_FLUSHED, "cpus_flushed")
MIGRC_EVENT(CPUS_PRUNED, "cpus_pruned")
MIGRC_EVENT(REQUESTS_FOLDED, "requests_folded")	/* batches: pool full */

/* Flushes the C glue forces, by cause. */
MIGRC_EVENT(FORCED_WRITE, "forced_write")		/* a PTE became writable */
MIGRC_EVENT(FORCED_SRC_BUSY, "forced_src_busy")		/* a source still used */
MIGRC_EVENT(FORCED_RANGE, "forced_range")		/* offlining, reporting */
MIGRC_EVENT(FORCED_MM, "forced_mm")			/* an mm's PTEs change */
MIGRC_EVENT(FORCED_UNPUBLISHED, "forced_unpublished")	/* ... before publication */
MIGRC_EVENT(FORCED_FILE, "forced_file")			/* a file got a writer */
MIGRC_EVENT(FORCED_FILE_RACE, "forced_file_race")	/* ... as it migrated */
MIGRC_EVENT(ALLOC_WAITS, "alloc_waits")			/* a page left, flush due */
MIGRC_EVENT(ATOMIC_SKIPS, "atomic_skips")		/* atomic alloc skipped one */

/* Read-only batches the C glue flushed at once. */
MIGRC_EVENT(DECLINED_ARCH, "declined_arch")
MIGRC_EVENT(DECLINED_DEBUG, "declined_debug")		/* freeing touches pages */

/* Must stay 0. */
MIGRC_EVENT(UNSAFE_ALLOC, "unsafe_alloc")		/* see migrc_page_flush() */
MIGRC_EVENT(DEBUG_STALE, "debug_stale")			/* MIGRC_DEBUG found one */

/* Page-cache pages whose flush was deferred, by kind. */
MIGRC_EVENT(DEFERRED_FILE, "deferred_file")		/* pages */
MIGRC_EVENT(DEFERRED_SHMEM, "deferred_shmem")		/* pages */

/* Migrations run inside another: their scope does not own the batch. */
MIGRC_EVENT(NESTED, "nested")

/* Migrations whose flush was not deferred, by reason. */
MIGRC_EVENT(REFUSED_NESTED, "refused_nested")		/* pages */
MIGRC_EVENT(REFUSED_FILE, "refused_file")		/* pages: no regular file */
MIGRC_EVENT(REFUSED_FILE_FS, "refused_file_fs")		/* pages: fs not covered */
MIGRC_EVENT(REFUSED_FILE_WRITER, "refused_file_writer") /* pages: file has a writer */
MIGRC_EVENT(REFUSED_LARGE, "refused_large")		/* pages: hugetlb, PMD */
MIGRC_EVENT(REFUSED_REASON, "refused_reason")		/* pages: MR_* */
MIGRC_EVENT(REFUSED_WRITABLE, "refused_writable")	/* PTEs */
MIGRC_EVENT(REFUSED_DIRTY_SHARED, "refused_dirty_shared") /* PTEs */
MIGRC_EVENT(REFUSED_FLUSH_PENDING, "refused_flush_pending") /* PTEs */
