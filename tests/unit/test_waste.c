/*
 * test_waste.c - the duplicates `waste` finds (analysis/waste.h), on a
 * hand-made dump whose duplicates are known (testdata/waste.yaml says
 * them and their sizes) and on .NET strings (testdata/waste-clr.yaml):
 * groups, counts, distinct arrays, bytes wasted, their order, the
 * holders of the copies; an array kept as a prefix and a hash groups
 * with an equal one and not with one of another hash; the
 * empty and sparse collections of testdata/analysis/collections.yaml,
 * their figures worked out by hand from its comments; and a dump scanned
 * without values says it has none.
 */
#include "analysis/heap.h"
#include "analysis/values.h"
#include "analysis/waste.h"
#include "testutil.h"

#include <criterion/criterion.h>

#include <string.h>

static struct heap *kept;

static int keep(void *ctx, struct heap *h, bool *keep_it)
{
	(void)ctx;
	kept = h;
	*keep_it = true;
	return 0;
}

/* The last dump of testdata/NAME, with its values when asked. */
static struct heap *load(const char *name, bool values)
{
	struct ht_reader_options opts = {.values = values};
	struct heap_scan_options scan = {.values = values};
	struct heap_scan_report rep;
	struct ht_error err;
	struct ht_reader *r = ht_reader_open_with(testdata(name), &opts, &err);

	cr_assert_not_null(r, "%s", err.message);
	kept = NULL;
	cr_assert_eq(heap_scan_with(r, HEAP_LAST_DUMP, &scan, keep, NULL, &rep,
				    &err), 0, "%s", err.message);
	ht_reader_close(r);
	cr_assert_not_null(kept);
	return kept;
}

static ht_id id_of(const struct heap *h, uint32_t object)
{
	return heap_id(h, object);
}

Test(waste, duplicate_strings)
{
	struct heap *h = load("waste.yaml", true);
	struct waste w;
	struct ht_error err;
	const struct waste_group *g;

	cr_assert_eq(waste_compute(h, &w, &err), 0, "%s", err.message);
	cr_assert(w.has_values);
	cr_assert_eq(w.strings.examined, 6);
	cr_assert_eq(w.strings.n_groups, 2);
	cr_assert_eq(w.strings.objects, 5);
	cr_assert_eq(w.strings.copies, 3);
	cr_assert_eq(w.strings.wasted, 72 + 48);
	/* "hello": three Strings, two sharing one array */
	g = &w.strings.groups[0];
	cr_assert_eq(id_of(h, g->first), 0x2000);
	cr_assert_eq(g->count, 3);
	cr_assert_eq(g->arrays, 2);
	cr_assert_eq(g->bytes, 3 * 24 + 2 * 24);
	cr_assert_eq(g->wasted, 72);
	/* "é€" in UTF-16 */
	g = &w.strings.groups[1];
	cr_assert_eq(id_of(h, g->first), 0x2300);
	cr_assert_eq(g->count, 2);
	cr_assert_eq(g->arrays, 2);
	cr_assert_eq(g->wasted, 48);
	waste_free(&w);
	heap_free(h);
}

/* A System.String holds its characters itself: a copy is one object,
 * one "array" (testdata/waste-clr.yaml). */
Test(waste, dotnet_strings)
{
	struct heap *h = load("waste-clr.yaml", true);
	struct waste w;
	struct ht_error err;
	const struct waste_group *g;

	cr_assert_eq(waste_compute(h, &w, &err), 0, "%s", err.message);
	cr_assert_eq(w.strings.examined, 6);
	cr_assert_eq(w.strings.n_groups, 2);
	cr_assert_eq(w.strings.wasted, 60 + 24);
	g = &w.strings.groups[0];
	cr_assert_eq(id_of(h, g->first), 0x2000);
	cr_assert_eq(g->count, 3);
	cr_assert_eq(g->arrays, 3);
	cr_assert_eq(g->bytes, 90);
	cr_assert_eq(g->wasted, 60);
	cr_assert_eq(w.strings.groups[1].wasted, 24);
	/* the strings are not arrays too */
	cr_assert_eq(w.arrays.examined, 2);
	cr_assert_eq(w.arrays.n_groups, 1);
	cr_assert_eq(w.arrays.wasted, 32);
	waste_free(&w);
	heap_free(h);
}

