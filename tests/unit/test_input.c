/*
 * test_input.c - the inputs the analysis commands read twice
 * (cli/load-dump.h): a file replaced or rewritten between two passes is
 * refused ("the file changed while it was read") rather than answered
 * from two traces, and so is a .ht rewritten in place with its size and
 * time kept, by its chunks (lib/read/pass_log.h); a stream that no input
 * form starts as is refused
 * before anything is copied. Links the CLI's load-dump.c and cli.c, as
 * no command-level test can replace a file between two passes on cue.
 */
#include <criterion/criterion.h>

#include "cli/load-dump.h"
#include "htbuild.h"

#include <zlib.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
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
	static bool made;   /* not dir's last letter: a made name may end in X */
	char *p;

	if (!made) {
		cr_assert(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
		made = true;
	}
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

/* ---- a .ht rewritten in place ------------------------------------------ */

/*
 * The sample trace (six event chunks) with chunk k's payload changed but
 * its CRC right and every offset and length the same: a trace another
 * writer could have put in place of the first, byte for byte the size.
 */
static void rewritten_sample(const struct htb *a, size_t k, struct htb *b)
{
	const struct htb_chunk *c = &a->chunks[k];
	struct ht_chunk_header h;
	const char *why;
	uint8_t *stored;
	size_t len;

	cr_assert_lt(k, a->n_chunks);
	cr_assert_eq(chunk_header_get(a->data + c->offset, &h, &why), 0);
	len = h.stored_length;
	stored = malloc(len);
	cr_assert_not_null(stored);
	memcpy(stored, a->data + c->offset + HT_CHUNK_HEADER_SIZE, len);
	stored[len / 2] ^= 0x5a;
	h.payload_crc = (uint32_t)crc32(0, stored, (uInt)len);
	memset(b, 0, sizeof(*b));
	htb_append(b, a->data, c->offset);
	htb_chunk_as_is(b, &h, stored, len);
	htb_append(b, a->data + c->end, a->len - c->end);
	cr_assert_eq(b->len, a->len);
	free(stored);
}

static void write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert(f && fwrite(data, 1, len, f) == len && fclose(f) == 0);
}

/* Puts b in place of the file at path, in the same inode, and its time
 * back as it was: as a file system whose times are coarse shows it. */
static void rewrite_in_place(const char *path, const struct htb *b)
{
	struct stat st;
	struct timespec t[2];
	int fd;

	cr_assert_eq(stat(path, &st), 0);
	fd = open(path, O_WRONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, b->data, b->len, 0), (ssize_t)b->len);
	cr_assert_eq(close(fd), 0);
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* One pass over in: the events read, and the error that ended it in
 * *err (an empty message when none). */
static size_t read_pass(struct input *in, struct ht_error *err)
{
	struct ht_reader *r = input_open(in);
	struct ht_event ev;
	size_t n = 0;
	int rc;

	cr_assert_not_null(r, "the pass opens");
	memset(err, 0, sizeof(*err));
	while ((rc = ht_reader_next(r, &ev, err)) == 1)
		n++;
	ht_reader_close(r);
	if (rc == 0)
		err->message[0] = '\0';
	return n;
}

/*
 * Each later pass reads the chunks the first one read, at the same
 * offsets, with the same CRCs; when one differs, the file changed under
 * the command, which throws the pass away (input_end_pass): its size,
 * inode and time say nothing of it.
 */
static void rewritten_in_place_is_refused(const char *name,
					 const struct ht_reader_options *opts)
{
	char *path = temp_path(name);
	struct htb a, b;
	struct input in;
	struct ht_error err;
	char want[600];
	size_t first, k;

	htb_sample(&a, true);
	k = a.n_chunks - 2;
	rewritten_sample(&a, k, &b);
	write_bytes(path, a.data, a.len);
	cr_assert_eq(input_prepare(&in, path, opts), 0);
	first = read_pass(&in, &err);
	cr_assert_str_empty(err.message, "%s", err.message);
	cr_assert_eq(input_end_pass(&in), 0);
	cr_assert_eq(read_pass(&in, &err), first, "an unchanged file reads "
		     "the same");
	cr_assert_eq(input_end_pass(&in), 0);

	rewrite_in_place(path, &b);
	cr_assert_lt(read_pass(&in, &err), first);
	snprintf(want, sizeof(want), "%s: byte %llu: the file changed while "
		 "it was read", path, (unsigned long long)a.chunks[k].offset);
	cr_assert_eq(strncmp(err.message, want, strlen(want)), 0, "%s",
		     err.message);
	cr_assert(input_changed(&in));
	cr_assert_eq(input_end_pass(&in), -1);
	input_release(&in);
	htb_free(&a);
	htb_free(&b);
	free(path);
}

