// SPDX-License-Identifier: GPL-2.0
/*
 * MIGRC safety tests: a migration whose TLB flush MIGRC deferred must never
 * let a CPU read anything but the current data through a stale entry, and
 * must never lose a write.
 *
 * Readers pinned to every CPU but 0 spin over a read-only anonymous region
 * and check every 8th word of every page, so their TLB entries for the old
 * pages stay hot. CPU 0 migrates the region between NUMA nodes 0 and 1 with
 * move_pages() and then does what could expose a missed flush: hand the old
 * pages to another process or to the kernel, or change the data.
 *
 * The data goes through phases: phase 0 is the seeded content, a test that
 * changes it declares the next value first and publishes the new phase once
 * every page holds it. A reader that sees phase k accepts the value of phase
 * k (or k + 1, being written); an older value is a stale read, anything else
 * a wrong one (another owner's data). Both fail the test.
 *
 * Between a migration and the end of a check nothing here may free heap
 * memory or change the mapping of this process otherwise: a heap trim
 * (munmap) flushes the whole mm and would hide a missed flush.
 *
 * On a MIGRC kernel every test checks that migrc_pages_deferred grew, so a
 * test that stopped exercising deferral fails instead of passing. With
 * CONFIG_MIGRC_DEBUG, /sys/kernel/debug/migrc/break breaks one rule on
 * purpose; the tests that cover the rule must then fail.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/iommufd.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"

/*
 * A test does a fixed amount of work (tries, rounds), not a fixed time:
 * under emulation on a busy host it may take several times as long as
 * unloaded, and a hang must still end it.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	600
/* The tests that wait for NUMA scans, reclaim or 1 GiB pages. */
#define LONG_TIMEOUT		1200

#define SEED		0x6d69677263000000ULL	/* "migrc" */
#define MARKER		0x4c45414b4c45414bULL	/* "LEAKLEAK" */
#define NEWDATA		0x6e65776e65776e65ULL	/* "newnewne" */
#define NEWER		0x7265776572776572ULL	/* "rewerwer" */
#define BREAK_FILE	"/sys/kernel/debug/migrc/break"
#define RULES_FILE	"/sys/kernel/debug/migrc/rules"
#define STATE_FILE	"/sys/kernel/debug/migrc/state"
#define STATS_FILE	"/sys/kernel/debug/migrc/stats"
#define ENABLED_FILE	"/sys/kernel/mm/migrc/enabled"
#define NPAGES		1024		/* 4 MiB: two migration batches */
#define MOVE_TRIES	6		/* move_pages() of a range, at most */
#define MOVE_PAUSE_US	5000		/* before the second, doubling */
#define MAX_READERS	64
#define MAX_PHASE	16		/* phases declared; racing tests try once each */
#define REUSE_BYTES	(8UL << 20)	/* what another owner fills per try */
#define LET_GO		(-1)		/* reuse(): drop what the last try filled */
#define REUSE_TRIES	8
#define WRITE_TRIES	4

struct region;

struct reader {
	pthread_t thread;
	int cpu;
	unsigned long long words, wrong, stale;
	bool unpinned;		/* it could not run on its CPU */
	struct region *r;
};

struct region {
	char *mem;
	size_t npages, psize;
	int node;			/* where the pages are now */
	volatile int stop;
	int phase;			/* every page holds value(phase) */
	unsigned char since[NPAGES];	/* the phase a page first changes in */
	int last;			/* a writer may be writing value(last) */
	volatile uint64_t value[MAX_PHASE + 1];	/* value[0] unused: seed */
	volatile size_t scan_lo, scan_hi;	/* the pages readers check */
	int hold;			/* readers: touch nothing for now */
	int idle;			/* readers holding, or not running */
	size_t word_lo;			/* from this word of each page on */
	int move_flags;			/* move_pages(): 0 is MPOL_MF_MOVE */
	int nreaders, ncpus;
	struct reader readers[MAX_READERS];
	/* move_pages() arguments, allocated once (see the top comment). */
	void **pages;
	int *nodes, *status;
};

static uint64_t expected(size_t page)
{
	return SEED ^ page;
}

static uint64_t phase_value(const struct region *r, int k, size_t page)
{
	return k >= r->since[page] ? r->value[k] : expected(page);
}

/*
 * A word the kernel is copying in (process_vm_writev(), /proc/self/mem)
 * may be seen half written: every byte old or new.
 */
static bool torn(uint64_t v, uint64_t old, uint64_t new)
{
	for (int b = 0; b < 64; b += 8)
		if (((v >> b) & 0xff) != ((old >> b) & 0xff) &&
		    ((v >> b) & 0xff) != ((new >> b) & 0xff))
			return false;
	return true;
}

/* Run the calling thread on @cpu only; false if that is not possible. */
static bool pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !sched_setaffinity(0, sizeof(set), &set);
}

/* A helper process ended by exit(0), not by a signal or an error. */
static bool exited_ok(int status)
{
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

/*
 * Classify a word that is not the value of phase @k, read before it. The
 * reader may have stalled since: any later phase up to the last declared
 * one is current data too, and so is a torn mix of two of them.
 */
static void odd_word(struct reader *rd, size_t p, size_t i, uint64_t v, int k)
{
	struct region *r = rd->r;
	int last;

	/* The word was read before: the declarations below are as new. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	last = __atomic_load_n(&r->last, __ATOMIC_ACQUIRE);
	for (int j = k + 1; j <= last; j++)
		if (v == phase_value(r, j, p) ||
		    torn(v, phase_value(r, j - 1, p), phase_value(r, j, p)))
			return;
	for (int j = 0; j < k; j++) {
		if (v == phase_value(r, j, p)) {
			if (rd->stale++ < 3)
				fprintf(stderr,
					"# cpu%d: page %zu word %zu still reads phase %d data %#llx (phase %d)\n",
					rd->cpu, p, i, j, (unsigned long long)v, k);
			return;
		}
	}
	if (rd->wrong++ < 3)
		fprintf(stderr, "# cpu%d: page %zu word %zu reads %#llx (phase %d)\n",
			rd->cpu, p, i, (unsigned long long)v, k);
}

/*
 * Whether hold_readers() asks the readers to touch nothing. Sequentially
 * consistent with the count of idle readers: a reader that leaves a hold
 * and a hold that counts it cannot both miss the other's store.
 */
static bool held(struct region *r)
{
	return __atomic_load_n(&r->hold, __ATOMIC_SEQ_CST);
}

static void *read_loop(void *arg)
{
	struct reader *rd = arg;
	struct region *r = rd->r;
	size_t words = r->psize / sizeof(uint64_t);

	/* On CPU 0 with the migration it would hunt for nothing. */
	if (!pin(rd->cpu)) {
		rd->unpinned = true;
		__atomic_add_fetch(&r->idle, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	while (!r->stop) {
		if (held(r)) {
			__atomic_add_fetch(&r->idle, 1, __ATOMIC_SEQ_CST);
			while (held(r) && !r->stop)
				;
			__atomic_sub_fetch(&r->idle, 1, __ATOMIC_SEQ_CST);
		}
		for (size_t p = r->scan_lo;
		     p < r->scan_hi && !r->stop && !held(r); p++) {
			const volatile uint64_t *w =
				(const volatile uint64_t *)(r->mem + p * r->psize);

			for (size_t i = r->word_lo; i < words; i += 8) {
				/* The phase first: its data is in place. */
				int k = __atomic_load_n(&r->phase,
							__ATOMIC_ACQUIRE);
				uint64_t v = w[i];

				rd->words++;
				if (v != phase_value(r, k, p))
					odd_word(rd, p, i, v, k);
			}
		}
	}
	return NULL;
}

/* A reader on every CPU but 0 (the migrating one). */
static bool start_readers(struct region *r)
{
	int n = r->ncpus - 1 < MAX_READERS ? r->ncpus - 1 : MAX_READERS;

	r->stop = 0;
	r->hold = 0;
	r->idle = 0;
	for (r->nreaders = 0; r->nreaders < n; r->nreaders++) {
		struct reader *rd = &r->readers[r->nreaders];

		*rd = (struct reader){ .cpu = r->nreaders + 1, .r = r };
		if (pthread_create(&rd->thread, NULL, read_loop, rd))
			return false;
	}
	usleep(200000);	/* every reader has the whole region in its TLB */
	return true;
}

/*
 * Readers stop reading the region, and keep what their TLBs hold, until
 * resume_readers(). A reader whose TLB lost an entry faults on a migration
 * entry and sleeps holding the VMA's lock until the migration is done:
 * held, none does, and a change in the middle of a migration gets that
 * lock at once. False if a reader did not stop within 10 s.
 */
static bool hold_readers(struct region *r)
{
	__atomic_store_n(&r->hold, 1, __ATOMIC_SEQ_CST);
	for (int ms = 0; ms < 10000; ms++) {
		if (__atomic_load_n(&r->idle, __ATOMIC_SEQ_CST) >= r->nreaders)
			return true;
		usleep(1000);
	}
	return false;
}

static void resume_readers(struct region *r)
{
	__atomic_store_n(&r->hold, 0, __ATOMIC_SEQ_CST);
}

/* The stale words the readers have seen so far. */
static unsigned long long stale_words(struct region *r)
{
	unsigned long long n = 0;

	for (int i = 0; i < r->nreaders; i++)
		n += __atomic_load_n(&r->readers[i].stale, __ATOMIC_RELAXED);
	return n;
}

/* Announce the value of the next phase before writing it. */
static void declare(struct region *r, uint64_t v)
{
	if (r->last >= MAX_PHASE)
		return;
	r->value[r->last + 1] = v;
	__atomic_store_n(&r->last, r->last + 1, __ATOMIC_RELEASE);
	/* Order the writer's data stores after the declaration (arm64). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Every page holds the declared value now: readers must see it. */
static void publish(struct region *r)
{
	__atomic_store_n(&r->phase, r->last, __ATOMIC_RELEASE);
	usleep(100000);
}

/* Write the declared value into every word of the region, in place. */
static void write_all(struct region *r)
{
	uint64_t v = r->value[r->last];

	for (size_t p = 0; p < r->npages; p++) {
		volatile uint64_t *w = (volatile uint64_t *)(r->mem + p * r->psize);

		for (size_t i = 0; i < r->psize / sizeof(uint64_t); i++)
			w[i] = v;
	}
}

/*
 * Counters each test reports, read without malloc(): MIGRC's events
 * (migrc_*) from debugfs migrc/stats, which has them all, the others from
 * /proc/vmstat.
 */
enum { C_DEFERRED, C_SENT, C_WRITE, C_RANGE, C_BUSY, C_DEBUG, C_DECLINED,
	C_DECLINED_ARCH, C_NESTED, C_DEMOTED, C_REFUSED_PENDING, C_NUMA_PTES,
	C_UNPUBLISHED, C_DEFERRED_FILE, C_DEFERRED_SHMEM, C_FORCED_FILE,
	C_FORCED_FILE_RACE, C_REFUSED_FILE_WRITER, C_REFUSED_FILE_FS,
	C_COLD_WP, C_NUMA_WAITED, C_NUMA_TIMEOUT, C_PROMOTED, C_COLD_PAUSED,
	NCOUNTERS };
static const char * const counter_names[NCOUNTERS] = {
	"migrc_pages_deferred", "migrc_flushes_sent", "migrc_forced_write",
	"migrc_forced_range", "migrc_forced_src_busy", "migrc_debug_stale",
	"migrc_declined_debug", "migrc_declined_arch", "migrc_nested",
	"pgdemote_direct", "migrc_refused_flush_pending", "numa_pte_updates",
	"migrc_forced_unpublished", "migrc_deferred_file",
	"migrc_deferred_shmem", "migrc_forced_file", "migrc_forced_file_race",
	"migrc_refused_file_writer", "migrc_refused_file_fs",
	"migrc_cold_wrprotected", "migrc_numa_fault_waited",
	"migrc_numa_fault_wait_timeout", "pgpromote_success",
	"migrc_cold_skipped_reused",
};

/* Read @path into @buf (NUL-terminated; empty if it cannot be read). */
static void read_text(const char *path, char *buf, size_t size)
{
	ssize_t n = 0, got;
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		while (n < (ssize_t)size - 1 &&
		       (got = read(fd, buf + n, size - 1 - n)) > 0)
			n += got;
		close(fd);
	}
	buf[n] = '\0';
}

/* The value of the line "@name <value>" of @buf, 0 if there is none. */
static long counter_in(const char *buf, const char *name)
{
	size_t len = strlen(name);

	for (const char *s = buf; (s = strstr(s, name)); s += len)
		if ((s == buf || s[-1] == '\n') && s[len] == ' ')
			return atol(s + len + 1);
	return 0;
}

static void counters(long *c)
{
	static char vmstat[32768], stats[8192];

	read_text("/proc/vmstat", vmstat, sizeof(vmstat));
	read_text(STATS_FILE, stats, sizeof(stats));
	for (int i = 0; i < NCOUNTERS; i++)
		c[i] = counter_in(strncmp(counter_names[i], "migrc_", 6) ?
				  vmstat : stats, counter_names[i]);
}

/*
 * MIGRC's counters and knobs are in debugfs: mount it if nobody did. The
 * tests judge by the counters: without them, fail rather than pass blind.
 */
__attribute__((constructor)) static void mount_debugfs(void)
{
	if (access(ENABLED_FILE, F_OK) || !access(STATS_FILE, R_OK))
		return;
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(STATS_FILE, R_OK))
		ksft_exit_fail_msg("MIGRC is built in, but %s cannot be read\n",
				   STATS_FILE);
}

/* MIGRC is built in and switched on. */
static bool have_migrc(void)
{
	char c = '0';
	int fd = open(ENABLED_FILE, O_RDONLY);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/*
 * Whether a word of the break knob is a test aid (widens a window, breaks
 * no safety rule): the kernel lists its words in RULES_FILE, one per line,
 * "rule <name>" or "aid <name>".
 */
static bool is_test_aid(const char *word, size_t len)
{
	static char rules[2048];
	static ssize_t n = -1;

	if (n < 0) {
		int fd = open(RULES_FILE, O_RDONLY);

		n = fd < 0 ? 0 : read(fd, rules, sizeof(rules) - 1);
		if (fd >= 0)
			close(fd);
		rules[n > 0 ? n : 0] = '\0';
	}
	for (char *l = rules; *l; l += strcspn(l, "\n"), l += *l == '\n')
		if (!strncmp(l, "aid ", 4) && strcspn(l + 4, "\n") == len &&
		    !strncmp(l + 4, word, len))
			return true;
	return false;
}

/*
 * The rules broken on purpose now (empty if none or no debug kernel),
 * without the test aids a test that was killed may have left behind.
 */
static void break_get(char *buf, size_t len)
{
	int fd = open(BREAK_FILE, O_RDONLY);
	char raw[160], *out = buf;
	ssize_t n = fd < 0 ? 0 : read(fd, raw, sizeof(raw) - 1);

	if (fd >= 0)
		close(fd);
	raw[n > 0 ? n : 0] = '\0';
	buf[0] = '\0';
	for (char *w = raw; *w; ) {
		size_t wl = strcspn(w, "\n ");

		if (wl && !(wl == 4 && !strncmp(w, "none", 4)) &&
		    !is_test_aid(w, wl) &&
		    out + wl + 2 <= buf + len) {
			if (out != buf)
				*out++ = ' ';
			memcpy(out, w, wl);
			out += wl;
			*out = '\0';
		}
		w += wl;
		w += strspn(w, "\n ");
	}
}

static void break_set(const char *words)
{
	int fd = open(BREAK_FILE, O_WRONLY);

	if (!words[0])
		words = "none";
	if (fd < 0)
		return;
	if (write(fd, words, strlen(words)) < 0)
		perror("# " BREAK_FILE);
	close(fd);
}

/* Move @npages pages at @mem to @node; return how many are there now. */
static long move_range(struct region *r, char *mem, size_t npages, int node)
{
	long moved = 0;

	for (size_t p = 0; p < npages; p++) {
		r->pages[p] = mem + p * r->psize;
		r->nodes[p] = node;
	}
	/*
	 * A positive result counts pages that failed: status tells which.
	 * A page may be busy for a moment (-EBUSY, -EAGAIN: reclaim or
	 * compaction holds it isolated), or the small node 0 short of free
	 * pages until kswapd has caught up (-ENOMEM): ask again after a
	 * pause that doubles, MOVE_TRIES times at most; pages already there
	 * stay.
	 */
	for (int attempt = 0; attempt < MOVE_TRIES && moved < (long)npages;
	     attempt++) {
		if (attempt)
			usleep(MOVE_PAUSE_US << attempt);
		moved = 0;
		if (syscall(SYS_move_pages, 0, npages, r->pages, r->nodes,
			    r->status,
			    r->move_flags ? r->move_flags : MPOL_MF_MOVE) < 0)
			break;
		for (size_t p = 0; p < npages; p++)
			moved += r->status[p] == node;
	}
	return moved;
}

/* Say why the last move_range() left pages behind: the first status. */
static void unmoved(struct region *r, int attempt, long moved)
{
	for (size_t p = 0; p < r->npages; p++)
		if (r->status[p] != r->nodes[p]) {
			ksft_print_msg("move %d: %ld of %zu pages moved; page %zu: status %d\n",
				       attempt, moved, r->npages, p, r->status[p]);
			return;
		}
}

/*
 * Put a test's memory on @node before the test starts: all of it, or say
 * why not.
 */
static bool place(struct region *r, char *mem, int node)
{
	long moved = move_range(r, mem, r->npages, node);

	if (moved < (long)r->npages)
		unmoved(r, 0, moved);
	return moved == (long)r->npages;
}

/* Migrate the region to the other node. */
static long migrate(struct region *r)
{
	long moved = move_range(r, r->mem, r->npages, !r->node);

	r->node = !r->node;
	return moved;
}

static int bind_node(int node)
{
	unsigned long mask = 1UL << node;

	return syscall(SYS_set_mempolicy, MPOL_BIND, &mask, 8 * sizeof(mask));
}

/*
 * A number from a sysfs or procfs file (-1 if unreadable); a boolean one
 * ("true", "N"...) reads as 1 or 0.
 */
static long read_long(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	return isalpha((unsigned char)buf[0]) ? !!strchr("tTyY", buf[0]) :
						atol(buf);
}

static bool write_long(const char *path, long v)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%ld", v);
	int fd = open(path, O_WRONLY);
	bool ok = fd >= 0 && write(fd, buf, len) == len;

	if (fd >= 0)
		close(fd);
	return ok;
}

static char *map_anon(size_t len)
{
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m != MAP_FAILED)
		madvise(m, len, MADV_NOHUGEPAGE);
	return m;
}

#define NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"
#define NUMA_SCAN_DIR	"/sys/kernel/debug/sched/numa_balancing/"
#define NR_NUMA_SCAN_KNOBS	4

/*
 * numa_scan_writable's scan tunables. The period cannot go below
 * 1000 ms / (2560 / scan_size_mb) (task_scan_min()): 6 ms for 16 MB, which
 * still covers the test's VMA in one scan. A scan delay of 100 ms resets
 * the VMAs' pid filter every 400 ms.
 */
static const struct {
	const char *path;
	long value;
} numa_scan_knobs[NR_NUMA_SCAN_KNOBS] = {
	{ NUMA_SCAN_DIR "scan_size_mb", 16 },
	{ NUMA_SCAN_DIR "scan_delay_ms", 100 },
	{ NUMA_SCAN_DIR "scan_period_min_ms", 10 },
	{ NUMA_SCAN_DIR "scan_period_max_ms", 10 },
};

#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"
#define MIN_FREE	"/proc/sys/vm/min_free_kbytes"
#define COMPACT_UNEVICTABLE "/proc/sys/vm/compact_unevictable_allowed"
#define MEMORY_TIERS	"/sys/devices/virtual/memory_tiering"

FIXTURE(migrc)
{
	struct region r;
	long c0[NCOUNTERS];
	char broken[128];
	char numa_balancing;	/* to restore; 0 when not changed */
	long min_free, demotion; /* nested_reclaim's sysctls; -1: untouched */
	long compact_unevictable; /* write_other_mm's; -1 too */
	long numa_scan[NR_NUMA_SCAN_KNOBS]; /* numa_scan_writable's; -1 too */
};

FIXTURE_SETUP(migrc)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct region *r = &self->r;
	int fd;

	/* First: teardown restores these. */
	break_get(self->broken, sizeof(self->broken));
	self->min_free = -1;
	self->demotion = -1;
	self->compact_unevictable = -1;
	for (size_t i = 0; i < NR_NUMA_SCAN_KNOBS; i++)
		self->numa_scan[i] = -1;
	/* NUMA balancing's scans flush and migrate the region themselves. */
	self->numa_balancing = 0;
	fd = open(NUMA_BALANCING, O_RDWR);
	if (fd >= 0) {
		if (read(fd, &self->numa_balancing, 1) != 1 ||
		    self->numa_balancing == '0' ||
		    pwrite(fd, "0", 1, 0) != 1)
			self->numa_balancing = 0;
		close(fd);
	}
	memset(r, 0, sizeof(*r));
	memset(r->since, 1, sizeof(r->since));
	r->scan_hi = NPAGES;
	r->ncpus = ncpu;
	if (ncpu < 2)
		SKIP(return, "needs 2 CPUs");
	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "needs NUMA node 1");
	ASSERT_TRUE(pin(0));
	r->psize = sysconf(_SC_PAGESIZE);
	r->npages = NPAGES;
	r->pages = calloc(NPAGES, sizeof(*r->pages));
	r->nodes = calloc(NPAGES, sizeof(*r->nodes));
	r->status = calloc(NPAGES, sizeof(*r->status));
	ASSERT_TRUE(r->pages && r->nodes && r->status);
	r->mem = map_anon(r->npages * r->psize);
	ASSERT_NE(r->mem, MAP_FAILED);
	for (size_t p = 0; p < r->npages; p++) {
		uint64_t *w = (uint64_t *)(r->mem + p * r->psize);

		for (size_t i = 0; i < r->psize / sizeof(*w); i++)
			w[i] = expected(p);
	}
	ASSERT_EQ(mprotect(r->mem, r->npages * r->psize, PROT_READ), 0);
	r->node = 0;
	ASSERT_TRUE(place(r, r->mem, 0));
	ASSERT_TRUE(start_readers(r));
	counters(self->c0);
	if (self->broken[0])
		ksft_print_msg("rules broken on purpose: %s\n", self->broken);
}

