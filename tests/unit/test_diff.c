/*
 * test_diff.c - diff_compute and diff_match_by_relocation
 * (src/analysis/diff.c) on the hand-solved traces of testdata/diff/ (their
 * header comments have the answers), on traces written here for one
 * question each (class names shared by two ids, long paths, a dump against
 * itself), and on seeded random heaps that grow, against what must hold
 * of any answer.
 */
#include <criterion/criterion.h>

#include "analysis/diff.h"
#include "analysis/dominators.h"
#include "testutil.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading ------------------------------------------------------------ */

struct pick {
	int64_t want[2];
	struct heap *got[2];
	uint64_t events;
};

static int keep_wanted(void *ctx, struct heap *h, bool *keep)
{
	struct pick *p = ctx;

	for (int i = 0; i < 2; i++) {
		if (p->want[i] == (int64_t)h->dump) {
			p->got[i] = h;
			*keep = true;
		}
	}
	return 0;
}

/* Dumps da and db of the trace at path (the same heap when da == db). */
static struct pick load_pair(const char *path, int64_t da, int64_t db)
{
	struct pick p = {.want = {da, db}};
	struct heap_scan_report rep;
	struct ht_error err;
	struct ht_reader *r = ht_reader_open(path, &err);

	cr_assert_not_null(r, "%s", err.message);
	cr_assert_eq(heap_scan(r, HEAP_ALL_DUMPS, keep_wanted, &p, &rep, &err),
		     0, "%s", err.message);
	ht_reader_close(r);
	cr_assert(p.got[0] && p.got[1], "%s lacks dump %" PRId64 " or %" PRId64,
		  path, da, db);
	p.events = rep.events;
	return p;
}

static struct heap *load_one(const char *path, int64_t dump)
{
	return load_pair(path, dump, dump).got[0];
}

/* A comparison and everything it borrows. */
struct fixture {
	struct heap *a, *b;
	struct heap_dominators da, db;
	uint32_t *a_of_b;
	struct diff d;
};

static void compute(struct fixture *f, bool by_id)
{
	struct ht_error err;

	cr_assert_eq(heap_dominators(f->a, &f->da, &err), 0);
	cr_assert_eq(heap_dominators(f->b, &f->db, &err), 0);
	cr_assert_eq(diff_compute(&f->d, f->a, &f->da, f->b, &f->db,
				  by_id ? f->a_of_b : NULL, &err), 0, "%s",
		     err.message);
}

/* Two dumps of one trace, matched through the relocation history. */
static void one_trace(struct fixture *f, const char *path, int64_t da,
		      int64_t db)
{
	struct pick p = load_pair(path, da, db);
	struct ht_error err;
	struct ht_reader *r = ht_reader_open(path, &err);

	memset(f, 0, sizeof(*f));
	cr_assert_not_null(r);
	f->a = p.got[0];
	f->b = p.got[1] == p.got[0] ? load_one(path, db) : p.got[1];
	cr_assert_eq(diff_match_by_relocation(r, f->a, f->b, p.events,
					      &f->a_of_b, &err), 0, "%s",
		     err.message);
	ht_reader_close(r);
	compute(f, true);
}

static void two_traces(struct fixture *f, const char *a, const char *b)
{
	memset(f, 0, sizeof(*f));
	f->a = load_one(testdata(a), 0);
	f->b = load_one(testdata(b), 0);
	compute(f, false);
}

static void release(struct fixture *f)
{
	diff_free(&f->d);
	free(f->a_of_b);
	heap_dominators_free(&f->da);
	heap_dominators_free(&f->db);
	heap_free(f->a);
	heap_free(f->b);
}

static uint32_t index_of(const struct heap *h, ht_id id)
{
	uint32_t i = heap_find(h, id);

	cr_assert_neq(i, HEAP_NONE, "no object 0x%" PRIx64, id);
	return i;
}

static void assert_value(struct diff_value v, uint64_t before, uint64_t after,
			 const char *what)
{
	cr_assert(v.before == before && v.after == after,
		  "%s: %" PRIu64 " -> %" PRIu64 ", expected %" PRIu64
		  " -> %" PRIu64, what, v.before, v.after, before, after);
}

static void assert_path(const struct diff *d, bool after, ht_id id,
			const char *want)
{
	char *path = diff_path(d, after, index_of(after ? d->b : d->a, id));

	cr_assert_not_null(path);
	cr_assert_str_eq(path, want);
	free(path);
}

/* ---- one trace, ids stable (one.yaml) ----------------------------------- */

Test(one_trace, totals)
{
	struct fixture f;

	one_trace(&f, testdata("diff/one.yaml"), 0, 1);
	cr_assert_eq(f.d.matching, DIFF_BY_ID);
	assert_value(f.d.objects, 5, 10, "objects");
	assert_value(f.d.bytes, 236, 860, "bytes");
	assert_value(f.d.retained, 236, 860, "retained");
	release(&f);
}

