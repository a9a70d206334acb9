/*
 * test_chunk.c - the 36-byte chunk header (format.h): every field survives
 * put and get at its extremes, the layout is the documented one, and a
 * header that is not a chunk, is damaged, or claims an unknown kind,
 * compression or an oversized payload is refused.
 */
#include <criterion/criterion.h>

#include "lib/common/format.h"

#include <zlib.h>

static struct ht_chunk_header sample(void)
{
	return (struct ht_chunk_header){
		.kind = HT_CHUNK_EVENTS,
		.compression = HT_COMPRESS_ZLIB,
		.stored_length = 1234,
		.raw_length = 56789,
		.first_event = 0x0123456789abcdefull,
		.events = 4242,
		.payload_crc = 0xdeadbeef,
	};
}

static void assert_same(const struct ht_chunk_header *a,
			const struct ht_chunk_header *b)
{
	cr_assert_eq(a->kind, b->kind);
	cr_assert_eq(a->compression, b->compression);
	cr_assert_eq(a->stored_length, b->stored_length);
	cr_assert_eq(a->raw_length, b->raw_length);
	cr_assert_eq(a->first_event, b->first_event);
	cr_assert_eq(a->events, b->events);
	cr_assert_eq(a->payload_crc, b->payload_crc);
}

static int get(const uint8_t *buf, struct ht_chunk_header *h, const char **why)
{
	*why = NULL;
	return chunk_header_get(buf, h, why);
}

/* Rewrites the header CRC after a deliberate change, so that the change
 * itself is what gets checked. */
static void reseal(uint8_t *buf)
{
	put_le32(buf + 32, (uint32_t)crc32(0, buf, 32));
}

Test(chunk, header_round_trips)
{
	struct ht_chunk_header h = sample(), out;
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	const char *why;

	chunk_header_put(buf, &h);
	cr_assert_eq(get(buf, &out, &why), 0, "%s", why);
	assert_same(&h, &out);
}

Test(chunk, each_field_round_trips_at_its_extremes)
{
	const uint32_t lengths[] = { 0, 1, HT_MAX_CHUNK_PAYLOAD };
	const uint64_t firsts[] = { 0, 1, UINT64_MAX };
	const uint32_t u32s[] = { 0, 1, UINT32_MAX };
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	const char *why;

	for (int i = 0; i < 3; i++) {
		struct ht_chunk_header h = sample(), out;

		h.kind = i == 2 ? HT_CHUNK_INDEX : HT_CHUNK_EVENTS;
		h.stored_length = lengths[i];
		h.raw_length = lengths[2 - i];
		h.first_event = firsts[i];
		h.events = u32s[i];
		h.payload_crc = u32s[2 - i];
		chunk_header_put(buf, &h);
		cr_assert_eq(get(buf, &out, &why), 0, "%s", why);
		assert_same(&h, &out);
	}
}

Test(chunk, layout_is_little_endian_at_the_documented_offsets)
{
	struct ht_chunk_header h = sample();
	uint8_t buf[HT_CHUNK_HEADER_SIZE];

	chunk_header_put(buf, &h);
	cr_assert_arr_eq(buf, "HTCK", 4);
	cr_assert_eq(buf[4], HT_CHUNK_EVENTS);
	cr_assert_eq(buf[5], HT_COMPRESS_ZLIB);
	cr_assert(buf[6] == 0 && buf[7] == 0, "reserved bytes are zero");
	cr_assert(buf[8] == (1234 & 0xff) && buf[9] == (1234 >> 8));
	cr_assert_eq(get_le32(buf + 12), 56789);
	cr_assert_eq(buf[16], 0xef, "first_event low byte first");
	cr_assert_eq(get_le64(buf + 16), 0x0123456789abcdefull);
	cr_assert_eq(get_le32(buf + 24), 4242);
	cr_assert_eq(get_le32(buf + 28), 0xdeadbeef);
	cr_assert_eq(get_le32(buf + 32), (uint32_t)crc32(0, buf, 32));
}

