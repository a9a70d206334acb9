/*
 * test_reader.c - reading .ht files through ht_reader: the header, the
 * events in order with their positions, the index, files whose writer died
 * (no index), empty traces, inputs that cannot seek, inputs that are
 * not traces or that a closed file would never contain; and the form
 * guessed from an input's first bytes (reader_sniff_form).
 */
#include <criterion/criterion.h>

#include "lib/common/codec.h"
#include "htbuild.h"
#include "lib/read/forms.h"
#include "lib/read/source.h"
#include "testutil.h"
#include "lib/common/varint.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* Reads r to the end, checking each event against b's; returns the last
 * ht_reader_next result and the number of events read. */
static int read_all(struct ht_reader *r, const struct htb *b, size_t *n,
		    struct ht_error *err)
{
	struct ht_event ev;
	int rc;

	*n = 0;
	while ((rc = ht_reader_next(r, &ev, err)) == 1) {
		cr_assert_lt(*n, b->n_events, "more events than written");
		cr_assert(htb_event_equal(&ev, &b->events[*n]), "event %zu: %s",
			  *n, htb_event_diff(&ev, &b->events[*n]));
		(*n)++;
	}
	return rc;
}

static struct ht_reader *open_file(const struct htb *b, const char *name,
				   struct ht_error *err)
{
	return ht_reader_open(tmp_file_with(name, b->data, b->len), err);
}

static struct ht_reader *must_open(const struct htb *b, const char *name)
{
	struct ht_error err;
	struct ht_reader *r = open_file(b, name, &err);

	cr_assert_not_null(r, "%s", err.message);
	return r;
}

static void assert_reads_whole(struct ht_reader *r, const struct htb *b)
{
	struct ht_error err;
	size_t n;

	cr_assert_eq(read_all(r, b, &n, &err), 0, "%s", err.message);
	cr_assert_eq(n, b->n_events);
	cr_assert_not(ht_reader_loss(r)->lost);
}

/* ---- a well-formed file ------------------------------------------------ */

Test(reader, header_fields_are_read)
{
	struct htb b;
	struct ht_reader *r;
	const struct ht_header *h;

	htb_sample(&b, true);
	r = must_open(&b, "sample.ht");
	cr_assert_str_eq(ht_reader_format(r), "ht");
	h = ht_reader_header(r);
	cr_assert_eq(h->version, HT_FORMAT_VERSION);
	cr_assert_str_eq(h->runtime, "clr");
	cr_assert_str_eq(h->runtime_version, "8.0.1");
	cr_assert_eq(h->pointer_size, 8);
	cr_assert(h->reports_survivors);
	cr_assert_str_eq(h->command_line, "dotnet app.dll --serve");
	cr_assert(h->has_start_time);
	cr_assert_eq(h->start_time, 1700000000);
	cr_assert_eq(h->n_metadata, 2);
	cr_assert_str_eq(h->metadata[0].key, "host");
	cr_assert_str_eq(h->metadata[1].value, "server");
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, events_come_in_recorded_order)
{
	struct htb b;
	struct ht_reader *r;

	htb_sample(&b, true);
	r = must_open(&b, "order.ht");
	assert_reads_whole(r, &b);
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, the_end_stays_the_end)
{
	struct htb b;
	struct ht_reader *r;
	struct ht_event ev;
	struct ht_error err;

	htb_sample(&b, true);
	r = must_open(&b, "end.ht");
	assert_reads_whole(r, &b);
	cr_assert_eq(ht_reader_next(r, &ev, &err), 0);
	cr_assert_eq(ht_reader_next(r, &ev, &err), 0);
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, positions_name_event_index_chunk_and_payload_offset)
{
	struct htb b;
	struct ht_reader *r;
	struct ht_event ev;
	struct ht_error err;
	size_t chunk = 0;

	htb_sample(&b, true);
	r = must_open(&b, "positions.ht");
	for (uint64_t i = 0; ht_reader_next(r, &ev, &err) == 1; i++) {
		struct ht_position pos = ht_reader_position(r);

		while (i >= b.chunks[chunk].first_event +
				    b.chunks[chunk].events)
			chunk++;
		cr_assert_eq(pos.event_index, i);
		cr_assert_eq(pos.offset, b.chunks[chunk].offset, "event %llu",
			     (unsigned long long)i);
		cr_assert_eq(pos.chunk_offset, b.payload_offsets[i]);
		cr_assert_eq(pos.line, 0);
		cr_assert_eq(pos.column, 0);
	}
	cr_assert_eq(chunk, b.n_chunks - 1, "every chunk was visited");
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, first_event_of_each_chunk_is_at_payload_offset_zero)
{
	struct htb b;
	struct ht_reader *r;
	struct ht_event ev;
	struct ht_error err;
	size_t chunk = 0;

	htb_sample(&b, true);
	r = must_open(&b, "chunk_start.ht");
	for (uint64_t i = 0; ht_reader_next(r, &ev, &err) == 1; i++) {
		if (chunk < b.n_chunks && i == b.chunks[chunk].first_event) {
			cr_assert_eq(ht_reader_position(r).chunk_offset, 0);
			chunk++;
		}
	}
	cr_assert_eq(chunk, b.n_chunks);
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, index_is_read_at_open)
{
	struct htb b;
	struct ht_reader *r;
	const struct ht_index_info *ix;

	htb_sample(&b, true);
	r = must_open(&b, "index.ht");
	ix = ht_reader_index(r);
	cr_assert_not_null(ix);
	cr_assert(ix->present, "before the first event");
	cr_assert_eq(ix->events, b.n_events);
	cr_assert_eq(ix->dumps, 3);
	cr_assert_eq(ix->gcs, 2);
	cr_assert_eq(ix->chunks, 6);
	cr_assert_eq(ix->recorder_violations[HT_V_CONTINUATION_MISSING], 2);
	cr_assert_eq(ix->recorder_violations[HT_V_GC_NESTED], 1);
	cr_assert_eq(ix->recorder_violations[HT_V_DUMP_NESTED], 0);
	cr_assert_eq(ix->dropped_events, 5);
	assert_reads_whole(r, &b);
	cr_assert(ht_reader_index(r)->present);
	ht_reader_close(r);
	htb_free(&b);
}