Test(one_trace, match_by_relocation)
{
	static const struct {
		ht_id after, before;
	} want[] = {
		{0x1000, 0x1000}, {0x2000, 0x2000}, {0x2100, 0x2100},
		{0x2110, 0x2110}, {0x3000, 0}, {0x3100, 0}, {0x2200, 0},
		{0x2210, 0}, {0x2300, 0}, {0x2310, 0},
	};
	struct fixture f;

	one_trace(&f, testdata("diff/one.yaml"), 0, 1);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		uint32_t a = f.a_of_b[index_of(f.b, want[i].after)];

		if (want[i].before)
			cr_assert_eq(a, index_of(f.a, want[i].before));
		else
			cr_assert_eq(a, HEAP_NONE, "0x%" PRIx64 " is new",
				     want[i].after);
	}
	release(&f);
}

Test(one_trace, classes_in_order)
{
	static const struct {
		const char *name;
		uint64_t c0, c1, b0, b1, r0, r1;
	} want[] = {
		{"byte[]", 2, 4, 164, 700, 164, 700},
		{"Entry", 1, 3, 24, 72, 124, 572},
		{"Session", 0, 1, 0, 40, 0, 240},
		{"Cache", 1, 1, 32, 32, 156, 604},
		{"App", 1, 1, 16, 16, 80, 256},
	};
	struct fixture f;

	one_trace(&f, testdata("diff/one.yaml"), 0, 1);
	cr_assert_eq(f.d.n_classes, 5);
	for (size_t i = 0; i < 5; i++) {
		const struct diff_class *c = &f.d.classes[i];

		cr_assert_str_eq(c->name, want[i].name);
		assert_value(c->count, want[i].c0, want[i].c1, c->name);
		assert_value(c->bytes, want[i].b0, want[i].b1, c->name);
		assert_value(c->retained, want[i].r0, want[i].r1, c->name);
	}
	release(&f);
}

Test(one_trace, retainers_by_growth_then_id)
{
	static const struct {
		ht_id id, before;
		uint64_t r0, r1;
	} want[] = {
		{0x2000, 0x2000, 156, 604}, {0x2100, 0x2100, 124, 572},
		{0x2200, 0, 0, 448}, {0x2300, 0, 0, 324}, {0x2310, 0, 0, 300},
		{0x3000, 0, 0, 240}, {0x3100, 0, 0, 200},
		{0x1000, 0x1000, 80, 256}, {0x2210, 0, 0, 100},
	};
	struct fixture f;

	one_trace(&f, testdata("diff/one.yaml"), 0, 1);
	cr_assert_eq(f.d.n_retainers, 9);
	for (size_t i = 0; i < 9; i++) {
		const struct diff_retainer *r = &f.d.retainers[i];

		cr_assert_eq(heap_id(f.b, r->after), want[i].id, "row %zu", i);
		if (want[i].before)
			cr_assert_eq(heap_id(f.a, r->before), want[i].before);
		else
			cr_assert_eq(r->before, HEAP_NONE);
		assert_value(r->retained, want[i].r0, want[i].r1, "retained");
		assert_value(r->objects, want[i].before != 0, 1, "objects");
	}
	release(&f);
}

Test(one_trace, new_objects_under_old_ones)
{
	struct fixture f;

	one_trace(&f, testdata("diff/one.yaml"), 0, 1);
	cr_assert_eq(f.d.new_objects, 6);
	cr_assert_eq(f.d.new_bytes, 688);
	cr_assert_eq(f.d.unheld_objects, 0);
	cr_assert_eq(f.d.n_holders, 2);
	cr_assert_eq(heap_id(f.b, f.d.holders[0].after), 0x2100);
	cr_assert_eq(f.d.holders[0].new_objects, 4);
	cr_assert_eq(f.d.holders[0].new_bytes, 448);
	cr_assert_eq(heap_id(f.a, f.d.holders[0].before), 0x2100);
	cr_assert_eq(heap_id(f.b, f.d.holders[1].after), 0x1000);
	cr_assert_eq(f.d.holders[1].new_objects, 2);
	cr_assert_eq(f.d.holders[1].new_bytes, 240);
	release(&f);
}

Test(one_trace, paths)
{
	struct fixture f;

	one_trace(&f, testdata("diff/one.yaml"), 0, 1);
	assert_path(&f.d, true, 0x2300, "C_RT_CLASS (Cache) > Cache > [0] "
		    "Entry > [1] Entry > [1] Entry");
	assert_path(&f.d, true, 0x3100, "C_RT_THREAD (main) > App > [0] "
		    "Session > [0] byte[]");
	assert_path(&f.d, false, 0x1100, "C_RT_THREAD (main) > App > [0] "
		    "byte[]");
	release(&f);
}