Test(input, ht_rewritten_in_place_with_its_time_kept_is_refused)
{
	rewritten_in_place_is_refused("in-place.ht", NULL);
}

/* The same when a second thread inflates the chunks ahead of the scan
 * (read_ahead, as stats reads): the pass log is the scan's. */
Test(input, ht_rewritten_in_place_is_refused_reading_ahead)
{
	const struct ht_reader_options ahead = {.read_ahead = true};

	rewritten_in_place_is_refused("in-place-ahead.ht", &ahead);
}

/* Only the chunks both passes read are compared: a first pass that
 * stopped early (as the scan for one dump does) leaves the rest of the
 * file to the next pass unchecked, and that is no change. */
Test(input, ht_pass_past_where_the_first_stopped_is_not_refused)
{
	char *path = temp_path("longer.ht");
	struct htb a;
	struct input in;
	struct ht_reader *r;
	struct ht_event ev;
	struct ht_error err;

	htb_sample(&a, true);
	write_bytes(path, a.data, a.len);
	cr_assert_eq(input_prepare(&in, path, NULL), 0);
	r = input_open(&in);
	cr_assert_not_null(r);
	cr_assert_eq(ht_reader_next(r, &ev, &err), 1);
	ht_reader_close(r);
	cr_assert_eq(input_end_pass(&in), 0);
	cr_assert_eq(read_pass(&in, &err), a.n_events);
	cr_assert_str_empty(err.message, "%s", err.message);
	cr_assert_eq(input_end_pass(&in), 0);
	input_release(&in);
	htb_free(&a);
	free(path);
}

Test(input, device_of_no_form_is_refused_before_copying)
{
	struct input in;

	cr_assert_eq(input_prepare(&in, "/dev/zero", NULL), -1);
}

/* Reads the first event of a pass over in, and stops there. */
static void read_one_event(struct input *in)
{
	struct ht_reader *r = input_open(in);
	struct ht_event ev;
	struct ht_error err;

	cr_assert_not_null(r, "the pass opens");
	cr_assert_eq(ht_reader_next(r, &ev, &err), 1);
	ht_reader_close(r);
}

/*
 * A pass that reads ahead logs only the chunks its scan took, as a pass
 * on one thread does: the second chunk, which the thread inflates while
 * the scan is in the first, is neither recorded by a first pass that
 * stops in the first chunk nor compared by a later one that does. A
 * change there changes nothing either pass answered; a later pass that
 * reads it is refused.
 */
Test(input, ht_chunks_read_ahead_but_not_taken_are_not_compared)
{
	const struct ht_reader_options ahead = {.read_ahead = true};
	char *path = temp_path("ahead-untaken.ht");
	struct htb a, b;
	struct input in;
	struct ht_error err;

	htb_sample(&a, true);
	rewritten_sample(&a, 1, &b);

	write_bytes(path, a.data, a.len);
	cr_assert_eq(input_prepare(&in, path, &ahead), 0);
	read_one_event(&in);
	cr_assert_eq(input_end_pass(&in), 0);
	rewrite_in_place(path, &b);
	read_pass(&in, &err); /* b's second chunk need not inflate */
	cr_assert_eq(input_end_pass(&in), 0, "the first pass stopped "
		     "before the second chunk: %s", err.message);
	input_release(&in);

	write_bytes(path, a.data, a.len);
	cr_assert_eq(input_prepare(&in, path, &ahead), 0);
	cr_assert_eq(read_pass(&in, &err), a.n_events);
	cr_assert_eq(input_end_pass(&in), 0);
	rewrite_in_place(path, &b);
	read_one_event(&in);
	cr_assert_eq(input_end_pass(&in), 0, "this pass stops before the "
		     "second chunk");
	read_pass(&in, &err);
	cr_assert_eq(input_end_pass(&in), -1, "this one reads it");
	input_release(&in);
	htb_free(&a);
	htb_free(&b);
	free(path);
}
