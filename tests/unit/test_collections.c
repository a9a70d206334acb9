/*
 * test_collections.c - collections measured (src/analysis/collections.c)
 * on testdata/analysis/collections.yaml, whose comments give each one's
 * size and capacity: with values, every figure; without them, sizes
 * unknown and only Java's capacities (their arrays' element references)
 * known; which class names are collections; the labels of paths and top
 * (src/analysis/labels.c) on its collections and strings; in
 * testdata/analysis/collections-odd.yaml, fields no runtime writes, whose
 * figures are unknown rather than wrong; and that the objects
 * object_label_sources names are all a label reads: a label made of their
 * values alone is the one all values make, for every object of these
 * dumps and knownheap.hprof (what top's second read relies on).
 */
#include <criterion/criterion.h>

#include "analysis/collections.h"
#include "analysis/heap.h"
#include "analysis/labels.h"
#include "testutil.h"
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

static struct heap *got;

static int keep_dump(void *ctx, struct heap *h, bool *keep)
{
	(void)ctx;
	got = h;
	*keep = true;
	return 0;
}

/* The last dump of testdata's name, built with opts (an HPROF dump read
 * with values when opts asks for them). */
static struct heap *load_with(const char *name,
			      const struct heap_scan_options *opts)
{
	struct heap_scan_report report;
	struct ht_error err;
	struct ht_reader_options ro = {.values = opts->values};
	struct ht_reader *r = ht_reader_open_with(testdata(name), &ro, &err);

	cr_assert_not_null(r, "%s", err.message);
	cr_assert_eq(heap_scan_with(r, HEAP_LAST_DUMP, opts, keep_dump, NULL,
				    &report, &err),
		     0, "%s", err.message);
	ht_reader_close(r);
	cr_assert_not_null(got);
	return got;
}

static struct heap *load_file(const char *name, bool values)
{
	return load_with(name, &(struct heap_scan_options){.values = values});
}

static struct heap *load(bool values)
{
	return load_file("analysis/collections.yaml", values);
}

/* What one collection of the test data should measure: -1 unknown. */
struct expected {
	ht_id id;
	const char *kind;
	int64_t size, capacity;
	uint64_t array_bytes, wasted;
};

static void check(const struct heap *h, const struct expected *x)
{
	struct collection c;
	uint32_t o = heap_find(h, x->id);

	cr_assert_neq(o, HEAP_NONE);
	cr_assert(collection_of(h, o, &c), "0x%llx is a collection",
		  (unsigned long long)x->id);
	cr_assert_str_eq(c.kind->name, x->kind);
	cr_assert_eq(c.has_size, x->size >= 0, "0x%llx: size known",
		     (unsigned long long)x->id);
	if (x->size >= 0)
		cr_assert_eq(c.size, (uint64_t)x->size, "0x%llx: size %llu",
			     (unsigned long long)x->id,
			     (unsigned long long)c.size);
	cr_assert_eq(c.has_capacity, x->capacity >= 0,
		     "0x%llx: capacity known", (unsigned long long)x->id);
	if (x->capacity >= 0)
		cr_assert_eq(c.capacity, (uint64_t)x->capacity,
			     "0x%llx: capacity %llu", (unsigned long long)x->id,
			     (unsigned long long)c.capacity);
	cr_assert_eq(c.array_bytes, x->array_bytes, "0x%llx: array bytes %llu",
		     (unsigned long long)x->id,
		     (unsigned long long)c.array_bytes);
	cr_assert_eq(c.wasted, x->wasted, "0x%llx: wasted %llu",
		     (unsigned long long)x->id, (unsigned long long)c.wasted);
}

#define HASHMAP "java.util.HashMap"
#define CHM "java.util.concurrent.ConcurrentHashMap"
#define DICT "System.Collections.Generic.Dictionary"

Test(collections, measured_with_values)
{
	/* wasted: the arrays' bytes times empty slots over capacity, floored */
	static const struct expected want[] = {
		{0x1000, HASHMAP, 3, 16, 80, 80 * 13 / 16},
		{0x1001, HASHMAP, 0, 0, 0, 0},
		{0x1010, "java.util.HashSet", 1, 4, 32, 32 * 3 / 4},
		{0x1020, "java.util.ArrayList", 3, 10, 56, 56 * 7 / 10},
		{0x1030, "java.util.ArrayDeque", 3, 8, 48, 48 * 5 / 8},
		{0x1040, CHM, 4, 16, 80, 80 * 12 / 16},
		{0x1041, CHM, 5, 8, 48, 48 * 3 / 8},
		{0x1060, "java.util.IdentityHashMap", 1, 4, 48, 48 * 3 / 4},
		{0x1070, DICT, 3, 7, 56 + 192, (56 + 192) * 4 / 7},
		/* its String[]'s nulls kept: the List's values say so */
		{0x1080, "System.Collections.Generic.List", 2, 4, 56, 56 * 2 / 4},
	};
	struct heap *h = load(true);

	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		check(h, &want[i]);
	heap_free(h);
}

