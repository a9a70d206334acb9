/*
 * humanize.h - byte counts written for people: "512 B", "1.2 KiB",
 * "+3.4 MiB". The one formatter of sizes, for the analysis tables, the
 * diffs and `heaptrace record`'s progress and summary; and of durations
 * ("850 ns", "12.3 us", "4.56 ms", "1.234 s"), for GC pauses and times.
 */
#ifndef HT_UTIL_HUMANIZE_H
#define HT_UTIL_HUMANIZE_H

#include <stdint.h>

/* Enough for any size text below (a signed one takes one more byte). */
#define SIZE_TEXT 48

/* When a size leaves bytes for KiB, and KiB for MiB... Both styles are
 * in use and their outputs are compared byte for byte by the tests. */
enum size_style {
	/* from one of the unit: "1023 B", "1.0 KiB", up to EiB; the
	 * tables of the analyses */
	SIZE_FROM_ONE,
	/* from ten of the unit, KiB and MiB only: "10239 B", "10.0 KiB",
	 * "2048.0 MiB"; what `heaptrace record` says it wrote */
	SIZE_FROM_TEN,
};

/* bytes into buf (SIZE_TEXT bytes) in the given style; returns buf. */
const char *format_size(uint64_t bytes, enum size_style style, char *buf);

/* "512 B", "1.2 KiB", "3.4 MiB": exact below 1 KiB. */
static inline const char *human_size(uint64_t bytes, char *buf)
{
	return format_size(bytes, SIZE_FROM_ONE, buf);
}

/* A change in size: "+1.2 KiB", "-400 B", "0 B" into buf (SIZE_TEXT + 1
 * bytes). */
const char *signed_size(int64_t delta, char *buf);

/* Enough for any duration text. */
#define DURATION_TEXT 32

/* Nanoseconds for people into buf (DURATION_TEXT bytes): "850 ns",
 * "12.3 us", "4.56 ms", "1.234 s", truncated (never rounded up into the
 * next unit); returns buf. */
const char *human_duration(uint64_t ns, char *buf);

#endif
