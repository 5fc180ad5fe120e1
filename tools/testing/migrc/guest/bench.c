// SPDX-License-Identifier: GPL-2.0
/*
 * The workloads of 'make bench', one per scenario, each a fixed amount of
 * work. The stage around it reads the kernel's counters; this program only
 * reports what it did:
 *
 *   bench: <scenario> ops=<n> seconds=<s> ops_per_s=<r> [more key=value]
 *
 * Scenarios:
 *   migrate MIB ROUNDS         readers on CPUs 1..n-1 read a read-only
 *                              region while CPU 0 moves the whole process
 *                              between nodes 0 and 1 with migrate_pages()
 *                              (the migratepages ping-pong); ops = words
 *                              read
 *   tiering MIB WINDOW_MIB LOOKUPS SWEEP WPCT [ro|file]
 *                              a region larger than node 0, written once,
 *                              then looked up at random by a thread per
 *                              CPU inside a window of WINDOW_MIB that
 *                              slides round the region every SWEEP
 *                              lookups; WPCT percent of the lookups
 *                              write; "ro" makes the region read-only
 *                              after the fill; "file" maps it from a
 *                              tmpfs file written and closed before
 *                              (model weights), never written through
 *                              the mapping. One sweep of warm-up, then
 *                              $BENCH_MARK runs, then LOOKUPS are timed;
 *                              ops = lookups. While they run, the main
 *                              thread samples where the pages are
 *                              (placement, below)
 *   demote-ro MIB HOT_MIB ROUNDS
 *                              a read-only region of MIB on node 0 whose
 *                              first HOT_MIB readers on CPUs 1..n-1 read
 *                              at random; every round CPU 0 fills node 0
 *                              with locked memory, so reclaim demotes
 *                              half of the cold part, frees it and brings
 *                              the region back with move_pages(); ops =
 *                              words read (NUMA balancing is off)
 *   alloc MIB ROUNDS           mmap, touch every page, munmap; ops = pages
 *   fault MIB ROUNDS           the same, timing only the first touches
 *   unmap MIB ROUNDS           the same, timing only the munmap() calls
 *   write MIB COUNT            pwrite() 4 KiB blocks round a tmpfs file of
 *                              MIB; ops = writes
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"

#define MAX_THREADS	64

static size_t psize;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *map_region(size_t len)
{
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	/* Base pages: PMD-mapped THPs are flushed differently. */
	madvise(m, len, MADV_NOHUGEPAGE);
	return m;
}

/*
 * tiering-file: a file of @len holding the same data as the anonymous
 * region, written and closed, then opened read-only: nobody holds it open
 * for writing, as model weights loaded from a file. The mapping is
 * MAP_PRIVATE and writable (never written): NUMA balancing does not scan
 * read-only file mappings.
 */
#define BENCH_FILE	"/tmp/bench-weights"

static char *map_file_region(size_t len)
{
	char *buf = malloc(psize), *m;
	int fd = open(BENCH_FILE, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || !buf) {
		perror(BENCH_FILE);
		exit(2);
	}
	for (size_t i = 0; i < len; i += psize) {
		memset(buf, (int)(i / psize), psize);
		if (pwrite(fd, buf, psize, i) != (ssize_t)psize) {
			perror(BENCH_FILE);
			exit(2);
		}
	}
	close(fd);
	free(buf);
	fd = open(BENCH_FILE, O_RDONLY);
	m = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		perror(BENCH_FILE);
		exit(2);
	}
	/*
	 * The mapping keeps the file. It stays linked until the end: MIGRC
	 * treats an unlinked shmem file as one the kernel writes itself.
	 */
	close(fd);
	madvise(m, len, MADV_NOHUGEPAGE);
	return m;
}

static void report(const char *scenario, unsigned long long ops, double secs,
		   const char *more)
{
	printf("bench: %s ops=%llu seconds=%.3f ops_per_s=%.1f%s%s\n",
	       scenario, ops, secs, secs > 0 ? ops / secs : 0.0,
	       more[0] ? " " : "", more);
	fflush(stdout);
}