Test(collections, sizes_unknown_without_values)
{
	/* Java's capacities are the arrays' element references, nulls
	 * kept; .NET's need the buckets' values */
	static const struct expected want[] = {
		{0x1000, HASHMAP, -1, 16, 80, 0},
		{0x1001, HASHMAP, -1, 0, 0, 0},
		{0x1010, "java.util.HashSet", -1, 4, 32, 0},
		{0x1020, "java.util.ArrayList", -1, 10, 56, 0},
		{0x1030, "java.util.ArrayDeque", -1, 8, 48, 0},
		{0x1040, CHM, -1, 16, 80, 0},
		{0x1060, "java.util.IdentityHashMap", -1, 4, 48, 0},
		{0x1070, DICT, -1, -1, 0, 0},
		{0x1080, "System.Collections.Generic.List", -1, -1, 0, 0},
	};
	struct heap *h = load(false);

	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		check(h, &want[i]);
	heap_free(h);
}

Test(collections, odd_fields_make_unknown_figures)
{
	static const struct expected want[] = {
		/* sets that wrap each other: neither is measured */
		{0x1010, "java.util.HashSet", -1, -1, 0, 0},
		{0x1011, "java.util.HashSet", -1, -1, 0, 0},
		{0x1020, "java.util.ArrayList", -1, 2, 24, 0},
		/* its array is dangling: unknown, not a null's 0 */
		{0x1021, "java.util.ArrayList", 1, -1, 0, 0},
		{0x1030, "java.util.ArrayDeque", -1, 8, 48, 0},
		{0x1040, CHM, -1, 0, 0, 0},
		{0x1070, DICT, -1, 3, 28, 0},
	};
	struct heap *h = load_file("analysis/collections-odd.yaml", true);

	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		check(h, &want[i]);
	heap_free(h);
}

Test(collections, the_backing_array)
{
	struct heap *h = load(true);
	struct collection c;

	cr_assert(collection_of(h, heap_find(h, 0x1000), &c));
	cr_assert_eq(c.array, heap_find(h, 0x2000));
	cr_assert(collection_of(h, heap_find(h, 0x1001), &c));
	cr_assert_eq(c.array, HEAP_NONE, "a null table");
	cr_assert(collection_of(h, heap_find(h, 0x1010), &c));
	cr_assert_eq(c.array, heap_find(h, 0x2001), "the set's map's table");
	heap_free(h);
}

Test(collections, other_objects_are_none)
{
	struct heap *h = load(true);
	struct collection c;

	/* an array, an entry, a counter cell, a struct array */
	static const ht_id others[] = {0x2000, 0x3000, 0x1050, 0x2009};

	for (size_t i = 0; i < ARRAY_SIZE(others); i++)
		cr_assert_not(collection_of(h, heap_find(h, others[i]), &c),
			      "0x%llx", (unsigned long long)others[i]);
	heap_free(h);
}

