// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRC safety tests: a migration whose TLB flush MIGRC deferred must never
 * let a CPU read anything but the migrated data through a stale entry.
 *
 * Readers pinned to every CPU but 0 spin over a read-only anonymous region
 * and check every page against its expected content, so their TLB entries
 * for the old pages stay hot. CPU 0 migrates the region between NUMA nodes
 * 0 and 1 with move_pages() and then does what could expose a missed
 * flush: hand the old pages to another process, or change the data.
 *
 * On a MIGRC kernel each test also checks that migrc_pages_deferred grew,
 * so a test that stopped exercising deferral fails instead of passing.
 * With CONFIG_MIGRC_DEBUG, /sys/kernel/debug/migrc/break breaks one rule
 * on purpose; the test that covers the rule must then fail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)
#define SEED		0x6d69677263000000ULL	/* "migrc" */
#define MARKER		0x4c45414b4c45414bULL	/* "LEAKLEAK" */
#define NEWDATA		0x6e65776e65776e65ULL	/* "newnewne" */
#define BREAK_FILE	"/sys/kernel/debug/migrc/break"
#define MAX_READERS	64

struct reader {
	pthread_t thread;
	int cpu;
	unsigned long long words, errors, stale;
	struct region *r;
};

struct region {
	char *mem;
	size_t npages, psize;
	volatile int stop;
	/* Expected value of every word: SEED ^ page, or new after a write. */
	volatile uint64_t new_value;
	int written;
	int nreaders;
	struct reader readers[MAX_READERS];
};

static uint64_t expected(size_t page)
{
	return SEED ^ page;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Check every 8th word of every page. Before the writer published new data
 * only the original content is valid; once it did ("written" read after the
 * word), a reader must see the new value: the old one means a stale entry.
 */
static void *read_loop(void *arg)
{
	struct reader *rd = arg;
	struct region *r = rd->r;
	size_t words = r->psize / sizeof(uint64_t);

	pin(rd->cpu);
	while (!r->stop) {
		for (size_t p = 0; p < r->npages && !r->stop; p++) {
			const volatile uint64_t *w =
				(const volatile uint64_t *)(r->mem + p * r->psize);

			for (size_t i = 0; i < words; i += 8) {
				/* The flag first: if set, the word is new. */
				int written = __atomic_load_n(&r->written,
							      __ATOMIC_ACQUIRE);
				uint64_t v = w[i];

				rd->words++;
				if (v == expected(p) && !written)
					continue;
				if (v == r->new_value && r->new_value)
					continue;
				if (v == expected(p) && written) {
					rd->stale++;
					continue;
				}
				if (rd->errors++ < 3)
					fprintf(stderr, "# cpu%d: page %zu word %zu reads %#llx\n",
						rd->cpu, p, i, (unsigned long long)v);
			}
		}
	}
	return NULL;
}

static long vmstat(const char *name)
{
	char key[64];
	long val;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			fclose(f);
			return val;
		}
	}
	fclose(f);
	return -1;
}

static int have_migrc(void)
{
	return access("/sys/kernel/mm/migrc/enabled", F_OK) == 0;
}

/* The rules broken on purpose now (empty if none or no debug kernel). */
static void break_get(char *buf, size_t len)
{
	FILE *f = fopen(BREAK_FILE, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (!strcmp(buf, "none"))
		buf[0] = '\0';
}

static void break_set(const char *words)
{
	FILE *f = fopen(BREAK_FILE, "w");

	if (!f)
		return;
	fprintf(f, "%s\n", words[0] ? words : "none");
	fclose(f);
}

static long move_to(struct region *r, int node)
{
	void **pages = calloc(r->npages, sizeof(*pages));
	int *nodes = calloc(r->npages, sizeof(*nodes));
	int *status = calloc(r->npages, sizeof(*status));
	long moved = 0;

	for (size_t p = 0; p < r->npages; p++) {
		pages[p] = r->mem + p * r->psize;
		nodes[p] = node;
	}
	if (!syscall(SYS_move_pages, 0, r->npages, pages, nodes, status,
		     MPOL_MF_MOVE))
		for (size_t p = 0; p < r->npages; p++)
			moved += status[p] == node;
	free(pages);
	free(nodes);
	free(status);
	return moved;
}

FIXTURE(migrc)
{
	struct region r;
	long deferred0;
	char broken[128];
};

FIXTURE_SETUP(migrc)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct region *r = &self->r;

	if (ncpu < 2)
		SKIP(return, "needs 2 CPUs");
	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "needs NUMA node 1");
	memset(r, 0, sizeof(*r));
	pin(0);
	r->psize = sysconf(_SC_PAGESIZE);
	r->npages = 1024;	/* 4 MiB: two migration batches */
	r->mem = mmap(NULL, r->npages * r->psize, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(r->mem, MAP_FAILED);
	madvise(r->mem, r->npages * r->psize, MADV_NOHUGEPAGE);
	for (size_t p = 0; p < r->npages; p++) {
		uint64_t *w = (uint64_t *)(r->mem + p * r->psize);

		for (size_t i = 0; i < r->psize / sizeof(*w); i++)
			w[i] = expected(p);
	}
	ASSERT_EQ(mprotect(r->mem, r->npages * r->psize, PROT_READ), 0);
	ASSERT_EQ(move_to(r, 0), (long)r->npages);

	r->nreaders = ncpu - 1 < MAX_READERS ? ncpu - 1 : MAX_READERS;
	for (int i = 0; i < r->nreaders; i++) {
		r->readers[i].cpu = i + 1;
		r->readers[i].r = r;
		pthread_create(&r->readers[i].thread, NULL, read_loop,
			       &r->readers[i]);
	}
	usleep(200000);
	self->deferred0 = vmstat("migrc_pages_deferred");
	break_get(self->broken, sizeof(self->broken));
	if (self->broken[0])
		ksft_print_msg("rules broken on purpose: %s\n", self->broken);
}

