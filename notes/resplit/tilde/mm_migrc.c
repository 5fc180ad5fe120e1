	if (!migrc_boot_enabled)
=capi..switch
~	pr_info("ready: %u request slots, at most %lu pages pending\n",
~		MIGRC_DEFAULT_SLOTS, MIGRC_DEFAULT_MAX_PENDING);
=switch
