^
	else if (unlikely(migrc_gen) && !migrc_gen_retired(migrc_gen) &&
		 !migrc_broken(MIGRC_REUSE_FIRST))
$
=alloc..knobs
~	else if (unlikely(migrc_gen) && !migrc_gen_retired(migrc_gen))
=knobs
%%
^
		if (unlikely(!migrc_page_clean(page)) &&
		    !migrc_broken(MIGRC_REUSE_FIRST)) {
$
=alloc..knobs
~		if (unlikely(!migrc_page_clean(page))) {
=knobs
