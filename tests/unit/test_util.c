/*
 * test_util.c - the domain-free helpers of src/util: array growth that
 * refuses overflow without touching the array (alloc.h), the keyed id
 * map and how long its probes get on ids chosen to collide under the
 * Fibonacci hashing it replaced (idmap.h), the size formatter
 * (humanize.h), UTF-8 repaired and converted from modified UTF-8
 * (utf8.h), and the lower bound (search.h) against a linear scan.
 */
#include <criterion/criterion.h>

#include "util/alloc.h"
#include "util/humanize.h"
#include "util/idmap.h"
#include "util/utf8.h"
#include "util/membudget.h"
#include "util/procfile.h"
#include "util/search.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- alloc.h ------------------------------------------------------------- */

Test(alloc, grows_geometrically_and_keeps_the_elements)
{
	uint32_t *v = NULL;
	size_t cap = 0, reallocs = 0, last_cap = 0;

	for (uint32_t i = 0; i < 100000; i++) {
		cr_assert_eq(ALLOC_GROW(v, (size_t)i + 1, cap), 0);
		cr_assert_geq(cap, (size_t)i + 1);
		if (cap != last_cap) {
			reallocs++;
			last_cap = cap;
		}
		v[i] = i;
	}
	for (uint32_t i = 0; i < 100000; i++)
		cr_assert_eq(v[i], i);
	cr_assert_leq(reallocs, 20, "doubling: %zu reallocations", reallocs);
	free(v);
}

Test(alloc, need_times_size_overflow_fails_and_leaves_the_array)
{
	uint64_t *v = NULL, *before;
	size_t cap = 0;

	cr_assert_eq(ALLOC_GROW(v, 10, cap), 0);
	v[9] = 42;
	before = v;
	cr_assert_eq(ALLOC_GROW(v, SIZE_MAX / 4, cap), -1);
	cr_assert_eq(ALLOC_GROW(v, SIZE_MAX / sizeof(*v) + 1, cap), -1);
	cr_assert_eq(ALLOC_GROW(v, SIZE_MAX, cap), -1);
	cr_assert_eq(v, before, "the array did not move");
	cr_assert_eq(cap, ALLOC_GROW_FIRST, "nor did its capacity");
	cr_assert_eq(v[9], 42);
	cr_assert_eq(RESIZE_ARRAY(v, SIZE_MAX / 2), -1);
	cr_assert_eq(v, before);
	cr_assert_null(alloc_array(SIZE_MAX / 2, 4));
	free(v);
}

Test(alloc, capacity_near_the_top_of_size_t)
{
	/* doubling would wrap: the exact need is taken instead */
	cr_assert_eq(grown_capacity(SIZE_MAX / 2 + 1, SIZE_MAX - 1, 1),
		     SIZE_MAX - 1);
	cr_assert_eq(grown_capacity(16, SIZE_MAX / 8, 8), SIZE_MAX / 8);
	cr_assert_eq(grown_capacity(16, SIZE_MAX / 8 + 1, 8), 0);
	cr_assert_eq(grown_capacity(0, 17, 4), 32);
}

Test(alloc, array_size)
{
	static const int five[5];

	cr_assert_eq(ARRAY_SIZE(five), 5);
}

/* ---- idmap.h ------------------------------------------------------------- */

#define N_HOSTILE 200000
#define MAX_PROBE 64

/* The inverse of the Fibonacci multiplier modulo 2^64 (Newton's
 * iteration doubles the correct low bits each step). */
static uint64_t fibonacci_inverse(void)
{
	const uint64_t phi = 0x9e3779b97f4a7c15ULL;
	uint64_t x = phi;

	for (int i = 0; i < 6; i++)
		x *= 2 - phi * x;
	cr_assert_eq(x * phi, 1);
	return x;
}

static void insert_all(struct idmap *m, const uint64_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(idmap_put(m, ids[i], (uint32_t)i), 0);
	cr_assert_eq(idmap_count(m), n);
	for (size_t i = 0; i < n; i++) {
		uint32_t v = UINT32_MAX;

		cr_assert(idmap_get(m, ids[i], &v));
		cr_assert_eq(v, (uint32_t)i);
	}
}

