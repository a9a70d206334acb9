/*
 * test_messages.c - the messages of heaptrace(1), DIAGNOSTICS, that a
 * command-level case cannot provoke (damage the shell cannot forge: a
 * chunk whose CRC is right around a payload that lies), each checked word
 * for word as the catalog gives it. The others are covered by the diag-*
 * cases of tests/cli.
 */
#include <criterion/criterion.h>

#include <heaptrace/record.h>

#include "lib/common/codec.h"
#include "htbuild.h"
#include "testutil.h"
#include "lib/common/varint.h"
#include "util/alloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const struct ht_event gc_finished = { .type = HT_EV_GC_FINISHED };

#define assert_says(err, text)                                          \
	cr_assert(strstr((err).message, (text)), "'%s' lacks '%s'",     \
		  (err).message, (text))

/* A chunk of the given stored bytes, whose header says what h says and
 * whose payload CRC is right. */
static struct ht_error stored_chunk_error(struct ht_chunk_header h,
					  const void *stored, size_t len)
{
	struct ht_error err;
	struct htb b;

	h.stored_length = (uint32_t)len;
	h.payload_crc = (uint32_t)crc32(0, stored, (uInt)len);
	htb_start(&b, htb_sample_header());
	htb_chunk_as_is(&b, &h, stored, len);
	err = htb_read_error(&b);
	htb_free(&b);
	return err;
}

static const struct ht_chunk_header events_chunk = {
	.kind = HT_CHUNK_EVENTS, .compression = HT_COMPRESS_ZLIB, .events = 1,
};

/* ---- chunk headers and payloads ------------------------------------------ */

Test(messages, unknown_chunk_kind_and_compression)
{
	const uint8_t raw[] = { HT_EV_GC_FINISHED };
	struct ht_chunk_header h = events_chunk;
	size_t len;
	uint8_t *stored = htb_compress(raw, sizeof(raw), &len);
	struct ht_error err;

	h.raw_length = sizeof(raw);
	h.kind = 3;
	err = stored_chunk_error(h, stored, len);
	assert_says(err, ": unknown chunk kind; ");
	h.kind = HT_CHUNK_EVENTS;
	h.compression = 2;
	err = stored_chunk_error(h, stored, len);
	assert_says(err, ": unknown chunk compression; ");
	free(stored);
}

Test(messages, payloads_that_do_not_inflate_as_announced)
{
	const uint8_t raw[] = { HT_EV_GC_FINISHED, HT_EV_GC_FINISHED };
	struct ht_chunk_header h = events_chunk;
	const uint8_t garbage[] = "not zlib at all";
	size_t len;
	uint8_t *stored = htb_compress(raw, sizeof(raw), &len);
	uint8_t longer[64];
	struct ht_error err;

	h.raw_length = sizeof(raw);
	err = stored_chunk_error(h, garbage, sizeof(garbage));
	assert_says(err, "bad compressed data in the chunk payload");
	err = stored_chunk_error(h, stored, len - 3);
	assert_says(err, "compressed chunk payload ends early");
	memcpy(longer, stored, len);
	memcpy(longer + len, "xyz", 3);
	err = stored_chunk_error(h, longer, len + 3);
	assert_says(err, "bytes after the compressed stream in the chunk "
			 "payload");
	h.raw_length = 1;
	err = stored_chunk_error(h, stored, len);
	assert_says(err, "chunk payload inflates to more than its header "
			 "says");
	h.raw_length = 3;
	err = stored_chunk_error(h, stored, len);
	assert_says(err, "chunk payload inflates to less than its header "
			 "says");
	free(stored);
}

Test(messages, chunk_holding_more_events_than_it_says)
{
	const struct ht_event two[] = { gc_finished, gc_finished };
	uint8_t raw[16];
	struct codec_enc e;
	struct ht_error err;
	struct htb b;

	codec_enc_init(&e, raw, sizeof(raw));
	codec_put_event(&e, &two[0]);
	codec_put_event(&e, &two[1]);
	htb_start(&b, htb_sample_header());
	htb_raw_chunk(&b, HT_CHUNK_EVENTS, raw, codec_enc_used(&e), 0, 1);
	err = htb_read_error(&b);
	assert_says(err, "chunk holds more events than the 1 its header says");
	htb_free(&b);
}