struct worker {
	pthread_t thread;
	int cpu;
	char *mem;
	size_t len;
	unsigned long long ops;
	volatile unsigned long long pos;	/* tiering: lookups done */
	const struct tiering *tiering;
	volatile int *stop;
};

/* migrate: read every 8th word, over and over, until told to stop. */
static void *read_loop(void *arg)
{
	struct worker *w = arg;
	uint64_t sum = 0;

	pin(w->cpu);
	while (!*w->stop) {
		const volatile uint64_t *p = (const volatile uint64_t *)w->mem;

		for (size_t i = 0; i < w->len / 8 && !*w->stop; i += 8) {
			sum += p[i];
			w->ops++;
		}
	}
	return (void *)(uintptr_t)sum;
}

static int migrate(size_t mib, int rounds)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), n = 0;
	struct worker w[MAX_THREADS];
	size_t len = mib << 20;
	unsigned long long ops = 0;
	volatile int stop = 0;
	char *mem = map_region(len);
	char more[64];
	double t0, secs;

	pin(0);
	memset(mem, 0x5a, len);
	mprotect(mem, len, PROT_READ);	/* read-mostly: never written again */
	for (int i = 1; i < ncpu && n < MAX_THREADS; i++, n++) {
		w[n] = (struct worker){ .cpu = i, .mem = mem, .len = len,
					.stop = &stop };
		pthread_create(&w[n].thread, NULL, read_loop, &w[n]);
	}
	usleep(200000);
	t0 = now();
	for (int r = 0; r < rounds; r++) {
		unsigned long from = 1UL << (r & 1), to = 1UL << !(r & 1);

		if (syscall(SYS_migrate_pages, 0, 8 * sizeof(long), &from, &to) < 0)
			perror("migrate_pages");
	}
	secs = now() - t0;
	stop = 1;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].thread, NULL);
		ops += w[i].ops;
	}
	snprintf(more, sizeof(more), "rounds=%d readers=%d", rounds, n);
	report("migrate", ops, secs, more);
	return 0;
}

/*
 * tiering: random lookups inside a hot window that slides round the region,
 * a fixed number per thread. A window that fits node 0 leaves cold pages
 * for kswapd to demote and makes pages on node 1 hot, so promotion and
 * demotion run all the time; uniform lookups over the whole region would
 * make every page equally hot and reclaim would give up.
 */
struct tiering {
	size_t pages, window;		/* region and hot window, in pages */
	unsigned long long per_sweep;	/* lookups per thread per sweep */
	unsigned long long warm, todo;	/* lookups per thread */
	unsigned int wpct;
	pthread_barrier_t measure;
};

static void *lookup_loop(void *arg)
{
	struct worker *w = arg;
	const struct tiering *t = w->tiering;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (w->cpu + 1), sum = 0;
	volatile uint64_t *p = (volatile uint64_t *)w->mem;
	size_t wpp = psize / 8;

	pin(w->cpu);
	for (unsigned long long i = 0; i < t->warm + t->todo; i++) {
		size_t first = (size_t)(i % t->per_sweep * t->pages / t->per_sweep);
		size_t page, word;

		if (i == t->warm)
			pthread_barrier_wait((pthread_barrier_t *)&t->measure);
		/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		page = (first + (x >> 16) % t->window) % t->pages;
		word = page * wpp + (x & 0xffff) % wpp;
		if (t->wpct && x % 100 < t->wpct)
			p[word] = x;
		else
			sum += p[word];
		/* Often enough for the sampler, rarely enough to cost nothing. */
		if (!(i & 0x3fff))
			w->pos = i;
	}
	w->pos = t->warm + t->todo;
	w->ops = t->todo;
	return (void *)(uintptr_t)sum;
}

/*
 * Run $BENCH_MARK, if set, while every worker waits: the stage snapshots
 * its counters there, so the fill and the warm-up sweep stay out of them.
 * posix_spawn() shares the address space (vfork), so, unlike fork(), it
 * does not write-protect the region.
 */
