// SPDX-License-Identifier: GPL-2.0
/*
 * memfill MIB: allocate MIB mebibytes of anonymous memory, write every page,
 * then read it all back once and check it.  Used to push node 0 past its
 * watermarks so that kswapd demotes to the lower tier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	size_t len = mib << 20, page = sysconf(_SC_PAGESIZE), i, bad = 0;
	unsigned char *p;

	if (!mib) {
		fprintf(stderr, "usage: memfill MIB\n");
		return 2;
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