static void check_probes(const uint64_t *ids, size_t n, const char *what)
{
	struct idmap m = IDMAP_INIT;

	insert_all(&m, ids, n);
	cr_log_info("%s: %zu ids, longest probe %zu slots", what, n,
		    idmap_max_probe(&m));
	cr_assert_lt(idmap_max_probe(&m), MAX_PROBE,
		     "%s: a probe of %zu slots", what, idmap_max_probe(&m));
	idmap_free(&m);
}

/* Multiples of 2^k: the same low bits, and for large k the same slot
 * under the JVM agent's old placement, which kept low bits as they were. */
Test(idmap, multiples_of_a_power_of_two_do_not_pile_up)
{
	uint64_t *ids = malloc(N_HOSTILE * sizeof(*ids));

	cr_assert_not_null(ids);
	for (unsigned k = 12; k <= 44; k += 16) {
		for (size_t i = 0; i < N_HOSTILE; i++)
			ids[i] = (uint64_t)(i + 1) << k;
		check_probes(ids, N_HOSTILE, "multiples of 2^k");
	}
	free(ids);
}

/* Ids whose Fibonacci hash (id * 2^64/phi) has the same top 20 bits: in
 * the old maps of the HPROF reader and the heap, every one of them had
 * the same home slot in any table of up to 2^20 slots. */
Test(idmap, ids_colliding_under_fibonacci_hashing_do_not_pile_up)
{
	uint64_t inv = fibonacci_inverse();
	uint64_t *ids = malloc(N_HOSTILE * sizeof(*ids));

	cr_assert_not_null(ids);
	for (size_t i = 0; i < N_HOSTILE; i++) {
		uint64_t product = (0xabcdeULL << 44) + i;

		ids[i] = product * inv;
		cr_assert_eq((ids[i] * 0x9e3779b97f4a7c15ULL) >> 44, 0xabcdeULL);
	}
	check_probes(ids, N_HOSTILE, "Fibonacci collisions");
	free(ids);
}

Test(idmap, insert_lookup_update_absent)
{
	struct idmap m;
	uint32_t v = 7;

	idmap_init(&m);
	cr_assert_not(idmap_get(&m, 5, &v), "empty: nothing is there");
	cr_assert_eq(v, 7, "an absent id leaves *value alone");
	cr_assert_eq(idmap_get_or_add(&m, 5, &v), 0, "added");
	v = 9;
	cr_assert_eq(idmap_get_or_add(&m, 5, &v), 1, "found");
	cr_assert_eq(v, 7, "the first value is kept and handed back");
	cr_assert_eq(idmap_add(&m, 5, 11), 0);
	cr_assert(idmap_get(&m, 5, &v));
	cr_assert_eq(v, 7, "idmap_add does not replace");
	cr_assert_eq(idmap_put(&m, 5, 12), 0);
	cr_assert(idmap_get(&m, 5, &v));
	cr_assert_eq(v, 12, "idmap_put replaces");
	cr_assert_eq(idmap_count(&m), 1);

	/* 0 and UINT64_MAX are ids like any other */
	cr_assert_not(idmap_get(&m, 0, &v));
	cr_assert_eq(idmap_put(&m, 0, 100), 0);
	cr_assert_eq(idmap_put(&m, UINT64_MAX, 101), 0);
	cr_assert(idmap_get(&m, 0, &v));
	cr_assert_eq(v, 100);
	cr_assert(idmap_get(&m, UINT64_MAX, &v));
	cr_assert_eq(v, 101);
	cr_assert_not(idmap_get(&m, 6, &v));
	cr_assert_eq(idmap_count(&m), 3);

	idmap_clear(&m);
	cr_assert_eq(idmap_count(&m), 0);
	cr_assert_not(idmap_get(&m, 5, &v));
	cr_assert_not(idmap_get(&m, 0, &v));
	cr_assert_eq(idmap_put(&m, 5, 1), 0);
	cr_assert(idmap_get(&m, 5, &v));
	cr_assert_eq(v, 1);
	idmap_free(&m);
	cr_assert_not(idmap_get(&m, 5, &v));
}