static void measure_mark(void)
{
	const char *cmd = getenv("BENCH_MARK");
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	int status;
	pid_t pid;

	if (!cmd || !cmd[0])
		return;
	if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) ||
	    waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fprintf(stderr, "BENCH_MARK failed: %s\n", cmd);
}

/*
 * Placement, sampled by the main thread while the workers run: every
 * SAMPLE_STRIDE-th page of the region, PLACE_SAMPLES times per measured
 * part, at fixed points of the workers' progress (so both kernels pay the
 * same sampling work), through move_pages() with no target nodes, which
 * only reports each page's node. Per sample, the share of the sampled
 * pages inside the hot window that are on node 0, the fast node. Per
 * sampled page, the moves seen between samples: 1 -> 0 (promoted), 0 -> 1
 * (demoted), and churn: a demotion seen at most one window's time after
 * the page was seen promoted (the time the window takes to slide by its
 * own width, the time a page stays hot). A page moved and moved back
 * between two samples is not seen.
 */
#define SAMPLE_STRIDE	16
#define PLACE_SAMPLES	32

struct placement {
	size_t n;			/* sampled pages */
	void **addr;
	int *status;
	signed char *node;		/* last node seen, -1 if none yet */
	int *promoted_at;		/* sample of the last promotion, or -1 */
	double hot_node0;		/* sum over samples of the share */
	int samples;			/* taken, with hot pages sampled */
	unsigned long long promoted, demoted, churn;
	double secs;
};

static int place_init(struct placement *pl, char *mem, size_t pages)
{
	*pl = (struct placement){
		.n = (pages + SAMPLE_STRIDE - 1) / SAMPLE_STRIDE };
	pl->addr = calloc(pl->n, sizeof(*pl->addr));
	pl->status = calloc(pl->n, sizeof(*pl->status));
	pl->node = malloc(pl->n);
	pl->promoted_at = malloc(pl->n * sizeof(*pl->promoted_at));
	if (!pl->addr || !pl->status || !pl->node || !pl->promoted_at)
		return -1;
	for (size_t j = 0; j < pl->n; j++) {
		pl->addr[j] = mem + j * SAMPLE_STRIDE * psize;
		pl->node[j] = -1;
		pl->promoted_at[j] = -1;
	}
	return 0;
}

/* The workers' mean progress into the measured part, in lookups. */
static unsigned long long measured_pos(const struct worker *w, int n,
				       const struct tiering *t)
{
	unsigned long long sum = 0;

	for (int i = 0; i < n; i++)
		sum += w[i].pos > t->warm ? w[i].pos - t->warm : 0;
	return sum / n;
}

/* One sample, @k of PLACE_SAMPLES, with the window where @done puts it. */
static void place_sample(struct placement *pl, const struct tiering *t,
			 unsigned long long done, int k)
{
	/* The window of lookup_loop() at warm + done; warm is one sweep. */
	size_t first = (size_t)(done % t->per_sweep * t->pages / t->per_sweep);
	/* Samples the window takes to slide by its own width. */
	int hot_for = (int)((t->window * PLACE_SAMPLES + t->pages - 1) /
			    t->pages);
	size_t in = 0, fast = 0;
	double t0 = now();

	if (syscall(SYS_move_pages, 0, pl->n, pl->addr, NULL, pl->status, 0)) {
		perror("tiering: move_pages");
		return;
	}
	for (size_t j = 0; j < pl->n; j++) {
		size_t page = j * SAMPLE_STRIDE;
		int nd = pl->status[j];

		if ((page + t->pages - first) % t->pages < t->window) {
			in++;
			fast += nd == 0;
		}
		if (nd != 0 && nd != 1)
			continue;	/* not present, or not a tier we know */
		if (pl->node[j] == 1 && nd == 0) {
			pl->promoted++;
			pl->promoted_at[j] = k;
		} else if (pl->node[j] == 0 && nd == 1) {
			pl->demoted++;
			if (pl->promoted_at[j] >= 0 &&
			    k - pl->promoted_at[j] <= hot_for)
				pl->churn++;
			pl->promoted_at[j] = -1;
		}
		pl->node[j] = (signed char)nd;
	}
	if (in) {
		pl->samples++;
		pl->hot_node0 += (double)fast / in;
	}
	pl->secs += now() - t0;
}

