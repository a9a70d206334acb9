/*
 * test_paths.c - root paths (src/analysis/paths.c): shortest paths, their
 * order, one path per root entry, field indices that count nulls, weak
 * roots left out on request, unreachable targets, targets that are roots;
 * the memory budget the search is charged to; and the paths written down
 * in testdata/analysis.
 */
#include <criterion/criterion.h>

#include "analysis/heap.h"
#include "analysis/levels.h"
#include "analysis/paths.h"
#include "analysis/root_order.h"
#include "smallheap.h"
#include "testheap.h"
#include "testutil.h"
#include "util/membudget.h"

#include <stdlib.h>
#include <string.h>

#define NUL HEAP_NULL_REF
#define DANGLING HEAP_DANGLING_REF
#define END SMALLHEAP_END

/* ---- Graphs by hand ----------------------------------------------------- */

/* The graphs are smallheap's: n objects, ids 0x1000 + 16 i, size 8. */
#define GRAPH SMALLHEAP

static void add_root(struct heap *h, uint32_t object, bool weak)
{
	struct heap_root *r = &h->roots[h->n_roots++];

	cr_assert_leq(h->n_roots, 16);
	r->object = object;
	r->ref = object < h->n ? heap_id(h, object) : 0;
	r->kind = HEAP_NO_KIND;
	r->root_flags = weak ? HT_ROOT_WEAK : 0;
}

static long paths_to(const struct heap *h, uint32_t target, size_t max,
		     bool exclude_weak, struct heap_path **paths)
{
	struct ht_error err;
	/* these graphs have no referents: the levels differ only in whether
	 * weak roots start paths */
	long n = heap_paths(h, target, max, exclude_weak ? HEAP_LEVEL_STRONG
						       : HEAP_LEVEL_PHANTOM,
			    paths, &err);

	cr_assert_geq(n, 0, "%s", err.message);
	return n;
}

/* objects ends with END; fields has length - 1 entries. */
static void assert_path(const struct heap_path *p, size_t root,
			const uint32_t *objects, const uint32_t *fields)
{
	size_t length = 0;

	while (objects[length] != END)
		length++;
	cr_assert_eq(p->root, root, "root %zu, not %zu", p->root, root);
	cr_assert_eq(p->length, length, "length %zu, not %zu", p->length,
		     length);
	for (size_t i = 0; i < length; i++)
		cr_assert_eq(p->objects[i], objects[i], "object %zu", i);
	for (size_t i = 0; i + 1 < length; i++)
		cr_assert_eq(p->fields[i], fields[i], "field %zu", i);
}

#define OBJECTS(...) ((const uint32_t[]){__VA_ARGS__, END})
#define FIELDS(...) ((const uint32_t[]){__VA_ARGS__})

enum { A, B, C, D, E, F };

/* ---- Paths -------------------------------------------------------------- */

Test(paths, the_shortest)
{
	/* A -> B -> C -> D, and A -> D directly */
	struct heap *h = GRAPH(4, B, D, END, C, END, D, END, END);
	struct heap_path *p;

	add_root(h, A, false);
	cr_assert_eq(paths_to(h, D, 10, false, &p), 1);
	assert_path(&p[0], 0, OBJECTS(A, D), FIELDS(1));
	heap_paths_free(p, 1);
	heap_free(h);
}

Test(paths, roots_at_different_distances_in_order)
{
	/* A -> B -> C -> D; roots on A, C, B, and B again */
	struct heap *h = GRAPH(4, B, END, C, END, D, END, END);
	struct heap_path *p;

	add_root(h, A, false);
	add_root(h, C, false);
	add_root(h, B, false);
	add_root(h, B, false);
	cr_assert_eq(paths_to(h, D, 10, false, &p), 4);
	assert_path(&p[0], 1, OBJECTS(C, D), FIELDS(0));
	assert_path(&p[1], 2, OBJECTS(B, C, D), FIELDS(0, 0));
	assert_path(&p[2], 3, OBJECTS(B, C, D), FIELDS(0, 0));
	assert_path(&p[3], 0, OBJECTS(A, B, C, D), FIELDS(0, 0, 0));
	heap_paths_free(p, 4);

	/* at most two */
	cr_assert_eq(paths_to(h, D, 2, false, &p), 2);
	cr_assert_eq(p[0].root, 1);
	cr_assert_eq(p[1].root, 2);
	heap_paths_free(p, 2);

	cr_assert_eq(paths_to(h, D, 0, false, &p), 0);
	cr_assert_null(p);
	heap_free(h);
}

