// SPDX-License-Identifier: GPL-2.0
/*
 * memfill MIB [NODE]: allocate MIB mebibytes of anonymous memory, write
 * every page, then read it all back and check it.  With NODE, the memory is
 * bound to that node (MPOL_BIND), so filling past the node's size forces
 * reclaim there; with a lower tier present, reclaim demotes instead of
 * failing.  Used to check that the VM has a working demotion path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_BIND 2

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	size_t len = mib << 20, page = sysconf(_SC_PAGESIZE), i, bad = 0;
	unsigned char *p;

	if (!mib) {
		fprintf(stderr, "usage: memfill MIB [NODE]\n");
		return 2;
	}
	if (argc > 2) {
		unsigned long mask = 1UL << strtoul(argv[2], NULL, 0);

		if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask,
			    8 * sizeof(mask) + 1)) {
			perror("set_mempolicy");
			return 1;
		}
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (i = 0; i < len; i += page)
		p[i] = (unsigned char)(i / page);
	for (i = 0; i < len; i += page)
		bad += p[i] != (unsigned char)(i / page);
	printf("memfill: %zu MiB touched, %zu bad pages\n", mib, bad);
	return bad ? 1 : 0;
}
