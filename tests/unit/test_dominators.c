/*
 * test_dominators.c - heap_dominators (src/analysis/dominators.c) against
 * a slow reference that follows the definition, on thousands of seeded
 * random graphs with everything a dump can hold (cycles, self-loops,
 * shared subgraphs, several roots, weak ones, duplicate edges, null and
 * dangling refs, unreachable parts); hand-solved examples; lists of
 * millions of objects, which a recursive search would not survive; and
 * the memory budget (--max-memory) they are charged to.
 */
#include <criterion/criterion.h>

#include "analysis/dominators.h"
#include "analysis/heap.h"
#include "testutil.h"
#include "util/membudget.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VR HEAP_VIRTUAL_ROOT
#define NONE HEAP_NONE
#define NUL HEAP_NULL_REF
#define DANGLING HEAP_DANGLING_REF

/* ---- Graphs by hand ----------------------------------------------------- */

/*
 * A graph as the tests write it: n objects with their sizes, refs given
 * per object as a list ended by END, and roots as (object, weak) pairs.
 * It becomes a struct heap laid out as heap_scan would make it (ids
 * ascending), which heap_free frees.
 */
#define END (UINT32_MAX - 7)

static struct heap *new_heap(uint32_t n, uint64_t refs, size_t roots)
{
	struct heap *h = calloc(1, sizeof(*h));

	cr_assert_not_null(h);
	h->n = n;
	h->id = malloc((n + 1) * sizeof(*h->id));
	h->cls = malloc((n + 1) * sizeof(*h->cls));
	h->size = malloc((n + 1) * sizeof(*h->size));
	h->ref_start = malloc((n + 1) * sizeof(*h->ref_start));
	h->ref = malloc((refs + 1) * sizeof(*h->ref));
	h->roots = calloc(roots + 1, sizeof(*h->roots));
	cr_assert(h->id && h->cls && h->size && h->ref_start && h->ref &&
		  h->roots);
	for (uint32_t i = 0; i < n; i++) {
		h->id[i] = 0x1000 + 16 * (ht_id)i;
		h->cls[i] = HEAP_NO_CLASS;
		h->size[i] = 0;
	}
	h->ref_start[0] = 0;
	return h;
}

static void add_root(struct heap *h, uint32_t object, bool weak)
{
	struct heap_root *r = &h->roots[h->n_roots++];

	memset(r, 0, sizeof(*r));
	r->object = object;
	r->ref = object < h->n ? heap_id(h, object) : 0;
	r->kind = HEAP_NO_KIND;
	r->root_flags = weak ? HT_ROOT_WEAK : 0;
}

/* refs: object 0's refs, END, object 1's refs, END, ... */
static struct heap *graph(uint32_t n, const uint64_t *sizes,
			  const uint32_t *refs, size_t n_refs_list)
{
	struct heap *h = new_heap(n, n_refs_list, 8);
	uint64_t e = 0;
	uint32_t obj = 0;

	for (size_t i = 0; i < n_refs_list && obj < n; i++) {
		if (refs[i] == END) {
			h->ref_start[++obj] = e;
			continue;
		}
		h->ref[e++] = refs[i];
	}
	while (obj < n)
		h->ref_start[++obj] = e;
	for (uint32_t i = 0; i < n; i++) {
		h->size[i] = sizes[i];
		h->total_bytes += sizes[i];
	}
	return h;
}

static struct heap_dominators dominators_of(const struct heap *h)
{
	struct heap_dominators d;
	struct ht_error err;

	cr_assert_eq(heap_dominators(h, &d, &err), 0, "%s", err.message);
	return d;
}

static void assert_object(const struct heap_dominators *d, uint32_t object,
			  uint32_t idom, uint64_t retained)
{
	cr_assert_eq(d->idom[object], idom, "idom of %u: %u, not %u", object,
		     d->idom[object], idom);
	cr_assert_eq(d->retained[object], retained,
		     "retained of %u: %llu, not %llu", object,
		     (unsigned long long)d->retained[object],
		     (unsigned long long)retained);
}

/* ---- Hand-solved examples ----------------------------------------------- */

enum { A, B, C, D, E, F, G };

