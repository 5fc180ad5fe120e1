/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What /sys/kernel/debug/migrc/break (CONFIG_MIGRC_DEBUG) can set, in bit
 * order: MIGRC_BREAK_RULE(NAME, name) breaks the safety rule
 * MIGRC_BREAK_<NAME> on purpose, so that a test can show it catches the
 * hole; MIGRC_TEST_AID(NAME, name) is the test aid MIGRC_<NAME>, which
 * breaks nothing but widens a window. debugfs takes them by name. The one
 * list, included where the enum and the names are generated (no include
 * guard, like lsm_hook_defs.h).
 */
MIGRC_BREAK_RULE(ALLOC, alloc)		/* no flush at allocator exits */
MIGRC_BREAK_RULE(WRITE, write)		/* no flush before a write */
MIGRC_BREAK_RULE(DIRTY, dirty)		/* defer dirty, writable PTEs */
MIGRC_BREAK_RULE(BATCHED, batched)	/* the RO batch marks no mm */
MIGRC_TEST_AID(REUSE_FIRST, reuse_first)	/* pending pages reused first */
MIGRC_TEST_AID(HOLD_SRC, hold_src)	/* a speculative ref on sources */
MIGRC_BREAK_RULE(NUMA_RO, numa_ro)	/* every NUMA scan read-only */
MIGRC_TEST_AID(NUMA_HOLD, numa_hold)	/* scans sleep before the flush */
MIGRC_BREAK_RULE(UNPUBLISHED, unpublished) /* unpublished batches unseen */
MIGRC_TEST_AID(PUBLISH_HOLD, publish_hold) /* sleep before publication */
MIGRC_BREAK_RULE(FILE_OPEN, file_open)	/* a file's new writer: no flush */
MIGRC_BREAK_RULE(FILE_WRITERS, file_writers) /* a file's writers unseen */
MIGRC_BREAK_RULE(FILE_TRUNC, file_trunc) /* partial truncation: no flush */
MIGRC_BREAK_RULE(COLD, cold)		/* cold write protection unflushed */
MIGRC_TEST_AID(NUMA_NOWAIT, numa_nowait) /* hinting faults never wait */
