/*
 * testutil.c - temporary files, test data paths and a random stream for
 * the unit tests.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[64];

/* Every path handed out stays referenced here, so that the leak checker
 * sees it reachable until exit (tests keep paths for their whole run),
 * and is freed then. Without the reads at exit the compiler drops the
 * stores to an array nobody reads, and valgrind sees every path lost. */
#define MAX_PATHS 4096
static char *paths[MAX_PATHS];
static size_t n_paths;

static void forget_paths(void)
{
	while (n_paths > 0)
		free(paths[--n_paths]);
}

static char *remember(char *p)
{
	if (n_paths == 0)
		atexit(forget_paths);
	if (n_paths < MAX_PATHS)
		paths[n_paths++] = p;
	return p;
}

static void remove_tmp_dir(void)
{
	char cmd[128];

	if (tmp_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp_dir);
	}
}

const char *tmp_path(const char *name)
{
	char *p;

	if (!tmp_dir[0]) {
		strcpy(tmp_dir, "/tmp/ht-test-XXXXXX");
		if (!mkdtemp(tmp_dir))
			abort();
		atexit(remove_tmp_dir);
	}
	if (asprintf(&p, "%s/%d-%s", tmp_dir, (int)getpid(), name) < 0)
		abort();
	return remember(p);
}

const char *tmp_file_with(const char *name, const void *data, size_t len)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		abort();
	return path;
}

void *read_whole_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		if (got == 0)
			break;
		n += got;
	}
	fclose(f);
	*len = n;
	return buf;
}

const char *testdata(const char *name)
{
	const char *dir = getenv("HT_TESTDATA");
	char *p;

	if (asprintf(&p, "%s/%s", dir ? dir : "testdata", name) < 0)
		abort();
	return remember(p);
}

static uint64_t random_state;

void test_random_seed(uint64_t seed)
{
	random_state = seed;
}

uint64_t test_random(void)
{
	uint64_t z = (random_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}