Test(idmap, dense_ids_survive_every_growth)
{
	struct idmap m = IDMAP_INIT;
	uint32_t v;

	for (uint64_t id = 1; id <= 300000; id++)
		cr_assert_eq(idmap_put(&m, id, (uint32_t)(id * 3)), 0);
	for (uint64_t id = 1; id <= 300000; id++) {
		cr_assert(idmap_get(&m, id, &v));
		cr_assert_eq(v, (uint32_t)(id * 3));
	}
	cr_assert_not(idmap_get(&m, 300001, &v));
	cr_assert_lt(idmap_max_probe(&m), MAX_PROBE);
	idmap_free(&m);
}

Test(idmap, each_table_draws_its_own_key)
{
	struct idmap a = IDMAP_INIT, b = IDMAP_INIT;

	cr_assert_eq(idmap_put(&a, 1, 1), 0);
	cr_assert_eq(idmap_put(&b, 1, 1), 0);
	/* equal by chance once in 2^64 */
	cr_assert_neq(a.key, b.key);
	idmap_free(&a);
	idmap_free(&b);
}

/* ---- search.h ------------------------------------------------------------ */

/* The first index at or after key, by a plain scan: what LOWER_BOUND must
 * agree with. */
static size_t scan_lower_bound(const uint32_t *v, size_t lo, size_t hi,
			       uint32_t key)
{
	while (lo < hi && v[lo] < key)
		lo++;
	return lo;
}

Test(search, lower_bound_agrees_with_a_scan_at_every_key_and_range)
{
	/* runs of equal values, gaps, and both ends */
	static const uint32_t v[] = {1, 1, 3, 5, 5, 5, 8, 13, 13, 21};
	const size_t n = ARRAY_SIZE(v);

	for (size_t lo = 0; lo <= n; lo++)
		for (size_t hi = lo; hi <= n; hi++)
			for (uint32_t key = 0; key <= 22; key++) {
				size_t got = LOWER_BOUND(lo, hi, i, v[i] < key);

				cr_assert_eq(got, scan_lower_bound(v, lo, hi, key),
					     "[%zu, %zu) key %u", lo, hi, key);
			}
}

Test(search, lower_bound_of_an_empty_range_is_its_start)
{
	size_t probes = 0;

	cr_assert_eq(LOWER_BOUND(7, 7, i, (probes++, i < 100)), 7);
	cr_assert_eq(probes, 0);
}

Test(search, lower_bound_near_size_max_does_not_wrap)
{
	/* lo + hi would wrap; the midpoint must not */
	size_t lo = SIZE_MAX - 10, hi = SIZE_MAX - 1;

	cr_assert_eq(LOWER_BOUND(lo, hi, i, i < SIZE_MAX - 4), SIZE_MAX - 4);
	cr_assert_eq(LOWER_BOUND(lo, hi, i, true), hi);
	cr_assert_eq(LOWER_BOUND(lo, hi, i, false), lo);
}

/* The last row at or before a key, as search.h says to find it. */
Test(search, the_last_row_at_or_before_is_the_one_before_the_bound)
{
	static const uint32_t starts[] = {10, 20, 30};
	size_t at = LOWER_BOUND(0, ARRAY_SIZE(starts), i, starts[i] <= 25);

	cr_assert_eq(at, 2);
	cr_assert_eq(starts[at - 1], 20);
	cr_assert_eq(LOWER_BOUND(0, ARRAY_SIZE(starts), i, starts[i] <= 5), 0);
}

/* ---- humanize.h ---------------------------------------------------------- */

static void expect_size(uint64_t bytes, enum size_style style,
			const char *want)
{
	char buf[SIZE_TEXT];

	cr_assert_str_eq(format_size(bytes, style, buf), want, "%llu bytes",
			 (unsigned long long)bytes);
}

Test(humanize, from_one_of_the_unit)
{
	expect_size(0, SIZE_FROM_ONE, "0 B");
	expect_size(1023, SIZE_FROM_ONE, "1023 B");
	expect_size(1024, SIZE_FROM_ONE, "1.0 KiB");
	expect_size(1258291, SIZE_FROM_ONE, "1.2 MiB");
	/* 1023.95 KiB would round to "1024.0 KiB" */
	expect_size(1048525, SIZE_FROM_ONE, "1.0 MiB");
	expect_size(UINT64_MAX, SIZE_FROM_ONE, "16.0 EiB");
}