/*
 * After fork() every private page of this process is shared copy-on-write
 * with the child: the first write to one later is a fault that clears the
 * PTE with a flush of the whole mm's CPUs, and allocates. Take those
 * faults now, before the first migration, for what the test writes
 * between a migration and its check (the readers took theirs already).
 */
static void unshare_after_fork(FIXTURE_DATA(migrc) *self)
{
	volatile char *b = (volatile char *)self;
	struct region *r = &self->r;

	for (size_t i = 0; i < sizeof(*self); i += r->psize)
		b[i] = b[i];
	b[sizeof(*self) - 1] = b[sizeof(*self) - 1];
	memset(r->pages, 0, NPAGES * sizeof(*r->pages));
	memset(r->nodes, 0, NPAGES * sizeof(*r->nodes));
	memset(r->status, 0, NPAGES * sizeof(*r->status));
	usleep(100000);
}

static void stop_readers(struct region *r, unsigned long long *sum)
{
	r->stop = 1;
	for (int i = 0; i < r->nreaders; i++) {
		pthread_join(r->readers[i].thread, NULL);
		sum[0] += r->readers[i].words;
		sum[1] += r->readers[i].wrong;
		sum[2] += r->readers[i].stale;
		sum[3] += r->readers[i].unpinned;
	}
	r->nreaders = 0;
}

FIXTURE_TEARDOWN(migrc)
{
	unsigned long long sum[4] = { 0 };
	int fd;

	stop_readers(&self->r, sum);
	break_set(self->broken);
	for (size_t i = 0; i < NR_NUMA_SCAN_KNOBS; i++)
		if (self->numa_scan[i] >= 0)
			write_long(numa_scan_knobs[i].path, self->numa_scan[i]);
	if (self->min_free >= 0)
		write_long(MIN_FREE, self->min_free);
	if (self->demotion >= 0)
		write_long(DEMOTION, self->demotion);
	if (self->compact_unevictable >= 0)
		write_long(COMPACT_UNEVICTABLE, self->compact_unevictable);
	fd = self->numa_balancing ? open(NUMA_BALANCING, O_WRONLY) : -1;
	if (fd >= 0) {
		if (write(fd, &self->numa_balancing, 1) != 1)
			perror("# " NUMA_BALANCING);
		close(fd);
	}
	if (self->r.mem && self->r.mem != MAP_FAILED)
		munmap(self->r.mem, self->r.npages * self->r.psize);
}

/*
 * Stop the readers, report, and check what they saw. Unless the test says
 * no deferral was possible, a MIGRC kernel must have deferred pages.
 */
static void finish(struct __test_metadata *_metadata,
		   FIXTURE_DATA(migrc) *self, long migrated, bool want_deferred)
{
	unsigned long long sum[4] = { 0 };
	long c[NCOUNTERS];
	bool migrc = have_migrc();

	stop_readers(&self->r, sum);
	counters(c);
	for (int i = 0; i < NCOUNTERS; i++)
		c[i] -= self->c0[i];
	ksft_print_msg("%ld pages migrated, %ld deferred, %ld flushes sent\n",
		       migrated, c[C_DEFERRED], c[C_SENT]);
	ksft_print_msg("forced: %ld write, %ld range, %ld busy source\n",
		       c[C_WRITE], c[C_RANGE], c[C_BUSY]);
	ksft_print_msg("%llu words checked, %llu wrong, %llu stale\n",
		       sum[0], sum[1], sum[2]);
	EXPECT_EQ(sum[1], 0ULL);
	EXPECT_EQ(sum[2], 0ULL);
	EXPECT_GT(sum[0], 0ULL);
	EXPECT_EQ(sum[3], 0ULL);	/* a reader could not leave CPU 0 */
	/* Declined for a debug option that writes freed pages: legitimate. */
	if (migrc && c[C_DECLINED])
		ksft_print_msg("deferral declined %ld times (%s)\n", c[C_DECLINED],
			       "init_on_free, poisoning, debug_pagealloc, KASAN tags");
	/*
	 * Architectures that cannot defer (arm64: broadcast TLBI) decline
	 * every read-only batch: the data must still be right.
	 */
	else if (migrc && c[C_DECLINED_ARCH] && !c[C_DEFERRED])
		ksft_print_msg("the architecture declined %ld batches: nothing deferred\n",
			       c[C_DECLINED_ARCH]);
	else if (migrc && want_deferred)
		EXPECT_GT(c[C_DEFERRED], 0);
	/* MIGRC_DEBUG's per-page check at the allocator exits. */
	if (!self->broken[0])
		EXPECT_EQ(c[C_DEBUG], 0);
}

/* 1. Integrity: ping-pong between the nodes, every read is the data. */
TEST_F(migrc, integrity)
{
	long migrated = 0;

	for (int round = 0; round < 16; round++)
		migrated += migrate(&self->r);
	EXPECT_EQ(migrated, 16L * (long)self->r.npages);
	finish(_metadata, self, migrated, true);
}

/*
 * Zaps keep deferral: munmap() and MADV_DONTNEED take their gather out of
 * the mm's count of pending write protections and count it again after
 * their flush (migrc_tlb_no_writable(), migrc_tlb_finish()). If that count
 * did not balance, every later read-only migration of the mm would be
 * refused for good: after each zap of a scratch mapping, a migration of
 * the read-only region must still defer, and none may be refused for a
 * pending flush.
 */
TEST_F(migrc, zap_keeps_deferral)
{
	size_t len = 16 * self->r.psize;
	long migrated = 0;

	if (!have_migrc())
		SKIP(return, "MIGRC is not built in or switched off");
	for (int round = 0; round < 8; round++) {
		long c0[NCOUNTERS], c1[NCOUNTERS];
		char *scratch = map_anon(len);

		ASSERT_NE(scratch, MAP_FAILED);
		memset(scratch, round + 1, len);
		if (round & 1)
			ASSERT_EQ(madvise(scratch, len, MADV_DONTNEED), 0);
		ASSERT_EQ(munmap(scratch, len), 0);
		counters(c0);
		migrated += migrate(&self->r);
		counters(c1);
		EXPECT_EQ(c1[C_REFUSED_PENDING], c0[C_REFUSED_PENDING]);
		/* An arch or debug option that declines defers nothing. */
		if (c1[C_DECLINED] == c0[C_DECLINED] &&
		    c1[C_DECLINED_ARCH] == c0[C_DECLINED_ARCH])
			EXPECT_GT(c1[C_DEFERRED], c0[C_DEFERRED]);
	}
	finish(_metadata, self, migrated, true);
}

/*
 * Reuse: after each migration the old pages go at once to a new owner,
 * which fills them with MARKER; readers must never see it (nor zeroes).
 * reuse_first makes the allocator hand out pages with a pending flush
 * before clean ones, so that the owner, bound to the node the pages left
 * and running on the CPU that freed them, gets exactly those. A reader's
 * stale entries may be lost before that (e.g. a kworker ran on its CPU and
 * the return to the mm flushed); REUSE_TRIES tries make a broken kernel
 * show up anyway.
 */
static long reuse_tries(struct __test_metadata *_metadata,
			FIXTURE_DATA(migrc) *self,
			void (*reuse)(void *ctx, int node), void *ctx)
{
	char aid[160];
	long migrated = 0;

	snprintf(aid, sizeof(aid), "%s reuse_first", self->broken);
	break_set(aid);
	for (int t = 0; t < REUSE_TRIES; t++) {
		int from = self->r.node;
		long moved;

		/*
		 * The region goes back where the last try filled: empty it
		 * first, or the small node 0 may have no room for the region.
		 */
		if (t)
			reuse(ctx, LET_GO);
		moved = migrate(&self->r);
		if (moved < (long)self->r.npages)
			unmoved(&self->r, t, moved);
		migrated += moved;
		reuse(ctx, from);
		usleep(30000);
	}
	break_set(self->broken);
	EXPECT_EQ(migrated, REUSE_TRIES * (long)self->r.npages);
	return migrated;
}

/*
 * Another process, forked before the first migration (fork() flushes this
 * mm): it runs @loop, which reads 64-bit commands from @cmd until EOF and
 * answers each on @ack, after one "ready" byte.
 */
struct helper {
	pid_t pid;
	int cmd, ack;
};

static bool start_helper(struct helper *h, struct region *r,
			 void (*loop)(struct region *r, pid_t parent, int cmd,
				      int ack))
{
	int cmd[2], ack[2];
	pid_t parent = getpid();
	char ready;

	if (pipe(cmd) || pipe(ack))
		return false;
	h->pid = fork();
	if (h->pid < 0)
		return false;
	if (h->pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		loop(r, parent, cmd[0], ack[1]);
		_exit(0);
	}
	close(cmd[0]);
	close(ack[1]);
	h->cmd = cmd[1];
	h->ack = ack[0];
	return read(h->ack, &ready, 1) == 1;
}

/* Send one command and wait for its answer. */
static void helper_do(struct helper *h, uint64_t command)
{
	char c;

	if (write(h->cmd, &command, sizeof(command)) != sizeof(command) ||
	    read(h->ack, &c, 1) != 1)
		fprintf(stderr, "# the helper process failed\n");
}

/* End it: whether it exited cleanly. */
static bool stop_helper(struct helper *h)
{
	int status = 0;

	close(h->cmd);
	if (waitpid(h->pid, &status, 0) != h->pid)
		status = -1;
	close(h->ack);
	return exited_ok(status);
}

/* reuse_leak's helper: fills fresh memory on each node it is sent (LET_GO: none). */
static void filler_loop(struct region *r, pid_t parent, int cmd, int ack)
{
	uint64_t *m = NULL, node;

	pin(0);
	if (write(ack, "r", 1) != 1)
		_exit(1);
	while (read(cmd, &node, sizeof(node)) == sizeof(node)) {
		if (m)
			munmap(m, REUSE_BYTES);
		m = NULL;
		if (node != (uint64_t)LET_GO) {
			if (bind_node(node))
				_exit(2);
			m = mmap(NULL, REUSE_BYTES, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				_exit(3);
			for (size_t i = 0; i < REUSE_BYTES / sizeof(*m); i++)
				m[i] = MARKER;
		}
		if (write(ack, "d", 1) != 1)
			_exit(4);
	}
	_exit(0);
}

static void filler_reuse(void *ctx, int node)
{
	helper_do(ctx, node);
}

/*
 * 2. Reuse leak: the new owner is another process. It is forked before
 * the first migration (fork flushes this mm's TLB) and does not inherit
 * the region (shared pages would not be deferred).
 */
TEST_F(migrc, reuse_leak)
{
	struct helper f;
	long migrated;

	ASSERT_EQ(madvise(self->r.mem, self->r.npages * self->r.psize,
			  MADV_DONTFORK), 0);
	ASSERT_TRUE(start_helper(&f, &self->r, filler_loop));
	unshare_after_fork(self);
	migrated = reuse_tries(_metadata, self, filler_reuse, &f);
	EXPECT_TRUE(stop_helper(&f));
	finish(_metadata, self, migrated, true);
}

struct page_cache_fill {
	int fd;
	const char *buf;
	size_t len;
};

static void page_cache_reuse(void *ctx, int node)
{
	struct page_cache_fill *pc = ctx;

	if (ftruncate(pc->fd, 0))
		fprintf(stderr, "# cannot reset the page cache file\n");
	if (node == LET_GO)
		return;
	if (bind_node(node))
		fprintf(stderr, "# cannot bind to node %d\n", node);
	for (size_t off = 0; off < REUSE_BYTES; off += pc->len)
		if (pwrite(pc->fd, pc->buf, pc->len, off) != (ssize_t)pc->len)
			fprintf(stderr, "# page cache write failed\n");
	syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0);
}

/*
 * 3. Kernel-side reuse: the new owner is the page cache. write() makes the
 * kernel allocate folios for a memfd and copy MARKER into them.
 */