Test(one_trace, figures_by_name)
{
	struct fixture f;
	struct diff_value v;

	one_trace(&f, testdata("diff/one.yaml"), 0, 1);
	diff_total(&f.d, DIFF_COUNT, &v);
	assert_value(v, 5, 10, "total count");
	diff_total(&f.d, DIFF_RETAINED, &v);
	assert_value(v, 236, 860, "total retained");
	cr_assert(diff_class_value(&f.d, "Entry", DIFF_RETAINED, &v));
	assert_value(v, 124, 572, "Entry retained");
	cr_assert(diff_class_value(&f.d, "Session", DIFF_BYTES, &v));
	assert_value(v, 0, 40, "Session bytes");
	cr_assert_not(diff_class_value(&f.d, "Nope", DIFF_COUNT, &v));
	assert_value(v, 0, 0, "Nope");
	diff_object_value(&f.d, 0x2000, DIFF_RETAINED, &v);
	assert_value(v, 156, 604, "0x2000 retained");
	diff_object_value(&f.d, 0x2000, DIFF_BYTES, &v);
	assert_value(v, 32, 32, "0x2000 bytes");
	diff_object_value(&f.d, 0x3000, DIFF_COUNT, &v);
	assert_value(v, 0, 1, "0x3000 count");
	diff_object_value(&f.d, 0x1100, DIFF_BYTES, &v); /* died */
	assert_value(v, 64, 0, "0x1100 bytes");
	diff_object_value(&f.d, 0x9999, DIFF_COUNT, &v);
	assert_value(v, 0, 0, "no such object");
	release(&f);
}

Test(one_trace, backwards)
{
	struct fixture f;

	one_trace(&f, testdata("diff/one.yaml"), 1, 0);
	assert_value(f.d.objects, 10, 5, "objects");
	/* only the App's buffer is new going back, under the App */
	cr_assert_eq(f.d.new_objects, 1);
	cr_assert_eq(f.d.new_bytes, 64);
	cr_assert_eq(f.d.n_retainers, 1);
	cr_assert_eq(heap_id(f.b, f.d.retainers[0].after), 0x1100);
	cr_assert_eq(f.d.n_holders, 1);
	cr_assert_eq(heap_id(f.b, f.d.holders[0].after), 0x1000);
	release(&f);
}

Test(one_trace, a_dump_against_itself)
{
	struct fixture f;

	one_trace(&f, testdata("diff/one.yaml"), 1, 1);
	for (uint32_t i = 0; i < f.b->n; i++)
		cr_assert_eq(f.a_of_b[i], i);
	cr_assert_eq(f.d.n_retainers, 0);
	cr_assert_eq(f.d.n_holders, 0);
	cr_assert_eq(f.d.new_objects, 0);
	for (size_t i = 0; i < f.d.n_classes; i++) {
		cr_assert_eq(diff_change(f.d.classes[i].count), 0);
		cr_assert_eq(diff_change(f.d.classes[i].retained), 0);
	}
	release(&f);
}

/* ---- one trace, a compacting GC (moved.yaml) ---------------------------- */

Test(moved, matched_through_the_moves)
{
	struct fixture f;

	one_trace(&f, testdata("diff/moved.yaml"), 0, 1);
	cr_assert_eq(f.a_of_b[index_of(f.b, 0x800)], index_of(f.a, 0x1000));
	cr_assert_eq(f.a_of_b[index_of(f.b, 0x820)], index_of(f.a, 0x1020));
	cr_assert_eq(f.a_of_b[index_of(f.b, 0x838)], index_of(f.a, 0x1038));
	/* the Cart's old id now names a new Item */
	cr_assert_eq(f.a_of_b[index_of(f.b, 0x1000)], HEAP_NONE);
	cr_assert_eq(f.a_of_b[index_of(f.b, 0x1018)], HEAP_NONE);
	release(&f);
}

Test(moved, retainers_and_holders)
{
	struct fixture f;

	one_trace(&f, testdata("diff/moved.yaml"), 0, 1);
	cr_assert_eq(f.d.n_retainers, 3);
	cr_assert_eq(heap_id(f.b, f.d.retainers[0].after), 0x800);
	assert_value(f.d.retainers[0].retained, 120, 208, "cart");
	cr_assert_eq(heap_id(f.b, f.d.retainers[1].after), 0x1000);
	cr_assert_eq(f.d.retainers[1].before, HEAP_NONE);
	cr_assert_eq(heap_id(f.b, f.d.retainers[2].after), 0x1018);
	cr_assert_eq(f.d.n_holders, 1);
	cr_assert_eq(heap_id(f.b, f.d.holders[0].after), 0x800);
	cr_assert_eq(heap_id(f.a, f.d.holders[0].before), 0x1000);
	cr_assert_eq(f.d.holders[0].new_bytes, 88);
	assert_path(&f.d, true, 0x1018, "stack root > Shop.Cart > [1] "
		    "Shop.Item > [0] System.Byte[]");
	release(&f);
}

