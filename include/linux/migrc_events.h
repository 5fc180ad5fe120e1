/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enum migrc_event, generated from the list in <linux/migrc_event_defs.h>.
 * Kept apart from <linux/migrc.h> so that the Rust core's bindings, which
 * only count events, need none of the mm types.
 */
#ifndef _LINUX_MIGRC_EVENTS_H
#define _LINUX_MIGRC_EVENTS_H

/* An event MIGRC counts; shown in debugfs migrc/stats by its text. */
enum migrc_event {
#define MIGRC_EVENT(name, ...)	MIGRC_EV_##name,
#include <linux/migrc_event_defs.h>
#undef MIGRC_EVENT
	NR_MIGRC_EVENTS
};

#endif /* _LINUX_MIGRC_EVENTS_H */
