// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong: migrate a region between NUMA nodes 0 and 1 with move_pages()
 * from CPU 0 while reader threads on every other CPU keep reading it and
 * check every word they read.
 *
 *   pingpong MIB ROUNDS ro|rw
 *
 * "ro" makes the region read-only (mprotect) before the readers start, so
 * its PTEs are read-only when migrated: what MIGRC defers. "rw" keeps it
 * writable: MIGRC must not defer anything. Each page holds its own index
 * and a seed in every word, so a reader that saw a wrong or reused page
 * notices. Prints pages migrated, reads checked and errors; exits 1 on any
 * error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"

#define SEED 0x6d69677263000000ULL	/* "migrc" */

static char *region;
static size_t npages, psize;
static volatile int stop;

struct reader {
	pthread_t thread;
	int cpu;
	unsigned long long words, errors;
};

static uint64_t expected(size_t page)
{
	return SEED ^ page;
}

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	size_t words = psize / sizeof(uint64_t);

	pin(r->cpu);
	while (!stop) {
		for (size_t p = 0; p < npages && !stop; p++) {
			const volatile uint64_t *w =
				(const volatile uint64_t *)(region + p * psize);
			uint64_t want = expected(p);

			/* Every 8th word: enough to catch a wrong page. */
			for (size_t i = 0; i < words; i += 8) {
				if (w[i] != want) {
					if (r->errors++ < 5)
						fprintf(stderr,
							"cpu%d: page %zu word %zu: %#llx, want %#llx\n",
							r->cpu, p, i,
							(unsigned long long)w[i],
							(unsigned long long)want);
				}
				r->words++;
			}
		}
	}
	return NULL;
}

/* TLB shootdown interrupts so far, summed over CPUs (/proc/interrupts). */
static unsigned long long tlb_shootdowns(void)
{
	unsigned long long sum = 0, n;
	char line[4096], *s, *end;
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && fgets(line, sizeof(line), f)) {
		s = line + strspn(line, " ");
		if (strncmp(s, "TLB:", 4))
			continue;
		for (s += 4; (n = strtoull(s, &end, 10)), end != s; s = end)
			sum += n;
	}
	if (f)
		fclose(f);
	return sum;
}

/* A /proc/vmstat counter (0 if absent). */
static unsigned long long vmstat_counter(const char *name)
{
	unsigned long long v, found = 0;
	char key[64];
	FILE *f = fopen("/proc/vmstat", "r");

	while (f && fscanf(f, "%63s %llu", key, &v) == 2) {
		if (!strcmp(key, name)) {
			found = v;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static long move_pages(size_t count, void **pages, const int *nodes,
		       int *status)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status,
		       MPOL_MF_MOVE);
}

int main(int argc, char **argv)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long migrated = 0, words = 0, errors = 0;
	unsigned long long tlb0, tlb1, rcv0, rcv1;
	struct reader *readers;
	struct timespec t0, t1;
	int rounds, ro, *nodes, *status;
	void **pages;
	double secs;

	if ((argc != 4 && argc != 5) ||
	    (strcmp(argv[3], "ro") && strcmp(argv[3], "rw"))) {
		fprintf(stderr, "usage: %s MIB ROUNDS ro|rw [IDLE_MS]\n",
			argv[0]);
		return 2;
	}
	psize = sysconf(_SC_PAGESIZE);
	npages = strtoul(argv[1], NULL, 0) * (1 << 20) / psize;
	rounds = atoi(argv[2]);
	ro = !strcmp(argv[3], "ro");
	if (ncpu < 2) {
		fprintf(stderr, "needs at least 2 CPUs\n");
		return 2;
	}

	pin(0);
	region = mmap(NULL, npages * psize, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	/* Base pages only: THPs are PMD-mapped and flushed at once. */
	madvise(region, npages * psize, MADV_NOHUGEPAGE);
	for (size_t p = 0; p < npages; p++) {
		uint64_t *w = (uint64_t *)(region + p * psize);

		for (size_t i = 0; i < psize / sizeof(*w); i++)
			w[i] = expected(p);
	}
	if (ro && mprotect(region, npages * psize, PROT_READ)) {
		perror("mprotect");
		return 2;
	}

	pages = calloc(npages, sizeof(*pages));
	nodes = calloc(npages, sizeof(*nodes));
	status = calloc(npages, sizeof(*status));
	readers = calloc(ncpu, sizeof(*readers));
	if (!pages || !nodes || !status || !readers)
		return 2;
	for (size_t p = 0; p < npages; p++)
		pages[p] = region + p * psize;

	for (int c = 1; c < ncpu; c++) {
		readers[c].cpu = c;
		pthread_create(&readers[c].thread, NULL, read_loop, &readers[c]);
	}
	usleep(100000);

	/*
	 * The window: only the migrations (or, with IDLE_MS, as long a time
	 * without any), not the setup and teardown around them.
	 */
	tlb0 = tlb_shootdowns();
	rcv0 = vmstat_counter("nr_tlb_remote_flush_received");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (argc == 5)
		usleep(atoi(argv[4]) * 1000);
	for (int r = 0; r < rounds; r++) {
		int node = (r & 1) ? 0 : 1;

		for (size_t p = 0; p < npages; p++)
			nodes[p] = node;
		if (move_pages(npages, pages, nodes, status)) {
			perror("move_pages");
			errors++;
			break;
		}
		for (size_t p = 0; p < npages; p++)
			if (status[p] == node)
				migrated++;
		/*
		 * Progress, for the harness's hang detector: a busy host may
		 * make a run take long, and only silence is taken for a hang.
		 */
		if ((r + 1) % 4 == 0 || r + 1 == rounds)
			fprintf(stderr, "pingpong %s: %d of %d rounds\n",
				argv[3], r + 1, rounds);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	tlb1 = tlb_shootdowns();
	rcv1 = vmstat_counter("nr_tlb_remote_flush_received");

	stop = 1;
	for (int c = 1; c < ncpu; c++) {
		pthread_join(readers[c].thread, NULL);
		words += readers[c].words;
		errors += readers[c].errors;
	}
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("pingpong %s: %zu pages x %d rounds: ", argv[3], npages, rounds);
	printf("%llu pages migrated in %.2f s (%.0f pages/s), ", migrated, secs,
	       secs > 0 ? migrated / secs : 0.0);
	printf("%llu words checked by %d readers, %llu errors\n", words,
	       ncpu - 1, errors);
	printf("window: %llu ms, %llu TLB shootdowns, %llu remote flushes received\n",
	       (unsigned long long)(secs * 1000), tlb1 - tlb0, rcv1 - rcv0);
	return errors ? 1 : 0;
}