Test(waste, duplicate_arrays_not_strings_own)
{
	struct heap *h = load("waste.yaml", true);
	struct waste w;
	struct ht_error err;

	cr_assert_eq(waste_compute(h, &w, &err), 0, "%s", err.message);
	/* the Strings' six byte[] are not counted again */
	cr_assert_eq(w.arrays.examined, 6);
	cr_assert_eq(w.arrays.n_groups, 2);
	cr_assert_eq(w.arrays.copies, 2);
	cr_assert_eq(w.arrays.wasted, 416 + 32);
	/* a prefix and a hash equal: equal; another hash: not */
	cr_assert_eq(id_of(h, w.arrays.groups[0].first), 0x4200);
	cr_assert_eq(w.arrays.groups[0].count, 2);
	cr_assert_eq(w.arrays.groups[0].wasted, 416);
	cr_assert_eq(id_of(h, w.arrays.groups[1].first), 0x4000);
	cr_assert_eq(w.arrays.groups[1].arrays, 2);
	cr_assert_eq(w.arrays.groups[1].wasted, 32);
	waste_free(&w);
	heap_free(h);
}

Test(waste, holders_of_the_copies)
{
	struct heap *h = load("waste.yaml", true);
	struct waste w;
	struct ht_error err;
	const struct waste_group *g;

	cr_assert_eq(waste_compute(h, &w, &err), 0, "%s", err.message);
	cr_assert_eq(waste_find_holders(h, &w, &w.strings, 1, 5, &err), 0);
	cr_assert_eq(waste_find_holders(h, &w, &w.arrays, 2, 5, &err), 0);
	/* "hello" is held three times by Session.name */
	g = &w.strings.groups[0];
	cr_assert_eq(g->n_holders, 1);
	cr_assert_eq(g->holders[0].count, 3);
	cr_assert_str_eq(h->fields[g->holders[0].field - 1].name, "name");
	/* only the groups asked for get holders */
	cr_assert_eq(w.strings.groups[1].n_holders, 0);
	/* an array's element: no field, the holder's class */
	g = &w.arrays.groups[1];
	cr_assert_eq(g->n_holders, 1);
	cr_assert_eq(g->holders[0].field, HEAP_NO_FIELD);
	cr_assert_str_eq(h->classes[g->holders[0].slot].name,
			 "java.lang.Object[]");
	cr_assert_eq(g->holders[0].count, 2);
	waste_free(&w);
	heap_free(h);
}

Test(waste, totals_for_budgets)
{
	struct heap *h = load("waste.yaml", true);
	struct waste w;
	struct waste_totals t;
	struct ht_error err;

	cr_assert_eq(waste_compute(h, &w, &err), 0, "%s", err.message);
	waste_totals_of(&w, &t);
	cr_assert_eq(t.string_copies, 3);
	cr_assert_eq(t.string_bytes, 120);
	cr_assert_eq(t.array_copies, 2);
	cr_assert_eq(t.array_bytes, 448);
	cr_assert_eq(t.empty_collections, 0);
	cr_assert_eq(t.sparse_collections, 0);
	waste_free(&w);
	heap_free(h);
}

/* Row of the class called name. */
static const struct waste_collection_row *row_of(const struct heap *h,
						 const struct waste *w,
						 const char *name)
{
	for (size_t i = 0; i < w->collections.n_rows; i++) {
		uint32_t slot = w->collections.rows[i].slot;

		if (slot < h->n_classes && h->classes[slot].name &&
		    strcmp(h->classes[slot].name, name) == 0)
			return &w->collections.rows[i];
	}
	cr_assert_fail("no row of %s", name);
	return NULL;
}