/* Sample at PLACE_SAMPLES evenly spaced points of the measured lookups. */
static void place_run(struct placement *pl, const struct worker *w, int n,
		      const struct tiering *t)
{
	for (int k = 0; k < PLACE_SAMPLES; k++) {
		unsigned long long at = t->todo * k / PLACE_SAMPLES, done;

		while ((done = measured_pos(w, n, t)) < at)
			usleep(20000);
		place_sample(pl, t, done, k);
	}
}

enum tiering_region { TIERING_ANON, TIERING_RO, TIERING_FILE };

static const char * const tiering_names[] = {
	[TIERING_ANON] = "tiering", [TIERING_RO] = "tiering-ro",
	[TIERING_FILE] = "tiering-file",
};

static int run_tiering(size_t mib, size_t window_mib,
		       unsigned long long lookups, unsigned long long sweep,
		       unsigned int wpct, enum tiering_region kind)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), n;
	struct worker w[MAX_THREADS];
	size_t len = mib << 20;
	unsigned long long ops = 0;
	char *mem = kind == TIERING_FILE ? map_file_region(len) :
					   map_region(len);
	struct tiering t;
	struct placement pl;
	char more[256];
	double t0, secs;

	n = ncpu < MAX_THREADS ? ncpu : MAX_THREADS;
	t = (struct tiering){ .pages = len / psize,
			      .window = (window_mib << 20) / psize,
			      .per_sweep = sweep / n ? sweep / n : 1,
			      .todo = lookups / n, .wpct = wpct };
	t.warm = t.per_sweep;
	if (!t.window || t.window > t.pages) {
		fprintf(stderr, "tiering: bad window\n");
		return 2;
	}
	if (place_init(&pl, mem, t.pages)) {
		fprintf(stderr, "tiering: no memory for the sampler\n");
		return 2;
	}
	pthread_barrier_init(&t.measure, NULL, n + 1);
	/* Written once, like lookup tables built at start-up. */
	for (size_t i = 0; kind != TIERING_FILE && i < len; i += psize)
		memset(mem + i, (int)(i / psize), psize);
	/* tiering-ro: read-mostly from here on, as a table once built. */
	if (kind == TIERING_RO && mprotect(mem, len, PROT_READ)) {
		perror("mprotect");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		w[i] = (struct worker){ .cpu = i, .mem = mem, .len = len,
					.tiering = &t };
		pthread_create(&w[i].thread, NULL, lookup_loop, &w[i]);
	}
	/* Warm-up: one sweep, so the pages written at fill time have moved. */
	pthread_barrier_wait(&t.measure);
	measure_mark();
	t0 = now();
	place_run(&pl, w, n, &t);
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].thread, NULL);
		ops += w[i].ops;
	}
	secs = now() - t0;
	snprintf(more, sizeof(more),
		 "threads=%d window_mib=%zu sweeps=%.2f write_pct=%u "
		 "hot_node0_pct=%.1f place_samples=%d sample_stride=%d "
		 "promoted_seen=%llu demoted_seen=%llu churn_seen=%llu "
		 "sample_s=%.2f",
		 n, window_mib, (double)t.todo / t.per_sweep, wpct,
		 pl.samples ? 100 * pl.hot_node0 / pl.samples : 0.0,
		 pl.samples, SAMPLE_STRIDE, pl.promoted, pl.demoted, pl.churn,
		 pl.secs);
	report(kind == TIERING_ANON && wpct ? "tiering-write" :
	       tiering_names[kind], ops, secs, more);
	if (kind == TIERING_FILE)
		unlink(BENCH_FILE);
	free(pl.addr);
	free(pl.status);
	free(pl.node);
	free(pl.promoted_at);
	return 0;
}