/* ---- files whose writer died, and empty ones --------------------------- */

Test(reader, file_without_index_is_read_whole_without_error)
{
	struct htb b;
	struct ht_reader *r;

	htb_sample(&b, false);
	r = must_open(&b, "crashed.ht");
	cr_assert_not(ht_reader_index(r)->present);
	assert_reads_whole(r, &b);
	cr_assert_not(ht_reader_index(r)->present, "the file had none");
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, file_ending_after_the_index_without_trailer_is_whole)
{
	struct htb b;
	struct ht_reader *r;

	htb_sample(&b, false);
	htb_index_chunk(&b);
	r = must_open(&b, "no_trailer.ht");
	cr_assert_not(ht_reader_index(r)->present, "no trailer to find it");
	assert_reads_whole(r, &b);
	cr_assert(ht_reader_index(r)->present, "met by the scan");
	cr_assert_eq(ht_reader_index(r)->dropped_events, 5);
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, trace_of_only_a_header_is_empty)
{
	struct htb b;
	struct ht_reader *r;

	htb_start(&b, htb_sample_header());
	r = must_open(&b, "header_only.ht");
	assert_reads_whole(r, &b);
	cr_assert_not(ht_reader_index(r)->present);
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, closed_trace_without_events_is_empty)
{
	struct htb b;
	struct ht_reader *r;
	const struct ht_index_info *ix;

	htb_start(&b, htb_sample_header());
	htb_finish(&b);
	r = must_open(&b, "empty.ht");
	ix = ht_reader_index(r);
	cr_assert(ix->present);
	cr_assert_eq(ix->events, 0);
	cr_assert_eq(ix->chunks, 0);
	assert_reads_whole(r, &b);
	ht_reader_close(r);
	htb_free(&b);
}

Test(reader, chunk_without_events_is_allowed)
{
	struct htb b;
	struct ht_reader *r;

	htb_start(&b, htb_sample_header());
	htb_chunk(&b, NULL, 0);
	htb_finish(&b);
	r = must_open(&b, "empty_chunk.ht");
	assert_reads_whole(r, &b);
	ht_reader_close(r);
	htb_free(&b);
}

/* ---- inputs that cannot seek -------------------------------------------- */