Test(paths, two_roots_on_one_object)
{
	struct heap *h = GRAPH(2, B, END, END);
	struct heap_path *p;

	add_root(h, A, false);
	add_root(h, A, false);
	cr_assert_eq(paths_to(h, B, 10, false, &p), 2);
	assert_path(&p[0], 0, OBJECTS(A, B), FIELDS(0));
	assert_path(&p[1], 1, OBJECTS(A, B), FIELDS(0));
	heap_paths_free(p, 2);
	heap_free(h);
}

Test(paths, field_indices_count_nulls_and_dangling_refs)
{
	/* A: null, dangling, null, B, B; B: null, C */
	struct heap *h = GRAPH(3, NUL, DANGLING, NUL, B, B, END, NUL, C, END,
			       END);
	struct heap_path *p;

	add_root(h, A, false);
	cr_assert_eq(paths_to(h, C, 10, false, &p), 1);
	assert_path(&p[0], 0, OBJECTS(A, B, C), FIELDS(3, 1));
	heap_paths_free(p, 1);
	heap_free(h);
}

Test(paths, weak_roots_left_out_on_request)
{
	/* weak root on C -> D; strong root on A -> B -> D */
	struct heap *h = GRAPH(4, B, END, D, END, D, END, END);
	struct heap_path *p;

	add_root(h, C, true);
	add_root(h, A, false);
	cr_assert_eq(paths_to(h, D, 10, false, &p), 2);
	assert_path(&p[0], 0, OBJECTS(C, D), FIELDS(0));
	assert_path(&p[1], 1, OBJECTS(A, B, D), FIELDS(0, 0));
	heap_paths_free(p, 2);
	cr_assert_eq(paths_to(h, D, 10, true, &p), 1);
	assert_path(&p[0], 1, OBJECTS(A, B, D), FIELDS(0, 0));
	heap_paths_free(p, 1);

	/* C is reached by its weak root only */
	cr_assert_eq(paths_to(h, C, 10, true, &p), 0);
	cr_assert_null(p);
	heap_free(h);
}

Test(paths, an_unreachable_target)
{
	/* root A -> B; C -> B and C -> D, but nothing reaches C or D */
	struct heap *h = GRAPH(4, B, END, END, B, D, END, END);
	struct heap_path *p;

	add_root(h, A, false);
	add_root(h, HEAP_NONE, false);
	cr_assert_eq(paths_to(h, D, 10, false, &p), 0);
	cr_assert_eq(paths_to(h, C, 10, false, &p), 0);
	heap_free(h);
}

Test(paths, a_target_that_is_a_root)
{
	/* A -> B; roots on B, then on A */
	struct heap *h = GRAPH(2, B, END, END);
	struct heap_path *p;

	add_root(h, B, false);
	add_root(h, A, false);
	cr_assert_eq(paths_to(h, B, 10, false, &p), 2);
	assert_path(&p[0], 0, OBJECTS(B), NULL);
	assert_path(&p[1], 1, OBJECTS(A, B), FIELDS(0));
	heap_paths_free(p, 2);
	heap_free(h);
}

Test(paths, cycles_and_self_loops)
{
	/* A -> A, B; B -> C, A; C -> B, D; D -> D */
	struct heap *h = GRAPH(4, A, B, END, C, A, END, B, D, END, D, END);
	struct heap_path *p;

	add_root(h, A, false);
	cr_assert_eq(paths_to(h, D, 10, false, &p), 1);
	assert_path(&p[0], 0, OBJECTS(A, B, C, D), FIELDS(1, 0, 1));
	heap_paths_free(p, 1);
	heap_free(h);
}

Test(paths, no_such_object)
{
	struct heap *h = GRAPH(1, END);
	struct heap_path *p;
	struct ht_error err;

	cr_assert_eq(heap_paths(h, 5, 10, HEAP_LEVEL_PHANTOM, &p, &err), -1);
	cr_assert_eq(err.code, HT_E_INVALID);
	heap_free(h);
}

/* A long chain: the search keeps no recursion either. */
Test(paths, a_long_chain)
{
	enum { N = 1000000 };
	struct heap *h = calloc(1, sizeof(*h));
	struct heap_path *p;

	h->n = N;
	h->id = malloc(N * sizeof(*h->id));
	h->cls = malloc(N * sizeof(*h->cls));
	h->size = calloc(N, sizeof(*h->size));
	h->ref_start = malloc((N + 1) * sizeof(*h->ref_start));
	h->ref = malloc(N * sizeof(*h->ref));
	h->roots = calloc(1, sizeof(*h->roots));
	for (uint32_t i = 0; i < N; i++) {
		h->id[i] = 16 * (ht_id)(i + 1);
		h->ref_start[i] = i;
		h->ref[i] = i + 1 < N ? i + 1 : HEAP_NULL_REF;
	}
	h->ref_start[N] = N;
	add_root(h, 0, false);
	cr_assert_eq(paths_to(h, N - 1, 3, false, &p), 1);
	cr_assert_eq(p[0].length, N);
	cr_assert_eq(p[0].objects[N - 1], N - 1);
	heap_paths_free(p, 1);
	heap_free(h);
}

