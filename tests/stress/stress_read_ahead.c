/*
 * stress_read_ahead.c - the .ht reader's read_ahead thread under
 * ThreadSanitizer (Criterion cannot start under it; test_damage.c covers
 * the same outcomes at every byte). A trace of many chunks, whole, cut at
 * many offsets and with a byte damaged in many chunks, is read with
 * read_ahead off and on: the events, the error and the loss must be the
 * same. Readers closed early must leave no thread and no memory behind.
 * A plain test: exit status 0 when every case holds.
 *
 * Usage: stress_read_ahead DIR
 */
#include <heaptrace/record.h>
#include <heaptrace/trace.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBJECTS 300000
#define CUTS 97

static const char *dir;
static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "stress_read_ahead: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	failures++;
}

static void path_in_dir(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

/* One thread's allocations, small buffers: many chunks. */
static void record_trace(const char *path)
{
	const struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "stress",
		.pointer_size = 8,
	};
	const struct ht_record_options small = { .buffer_size = 16 << 10,
						 .buffers = 3,
						 .max_threads = 2 };
	struct ht_recorder *rec;
	struct ht_error err;

	rec = ht_recorder_open(path, &header, &small, &err);
	if (!rec) {
		fprintf(stderr, "stress_read_ahead: %s\n", err.message);
		exit(1);
	}
	ht_class(rec, 1, "Node", true, 24);
	for (uint64_t i = 0; i < OBJECTS; i++)
		ht_object_allocated(rec, 0x1000 + 8 * i, 1, 24 + i % 5);
	if (ht_recorder_close(rec, &err) != HT_OK) {
		fprintf(stderr, "stress_read_ahead: %s\n", err.message);
		exit(1);
	}
}

/* What a read yields: a digest of every event, the end and the loss. */
struct outcome {
	bool opened;
	int rc;
	uint64_t events;
	uint64_t digest;
	char message[512];
	struct ht_loss loss;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static struct outcome read_trace(const char *path, bool ahead)
{
	const struct ht_reader_options options = { .read_ahead = ahead };
	struct outcome o;
	struct ht_error err;
	struct ht_event ev;
	struct ht_reader *r = ht_reader_open_with(path, &options, &err);

	memset(&o, 0, sizeof(o));
	o.digest = 0xcbf29ce484222325ull;
	if (!r) {
		snprintf(o.message, sizeof(o.message), "%s", err.message);
		return o;
	}
	o.opened = true;
	while ((o.rc = ht_reader_next(r, &ev, &err)) == 1) {
		o.events++;
		o.digest = mix(o.digest, ev.type);
		if (ev.type == HT_EV_OBJECT_ALLOCATED)
			o.digest = mix(mix(o.digest, ev.u.object_allocated.id),
				       ev.u.object_allocated.size);
	}
	if (o.rc < 0)
		snprintf(o.message, sizeof(o.message), "%s", err.message);
	o.loss = *ht_reader_loss(r);
	ht_reader_close(r);
	return o;
}

static void compare(const char *what, const struct outcome *one,
		    const struct outcome *two)
{
	if (one->opened != two->opened || one->rc != two->rc ||
	    one->events != two->events || one->digest != two->digest)
		fail("%s: %llu events (rc %d) on one thread, %llu (rc %d) "
		     "reading ahead",
		     what, (unsigned long long)one->events, one->rc,
		     (unsigned long long)two->events, two->rc);
	if (strcmp(one->message, two->message) != 0)
		fail("%s: \"%s\" on one thread, \"%s\" reading ahead", what,
		     one->message, two->message);
	if (memcmp(&one->loss, &two->loss, sizeof(one->loss)) != 0)
		fail("%s: the losses differ", what);
}

static void read_both_ways(const char *what, const char *path)
{
	struct outcome one = read_trace(path, false);
	struct outcome two = read_trace(path, true);

	compare(what, &one, &two);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0)
		exit(1);
	rewind(f);
	data = malloc((size_t)n ? (size_t)n : 1);
	if (!data || fread(data, 1, (size_t)n, f) != (size_t)n)
		exit(1);
	fclose(f);
	*len = (size_t)n;
	return data;
}

static void spill(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		exit(1);
}

/* Cut and damaged copies: the scan meets each where the thread already
 * read past it, or has not yet reached it. */
static void read_damaged_copies(const char *whole)
{
	char path[4096], what[64];
	size_t len;
	uint8_t *data = slurp(whole, &len);

	path_in_dir(path, sizeof(path), "read_ahead_damaged.ht");
	for (size_t i = 1; i <= CUTS; i++) {
		size_t cut = len * i / (CUTS + 1);

		spill(path, data, cut);
		snprintf(what, sizeof(what), "cut at %zu", cut);
		read_both_ways(what, path);
	}
	for (size_t i = 1; i <= CUTS; i++) {
		size_t at = len * i / (CUTS + 1);

		data[at] ^= 0x20;
		spill(path, data, len);
		data[at] ^= 0x20;
		snprintf(what, sizeof(what), "byte %zu damaged", at);
		read_both_ways(what, path);
	}
	remove(path);
	free(data);
}

/* Closed after a few events, or before any: the thread is joined. */
static void close_early(const char *path)
{
	const struct ht_reader_options options = { .read_ahead = true };
	struct ht_error err;
	struct ht_event ev;

	for (int after = 0; after < 2000; after += 250) {
		struct ht_reader *r = ht_reader_open_with(path, &options,
							  &err);

		if (!r) {
			fail("%s", err.message);
			return;
		}
		for (int i = 0; i < after; i++)
			if (ht_reader_next(r, &ev, &err) != 1)
				fail("reading the whole trace: %s",
				     err.message);
		ht_reader_close(r);
	}
}

int main(int argc, char **argv)
{
	char path[4096];
	struct outcome whole;

	if (argc != 2) {
		fprintf(stderr, "usage: stress_read_ahead DIR\n");
		return 2;
	}
	dir = argv[1];
	path_in_dir(path, sizeof(path), "read_ahead.ht");
	record_trace(path);
	whole = read_trace(path, true);
	if (whole.rc != 0 || whole.events != OBJECTS + 1)
		fail("whole trace: %llu events, rc %d: %s",
		     (unsigned long long)whole.events, whole.rc,
		     whole.message);
	read_both_ways("whole trace", path);
	read_damaged_copies(path);
	close_early(path);
	remove(path);
	if (failures)
		return 1;
	printf("stress_read_ahead: %d cuts and %d damaged bytes read alike "
	       "with and without read_ahead\n", CUTS, CUTS);
	return 0;
}