TEST_F(migrc, kernel_reuse)
{
	struct page_cache_fill pc = { .len = 64 << 10 };
	uint64_t *buf = malloc(pc.len);
	long migrated;

	ASSERT_NE(buf, NULL);
	for (size_t i = 0; i < pc.len / sizeof(*buf); i++)
		buf[i] = MARKER;
	pc.buf = (const char *)buf;
	pc.fd = memfd_create("migrc-page-cache", 0);
	ASSERT_GE(pc.fd, 0);
	migrated = reuse_tries(_metadata, self, page_cache_reuse, &pc);
	finish(_metadata, self, migrated, true);
	close(pc.fd);
	free(buf);
}

/*
 * Writes in place: migrate, then change the data by @write, WRITE_TRIES
 * times with alternating values, each preceded by @prepare. A reader CPU
 * loses its stale entries whenever it flushes on its own (a kernel thread
 * ran there and the return to this mm caught up with its tlb_gen), so one
 * try may not expose a missed flush; four do.
 */
static long write_tries(struct __test_metadata *_metadata,
			FIXTURE_DATA(migrc) *self,
			void (*prepare)(struct region *r, void *ctx),
			void (*write)(struct region *r, void *ctx), void *ctx)
{
	static const uint64_t values[] = { NEWDATA, NEWER };
	struct region *r = &self->r;
	long migrated = 0;

	for (int t = 0; t < WRITE_TRIES; t++) {
		if (prepare)
			prepare(r, ctx);
		migrated += migrate(r);
		declare(r, values[t & 1]);
		write(r, ctx);
		publish(r);
	}
	EXPECT_EQ(migrated, WRITE_TRIES * (long)r->npages);
	return migrated;
}

/* The /proc/self/pagemap entry of the page at addr (0 if unreadable). */
static uint64_t pagemap_entry(int pagemap, const void *addr, size_t psize)
{
	uint64_t e = 0;

	if (pread(pagemap, &e, sizeof(e), (uintptr_t)addr / psize * sizeof(e)) !=
	    sizeof(e))
		return 0;
	return e;
}

/*
 * Whether clear_refs 4 write-protects PTEs (CONFIG_MEM_SOFT_DIRTY, which
 * x86 has and arm64 has not): a page just written is soft-dirty in pagemap.
 */

static bool have_soft_dirty(struct region *r)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e;

	if (fd < 0)
		return false;
	*(volatile char *)r->mem = r->mem[0];	/* a write: soft-dirty */
	e = pagemap_entry(fd, r->mem, r->psize);
	close(fd);
	return e & (1ULL << 55);
}

/* Soft-dirty tracking: write-protect every PTE of this process. */
static void clear_soft_dirty(struct region *r, void *ctx)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd < 0 || write(fd, "4", 1) != 1)
		perror("# clear_refs");
	if (fd >= 0)
		close(fd);
	usleep(50000);
}

static void write_in_place(struct region *r, void *ctx)
{
	write_all(r);
}

/*
 * 4. Write fault reuse: soft-dirty tracking (clear_refs 4) write-protected
 * the PTEs of the writable region, the migration deferred their flush, and
 * the owner then writes in place: do_wp_page() reuses the exclusive page
 * and makes the PTE writable without a flush of its own.
 */
TEST_F(migrc, write_fault_reuse)
{
	struct region *r = &self->r;
	long migrated;

	ASSERT_EQ(mprotect(r->mem, r->npages * r->psize,
			   PROT_READ | PROT_WRITE), 0);
	if (!have_soft_dirty(r))
		SKIP(return, "no soft-dirty tracking to write-protect the PTEs");
	migrated = write_tries(_metadata, self, clear_soft_dirty,
			       write_in_place, NULL);
	finish(_metadata, self, migrated, true);
}

/*
 * write_other_mm's helper: a page of its own, write-protected by soft-dirty
 * tracking and written in place on each command (a write-fault reuse).
 * clear_refs write-protects every page of the helper: all are locked, so
 * that no background migration (reclaim's demotion, compaction: see
 * write_other_mm) defers one and the helper's write rightly forces a flush.
 */
static void wp_writer_loop(struct region *r, pid_t parent, int cmd, int ack)
{
	uint64_t *m, n;
	int fd;

	pin(0);
	/* Locked as they are now and as they fault in, nothing populated. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT))
		_exit(6);
	m = mmap(NULL, r->psize, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		_exit(3);
	m[0] = 1;
	/*
	 * fork() copied this process's tlb_flush_batched, with the unflushed
	 * unmaps of the fixture's migration: a protection change flushes
	 * them, so that this mm has nothing of its own pending.
	 */
	if (mprotect(m, r->psize, PROT_READ) ||
	    mprotect(m, r->psize, PROT_READ | PROT_WRITE))
		_exit(5);
	if (write(ack, "r", 1) != 1)
		_exit(1);
	while (read(cmd, &n, sizeof(n)) == sizeof(n)) {
		fd = open("/proc/self/clear_refs", O_WRONLY);
		if (fd < 0 || write(fd, "4", 1) != 1)
			_exit(2);
		close(fd);
		m[0] = n;	/* do_wp_page() reuses the page */
		if (write(ack, "d", 1) != 1)
			_exit(4);
	}
	_exit(0);
}

/*
 * Whether a deferred flush is pending now: MIGRC's latest generation is not
 * retired yet (/sys/kernel/debug/migrc/state).
 */
static bool flush_deferred_now(void)
{
	long long latest = 0, retired = 0;
	char buf[128] = "";
	int fd = open(STATE_FILE, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0 ||
	    sscanf(buf, "latest %lld retired %lld", &latest, &retired) != 2)
		return false;
	return latest > retired;
}

#define TRACING_DIR	"/sys/kernel/tracing"
#define FLUSH_EVENT	TRACING_DIR "/events/migrc/migrc_flush"

static bool write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	bool ok = fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s);

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * Record the forced write flushes MIGRC sends in @pid's context (trace
 * event migrc:migrc_flush, reason forced_write, sent to some CPU): the
 * counter of debugfs counts every process's. The event's own filter picks
 * the pid: set_event_pid would patch the scheduler's tracepoints, run on
 * every CPU all the time, and enabling one event patches only its own.
 */
static bool forced_trace_start(pid_t pid)
{
	char buf[96];

	mount("none", TRACING_DIR, "tracefs", 0, NULL);
	snprintf(buf, sizeof(buf),
		 "reason == \"forced_write\" && cpus > 0 && common_pid == %d",
		 pid);
	return write_str(TRACING_DIR "/tracing_on", "0") &&
	       write_str(FLUSH_EVENT "/filter", buf) &&
	       write_str(FLUSH_EVENT "/enable", "1") &&
	       write_str(TRACING_DIR "/trace", "") &&
	       write_str(TRACING_DIR "/tracing_on", "1");
}

/* The flushes recorded since the last call, which are then forgotten. */
static long forced_trace_take(void)
{
	FILE *f = fopen(TRACING_DIR "/trace", "r");
	char line[512];
	long n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += line[0] != '#' && strstr(line, " migrc_flush: ");
	if (f)
		fclose(f);
	write_str(TRACING_DIR "/trace", "");
	return n;
}

static void forced_trace_stop(void)
{
	write_str(FLUSH_EVENT "/enable", "0");
	write_str(FLUSH_EVENT "/filter", "0");
}

/*
 * 4b. A write in another mm: while this process's flush is deferred, a
 * process with no deferred migration of its own write-faults on its page
 * (reuse). Only the writer's CPUs could cache a stale translation of the
 * page it writes, so nothing is flushed for it. A try counts only if the
 * flush was still deferred after the helper wrote (generations are retired
 * in order, so it was deferred while the helper wrote): a kernel that
 * flushed every deferred migration on any write would have retired it.
 * The flushes are the helper's (trace event migrc_flush in its context):
 * another process may write to a page of its own that a background
 * migration deferred meanwhile, and rightly force a flush. The helper's
 * own pages are locked, and compaction may not move locked pages while
 * the test runs, so that no background migration reaches them.
 */
TEST_F(migrc, write_other_mm)
{
	long c0[NCOUNTERS], c1[NCOUNTERS], migrated = 0, forced = 0;
	struct region *r = &self->r;
	int deferred = 0;
	struct helper h;
	bool traced;

	ASSERT_EQ(mprotect(r->mem, r->npages * r->psize,
			   PROT_READ | PROT_WRITE), 0);
	if (!have_soft_dirty(r))
		SKIP(return, "no soft-dirty tracking to write-protect the PTEs");
	ASSERT_EQ(mprotect(r->mem, r->npages * r->psize, PROT_READ), 0);
	/* The helper must not share the region's pages (they would be its). */
	ASSERT_EQ(madvise(r->mem, r->npages * r->psize, MADV_DONTFORK), 0);
	self->compact_unevictable = read_long(COMPACT_UNEVICTABLE);
	if (self->compact_unevictable > 0)
		ASSERT_TRUE(write_long(COMPACT_UNEVICTABLE, 0));
	ASSERT_TRUE(start_helper(&h, r, wp_writer_loop));
	unshare_after_fork(self);
	/* The helper's own forced flushes; without tracefs, everyone's. */
	traced = forced_trace_start(h.pid);
	if (!traced)
		ksft_print_msg("no migrc:migrc_flush event: %s\n",
			       "counting every process's forced write flushes");
	for (int t = 0; t < WRITE_TRIES; t++) {
		long n;

		migrated += migrate(r);
		counters(c0);
		if (traced)
			forced_trace_take();
		helper_do(&h, t + 1);
		counters(c1);
		n = traced ? forced_trace_take() : c1[C_WRITE] - c0[C_WRITE];
		if (!flush_deferred_now())
			continue;
		deferred++;
		forced += n;
	}
	if (traced)
		forced_trace_stop();
	EXPECT_TRUE(stop_helper(&h));
	ksft_print_msg("forced write flushes: %ld for %d writes of another mm under a deferral\n",
		       forced, deferred);
	EXPECT_EQ(forced, 0);
	EXPECT_EQ(migrated, WRITE_TRIES * (long)r->npages);
	if (have_migrc())
		EXPECT_GT(deferred, 0);
	finish(_metadata, self, migrated, true);
}

struct proc_mem {
	int fd, failed;
	uint64_t *page;
};

static void write_proc_mem(struct region *r, void *ctx)
{
	struct proc_mem *pm = ctx;

	for (size_t i = 0; i < r->psize / sizeof(uint64_t); i++)
		pm->page[i] = r->value[r->last];
	for (size_t p = 0; p < r->npages; p++)
		if (pwrite(pm->fd, pm->page, r->psize,
			   (off_t)(uintptr_t)(r->mem + p * r->psize)) !=
		    (ssize_t)r->psize)
			pm->failed++;	/* else readers would blame MIGRC */
}

/*
 * 5. GUP for write with FOLL_FORCE: /proc/self/mem writes the read-only
 * region through the page itself; the PTE stays read-only.
 */
TEST_F(migrc, proc_mem_write)
{
	struct proc_mem pm = { .fd = open("/proc/self/mem", O_RDWR) };
	long migrated;

	pm.page = calloc(1, self->r.psize);	/* touched before migrating */
	ASSERT_GE(pm.fd, 0);
	ASSERT_NE(pm.page, NULL);
	migrated = write_tries(_metadata, self, NULL, write_proc_mem, &pm);
	EXPECT_EQ(pm.failed, 0);
	finish(_metadata, self, migrated, true);
	close(pm.fd);
	free(pm.page);
}

static void vm_writer_loop(struct region *r, pid_t parent, int cmd, int ack)
{
	uint64_t *src = calloc(1, r->psize), *back = calloc(1, r->psize);
	uint64_t v;

	if (!src || !back)
		_exit(1);
	/* Fault both in now, not while stale entries are being hunted. */
	src[0] = 1;
	back[0] = 1;
	if (write(ack, "r", 1) != 1)
		_exit(1);
	while (read(cmd, &v, sizeof(v)) == sizeof(v)) {
		for (size_t i = 0; i < r->psize / sizeof(*src); i++)
			src[i] = v;
		for (size_t p = 0; p < r->npages; p++) {
			struct iovec l = { src, r->psize };
			struct iovec rv = { r->mem + p * r->psize, r->psize };

			if (process_vm_writev(parent, &l, 1, &rv, 1, 0) !=
			    (ssize_t)r->psize)
				_exit(2);
			l.iov_base = back;
			if (process_vm_readv(parent, &l, 1, &rv, 1, 0) !=
			    (ssize_t)r->psize || memcmp(back, src, r->psize))
				_exit(3);
		}
		if (write(ack, "d", 1) != 1)
			_exit(4);
	}
	_exit(0);
}

static void write_from_other(struct region *r, void *ctx)
{
	helper_do(ctx, r->value[r->last]);
}

/*
 * 6. GUP for write by another process: process_vm_writev() into the
 * writable region whose PTEs soft-dirty tracking write-protected (the same
 * pin-for-write path as an O_DIRECT read into the range), checked with
 * process_vm_readv(). The writer is forked before the migrations: fork()
 * flushes this mm.
 */
TEST_F(migrc, vm_writev)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize;
	struct helper vw;
	long migrated;

	ASSERT_EQ(madvise(r->mem, len, MADV_DONTFORK), 0);
	ASSERT_EQ(mprotect(r->mem, len, PROT_READ | PROT_WRITE), 0);
	if (!have_soft_dirty(r))
		SKIP(return, "no soft-dirty tracking to write-protect the PTEs");
	ASSERT_TRUE(start_helper(&vw, r, vm_writer_loop));
	unshare_after_fork(self);
	migrated = write_tries(_metadata, self, clear_soft_dirty,
			       write_from_other, &vw);
	EXPECT_TRUE(stop_helper(&vw));
	finish(_metadata, self, migrated, true);
}

/*
 * 7. mprotect() upgrade: PROT_READ -> PROT_READ | PROT_WRITE maps the
 * exclusive pages writable at once, without a write fault. On x86 the
 * upgrade flushes by itself (pte_needs_flush(): _PAGE_RW changed); where
 * it does not, flush_tlb_batched_pending() in change_pte_range() must.
 */
TEST_F(migrc, mprotect_upgrade)
{
	struct region *r = &self->r;
	long migrated = migrate(r);

	EXPECT_EQ(migrated, (long)r->npages);
	ASSERT_EQ(mprotect(r->mem, r->npages * r->psize,
			   PROT_READ | PROT_WRITE), 0);
	declare(r, NEWDATA);
	write_all(r);
	publish(r);
	finish(_metadata, self, migrated, true);
}

/*
 * 8. userfaultfd write-unprotect: the region is write-protected with
 * UFFDIO_WRITEPROTECT, migrated, then unprotected, which maps the pages
 * writable again through change_pte_range() (as the mprotect() upgrade).
 */
TEST_F(migrc, uffd_unprotect)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { (unsigned long)r->mem, len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect wp = {
		.range = { (unsigned long)r->mem, len },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	long migrated;
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	ASSERT_EQ(ioctl(uffd, UFFDIO_API, &api), 0);
	ASSERT_EQ(mprotect(r->mem, len, PROT_READ | PROT_WRITE), 0);
	ASSERT_EQ(ioctl(uffd, UFFDIO_REGISTER, &reg), 0);
	ASSERT_EQ(ioctl(uffd, UFFDIO_WRITEPROTECT, &wp), 0);
	usleep(100000);
	migrated = migrate(r);
	EXPECT_EQ(migrated, (long)r->npages);
	wp.mode = 0;
	ASSERT_EQ(ioctl(uffd, UFFDIO_WRITEPROTECT, &wp), 0);
	declare(r, NEWDATA);
	write_all(r);
	publish(r);
	finish(_metadata, self, migrated, true);
	close(uffd);
}

/*
 * 9. fork() then COW: the child shares the migrated pages, the parent
 * makes the region writable and writes, which copies every page. fork
 * flushed this mm; the readers must see the parent's new data.
 */
TEST_F(migrc, fork_cow)
{
	struct region *r = &self->r;
	int go[2], status;
	long migrated = migrate(r);
	pid_t child;
	char c;

	EXPECT_EQ(migrated, (long)r->npages);
	ASSERT_EQ(pipe(go), 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		close(go[1]);
		/* Hold the old data until the parent wrote its copy. */
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (size_t p = 0; p < r->npages; p++)
			if (*(uint64_t *)(r->mem + p * r->psize) != expected(p))
				_exit(2);
		_exit(0);
	}
	close(go[0]);
	ASSERT_EQ(mprotect(r->mem, r->npages * r->psize,
			   PROT_READ | PROT_WRITE), 0);
	declare(r, NEWDATA);
	write_all(r);
	publish(r);
	ASSERT_EQ(write(go[1], "g", 1), 1);
	close(go[1]);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(exited_ok(status));
	finish(_metadata, self, migrated, true);
}

/*
 * 10. Range reuse: mmap(MAP_FIXED) puts a shared file mapping with new
 * contents over the migrated range, then mremap() moves an anonymous
 * region with other contents over it; each time the readers must see
 * only the new contents.
 */
TEST_F(migrc, range_reuse)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize;
	uint64_t *buf = malloc(len);
	char *spare = map_anon(len);
	int fd = memfd_create("migrc-range", 0);
	long migrated = 0;

	ASSERT_GE(fd, 0);
	ASSERT_NE(buf, NULL);
	ASSERT_NE(spare, MAP_FAILED);
	for (size_t i = 0; i < len / sizeof(*buf); i++)
		buf[i] = NEWDATA;
	ASSERT_EQ(pwrite(fd, buf, len, 0), (ssize_t)len);
	for (size_t i = 0; i < len / sizeof(*buf); i++)
		((uint64_t *)spare)[i] = NEWER;

	migrated += migrate(r);
	declare(r, NEWDATA);
	ASSERT_EQ(mmap(r->mem, len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0),
		  r->mem);
	publish(r);

	/* The anonymous region replaces the file, is migrated, replaced. */
	declare(r, NEWER);
	ASSERT_EQ(mprotect(spare, len, PROT_READ), 0);
	ASSERT_TRUE(place(r, spare, 0));
	r->node = 0;
	ASSERT_EQ(mremap(spare, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			 r->mem), r->mem);
	publish(r);
	migrated += migrate(r);
	declare(r, MARKER);
	for (size_t i = 0; i < len / sizeof(*buf); i++)
		buf[i] = MARKER;
	ASSERT_EQ(pwrite(fd, buf, len, 0), (ssize_t)len);
	ASSERT_EQ(mmap(r->mem, len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0),
		  r->mem);
	publish(r);
	EXPECT_EQ(migrated, 2L * (long)r->npages);
	finish(_metadata, self, migrated, true);
	close(fd);
	free(buf);
}