Test(examples, diamond)
{
	/* root -> A; A -> B, C; B -> D; C -> D; D -> E */
	const uint64_t sizes[] = {10, 20, 30, 40, 50};
	const uint32_t refs[] = {B, C, END, D, END, D, END, E, END, END};
	struct heap *h = graph(5, sizes, refs, ARRAY_SIZE(refs));
	struct heap_dominators d;

	add_root(h, A, false);
	d = dominators_of(h);
	assert_object(&d, A, VR, 150);
	assert_object(&d, B, A, 20);
	assert_object(&d, C, A, 30);
	assert_object(&d, D, A, 90);
	assert_object(&d, E, D, 50);
	cr_assert_eq(d.reachable, 5);
	cr_assert_eq(d.unreachable, 0);
	heap_dominators_free(&d);
	heap_free(h);
}

Test(examples, cycle_through_the_root)
{
	/* root -> A -> B -> C -> A */
	const uint64_t sizes[] = {1, 2, 4};
	const uint32_t refs[] = {B, END, C, END, A, END};
	struct heap *h = graph(3, sizes, refs, ARRAY_SIZE(refs));
	struct heap_dominators d;

	add_root(h, A, false);
	d = dominators_of(h);
	assert_object(&d, A, VR, 7);
	assert_object(&d, B, A, 6);
	assert_object(&d, C, B, 4);
	heap_dominators_free(&d);

	/* a second root on C: A keeps only B */
	add_root(h, C, false);
	d = dominators_of(h);
	assert_object(&d, A, VR, 3);
	assert_object(&d, B, A, 2);
	assert_object(&d, C, VR, 4);
	heap_dominators_free(&d);
	heap_free(h);
}

Test(examples, chain)
{
	/* root -> A -> B -> C -> D */
	const uint64_t sizes[] = {1, 10, 100, 1000};
	const uint32_t refs[] = {B, END, C, END, D, END, END};
	struct heap *h = graph(4, sizes, refs, ARRAY_SIZE(refs));
	struct heap_dominators d;

	add_root(h, A, false);
	d = dominators_of(h);
	assert_object(&d, A, VR, 1111);
	assert_object(&d, B, A, 1110);
	assert_object(&d, C, B, 1100);
	assert_object(&d, D, C, 1000);
	heap_dominators_free(&d);
	heap_free(h);
}

Test(examples, weak_roots_retain_nothing)
{
	/* strong -> A; weak -> B; B -> A, C; D alone; C -> null, dangling */
	const uint64_t sizes[] = {1, 2, 4, 8};
	const uint32_t refs[] = {END, A, C, END, NUL, DANGLING, END, END};
	struct heap *h = graph(4, sizes, refs, ARRAY_SIZE(refs));
	struct heap_dominators d;

	add_root(h, A, false);
	add_root(h, B, true);
	add_root(h, NONE, false); /* a null or dangling root */
	d = dominators_of(h);
	assert_object(&d, A, VR, 1);
	assert_object(&d, B, NONE, 0);
	assert_object(&d, C, NONE, 0);
	assert_object(&d, D, NONE, 0);
	cr_assert_eq(d.reachable, 1);
	cr_assert_eq(d.unreachable, 3);
	cr_assert_eq(d.unreachable_bytes, 14);
	cr_assert_eq(d.weakly_reachable, 2);
	heap_dominators_free(&d);
	heap_free(h);
}

Test(examples, two_entries_into_a_loop)
{
	/*
	 * root -> A; A -> B, C; B -> D; C -> E; D -> E; E -> D, F; F -> G.
	 * D and E are entered from B and from C: only A dominates them.
	 */
	const uint64_t sizes[] = {1, 2, 4, 8, 16, 32, 64};
	const uint32_t refs[] = {B, C, END, D, END, E, END, E, END,
				 D, F, END, G, END, END};
	struct heap *h = graph(7, sizes, refs, ARRAY_SIZE(refs));
	struct heap_dominators d;

	add_root(h, A, false);
	d = dominators_of(h);
	assert_object(&d, A, VR, 127);
	assert_object(&d, B, A, 2);
	assert_object(&d, C, A, 4);
	assert_object(&d, D, A, 8);
	assert_object(&d, E, A, 112);
	assert_object(&d, F, E, 96);
	assert_object(&d, G, F, 64);
	heap_dominators_free(&d);
	heap_free(h);
}