Test(chunk, bad_magic_is_refused)
{
	struct ht_chunk_header h = sample(), out;
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	const char *why;

	chunk_header_put(buf, &h);
	buf[3] = 'X';
	reseal(buf);
	cr_assert_eq(get(buf, &out, &why), -1);
	cr_assert_not_null(why);
	cr_assert(strstr(why, "magic"), "%s", why);
}

Test(chunk, any_flipped_bit_is_refused)
{
	struct ht_chunk_header h = sample(), out;
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	const char *why;

	chunk_header_put(buf, &h);
	for (unsigned bit = 0; bit < 8 * HT_CHUNK_HEADER_SIZE; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		cr_assert_eq(get(buf, &out, &why), -1, "bit %u", bit);
		cr_assert_not_null(why);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
}

Test(chunk, crc_mismatch_names_the_header_crc)
{
	struct ht_chunk_header h = sample(), out;
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	const char *why;

	chunk_header_put(buf, &h);
	buf[20] ^= 0x10;
	cr_assert_eq(get(buf, &out, &why), -1);
	cr_assert(strstr(why, "CRC"), "%s", why);
}

Test(chunk, unknown_kind_is_refused)
{
	const uint8_t kinds[] = { 0, 3, 255 };
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	struct ht_chunk_header h = sample(), out;
	const char *why;

	for (size_t i = 0; i < sizeof(kinds); i++) {
		chunk_header_put(buf, &h);
		buf[4] = kinds[i];
		reseal(buf);
		cr_assert_eq(get(buf, &out, &why), -1, "kind %u", kinds[i]);
		cr_assert(strstr(why, "kind"), "%s", why);
	}
}

Test(chunk, unknown_compression_is_refused)
{
	const uint8_t methods[] = { 0, 2, 255 };
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	struct ht_chunk_header h = sample(), out;
	const char *why;

	for (size_t i = 0; i < sizeof(methods); i++) {
		chunk_header_put(buf, &h);
		buf[5] = methods[i];
		reseal(buf);
		cr_assert_eq(get(buf, &out, &why), -1, "method %u", methods[i]);
		cr_assert(strstr(why, "compression"), "%s", why);
	}
}

Test(chunk, payload_over_the_limit_is_refused_either_length)
{
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	struct ht_chunk_header h = sample(), out;
	const char *why;

	h.stored_length = HT_MAX_CHUNK_PAYLOAD + 1;
	chunk_header_put(buf, &h);
	cr_assert_eq(get(buf, &out, &why), -1);
	cr_assert(strstr(why, "limit"), "%s", why);

	h = sample();
	h.raw_length = UINT32_MAX;
	chunk_header_put(buf, &h);
	cr_assert_eq(get(buf, &out, &why), -1);
	cr_assert(strstr(why, "limit"), "%s", why);
}

Test(chunk, payload_at_the_limit_is_accepted)
{
	uint8_t buf[HT_CHUNK_HEADER_SIZE];
	struct ht_chunk_header h = sample(), out;
	const char *why;

	h.stored_length = HT_MAX_CHUNK_PAYLOAD;
	h.raw_length = HT_MAX_CHUNK_PAYLOAD;
	chunk_header_put(buf, &h);
	cr_assert_eq(get(buf, &out, &why), 0, "%s", why);
}

Test(chunk, le_helpers_round_trip)
{
	uint8_t buf[8];

	put_le32(buf, 0x01020304);
	cr_assert(buf[0] == 4 && buf[3] == 1);
	cr_assert_eq(get_le32(buf), 0x01020304);
	put_le64(buf, UINT64_MAX - 1);
	cr_assert_eq(get_le64(buf), UINT64_MAX - 1);
	put_le64(buf, 0x8000000000000001ull);
	cr_assert(buf[0] == 1 && buf[7] == 0x80);
}