Test(moved, the_same_dumps_by_path)
{
	struct fixture f;
	const char *path = testdata("diff/moved.yaml");

	memset(&f, 0, sizeof(f));
	f.a = load_one(path, 0);
	f.b = load_one(path, 1);
	compute(&f, false);
	cr_assert_eq(f.d.matching, DIFF_BY_PATH);
	/* by path, the Cart's first Item is the same one, the second new */
	cr_assert_eq(f.d.n_retainers, 3);
	cr_assert_eq(heap_id(f.b, f.d.retainers[0].after), 0x800);
	cr_assert_eq(heap_id(f.b, f.d.retainers[1].after), 0x1000);
	assert_value(f.d.retainers[1].objects, 0, 1, "second item");
	cr_assert_eq(f.d.new_objects, 2);
	release(&f);
}

/* ---- two traces, by path (run1.yaml, run2.yaml) ------------------------- */

Test(two_traces, classes)
{
	static const char *const order[] = {
		"byte[]", "Entry", "Request", "Session", "Cache", "App",
	};
	struct fixture f;
	struct diff_value v;

	two_traces(&f, "diff/run1.yaml", "diff/run2.yaml");
	cr_assert_eq(f.d.matching, DIFF_BY_PATH);
	assert_value(f.d.objects, 7, 14, "objects");
	assert_value(f.d.bytes, 336, 1160, "bytes");
	cr_assert_eq(f.d.n_classes, 6);
	for (size_t i = 0; i < 6; i++)
		cr_assert_str_eq(f.d.classes[i].name, order[i]);
	cr_assert(diff_class_value(&f.d, "Request", DIFF_RETAINED, &v));
	assert_value(v, 100, 300, "Request retained");
	release(&f);
}

Test(two_traces, retainers_aggregate_paths)
{
	static const struct {
		ht_id rep;
		uint64_t o0, o1, r0, r1;
	} want[] = {
		{0x92000, 1, 1, 156, 604}, {0x92100, 1, 3, 124, 572},
		{0x92110, 1, 3, 100, 500}, {0x95000, 0, 1, 0, 240},
		{0x93000, 1, 2, 100, 300}, {0x95100, 0, 1, 0, 200},
		{0x91000, 1, 1, 80, 256}, {0x93100, 1, 2, 52, 204},
	};
	struct fixture f;

	two_traces(&f, "diff/run1.yaml", "diff/run2.yaml");
	cr_assert_eq(f.d.n_retainers, 8);
	for (size_t i = 0; i < 8; i++) {
		const struct diff_retainer *r = &f.d.retainers[i];

		cr_assert_eq(heap_id(f.b, r->after), want[i].rep, "row %zu: 0x%"
			     PRIx64, i, heap_id(f.b, r->after));
		assert_value(r->objects, want[i].o0, want[i].o1, "objects");
		assert_value(r->retained, want[i].r0, want[i].r1, "retained");
	}
	assert_path(&f.d, true, 0x94000, "C_RT_JIT (Worker.run) > Request");
	release(&f);
}

Test(two_traces, holders)
{
	struct fixture f;

	two_traces(&f, "diff/run1.yaml", "diff/run2.yaml");
	cr_assert_eq(f.d.new_objects, 8);
	cr_assert_eq(f.d.new_bytes, 888);
	/* the second Request and its buffer: a root holds them */
	cr_assert_eq(f.d.unheld_objects, 2);
	cr_assert_eq(f.d.unheld_bytes, 200);
	cr_assert_eq(f.d.n_holders, 2);
	cr_assert_eq(heap_id(f.b, f.d.holders[0].after), 0x92100);
	cr_assert_eq(f.d.holders[0].before, HEAP_NONE);
	cr_assert_eq(heap_id(f.b, f.d.holders[1].after), 0x91000);
	release(&f);
}

/* ---- traces written for one question ------------------------------------ */

static const char *write_trace(const char *name, const char *events)
{
	char *text;
	const char *path;
	int n = asprintf(&text, "heaptrace: 1\nruntime: msjvm\npointer_size: 4\n"
			 "reports_survivors: false\nevents:\n%s", events);

	cr_assert_gt(n, 0);
	path = tmp_file_with(name, text, (size_t)n);
	free(text);
	return path;
}

/* Two classes named Node (two class loaders) are one row; a Node under
 * a Node of the other id is not counted twice in its retained size. */
Test(written, classes_of_one_name_are_one_row)
{
	const char *path = write_trace("names.yaml",
		"  - class: {id: 0x10, name: Node}\n"
		"  - class: {id: 0x11, name: Node}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_CLASS, id1: 0x10}\n"
		"  - root_references: {refs: [0x100], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x100, class: 0x10, size: 8, refs: [0x110], flags: 0}\n"
		"  - object_references: {id: 0x110, class: 0x11, size: 8, refs: [0x120], flags: 0}\n"
		"  - object_references: {id: 0x120, class: 0x20, size: 4, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n");
	struct fixture f = {0};
	struct diff_value v;

	f.a = load_one(path, 0);
	f.b = load_one(path, 0);
	compute(&f, false);
	cr_assert_eq(f.d.n_classes, 2);
	cr_assert(diff_class_value(&f.d, "Node", DIFF_COUNT, &v));
	assert_value(v, 2, 2, "Node count");
	cr_assert(diff_class_value(&f.d, "Node", DIFF_RETAINED, &v));
	assert_value(v, 20, 20, "Node retained");
	cr_assert(diff_class_value(&f.d, "?0x20", DIFF_BYTES, &v));
	assert_value(v, 4, 4, "unnamed");
	cr_assert_eq(f.d.n_retainers, 0);
	release(&f);
}

