/*
 * varint.h - the integer coding of .ht chunk payloads: unsigned LEB128
 * varints (7 bits a byte, low first) and zigzag for signed deltas, so that
 * small magnitudes of either sign take few bytes. See heaptrace(5).
 */
#ifndef HT_VARINT_H
#define HT_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX 10 /* bytes of a 64-bit value, worst case */

static inline uint64_t zigzag_encode(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t zigzag_decode(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Writes v at p (which has room for VARINT_MAX bytes); returns the end. */
static inline uint8_t *varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Reads a varint from [*pp, end). Returns 0 and advances *pp, or -1 when
 * the input ends inside it or it is longer than 64 bits. */
static inline int varint_get(const uint8_t **pp, const uint8_t *end,
			     uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b;

		if (p >= end)
			return -1;
		b = *p++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
		if (shift > 63)
			return -1;
	}
	*pp = p;
	*out = v;
	return 0;
}

static inline size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

#endif