/*
 * 11. Range reuse while the PTEs are migration entries: a thread maps a
 * file over the last pages of the first migration batch (512 pages) once
 * pagemap shows them unmapped, while the copies are still running. The
 * zap finds no present PTE, so no flush of its own: only the read-only
 * batch's tlb_flush_batched mark (flush_tlb_batched_pending()) removes the
 * readers' stale entries of the old pages from the new mapping.
 */
struct replacer {
	struct region *r;
	size_t lo, hi;
	int fd, pagemap;
	volatile int go, done, hit, replaced, quit;
};

/* Whether the PTE of a page of @r is a swap-type (migration) entry. */
static bool migrating(int pagemap, struct region *r, size_t page)
{
	uint64_t e = pagemap_entry(pagemap, r->mem + page * r->psize, r->psize);

	return (e >> 62) & 1;
}

static void *replace_when_unmapped(void *arg)
{
	struct replacer *rp = arg;
	struct region *r = rp->r;

	pin(1);
	while (!rp->go)
		sched_yield();
	while (!rp->done && !rp->hit)
		rp->hit = migrating(rp->pagemap, r, rp->lo) &&
			  migrating(rp->pagemap, r, rp->hi - 1);
	if (mmap(r->mem + rp->lo * r->psize, (rp->hi - rp->lo) * r->psize,
		 PROT_READ, MAP_SHARED | MAP_FIXED, rp->fd,
		 rp->lo * r->psize) == MAP_FAILED)
		rp->hit = -1;
	__atomic_store_n(&r->phase, r->last, __ATOMIC_RELEASE);
	rp->replaced = 1;
	/*
	 * Stay until the check: an exiting thread leaves its CPU lazy, and
	 * the reader there would flush when it comes back.
	 */
	while (!rp->quit)
		usleep(1000);
	return NULL;
}

TEST_F(migrc, range_race)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize, lo = 512, hi = 512;
	struct replacer rp = { .r = r };
	uint64_t *buf = malloc(len);
	long migrated = 0;
	int tries = 0;
	pthread_t t[MAX_PHASE];

	ASSERT_NE(buf, NULL);
	rp.fd = memfd_create("migrc-race", 0);
	rp.pagemap = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_GE(rp.fd, 0);
	ASSERT_GE(rp.pagemap, 0);
	for (size_t i = 0; i < len / sizeof(*buf); i++)
		buf[i] = NEWDATA;
	ASSERT_EQ(pwrite(rp.fd, buf, len, 0), (ssize_t)len);
	memset(r->since, MAX_PHASE + 1, sizeof(r->since));
	/* 32 pages from the end of the first batch down, until one hits. */
	while (!rp.hit && tries < MAX_PHASE) {
		hi = lo;
		lo = hi - 32;
		memset(r->since + lo, r->last + 1, hi - lo);
		declare(r, NEWDATA);
		/*
		 * Readers check only these pages: one that faulted on
		 * another page's migration entry would sleep, and its CPU
		 * would flush on return to this mm (tlb_gen moved on).
		 */
		r->scan_lo = lo;
		r->scan_hi = hi;
		rp.lo = lo;
		rp.hi = hi;
		rp.go = 0;
		rp.done = 0;
		rp.replaced = 0;
		ASSERT_EQ(pthread_create(&t[tries], NULL, replace_when_unmapped,
					 &rp), 0);
		tries++;
		usleep(50000);
		rp.go = 1;
		migrated += migrate(r);
		rp.done = 1;
		while (!rp.replaced)
			usleep(1000);
		ASSERT_NE(rp.hit, -1);
		usleep(100000);
	}
	ksft_print_msg("pages %zu-%zu replaced while migration entries: %s (try %d)\n",
		       lo, hi - 1, rp.hit ? "yes" : "no", tries);
	/* Otherwise the test did not test the window. */
	EXPECT_EQ(rp.hit, 1);
	usleep(200000);
	finish(_metadata, self, migrated, true);
	rp.quit = 1;
	for (int i = 0; i < tries; i++)
		pthread_join(t[i], NULL);
	close(rp.fd);
	close(rp.pagemap);
	free(buf);
}

/*
 * 11b. The window between unmap and publication. With the test aid
 * publish_hold, a migration sleeps 50 ms once every folio of a batch is
 * unmapped, before it publishes the read-only batch: until then the mm
 * counts the batch as unpublished, and its generation does not cover it.
 * A thread replaces 32 pages of the first batch in that window (once
 * pagemap shows the first and the last page of the batch unmapped);
 * readers on the other CPUs check those pages afterwards. The zap finds
 * migration entries only, so it sends no flush of its own:
 * flush_tlb_batched_pending() must flush every CPU of the mm because of
 * the count (rule unpublished), or the readers go on reading the old
 * frames through the new mapping.
 * The readers hold still while the pages migrate: one that faulted on a
 * migration entry would hold the VMA's lock until the migration is done,
 * and the replacement would come after the publication. A try can still
 * miss the window, so each try replaces the next 32 pages, until
 * migrc_forced_unpublished shows one met an unpublished batch. Each try
 * first retires every deferred flush, so that an older generation of the
 * mm cannot make the change flush.
 */
#define WINDOW_PAGES	32
#define BATCH_PAGES	512

enum window_op { WINDOW_MUNMAP, WINDOW_MAP_FIXED, WINDOW_MPROTECT };

struct windower {
	struct region *r;
	enum window_op op;
	size_t lo;			/* the first page replaced */
	int fd, pagemap;
	volatile int go, done, hit, changed, failed, quit, in_window;
};

/*
 * Between munmap() and the new mmap() a reader faults: it waits for the
 * new mapping and reads again (returning retries the access).
 */
static volatile int window_remapped;

static void wait_for_remap(int sig)
{
	while (!window_remapped)
		sched_yield();
}

/*
 * WINDOW_MPROTECT: make the pages writable and write the new data. An
 * mprotect() that meets the unpublished batch flushes (rule unpublished);
 * each write then faults on the read-only PTE the migration left and takes
 * the write flush (rule write). Either one flushes the readers' stale
 * entries, so only the two rules broken together let a reader see the old
 * data. The try counts only if the first page still showed a migration
 * entry after the mprotect(): a late one finds present PTEs, makes them
 * writable and flushes by itself.
 */
static int write_in_window(struct windower *w, char *at, size_t len)
{
	if (mprotect(at, len, PROT_READ | PROT_WRITE))
		return -1;
	w->in_window = migrating(w->pagemap, w->r, w->lo);
	for (size_t i = 0; i < len / sizeof(uint64_t); i++)
		((volatile uint64_t *)at)[i] = NEWDATA;
	return 0;
}

static void *change_in_window(void *arg)
{
	struct windower *w = arg;
	struct region *r = w->r;
	size_t len = WINDOW_PAGES * r->psize;
	char *at = r->mem + w->lo * r->psize;
	off_t off = w->lo * r->psize;

	/*
	 * CPU 0, which migrates: it sleeps in the window (publish_hold), so
	 * this thread acts as soon as it sees the batch unmapped, rather
	 * than sharing a CPU with a reader (a 2-core host under TCG took
	 * the whole window there).
	 */
	pin(0);
	while (!w->go)
		sched_yield();
	while (!w->done && !w->hit)
		w->hit = migrating(w->pagemap, r, 0) &&
			 migrating(w->pagemap, r, BATCH_PAGES - 1);
	if (w->op == WINDOW_MUNMAP)
		w->failed = munmap(at, len) ||
			    mmap(at, len, PROT_READ, MAP_SHARED |
				 MAP_FIXED_NOREPLACE, w->fd, off) != at;
	else if (w->op == WINDOW_MAP_FIXED)
		w->failed = mmap(at, len, PROT_READ, MAP_SHARED | MAP_FIXED,
				 w->fd, off) != at;
	else
		w->failed = write_in_window(w, at, len);
	window_remapped = 1;
	__atomic_store_n(&r->phase, r->last, __ATOMIC_RELEASE);
	/*
	 * The readers read in the rest of the window: a stale entry shows.
	 * Before "changed": the next try's hold comes after it.
	 */
	resume_readers(r);
	w->changed = 1;
	/* Stay: an exiting thread leaves its CPU lazy (see range_race). */
	while (!w->quit)
		usleep(1000);
	return NULL;
}

/*
 * Retire every deferred flush: switching MIGRC off flushes what is
 * pending. Then the mm's generation is retired, and only the count of
 * unpublished batches can make the next change flush.
 */
static void retire_all(void)
{
	if (have_migrc() && write_long(ENABLED_FILE, 0))
		write_long(ENABLED_FILE, 1);
}

static void window_race(struct __test_metadata *_metadata,
			FIXTURE_DATA(migrc) *self, enum window_op op)
{
	struct region *r = &self->r;
	size_t len = MAX_PHASE * WINDOW_PAGES * r->psize;
	struct windower w[MAX_PHASE];
	struct sigaction retry = { .sa_handler = wait_for_remap }, old;
	uint64_t *buf = malloc(len);
	long c0[NCOUNTERS], c1[NCOUNTERS], migrated = 0, met = 0;
	int fd, pagemap, tries = 0, hits = 0;
	char aid[160];
	pthread_t t[MAX_PHASE];

	ASSERT_NE(buf, NULL);
	ASSERT_GE(r->npages, (size_t)BATCH_PAGES);
	fd = memfd_create("migrc-window", 0);
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_GE(pagemap, 0);
	for (size_t i = 0; i < len / sizeof(*buf); i++)
		buf[i] = NEWDATA;
	ASSERT_EQ(pwrite(fd, buf, len, 0), (ssize_t)len);
	memset(r->since, MAX_PHASE + 1, sizeof(r->since));
	ASSERT_EQ(sigaction(SIGSEGV, &retry, &old), 0);
	snprintf(aid, sizeof(aid), "%s publish_hold", self->broken);
	break_set(aid);
	while (!met && tries < MAX_PHASE) {
		struct windower *wt = &w[tries];
		size_t lo = tries * WINDOW_PAGES;

		*wt = (struct windower){ .r = r, .op = op, .lo = lo,
					 .fd = fd, .pagemap = pagemap };
		memset(r->since + lo, r->last + 1, WINDOW_PAGES);
		declare(r, NEWDATA);
		/* Readers keep these pages in their TLBs; see range_race. */
		r->scan_lo = lo;
		r->scan_hi = lo + WINDOW_PAGES;
		window_remapped = 0;
		ASSERT_EQ(pthread_create(&t[tries], NULL, change_in_window,
					 wt), 0);
		tries++;
		retire_all();
		usleep(50000);
		counters(c0);
		ASSERT_TRUE(hold_readers(r));
		wt->go = 1;
		migrated += migrate(r);
		wt->done = 1;
		while (!wt->changed)
			usleep(1000);
		resume_readers(r);
		counters(c1);
		EXPECT_EQ(wt->failed, 0);
		/* The thread may not have run while the pages migrated. */
		hits += wt->hit;
		met = c1[C_UNPUBLISHED] - c0[C_UNPUBLISHED];
		if (op == WINDOW_MPROTECT) {
			ksft_print_msg("try %d: mprotect() %s the migration, ",
				       tries, wt->in_window ? "inside" : "after");
			printf("%ld flushes of a batch not published yet\n",
			       met);
			met = wt->in_window ? met : 0;
			/* Read-only again: a writable PTE goes to the normal batch. */
			EXPECT_EQ(mprotect(r->mem + lo * r->psize,
					   WINDOW_PAGES * r->psize, PROT_READ), 0);
		}
		usleep(100000);
		/*
		 * A rule broken leaves the count at 0: try again until the
		 * readers see stale data.
		 */
		if (self->broken[0] && stale_words(r))
			break;
	}
	break_set(self->broken);
	ksft_print_msg("%d tries, %d replaced pages while they migrated; ",
		       tries, hits);
	printf("the last one: %ld flushes of a batch not published yet\n",
	       met);
	/* Otherwise the test did not test the window. */
	if (have_migrc() && !self->broken[0])
		EXPECT_GT(met, 0);
	usleep(200000);
	finish(_metadata, self, migrated, true);
	sigaction(SIGSEGV, &old, NULL);
	for (int i = 0; i < tries; i++) {
		w[i].quit = 1;
		pthread_join(t[i], NULL);
	}
	close(fd);
	close(pagemap);
	free(buf);
}

TEST_F(migrc, window_munmap)
{
	window_race(_metadata, self, WINDOW_MUNMAP);
}

TEST_F(migrc, window_map_fixed)
{
	window_race(_metadata, self, WINDOW_MAP_FIXED);
}

TEST_F(migrc, window_mprotect)
{
	window_race(_metadata, self, WINDOW_MPROTECT);
}

/*
 * 12. File-backed, not deferred: a memfd that is not write-sealed is a
 * shmem file of the kernel's own mount, whose writers take no write access
 * MIGRC could see (mm/migrc_file.c). A shared mapping of one is migrated
 * (no page may be deferred, every one refused for its file system), then
 * another process changes the file with write() and punches a hole
 * (truncate of a range): the readers see the new data, then zeroes.
 */
TEST_F(migrc, file_shared)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize;
	unsigned long long sum[4] = { 0 };
	long c[NCOUNTERS], before, refused, migrated;
	int fd = memfd_create("migrc-file", 0), status;
	uint64_t *buf = malloc(len);
	pid_t child;

	ASSERT_GE(fd, 0);
	ASSERT_NE(buf, NULL);
	/* Anonymous first: this kernel defers at all. */
	migrated = migrate(r);
	stop_readers(r, sum);
	for (size_t p = 0; p < r->npages; p++)
		for (size_t i = 0; i < r->psize / sizeof(*buf); i++)
			buf[p * r->psize / sizeof(*buf) + i] = expected(p);
	ASSERT_EQ(pwrite(fd, buf, len, 0), (ssize_t)len);
	/* Populated: move_pages() finds only mapped pages. */
	ASSERT_EQ(mmap(r->mem, len, PROT_READ,
		       MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0), r->mem);
	ASSERT_TRUE(place(r, r->mem, 0));
	r->node = 0;
	start_readers(r);
	r->readers[0].words += sum[0];
	r->readers[0].wrong += sum[1];
	r->readers[0].stale += sum[2];

	counters(c);
	/* Shmem only: reclaim may demote and defer anonymous pages meanwhile. */
	before = c[C_DEFERRED_SHMEM];
	refused = c[C_REFUSED_FILE_FS];
	for (int round = 0; round < 4; round++)
		migrated += migrate(r);
	counters(c);
	ksft_print_msg("shared file mapping: %ld shmem pages deferred of %ld migrated\n",
		       c[C_DEFERRED_SHMEM] - before, 4L * (long)r->npages);
	ksft_print_msg("shared file mapping: %ld pages refused for the file system\n",
		       c[C_REFUSED_FILE_FS] - refused);
	EXPECT_EQ(c[C_DEFERRED_SHMEM] - before, 0);
	if (have_migrc())
		/* At least: other file folios may migrate meanwhile. */
		EXPECT_GE(c[C_REFUSED_FILE_FS] - refused, 4L * (long)r->npages);

	declare(r, NEWDATA);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		for (size_t i = 0; i < len / sizeof(*buf); i++)
			buf[i] = NEWDATA;
		_exit(pwrite(fd, buf, len, 0) != (ssize_t)len);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(exited_ok(status));
	publish(r);
	for (int round = 0; round < 2; round++)
		migrated += migrate(r);
	declare(r, 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				0, len) != 0);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(exited_ok(status));
	publish(r);
	finish(_metadata, self, migrated, true);
	close(fd);
	free(buf);
}

/*
 * 12b. Page-cache folios (mm/migrc_file.c): a file nobody may write while
 * it migrates is deferred; whoever gets write access afterwards must flush
 * first. The region's pages are replaced by a read-only shared mapping of
 * a file holding the same data (opened read-only, on tmpfs or ext4), the
 * readers go on reading it while it migrates, and then a writer changes
 * the file: the readers must see the new data at once.
 */
#define SHM_DIR		"/dev/shm"
#define EXT4_DIR	"/mnt/ext4"	/* the harness mounts a loop device */