/* A list 15 long: the path to its tail leaves out its middle. */
Test(written, long_paths_are_shortened)
{
	char events[8192];
	size_t n = 0;
	const char *path;
	struct fixture f = {0};

	n += (size_t)snprintf(events + n, sizeof(events) - n,
			      "  - class: {id: 0x10, name: Node}\n"
			      "  - begin_container: {type: C_BEGIN}\n"
			      "  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
			      "  - root_references: {refs: [0x100], flags: [0]}\n"
			      "  - begin_container: {type: C_HEAP}\n");
	for (int i = 0; i < 15; i++)
		n += (size_t)snprintf(events + n, sizeof(events) - n,
			"  - object_references: {id: 0x%x, class: 0x10, size: 8, "
			"refs: [0x%x], flags: 0}\n", 0x100 + i,
			i < 14 ? 0x100 + i + 1 : 0);
	snprintf(events + n, sizeof(events) - n,
		 "  - begin_container: {type: C_END}\n");
	path = write_trace("list.yaml", events);
	f.a = load_one(path, 0);
	f.b = load_one(path, 0);
	compute(&f, false);
	assert_path(&f.d, true, 0x10e, "C_RT_STRONGPTR > Node > [0] Node > "
		    "[0] Node > ... (8 more) > [0] Node > [0] Node > [0] Node "
		    "> [0] Node");
	assert_path(&f.d, true, 0x10a, "C_RT_STRONGPTR > Node > [0] Node > "
		    "[0] Node > ... (4 more) > [0] Node > [0] Node > [0] Node "
		    "> [0] Node");
	/* ten objects are shown whole */
	assert_path(&f.d, true, 0x109, "C_RT_STRONGPTR > Node > [0] Node > "
		    "[0] Node > [0] Node > [0] Node > [0] Node > [0] Node > "
		    "[0] Node > [0] Node > [0] Node");
	release(&f);
}

/* A hash table's events: a map (0x100) that a root holds, its table (an
 * Entry[] of `slots` slots, 0x200), and entries that each hold a String
 * key; `entries` lists each entry's object_references line. */
static const char *hash_table(const char *name, int slots, const char *entries,
			      const char *table_refs)
{
	char events[4096];

	snprintf(events, sizeof(events),
		 "  - class: {id: 0x10, name: Map}\n"
		 "  - class: {id: 0x20, name: \"Entry[]\"}\n"
		 "  - class: {id: 0x30, name: Entry}\n"
		 "  - class: {id: 0x40, name: String}\n"
		 "  - begin_container: {type: C_BEGIN}\n"
		 "  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		 "  - root_references: {refs: [0x100], flags: [0]}\n"
		 "  - begin_container: {type: C_HEAP}\n"
		 "  - object_references: {id: 0x100, class: 0x10, size: 16, refs: [0x200], flags: 0}\n"
		 "  - object_references: {id: 0x200, class: 0x20, size: %d, refs: [%s], flags: 0}\n"
		 "%s"
		 "  - begin_container: {type: C_END}\n",
		 16 + 4 * slots, table_refs, entries);
	return write_trace(name, events);
}

/* A resize moves a table's entries to other slots and other places in
 * their buckets' chains: they are the same entries, and only the one put
 * since is new, with its key. */
