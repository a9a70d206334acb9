/*
 * test_limits.c - hostile counts and lengths (heaptrace(5), LIMITS): a
 * chunk that claims 2^60 references, a string that claims 10 GiB, a chunk
 * or a header past its limit, a dump whose sizes overflow 64 bits. Each is
 * refused with a message that names the number and the limit, before
 * anything is allocated for it: an allocation of 2^63 bytes would have
 * failed as out of memory, which is not what these tests accept.
 */
#include <criterion/criterion.h>

#include "lib/common/codec.h"
#include "analysis/heap.h"
#include "htbuild.h"
#include "lib/common/varint.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define TEN_GIB (UINT64_C(10) << 30)
#define TWO_TO_60 (UINT64_C(1) << 60)

/* A file of the sample header and one chunk holding payload. */
static struct ht_error chunk_error(const uint8_t *payload, size_t len)
{
	struct htb b;
	struct ht_error err;

	htb_start(&b, htb_sample_header());
	htb_raw_chunk(&b, HT_CHUNK_EVENTS, payload, len, 0, 1);
	err = htb_read_error(&b);
	htb_free(&b);
	return err;
}

#define assert_says(err, text)                                          \
	cr_assert(strstr((err).message, (text)), "'%s' lacks '%s'",     \
		  (err).message, (text))

Test(limits, chunk_claiming_2_60_references_is_refused)
{
	uint8_t buf[64], *p = buf;
	struct ht_error err;

	*p++ = HT_EV_OBJECT_REFERENCES;
	p = varint_put(p, 0);  /* options */
	p = varint_put(p, 2);  /* id */
	p = varint_put(p, 2);  /* class */
	p = varint_put(p, 16); /* size */
	p = varint_put(p, 0);  /* flags */
	p = varint_put(p, TWO_TO_60);
	memset(p, 2, 8); /* a few refs, far fewer than claimed */
	p += 8;
	err = chunk_error(buf, (size_t)(p - buf));
	cr_assert_eq(err.code, HT_E_CORRUPT, "%s", err.message);
	assert_says(err, "count of 1152921504606846976 references, more "
			 "than the 8 bytes left in the chunk can hold");
	assert_says(err, "undecodable event 0 of the chunk");
}