Test(humanize, from_ten_of_the_unit)
{
	expect_size(10239, SIZE_FROM_TEN, "10239 B");
	expect_size(10240, SIZE_FROM_TEN, "10.0 KiB");
	expect_size(10485759, SIZE_FROM_TEN, "10240.0 KiB");
	expect_size(10485760, SIZE_FROM_TEN, "10.0 MiB");
	expect_size(2147483648ULL, SIZE_FROM_TEN, "2048.0 MiB");
}

Test(humanize, signed_sizes)
{
	char buf[SIZE_TEXT + 1];

	cr_assert_str_eq(signed_size(1229, buf), "+1.2 KiB");
	cr_assert_str_eq(signed_size(-400, buf), "-400 B");
	cr_assert_str_eq(signed_size(0, buf), "0 B");
	cr_assert_str_eq(signed_size(INT64_MIN, buf), "-8.0 EiB");
}

/* ---- utf8 --------------------------------------------------------------- */

#define R UTF8_REPLACEMENT

static void expect_repair(const char *in, size_t n, const char *want)
{
	char out[64];
	size_t len = utf8_repair(out, in, n);

	cr_assert(len <= UTF8_REPAIR_BOUND(n));
	cr_assert_eq(len, strlen(want));
	cr_assert(memcmp(out, want, len) == 0);
	cr_assert(utf8_valid(out, len));
	cr_assert_eq(utf8_valid(in, n), strcmp(in, want) == 0 && n == len);
}

/* The expected strings are Python's bytes.decode("utf-8", "replace"):
 * one U+FFFD for each maximal subpart of an ill-formed sequence. */