struct file_region {
	char path[64];
	int fd;		/* read-only: the one the region maps */
};

/* Whether @dir is the root of a mount of its own (not the root file system). */
static bool mounted(const char *dir)
{
	struct stat d, parent;
	char up[80];

	snprintf(up, sizeof(up), "%s/..", dir);
	return !stat(dir, &d) && !stat(up, &parent) && d.st_dev != parent.st_dev;
}

/*
 * Map a new file of @dir, holding the region's data, over the region
 * (MAP_SHARED, read-only), on node 0, and start the readers on it again.
 * False if @dir is no mount of its own.
 */
static bool map_file(struct __test_metadata *_metadata,
		     FIXTURE_DATA(migrc) *self, const char *dir,
		     struct file_region *f)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize;
	unsigned long long sum[4] = { 0 };
	int wfd;

	if (!mounted(dir))
		return false;
	snprintf(f->path, sizeof(f->path), "%s/migrc-%d", dir, getpid());
	wfd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (wfd < 0)
		return false;
	stop_readers(r, sum);
	/*
	 * The region still holds the seeded data. Page by page: ext4 caches
	 * a large write in large folios, and move_pages() reports -EBUSY for
	 * every page of a folio but the first.
	 */
	for (size_t off = 0; off < len; off += r->psize)
		ASSERT_EQ(pwrite(wfd, r->mem + off, r->psize, off),
			  (ssize_t)r->psize);
	ASSERT_EQ(fsync(wfd), 0);
	/* No writer is left: the only way the pages can be deferred. */
	ASSERT_EQ(close(wfd), 0);
	f->fd = open(f->path, O_RDONLY);
	ASSERT_GE(f->fd, 0);
	ASSERT_EQ(mmap(r->mem, len, PROT_READ,
		       MAP_SHARED | MAP_FIXED | MAP_POPULATE, f->fd, 0), r->mem);
	ASSERT_TRUE(place(r, r->mem, 0));
	r->node = 0;
	ASSERT_TRUE(start_readers(r));
	r->readers[0].words += sum[0];
	r->readers[0].wrong += sum[1];
	r->readers[0].stale += sum[2];
	return true;
}

static void unmap_file(struct file_region *f)
{
	close(f->fd);
	unlink(f->path);
}

/*
 * What a MIGRC kernel must show after the migrations of a file test:
 * page-cache pages deferred, and @forced flushes for writers.
 */
static void file_counts(struct __test_metadata *_metadata, const long *c0,
			const char *what, bool forced)
{
	long c[NCOUNTERS];

	counters(c);
	for (int i = 0; i < NCOUNTERS; i++)
		c[i] -= c0[i];
	ksft_print_msg("%s: %ld file, %ld shmem pages deferred; %ld refused\n",
		       what, c[C_DEFERRED_FILE], c[C_DEFERRED_SHMEM],
		       c[C_REFUSED_FILE_WRITER]);
	ksft_print_msg("%s: forced: %ld new writer, %ld during the migration\n",
		       what, c[C_FORCED_FILE], c[C_FORCED_FILE_RACE]);
	/* An architecture or debug option that declines defers nothing. */
	if (!have_migrc() || c[C_DECLINED] || c[C_DECLINED_ARCH])
		return;
	EXPECT_GT(c[C_DEFERRED_FILE] + c[C_DEFERRED_SHMEM], 0);
	if (forced)
		EXPECT_GT(c[C_FORCED_FILE] + c[C_FORCED_FILE_RACE], 0);
}

enum file_writer_kind { FILE_WRITE = 1, FILE_MMAP_WRITE };

/* The file the helpers of the file tests open (set before they fork). */
static const char *helper_file_path;

/*
 * file_writer's helper, another process forked before the migrations: on
 * command it opens the file for writing and fills it with NEWDATA, by
 * write() or through a shared writable mapping (page_mkwrite on ext4;
 * tmpfs maps writable at the first fault).
 */
static void file_writer_loop(struct region *r, pid_t parent, int cmd, int ack)
{
	size_t len = r->npages * r->psize;
	uint64_t *buf = malloc(len), kind;
	volatile uint64_t *w;
	int fd;

	pin(0);
	if (!buf || write(ack, "r", 1) != 1)
		_exit(1);
	for (size_t i = 0; i < len / sizeof(*buf); i++)
		buf[i] = NEWDATA;
	while (read(cmd, &kind, sizeof(kind)) == sizeof(kind)) {
		fd = open(helper_file_path, kind == FILE_WRITE ? O_WRONLY : O_RDWR);
		if (fd < 0)
			_exit(2);
		if (kind == FILE_WRITE) {
			if (pwrite(fd, buf, len, 0) != (ssize_t)len)
				_exit(3);
		} else {
			w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				 fd, 0);
			if (w == MAP_FAILED)
				_exit(4);
			for (size_t i = 0; i < len / sizeof(*w); i++)
				w[i] = NEWDATA;
			munmap((void *)w, len);
		}
		close(fd);
		if (write(ack, "d", 1) != 1)
			_exit(5);
	}
	_exit(0);
}

/*
 * Page 0 of @r to the other node and back, alone: a deferral made just
 * before a writer comes. A reader's CPU catches up with a deferred flush
 * whenever it switches tasks; during a migration of the whole region on a
 * slow host every one of them may, and the copies would be clean before
 * the writer opens the file, whether it flushes for them or not.
 */
static long bounce_first_page(struct region *r)
{
	long moved = move_range(r, r->mem, 1, !r->node);

	return moved + move_range(r, r->mem, 1, r->node);
}

/*
 * Another process opens the file for writing after the migrations and
 * writes all of it. It is forked before them: neither its fork nor its
 * faults flush this mm. The readers keep a few pages hot, so that their
 * stale entries, if any, outlive the migrations. Rule file_open.
 */
static void file_writer(struct __test_metadata *_metadata,
			FIXTURE_DATA(migrc) *self, const char *dir,
			enum file_writer_kind kind)
{
	struct region *r = &self->r;
	struct file_region f;
	long c0[NCOUNTERS], migrated = 0;
	struct helper h;

	if (!map_file(_metadata, self, dir, &f))
		SKIP(return, "%s is not mounted", dir);
	helper_file_path = f.path;
	ASSERT_EQ(madvise(r->mem, r->npages * r->psize, MADV_DONTFORK), 0);
	ASSERT_TRUE(start_helper(&h, r, file_writer_loop));
	unshare_after_fork(self);
	r->scan_lo = 0;
	r->scan_hi = WINDOW_PAGES;
	counters(c0);
	for (int round = 0; round < 4; round++)
		migrated += migrate(r);
	migrated += bounce_first_page(r);
	declare(r, NEWDATA);
	helper_do(&h, kind);
	publish(r);
	file_counts(_metadata, c0, dir, true);
	finish(_metadata, self, migrated, true);
	EXPECT_TRUE(stop_helper(&h));
	unmap_file(&f);
}

TEST_F(migrc, file_write)
{
	file_writer(_metadata, self, SHM_DIR, FILE_WRITE);
}

TEST_F(migrc, file_write_ext4)
{
	file_writer(_metadata, self, EXT4_DIR, FILE_WRITE);
}

TEST_F(migrc, file_mmap_write)
{
	file_writer(_metadata, self, SHM_DIR, FILE_MMAP_WRITE);
}

TEST_F(migrc, file_mmap_write_ext4)
{
	file_writer(_metadata, self, EXT4_DIR, FILE_MMAP_WRITE);
}

/* file_two_mappings' helper: maps @r's file writable and writes it. */
static void writable_mapper_loop(struct region *r, pid_t parent, int cmd,
				 int ack)
{
	size_t len = r->npages * r->psize;
	int fd = open(helper_file_path, O_RDWR);
	uint64_t command;
	volatile uint64_t *w;

	pin(0);
	if (fd < 0)
		_exit(1);
	w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED)
		_exit(2);
	/* Present and writable: the migration restores it so. */
	for (size_t i = 0; i < len / sizeof(*w); i += r->psize / sizeof(*w))
		w[i] = w[i];
	if (write(ack, "r", 1) != 1)
		_exit(3);
	while (read(cmd, &command, sizeof(command)) == sizeof(command)) {
		for (size_t i = 0; i < len / sizeof(*w); i++)
			w[i] = command;
		if (write(ack, "d", 1) != 1)
			_exit(4);
	}
	_exit(0);
}

/*
 * Two mappings (the x86 maintainers' case): while this process maps the
 * file read-only, another maps it PROT_READ | PROT_WRITE and holds it open
 * for writing. Its PTEs are writable, so they go to the normal batch and
 * come back writable on the copy: this process's read-only entries must
 * not be deferred (refused: the file has a writer). Then the other process
 * writes through its mapping. Rule file_writers.
 */
TEST_F(migrc, file_two_mappings)
{
	struct region *r = &self->r;
	struct file_region f;
	struct helper h;
	long c0[NCOUNTERS], c[NCOUNTERS], migrated = 0;

	if (!map_file(_metadata, self, SHM_DIR, &f))
		SKIP(return, SHM_DIR " is not mounted");
	helper_file_path = f.path;
	ASSERT_EQ(madvise(r->mem, r->npages * r->psize, MADV_DONTFORK), 0);
	ASSERT_TRUE(start_helper(&h, r, writable_mapper_loop));
	unshare_after_fork(self);
	/* As in file_writer: a few hot pages keep their stale entries. */
	r->scan_lo = 0;
	r->scan_hi = WINDOW_PAGES;
	/* Pages two processes map move only with MPOL_MF_MOVE_ALL. */
	r->move_flags = MPOL_MF_MOVE_ALL;
	counters(c0);
	for (int round = 0; round < 4; round++)
		migrated += migrate(r);
	counters(c);
	ksft_print_msg("two mappings: %ld pages refused (writer), %ld deferred\n",
		       c[C_REFUSED_FILE_WRITER] - c0[C_REFUSED_FILE_WRITER],
		       c[C_DEFERRED_SHMEM] - c0[C_DEFERRED_SHMEM]);
	/*
	 * Also with a rule broken: in the guest, the readers' stale entries of
	 * a file did not outlive the migrations long enough to be read (the
	 * shadow counts them), so the refusal is what shows a broken rule.
	 */
	if (have_migrc()) {
		EXPECT_EQ(c[C_DEFERRED_SHMEM] - c0[C_DEFERRED_SHMEM], 0);
		EXPECT_GT(c[C_REFUSED_FILE_WRITER] - c0[C_REFUSED_FILE_WRITER],
			  0);
	}
	declare(r, NEWDATA);
	helper_do(&h, NEWDATA);
	publish(r);
	/* Refused: nothing was deferred. */
	finish(_metadata, self, migrated, false);
	EXPECT_TRUE(stop_helper(&h));
	unmap_file(&f);
}

/*
 * file_window's writer: opens the file for writing once the first pages
 * of the region are migration entries (the migration sleeps before it
 * publishes, test aid publish_hold), then writes it. The write waits for
 * the pages' locks, so it lands in the copies.
 */
struct window_writer {
	struct region *r;
	const char *path;
	const uint64_t *buf;
	int pagemap;
	volatile int go, done, in_window, wrote, quit;
};

static void *open_in_window(void *arg)
{
	struct window_writer *ww = arg;
	struct region *r = ww->r;
	size_t len = WINDOW_PAGES * r->psize;
	int fd;

	pin(0);
	while (!ww->go)
		sched_yield();
	while (!ww->done && !migrating(ww->pagemap, r, 0))
		;
	fd = open(ww->path, O_WRONLY);
	ww->in_window = migrating(ww->pagemap, r, 0);
	if (fd >= 0 && pwrite(fd, ww->buf, len, 0) == (ssize_t)len)
		ww->wrote = 1;
	if (fd >= 0)
		close(fd);
	__atomic_store_n(&r->phase, r->last, __ATOMIC_RELEASE);
	/* Stay: an exiting thread leaves its CPU lazy (see range_race). */
	while (!ww->quit)
		usleep(1000);
	return NULL;
}

/*
 * The window between the check for writers and the copy: a writer that
 * opens the file while the pages are unmapped, before the migration raised
 * the file's generation, finds nothing to flush; the migration must see it
 * when it checks again before the copy enters the page cache, and flush.
 * Rule file_writers.
 */
TEST_F(migrc, file_window)
{
	struct region *r = &self->r;
	struct window_writer ww[MAX_PHASE];
	struct file_region f;
	uint64_t *buf = malloc(WINDOW_PAGES * r->psize);
	long c0[NCOUNTERS], migrated = 0;
	int pagemap = open("/proc/self/pagemap", O_RDONLY), tries = 0;
	pthread_t t[MAX_PHASE];
	char aid[160];
	bool hit = false;

	ASSERT_NE(buf, NULL);
	ASSERT_GE(pagemap, 0);
	if (!map_file(_metadata, self, SHM_DIR, &f))
		SKIP(return, SHM_DIR " is not mounted");
	/* Readers check only the pages written; see range_race. */
	r->scan_lo = 0;
	r->scan_hi = WINDOW_PAGES;
	snprintf(aid, sizeof(aid), "%s publish_hold", self->broken);
	break_set(aid);
	counters(c0);
	while (!hit && tries < MAX_PHASE) {
		struct window_writer *w = &ww[tries];
		uint64_t v = NEWDATA + tries;

		for (size_t i = 0; i < WINDOW_PAGES * r->psize / sizeof(*buf); i++)
			buf[i] = v;
		*w = (struct window_writer){ .r = r, .path = f.path,
					     .buf = buf, .pagemap = pagemap };
		declare(r, v);
		ASSERT_EQ(pthread_create(&t[tries], NULL, open_in_window, w), 0);
		tries++;
		usleep(50000);
		w->go = 1;
		migrated += migrate(r);
		w->done = 1;
		while (r->phase != r->last)
			usleep(1000);
		EXPECT_EQ(w->wrote, 1);
		hit = w->in_window;
		usleep(100000);
	}
	break_set(self->broken);
	ksft_print_msg("%d tries; the last writer opened the file %s the migration\n",
		       tries, hit ? "inside" : "after");
	/* Otherwise the test did not test the window (publish_hold). */
	if (have_migrc())
		EXPECT_TRUE(hit);
	file_counts(_metadata, c0, "window", !self->broken[0]);
	finish(_metadata, self, migrated, true);
	for (int i = 0; i < tries; i++) {
		ww[i].quit = 1;
		pthread_join(t[i], NULL);
	}
	close(pagemap);
	unmap_file(&f);
	free(buf);
}

/*
 * A write-sealed memfd: the kernel's own shmem file, deferred because
 * nobody can write it any more. Shrinking it is still allowed (no
 * F_SEAL_SHRINK) and takes no write access: the truncation zeroes the tail
 * of the last page while this process still maps it, and must flush first.
 * Readers check that tail only. Rule file_trunc.
 */
TEST_F(migrc, memfd_sealed_truncate)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize;
	unsigned long long sum[4] = { 0 };
	long c0[NCOUNTERS], migrated = 0;
	int fd = memfd_create("migrc-sealed", MFD_ALLOW_SEALING);

	ASSERT_GE(fd, 0);
	stop_readers(r, sum);
	ASSERT_EQ(pwrite(fd, r->mem, len, 0), (ssize_t)len);
	ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), 0);
	/* Sealed first: the mapping then cannot become writable. */
	ASSERT_EQ(mmap(r->mem, len, PROT_READ,
		       MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0), r->mem);
	ASSERT_TRUE(place(r, r->mem, 0));
	r->node = 0;
	r->scan_lo = r->npages - 1;
	r->word_lo = r->psize / 2 / sizeof(uint64_t);
	ASSERT_TRUE(start_readers(r));
	r->readers[0].words += sum[0];
	counters(c0);
	for (int round = 0; round < 4; round++)
		migrated += migrate(r);
	declare(r, 0);
	r->since[r->npages - 1] = r->last;
	ASSERT_EQ(ftruncate(fd, len - r->psize / 2), 0);
	publish(r);
	file_counts(_metadata, c0, "sealed memfd", true);
	finish(_metadata, self, migrated, true);
	close(fd);
}

/*
 * The old frames of page-cache folios go to another process at once (as
 * reuse_leak does for anonymous ones). Rule alloc.
 */
TEST_F(migrc, file_reuse)
{
	struct file_region f;
	struct helper h;
	long migrated;

	if (!map_file(_metadata, self, SHM_DIR, &f))
		SKIP(return, SHM_DIR " is not mounted");
	ASSERT_EQ(madvise(self->r.mem, self->r.npages * self->r.psize,
			  MADV_DONTFORK), 0);
	ASSERT_TRUE(start_helper(&h, &self->r, filler_loop));
	unshare_after_fork(self);
	migrated = reuse_tries(_metadata, self, filler_reuse, &h);
	EXPECT_TRUE(stop_helper(&h));
	finish(_metadata, self, migrated, true);
	unmap_file(&f);
}

/*
 * 12c. Device writes: IOMMU_IOAS_MAP_FILE with IOMMU_IOAS_MAP_WRITEABLE
 * lets a device (or the kernel on its behalf) write a file's pages, from a
 * file descriptor opened read-only. iommufd counts that as a shared
 * writable mapping: refused on a write-sealed memfd, and a new writer
 * whose flush MIGRC forces.
 */
