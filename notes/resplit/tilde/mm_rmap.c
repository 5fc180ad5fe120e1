	else if (migrc_wp_pending(mm) || migrc_vma_writable_scan(vma))
=defer..zap
~	else if (mm_tlb_flush_pending(mm))
=zap..numa
~	else if (migrc_wp_pending(mm))
=numa
%%
^
	/*
	 * MIGRC: the caller found the entry read-only (ro_ok, see
$
=robatch..mmgen
~	/*
~	 * MIGRC: the caller found the entry read-only (ro_ok): it goes to
~	 * the read-only batch, which marks the mm as any batch does.
~	 */
=mmgen
%%
^
	if (tlb_ubc == migrc_ro_batch() && migrc_broken(MIGRC_BREAK_BATCHED))
|
		goto added;
$
=mmgen..shadow
~		return;
=shadow
%%
^
	if (migrc_ro_note_mm(tlb_ubc, mm))
|
		goto added;
$
=mmgen..shadow
~		return;
=shadow
%%
^
				set_tlb_ubc_flush_pending(mm, pteval, address,
					address + PAGE_SIZE,
$
=robatch..defer
~				set_tlb_ubc_flush_pending(mm, pteval, address,
~							  address + PAGE_SIZE, false);
=defer