Test(collections, kinds_by_class_name)
{
	static const struct {
		const char *name, *kind;
	} names[] = {
		{"java.util.HashMap", HASHMAP},
		{"java.util.LinkedHashMap", "java.util.LinkedHashMap"},
		{"java.util.HashMap$Node", NULL},
		{"java.util.HashMap[]", NULL},
		{"com.example.MyMap", NULL},
		{"System.Collections.Generic.Dictionary<System.String,"
		 "System.Collections.Generic.List<System.Int32>>", DICT},
		{"System.Collections.Generic.Dictionary`2", DICT},
		{"System.Collections.Generic.Dictionary`2[[System.String],"
		 "[System.Int32]]", DICT},
		{"System.Collections.Generic.Dictionary`2+Entry", NULL},
		{"System.Collections.Generic.Dictionary<System.String,"
		 "System.Int32>+Entry", NULL},
		{"System.Collections.Generic.List<System.String>[]", NULL},
		{"System.Collections.Generic.List`1[[System.String]][]", NULL},
		{"System.Collections.Generic.List<System.String",
		 NULL}, /* unclosed */
		{"System.Collections.Generic.Queue`1",
		 "System.Collections.Generic.Queue"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const struct collection_kind *k =
			collection_kind_of_class(names[i].name);

		if (!names[i].kind)
			cr_assert_null(k, "%s", names[i].name);
		else {
			cr_assert_not_null(k, "%s", names[i].name);
			cr_assert_str_eq(k->name, names[i].kind);
		}
	}
	cr_assert_null(collection_kind_of_class(NULL));
}

/* ---- labels (src/analysis/labels.c) ------------------------------------ */

struct expected_label {
	ht_id id;
	const char *label; /* NULL: none */
};

static void check_labels(const struct heap *h, const struct expected_label *x,
			 size_t n)
{
	char buf[LABEL_BOUND];

	for (size_t i = 0; i < n; i++) {
		const char *l = object_label(h, heap_find(h, x[i].id), buf);

		if (!x[i].label)
			cr_assert_null(l, "0x%llx: %s",
				       (unsigned long long)x[i].id, l);
		else
			cr_assert_str_eq(l ? l : "(none)", x[i].label,
					 "0x%llx", (unsigned long long)x[i].id);
	}
}

Test(labels, with_values)
{
	static const struct expected_label want[] = {
		{0x1000, "size 3 of 16"},
		{0x1001, "size 0 of 0"},
		{0x1080, "size 2 of 4"},
		{0x4000, "\"line1\nsaid \"hi\"\t|x\""},
		{0x4001, "\"0123456789012345678901234567890123456789\"..."},
		{0x4002, "\"h\xc3\xa9llo\xe2\x82\xac\""},
		/* a surrogate pair: 2 characters in 3 units, all shown */
		{0x4003, "\"a\xf0\x9f\x98\x80\""},
		{0x4004, "\"abcdefghijabcdefghijabcdefghijabcdefghij\""},
		/* the trace kept 10 of 300 */
		{0x4005, "\"xxxxxxxxxx\"..."},
		{0x2000, NULL},
		{0x5000, NULL},
	};
	struct heap *h = load(true);

	check_labels(h, want, ARRAY_SIZE(want));
	heap_free(h);
}

Test(labels, without_values)
{
	static const struct expected_label want[] = {
		{0x1000, "size unknown, capacity 16"},
		{0x1070, "size unknown"},
		{0x4000, NULL}, /* a string whose text the dump did not keep */
	};
	struct heap *h = load(false);

	check_labels(h, want, ARRAY_SIZE(want));
	heap_free(h);
}

/* ---- what a label reads ----------------------------------------------- */

struct marks {
	const struct heap *h;
	bool *marked;   /* per object */
};

static void mark(void *ctx, uint32_t object)
{
	struct marks *m = ctx;

	cr_assert_lt(object, m->h->n);
	m->marked[object] = true;
}

/* full's graph with the values of the marked objects only, as a second
 * read with heap_scan_options.values_of keeps them: a copy of the
 * struct whose value index (has_values, values_rank, values_at) is
 * rebuilt; the records stay full's. Free with free_masked. */
static struct heap masked(const struct heap *full, const bool *marked)
{
	struct heap m = *full;
	size_t words = ((size_t)full->n + 63) / 64;
	uint32_t n_valued = 0;
	struct value_record r;

	m.has_values = calloc(words + 1, sizeof(*m.has_values));
	m.values_rank = calloc(words + 1, sizeof(*m.values_rank));
	m.values_at = calloc(full->n + 1, sizeof(*m.values_at));
	cr_assert(m.has_values && m.values_rank && m.values_at);
	for (uint32_t i = 0; i < full->n; i++) {
		if (i % 64 == 0)
			m.values_rank[i / 64] = n_valued;
		if (!marked[i] || !heap_object_values(full, i, &r))
			continue;
		m.has_values[i / 64] |= 1ULL << (i % 64);
		m.values_at[n_valued++] =
			full->values_at[full->values_rank[i / 64] +
					(uint32_t)__builtin_popcountll(
						full->has_values[i / 64] &
						((1ULL << (i % 64)) - 1))];
	}
	return m;
}

static void free_masked(struct heap *m)
{
	free(m->has_values);
	free(m->values_rank);
	free(m->values_at);
}

/* For every object of name's last dump: its label from the values of
 * its sources alone is its label from all values. Returns how many
 * objects have a label, so that a test sees it checked some. */
static size_t check_sources(const char *name)
{
	struct heap *full = load_file(name, true);
	bool *marked = calloc(full->n + 1, sizeof(*marked));
	struct marks mk = {full, marked};
	size_t labelled = 0;

	cr_assert_not_null(marked);
	cr_assert_not_null(full->has_values, "%s has values", name);
	for (uint32_t o = 0; o < full->n; o++) {
		char want[LABEL_BOUND], have[LABEL_BOUND];
		const char *w = object_label(full, o, want), *g;
		struct heap part;

		memset(marked, 0, full->n * sizeof(*marked));
		object_label_sources(full, o, mark, &mk);
		part = masked(full, marked);
		g = object_label(&part, o, have);
		if (w)
			cr_assert_str_eq(g ? g : "(none)", w, "%s, 0x%llx",
					 name,
					 (unsigned long long)heap_id(full, o));
		else
			cr_assert_null(g, "%s, 0x%llx: %s", name,
				       (unsigned long long)heap_id(full, o), g);
		labelled += w != NULL;
		free_masked(&part);
	}
	free(marked);
	heap_free(full);
	return labelled;
}

Test(labels, sources_are_all_a_label_reads)
{
	cr_assert_gt(check_sources("analysis/collections.yaml"), 10);
	cr_assert_gt(check_sources("analysis/collections-odd.yaml"), 5);
	cr_assert_gt(check_sources("hprof/knownheap.hprof"), 500);
}

/* A label's sources are found without values: from the graph alone (an
 * HPROF dump read without them declares no primitive field) they are the
 * same objects. */
static void check_sources_without_values(const char *name)
{
	struct heap *with = load_file(name, true);
	struct heap *without = load_file(name, false);
	bool *a = calloc(with->n + 1, 1), *b = calloc(with->n + 1, 1);
	struct marks ma = {with, a}, mb = {without, b};
	size_t marked = 0;

	cr_assert(a && b);
	cr_assert_null(without->has_values);
	cr_assert_eq(with->n, without->n);
	for (uint32_t o = 0; o < with->n; o++) {
		object_label_sources(with, o, mark, &ma);
		object_label_sources(without, o, mark, &mb);
	}
	for (uint32_t o = 0; o < with->n; o++) {
		cr_assert_eq(a[o], b[o], "%s, 0x%llx", name,
			     (unsigned long long)heap_id(with, o));
		marked += a[o];
	}
	cr_assert_gt(marked, 10, "%s", name);
	free(a);
	free(b);
	heap_free(with);
	heap_free(without);
}

Test(labels, sources_need_no_values)
{
	check_sources_without_values("analysis/collections.yaml");
	check_sources_without_values("hprof/knownheap.hprof");
}

/* heap_scan_options.values_of: only the listed objects keep values. */
Test(labels, values_of_keeps_only_those_listed)
{
	static const ht_id listed[] = {0x1000, 0x4000};
	struct heap *all = load(true);
	struct heap *some = load_with("analysis/collections.yaml",
				      &(struct heap_scan_options){
					      .values = true,
					      .values_of = listed,
					      .n_values_of = 2});
	struct value_record r;
	size_t kept = 0;

	cr_assert_eq(all->n, some->n);
	for (uint32_t o = 0; o < some->n; o++) {
		bool want = heap_object_values(all, o, &r) &&
			    (heap_id(some, o) == listed[0] ||
			     heap_id(some, o) == listed[1]);

		cr_assert_eq(heap_object_values(some, o, &r), want,
			     "0x%llx", (unsigned long long)heap_id(some, o));
		kept += want;
	}
	cr_assert_eq(kept, 2);
	heap_free(all);
	heap_free(some);
}

/* heap_scan_report.values_seen: whether the objects carried values, kept
 * or not, so that top and paths read again only a trace that has some. */
static bool values_seen(const char *name, bool keep)
{
	struct heap_scan_report report;
	struct ht_error err;
	struct ht_reader *r = ht_reader_open(testdata(name), &err);

	cr_assert_not_null(r, "%s", err.message);
	cr_assert_eq(heap_scan_with(r, HEAP_LAST_DUMP,
				    &(struct heap_scan_options){.values = keep},
				    keep_dump, NULL, &report, &err),
		     0, "%s", err.message);
	ht_reader_close(r);
	heap_free(got);
	return report.values_seen;
}

Test(labels, values_seen_kept_or_not)
{
	cr_assert(values_seen("analysis/collections.yaml", true));
	cr_assert(values_seen("analysis/collections.yaml", false));
	cr_assert_not(values_seen("analysis/cli-shop.yaml", true));
	cr_assert_not(values_seen("analysis/cli-shop.yaml", false));
}