Test(examples, empty_graph)
{
	struct heap *h = new_heap(0, 0, 0);
	struct heap_dominators d = dominators_of(h);

	cr_assert_eq(d.reachable, 0);
	cr_assert_eq(d.unreachable, 0);
	heap_dominators_free(&d);
	heap_free(h);
}

/* ---- The reference ------------------------------------------------------ */

/* What a strong root reaches once `removed` (NONE: nothing) is taken out. */
static void reach(const struct heap *h, uint32_t removed, bool *seen,
		  uint32_t *queue)
{
	size_t head = 0, tail = 0;

	memset(seen, 0, h->n * sizeof(*seen));
	for (size_t r = 0; r < h->n_roots; r++) {
		uint32_t o = h->roots[r].object;

		if (o >= h->n || heap_root_is_weak(&h->roots[r]) ||
		    o == removed || seen[o])
			continue;
		seen[o] = true;
		queue[tail++] = o;
	}
	while (head < tail) {
		uint32_t v = queue[head++];

		for (uint64_t e = heap_ref_start(h, v); e < heap_ref_start(h, v + 1);
		     e++) {
			uint32_t t = h->ref[e];

			if (t >= h->n || t == removed || seen[t])
				continue;
			seen[t] = true;
			queue[tail++] = t;
		}
	}
}

/* What any root reaches, weak ones included. */
static void reach_any(const struct heap *h, bool *seen, uint32_t *queue)
{
	size_t head = 0, tail = 0;

	memset(seen, 0, h->n * sizeof(*seen));
	for (size_t r = 0; r < h->n_roots; r++) {
		uint32_t o = h->roots[r].object;

		if (o < h->n && !seen[o]) {
			seen[o] = true;
			queue[tail++] = o;
		}
	}
	while (head < tail) {
		uint32_t v = queue[head++];

		for (uint64_t e = heap_ref_start(h, v); e < heap_ref_start(h, v + 1);
		     e++) {
			uint32_t t = h->ref[e];

			if (t < h->n && !seen[t]) {
				seen[t] = true;
				queue[tail++] = t;
			}
		}
	}
}

#define MAX_N 64

/*
 * The definition: v dominates w when every path from the virtual root to
 * w passes v, so taking v out leaves w unreachable. The immediate
 * dominator is the strict dominator that the others all dominate: the one
 * with the most dominators of its own.
 */
struct reference {
	bool reachable[MAX_N];
	bool dom[MAX_N][MAX_N]; /* dom[v][w]: v dominates w */
	uint32_t idom[MAX_N];
	uint64_t retained[MAX_N];
	uint64_t n_reachable, unreachable, unreachable_bytes, weakly;
};

static void reference_dominators(const struct heap *h, struct reference *ref)
{
	bool seen[MAX_N], any[MAX_N];
	uint32_t queue[MAX_N];
	unsigned n_doms[MAX_N] = {0};

	memset(ref, 0, sizeof(*ref));
	reach(h, NONE, ref->reachable, queue);
	for (uint32_t v = 0; v < h->n; v++) {
		if (!ref->reachable[v])
			continue;
		reach(h, v, seen, queue);
		for (uint32_t w = 0; w < h->n; w++)
			ref->dom[v][w] = ref->reachable[w] && !seen[w];
	}
	for (uint32_t w = 0; w < h->n; w++)
		for (uint32_t v = 0; v < h->n; v++)
			n_doms[w] += ref->dom[v][w];
	for (uint32_t w = 0; w < h->n; w++) {
		ref->idom[w] = ref->reachable[w] ? VR : NONE;
		for (uint32_t v = 0; v < h->n; v++) {
			if (v == w || !ref->dom[v][w])
				continue;
			if (ref->idom[w] == VR ||
			    n_doms[v] > n_doms[ref->idom[w]])
				ref->idom[w] = v;
		}
		for (uint32_t x = 0; x < h->n; x++)
			if (ref->dom[w][x])
				ref->retained[w] += heap_size(h, x);
	}
	reach_any(h, any, queue);
	for (uint32_t w = 0; w < h->n; w++) {
		if (ref->reachable[w]) {
			ref->n_reachable++;
			continue;
		}
		ref->unreachable++;
		ref->unreachable_bytes += heap_size(h, w);
		ref->weakly += any[w];
	}
}

