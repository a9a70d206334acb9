/*
 * test_collections.c - collections measured (src/analysis/collections.c)
 * on testdata/analysis/collections.yaml, whose comments give each one's
 * size and capacity: with values, every figure; without them, sizes
 * unknown and only Java's capacities (their arrays' element references)
 * known; which class names are collections.
 */
#include <criterion/criterion.h>

#include "analysis/collections.h"
#include "analysis/heap.h"
#include "testutil.h"

#include <string.h>

static struct heap *got;

static int keep_dump(void *ctx, struct heap *h, bool *keep)
{
	(void)ctx;
	got = h;
	*keep = true;
	return 0;
}

static struct heap *load(bool values)
{
	struct heap_scan_report report;
	struct ht_error err;
	struct ht_reader *r = ht_reader_open(
		testdata("analysis/collections.yaml"), &err);

	cr_assert_not_null(r, "%s", err.message);
	cr_assert_eq(heap_scan_with(r, HEAP_LAST_DUMP,
				    &(struct heap_scan_options){
					    .values = values},
				    keep_dump, NULL, &report, &err),
		     0, "%s", err.message);
	ht_reader_close(r);
	cr_assert_not_null(got);
	return got;
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
		{0x1080, "System.Collections.Generic.List", 2, -1, 0, 0},
	};
	struct heap *h = load(true);

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
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

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
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

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
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

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
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