static int iommufd_open(__u32 *ioas)
{
	struct iommu_ioas_alloc alloc = { .size = sizeof(alloc) };
	int fd = open("/dev/iommu", O_RDWR);

	if (fd >= 0 && ioctl(fd, IOMMU_IOAS_ALLOC, &alloc)) {
		close(fd);
		return -1;
	}
	*ioas = alloc.out_ioas_id;
	return fd;
}

/* Map @len bytes of @fd into @ioas: 0 or -errno. */
static int iommufd_map_file(int iommufd, __u32 ioas, int fd, size_t len,
			    bool writable)
{
	struct iommu_ioas_map_file map = {
		.size = sizeof(map),
		.flags = IOMMU_IOAS_MAP_READABLE |
			 (writable ? IOMMU_IOAS_MAP_WRITEABLE : 0),
		.ioas_id = ioas,
		.fd = fd,
		.length = len,
	};

	return ioctl(iommufd, IOMMU_IOAS_MAP_FILE, &map) ? -errno : 0;
}

TEST_F(migrc, iommufd_sealed)
{
	size_t len = 16 * self->r.psize;
	int fd = memfd_create("migrc-iommufd", MFD_ALLOW_SEALING), iommufd;
	__u32 ioas;

	ASSERT_GE(fd, 0);
	iommufd = iommufd_open(&ioas);
	if (iommufd < 0)
		SKIP(goto out, "no /dev/iommu");
	ASSERT_EQ(ftruncate(fd, len), 0);
	ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), 0);
	EXPECT_EQ(iommufd_map_file(iommufd, ioas, fd, len, true), -EPERM);
	EXPECT_EQ(iommufd_map_file(iommufd, ioas, fd, len, false), 0);
	close(iommufd);
	finish(_metadata, self, 0, false);
out:
	close(fd);
}

TEST_F(migrc, iommufd_file_writer)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize;
	struct file_region f;
	long c0[NCOUNTERS], migrated = 0;
	int iommufd;
	__u32 ioas;

	iommufd = iommufd_open(&ioas);
	if (iommufd < 0)
		SKIP(return, "no /dev/iommu");
	if (!map_file(_metadata, self, SHM_DIR, &f))
		SKIP(return, SHM_DIR " is not mounted");
	counters(c0);
	for (int round = 0; round < 4; round++)
		migrated += migrate(r);
	/* Writable for the device, through the read-only descriptor. */
	EXPECT_EQ(iommufd_map_file(iommufd, ioas, f.fd, len, true), 0);
	file_counts(_metadata, c0, "iommufd", true);
	finish(_metadata, self, migrated, true);
	close(iommufd);
	unmap_file(&f);
}

/*
 * 13. Lost writes: writer threads on every CPU but 0 keep incrementing
 * their own word of every page of a writable region while it migrates with
 * the read-only one. MIGRC must flush writable PTEs at once: every
 * increment must survive the copies.
 */
struct writer {
	pthread_t thread;
	int cpu, slot;
	char *mem;
	size_t npages, psize;
	volatile int *stop;
	uint64_t *done;		/* increments per page */
};

static void *write_loop(void *arg)
{
	struct writer *wr = arg;

	pin(wr->cpu);
	while (!*wr->stop)
		for (size_t p = 0; p < wr->npages; p++) {
			volatile uint64_t *w = (volatile uint64_t *)
				(wr->mem + p * wr->psize) + wr->slot * 8;

			*w += 1;
			wr->done[p]++;
		}
	return NULL;
}

TEST_F(migrc, lost_write)
{
	struct region *r = &self->r;
	size_t len = r->npages * r->psize;
	struct writer wr[MAX_READERS];
	int nw = r->nreaders, wnode = 0;
	char *mem = map_anon(len);
	volatile int stop = 0;
	long migrated = 0, lost = 0, wmoved = 0;

	ASSERT_NE(mem, MAP_FAILED);
	memset(mem, 0, len);
	ASSERT_TRUE(place(r, mem, 0));
	for (int i = 0; i < nw; i++) {
		wr[i] = (struct writer){ .cpu = i + 1, .slot = i, .mem = mem,
			.npages = r->npages, .psize = r->psize, .stop = &stop,
			.done = calloc(r->npages, sizeof(uint64_t)) };
		ASSERT_NE(wr[i].done, NULL);
		ASSERT_EQ(pthread_create(&wr[i].thread, NULL, write_loop,
					 &wr[i]), 0);
	}
	usleep(100000);
	for (int round = 0; round < 8; round++) {
		migrated += migrate(r);
		wnode = !wnode;
		wmoved += move_range(r, mem, r->npages, wnode);
	}
	usleep(100000);
	stop = 1;
	for (int i = 0; i < nw; i++) {
		pthread_join(wr[i].thread, NULL);
		for (size_t p = 0; p < r->npages; p++)
			lost += wr[i].done[p] -
				((uint64_t *)(mem + p * r->psize))[i * 8];
	}
	ksft_print_msg("writable region: %ld pages migrated under %d writers\n",
		       wmoved, nw);
	ksft_print_msg("%ld increments lost\n", lost);
	EXPECT_EQ(lost, 0);
	EXPECT_EQ(wmoved, 8L * (long)r->npages);
	finish(_metadata, self, migrated + wmoved, true);
	for (int i = 0; i < nw; i++)
		free(wr[i].done);
	munmap(mem, len);
}

/*
 * Stop once this many PTEs were refused under a pending scan (a deferral
 * may be a safe one: a flushed PROT_NONE PTE while a scan of a read-only
 * VMA keeps tlb_flush_pending raised)...
 */
#define NUMA_SCAN_HITS		32
/* ...or after this long: all of it with the rule broken. */
#define NUMA_SCAN_SECONDS	60
#define NUMA_SCAN_PAGES		16

struct scan_writer {
	pthread_t thread;
	int cpu;
	volatile uint64_t *word;	/* its own word of the hot page */
	volatile int *stop;
	uint64_t done;
};