Test(limits, every_array_count_is_bounded_by_the_chunk)
{
	static const struct {
		enum ht_event_type type;
		const char *what;
	} arrays[] = {
		{ HT_EV_GENERATION_BOUNDS, "generation ranges" },
		{ HT_EV_MOVED_REFERENCES, "moved blocks" },
		{ HT_EV_SURVIVING_REFERENCES, "surviving blocks" },
		{ HT_EV_ROOT_REFERENCES, "root references" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(arrays); i++) {
		uint8_t buf[32], *p = buf;
		struct ht_error err;

		*p++ = (uint8_t)arrays[i].type;
		if (arrays[i].type == HT_EV_ROOT_REFERENCES)
			p = varint_put(p, 0); /* options */
		p = varint_put(p, TWO_TO_60);
		err = chunk_error(buf, (size_t)(p - buf));
		cr_assert_eq(err.code, HT_E_CORRUPT, "%s", err.message);
		assert_says(err, "count of 1152921504606846976");
		assert_says(err, arrays[i].what);
	}
}

Test(limits, string_claiming_10_gib_is_refused)
{
	uint8_t buf[32], *p = buf;
	struct ht_error err;

	*p++ = HT_EV_CLASS;
	p = varint_put(p, 0);   /* options */
	p = varint_put(p, 2);   /* id */
	p = varint_put(p, TEN_GIB + 1);
	memcpy(p, "java/lang", 9);
	p += 9;
	err = chunk_error(buf, (size_t)(p - buf));
	cr_assert_eq(err.code, HT_E_CORRUPT, "%s", err.message);
	assert_says(err, "string of 10737418240 bytes, over the 65535-byte "
			 "limit");
}

Test(limits, string_longer_than_its_chunk_says_so)
{
	uint8_t buf[32], *p = buf;
	struct ht_error err;

	*p++ = HT_EV_THREAD;
	p = varint_put(p, 7);
	p = varint_put(p, 101); /* 100 bytes, 4 there */
	memcpy(p, "main", 4);
	p += 4;
	err = chunk_error(buf, (size_t)(p - buf));
	assert_says(err, "string of 100 bytes, longer than the 4 bytes left "
			 "in the chunk");
}

/* The error of opening a file whose header payload is payload[0..len),
 * its CRC right. */
static struct ht_error header_error(const uint8_t *payload, size_t len)
{
	uint8_t fixed[HT_FILE_HEADER_FIXED];
	struct ht_error err;
	struct htb b;

	memcpy(fixed, HT_MAGIC, HT_MAGIC_LEN);
	put_le32(fixed + 8, HT_FORMAT_VERSION);
	put_le32(fixed + 12, (uint32_t)len);
	memset(&b, 0, sizeof(b));
	htb_append(&b, fixed, sizeof(fixed));
	htb_append(&b, payload, len);
	put_le32(fixed, (uint32_t)crc32(crc32(0, fixed, sizeof(fixed)),
					payload, (uInt)len));
	htb_append(&b, fixed, 4);
	cr_assert_null(htb_open_memory(b.data, b.len, &err));
	htb_free(&b);
	cr_assert_eq(err.code, HT_E_CORRUPT, "%s", err.message);
	return err;
}

Test(limits, header_string_claiming_10_gib_is_refused)
{
	uint8_t payload[32], *p = payload;
	struct ht_error err;

	p = varint_put(p, TEN_GIB + 1); /* the runtime's name */
	memcpy(p, "clr", 3);
	p += 3;
	err = header_error(payload, (size_t)(p - payload));
	assert_says(err, "bad file header: string of 10737418240 bytes, over "
			 "the 65535-byte limit");
}

Test(limits, header_metadata_count_is_bounded_by_the_header)
{
	uint8_t payload[32], *p = payload;
	struct ht_error err;

	p = varint_put(p, 0); /* runtime */
	p = varint_put(p, 0); /* runtime version */
	p = varint_put(p, 8); /* pointer size */
	p = varint_put(p, 0); /* flags */
	p = varint_put(p, 0); /* command line */
	p = varint_put(p, TWO_TO_60);
	memcpy(p, "\2k\2v", 4);
	p += 4;
	err = header_error(payload, (size_t)(p - payload));
	assert_says(err, "bad file header: count of 1152921504606846976 "
			 "metadata entries, more than the 4 bytes left in the "
			 "file header can hold");
}

Test(limits, chunk_over_256_mib_is_refused_before_reading_it)
{
	const uint8_t raw[] = { HT_EV_GC_FINISHED };
	struct ht_chunk_header h = {
		.kind = HT_CHUNK_EVENTS, .compression = HT_COMPRESS_ZLIB,
		.stored_length = HT_MAX_CHUNK_PAYLOAD + 1,
		.raw_length = HT_MAX_CHUNK_PAYLOAD + 1, .events = 1,
	};
	struct ht_error err;
	struct htb b;

	htb_start(&b, htb_sample_header());
	htb_chunk_as_is(&b, &h, raw, sizeof(raw));
	err = htb_read_error(&b);
	cr_assert_eq(err.code, HT_E_CORRUPT, "%s", err.message);
	assert_says(err, "chunk larger than the 256 MiB limit");
	htb_free(&b);
}

/* ---- the analyses ------------------------------------------------------- */

static int never_called(void *ctx, struct heap *h, bool *keep)
{
	(void)ctx;
	(void)h;
	(void)keep;
	cr_assert_fail("a dump over the byte limit was built");
	return 0;
}

Test(limits, dump_whose_sizes_overflow_64_bits_is_refused)
{
	const ht_id refs[] = { 0x20 };
	const uint32_t flags[] = { 0 };
	const struct ht_event evs[] = {
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_BEGIN, 0, 0 } },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_RT_THREAD, 7, 0 } },
		{ .type = HT_EV_ROOT_REFERENCES,
		  .u.root_references = { .count = 1, .refs = refs,
					 .flags = flags } },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_HEAP, 0, 0 } },
		{ .type = HT_EV_OBJECT_REFERENCES,
		  .u.object_references = { .id = 0x20, .class_id = 0x100,
					   .size = UINT64_C(1) << 62,
					   .count = 1, .refs = refs } },
		{ .type = HT_EV_OBJECT_REFERENCES,
		  .u.object_references = { .id = 0x30, .class_id = 0x100,
					   .size = UINT64_C(1) << 62 } },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_END, 0, 0 } },
	};
	struct heap_scan_report report;
	struct ht_error err;
	struct ht_reader *r;
	struct htb b;

	htb_start(&b, htb_sample_header());
	htb_chunk(&b, evs, ARRAY_SIZE(evs));
	htb_finish(&b);
	r = htb_open_memory(b.data, b.len, &err);
	cr_assert_not_null(r, "%s", err.message);
	cr_assert_eq(heap_scan(r, HEAP_ALL_DUMPS, never_called, NULL, &report,
			       &err), -1);
	cr_assert_eq(err.code, HT_E_LIMIT, "%s", err.message);
	assert_says(err, "dump 0: the sizes of its objects add up to 2^63 "
			 "bytes or more (object 0x30 has 4611686018427387904 "
			 "bytes)");
	ht_reader_close(r);
	htb_free(&b);
}

Test(limits, dump_just_under_the_byte_limit_is_built)
{
	const struct ht_event evs[] = {
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_BEGIN, 0, 0 } },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_HEAP, 0, 0 } },
		{ .type = HT_EV_OBJECT_REFERENCES,
		  .u.object_references = { .id = 0x20, .class_id = 0x100,
					   .size = HEAP_MAX_BYTES / 2 } },
		{ .type = HT_EV_OBJECT_REFERENCES,
		  .u.object_references = { .id = 0x30, .class_id = 0x100,
					   .size = HEAP_MAX_BYTES / 2 - 1 } },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_END, 0, 0 } },
	};
	struct heap_scan_report report;
	struct ht_error err;
	struct ht_reader *r;
	struct htb b;

	htb_start(&b, htb_sample_header());
	htb_chunk(&b, evs, ARRAY_SIZE(evs));
	htb_finish(&b);
	r = htb_open_memory(b.data, b.len, &err);
	cr_assert_not_null(r, "%s", err.message);
	cr_assert_eq(heap_scan(r, HEAP_ALL_DUMPS, NULL, NULL, &report, &err),
		     0, "%s", err.message);
	cr_assert_eq(report.dumps, 1);
	ht_reader_close(r);
	htb_free(&b);
}