/* ---- Random graphs ------------------------------------------------------ */

static uint32_t below(uint32_t n)
{
	return (uint32_t)(test_random() % n);
}

/* A ref of object i: mostly to an object nearby (deep chains and shared
 * subgraphs), sometimes anywhere (cycles, cross edges), to itself, null
 * or dangling. */
static uint32_t random_ref(uint32_t i, uint32_t n)
{
	unsigned what = below(20);

	if (what < 10)
		return (i + 1 + below(3)) % n;
	if (what < 15)
		return below(n);
	if (what < 16)
		return i;
	if (what < 18)
		return NUL;
	return DANGLING;
}

static struct heap *random_graph(uint32_t n)
{
	unsigned max_degree = 1 + below(5);
	struct heap *h = new_heap(n, (uint64_t)n * max_degree, 8);
	uint64_t e = 0;
	size_t roots = below(6);

	for (uint32_t i = 0; i < n; i++) {
		unsigned degree = 1 + below(max_degree);

		h->size[i] = 1 + below(1000);
		h->total_bytes += heap_size(h, i);
		for (unsigned k = 0; k < degree; k++) {
			h->ref[e] = random_ref(i, n);
			/* now and then the same ref twice */
			if (k > 0 && below(8) == 0)
				h->ref[e] = h->ref[e - 1];
			e++;
		}
		h->ref_start[i + 1] = e;
	}
	for (size_t r = 0; r < roots; r++) {
		unsigned what = below(10);

		if (what == 0)
			add_root(h, NONE, false);
		else
			add_root(h, below(n), what < 3);
	}
	/* roots on one object, sometimes */
	if (h->n_roots && below(4) == 0)
		add_root(h, h->roots[0].object, below(2));
	return h;
}

static void compare_with_reference(const struct heap *h, unsigned seed)
{
	static struct reference ref;
	struct heap_dominators d = dominators_of(h);

	reference_dominators(h, &ref);
	for (uint32_t w = 0; w < h->n; w++) {
		cr_assert_eq(d.idom[w], ref.idom[w],
			     "seed %u, n %u: idom of %u is %u, not %u", seed,
			     h->n, w, d.idom[w], ref.idom[w]);
		cr_assert_eq(d.retained[w], ref.retained[w],
			     "seed %u, n %u: retained of %u is %llu, not %llu",
			     seed, h->n, w, (unsigned long long)d.retained[w],
			     (unsigned long long)ref.retained[w]);
	}
	cr_assert_eq(d.reachable, ref.n_reachable, "seed %u", seed);
	cr_assert_eq(d.unreachable, ref.unreachable, "seed %u", seed);
	cr_assert_eq(d.unreachable_bytes, ref.unreachable_bytes, "seed %u",
		     seed);
	cr_assert_eq(d.weakly_reachable, ref.weakly, "seed %u", seed);
	heap_dominators_free(&d);
}

#define RANDOM_GRAPHS 20000

Test(random, agrees_with_the_definition)
{
	for (unsigned seed = 1; seed <= RANDOM_GRAPHS; seed++) {
		struct heap *h;

		test_random_seed(seed);
		h = random_graph(1 + below(60));
		compare_with_reference(h, seed);
		heap_free(h);
	}
}

/* Graphs of 2^32 edges or more keep their predecessor rows in 8 bytes,
 * counted by a pass of their own rather than by the search: the same
 * answers. */
Test(random, agrees_with_the_definition_in_wide_rows)
{
	heap_dominators_wide_rows(true);
	for (unsigned seed = 1; seed <= RANDOM_GRAPHS / 10; seed++) {
		struct heap *h;

		test_random_seed(seed);
		h = random_graph(1 + below(60));
		compare_with_reference(h, seed);
		heap_free(h);
	}
	heap_dominators_wide_rows(false);
}