/*
 * The search's arrays (some 28 bytes an object) are charged to the memory
 * budget before they are made: a chain of 100,000 objects is refused
 * under 1 MiB with the budget's words, found within 4 MiB, and the
 * search gives back all it charged either way.
 */
Test(paths, charged_to_the_memory_budget)
{
	enum { N = 100000 };
	uint32_t *refs = malloc(2 * N * sizeof(*refs));
	struct heap *h;
	struct heap_path *p = NULL;
	struct ht_error err = {0};
	uint64_t limits[] = {1 << 20, 4 << 20};

	cr_assert_not_null(refs);
	for (uint32_t i = 0; i < N; i++) {
		refs[2 * i] = i + 1 < N ? i + 1 : NUL;
		refs[2 * i + 1] = END;
	}
	h = smallheap(N, refs, 2 * N);
	add_root(h, 0, false);
	for (size_t i = 0; i < 2; i++) {
		long n;

		mem_budget_set(limits[i]);
		n = heap_paths(h, N - 1, 1, HEAP_LEVEL_PHANTOM, &p, &err);
		cr_assert(mem_budget_charge(limits[i]) == 0,
			  "all given back under %llu",
			  (unsigned long long)limits[i]);
		mem_budget_release(limits[i]);
		if (i == 0) {
			cr_assert_eq(n, -1);
			cr_assert_eq(err.code, HT_E_NOMEM);
			cr_assert_str_eq(err.message, "needs more than 1048576 "
					 "bytes of memory (--max-memory)");
		} else {
			cr_assert_eq(n, 1, "%s", err.message);
			cr_assert_eq(p[0].length, N);
			heap_paths_free(p, 1);
		}
	}
	mem_budget_set(0);
	free(refs);
	heap_free(h);
}

/* ---- The paths written down in testdata/analysis ------------------------ */

static struct heap *load_analysis(const char *name)
{
	return testheap_load(testdata(name), HEAP_LAST_DUMP, NULL);
}

/* A path as the comments write it: root, then id, field, id, ... */
static void assert_written_path(const struct heap *h,
				const struct heap_path *p, size_t root,
				const ht_id *steps, size_t n_steps)
{
	cr_assert_eq(p->root, root, "root %zu, not %zu", p->root, root);
	cr_assert_eq(p->length, n_steps / 2 + 1);
	for (size_t i = 0; i < p->length; i++) {
		cr_assert_eq(heap_id(h, p->objects[i]), steps[2 * i]);
		if (i + 1 < p->length)
			cr_assert_eq(p->fields[i], steps[2 * i + 1]);
	}
}

#define WRITTEN(h, p, root, ...)                                          \
	assert_written_path(h, p, root, (const ht_id[]){__VA_ARGS__},      \
			    sizeof((const ht_id[]){__VA_ARGS__}) /         \
				    sizeof(ht_id))

Test(testdata, diamond)
{
	struct heap *h = load_analysis("analysis/diamond.yaml");
	struct heap_path *p;

	cr_assert_eq(paths_to(h, heap_find(h, 0x1500), 10, false, &p), 2);
	WRITTEN(h, &p[0], 1, 0x1700, 0, 0x1800, 0, 0x1500);
	WRITTEN(h, &p[1], 0, 0x1000, 0, 0x1100, 0, 0x1300, 1, 0x1500);
	heap_paths_free(p, 2);
	cr_assert_eq(paths_to(h, heap_find(h, 0x1300), 10, false, &p), 1);
	WRITTEN(h, &p[0], 0, 0x1000, 0, 0x1100, 0, 0x1300);
	heap_paths_free(p, 1);
	cr_assert_eq(paths_to(h, heap_find(h, 0x1600), 10, false, &p), 0);
	heap_free(h);
}

