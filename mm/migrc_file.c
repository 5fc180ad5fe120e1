// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRC for page-cache folios: file-backed and shmem.
 *
 * After the migration of a page-cache folio whose flush is deferred, CPUs
 * may still read the old frame through stale read-only entries while the
 * page cache holds the copy. That is harmless while the copy's data stays
 * what it was. The rule here: no writer, no deferral.
 *
 * On a filesystem that opts in (FS_MIGRC), page-cache data changes in
 * place only at the hands of someone who holds write access to the inode
 * (i_writecount): write(2) and its relatives, splice and copy_file_range
 * into the file, fallocate, truncate, O_DIRECT and every shared writable
 * mapping need a file opened for writing. So:
 *
 *  1. a folio is deferred only while nobody holds write access
 *     (migrc_file_deferrable(), when the migration unmaps it);
 *  2. before the copy enters the page cache, the migration raises the
 *     mapping's generation, then looks for a writer again and flushes at
 *     once if one came in since 1 (migrc_file_deferred());
 *  3. whoever takes write access later flushes the mapping's generation
 *     before it may write (migrc_file_new_writer(), from get_write_access(),
 *     mapping_map_writable() and mapping_allow_writable()).
 *
 * 2 and 3 are a store-buffering pair: each side stores with a fully
 * ordered atomic (the generation; the write count) and then loads what the
 * other stores, so at least one of them sees the other and flushes. The
 * write path itself reads nothing new.
 *
 * shmem files the kernel makes for itself (memfd, SysV shm, GEM objects)
 * are written without raising i_writecount: only write-sealed memfds are
 * deferred, and their one change in place, the zeroed tail of a partial
 * truncation (F_SEAL_WRITE does not forbid shrinking), flushes in
 * truncate_inode_partial_folio(). Such files live on a kernel mount and
 * are unlinked from birth; a tmpfs file unlinked while open counts as one
 * of them too, which only costs deferral. Drivers that let a device write
 * a file's pages take a shared writable mapping of it (iommufd).
 *
 * Bytes past EOF in the last page may be zeroed in place without write
 * access (writeback, i_size updates): they are no file data, and a stale
 * reader sees what the last writer left there.
 *
 * A change of the mapping's page tables (munmap, mremap, MAP_FIXED, the
 * unmap of a truncation or an invalidation) is the per-mm rule's, as for
 * anonymous memory: see flush_tlb_batched_pending().
 */
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/migrc.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>

/* Whether the inode's filesystem keeps to the rule above. */
static bool migrc_file_fs_covered(struct inode *host)
{
	struct super_block *sb = host->i_sb;

	if (!(sb->s_type->fs_flags & FS_MIGRC))
		return false;
	/* The kernel's own shmem files: see the top of this file. */
	if (shmem_mapping(host->i_mapping) &&
	    ((sb->s_flags & SB_KERNMOUNT) || !READ_ONCE(host->i_nlink)))
		return READ_ONCE(SHMEM_I(host)->seals) & F_SEAL_WRITE;
	return true;
}

/*
 * Whether someone holds write access to @mapping's inode. A shared
 * writable mapping holds a file opened for writing, but the kernel's own
 * shmem files do not count theirs in i_writecount: look at both.
 */
static bool migrc_file_has_writer(struct address_space *mapping)
{
	if (migrc_broken(MIGRC_BREAK_FILE_WRITERS))
		return false;
	return atomic_read(&mapping->host->i_writecount) > 0 ||
	       mapping_writably_mapped(mapping);
}

/**
 * migrc_file_deferrable - whether a page-cache folio's flush may be deferred
 * @src: the source folio, locked, not anonymous
 * @refused: where to say why not
 *
 * Return: true if it may; false with the refusal event in @refused.
 */
bool migrc_file_deferrable(struct folio *src, enum migrc_event *refused)
{
	struct address_space *mapping = folio_mapping(src);
	struct inode *host = mapping ? mapping->host : NULL;

	if (!host || folio_test_swapcache(src) || !S_ISREG(host->i_mode) ||
	    IS_DAX(host) || mapping_inaccessible(mapping))
		*refused = MIGRC_EV_REFUSED_FILE;
	else if (!migrc_file_fs_covered(host))
		*refused = MIGRC_EV_REFUSED_FILE_FS;
	else if (migrc_file_has_writer(mapping))
		*refused = MIGRC_EV_REFUSED_FILE_WRITER;
	else
		return true;
	return false;
}

