/*
 * utf8.c - UTF-8 checked, repaired and converted from modified UTF-8
 * (utf8.h). The ranges are those of the Unicode standard's table 3-7
 * ("Well-Formed UTF-8 Byte Sequences"): checking the second byte against
 * its own range is what refuses overlong forms, surrogates and code points
 * past U+10FFFF, and what makes the subparts maximal.
 */
#include "util/utf8.h"

#include <string.h>

size_t utf8_next(const unsigned char *p, size_t left, uint32_t *cp)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t len, i;
	uint32_t v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		*cp = UTF8_BAD;
		return 1;
	}
	for (i = 1; i < len; i++) {
		if (i >= left || p[i] < lo || p[i] > hi) {
			*cp = UTF8_BAD;
			return i;
		}
		v = v << 6 | (p[i] & 0x3f);
		lo = 0x80, hi = 0xbf;
	}
	*cp = v;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	uint32_t cp;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		i += utf8_next(p + i, n - i, &cp);
		if (cp == UTF8_BAD)
			return false;
	}
	return true;
}

size_t utf8_repair(char *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < n) {
		uint32_t cp;
		size_t len = utf8_next(p + i, n - i, &cp);

		if (cp == UTF8_BAD) {
			memcpy(out + o, UTF8_REPLACEMENT, 3);
			o += 3;
		} else {
			memcpy(out + o, p + i, len);
			o += len;
		}
		i += len;
	}
	return o;
}

/* A surrogate as modified UTF-8 writes it: ED, then A0..AF for a high one
 * or B0..BF for a low one, then a continuation byte. */
static bool is_surrogate(const unsigned char *p, size_t left, bool high)
{
	return left >= 3 && p[0] == 0xed &&
	       p[1] >= (high ? 0xa0 : 0xb0) && p[1] <= (high ? 0xaf : 0xbf) &&
	       (p[2] & 0xc0) == 0x80;
}

size_t utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t utf8_from_modified(char *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < n) {
		uint32_t cp;
		size_t len;

		if (is_surrogate(p + i, n - i, true) &&
		    is_surrogate(p + i + 3, n - i - 3, false)) {
			uint32_t hi = (uint32_t)(p[i + 1] & 0x0f) << 6 |
				      (p[i + 2] & 0x3f);
			uint32_t lo = (uint32_t)(p[i + 4] & 0x0f) << 6 |
				      (p[i + 5] & 0x3f);

			o += utf8_put(out + o, 0x10000 + (hi << 10) + lo);
			i += 6;
			continue;
		}
		if (is_surrogate(p + i, n - i, true) ||
		    is_surrogate(p + i, n - i, false)) {
			len = 3, cp = UTF8_BAD;
		} else if (n - i >= 2 && p[i] == 0xc0 && p[i + 1] == 0x80) {
			len = 2, cp = UTF8_BAD;
		} else {
			len = utf8_next(p + i, n - i, &cp);
			if (cp == 0)
				cp = UTF8_BAD;
		}
		if (cp == UTF8_BAD) {
			memcpy(out + o, UTF8_REPLACEMENT, 3);
			o += 3;
		} else {
			memcpy(out + o, p + i, len);
			o += len;
		}
		i += len;
	}
	return o;
}

/* A UTF-16 code unit at p in the byte order of units. */
static uint32_t utf16_unit(const uint8_t *p, enum utf8_units units)
{
	return units == UNITS_UTF16BE ? (uint32_t)(p[0] << 8 | p[1])
				      : (uint32_t)(p[0] | p[1] << 8);
}

size_t utf8_from_units(char *out, const uint8_t *p, size_t n,
		       enum utf8_units units, size_t max_chars, size_t *used)
{
	bool utf16 = units != UNITS_LATIN1;
	size_t count = utf16 ? n / 2 : n, len = 0, made = 0, i;

	for (i = 0; i < count && made < max_chars; i++, made++) {
		uint32_t cp, lo;

		if (!utf16) {
			len += utf8_put(out + len, p[i] ? p[i] : 0xfffd);
			continue;
		}
		cp = utf16_unit(p + 2 * i, units);
		if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < count) {
			lo = utf16_unit(p + 2 * i + 2, units);
			if (lo >= 0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
				i++;
			}
		}
		if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0)
			cp = 0xfffd;
		len += utf8_put(out + len, cp);
	}
	if (used)
		*used = i;
	return len;
}