FIXTURE_TEARDOWN(migrc)
{
	struct region *r = &self->r;

	r->stop = 1;
	for (int i = 0; i < r->nreaders; i++)
		pthread_join(r->readers[i].thread, NULL);
	break_set(self->broken);
	if (r->mem && r->mem != MAP_FAILED)
		munmap(r->mem, r->npages * r->psize);
}

/* Stop the readers and check what they saw and that MIGRC deferred. */
static void finish(struct __test_metadata *_metadata,
		   FIXTURE_DATA(migrc) *self, long migrated)
{
	struct region *r = &self->r;
	unsigned long long words = 0, errors = 0, stale = 0;
	long deferred = vmstat("migrc_pages_deferred") - self->deferred0;

	r->stop = 1;
	for (int i = 0; i < r->nreaders; i++) {
		pthread_join(r->readers[i].thread, NULL);
		words += r->readers[i].words;
		errors += r->readers[i].errors;
		stale += r->readers[i].stale;
	}
	r->nreaders = 0;
	ksft_print_msg("%ld pages migrated, %ld deferred, %llu words checked, %llu wrong, %llu stale\n",
		       migrated, have_migrc() ? deferred : 0L, words, errors,
		       stale);
	EXPECT_EQ(errors, 0);
	EXPECT_EQ(stale, 0);
	EXPECT_GT(words, 0);
	if (have_migrc())
		EXPECT_GT(deferred, 0);
}

/* 1. Ping-pong between the nodes: every read is the data. */
TEST_F(migrc, integrity)
{
	long migrated = 0;

	for (int round = 0; round < 16; round++)
		migrated += move_to(&self->r, (round & 1) ? 0 : 1);
	EXPECT_EQ(migrated, 16L * (long)self->r.npages);
	finish(_metadata, self, migrated);
}

/*
 * 2. The old pages go to another process at once, which fills them with a
 * marker: the readers must never see it (nor zeroes). reuse_first makes the
 * allocator hand out the pages with a pending flush first, so the other
 * process, on the CPU that freed them, gets exactly those. It is forked
 * before the migration (fork flushes the parent's TLB) and does not inherit
 * the region (it would share its pages, which are then not deferred).
 */
TEST_F(migrc, reuse_leak)
{
	size_t len = 8UL << 20;
	int go[2], status;
	long migrated;
	char aid[160];
	pid_t child;

	ASSERT_EQ(madvise(self->r.mem, self->r.npages * self->r.psize,
			  MADV_DONTFORK), 0);
	ASSERT_EQ(pipe(go), 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		unsigned long node0 = 1;
		char c;

		pin(0);
		syscall(SYS_set_mempolicy, MPOL_BIND, &node0, 8 * sizeof(node0));
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		for (int round = 0; round < 4; round++) {
			uint64_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m == MAP_FAILED)
				_exit(2);
			for (size_t i = 0; i < len / sizeof(*m); i++)
				m[i] = MARKER;
			usleep(100000);
			munmap(m, len);
		}
		_exit(0);
	}
	close(go[0]);
	usleep(100000);

	snprintf(aid, sizeof(aid), "%s reuse_first", self->broken);
	break_set(aid);
	migrated = move_to(&self->r, 1);
	EXPECT_EQ(migrated, (long)self->r.npages);
	ASSERT_EQ(write(go[1], "g", 1), 1);
	close(go[1]);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_EQ(WEXITSTATUS(status), 0);
	break_set(self->broken);
	finish(_metadata, self, migrated);
}

/*
 * 3. A write fault reuses the page in place: soft-dirty tracking
 * (clear_refs 4) write-protected the PTEs of the still writable mapping, the
 * migration deferred their flush, and the owner then writes new data. The
 * fault makes the PTE writable without any flush of its own, so MIGRC must
 * flush first (wp_page_reuse()); once the owner says so, readers must see
 * the new data, never the old copy.
 */
TEST_F(migrc, write_fault_reuse)
{
	struct region *r = &self->r;
	long migrated;
	int fd;

	ASSERT_EQ(mprotect(r->mem, r->npages * r->psize,
			   PROT_READ | PROT_WRITE), 0);
	fd = open("/proc/self/clear_refs", O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "4", 1), 1);
	close(fd);
	usleep(100000);
	migrated = move_to(r, 1);
	EXPECT_EQ(migrated, (long)r->npages);

	r->new_value = NEWDATA;
	for (size_t p = 0; p < r->npages; p++) {
		volatile uint64_t *w = (volatile uint64_t *)(r->mem + p * r->psize);

		for (size_t i = 0; i < r->psize / sizeof(uint64_t); i++)
			w[i] = NEWDATA;
	}
	__atomic_store_n(&r->written, 1, __ATOMIC_RELEASE);
	usleep(300000);
	finish(_metadata, self, migrated);
}

TEST_HARNESS_MAIN
