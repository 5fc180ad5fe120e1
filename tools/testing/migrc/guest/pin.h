/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the guest programs: run the calling thread on one CPU only. */
#ifndef MIGRC_GUEST_PIN_H
#define MIGRC_GUEST_PIN_H

#include <sched.h>
#include <stdio.h>

static inline void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

#endif