/* Dense graphs with many roots: short paths, many joins. */
Test(random, dense_graphs_with_many_roots)
{
	for (unsigned seed = 1; seed <= 1000; seed++) {
		uint32_t n = 1 + (seed % 40);
		struct heap *h = new_heap(n, (uint64_t)n * 8, 8);
		uint64_t e = 0;

		test_random_seed(1000000 + seed);
		for (uint32_t i = 0; i < n; i++) {
			h->size[i] = 1 + below(50);
			for (unsigned k = below(9); k > 0; k--)
				h->ref[e++] = below(n);
			h->ref_start[i + 1] = e;
		}
		for (unsigned r = 1 + below(7); r > 0; r--)
			add_root(h, below(n), below(4) == 0);
		compare_with_reference(h, seed);
		heap_free(h);
	}
}

/* ---- Long lists --------------------------------------------------------- */

#define LONG_LIST (SANITIZED ? 500000u : 5000000u)

/* 0 -> 1 -> ... -> n-1, and with back_to_head each object also refers to
 * the head, so that every object's semidominator search walks the whole
 * list above it once. */
static struct heap *long_list(uint32_t n, bool back_to_head)
{
	struct heap *h = new_heap(n, (uint64_t)n * 2, 1);
	uint64_t e = 0;

	for (uint32_t i = 0; i < n; i++) {
		h->size[i] = 1 + i % 7;
		h->total_bytes += heap_size(h, i);
		if (i + 1 < n)
			h->ref[e++] = i + 1;
		if (back_to_head)
			h->ref[e++] = 0;
		h->ref_start[i + 1] = e;
	}
	add_root(h, 0, false);
	return h;
}

static void check_list(bool back_to_head)
{
	uint32_t n = LONG_LIST;
	struct heap *h = long_list(n, back_to_head);
	struct heap_dominators d = dominators_of(h);
	uint64_t tail_sum = 0;

	cr_assert_eq(d.retained[0], h->total_bytes);
	cr_assert_eq(d.idom[0], VR);
	cr_assert_eq(d.reachable, n);
	for (uint32_t i = n; i-- > 1;) {
		tail_sum += heap_size(h, i);
		if (d.idom[i] != i - 1 || d.retained[i] != tail_sum)
			cr_assert_fail("object %u: idom %u, retained %llu", i,
				       d.idom[i],
				       (unsigned long long)d.retained[i]);
	}
	heap_dominators_free(&d);
	heap_free(h);
}

Test(long_lists, five_million_objects_in_a_row, .timeout = 60)
{
	check_list(false);
}

Test(long_lists, each_object_pointing_back_at_the_head, .timeout = 60)
{
	check_list(true);
}

/* ---- The memory budget -------------------------------------------------- */

/* Whether everything charged was given back: the whole limit is free. */
static bool budget_all_free(uint64_t limit)
{
	if (mem_budget_charge(limit) < 0)
		return false;
	mem_budget_release(limit);
	return true;
}

/*
 * The arrays are charged before they are made: a list of 100,000 objects
 * is refused under 1 MiB with the budget's words, and everything charged
 * is given back, refused or not. Each array is freed, and given back, as
 * soon as its step is done: 25 bytes an object are enough here (the
 * search's: the number by object, the preorder's vertex, parent and row
 * count, and the stack, 24, with a bit an edge).
 */
Test(budget, dominators_are_charged_and_given_back)
{
	uint32_t n = 100000;
	struct heap *h = long_list(n, false);
	struct heap_dominators d;
	struct ht_error err = {0};
	uint64_t small = 1 << 20, enough = (uint64_t)n * 25;

	mem_budget_set(small);
	cr_assert_eq(heap_dominators(h, &d, &err), -1);
	cr_assert_eq(err.code, HT_E_NOMEM);
	cr_assert_str_eq(err.message, "needs more than 1048576 bytes of memory "
			 "(--max-memory)");
	cr_assert_null(d.idom);
	cr_assert(budget_all_free(small));

	mem_budget_set(enough);
	cr_assert_eq(heap_dominators(h, &d, &err), 0, "%s", err.message);
	cr_assert_eq(d.reachable, n);
	heap_dominators_free(&d);
	cr_assert(budget_all_free(enough));
	mem_budget_set(0);
	heap_free(h);
}