/**
 * migrc_file_deferred - a page-cache folio was unmapped into a deferred flush
 * @mapping: its mapping, sampled while the source is still in it
 * @gen: the generation of the flush, published
 * @nr: its pages
 *
 * Raise @mapping's generation, so that a later writer flushes it, then look
 * for a writer that took its access since migrc_file_deferrable() and may
 * have read the generation before it was raised: flush for it now. Call
 * before the copy replaces the source in the page cache, in task context.
 */
void migrc_file_deferred(struct address_space *mapping, u64 gen, long nr)
{
	s64 old;

	/* The source is locked and still in the page cache. */
	if (WARN_ON_ONCE(!mapping)) {
		migrc_flush_upto(gen, MIGRC_EV_FORCED_FILE_RACE);
		return;
	}
	old = atomic64_read(&mapping->migrc_gen);

	/*
	 * Only raise: a writer that sees a generation at or above @gen
	 * flushes it, which covers ours. The successful cmpxchg is fully
	 * ordered: the generation is stored before the loads of the writer
	 * check below. Pairs with the fully ordered RMW of the write count
	 * before migrc_file_new_writer() loads the generation.
	 */
	do {
		if (old >= (s64)gen) {
			/* Nothing stored: the same order for the one we saw. */
			smp_mb();
			break;
		}
	} while (!atomic64_try_cmpxchg(&mapping->migrc_gen, &old, gen));

	if (migrc_file_has_writer(mapping)) {
		migrc_count(MIGRC_EV_FORCED_FILE_RACE);
		migrc_flush_upto(gen, MIGRC_EV_FORCED_FILE_RACE);
		return;
	}
	migrc_stat_add(shmem_mapping(mapping) ? MIGRC_EV_DEFERRED_SHMEM :
						MIGRC_EV_DEFERRED_FILE, nr);
}

/* Flush @gen of @mapping for a writer, unless @rule is broken on purpose. */
static void migrc_file_flush(struct address_space *mapping, u64 gen,
			     enum migrc_break rule)
{
	if (migrc_broken(rule))
		return;
	/* Acquire: a skip observes the flushes that retired @gen. */
	if (!migrc_gen_retired(gen)) {
		migrc_count(MIGRC_EV_FORCED_FILE);
		migrc_flush_upto(gen, MIGRC_EV_FORCED_FILE);
	}
	/* Back to "nothing pending", unless a newer generation came in. */
	atomic64_cmpxchg(&mapping->migrc_gen, gen, 0);
}

/**
 * migrc_file_writer_flush - slow path of migrc_file_new_writer()
 * @mapping: the page cache a writer just got access to
 * @gen: its generation, not 0
 *
 * Task context: the callers open, truncate or map a file. Exported to
 * every module: get_write_access() and mapping_map_writable() are inline.
 */
void migrc_file_writer_flush(struct address_space *mapping, u64 gen)
{
	migrc_file_flush(mapping, gen, MIGRC_BREAK_FILE_OPEN);
}
EXPORT_SYMBOL(migrc_file_writer_flush);

/**
 * migrc_file_partial_truncate - a truncation is about to zero part of a folio
 * @folio: the folio, locked, in its mapping
 *
 * Write-sealed memfds shrink without write access (see the top of this
 * file). The folio lock orders this load after the raise of a migration
 * that made the folio: it raised before it unlocked the copy. The shadow
 * checks the change whatever this decided.
 */
void migrc_file_partial_truncate(struct folio *folio)
{
	struct address_space *mapping = folio->mapping;
	u64 gen = atomic64_read(&mapping->migrc_gen);

	if (gen)
		migrc_file_flush(mapping, gen, MIGRC_BREAK_FILE_TRUNC);
	migrc_debug_file_change(folio);
}
