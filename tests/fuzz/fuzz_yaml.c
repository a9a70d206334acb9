/*
 * fuzz_yaml.c - fuzz target: any bytes as the YAML text form. The reader
 * must refuse or read them without crashing or reading out of bounds; and
 * what it reads must survive the round trips the commands make:
 *   - `cat` is a fixed point: the canonical text of what was read reads
 *     back to the same canonical text;
 *   - `convert` then `cat`: recording the events into a .ht and reading
 *     that back gives the same canonical text, whenever the recorder takes
 *     every event (it refuses enumeration values without a name).
 */
#include "fuzz.h"

#include "lib/common/codec.h"
#include "lib/read/source.h"
#include "lib/read/textform.h"

#include <heaptrace/record.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Round trips through a .ht only for events the recorder does not split
 * (a split object comes back as continuations: the same heap, other
 * events). Its buffers are this size. */
#define RECORD_BUFFER (1u << 20)

struct text {
	char *data;
	size_t size;
};

static void text_free(struct text *t)
{
	free(t->data);
	memset(t, 0, sizeof(*t));
}

/*
 * Reads every event of r into canonical text (t) and, when rec is not
 * NULL, records each into it. Returns 0 when the whole input was read,
 * -1 when the reader stopped at an error. *recordable turns false when
 * the recorder refused an event or would have split one.
 */
static int canonical(struct ht_reader *r, struct text *t,
		     struct ht_recorder *rec, bool *recordable)
{
	struct yaml_writer *w;
	struct ht_error err;
	struct ht_event ev;
	FILE *out;
	int rc;

	memset(t, 0, sizeof(*t));
	out = open_memstream(&t->data, &t->size);
	if (!out)
		fuzz_fail("open_memstream: %s", strerror(errno));
	w = yaml_writer_open(out, "fuzz", ht_reader_header(r), &err);
	FUZZ_CHECK(w, "cannot write the header that was read: %s",
		   err.message);
	while ((rc = ht_reader_next(r, &ev, &err)) == 1) {
		fuzz_digest_event(0, &ev);
		FUZZ_CHECK(yaml_writer_event(w, &ev, &err) == 0,
			   "cannot write an event that was read: %s",
			   err.message);
		if (!rec || !*recordable)
			continue;
		if (codec_event_bound(&ev) > RECORD_BUFFER / 2 ||
		    ht_record_event(rec, &ev) != HT_OK)
			*recordable = false;
	}
	FUZZ_CHECK(rc == 0 || rc == -1, "ht_reader_next returned %d", rc);
	if (rc < 0)
		fuzz_check_error(&err, "yaml reader");
	FUZZ_CHECK(yaml_writer_close(w, &err) == 0, "closing the writer: %s",
		   err.message);
	fclose(out);
	return rc;
}

static struct ht_recorder *record_into(int fd, const struct ht_header *h)
{
	const struct ht_record_options o = {
		.buffer_size = RECORD_BUFFER,
		.buffers = 2,
	};
	struct ht_recorder *rec;
	struct ht_error err;

	rec = ht_recorder_open_fd(dup(fd), "fuzz.ht", h, &o, &err);
	FUZZ_CHECK(rec, "the recorder refused the header that was read: %s",
		   err.message);
	return rec;
}

/* The .ht the recorder wrote, read back to canonical text. */
static void read_back_ht(int fd, struct text *t)
{
	struct ht_reader *r;
	struct ht_error err;
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *bytes = malloc(size > 0 ? (size_t)size : 1);

	FUZZ_CHECK(size > 0 && bytes, "the recorder wrote nothing");
	FUZZ_CHECK(pread(fd, bytes, (size_t)size, 0) == size, "pread");
	r = fuzz_reader(bytes, (size_t)size, FUZZ_HT, FUZZ_SEEKABLE, &err);
	FUZZ_CHECK(r, "the recorded trace does not open: %s", err.message);
	FUZZ_CHECK(canonical(r, t, NULL, NULL) == 0,
		   "the recorded trace does not read back");
	ht_reader_close(r);
	free(bytes);
}

static void check_same(const struct text *a, const struct text *b,
		       const char *what)
{
	if (a->size == b->size && memcmp(a->data, b->data, a->size) == 0)
		return;
	fprintf(stderr, "--- first:\n%.*s\n--- then:\n%.*s\n",
		(int)a->size, a->data, (int)b->size, b->data);
	fuzz_fail("%s changed the canonical text", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct text first, again, via_ht;
	struct ht_recorder *rec;
	struct ht_reader *r;
	struct ht_error err;
	bool recordable = true;
	int fd, rc;

	r = fuzz_reader(data, size, FUZZ_YAML, FUZZ_SEEKABLE, &err);
	if (!r)
		return 0;
	fd = memfd_create("fuzz-yaml", 0);
	if (fd < 0)
		fuzz_fail("memfd_create: %s", strerror(errno));
	rec = record_into(fd, ht_reader_header(r));
	rc = canonical(r, &first, rec, &recordable);
	ht_reader_close(r);
	if (ht_recorder_close(rec, &err) != HT_OK)
		fuzz_fail("recording into memory failed: %s", err.message);
	if (rc < 0)
		goto done;

	r = fuzz_reader((const uint8_t *)first.data, first.size, FUZZ_YAML,
			FUZZ_PIPE, &err);
	FUZZ_CHECK(r, "canonical text does not open: %s", err.message);
	FUZZ_CHECK(canonical(r, &again, NULL, NULL) == 0,
		   "canonical text does not read back");
	ht_reader_close(r);
	check_same(&first, &again, "reading back");
	text_free(&again);

	if (recordable) {
		read_back_ht(fd, &via_ht);
		check_same(&first, &via_ht, "a round trip through .ht");
		text_free(&via_ht);
	}
done:
	text_free(&first);
	close(fd);
	return 0;
}