Test(reader, pipe_is_read_whole_and_learns_the_index_at_its_end)
{
	struct htb b;
	struct ht_reader *r;
	struct ht_error err;
	pid_t child;
	int status;

	htb_sample(&b, true);
	r = htb_open_pipe(b.data, b.len, &child, &err);
	cr_assert_not_null(r, "%s", err.message);
	cr_assert_not(ht_reader_index(r)->present, "a pipe cannot seek");
	assert_reads_whole(r, &b);
	cr_assert(ht_reader_index(r)->present);
	cr_assert_eq(ht_reader_index(r)->events, b.n_events);
	cr_assert_eq(ht_reader_index(r)->gcs, 2);
	ht_reader_close(r);
	cr_assert_eq(waitpid(child, &status, 0), child);
	htb_free(&b);
}

Test(reader, pipe_without_index_is_read_whole)
{
	struct htb b;
	struct ht_reader *r;
	struct ht_error err;
	pid_t child;

	htb_sample(&b, false);
	r = htb_open_pipe(b.data, b.len, &child, &err);
	cr_assert_not_null(r, "%s", err.message);
	assert_reads_whole(r, &b);
	cr_assert_not(ht_reader_index(r)->present);
	ht_reader_close(r);
	waitpid(child, NULL, 0);
	htb_free(&b);
}

