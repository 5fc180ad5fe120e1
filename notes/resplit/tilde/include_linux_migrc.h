^
		if (!migrc_gen_retired(gen) &&
		    !migrc_broken(MIGRC_BREAK_ALLOC))
$
=alloc..knobs
~		if (!migrc_gen_retired(gen))
=knobs
%%
^
 * that follows. The shadow clock is read after it: a CPU whose generation
$
=x86..shadow
~ * that follows.
=shadow