/*
 * demote-ro: reclaim (kswapd and direct) demoting a read-only region that
 * stays in use, with NUMA balancing off. The locked filler cannot be
 * demoted itself, so what reclaim moves to node 1 to make room for it is
 * the region's cold part (the oldest pages on node 0's LRU);
 * move_pages() brings it back. Both migrations unmap read-only PTEs only.
 */
static long node0_free_mib(void)
{
	FILE *f = fopen("/sys/devices/system/node/node0/meminfo", "r");
	char line[128];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node 0 MemFree: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb >> 10;
}

static void *hot_loop(void *arg)
{
	struct worker *w = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (w->cpu + 1), sum = 0;
	const volatile uint64_t *p = (const volatile uint64_t *)w->mem;
	size_t words = w->len / 8;

	pin(w->cpu);
	while (!*w->stop) {
		for (int i = 0; i < 4096; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			sum += p[(x >> 11) % words];
		}
		w->ops += 4096;
	}
	return (void *)(uintptr_t)sum;
}

static int demote_ro(size_t mib, size_t hot_mib, int rounds)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), n = 0;
	size_t len = mib << 20, pages = len / psize;
	void **addr = calloc(pages, sizeof(*addr));
	int *node = calloc(pages, sizeof(*node));
	int *status = calloc(pages, sizeof(*status));
	unsigned long long ops = 0, demoted = 0, stuck = 0;
	struct worker w[MAX_THREADS];
	volatile int stop = 0;
	char *mem = map_region(len);
	char more[128];
	double t0, secs;

	if (!addr || !node || !status || hot_mib > mib) {
		fprintf(stderr, "demote-ro: bad arguments\n");
		return 2;
	}
	pin(0);
	for (size_t i = 0; i < pages; i++) {
		memset(mem + i * psize, (int)i, psize);
		addr[i] = mem + i * psize;
	}
	mprotect(mem, len, PROT_READ);
	for (int i = 1; i < ncpu && n < MAX_THREADS; i++, n++) {
		w[n] = (struct worker){ .cpu = i, .mem = mem,
					.len = hot_mib << 20, .stop = &stop };
		pthread_create(&w[n].thread, NULL, hot_loop, &w[n]);
	}
	measure_mark();
	t0 = now();
	for (int r = 0; r < rounds; r++) {
		/*
		 * Bound to node 0 and locked: reclaim there must demote about
		 * half of the cold part to make room (more: MemFree counts
		 * ZONE_DMA, which the stage reserves), and cannot take the
		 * filler instead. Much more risks the OOM killer.
		 */
		long fill = node0_free_mib() + (long)(mib - hot_mib) / 2;
		unsigned long node0 = 1;
		char *filler;
		long rc;

		if (fill <= 0 || syscall(SYS_set_mempolicy, MPOL_BIND, &node0,
					 8 * sizeof(node0) + 1)) {
			fprintf(stderr, "demote-ro: cannot bind the filler\n");
			return 2;
		}
		filler = mmap(NULL, (size_t)fill << 20, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED |
			      MAP_POPULATE, -1, 0);
		syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0);
		if (filler == MAP_FAILED) {
			perror("demote-ro: filler");
			return 2;
		}
		munmap(filler, (size_t)fill << 20);
		/* Where the region is now (no move): the pages demoted. */
		if (syscall(SYS_move_pages, 0, pages, addr, NULL, status, 0)) {
			perror("demote-ro: move_pages");
			return 2;
		}
		for (size_t i = 0; i < pages; i++) {
			demoted += status[i] == 1;
			node[i] = 0;
		}
		rc = syscall(SYS_move_pages, 0, pages, addr, node, status,
			     MPOL_MF_MOVE);
		if (rc < 0) {
			perror("demote-ro: move_pages");
			return 2;
		}
		stuck += rc;	/* pages move_pages() could not move */
	}
	secs = now() - t0;
	stop = 1;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].thread, NULL);
		ops += w[i].ops;
	}
	snprintf(more, sizeof(more),
		 "rounds=%d readers=%d hot_mib=%zu demoted=%llu not_moved=%llu",
		 rounds, n, hot_mib, demoted, stuck);
	report("demote-ro", ops, secs, more);
	free(addr);
	free(node);
	free(status);
	return 0;
}

