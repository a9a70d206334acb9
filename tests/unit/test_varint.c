/*
 * test_varint.c - the integer coding of chunk payloads (varint.h): LEB128
 * varints at their size boundaries, zigzag at the extremes, and inputs that
 * must be refused.
 */
#include <criterion/criterion.h>

#include "lib/common/varint.h"
#include "util/alloc.h"

#include <string.h>

static size_t encoded(uint64_t v, uint8_t *buf)
{
	return (size_t)(varint_put(buf, v) - buf);
}

static uint64_t round_trip(uint64_t v)
{
	uint8_t buf[VARINT_MAX];
	const uint8_t *p = buf;
	size_t n = encoded(v, buf);
	uint64_t out = ~v;

	cr_assert_eq(varint_get(&p, buf + n, &out), 0, "value %llu",
		     (unsigned long long)v);
	cr_assert_eq(p, buf + n, "the whole varint is consumed");
	return out;
}

Test(varint, values_at_each_size_boundary_round_trip)
{
	for (unsigned bits = 0; bits < 64; bits++) {
		uint64_t v = (uint64_t)1 << bits;

		cr_assert_eq(round_trip(v), v);
		cr_assert_eq(round_trip(v - 1), v - 1);
		cr_assert_eq(round_trip(v + 1), v + 1);
	}
	cr_assert_eq(round_trip(0), 0);
	cr_assert_eq(round_trip(UINT64_MAX), UINT64_MAX);
}

Test(varint, seven_bits_per_byte)
{
	uint8_t buf[VARINT_MAX];

	cr_assert_eq(encoded(0, buf), 1);
	cr_assert_eq(buf[0], 0);
	cr_assert_eq(encoded(127, buf), 1);
	cr_assert_eq(buf[0], 127);
	cr_assert_eq(encoded(128, buf), 2);
	cr_assert(buf[0] == 0x80 && buf[1] == 0x01);
	cr_assert_eq(encoded((uint64_t)1 << 63, buf), 10);
	cr_assert_eq(buf[9], 0x01);
	cr_assert_eq(encoded(UINT64_MAX, buf), VARINT_MAX);
}

Test(varint, size_matches_what_put_writes)
{
	uint8_t buf[VARINT_MAX];

	for (unsigned bits = 0; bits < 64; bits++) {
		uint64_t v = (uint64_t)1 << bits;

		cr_assert_eq(varint_size(v), encoded(v, buf));
		cr_assert_eq(varint_size(v - 1), encoded(v - 1, buf));
	}
	cr_assert_eq(varint_size(UINT64_MAX), encoded(UINT64_MAX, buf));
}

Test(varint, zigzag_maps_small_magnitudes_of_either_sign_to_small_codes)
{
	cr_assert_eq(zigzag_encode(0), 0);
	cr_assert_eq(zigzag_encode(-1), 1);
	cr_assert_eq(zigzag_encode(1), 2);
	cr_assert_eq(zigzag_encode(-2), 3);
	cr_assert_eq(zigzag_encode(INT64_MAX), UINT64_MAX - 1);
	cr_assert_eq(zigzag_encode(INT64_MIN), UINT64_MAX);
}

Test(varint, zigzag_round_trips_at_the_extremes)
{
	const int64_t values[] = { 0, 1, -1, 63, -64, 64, -65,
				   INT64_MAX, INT64_MIN, INT64_MAX - 1,
				   INT64_MIN + 1 };

	for (size_t i = 0; i < ARRAY_SIZE(values); i++)
		cr_assert_eq(zigzag_decode(zigzag_encode(values[i])), values[i]);
	cr_assert_eq(zigzag_decode(UINT64_MAX), INT64_MIN);
	cr_assert_eq(zigzag_decode(UINT64_MAX - 1), INT64_MAX);
}

Test(varint, truncated_varint_is_refused_and_nothing_consumed)
{
	uint8_t buf[VARINT_MAX];
	size_t n = encoded(UINT64_MAX, buf);

	for (size_t cut = 0; cut < n; cut++) {
		const uint8_t *p = buf;
		uint64_t out = 42;

		cr_assert_eq(varint_get(&p, buf + cut, &out), -1, "cut %zu", cut);
		cr_assert_eq(p, buf, "nothing consumed");
		cr_assert_eq(out, 42, "output untouched");
	}
}

Test(varint, tenth_byte_may_only_carry_the_last_bit)
{
	uint8_t buf[VARINT_MAX];
	const uint8_t *p = buf;
	uint64_t out;

	memset(buf, 0xff, 9);
	buf[9] = 0x01;
	cr_assert_eq(varint_get(&p, buf + 10, &out), 0);
	cr_assert_eq(out, UINT64_MAX);

	p = buf;
	buf[9] = 0x02; /* bit 64 */
	cr_assert_eq(varint_get(&p, buf + 10, &out), -1);

	p = buf;
	buf[9] = 0x81; /* would continue past 64 bits */
	cr_assert_eq(varint_get(&p, buf + 10, &out), -1);
}

Test(varint, eleven_byte_varint_is_refused)
{
	uint8_t buf[11];
	const uint8_t *p = buf;
	uint64_t out;

	memset(buf, 0x80, 10);
	buf[10] = 0x00;
	cr_assert_eq(varint_get(&p, buf + sizeof(buf), &out), -1);
}

Test(varint, padded_zero_within_ten_bytes_is_accepted)
{
	/* not canonical, but within 64 bits: the value is what counts */
	const uint8_t buf[] = { 0x80, 0x80, 0x00 };
	const uint8_t *p = buf;
	uint64_t out = 1;

	cr_assert_eq(varint_get(&p, buf + sizeof(buf), &out), 0);
	cr_assert_eq(out, 0);
	cr_assert_eq(p, buf + 3);
}

Test(varint, consecutive_varints_read_back_in_order)
{
	const uint64_t values[] = { 5, 0, UINT64_MAX, 128, 300, 1ull << 35 };
	uint8_t buf[ARRAY_SIZE(values) * VARINT_MAX];
	uint8_t *w = buf;
	const uint8_t *p = buf;

	for (size_t i = 0; i < ARRAY_SIZE(values); i++)
		w = varint_put(w, values[i]);
	for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
		uint64_t out;

		cr_assert_eq(varint_get(&p, w, &out), 0);
		cr_assert_eq(out, values[i]);
	}
	cr_assert_eq(p, w);
}