static void *scan_write_loop(void *arg)
{
	struct scan_writer *w = arg;

	pin(w->cpu);
	while (!*w->stop) {
		*w->word += 1;
		w->done++;
	}
	return NULL;
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Make NUMA hinting scans frequent (numa_scan_knobs), and let teardown
 * restore the knobs and switch NUMA balancing off again (or back on).
 * False if there are no knobs.
 */
static bool numa_scan_often(FIXTURE_DATA(migrc) *self)
{
	for (size_t i = 0; i < NR_NUMA_SCAN_KNOBS; i++) {
		self->numa_scan[i] = read_long(numa_scan_knobs[i].path);
		if (self->numa_scan[i] < 0 ||
		    !write_long(numa_scan_knobs[i].path,
				numa_scan_knobs[i].value))
			return false;
	}
	if (!self->numa_balancing)
		self->numa_balancing = '0';
	return true;
}

/*
 * 14b. A NUMA hinting scan of a writable VMA: it makes writable PTEs
 * PROT_NONE and flushes when it is done with the VMA. Until then writers on
 * other CPUs go on storing through their writable TLB entries. A migration
 * in that window finds a PTE that is not writable but must not defer its
 * flush, or the writers store into the source after the copy. (A scan of a
 * VMA without VM_WRITE does not stop deferral: see migrc_numa_scan_begin().)
 *
 * Two writers on CPUs 1 and 2 increment their word of the hot page; CPU 0
 * migrates it alone, back and forth (a one-page batch is copied at once).
 * The test aid numa_hold makes every scan sleep before its flush, as a scan
 * preempted between its last page table and its flush would, so that the
 * window is wide enough for a migration under TCG; reuse_first hands the
 * sources out again soon, where the shadow checks their data. The PTEs
 * that met a pending scan (refused, or deferred with the rule broken) show
 * the window was hit.
 */
TEST_F_TIMEOUT(migrc, numa_scan_writable, LONG_TIMEOUT)
{
	struct region *r = &self->r;
	size_t len = NUMA_SCAN_PAGES * r->psize;
	long c0[NCOUNTERS], c1[NCOUNTERS], moved = 0, lost = 0;
	long refused = 0;
	struct scan_writer w[2];
	volatile int stop = 0;
	int node = 0, tries = 0;
	char aid[160];
	uint64_t *x;
	double end;

	if (r->ncpus < 3)
		SKIP(return, "needs 3 CPUs: two writers and CPU 0");
	x = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(x, MAP_FAILED);
	memset(x, 0, len);
	if (!numa_scan_often(self))
		SKIP(return, "no " NUMA_SCAN_DIR " (NUMA balancing)");
	snprintf(aid, sizeof(aid), "%s numa_hold reuse_first", self->broken);
	break_set(aid);
	ASSERT_TRUE(write_long(NUMA_BALANCING, 1));
	for (int i = 0; i < 2; i++) {
		w[i] = (struct scan_writer){ .cpu = i + 1, .stop = &stop,
					     .word = x + i * 8 };
		ASSERT_EQ(pthread_create(&w[i].thread, NULL, scan_write_loop,
					 &w[i]), 0);
	}
	counters(c0);
	end = seconds() + NUMA_SCAN_SECONDS;
	while (refused < NUMA_SCAN_HITS && seconds() < end) {
		node = !node;
		moved += move_range(r, (char *)x, 1, node);
		if (++tries % 16)
			continue;
		counters(c1);
		refused = c1[C_REFUSED_PENDING] - c0[C_REFUSED_PENDING];
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
	EXPECT_TRUE(write_long(NUMA_BALANCING, 0));
	break_set(self->broken);
	counters(c1);
	refused = c1[C_REFUSED_PENDING] - c0[C_REFUSED_PENDING];
	for (int i = 0; i < 2; i++)
		lost += w[i].done - x[i * 8];
	ksft_print_msg("hot page: %ld of %d migrations under 2 writers ",
		       moved, tries);
	printf("and NUMA scans (%ld PTE updates)\n",
	       c1[C_NUMA_PTES] - c0[C_NUMA_PTES]);
	ksft_print_msg("%ld PTEs refused under a pending scan, %ld pages deferred\n",
		       refused, c1[C_DEFERRED] - c0[C_DEFERRED]);
	ksft_print_msg("%ld increments lost\n", lost);
	EXPECT_EQ(lost, 0);
	EXPECT_GT(moved, 0);
	EXPECT_GT(c1[C_NUMA_PTES] - c0[C_NUMA_PTES], 0);
	if (have_migrc())
		EXPECT_GT(refused, 0);
	finish(_metadata, self, moved, false);
	munmap(x, len);
}

/* The frame of a present page (0 if not present or unknown). */
static uint64_t pfn_of(int pagemap, const void *addr, size_t psize)
{
	uint64_t e = pagemap_entry(pagemap, addr, psize);

	return e >> 63 ? e & ((1ULL << 55) - 1) : 0;
}

#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB	(30 << 26)
#endif
#define GIGANTIC	(1UL << 30)
#define GIGANTIC_NODE1	\
	"/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages"

/* gigantic_reuse: the frame of the helper's 1 GiB page, shared with it. */
static volatile uint64_t *gigantic_pfn;

/*
 * gigantic_reuse's helper: maps a 1 GiB page of node 1 and writes MARKER
 * over it (command 1, kept until the next command), or only reports where
 * it lies (command 2).
 */
static void gigantic_loop(struct region *r, pid_t parent, int cmd, int ack)
{
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	uint64_t *m = NULL, v;

	pin(0);
	if (pagemap < 0 || write(ack, "r", 1) != 1)
		_exit(1);
	while (read(cmd, &v, sizeof(v)) == sizeof(v)) {
		if (m)
			munmap(m, GIGANTIC);
		if (bind_node(1))
			_exit(2);
		m = mmap(NULL, GIGANTIC, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
			 MAP_HUGE_1GB, -1, 0);
		if (m == MAP_FAILED)
			_exit(3);
		m[0] = MARKER;
		*gigantic_pfn = pfn_of(pagemap, m, r->psize);
		/* The word the readers check, in every 64 bytes. */
		for (size_t i = 0; v == 1 && i < GIGANTIC / sizeof(*m); i += 8)
			m[i] = MARKER;
		if (v == 2) {
			munmap(m, GIGANTIC);
			m = NULL;
		}
		if (write(ack, "d", 1) != 1)
			_exit(4);
	}
	_exit(0);
}

/*
 * 14. Gigantic reuse: a 1 GiB hugetlb page is allocated at run time as one
 * compound page from a range of free blocks (alloc_contig_range()), each
 * carrying its own pending flush. Where node 1 has such a range is found
 * by allocating the page once; then the region is migrated to node 1, the
 * readers watch pages whose frames lie in the range past its first block,
 * the region goes back to node 0, and another process gets the 1 GiB page
 * and writes it: every block must have been flushed, not only the first.
 */
TEST_F_TIMEOUT(migrc, gigantic_reuse, LONG_TIMEOUT)
{
	struct region *r = &self->r;
	long before = read_long(GIGANTIC_NODE1), migrated = 0;
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	size_t run = 0, best = 0, at = 0;
	uint64_t lo, hi, range;
	struct helper g;

	if (before < 0)
		SKIP(return, "no 1 GiB pages on node 1 (pdpe1gb, CONTIG_ALLOC)");
	ASSERT_GE(pagemap, 0);
	gigantic_pfn = mmap(NULL, r->psize, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(gigantic_pfn, MAP_FAILED);
	ASSERT_EQ(madvise(r->mem, r->npages * r->psize, MADV_DONTFORK), 0);
	ASSERT_TRUE(start_helper(&g, r, gigantic_loop));
	unshare_after_fork(self);
	/*
	 * Where a 1 GiB page lies: the one the VM got at boot (hugepages=1:1,
	 * in a range no kernel allocation took yet), or a new one.
	 */
	if (!before)
		write_long(GIGANTIC_NODE1, 1);
	if (read_long(GIGANTIC_NODE1) < 1) {
		stop_helper(&g);
		SKIP(return, "no 1 GiB page on node 1 (boot with hugepagesz=1G hugepages=1:1)");
	}
	before = 0;
	helper_do(&g, 2);
	range = *gigantic_pfn;
	lo = *gigantic_pfn + (4UL << 20) / r->psize;	/* past its first block */
	hi = *gigantic_pfn + GIGANTIC / r->psize;
	ASSERT_NE(*gigantic_pfn, 0);
	/*
	 * Until some 16 pages in a row have frames inside the range. The
	 * range, just freed, is at the head of the free lists: the region's
	 * next move to node 1 takes its pages from there, mostly.
	 */
	for (int t = 0; t < 16 && best < 16; t++) {
		long moved;

		if (r->node == 0) {
			write_long(GIGANTIC_NODE1, 1);
			write_long(GIGANTIC_NODE1, 0);
		}
		moved = migrate(r);
		if (moved < (long)r->npages)
			unmoved(r, t, moved);
		migrated += moved;
		if (r->node != 1)
			continue;
		for (size_t p = 0; p < r->npages; p++) {
			uint64_t pfn = pfn_of(pagemap, r->mem + p * r->psize,
					      r->psize);

			run = pfn >= lo && pfn < hi ? run + 1 : 0;
			if (run > best) {
				best = run;
				at = p + 1 - run;
			}
		}
	}
	ksft_print_msg("1 GiB page at pfn %#llx; pages %zu-%zu have frames in it\n",
		       (unsigned long long)*gigantic_pfn, at, at + best - 1);
	/*
	 * Without MIGRC the old frames go to a per-CPU list and come back
	 * first: the range is not reached, and there is nothing to check.
	 * With it, the range is reached when node 1's free lists have no
	 * smaller blocks to give first (the harness's VM, after its earlier
	 * stages); elsewhere, say so (the harness fails a skip here).
	 */
	if (best < 16) {
		stop_helper(&g);
		SKIP(return, "the region did not reach the 1 GiB range");
	}
	/* The readers' TLBs keep just these. */
	r->scan_lo = at;
	r->scan_hi = at + (best < 64 ? best : 64);
	usleep(200000);
	migrated += migrate(r);
	ASSERT_EQ(r->node, 0);
	for (int t = 0; t < 8 && read_long(GIGANTIC_NODE1) == before; t++)
		ASSERT_TRUE(write_long(GIGANTIC_NODE1, before + 1));
	EXPECT_EQ(read_long(GIGANTIC_NODE1), before + 1);
	helper_do(&g, 1);
	/* Elsewhere, the test would have tested nothing. */
	EXPECT_EQ(*gigantic_pfn, range);
	usleep(200000);
	finish(_metadata, self, migrated, true);
	EXPECT_TRUE(stop_helper(&g));
	/* Node 1 needs the memory back (a later run allocates at run time). */
	write_long(GIGANTIC_NODE1, 0);
	close(pagemap);
}

#define NESTED_WATCHED		64	/* region pages the readers watch */
#define NESTED_TAIL		448	/* PROT_NONE pages: one batch of 512 */
#define NESTED_TRIES		8
#define NESTED_MIN_FREE		1024	/* KiB: kswapd refills little */
#define HOG_MAX			(1UL << 30)	/* several times node 0 */

/* Direct reclaims so far: the allocstall_* counters of /proc/vmstat. */
static long direct_reclaims(void)
{
	char line[128];
	long sum = 0, v;
	FILE *f = fopen("/proc/vmstat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "allocstall_", 11) &&
		    sscanf(line, "%*s %ld", &v) == 1)
			sum += v;
	if (f)
		fclose(f);
	return sum;
}

/*
 * nested_reclaim's helper, bound to node 0: fills it with anonymous memory
 * nobody touches again, until one of its own allocations had to reclaim:
 * node 0 is then at its min watermark. The next allocations there reclaim
 * directly too, and that reclaim demotes this memory to node 1, in a
 * migration nested in the allocating one.
 */
static void hog_loop(struct region *r, pid_t parent, int cmd, int ack)
{
	size_t chunk = 64 * r->psize, total = 0;
	uint64_t command;

	pin(0);
	if (bind_node(0) || write(ack, "r", 1) != 1)
		_exit(1);
	while (read(cmd, &command, sizeof(command)) == sizeof(command)) {
		long stalls = direct_reclaims();

		/* A bound: demotion moves what it takes to node 1. */
		for (; total < HOG_MAX && direct_reclaims() == stalls;
		     total += chunk) {
			char *m = map_anon(chunk);

			if (m == MAP_FAILED)
				_exit(2);
			memset(m, 0x68, chunk);
		}
		if (write(ack, "d", 1) != 1)
			_exit(3);
	}
	_exit(0);
}

/* Move the watched pages, then the PROT_NONE tail, in one batch. */
static long move_with_tail(struct region *r, char *tail, int node)
{
	size_t n = NESTED_WATCHED;
	long moved = 0;

	for (size_t p = 0; p < n + NESTED_TAIL; p++) {
		r->pages[p] = p < n ? r->mem + p * r->psize :
			      tail + (p - n) * r->psize;
		r->nodes[p] = node;
	}
	if (syscall(SYS_move_pages, 0, n + NESTED_TAIL, r->pages, r->nodes,
		    r->status, MPOL_MF_MOVE) >= 0)
		for (size_t p = 0; p < n; p++)
			moved += r->status[p] == node;
	return moved;
}

/* How many memory tiers there are: demotion needs two. */
static int memory_tiers(void)
{
	DIR *d = opendir(MEMORY_TIERS);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "memory_tier", 11);
	if (d)
		closedir(d);
	return n;
}

/*
 * 15. A migration nested in another: each move_pages() to node 0 migrates
 * the watched pages of the region first, then a tail of PROT_NONE pages
 * (they add nothing to any TLB batch). Node 0 is full (hog_loop()), so
 * allocating the destinations enters direct reclaim, which demotes node 0
 * memory to node 1: a migration nested in the first one, while the watched
 * pages' flush waits in the task's read-only batch. The nested migration
 * must not take that batch over: the outer one would free the old pages
 * without their flush. They are handed at once to another process on node
 * 1, which writes them. Everything this process has on node 0 moves to
 * node 1 first: reclaim must not take it, as unmapping it would flush the
 * readers' CPUs. migrc_nested says whether the nested path ran.
 */
TEST_F_TIMEOUT(migrc, nested_reclaim, LONG_TIMEOUT)
{
	struct region *r = &self->r;
	unsigned long from = 1UL << 0, to = 1UL << 1;
	size_t tail_len = NESTED_TAIL * r->psize;
	long c[NCOUNTERS], migrated = 0;
	char *tail = map_anon(tail_len);
	struct helper hog, f;

	ASSERT_NE(tail, MAP_FAILED);
	/* One tier (arm64's VM has no HMAT): node 0 has nowhere to demote. */
	if (read_long(DEMOTION) < 0 || memory_tiers() < 2)
		SKIP(return, "node 0 has no demotion target");
	ASSERT_EQ(bind_node(1), 0);
	memset(tail, 0x74, tail_len);
	ASSERT_EQ(mprotect(tail, tail_len, PROT_NONE), 0);
	r->scan_lo = 0;
	r->scan_hi = NESTED_WATCHED;
	ASSERT_EQ(madvise(r->mem, r->npages * r->psize, MADV_DONTFORK), 0);
	ASSERT_EQ(madvise(tail, tail_len, MADV_DONTFORK), 0);
	ASSERT_TRUE(start_helper(&hog, r, hog_loop));
	ASSERT_TRUE(start_helper(&f, r, filler_loop));
	unshare_after_fork(self);
	/* After the fork: the readers' copies of their stacks move too. */
	ASSERT_GE(syscall(SYS_migrate_pages, 0, 8 * sizeof(from), &from, &to),
		  0);
	r->node = 1;
	/* Teardown puts both back, however the test ends. */
	self->demotion = read_long(DEMOTION);
	self->min_free = read_long(MIN_FREE);
	ASSERT_GE(self->min_free, 0);
	ASSERT_TRUE(write_long(DEMOTION, 1));
	/*
	 * kswapd refills a zone from below its low watermark up to its high
	 * one; with a small min_free_kbytes they are a few dozen pages apart,
	 * and one batch of 512 allocations gets below min, where the
	 * allocating task reclaims by itself.
	 */
	ASSERT_TRUE(write_long(MIN_FREE, NESTED_MIN_FREE));
	for (int t = 0; t < NESTED_TRIES; t++) {
		helper_do(&hog, 1);
		migrated += move_with_tail(r, tail, 0);
		r->node = 0;
		helper_do(&f, 1);
		usleep(30000);
		migrated += move_with_tail(r, tail, 1);
		r->node = 1;
	}
	write_long(MIN_FREE, self->min_free);
	write_long(DEMOTION, self->demotion);
	counters(c);
	ksft_print_msg("nested migrations: %ld; pages demoted by direct reclaim: %ld\n",
		       c[C_NESTED] - self->c0[C_NESTED],
		       c[C_DEMOTED] - self->c0[C_DEMOTED]);
	usleep(100000);
	finish(_metadata, self, migrated, true);
	EXPECT_TRUE(stop_helper(&f));
	EXPECT_TRUE(stop_helper(&hog));
	munmap(tail, tail_len);
	/* Otherwise this test tested nothing. */
	EXPECT_GE(migrated, NESTED_TRIES * NESTED_WATCHED);
	if (have_migrc()) {
		EXPECT_GT(c[C_DEMOTED], self->c0[C_DEMOTED]);
		EXPECT_GT(c[C_NESTED], self->c0[C_NESTED]);
	}
}

/*
 * 16. A source held by someone else: the test aid hold_src takes a
 * speculative reference on one migrated source at a time (as KSM or
 * GUP-fast do) and drops it as soon as it is the last one, from another
 * CPU; there the page is freed without a generation, allocated again at
 * once and written. The migration must have flushed before it let its own
 * reference go.
 */
TEST_F_TIMEOUT(migrc, src_held, LONG_TIMEOUT)
{
	struct region *r = &self->r;
	long c[NCOUNTERS], migrated = 0;
	char aid[160];

	snprintf(aid, sizeof(aid), "%s hold_src", self->broken);
	break_set(aid);
	for (int t = 0; t < 16; t++) {
		migrated += migrate(r);
		usleep(20000);
	}
	break_set(self->broken);
	EXPECT_EQ(migrated, 16L * (long)r->npages);
	/* Where pages were deferred, the aid must have held some at the end. */
	counters(c);
	if (c[C_DEFERRED] > self->c0[C_DEFERRED])
		EXPECT_GT(c[C_BUSY], self->c0[C_BUSY]);
	finish(_metadata, self, migrated, true);
}

#define PAGE_IDLE	"/sys/kernel/mm/page_idle/bitmap"
#define COLD_PAGES	64	/* one anonymous range: */
#define COLD_HOT	16	/* its first pages are written all along */

/*
 * Age @npages pages at @mem as reclaim does: page_idle clears the accessed
 * bit of their PTEs without a flush, so a CPU that keeps storing through a
 * cached entry leaves the PTE old. False if a page has no frame.
 */
static bool age_pages(int idle, int pagemap, char *mem, size_t npages,
		      size_t psize)
{
	for (size_t p = 0; p < npages; p++) {
		uint64_t pfn = pfn_of(pagemap, mem + p * psize, psize);
		uint64_t bit = 1ULL << (pfn % 64);

		/*
		 * The last 64 frames of memory may be fewer: page_idle ages
		 * them but reports 0 bytes written.
		 */
		if (!pfn || pwrite(idle, &bit, sizeof(bit),
				   pfn / 64 * sizeof(bit)) < 0)
			return false;
	}
	return true;
}

/*
 * How many of @npages pages at @mem page_idle still finds idle: none of
 * their PTEs became young since age_pages(). A page written all along
 * that is idle is written through a cached entry its PTE does not know of.
 */
static long still_idle(int idle, int pagemap, char *mem, size_t npages,
		       size_t psize)
{
	long n = 0;

	for (size_t p = 0; p < npages; p++) {
		uint64_t pfn = pfn_of(pagemap, mem + p * psize, psize), bits;

		if (pfn && pread(idle, &bits, sizeof(bits),
				 pfn / 64 * sizeof(bits)) == sizeof(bits))
			n += bits >> (pfn % 64) & 1;
	}
	return n;
}

/*
 * Bring every CPU of this mm up to date with its tlb_gen: an mprotect()
 * that takes write permission from the present page @sync flushes them
 * all. Then nothing a migration does on the way (the lazy-TLB switch back
 * after move_pages() drained the LRU caches on every CPU catches a CPU up)
 * can flush an entry a missing flush left behind.
 */
static bool catch_up(char *sync, size_t psize)
{
	*(volatile char *)sync += 1;
	return !mprotect(sync, psize, PROT_READ) &&
	       !mprotect(sync, psize, PROT_READ | PROT_WRITE);
}

/* Switch demotion on (teardown restores it); false without memory tiers. */
static bool demotion_on(FIXTURE_DATA(migrc) *self)
{
	self->demotion = read_long(DEMOTION);
	return self->demotion >= 0 && write_long(DEMOTION, 1);
}

/*
 * Why the cold tests cannot run here, or NULL: then demotion is on.
 * @idle: the page_idle bitmap, open
 */
static const char *cold_unsupported(FIXTURE_DATA(migrc) *self, int idle)
{
	if (idle < 0)
		return "no " PAGE_IDLE " (CONFIG_IDLE_PAGE_TRACKING)";
	if (self->r.ncpus < 3)
		return "needs 3 CPUs: two writers and CPU 0";
	if (!demotion_on(self))
		return "no " DEMOTION " (memory tiers)";
	return NULL;
}

/* As cold_unsupported(), for the tests of the NUMA scan: then it is often. */
static const char *cold_scan_unsupported(FIXTURE_DATA(migrc) *self, int idle)
{
	const char *why = cold_unsupported(self, idle);

	if (!why && !numa_scan_often(self))
		why = "no " NUMA_SCAN_DIR " (NUMA balancing)";
	return why;
}

/*
 * The range of the cold tests, written once, its first COLD_HOT pages
 * zeroed for the writers, on node 0; NULL if it cannot be made.
 */
static char *cold_range(struct region *r)
{
	size_t len = COLD_PAGES * r->psize;
	char *mem = map_anon(len);

	if (mem == MAP_FAILED)
		return NULL;
	memset(mem, 0x5a, len);
	memset(mem, 0, COLD_HOT * r->psize);
	if (move_range(r, mem, COLD_PAGES, 0) == COLD_PAGES)
		return mem;
	munmap(mem, len);
	return NULL;
}

/*
 * Start two writers, on CPUs 1 and 2, each incrementing its word of the
 * first @npages pages at @mem until *@stop, and let them cache writable
 * entries.
 */
static bool start_writers(struct writer *wr, char *mem, size_t npages,
			  size_t psize, volatile int *stop)
{
	for (int i = 0; i < 2; i++) {
		wr[i] = (struct writer){ .cpu = i + 1, .slot = i, .mem = mem,
			.npages = npages, .psize = psize, .stop = stop,
			.done = calloc(npages, sizeof(uint64_t)) };
		if (!wr[i].done || pthread_create(&wr[i].thread, NULL,
						  write_loop, &wr[i]))
			return false;
	}
	usleep(100000);
	return true;
}

/* Stop them: add the increments they made to @done, and lost to @lost. */
static void stop_writers(struct writer *wr, char *mem, size_t npages,
			 size_t psize, volatile int *stop, long *done,
			 long *lost)
{
	*stop = 1;
	for (int i = 0; i < 2; i++) {
		pthread_join(wr[i].thread, NULL);
		for (size_t p = 0; p < npages; p++) {
			*done += wr[i].done[p];
			*lost += wr[i].done[p] -
				((uint64_t *)(mem + p * psize))[i * 8];
		}
		free(wr[i].done);
	}
}

/*
 * 17. Cold writable pages (mm/migrc_cold.c): with demotion on, MADV_COLD
 * takes the write bit from exclusive anonymous pages of the top tier (node
 * 0) and flushes it with its own range, so that a migration after it
 * defers them like read-only ones. The range is written once; two writers
 * on CPUs 1 and 2 go on incrementing their word of its first COLD_HOT
 * pages. Each round brings the CPUs up to date (catch_up()), lets the
 * writers cache writable entries again, ages the range (page_idle), so
 * that the writers' PTEs are old while their CPUs still cache those
 * entries (the rounds where page_idle still finds a hot page idle show it),
 * then MADV_COLD, then moves the range to the other node: every other
 * round starts on node 0. A write
 * protection that no flush covered would let the writers store into the
 * sources after the copy: lost increments, and sources changed after their
 * copy for the shadow, which the test aid reuse_first hands out again while
 * the test runs.
 */
TEST_F(migrc, cold_writable)
{
	struct region *r = &self->r;
	size_t len = COLD_PAGES * r->psize;
	int idle = open(PAGE_IDLE, O_RDWR);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	long c1[NCOUNTERS], moved = 0, lost = 0, aged = 0, done = 0;
	long stale = 0;
	struct writer wr[2];
	volatile int stop = 0;
	int node = 0, synced = 0;
	char *mem, *sync, aid[160];
	const char *why;

	why = cold_unsupported(self, idle);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_GE(pagemap, 0);
	mem = cold_range(r);
	sync = map_anon(r->psize);
	ASSERT_NE(mem, NULL);
	ASSERT_NE(sync, MAP_FAILED);
	ASSERT_TRUE(start_writers(wr, mem, COLD_HOT, r->psize, &stop));
	snprintf(aid, sizeof(aid), "%s reuse_first", self->broken);
	break_set(aid);
	for (int round = 0; round < 8; round++) {
		synced += catch_up(sync, r->psize);
		usleep(10000);
		aged += age_pages(idle, pagemap, mem, COLD_PAGES, r->psize);
		usleep(10000);
		if (!node)
			stale += still_idle(idle, pagemap, mem, COLD_HOT,
					    r->psize) > 0;
		EXPECT_EQ(madvise(mem, len, MADV_COLD), 0);
		node = !node;
		moved += move_range(r, mem, COLD_PAGES, node);
	}
	usleep(100000);
	break_set(self->broken);
	stop_writers(wr, mem, COLD_HOT, r->psize, &stop, &done, &lost);
	counters(c1);
	ksft_print_msg("%ld of %d pages moved in 8 rounds, aged in %ld\n",
		       moved, 8 * COLD_PAGES, aged);
	ksft_print_msg("%ld of 4 rounds on node 0 with a hot page idle\n",
		       stale);
	ksft_print_msg("%ld PTEs write-protected cold, %ld pages deferred\n",
		       c1[C_COLD_WP] - self->c0[C_COLD_WP],
		       c1[C_DEFERRED] - self->c0[C_DEFERRED]);
	ksft_print_msg("%ld of %ld increments lost\n", lost, done);
	EXPECT_EQ(lost, 0);
	EXPECT_GT(done, 0);
	EXPECT_EQ(aged, 8);
	EXPECT_EQ(synced, 8);
	/* The writers kept storing through entries their PTEs did not show. */
	EXPECT_GT(stale, 0);
	EXPECT_EQ(moved, 8L * COLD_PAGES);
	/* The cold part at least lost its write bit in the first round. */
	if (have_migrc())
		EXPECT_GE(c1[C_COLD_WP] - self->c0[C_COLD_WP],
			  COLD_PAGES - COLD_HOT);
	finish(_metadata, self, moved, true);
	munmap(mem, len);
	munmap(sync, r->psize);
	close(pagemap);
	close(idle);
}

#define COLD_SCAN_ROUNDS	4

/*
 * Wait until counter @idx has grown by @want from @base, as NUMA scans
 * make it grow (one comes every few ms); give up after NUMA_SCAN_SECONDS.
 * Return how much it grew.
 */
static long counter_grows(int idx, long base, long want)
{
	double end = seconds() + NUMA_SCAN_SECONDS;
	long c[NCOUNTERS];

	do {
		usleep(1000);
		counters(c);
	} while (c[idx] - base < want && seconds() < end);
	return c[idx] - base;
}

/*
 * 17b. Cold writable pages a NUMA hinting scan finds (migrc_scan_cold()):
 * in tiering mode the scan leaves top-tier pages alone, and takes the write
 * bit of those whose PTE is old and whose page is on the inactive list
 * (where a new anonymous page starts), adding them to its own flush. As in
 * cold_writable, two writers keep storing into the first COLD_HOT pages of
 * a range written once, through entries page_idle made their PTEs forget.
 * Each round waits until the scan has write-protected PTEs of the range on
 * node 0, then moves it to node 1 and back. In the first round the scan
 * must take the write bit of the whole cold part. A write protection the
 * scan's flush did not cover lets the writers store into the sources after
 * the copy: lost increments, and sources changed after their copy.
 */
TEST_F_TIMEOUT(migrc, cold_scan, LONG_TIMEOUT)
{
	struct region *r = &self->r;
	size_t len = COLD_PAGES * r->psize;
	int idle = open(PAGE_IDLE, O_RDWR);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	long c0[NCOUNTERS], wp = 0, first = 0;
	long moved = 0, lost = 0, done = 0, aged = 0, synced = 0;
	struct writer wr[2];
	volatile int stop = 0;
	char *mem, *sync, aid[160];
	const char *why;

	why = cold_scan_unsupported(self, idle);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_GE(pagemap, 0);
	mem = cold_range(r);
	sync = map_anon(r->psize);
	ASSERT_NE(mem, NULL);
	ASSERT_NE(sync, MAP_FAILED);
	ASSERT_TRUE(start_writers(wr, mem, COLD_HOT, r->psize, &stop));
	snprintf(aid, sizeof(aid), "%s reuse_first", self->broken);
	break_set(aid);
	/* Memory tiering mode: the scan leaves node 0's pages alone. */
	ASSERT_TRUE(write_long(NUMA_BALANCING, 2));
	for (int round = 0; round < COLD_SCAN_ROUNDS; round++) {
		long want = round ? 1 : COLD_PAGES - COLD_HOT;

		/*
		 * The migrated pages wait in CPU 0's LRU cache, off the LRU
		 * the scan looks at: MADV_WILLNEED drains it.
		 */
		EXPECT_EQ(madvise(mem, len, MADV_WILLNEED), 0);
		synced += catch_up(sync, r->psize);
		usleep(10000);
		counters(c0);
		aged += age_pages(idle, pagemap, mem, COLD_PAGES, r->psize);
		wp = counter_grows(C_COLD_WP, c0[C_COLD_WP], want);
		ksft_print_msg("round %d: the scan write-protected %ld PTEs\n",
			       round, wp);
		if (!round)
			first = wp;
		moved += move_range(r, mem, COLD_PAGES, 1);
		moved += move_range(r, mem, COLD_PAGES, 0);
	}
	EXPECT_TRUE(write_long(NUMA_BALANCING, 0));
	usleep(100000);
	break_set(self->broken);
	stop_writers(wr, mem, COLD_HOT, r->psize, &stop, &done, &lost);
	ksft_print_msg("%ld of %d pages moved in %d rounds, aged in %ld\n",
		       moved, 2 * COLD_SCAN_ROUNDS * COLD_PAGES,
		       COLD_SCAN_ROUNDS, aged);
	ksft_print_msg("%ld of %ld increments lost\n", lost, done);
	EXPECT_EQ(lost, 0);
	EXPECT_GT(done, 0);
	EXPECT_EQ(aged, COLD_SCAN_ROUNDS);
	EXPECT_EQ(synced, COLD_SCAN_ROUNDS);
	EXPECT_EQ(moved, 2L * COLD_SCAN_ROUNDS * COLD_PAGES);
	if (have_migrc())
		EXPECT_GE(first, COLD_PAGES - COLD_HOT);
	finish(_metadata, self, moved, true);
	munmap(mem, len);
	munmap(sync, r->psize);
	close(pagemap);
	close(idle);
}

#define PAUSE_PAGES	512	/* twice what the scan takes before it judges */
#define PAUSE_ROUNDS	8
#define PAUSE_SECONDS	200	/* for all rounds: within the test's timeout */

/*
 * 17c. A VMA whose pages come back through write faults after the NUMA
 * scan took their write bits (migrc_cold_scan_begin()). Each round ages a
 * range on node 0 that nobody touches meanwhile (page_idle), so that the
 * scan in tiering mode finds old writable PTEs of inactive pages and takes
 * their write bits; then CPU 0 writes every page, and each write faults and
 * reuses the page; then the range moves to node 1 and back. Once the scan
 * has taken 256 bits there and at least half came back, it must pause in
 * the VMA: a later round finds it leaving the PTEs writable
 * (migrc_cold_skipped_reused). Every page must hold every round's write.
 * Without MIGRC one round checks the data.
 */
TEST_F_TIMEOUT(migrc, cold_scan_pause, LONG_TIMEOUT)
{
	struct region *r = &self->r;
	size_t len = PAUSE_PAGES * r->psize;
	int idle = open(PAGE_IDLE, O_RDWR);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	long c0[NCOUNTERS], c[NCOUNTERS], taken = 0, paused = 0;
	long moved = 0, aged = 0, wrong = 0;
	int round, rounds = have_migrc() ? PAUSE_ROUNDS : 1;
	double end = seconds() + PAUSE_SECONDS;
	const char *why;
	char *mem;

	why = cold_scan_unsupported(self, idle);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_GE(pagemap, 0);
	mem = map_anon(len);
	ASSERT_NE(mem, MAP_FAILED);
	memset(mem, 0, len);
	ASSERT_EQ(move_range(r, mem, PAUSE_PAGES, 0), PAUSE_PAGES);
	/* Memory tiering mode: the scan leaves node 0's pages alone. */
	ASSERT_TRUE(write_long(NUMA_BALANCING, 2));
	for (round = 0; round < rounds && !paused && seconds() < end;
	     round++) {
		/* The migrated pages wait in CPU 0's LRU cache: drain it. */
		EXPECT_EQ(madvise(mem, len, MADV_WILLNEED), 0);
		counters(c0);
		aged += age_pages(idle, pagemap, mem, PAUSE_PAGES, r->psize);
		/* Until the scan takes bits or leaves them. */
		do {
			usleep(1000);
			counters(c);
		} while (have_migrc() && c[C_COLD_WP] == c0[C_COLD_WP] &&
			 c[C_COLD_PAUSED] == c0[C_COLD_PAUSED] &&
			 seconds() < end);
		usleep(100000);
		counters(c);
		taken += c[C_COLD_WP] - c0[C_COLD_WP];
		paused = c[C_COLD_PAUSED] - c0[C_COLD_PAUSED];
		ksft_print_msg("round %d: the scan took %ld write bits, a pause left %ld\n",
			       round, c[C_COLD_WP] - c0[C_COLD_WP], paused);
		for (size_t p = 0; p < PAUSE_PAGES; p++)
			((volatile uint64_t *)(mem + p * r->psize))[0]++;
		moved += move_range(r, mem, PAUSE_PAGES, 1);
		moved += move_range(r, mem, PAUSE_PAGES, 0);
	}
	EXPECT_TRUE(write_long(NUMA_BALANCING, 0));
	for (size_t p = 0; p < PAUSE_PAGES; p++)
		wrong += ((uint64_t *)(mem + p * r->psize))[0] !=
			 (uint64_t)round;
	ksft_print_msg("%ld write bits taken in %d rounds, %ld pages wrong\n",
		       taken, round, wrong);
	EXPECT_EQ(wrong, 0);
	EXPECT_EQ(aged, round);
	EXPECT_EQ(moved, 2L * round * PAUSE_PAGES);
	if (have_migrc()) {
		/* The scan took bits first: the pause is its judgement. */
		EXPECT_GE(taken, PAUSE_PAGES / 2);
		EXPECT_GT(paused, 0);
	}
	finish(_metadata, self, moved, false);
	munmap(mem, len);
	close(pagemap);
	close(idle);
}

#define PROMOTE_PAGES	64

/*
 * Whether the break knob holds @word now: a test aid set by hand, which
 * the fixture leaves out of what it restores.
 */
static bool knob_has(const char *word)
{
	char raw[160];

	read_text(BREAK_FILE, raw, sizeof(raw));
	return strstr(raw, word);
}

/*
 * 14c. Promotions under the NUMA hinting scan in flight
 * (migrc_numa_fault_wait()). In tiering mode the scan makes the PTEs of
 * pages on node 1 PROT_NONE, and flushes once it is done with the VMA: with
 * the test aid numa_hold, 50 ms later. Two writers on CPUs 1 and 2 keep
 * storing into every page of the range through their writable entries
 * until then. CPU 0, which caches no entry of the range, reads it in that
 * window: each read is a hinting fault that promotes the page, and must
 * wait for the scan's flush instead of flushing by itself. The promotion
 * then has nothing to flush, or defers if another flush of the process is
 * pending (pte_accessible()): which one is timing, so the test requires
 * neither. Each round moves the range back to node 1 (with a flush: the
 * writers made it writable again) and waits for the next scan. No
 * increment may be lost.
 */
TEST_F_TIMEOUT(migrc, numa_promote_wait, LONG_TIMEOUT)
{
	struct region *r = &self->r;
	size_t len = PROMOTE_PAGES * r->psize;
	long c0[NCOUNTERS], c1[NCOUNTERS], lost = 0, done = 0, moved = 0;
	long scans = 0, waited = 0;
	struct writer wr[2];
	double end;
	volatile int stop = 0;
	volatile uint64_t sum = 0;
	char *mem, aid[160];

	if (r->ncpus < 3)
		SKIP(return, "needs 3 CPUs: two writers and CPU 0");
	/* One tier (arm64's VM has no HMAT): tiering mode scans nothing. */
	if (memory_tiers() < 2)
		SKIP(return, "node 1 is no lower tier");
	if (!numa_scan_often(self))
		SKIP(return, "no " NUMA_SCAN_DIR " (NUMA balancing)");
	mem = map_anon(len);
	ASSERT_NE(mem, MAP_FAILED);
	/* The writers fault the range in: CPU 0 never touches it first. */
	ASSERT_TRUE(start_writers(wr, mem, PROMOTE_PAGES, r->psize, &stop));
	/* The aid numa_nowait, set by hand, shows the test fails without. */
	snprintf(aid, sizeof(aid), "%s numa_hold%s", self->broken,
		 knob_has("numa_nowait") ? " numa_nowait" : "");
	break_set(aid);
	counters(c0);
	/* Memory tiering mode: the scan marks node 1's pages only. */
	ASSERT_TRUE(write_long(NUMA_BALANCING, 2));
	/*
	 * A round is lost if CPU 0 faults only after the scan's flush (a vCPU
	 * stalled on the host, or CPU 0 running the scan itself): try until
	 * one fault waited, for NUMA_SCAN_SECONDS. Without MIGRC nothing
	 * waits: one round checks the data.
	 */
	end = seconds() + NUMA_SCAN_SECONDS;
	while (!waited && seconds() < end) {
		moved += move_range(r, mem, PROMOTE_PAGES, 1);
		counters(c1);
		scans += counter_grows(C_NUMA_PTES, c1[C_NUMA_PTES], 1) > 0;
		for (size_t p = 0; p < PROMOTE_PAGES; p++)
			sum += *(volatile uint64_t *)(mem + p * r->psize + 256);
		counters(c1);
		waited = c1[C_NUMA_WAITED] - c0[C_NUMA_WAITED];
		if (!have_migrc())
			break;
	}
	EXPECT_TRUE(write_long(NUMA_BALANCING, 0));
	usleep(100000);
	break_set(self->broken);
	stop_writers(wr, mem, PROMOTE_PAGES, r->psize, &stop, &done, &lost);
	counters(c1);
	ksft_print_msg("%ld pages moved to node 1, %ld scans seen, %ld pages promoted\n",
		       moved, scans, c1[C_PROMOTED] - c0[C_PROMOTED]);
	ksft_print_msg("%ld faults saw the scan's flush, %ld gave up waiting\n",
		       c1[C_NUMA_WAITED] - c0[C_NUMA_WAITED],
		       c1[C_NUMA_TIMEOUT] - c0[C_NUMA_TIMEOUT]);
	ksft_print_msg("%ld PTEs refused under a pending scan\n",
		       c1[C_REFUSED_PENDING] - c0[C_REFUSED_PENDING]);
	ksft_print_msg("%ld of %ld increments lost\n", lost, done);
	EXPECT_EQ(lost, 0);
	EXPECT_GT(done, 0);
	EXPECT_GT(scans, 0);
	EXPECT_GT(c1[C_PROMOTED] - c0[C_PROMOTED], 0);
	if (have_migrc())
		EXPECT_GT(c1[C_NUMA_WAITED] - c0[C_NUMA_WAITED], 0);
	finish(_metadata, self, moved, false);
	munmap(mem, len);
}

/* Pin process @pid to @cpu. */
static bool pin_pid(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !sched_setaffinity(pid, sizeof(set), &set);
}

/* One step of lazy_cpu_cow's child, told through a pipe: 0 on EOF. */
static char await(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? c : 0;
}

/*
 * lazy_cpu_cow's child: caches the region's translations on CPU 1, then
 * sleeps there, so that CPU 1 idles in lazy TLB mode with its mm loaded.
 * Woken on CPU 2, it writes its own copy of every page.
 */
static int lazy_child(char *mem, size_t npages, size_t psize, int in, int out)
{
	volatile uint64_t sum = 0;

	if (!pin(1))
		return 1;
	for (size_t p = 0; p < npages; p++)
		sum += *(volatile uint64_t *)(mem + p * psize);
	if (write(out, "r", 1) != 1 || await(in) != 'w')
		return 2;
	for (size_t p = 0; p < npages; p++)
		*(volatile uint64_t *)(mem + p * psize) = NEWER;	/* a copy */
	if (write(out, "d", 1) != 1 || await(in) != 'x')
		return 3;
	for (size_t p = 0; p < npages; p++)
		if (*(uint64_t *)(mem + p * psize) != NEWER)
			return 4;
	return 0;
}

/*
 * lazy_cpu_cow's parent of the child above, on CPU 0 only: it migrates
 * the shared region while CPU 1 idles lazily on the child's mm, lets the
 * child write its copies from CPU 2, then writes the migrated copy it is
 * left with, in place (the write fault reuses the page).
 */
static int lazy_parent(size_t npages, size_t psize)
{
	/* Pages both processes map move only with MPOL_MF_MOVE_ALL. */
	struct region r = { .psize = psize, .npages = npages,
			    .move_flags = MPOL_MF_MOVE_ALL };
	int down[2], up[2], status, ret = 10;
	pid_t child;

	r.pages = calloc(npages, sizeof(*r.pages));
	r.nodes = calloc(npages, sizeof(*r.nodes));
	r.status = calloc(npages, sizeof(*r.status));
	r.mem = map_anon(npages * psize);
	if (!r.pages || !r.nodes || !r.status || r.mem == MAP_FAILED ||
	    pipe(down) || pipe(up))
		return 11;
	for (size_t p = 0; p < npages; p++)
		*(uint64_t *)(r.mem + p * psize) = expected(p);
	/*
	 * Clean PTEs: a dirty one of a page shared since fork() is never
	 * deferred. Read-only in both processes once fork() shared them.
	 */
	if (!place(&r, r.mem, 0) || madvise(r.mem, npages * psize, MADV_FREE))
		return 12;
	child = fork();
	if (child < 0)
		return 13;
	if (child == 0)
		_exit(lazy_child(r.mem, npages, psize, down[0], up[1]));
	if (await(up[0]) != 'r')
		goto out;
	usleep(100000);		/* CPU 1 idles, lazily on the child's mm */
	ret = 14;
	if (migrate(&r) != (long)npages)
		goto out;
	ret = 15;
	if (!pin_pid(child, 2) || write(down[1], "w", 1) != 1 ||
	    await(up[0]) != 'd')
		goto out;
	for (size_t p = 0; p < npages; p++)
		*(volatile uint64_t *)(r.mem + p * psize) = NEWDATA;
	ret = 16;
	for (size_t p = 0; p < npages; p++)
		if (*(uint64_t *)(r.mem + p * psize) != NEWDATA)
			goto out;
	ret = 0;
out:
	if (write(down[1], "x", 1) != 1 || waitpid(child, &status, 0) != child ||
	    !exited_ok(status))
		ret = ret ? ret : 17;
	return ret;
}

/*
 * 18. A CPU idle in lazy TLB mode: a child that cached the region on CPU 1
 * sleeps, and CPU 1 idles with the child's mm loaded. Its parent, which
 * never ran on CPU 1, migrates the shared region: CPU 1 is in the child's
 * part of the read-only batch. The child, moved to CPU 2, writes its own
 * copy of every page: that copy-on-write flushes the child's mm without
 * CPU 1, which x86 skips in lazy mode. The parent then writes the
 * migrated copy it alone maps, in place: MIGRC flushes the parent's CPUs
 * only. CPU 1 never flushed, but it catches up with the child's tlb_gen
 * before it uses a translation of it again: the shadow must not report it
 * (it did: CI stop 41, in ksm_functional_tests), and the data must hold.
 */
TEST_F(migrc, lazy_cpu_cow)
{
	unsigned long long sum[4] = { 0 };
	struct region *r = &self->r;
	int status;
	pid_t parent;

	if (r->ncpus < 3)
		SKIP(return, "needs 3 CPUs");
	/* Their CPUs idle too: only the child may ever run on CPU 1. */
	stop_readers(r, sum);
	parent = fork();
	ASSERT_GE(parent, 0);
	if (parent == 0)
		_exit(lazy_parent(r->npages, r->psize));
	ASSERT_EQ(waitpid(parent, &status, 0), parent);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
	ASSERT_TRUE(start_readers(r));
	finish(_metadata, self, r->npages, true);
}

TEST_HARNESS_MAIN