Test(written, hash_table_entries_match_through_a_resize)
{
	/* 4 slots: [1] 0x301 -> 0x302, [3] 0x303 */
	const char *a = hash_table("table-a.yaml", 4,
		"  - object_references: {id: 0x301, class: 0x30, size: 16, refs: [0x401, 0x302], flags: 0}\n"
		"  - object_references: {id: 0x302, class: 0x30, size: 16, refs: [0x402, 0], flags: 0}\n"
		"  - object_references: {id: 0x303, class: 0x30, size: 16, refs: [0x403, 0], flags: 0}\n"
		"  - object_references: {id: 0x401, class: 0x40, size: 24, refs: [], flags: 0}\n"
		"  - object_references: {id: 0x402, class: 0x40, size: 24, refs: [], flags: 0}\n"
		"  - object_references: {id: 0x403, class: 0x40, size: 24, refs: [], flags: 0}\n",
		"0, 0x301, 0, 0x303");
	/* 8 slots, a run later (other ids): [1] 0x501, [3] 0x503 -> 0x504
	 * (new), [5] 0x502, the entry that was second in its chain */
	const char *b = hash_table("table-b.yaml", 8,
		"  - object_references: {id: 0x501, class: 0x30, size: 16, refs: [0x601, 0], flags: 0}\n"
		"  - object_references: {id: 0x502, class: 0x30, size: 16, refs: [0x602, 0], flags: 0}\n"
		"  - object_references: {id: 0x503, class: 0x30, size: 16, refs: [0x603, 0x504], flags: 0}\n"
		"  - object_references: {id: 0x504, class: 0x30, size: 16, refs: [0x604, 0], flags: 0}\n"
		"  - object_references: {id: 0x601, class: 0x40, size: 24, refs: [], flags: 0}\n"
		"  - object_references: {id: 0x602, class: 0x40, size: 24, refs: [], flags: 0}\n"
		"  - object_references: {id: 0x603, class: 0x40, size: 24, refs: [], flags: 0}\n"
		"  - object_references: {id: 0x604, class: 0x40, size: 24, refs: [], flags: 0}\n",
		"0, 0x501, 0, 0x503, 0, 0x502, 0, 0");
	struct fixture f = {0};

	f.a = load_one(a, 0);
	f.b = load_one(b, 0);
	compute(&f, false);
	/* the entries are one row, however deep in a chain: 3 -> 4 of them,
	 * retaining 120 B -> 160 B (each entry with its key, counted once) */
	cr_assert_eq(f.d.n_retainers, 4);
	cr_assert_eq(heap_id(f.b, f.d.retainers[2].after), 0x501);
	assert_value(f.d.retainers[2].objects, 3, 4, "entries");
	assert_value(f.d.retainers[2].retained, 120, 160, "entries retained");
	assert_path(&f.d, true, 0x502, "C_RT_STRONGPTR > Map > [0] Entry[] > "
		    "[5] Entry");
	/* the new entry and its key, both under 0x503, whose chain it
	 * joined */
	cr_assert_eq(f.d.new_objects, 2);
	cr_assert_eq(f.d.new_bytes, 40);
	cr_assert_eq(f.d.n_holders, 1);
	cr_assert_eq(heap_id(f.b, f.d.holders[0].after), 0x503);
	release(&f);
}

/* A list's nodes are one row, retaining what its head does, not the sum
 * of each node's retained size. */
Test(written, a_chain_is_retained_once)
{
	const char *a = write_trace("chain-a.yaml",
		"  - class: {id: 0x10, name: Node}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		"  - root_references: {refs: [0x100], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x100, class: 0x10, size: 8, refs: [0x101], flags: 0}\n"
		"  - object_references: {id: 0x101, class: 0x10, size: 8, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n");
	const char *b = write_trace("chain-b.yaml",
		"  - class: {id: 0x10, name: Node}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		"  - root_references: {refs: [0x200], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x200, class: 0x10, size: 8, refs: [0x201], flags: 0}\n"
		"  - object_references: {id: 0x201, class: 0x10, size: 8, refs: [0x202], flags: 0}\n"
		"  - object_references: {id: 0x202, class: 0x10, size: 8, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n");
	struct fixture f = {0};

	f.a = load_one(a, 0);
	f.b = load_one(b, 0);
	compute(&f, false);
	cr_assert_eq(f.d.n_retainers, 1);
	assert_value(f.d.retainers[0].objects, 2, 3, "nodes");
	assert_value(f.d.retainers[0].retained, 16, 24, "nodes retained");
	/* the tail is new: the count of old nodes runs out before it */
	cr_assert_eq(f.d.new_objects, 1);
	cr_assert_eq(heap_id(f.b, f.d.holders[0].after), 0x201);
	release(&f);
}

/* Weak roots hold nothing: their objects have no path, and an object
 * only they reach is neither new nor old. */