Test(reader, dash_reads_standard_input)
{
	struct htb b;
	struct ht_reader *r;
	struct ht_error err;
	int fds[2];
	pid_t child;

	htb_sample(&b, true);
	cr_assert_eq(pipe(fds), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		close(fds[0]);
		if (write(fds[1], b.data, b.len) != (ssize_t)b.len)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_geq(dup2(fds[0], STDIN_FILENO), 0);
	close(fds[0]);
	r = ht_reader_open("-", &err);
	cr_assert_not_null(r, "%s", err.message);
	assert_reads_whole(r, &b);
	ht_reader_close(r);
	waitpid(child, NULL, 0);
	htb_free(&b);
}

/* ---- not traces --------------------------------------------------------- */

static struct ht_error refused(const void *data, size_t len, const char *name)
{
	struct ht_error err;
	struct ht_reader *r = ht_reader_open(tmp_file_with(name, data, len),
					     &err);

	cr_assert_null(r, "%s was opened", name);
	return err;
}

Test(reader, wrong_version_is_refused_as_unsupported)
{
	struct htb b;
	struct ht_error err;

	htb_start_version(&b, htb_sample_header(), HT_FORMAT_VERSION + 1);
	htb_finish(&b);
	err = refused(b.data, b.len, "v4.ht");
	cr_assert_eq(err.code, HT_E_FORMAT);
	cr_assert(strstr(err.message, "unsupported format version 5"), "%s",
		  err.message);
	htb_free(&b);
}

Test(reader, other_binary_file_is_not_a_trace)
{
	const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
	struct ht_error err = refused(png, sizeof(png), "image.png");

	cr_assert_eq(err.code, HT_E_FORMAT);
	cr_assert(strstr(err.message, "not a heaptrace file"), "%s",
		  err.message);
	cr_assert(strstr(err.message, "image.png: byte 0: "), "%s",
		  err.message);
}

Test(reader, trace_mangled_by_newline_conversion_says_so)
{
	struct htb b;
	struct ht_error err;
	uint8_t *mangled;

	htb_sample(&b, true);
	mangled = malloc(b.len + 1);
	memcpy(mangled, b.data, 7);
	mangled[7] = '\r';
	memcpy(mangled + 8, b.data + 7, b.len - 7);
	err = refused(mangled, b.len + 1, "crlf.ht");
	cr_assert_eq(err.code, HT_E_FORMAT);
	cr_assert(strstr(err.message, "newline conversion"), "%s",
		  err.message);
	free(mangled);
	htb_free(&b);
}

Test(reader, file_header_cut_short_is_truncated)
{
	struct htb b;

	htb_start(&b, htb_sample_header());
	for (size_t cut = 1; cut < b.len; cut++) {
		struct ht_error err = refused(b.data, cut, "short.ht");

		cr_assert_eq(err.code, HT_E_TRUNCATED, "cut %zu: %s", cut,
			     err.message);
	}
	htb_free(&b);
}

Test(reader, file_header_crc_mismatch_is_corrupt)
{
	struct htb b;
	struct ht_error err;

	htb_sample(&b, true);
	b.data[20] ^= 0x04; /* inside the header payload */
	err = refused(b.data, b.len, "header_crc.ht");
	cr_assert_eq(err.code, HT_E_CORRUPT);
	cr_assert(strstr(err.message, "file header CRC mismatch"), "%s",
		  err.message);
	htb_free(&b);
}

Test(reader, file_header_payload_over_the_limit_is_refused)
{
	uint8_t fixed[HT_FILE_HEADER_FIXED + 8] = { 0 };
	struct ht_error err;

	memcpy(fixed, HT_MAGIC, HT_MAGIC_LEN);
	put_le32(fixed + 8, HT_FORMAT_VERSION);
	put_le32(fixed + 12, HT_MAX_HEADER_PAYLOAD + 1);
	err = refused(fixed, sizeof(fixed), "huge_header.ht");
	cr_assert_eq(err.code, HT_E_CORRUPT);
	cr_assert(strstr(err.message, "byte 12: "), "%s", err.message);
}

Test(reader, undecodable_header_payload_is_corrupt)
{
	struct htb b;
	struct ht_error err;
	const uint8_t bad[] = { 0, 0, 3, 0, 0, 0 }; /* pointer size 3 */

	memset(&b, 0, sizeof(b));
	htb_append(&b, HT_MAGIC, HT_MAGIC_LEN);
	{
		uint8_t v[8];

		put_le32(v, HT_FORMAT_VERSION);
		put_le32(v + 4, sizeof(bad));
		htb_append(&b, v, 8);
	}
	htb_append(&b, bad, sizeof(bad));
	{
		uint8_t crc[4];

		put_le32(crc, (uint32_t)crc32(0, b.data, (uInt)b.len));
		htb_append(&b, crc, 4);
	}
	err = refused(b.data, b.len, "bad_header.ht");
	cr_assert_eq(err.code, HT_E_CORRUPT);
	cr_assert(strstr(err.message, "pointer size"), "%s", err.message);
	htb_free(&b);
}

/* ---- what a closed file never contains ---------------------------------- */

/* Reads to the end expecting an error; returns it and the events read. */
static struct ht_error read_fails(const struct htb *b, const char *name,
				  size_t *n)
{
	struct ht_reader *r = must_open(b, name);
	struct ht_error err, again;
	struct ht_event ev;

	cr_assert_eq(read_all(r, b, n, &err), -1, "%s should fail", name);
	cr_assert(ht_reader_loss(r)->lost);
	cr_assert_eq(ht_reader_loss(r)->offset, err.offset);
	cr_assert_eq(ht_reader_next(r, &ev, &again), -1, "failure is sticky");
	cr_assert_str_eq(again.message, err.message);
	ht_reader_close(r);
	return err;
}

Test(reader, bytes_after_the_trailer_are_an_error_after_every_event)
{
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_sample(&b, true);
	htb_append(&b, "junk", 4);
	err = read_fails(&b, "junk.ht", &n);
	cr_assert_eq(n, b.n_events);
	cr_assert_eq(err.code, HT_E_CORRUPT);
	cr_assert_eq(err.offset, b.index_end + HT_TRAILER_SIZE);
	cr_assert(strstr(err.message, "bytes after the trailer"), "%s",
		  err.message);
	htb_free(&b);
}

Test(reader, bad_trailer_is_an_error_after_every_event)
{
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_sample(&b, true);
	b.data[b.len - 1] = 'Y';
	err = read_fails(&b, "bad_trailer.ht", &n);
	cr_assert_eq(n, b.n_events);
	cr_assert_eq(err.offset, b.index_end);
	cr_assert(strstr(err.message, "trailer"), "%s", err.message);
	htb_free(&b);
}

Test(reader, trailer_pointing_elsewhere_is_an_error)
{
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_sample(&b, false);
	htb_index_chunk(&b);
	b.index_offset = b.chunks[2].offset;
	htb_trailer(&b);
	err = read_fails(&b, "misdirected.ht", &n);
	cr_assert_eq(n, b.n_events);
	cr_assert_eq(err.offset, b.index_end);
	htb_free(&b);
}

Test(reader, index_disagreeing_with_the_events_is_an_error)
{
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_sample(&b, false);
	b.n_chunks--; /* the index will count one chunk fewer */
	htb_finish(&b);
	b.n_chunks++;
	err = read_fails(&b, "miscounted.ht", &n);
	cr_assert_eq(n, b.n_events);
	cr_assert_eq(err.offset, b.index_offset);
	cr_assert(strstr(err.message, "the index counts"), "%s", err.message);
	htb_free(&b);
}

Test(reader, index_chunk_must_start_at_the_event_count)
{
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_sample(&b, false);
	b.n_events--; /* the index chunk's first event will be one short */
	htb_finish(&b);
	b.n_events++;
	err = read_fails(&b, "index_start.ht", &n);
	cr_assert_eq(n, b.n_events);
	cr_assert_eq(err.offset, b.index_offset);
	cr_assert(strstr(err.message, "chunk starts at event"), "%s",
		  err.message);
	htb_free(&b);
}

Test(reader, index_chunk_holding_events_is_corrupt)
{
	struct htb b;
	struct ht_error err;
	const uint8_t empty_index[] = { 0, 0, 0, 0, 0, 0, 0 };
	size_t n;

	htb_start(&b, htb_sample_header());
	htb_raw_chunk(&b, HT_CHUNK_INDEX, empty_index, sizeof(empty_index),
		      0, 1);
	err = read_fails(&b, "index_events.ht", &n);
	cr_assert_eq(err.offset, b.header_end);
	cr_assert(strstr(err.message, "index chunk claims 1 events"), "%s",
		  err.message);
	htb_free(&b);
}

Test(reader, events_after_the_index_are_an_error)
{
	struct htb b;
	const struct ht_event gc_finished = { .type = HT_EV_GC_FINISHED };
	struct ht_error err;
	size_t n;

	htb_sample(&b, true);
	htb_chunk(&b, &gc_finished, 1);
	err = read_fails(&b, "after_index.ht", &n);
	cr_assert_eq(n, b.n_events - 1);
	cr_assert_eq(err.offset, b.index_end + HT_TRAILER_SIZE);
	htb_free(&b);
}

Test(reader, missing_chunk_is_caught_by_the_event_count)
{
	struct htb b, gap;
	struct ht_error err;
	size_t n;

	htb_sample(&b, false);
	/* the same file without its third chunk */
	memset(&gap, 0, sizeof(gap));
	htb_append(&gap, b.data, b.chunks[2].offset);
	htb_append(&gap, b.data + b.chunks[3].offset,
		   b.len - b.chunks[3].offset);
	gap.events = b.events;
	gap.n_events = b.n_events;
	err = read_fails(&gap, "gap.ht", &n);
	cr_assert_eq(n, b.chunks[2].first_event);
	cr_assert_eq(err.offset, b.chunks[2].offset);
	cr_assert(strstr(err.message, "chunk starts at event"), "%s",
		  err.message);
	gap.events = NULL;
	htb_free(&gap);
	htb_free(&b);
}

/* A chunk of the given events, whose header claims `claimed` of them. */
static void chunk_claiming(struct htb *b, const struct ht_event *evs,
			   size_t n, uint32_t claimed)
{
	uint8_t raw[1024];
	struct codec_enc e;

	codec_enc_init(&e, raw, sizeof(raw));
	for (size_t i = 0; i < n; i++)
		codec_put_event(&e, &evs[i]);
	htb_raw_chunk(b, HT_CHUNK_EVENTS, raw, codec_enc_used(&e), 0, claimed);
	for (size_t i = 0; i < n; i++) {
		if (b->n_events == b->events_cap) {
			b->events_cap = b->events_cap ? 2 * b->events_cap : 16;
			b->events = realloc(b->events, b->events_cap *
						       sizeof(*b->events));
		}
		b->events[b->n_events++] = evs[i];
	}
}

static const struct ht_event two_events[] = {
	{ .type = HT_EV_THREAD, .u.thread = { 1, "a" } },
	{ .type = HT_EV_THREAD, .u.thread = { 2, "b" } },
};

Test(reader, chunk_holding_fewer_events_than_claimed_is_corrupt)
{
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_start(&b, htb_sample_header());
	chunk_claiming(&b, two_events, 2, 3);
	err = read_fails(&b, "fewer.ht", &n);
	cr_assert_eq(n, 2, "the events the chunk does hold are delivered");
	cr_assert_eq(err.code, HT_E_CORRUPT);
	cr_assert(strstr(err.message, "holds 2 events, its header says 3"),
		  "%s", err.message);
	htb_free(&b);
}

Test(reader, chunk_holding_more_events_than_claimed_is_corrupt)
{
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_start(&b, htb_sample_header());
	chunk_claiming(&b, two_events, 2, 1);
	err = read_fails(&b, "more.ht", &n);
	cr_assert_eq(n, 1, "no event past the claimed count");
	cr_assert(strstr(err.message, "more events than"), "%s", err.message);
	htb_free(&b);
}

Test(reader, undecodable_event_stops_after_the_chunks_good_events)
{
	struct htb b;
	struct ht_error err;
	uint8_t raw[64];
	struct codec_enc e;
	size_t n;

	htb_start(&b, htb_sample_header());
	codec_enc_init(&e, raw, sizeof(raw));
	codec_put_event(&e, &two_events[0]);
	*e.p++ = 0xee; /* no such event type */
	htb_raw_chunk(&b, HT_CHUNK_EVENTS, raw, codec_enc_used(&e), 0, 2);
	b.events = malloc(sizeof(*b.events));
	b.events[0] = two_events[0];
	b.n_events = 1;
	err = read_fails(&b, "undecodable.ht", &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(err.offset, b.header_end);
	cr_assert(strstr(err.message, "undecodable event 1 of the chunk"),
		  "%s", err.message);
	cr_assert(strstr(err.message, "unknown event type"), "%s",
		  err.message);
	htb_free(&b);
}

/* A hand-made chunk around a compressed payload of `raw` bytes. */
static void odd_chunk(struct htb *b, const uint8_t *stored, size_t stored_len,
		      uint32_t raw_length)
{
	struct ht_chunk_header h = {
		.kind = HT_CHUNK_EVENTS,
		.compression = HT_COMPRESS_ZLIB,
		.stored_length = (uint32_t)stored_len,
		.raw_length = raw_length,
		.first_event = 0,
		.events = 1,
		.payload_crc = (uint32_t)crc32(0, stored, (uInt)stored_len),
	};

	htb_chunk_as_is(b, &h, stored, stored_len);
}

static struct ht_error odd_chunk_error(size_t cut, int delta)
{
	const uint8_t raw[] = { HT_EV_GC_FINISHED };
	size_t stored_len;
	uint8_t *stored = htb_compress(raw, sizeof(raw), &stored_len);
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_start(&b, htb_sample_header());
	odd_chunk(&b, stored, stored_len - cut,
		  (uint32_t)((int)sizeof(raw) + delta));
	err = read_fails(&b, "odd.ht", &n);
	cr_assert_eq(n, 0);
	cr_assert_eq(err.code, HT_E_CORRUPT);
	cr_assert_eq(err.offset, b.header_end);
	free(stored);
	htb_free(&b);
	return err;
}

Test(reader, payload_inflating_to_a_length_other_than_announced_is_corrupt)
{
	struct ht_error err = odd_chunk_error(0, 1);

	cr_assert(strstr(err.message, "less than"), "%s", err.message);
	err = odd_chunk_error(0, -1);
	cr_assert(strstr(err.message, "more than"), "%s", err.message);
}

Test(reader, compressed_stream_cut_short_is_corrupt)
{
	/* CRC of the shortened stream is right: zlib must notice */
	struct ht_error err = odd_chunk_error(3, 0);

	cr_assert(strstr(err.message, "compressed"), "%s", err.message);
}

Test(reader, impossible_compression_ratio_is_refused_before_inflating)
{
	const uint8_t raw[] = { HT_EV_GC_FINISHED };
	size_t stored_len;
	uint8_t *stored = htb_compress(raw, sizeof(raw), &stored_len);
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_start(&b, htb_sample_header());
	odd_chunk(&b, stored, stored_len, HT_MAX_CHUNK_PAYLOAD);
	err = read_fails(&b, "ratio.ht", &n);
	cr_assert_eq(err.code, HT_E_CORRUPT);
	cr_assert(strstr(err.message, "more than zlib can produce"), "%s",
		  err.message);
	free(stored);
	htb_free(&b);
}

Test(reader, chunk_claiming_a_payload_longer_than_the_file_is_truncated)
{
	const uint8_t raw[] = { HT_EV_GC_FINISHED };
	size_t stored_len;
	uint8_t *stored = htb_compress(raw, sizeof(raw), &stored_len);
	struct ht_chunk_header h = {
		.kind = HT_CHUNK_EVENTS, .compression = HT_COMPRESS_ZLIB,
		.stored_length = HT_MAX_CHUNK_PAYLOAD,
		.raw_length = 1, .events = 1,
	};
	struct htb b;
	struct ht_error err;
	size_t n;

	htb_start(&b, htb_sample_header());
	htb_chunk_as_is(&b, &h, stored, stored_len);
	err = read_fails(&b, "long_claim.ht", &n);
	cr_assert_eq(err.code, HT_E_TRUNCATED);
	cr_assert(strstr(err.message, "file ends inside a chunk payload"),
		  "%s", err.message);
	free(stored);
	htb_free(&b);
}

Test(reader, error_message_has_file_byte_and_cause)
{
	struct htb b;
	struct ht_error err;
	size_t n;
	char expect[64];

	htb_sample(&b, true);
	b.data[b.chunks[3].offset + HT_CHUNK_HEADER_SIZE + 2] ^= 0x01;
	err = read_fails(&b, "message.ht", &n);
	snprintf(expect, sizeof(expect), "message.ht: byte %llu: chunk payload",
		 (unsigned long long)b.chunks[3].offset);
	cr_assert(strstr(err.message, expect), "%s", err.message);
	cr_assert(strstr(err.message, "CRC mismatch"), "%s", err.message);
	htb_free(&b);
}

/* ---- The form from the first bytes ------------------------------------- */

static const char *form_of_bytes(const char *head, size_t n)
{
	return reader_sniff_form((const unsigned char *)head, n);
}

#define SNIFF(head) form_of_bytes(head, sizeof(head) - 1)

static void assert_form(const char *got, const char *want, const char *what)
{
	if (!want)
		cr_assert_null(got, "%s: taken for %s", what, got);
	else
		cr_assert(got && strcmp(got, want) == 0, "%s: %s, not %s", what,
			  got ? got : "no form", want);
}

/*
 * Text is taken for YAML while it goes on as well-formed UTF-8 of no
 * control character but tabs and line breaks; a character cut off at the
 * end of the bytes looked at is fine, its rest still to come. A stray
 * continuation byte, an overlong form, a surrogate, a byte UTF-8 never
 * uses is no form's, as /dev/zero and /dev/urandom are not.
 */
Test(sniff, text_goes_on_as_utf8)
{
	assert_form(SNIFF("heaptrace: 1\n"), "yaml", "ASCII");
	assert_form(SNIFF("name: \xc3\xa9t\xc3\xa9\t\r\n"), "yaml",
		    "two-byte characters, tab, CR LF");
	assert_form(SNIFF("\xef\xbb\xbfheaptrace"), "yaml", "byte order mark");
	assert_form(SNIFF("\xff\xfe"), "yaml", "UTF-16 byte order mark");
	assert_form(SNIFF("# \xf0\x9f\x98\x80"), "yaml", "past U+FFFF");
	assert_form(SNIFF("caf\xc3"), "yaml", "cut off after its lead byte");
	assert_form(SNIFF("# \xe2\x82"), "yaml", "cut off inside");
	assert_form(SNIFF("\xf0\x9f\x98"), "yaml", "cut off, three of four");
	assert_form(SNIFF("\xe2"), "yaml", "a lead byte alone");

	assert_form(SNIFF("caf\xc3("), NULL, "a lead byte not followed");
	assert_form(SNIFF("\x80" "abc"), NULL, "a stray continuation byte");
	assert_form(SNIFF("a\xe0\x80\x80"), NULL, "an overlong form");
	assert_form(SNIFF("a\xed\xa0\x80"), NULL, "a surrogate");
	assert_form(SNIFF("a\xf4\x90\x80\x80"), NULL, "past U+10FFFF");
	assert_form(SNIFF("\xc0\xaf"), NULL, "a byte UTF-8 never uses");
	assert_form(SNIFF("ab\x01"), NULL, "a control character");
	assert_form(SNIFF("ab\x7f"), NULL, "DEL");
	assert_form(form_of_bytes("\0\0\0\0", 4), NULL, "/dev/zero");
}

Test(sniff, the_other_forms)
{
	assert_form(form_of_bytes(HT_MAGIC, HT_MAGIC_LEN), "ht", ".ht magic");
	assert_form(SNIFF("JAVA PROFILE 1.0.2"), "hprof", "HPROF");
	assert_form(SNIFF("\x1f\x8b"), "gzip", "gzip magic");
	assert_form(SNIFF("\x1f\x00"), NULL, "0x1f not followed by 0x8b");
}