/* ---- events that do not decode ------------------------------------------- */

static struct ht_error event_error(const uint8_t *payload, size_t len)
{
	struct ht_error err;
	struct htb b;

	htb_start(&b, htb_sample_header());
	htb_raw_chunk(&b, HT_CHUNK_EVENTS, payload, len, 0, 1);
	err = htb_read_error(&b);
	htb_free(&b);
	cr_assert_eq(err.code, HT_E_CORRUPT, "%s", err.message);
	assert_says(err, "undecodable event 0 of the chunk, at byte 0 of its "
			 "payload: ");
	return err;
}

Test(messages, undecodable_events_say_why)
{
	static const struct {
		uint8_t bytes[16];
		size_t len;
		const char *why;
	} cases[] = {
		{ { 0x42 }, 1, "unknown event type" },
		{ { HT_EV_THREAD }, 1, "bad or truncated id" },
		{ { HT_EV_THREAD, 7, 4, 'a', 0, 'b' }, 6,
		  "string contains a NUL byte" },
		{ { HT_EV_CLASS, 0x40, 2, 0 }, 4, "unknown class options" },
		{ { HT_EV_GC_STARTED, 0x7f }, 2, "unknown gc_started options" },
		{ { HT_EV_GC_STARTED, 0, 0xff, 0xff, 0xff, 0xff, 0x7f }, 7,
		  "bad generation set" },
		{ { HT_EV_BEGIN_CONTAINER, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0 },
		  8, "bad container type" },
		/* root kinds announced, one root, its kind byte missing */
		{ { HT_EV_ROOT_REFERENCES, 1, 1, 2, 0 }, 5,
		  "truncated byte array" },
		{ { HT_EV_ROOT_REFERENCES, 0x7f }, 2,
		  "unknown root_references options" },
		{ { HT_EV_OBJECT_REFERENCES, 0x7f }, 2,
		  "unknown object_references options" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ht_error err = event_error(cases[i].bytes, cases[i].len);

		assert_says(err, cases[i].why);
	}
}

/* ---- the end of the file ------------------------------------------------- */

Test(messages, damaged_index_and_trailer)
{
	const uint8_t garbage[] = { 0xff, 0xff, 0xff };
	struct ht_error err;
	struct htb b;
	uint64_t first_index;

	/* an index whose entries do not decode */
	htb_start(&b, htb_sample_header());
	htb_chunk(&b, &gc_finished, 1);
	htb_raw_chunk(&b, HT_CHUNK_INDEX, garbage, sizeof(garbage), 1, 0);
	err = htb_read_error(&b);
	assert_says(err, "bad index chunk: bad entry count");
	htb_free(&b);

	/* a trailer that is not one */
	htb_start(&b, htb_sample_header());
	htb_chunk(&b, &gc_finished, 1);
	htb_index_chunk(&b);
	htb_append(&b, "sixteen bytes...", 16);
	err = htb_read_error(&b);
	assert_says(err, "bad trailer after the index chunk");
	htb_free(&b);

	/* two index chunks, the trailer pointing at the second */
	htb_start(&b, htb_sample_header());
	htb_chunk(&b, &gc_finished, 1);
	htb_index_chunk(&b);
	first_index = b.index_offset;
	htb_index_chunk(&b);
	htb_trailer(&b);
	err = htb_read_error(&b);
	cr_assert_eq(err.offset, first_index);
	assert_says(err, "index chunk where the trailer does not point");
	htb_free(&b);
}

/* ---- the recorder --------------------------------------------------------- */

Test(messages, trace_header_over_its_limit)
{
	static char value[60000];
	struct ht_metadata meta[300];
	struct ht_header h = {
		.version = HT_FORMAT_VERSION, .pointer_size = 8,
		.n_metadata = 300, .metadata = meta,
	};
	char keys[300][8];
	struct ht_error err;

	memset(value, 'v', sizeof(value) - 1);
	for (int i = 0; i < 300; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		meta[i].key = keys[i];
		meta[i].value = value;
	}
	cr_assert_null(ht_recorder_open(tmp_path("big-header.ht"), &h, NULL,
					&err));
	cr_assert_eq(err.code, HT_E_LIMIT);
	assert_says(err, "big-header.ht: trace header of ");
	assert_says(err, " bytes is over the limit of 16777216");
}

/* ---- the recording API: libheaptrace(3), ERRORS --------------------------- */

/* What ht_recorder_open says, and returns, for these options and header. */
static struct ht_error open_error(const struct ht_record_options *o,
				  const struct ht_header *h)
{
	struct ht_error err;
	struct ht_recorder *rec = ht_recorder_open(tmp_path("api.ht"), h, o,
						   &err);

	cr_assert_null(rec, "the recorder opened");
	return err;
}

#define assert_refused(err, code_, text)                                  \
	do {                                                              \
		assert_says(err, text);                                   \
		cr_assert_eq((err).code, code_, "'%s': code %d",          \
			     (err).message, (int)(err).code);             \
	} while (0)

Test(messages, recording_options_out_of_range)
{
	const struct ht_header *h = htb_sample_header();
	struct ht_record_options o = {.compression_level = -1};
	struct ht_error err;

	o.buffer_size = (64u << 20) + 1;
	err = open_error(&o, h);
	assert_refused(err, HT_E_INVALID, "api.ht: buffer size 67108865 is "
		       "over the limit of 67108864 bytes");
	o.buffer_size = 0;
	o.buffers = 65536;
	err = open_error(&o, h);
	assert_refused(err, HT_E_INVALID, "api.ht: 65536 buffers or 256 "
		       "threads: at most 65535 and 65536");
	o.buffers = 0;
	o.max_threads = 65537;
	err = open_error(&o, h);
	assert_refused(err, HT_E_INVALID, "api.ht: 32 buffers or 65537 "
		       "threads: at most 65535 and 65536");
	o.max_threads = 0;
	o.compression_level = 10;
	err = open_error(&o, h);
	assert_refused(err, HT_E_INVALID, "api.ht: compression level 10 is "
		       "not in 0..9 (or -1)");
}

Test(messages, recording_header_mistakes)
{
	struct ht_header h = *htb_sample_header();
	struct ht_metadata half = {.key = "k", .value = NULL};
	struct ht_error err;

	err = open_error(NULL, NULL);
	assert_refused(err, HT_E_INVALID, "api.ht: no trace header given");
	h.version = HT_FORMAT_VERSION + 1;
	err = open_error(NULL, &h);
	assert_refused(err, HT_E_INVALID, "api.ht: header version 5: this "
		       "library writes version 4");
	h.version = 1;
	h.pointer_size = 2;
	err = open_error(NULL, &h);
	assert_refused(err, HT_E_INVALID, "api.ht: pointer size 2 is neither "
		       "4 nor 8");
	h.pointer_size = 8;
	h.n_metadata = 1;
	h.metadata = NULL;
	err = open_error(NULL, &h);
	assert_refused(err, HT_E_INVALID, "api.ht: metadata missing");
	h.metadata = &half;
	err = open_error(NULL, &h);
	assert_refused(err, HT_E_INVALID, "api.ht: metadata entry 0 has no "
		       "key or no value");
}

Test(messages, recording_call_mistakes)
{
	struct ht_error err;

	cr_assert_null(ht_recorder_open(NULL, htb_sample_header(), NULL,
					&err));
	assert_refused(err, HT_E_INVALID, "no output path given");
	cr_assert_null(ht_recorder_open_fd(-1, "nowhere",
					   htb_sample_header(), NULL, &err));
	assert_refused(err, HT_E_INVALID, "nowhere: bad file descriptor -1");
	cr_assert_eq(ht_recorder_close(NULL, &err), HT_E_INVALID);
	assert_says(err, "no recorder to close");
}

/* Criterion runs each test in a process of its own, so the keys taken here
 * are gone with it. */
Test(messages, recording_without_a_thread_key)
{
	struct ht_error err;
	pthread_key_t key;
	int taken = 0;

	while (pthread_key_create(&key, NULL) == 0)
		taken++;
	cr_assert_gt(taken, 0);
	err = open_error(NULL, htb_sample_header());
	assert_refused(err, HT_E_LIMIT, "api.ht: no thread-specific data key "
		       "left");
}