Test(testdata, msvm_threads)
{
	struct heap *h = load_analysis("analysis/msvm-threads.yaml");
	struct heap_path *p;

	cr_assert_eq(paths_to(h, heap_find(h, 0x2700), 10, false, &p), 2);
	WRITTEN(h, &p[0], 1, 0x2100, 0, 0x2200, 3, 0x2600, 0, 0x2700);
	WRITTEN(h, &p[1], 0, 0x2000, 0, 0x2100, 0, 0x2200, 3, 0x2600, 0,
		0x2700);
	heap_paths_free(p, 2);

	cr_assert_eq(paths_to(h, heap_find(h, 0x2400), 10, false, &p), 4);
	WRITTEN(h, &p[0], 4, 0x2800, 0, 0x2400);
	WRITTEN(h, &p[1], 5, 0x2800, 0, 0x2400);
	WRITTEN(h, &p[2], 1, 0x2100, 0, 0x2200, 0, 0x2400);
	WRITTEN(h, &p[3], 0, 0x2000, 0, 0x2100, 0, 0x2200, 0, 0x2400);
	heap_paths_free(p, 4);

	cr_assert_eq(paths_to(h, heap_find(h, 0x2300), 10, false, &p), 6);
	WRITTEN(h, &p[0], 6, 0x2300);
	/* of one length, the class's statics before the frame's local */
	WRITTEN(h, &p[1], 3, 0x2900, 0, 0x2300);
	WRITTEN(h, &p[2], 1, 0x2100, 1, 0x2300);
	WRITTEN(h, &p[3], 0, 0x2000, 0, 0x2100, 1, 0x2300);
	WRITTEN(h, &p[4], 4, 0x2800, 0, 0x2400, 0, 0x2300);
	WRITTEN(h, &p[5], 5, 0x2800, 0, 0x2400, 0, 0x2300);
	heap_paths_free(p, 6);
	heap_free(h);
}

/* A static, a class's statics and a local hold one object: of one
 * length, the path from the static comes first and the local's last
 * (root_order.h), whatever order the dump lists them in. */
Test(testdata, static_before_local)
{
	struct heap *h = load_analysis("analysis/fields-clr.yaml");
	struct heap_path *p;
	size_t *ranked;

	cr_assert_eq(heap_root_rank(h, &h->roots[6]), HEAP_ROOT_STATIC);
	cr_assert_eq(heap_root_rank(h, &h->roots[5]), HEAP_ROOT_LASTING);
	cr_assert_eq(heap_root_rank(h, &h->roots[2]), HEAP_ROOT_LASTING);
	cr_assert_eq(heap_root_rank(h, &h->roots[0]), HEAP_ROOT_FRAME);
	cr_assert_eq(heap_root_rank(h, &h->roots[1]), HEAP_ROOT_FRAME);
	ranked = heap_roots_ranked(h);
	cr_assert_not_null(ranked);
	cr_assert_arr_eq(ranked, ((size_t[]){6, 2, 3, 4, 5, 7, 0, 1}),
			 8 * sizeof(size_t));
	free(ranked);

	cr_assert_eq(paths_to(h, heap_find(h, 0x1500), 10, false, &p), 3);
	WRITTEN(h, &p[0], 6, 0x1000, 0, 0x1500);
	WRITTEN(h, &p[1], 5, 0x1000, 0, 0x1500);
	WRITTEN(h, &p[2], 0, 0x1000, 0, 0x1500);
	heap_paths_free(p, 3);
	heap_free(h);
}

Test(testdata, clr_weak)
{
	struct heap *h = load_analysis("analysis/clr-weak.yaml");
	struct heap_path *p;

	cr_assert_eq(paths_to(h, heap_find(h, 0x1fff10b0), 10, false, &p), 2);
	WRITTEN(h, &p[0], 2, 0x1fff3000, 1, 0x1fff10b0);
	WRITTEN(h, &p[1], 0, 0x1fff1000, 0, 0x1fff1040, 1, 0x1fff10b0);
	heap_paths_free(p, 2);
	cr_assert_eq(paths_to(h, heap_find(h, 0x1fff10b0), 10, true, &p), 1);
	WRITTEN(h, &p[0], 0, 0x1fff1000, 0, 0x1fff1040, 1, 0x1fff10b0);
	heap_paths_free(p, 1);

	cr_assert_eq(paths_to(h, heap_find(h, 0x1fff3080), 10, false, &p), 1);
	WRITTEN(h, &p[0], 2, 0x1fff3000, 0, 0x1fff3020, 0, 0x1fff3080);
	heap_paths_free(p, 1);
	cr_assert_eq(paths_to(h, heap_find(h, 0x1fff3080), 10, true, &p), 0);
	cr_assert_eq(paths_to(h, heap_find(h, 0x1fff4000), 10, false, &p), 0);
	heap_free(h);
}