/*
 * alloc-path, fault-path and unmap-path: the same loop of fresh anonymous
 * memory (mmap, first touch of every page, munmap); each times its part,
 * and reports pages per second.
 */
enum alloc_phase { PHASE_ALL, PHASE_FAULT, PHASE_UNMAP };

static int alloc_path(const char *scenario, enum alloc_phase phase,
		      size_t mib, int rounds)
{
	size_t len = mib << 20;
	unsigned long long ops = 0;
	double secs = 0, t0 = now(), t1;

	pin(0);
	for (int r = 0; r < rounds; r++) {
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			perror("mmap");
			return 2;
		}
		madvise(m, len, MADV_NOHUGEPAGE);
		t1 = now();
		for (size_t i = 0; i < len; i += psize, ops++)
			m[i] = 1;
		if (phase == PHASE_FAULT)
			secs += now() - t1;
		t1 = now();
		munmap(m, len);
		if (phase == PHASE_UNMAP)
			secs += now() - t1;
	}
	if (phase == PHASE_ALL)
		secs = now() - t0;
	report(scenario, ops, secs, "");
	return 0;
}

static int write_path(size_t mib, unsigned long long count)
{
	size_t len = mib << 20;
	char block[4096];
	int fd = open("/tmp/bench-write", O_RDWR | O_CREAT | O_TRUNC, 0600);
	double t0;

	if (fd < 0) {
		perror("/tmp/bench-write");
		return 2;
	}
	pin(0);
	memset(block, 0xa5, sizeof(block));
	t0 = now();
	for (unsigned long long i = 0; i < count; i++)
		if (pwrite(fd, block, sizeof(block),
			   (off_t)(i * sizeof(block) % len)) != sizeof(block)) {
			perror("pwrite");
			return 2;
		}
	report("write-path", count, now() - t0, "");
	close(fd);
	unlink("/tmp/bench-write");
	return 0;
}

int main(int argc, char **argv)
{
	psize = sysconf(_SC_PAGESIZE);
	if (argc >= 4 && !strcmp(argv[1], "migrate"))
		return migrate(strtoul(argv[2], NULL, 0), atoi(argv[3]));
	if (argc >= 7 && !strcmp(argv[1], "tiering"))
		return run_tiering(strtoul(argv[2], NULL, 0),
			       strtoul(argv[3], NULL, 0),
			       strtoull(argv[4], NULL, 0),
			       strtoull(argv[5], NULL, 0), atoi(argv[6]),
			       argc < 8 ? TIERING_ANON :
			       !strcmp(argv[7], "ro") ? TIERING_RO :
			       !strcmp(argv[7], "file") ? TIERING_FILE :
			       TIERING_ANON);
	if (argc >= 5 && !strcmp(argv[1], "demote-ro"))
		return demote_ro(strtoul(argv[2], NULL, 0),
				 strtoul(argv[3], NULL, 0), atoi(argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "alloc"))
		return alloc_path("alloc-path", PHASE_ALL,
				  strtoul(argv[2], NULL, 0), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "fault"))
		return alloc_path("fault-path", PHASE_FAULT,
				  strtoul(argv[2], NULL, 0), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "unmap"))
		return alloc_path("munmap-path", PHASE_UNMAP,
				  strtoul(argv[2], NULL, 0), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "write"))
		return write_path(strtoul(argv[2], NULL, 0),
				  strtoull(argv[3], NULL, 0));
	fprintf(stderr, "usage: %s SCENARIO ARGS...\n%s", argv[0],
		"  migrate MIB ROUNDS\n"
		"  tiering MIB WINDOW_MIB LOOKUPS SWEEP WPCT [ro|file]\n"
		"  demote-ro MIB HOT_MIB ROUNDS\n"
		"  alloc|fault|unmap MIB ROUNDS\n"
		"  write MIB COUNT\n");
	return 2;
}
