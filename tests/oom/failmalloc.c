/*
 * failmalloc.c - an LD_PRELOAD library that makes memory run out on
 * purpose, to see heaptrace meet it: malloc, calloc, realloc and the
 * aligned allocators fail from the Nth call on (HT_FAIL_ALLOC=N), as they
 * do when memory is really gone. With HT_COUNT_ALLOC=FILE nothing fails
 * and the number of calls is written to FILE at exit, so that a test
 * knows how many points of failure a command has.
 *
 * It forwards to glibc's own __libc_* allocators rather than looking the
 * next malloc up with dlsym, which itself allocates.
 */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong calls;
static unsigned long fail_from; /* 0: never */

__attribute__((constructor)) static void read_settings(void)
{
	const char *n = getenv("HT_FAIL_ALLOC");

	if (n)
		fail_from = strtoul(n, NULL, 10);
}

__attribute__((destructor)) static void write_count(void)
{
	const char *path = getenv("HT_COUNT_ALLOC");
	FILE *f;

	if (!path || fail_from)
		return;
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%lu\n", (unsigned long)atomic_load(&calls));
		fclose(f);
	}
}

/* Whether this call is one that fails. */
static int out_of_memory(void)
{
	unsigned long n = atomic_fetch_add(&calls, 1) + 1;

	if (fail_from && n >= fail_from) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *malloc(size_t size)
{
	return out_of_memory() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return out_of_memory() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return out_of_memory() ? NULL : __libc_realloc(p, size);
}

void *memalign(size_t align, size_t size)
{
	return out_of_memory() ? NULL : __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

int posix_memalign(void **p, size_t align, size_t size)
{
	void *q = memalign(align, size);

	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}