/*
 * Of the ten collections: the HashMap never written to is empty (its 48
 * bytes, no table); under half full, with the bytes of their empty
 * slots (array bytes x empty / capacity): the HashMap of 3 in 16 (80 x
 * 13 / 16 = 65), the HashSet's 1 in 4 (32 x 3 / 4 = 24), the ArrayList's
 * 3 in 10 (56 x 7 / 10 = 39), the ArrayDeque's 3 in 8 (48 x 5 / 8 = 30),
 * a ConcurrentHashMap's 4 in 16 (80 x 12 / 16 = 60), the
 * IdentityHashMap's 1 in 4 (48 x 3 / 4 = 36), the Dictionary's 3 in 7
 * ((56 + 192) x 4 / 7 = 141): 395 bytes. The other ConcurrentHashMap
 * holds 5 in 8, the List's capacity is unknown. The HashSet's HashMap is
 * the set's, not counted again.
 */
Test(waste, empty_and_sparse_collections)
{
	struct heap *h = load("analysis/collections.yaml", true);
	const struct waste_collection_row *all, *r;
	struct waste w;
	struct ht_error err;

	cr_assert_eq(waste_compute(h, &w, &err), 0, "%s", err.message);
	all = &w.collections.all;
	cr_assert_eq(all->count, 10);
	cr_assert_eq(all->empty, 1);
	cr_assert_eq(all->empty_bytes, 48);
	cr_assert_eq(all->sparse, 7);
	cr_assert_eq(all->sparse_bytes, 65 + 24 + 39 + 30 + 60 + 36 + 141);
	r = row_of(h, &w, "java.util.HashMap");
	cr_assert_eq(r->count, 2, "the set's map is the set's");
	cr_assert_eq(r->empty, 1);
	cr_assert_eq(r->sparse, 1);
	cr_assert_eq(r->sparse_bytes, 65);
	r = row_of(h, &w, "java.util.concurrent.ConcurrentHashMap");
	cr_assert_eq(r->count, 2);
	cr_assert_eq(r->sparse, 1);
	/* most bytes first: the Dictionary's 141 */
	cr_assert_eq(w.collections.rows[0].sparse_bytes, 141);
	waste_free(&w);
	heap_free(h);
}

/* Without values nothing is known, which is not "no waste". */
Test(waste, no_values)
{
	struct heap *h = load("waste.yaml", false);
	struct waste w;
	struct ht_error err;

	cr_assert_eq(waste_compute(h, &w, &err), 0, "%s", err.message);
	cr_assert_not(w.has_values);
	cr_assert_eq(w.strings.n_groups, 0);
	waste_free(&w);
	heap_free(h);
}

/* A real dump (JDK 17): groups of two or more, in order of bytes
 * wasted, whose figures add up to the totals (tests/cli's waste-hprof
 * checks them against an independent reading of the dump). */
Test(waste, real_dump_groups_are_equal_texts)
{
	struct heap *h = load("hprof/knownheap.hprof", true);
	struct waste w;
	struct ht_error err;
	uint64_t copies = 0, wasted = 0;

	cr_assert_eq(waste_compute(h, &w, &err), 0, "%s", err.message);
	cr_assert_gt(w.strings.n_groups, 0);
	for (size_t i = 0; i < w.strings.n_groups; i++) {
		const struct waste_group *g = &w.strings.groups[i];

		cr_assert_geq(g->count, 2);
		cr_assert_leq(g->arrays, g->count);
		copies += g->count - 1;
		wasted += g->wasted;
		if (i)
			cr_assert_geq(w.strings.groups[i - 1].wasted, g->wasted);
	}
	cr_assert_eq(copies, w.strings.copies);
	cr_assert_eq(wasted, w.strings.wasted);
	waste_free(&w);
	heap_free(h);
}
