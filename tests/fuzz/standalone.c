/*
 * standalone.c - runs a fuzz target once on each file given, or on each
 * file of each directory given, without libFuzzer. This is how the seed
 * corpora and every input that once crashed a target are replayed as
 * plain tests in every build, gcc, the sanitizers and valgrind included.
 *
 * Usage: fuzz-TARGET FILE_OR_DIR...
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *data;
	size_t size;

	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	/* exactly size bytes, as libFuzzer hands them over: a read past the
	 * end is caught */
	size = (size_t)st.st_size;
	data = malloc(size ? size : 1);
	if (!data || fread(data, 1, size, f) != size) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of a directory in name order, so that runs repeat. */
static int run_dir(const char *dir, unsigned *runs)
{
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	DIR *d = opendir(dir);

	if (!d) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap = cap ? 2 * cap : 64) *
						  sizeof(*names));

			if (!p)
				break;
			names = p;
		}
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	if (n > 1) /* names is NULL when the folder is empty */
		qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && run_file(names[i]) < 0)
			rc = -1;
		else
			(*runs)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned runs = 0;
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc && rc == 0; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			rc = run_dir(argv[i], &runs);
		} else if ((rc = run_file(argv[i])) == 0) {
			runs++;
		}
	}
	if (rc < 0)
		return 1;
	printf("%s: %u inputs, no failure\n", argv[0], runs);
	return 0;
}