Test(written, weakly_held_objects_are_left_out)
{
	const char *path = write_trace("weak.yaml",
		"  - class: {id: 0x10, name: Thing}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		"  - root_references: {refs: [0x100], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x100, class: 0x10, size: 8, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		"  - root_references: {refs: [0x100], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x100, class: 0x10, size: 8, refs: [], flags: 0}\n"
		"  - object_references: {id: 0x200, class: 0x10, size: 8, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n");
	struct fixture f = {0};
	char *p;

	f.a = load_one(path, 0);
	f.b = load_one(path, 1);
	compute(&f, false);
	assert_value(f.d.objects, 1, 2, "objects");
	assert_value(f.d.retained, 8, 8, "retained");
	cr_assert_eq(f.d.new_objects, 0);
	cr_assert_eq(f.d.n_retainers, 0);
	p = diff_path(&f.d, true, index_of(f.b, 0x200));
	cr_assert_str_eq(p, "(unreachable)");
	free(p);
	release(&f);
}

/* A thread stopped at another line of the same method between two dumps:
 * its frame is the same root, so what its locals hold is not new. */
Test(written, a_frame_at_another_line_holds_the_same_objects)
{
	const char *path = write_trace("lines.yaml",
		"  - class: {id: 0x10, name: Thing}\n"
		"  - thread: {id: 0x7, name: main}\n"
		"  - method: {id: 0x900, name: \"App.main(App.java:10)\"}\n"
		"  - method: {id: 0x901, name: \"App.main(App.java:12)\"}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_THREAD, id1: 0x7}\n"
		"  - begin_container: {type: C_RT_INTERPRETED, id1: 0x1, id2: 0x900}\n"
		"  - root_references: {refs: [0x100], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x100, class: 0x10, size: 8, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_THREAD, id1: 0x7}\n"
		"  - begin_container: {type: C_RT_INTERPRETED, id1: 0x1, id2: 0x901}\n"
		"  - root_references: {refs: [0x200], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x200, class: 0x10, size: 8, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n");
	struct fixture f = {0};
	char *p;

	f.a = load_one(path, 0);
	f.b = load_one(path, 1);
	compute(&f, false);
	assert_value(f.d.objects, 1, 1, "objects");
	cr_assert_eq(f.d.new_objects, 0);
	p = diff_path(&f.d, true, index_of(f.b, 0x200));
	cr_assert_str_eq(p, "C_RT_INTERPRETED (App.main(App.java)) > Thing");
	free(p);
	release(&f);
}

/* A frame's local that holds, for the length of a call, an object a
 * global root holds for good (a request's valve and the server's context)
 * does not change its path: the frames' locals are searched only for
 * what the other roots do not reach, so the object and what it holds are
 * not new in the dump without the call, though the frame's path is the
 * shorter. */
Test(written, a_call_in_progress_does_not_move_paths)
{
	const char *path = write_trace("call.yaml",
		"  - class: {id: 0x10, name: Server}\n"
		"  - class: {id: 0x11, name: Context}\n"
		"  - class: {id: 0x12, name: Session}\n"
		"  - thread: {id: 0x7, name: worker}\n"
		"  - method: {id: 0x900, name: \"Valve.invoke(Valve.java:115)\"}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		"  - root_references: {refs: [0x100], flags: [0]}\n"
		"  - begin_container: {type: C_RT_THREAD, id1: 0x7}\n"
		"  - begin_container: {type: C_RT_INTERPRETED, id1: 0x2, id2: 0x900}\n"
		"  - root_references: {refs: [0x110], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x100, class: 0x10, size: 8, refs: [0x110], flags: 0}\n"
		"  - object_references: {id: 0x110, class: 0x11, size: 8, refs: [0x120], flags: 0}\n"
		"  - object_references: {id: 0x120, class: 0x12, size: 8, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		"  - root_references: {refs: [0x200], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x200, class: 0x10, size: 8, refs: [0x210], flags: 0}\n"
		"  - object_references: {id: 0x210, class: 0x11, size: 8, refs: [0x220], flags: 0}\n"
		"  - object_references: {id: 0x220, class: 0x12, size: 8, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n");
	struct fixture f = {0};

	f.a = load_one(path, 0);
	f.b = load_one(path, 1);
	compute(&f, false);
	assert_value(f.d.objects, 3, 3, "objects");
	cr_assert_eq(f.d.new_objects, 0);
	assert_path(&f.d, false, 0x120, "C_RT_STRONGPTR > Server > [0] "
		    "Context > [0] Session");
	assert_path(&f.d, true, 0x220, "C_RT_STRONGPTR > Server > [0] "
		    "Context > [0] Session");
	release(&f);
}

/* ---- random heaps that grow --------------------------------------------- */

/*
 * A trace of two dumps: the first has n objects, the second those and m
 * more, each new one referred to by an older object or a root; refs are
 * random otherwise (cycles, sharing, nulls). Written to a file.
 */
static const char *random_growth(unsigned n, unsigned m, unsigned seed)
{
	size_t cap = 1 << 20, len = 0;
	char *t = malloc(cap);
	char name[48];
	unsigned total = n + m;
	unsigned *refs = calloc(2 * (size_t)total, sizeof(*refs));
	const char *path;

	cr_assert(t && refs);
	test_random_seed(seed);
	/* refs[2i], refs[2i+1]: 1 + target, 0 null; new objects are hung on
	 * an older object's free field */
	for (unsigned i = 0; i < total; i++) {
		if (i == 0)
			continue;
		for (int k = 0; k < 2; k++)
			if (test_random() % 3 == 0)
				refs[2 * i + k] = 1 + (unsigned)(test_random() % i);
		if (i >= n) {
			unsigned at = (unsigned)(test_random() % i);

			refs[2 * at + (test_random() & 1)] = 1 + i;
		}
	}
	len += (size_t)snprintf(t + len, cap - len,
		"heaptrace: 1\nruntime: msjvm\npointer_size: 4\n"
		"reports_survivors: false\nevents:\n");
	for (int c = 0; c < 5; c++)
		len += (size_t)snprintf(t + len, cap - len,
			"  - class: {id: 0x%x, name: C%d}\n", 0x10 + c, c % 4);
	for (int d = 0; d < 2; d++) {
		unsigned count = d ? total : n;

		len += (size_t)snprintf(t + len, cap - len,
			"  - begin_container: {type: C_BEGIN}\n"
			"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
			"  - root_references: {refs: [0x1000, 0x%x], flags: [0, 0]}\n"
			"  - begin_container: {type: C_HEAP}\n",
			0x1000 + 16 * (count - 1));
		for (unsigned i = 0; i < count; i++) {
			unsigned r0 = refs[2 * i], r1 = refs[2 * i + 1];

			/* the first dump does not see refs to later objects */
			r0 = r0 > count ? 0 : r0;
			r1 = r1 > count ? 0 : r1;
			cr_assert_lt(len + 256, cap);
			len += (size_t)snprintf(t + len, cap - len,
				"  - object_references: {id: 0x%x, class: 0x%x, "
				"size: %u, refs: [0x%x, 0x%x], flags: 0}\n",
				0x1000 + 16 * i, 0x10 + i % 5, 8 + i % 7,
				r0 ? 0x1000 + 16 * (r0 - 1) : 0,
				r1 ? 0x1000 + 16 * (r1 - 1) : 0);
		}
		len += (size_t)snprintf(t + len, cap - len,
			"  - begin_container: {type: C_END}\n");
	}
	snprintf(name, sizeof(name), "growth-%u.yaml", seed);
	path = tmp_file_with(name, t, len);
	free(t);
	free(refs);
	return path;
}

/* What holds of every diff, by id or by path. */
static void check_invariants(const struct fixture *f)
{
	const struct diff *d = &f->d;
	uint64_t held = 0, held_bytes = 0, count = 0, bytes = 0;

	for (size_t i = 0; i < d->n_holders; i++) {
		held += d->holders[i].new_objects;
		held_bytes += d->holders[i].new_bytes;
		cr_assert_gt(d->holders[i].new_objects, 0);
		if (i)
			cr_assert_geq(d->holders[i - 1].new_bytes,
				      d->holders[i].new_bytes);
	}
	cr_assert_eq(held + d->unheld_objects, d->new_objects);
	cr_assert_eq(held_bytes + d->unheld_bytes, d->new_bytes);
	cr_assert_leq(d->new_bytes, d->retained.after);
	for (size_t i = 0; i < d->n_retainers; i++) {
		const struct diff_retainer *r = &d->retainers[i];

		cr_assert_gt(r->retained.after, r->retained.before);
		if (i)
			cr_assert_geq(diff_change(d->retainers[i - 1].retained),
				      diff_change(r->retained));
	}
	for (size_t i = 0; i < d->n_classes; i++) {
		count += d->classes[i].count.after;
		bytes += d->classes[i].bytes.after;
		cr_assert_leq(d->classes[i].retained.after, d->retained.after);
	}
	cr_assert_eq(count, d->objects.after);
	cr_assert_eq(bytes, d->bytes.after);
}

Test(random, growth_by_id_and_by_path)
{
	for (unsigned seed = 1; seed <= 40; seed++) {
		const char *path = random_growth(20 + seed, 1 + seed % 13, seed);
		struct fixture by_id, by_path = {0};
		uint64_t reachable_new = 0;

		one_trace(&by_id, path, 0, 1);
		check_invariants(&by_id);
		/* by id, new is exactly what dump 0 did not have */
		for (uint32_t i = 0; i < by_id.b->n; i++)
			if (by_id.db.idom[i] != HEAP_NONE &&
			    heap_find(by_id.a, heap_id(by_id.b, i)) == HEAP_NONE)
				reachable_new++;
		cr_assert_eq(by_id.d.new_objects, reachable_new, "seed %u", seed);
		by_path.a = load_one(path, 0);
		by_path.b = load_one(path, 1);
		compute(&by_path, false);
		check_invariants(&by_path);
		release(&by_id);
		release(&by_path);
	}
}

/* A dump against itself by path: every path is there before. */
Test(random, a_dump_against_itself_by_path)
{
	for (unsigned seed = 100; seed < 120; seed++) {
		const char *path = random_growth(30, 10, seed);
		struct fixture f = {0};

		f.a = load_one(path, 1);
		f.b = load_one(path, 1);
		compute(&f, false);
		check_invariants(&f);
		cr_assert_eq(f.d.new_objects, 0);
		cr_assert_eq(f.d.n_retainers, 0);
		cr_assert_eq(f.d.n_holders, 0);
		release(&f);
	}
}

Test(random, deterministic)
{
	const char *path = random_growth(300, 100, 99);
	struct fixture x, y;

	one_trace(&x, path, 0, 1);
	one_trace(&y, path, 0, 1);
	cr_assert_eq(x.d.n_retainers, y.d.n_retainers);
	for (size_t i = 0; i < x.d.n_retainers; i++)
		cr_assert_eq(x.d.retainers[i].after, y.d.retainers[i].after);
	for (size_t i = 0; i < x.d.n_classes; i++)
		cr_assert_str_eq(x.d.classes[i].name, y.d.classes[i].name);
	release(&x);
	release(&y);
}
