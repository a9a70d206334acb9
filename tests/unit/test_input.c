/*
 * test_input.c - the inputs the analysis commands read twice
 * (cli/load-dump.h): a file replaced or rewritten between two passes is
 * refused ("the file changed while it was read") rather than answered
 * from two traces, and a stream that no input form starts as is refused
 * before anything is copied. Links the CLI's load-dump.c and cli.c, as
 * no command-level test can replace a file between two passes on cue.
 */
#include <criterion/criterion.h>

#include "cli/load-dump.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char trace_a[] =
	"heaptrace: 1\nruntime: testa\nevents: []\n";
static const char trace_b[] =
	"heaptrace: 1\nruntime: testb\nevents: []\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f);
	cr_assert_eq(fputs(text, f) >= 0, true);
	cr_assert_eq(fclose(f), 0);
}

static char *temp_path(const char *name)
{
	static char dir[] = "/tmp/test_input.XXXXXX";
	char *p;

	if (dir[strlen(dir) - 1] == 'X')
		cr_assert(mkdtemp(dir));
	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

/* Opens in twice, with change() between, and says whether the second
 * open was refused. */
static bool refused_after(const char *path, void (*change)(const char *))
{
	struct input in;
	struct ht_reader *r;

	cr_assert_eq(input_prepare(&in, path, NULL), 0);
	r = input_open(&in);
	cr_assert(r, "the first pass opens");
	ht_reader_close(r);
	if (change)
		change(path);
	r = input_open(&in);
	ht_reader_close(r);
	return r == NULL;
}

static void rewrite(const char *path)
{
	write_file(path, trace_b); /* same size, new bytes and time */
	/* a time one second on: st_mtim may be coarse */
	{
		struct timespec t[2] = {{time(NULL) + 1, 0}, {time(NULL) + 1, 0}};

		cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	}
}

static void replace(const char *path)
{
	char *other = temp_path("other.yaml");

	write_file(other, trace_b);
	cr_assert_eq(rename(other, path), 0);
	free(other);
}

Test(input, unchanged_file_is_read_twice)
{
	char *path = temp_path("same.yaml");

	write_file(path, trace_a);
	cr_assert_not(refused_after(path, NULL));
	free(path);
}

Test(input, file_rewritten_between_passes_is_refused)
{
	char *path = temp_path("rewritten.yaml");

	write_file(path, trace_a);
	cr_assert(refused_after(path, rewrite));
	free(path);
}

Test(input, file_replaced_between_passes_is_refused)
{
	char *path = temp_path("replaced.yaml");

	write_file(path, trace_a);
	cr_assert(refused_after(path, replace));
	free(path);
}

Test(input, device_of_no_form_is_refused_before_copying)
{
	struct input in;

	cr_assert_eq(input_prepare(&in, "/dev/zero", NULL), -1);
}