Test(utf8, valid_text_is_kept_byte_for_byte)
{
	expect_repair("java.lang.String", 16, "java.lang.String");
	expect_repair("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
		      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	expect_repair("\xef\xbf\xbd", 3, R);
}

Test(utf8, each_maximal_ill_formed_subpart_becomes_one_replacement)
{
	expect_repair("a\x80" "b", 3, "a" R "b");
	expect_repair("\xff\xfe", 2, R R);
	/* overlong forms */
	expect_repair("\xc0\xaf", 2, R R);
	expect_repair("\xe0\x80\x80", 3, R R R);
	/* an encoded surrogate, a code point past U+10FFFF */
	expect_repair("\xed\xa0\x80", 3, R R R);
	expect_repair("\xf4\x90\x80\x80", 4, R R R R);
	/* truncated sequences: one replacement for what was there */
	expect_repair("\xe2\x82", 2, R);
	expect_repair("\xf0\x9f\x98" "x", 4, R "x");
	/* a truncated sequence at the end of the given length, before
	 * bytes that would have completed it */
	expect_repair("\xe2\x82\xac", 2, R);
}

Test(utf8, next_gives_code_points_and_lengths)
{
	uint32_t cp;

	cr_assert_eq(utf8_next((const unsigned char *)"\x1b", 1, &cp), 1);
	cr_assert_eq(cp, 0x1b);
	cr_assert_eq(utf8_next((const unsigned char *)"\xc2\x85", 2, &cp), 2);
	cr_assert_eq(cp, 0x85);
	cr_assert_eq(utf8_next((const unsigned char *)"\xe2\x80\xa8", 3, &cp),
		     3);
	cr_assert_eq(cp, 0x2028);
	cr_assert_eq(utf8_next((const unsigned char *)"\xf4\x8f\xbf\xbf", 4,
			       &cp), 4);
	cr_assert_eq(cp, 0x10ffff);
	cr_assert_eq(utf8_next((const unsigned char *)"\xc2" "a", 2, &cp), 1);
	cr_assert_eq(cp, UTF8_BAD);
}

static void expect_modified(const char *in, size_t n, const char *want)
{
	char out[64];
	size_t len = utf8_from_modified(out, in, n);

	cr_assert(len <= UTF8_REPAIR_BOUND(n));
	cr_assert_eq(len, strlen(want), "length %zu, want %zu", len,
		     strlen(want));
	cr_assert(memcmp(out, want, len) == 0);
	cr_assert(utf8_valid(out, len));
}

Test(utf8, modified_utf8_becomes_standard_utf8)
{
	/* U+1F600 as Java writes it: the surrogates D83D DE00, 3 bytes each */
	expect_modified("A\xed\xa0\xbd\xed\xb8\x80" "B", 8,
			"A\xf0\x9f\x98\x80" "B");
	/* U+10FFFF: DBFF DFFF */
	expect_modified("\xed\xaf\xbf\xed\xbf\xbf", 6, "\xf4\x8f\xbf\xbf");
	/* U+0000, in Java's form and raw: not in a C string */
	expect_modified("a\xc0\x80" "b", 4, "a" R "b");
	expect_modified("a\0b", 3, "a" R "b");
	/* unpaired surrogates: one replacement each */
	expect_modified("\xed\xa0\xbd" "x", 4, R "x");
	expect_modified("\xed\xb8\x80", 3, R);
	expect_modified("\xed\xb8\x80\xed\xa0\xbd", 6, R R);
	/* a high surrogate, then a low one cut short: the rest is repaired
	 * as standard UTF-8, where ED B8 is two ill-formed subparts */
	expect_modified("\xed\xa0\xbd\xed\xb8", 5, R R R);
	/* ordinary text and other damage as utf8_repair does */
	expect_modified("java/lang/String", 16, "java/lang/String");
	expect_modified("\xc3\xa9\x80", 3, "\xc3\xa9" R);
}

/* ---- membudget.h --------------------------------------------------------- */

Test(membudget, default_scales_with_the_input_within_floor_and_ram)
{
	uint64_t gib = (uint64_t)1 << 30;

	/* a hostile MB gets the floor, not 12 GB */
	cr_assert_eq(mem_budget_default(1 << 20, 64 * gib), gib);
	/* a real trace of 122 MB gets 64 times its size */
	cr_assert_eq(mem_budget_default(122000000, 64 * gib),
		     (uint64_t)122000000 * 64);
	/* never more than three quarters of the machine */
	cr_assert_eq(mem_budget_default(100 * gib, 16 * gib), 12 * gib);
	cr_assert_eq(mem_budget_default(UINT64_MAX, 0), UINT64_MAX);
}

Test(membudget, growth_past_the_limit_is_refused_and_given_back)
{
	uint64_t *v = NULL, charged = 0;
	size_t cap = 0;

	mem_budget_set(2000);
	cr_assert_eq(BUDGET_GROW(v, 100, cap, charged), 0);
	cr_assert_eq(charged, cap * sizeof(*v));
	cr_assert_not(mem_budget_exceeded());
	cr_assert_eq(BUDGET_GROW(v, 200, cap, charged), -1);
	cr_assert(mem_budget_exceeded());
	cr_assert_eq(cap, 128, "the array is untouched");
	mem_budget_release(charged);
	mem_budget_set(0);
	cr_assert_eq(BUDGET_GROW(v, 200, cap, charged), 0);
	free(v);
}

/* Durations for people: the unit that keeps 1 to 999 of it, truncated
 * so that a figure never reads as the next unit's. */
Test(humanize, durations)
{
	char buf[DURATION_TEXT];

	cr_assert_str_eq(human_duration(0, buf), "0 ns");
	cr_assert_str_eq(human_duration(999, buf), "999 ns");
	cr_assert_str_eq(human_duration(1000, buf), "1.0 us");
	cr_assert_str_eq(human_duration(12345, buf), "12.3 us");
	cr_assert_str_eq(human_duration(999999, buf), "999.9 us");
	cr_assert_str_eq(human_duration(1000000, buf), "1.00 ms");
	cr_assert_str_eq(human_duration(4567890, buf), "4.56 ms");
	cr_assert_str_eq(human_duration(999999999, buf), "999.99 ms");
	cr_assert_str_eq(human_duration(1234567890, buf), "1.234 s");
	cr_assert_str_eq(human_duration(UINT64_MAX, buf),
			 "18446744073.709 s");
}

/* /proc's files say size 0, so the reader grows past several reads. */
Test(procfile, reads_a_file_longer_than_one_read_whole)
{
	char path[] = "/tmp/ht-procfile-XXXXXX";
	int fd = mkstemp(path);
	size_t len = 0;
	char *buf;

	cr_assert(fd >= 0);
	for (int i = 0; i < 10000; i++)
		cr_assert(write(fd, i % 2 ? "b" : "a\0", i % 2 ? 1 : 2) > 0);
	close(fd);
	buf = proc_file_read(path, &len);
	unlink(path);
	cr_assert_not_null(buf);
	cr_assert_eq(len, 15000);
	cr_assert_eq(buf[0], 'a');
	cr_assert_eq(buf[1], '\0');
	cr_assert_eq(buf[14999], 'b');
	cr_assert_eq(buf[15000], '\0');
	free(buf);
}

Test(procfile, a_file_that_cannot_be_opened_is_null)
{
	cr_assert_null(proc_file_read("/proc/self/no-such-file", NULL));
}

Test(procfile, reads_this_process_command_line)
{
	size_t len = 0;
	char *buf = proc_file_read("/proc/self/cmdline", &len);

	cr_assert_not_null(buf);
	cr_assert_gt(len, 0);
	cr_assert_eq(buf[len - 1], '\0', "cmdline ends its last word");
	free(buf);
}

/* A string's code units (util/utf8.h, utf8_from_units): Latin-1 bytes,
 * UTF-16 in either order, surrogate pairs joined, unpaired surrogates and
 * U+0000 replaced, cut after max_chars characters, and how many units
 * the text stands for. */
Test(utf8, string_units_become_utf8)
{
	static const struct {
		const char *units;
		size_t n;
		enum utf8_units how;
		size_t max;
		const char *want;
		size_t used;    /* code units read */
	} cases[] = {
		{ "h\xe9llo", 5, UNITS_LATIN1, 99, "h\xc3\xa9llo", 5 },
		{ "a\0b", 3, UNITS_LATIN1, 99, "a" UTF8_REPLACEMENT "b", 3 },
		{ "\xe9\x00\xac\x20", 4, UNITS_UTF16LE, 99,
		  "\xc3\xa9\xe2\x82\xac", 2 },
		{ "\x00\xe9\x20\xac", 4, UNITS_UTF16BE, 99,
		  "\xc3\xa9\xe2\x82\xac", 2 },
		/* U+1F600 as a pair, then a lone high and a lone low */
		{ "\x3d\xd8\x00\xde", 4, UNITS_UTF16LE, 99,
		  "\xf0\x9f\x98\x80", 2 },
		{ "\x3d\xd8" "a\x00", 4, UNITS_UTF16LE, 99,
		  UTF8_REPLACEMENT "a", 2 },
		{ "\x00\xde", 2, UNITS_UTF16LE, 99, UTF8_REPLACEMENT, 1 },
		{ "\x00\x00", 2, UNITS_UTF16LE, 99, UTF8_REPLACEMENT, 1 },
		/* an odd last byte is no unit */
		{ "a\x00z", 3, UNITS_UTF16LE, 99, "a", 1 },
		{ "abcdef", 6, UNITS_LATIN1, 4, "abcd", 4 },
		/* cut after a pair: its two units are read */
		{ "\x3d\xd8\x00\xde" "a\x00", 6, UNITS_UTF16LE, 1,
		  "\xf0\x9f\x98\x80", 2 },
		{ "", 0, UNITS_UTF16BE, 99, "", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char out[64];
		size_t chars = 99; /* the units read */
		size_t len = utf8_from_units(out, (const uint8_t *)cases[i].units,
					     cases[i].n, cases[i].how,
					     cases[i].max, &chars);

		cr_assert_eq(len, strlen(cases[i].want), "case %zu", i);
		cr_assert_eq(memcmp(out, cases[i].want, len), 0, "case %zu", i);
		cr_assert_eq(chars, cases[i].used, "case %zu", i);
	}
}
