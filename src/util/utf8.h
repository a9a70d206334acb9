/*
 * utf8.h - UTF-8 read one character at a time, repaired, and converted from
 * Java's modified UTF-8. Names in a trace are whatever the runtime said:
 * every reader makes them valid UTF-8 once, where they enter (heaptrace(5),
 * STRINGS), so that every output form can rely on it; the writers of those
 * forms use utf8_next to find the characters they must escape.
 *
 * Ill-formed input is replaced as the Unicode standard recommends (chapter
 * 3, "U+FFFD substitution of maximal subparts") and as Python's
 * decode("utf-8", "replace") and the WHATWG encoding standard do: each
 * maximal subpart of an ill-formed sequence becomes one U+FFFD. Overlong
 * forms, surrogates and code points past U+10FFFF are ill-formed.
 */
#ifndef HT_UTF8_H
#define HT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What utf8_next gives for an ill-formed subpart: no code point. */
#define UTF8_BAD UINT32_C(0x110000)

/* The replacement character, U+FFFD, as UTF-8. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Room that utf8_repair and utf8_from_modified need for n bytes of input:
 * each byte may become the three of U+FFFD. */
#define UTF8_REPAIR_BOUND(n) (3 * (size_t)(n))

/* The character at p, of the left (at least 1) bytes there: sets *cp to
 * its code point, or to UTF8_BAD for a maximal ill-formed subpart, and
 * returns how many bytes it took (1 to 4). In a NUL-terminated string
 * left may be SIZE_MAX: the NUL ends any sequence. */
size_t utf8_next(const unsigned char *p, size_t left, uint32_t *cp);

/* Code point cp (a scalar value: at most U+10FFFF, no surrogate) as
 * UTF-8 into out (4 bytes of room); returns the length, 1 to 4. */
size_t utf8_put(char *out, uint32_t cp);

/* Whether the n bytes at s are well-formed UTF-8. */
bool utf8_valid(const char *s, size_t n);

/* The n bytes at s into out (UTF8_REPAIR_BOUND(n) bytes), each maximal
 * ill-formed subpart replaced by U+FFFD; returns the length written. No
 * NUL is added. */
size_t utf8_repair(char *out, const char *s, size_t n);

/*
 * The n bytes of Java's modified UTF-8 at s (JVMS 4.4.7, what HPROF's UTF8
 * records hold) into standard UTF-8 in out (UTF8_REPAIR_BOUND(n) bytes):
 * a surrogate pair written as two 3-byte sequences becomes the 4-byte
 * sequence of its character; U+0000 (C0 80, or a raw NUL byte, which
 * modified UTF-8 never has) and an unpaired surrogate become U+FFFD, since
 * a name is a C string; anything else ill-formed is repaired as
 * utf8_repair does. Returns the length written; no NUL is added.
 */
size_t utf8_from_modified(char *out, const char *s, size_t n);

/* How a string's code units lie in memory: Latin-1 bytes (a
 * java.lang.String of coder 0), UTF-16 units little-endian (coder 1 on
 * every platform heaptrace knows, a .NET System.String) or big-endian (a
 * char[] as HPROF writes it). */
enum utf8_units { UNITS_LATIN1, UNITS_UTF16LE, UNITS_UTF16BE };

/*
 * The text of the n bytes of code units at p (an odd last byte of UTF-16
 * is ignored), at most max_chars characters of it, as UTF-8 into out
 * (UTF8_REPAIR_BOUND(n) bytes): a surrogate pair becomes its character;
 * an unpaired surrogate and U+0000 become U+FFFD, since the text is a C
 * string. Returns the length written; no NUL is added. *used, when not
 * NULL, is set to the code units the text written stands for (a pair's
 * two for its one character), to hold against the string's length.
 */
size_t utf8_from_units(char *out, const uint8_t *p, size_t n,
		       enum utf8_units units, size_t max_chars, size_t *used);

#endif
