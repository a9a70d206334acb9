/*
 * test_levels.c - reachability levels (src/analysis/levels.c and their use
 * in dominators.c and paths.c): the level names; the hand-solved dump of
 * testdata/analysis/levels.yaml read through heap_scan, whose comment
 * says what each level reaches and retains; and, on thousands of seeded
 * random graphs with referents of every strength and weak roots, that an
 * analysis at a level is the strong analysis of the graph without what
 * the level does not follow, and that the strongest level of each object
 * is the first level at which it is reachable.
 */
#include <criterion/criterion.h>

#include "analysis/dominators.h"
#include "analysis/heap.h"
#include "analysis/levels.h"
#include "analysis/paths.h"
#include "analysis/reach.h"
#include "testheap.h"
#include "testutil.h"
#include "util/membudget.h"
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- Names ---------------------------------------------------------------- */

Test(names, each_level_by_its_name)
{
	for (int l = HEAP_LEVEL_STRONG; l < HEAP_LEVELS; l++)
		cr_assert_eq(heap_level_parse(heap_level_name(
				     (enum heap_level)l)), l);
	cr_assert_str_eq(heap_level_name(HEAP_LEVEL_FINAL), "finalizer");
	cr_assert_eq(heap_level_parse("all"), HEAP_LEVEL_PHANTOM);
	/* unreachable is what an object can be, not a level to compute at */
	cr_assert_eq(heap_level_parse("unreachable"), -1);
	cr_assert_eq(heap_level_parse("final"), -1);
	cr_assert_eq(heap_level_parse("Strong"), -1);
	cr_assert_eq(heap_level_parse(""), -1);
}

Test(names, field_kinds_give_levels)
{
	cr_assert_eq(heap_level_of_field_kind(HT_FIELD_INSTANCE),
		     HEAP_LEVEL_STRONG);
	cr_assert_eq(heap_level_of_field_kind(HT_FIELD_STATIC),
		     HEAP_LEVEL_STRONG);
	cr_assert_eq(heap_level_of_field_kind(HT_FIELD_SOFT), HEAP_LEVEL_SOFT);
	cr_assert_eq(heap_level_of_field_kind(HT_FIELD_WEAK), HEAP_LEVEL_WEAK);
	cr_assert_eq(heap_level_of_field_kind(HT_FIELD_FINAL),
		     HEAP_LEVEL_FINAL);
	cr_assert_eq(heap_level_of_field_kind(HT_FIELD_PHANTOM),
		     HEAP_LEVEL_PHANTOM);
}

/* ---- The hand-solved dump ------------------------------------------------- */

static struct heap *levels_dump(void)
{
	return testheap_load(testdata("analysis/levels.yaml"), HEAP_LAST_DUMP,
			     NULL);
}

static uint32_t at(const struct heap *h, ht_id id)
{
	uint32_t i = heap_find(h, id);

	cr_assert_neq(i, HEAP_NONE, "no object 0x%llx", (unsigned long long)id);
	return i;
}

Test(example, the_referents_are_indexed_by_strength)
{
	struct heap *h = levels_dump();
	uint32_t soft = at(h, 0x2000), main_ = at(h, 0x1000);

	cr_assert_eq(h->n_referents, 4);
	cr_assert(heap_has_levels(h));
	cr_assert_eq(heap_ref_level(h, soft, heap_ref_start(h, soft)),
		     HEAP_LEVEL_SOFT);
	cr_assert_eq(heap_ref_level(h, at(h, 0x2300),
				    heap_ref_start(h, at(h, 0x2300))),
		     HEAP_LEVEL_PHANTOM);
	/* a strong field of an object that is no Reference */
	cr_assert_eq(heap_ref_level(h, main_, heap_ref_start(h, main_)),
		     HEAP_LEVEL_STRONG);
	cr_assert(!heap_follows(h, HEAP_LEVEL_STRONG, soft,
				heap_ref_start(h, soft)));
	cr_assert(heap_follows(h, HEAP_LEVEL_SOFT, soft, heap_ref_start(h, soft)));
	heap_free(h);
}

Test(example, each_object_at_its_strongest_level)
{
	static const struct {
		ht_id id;
		enum heap_level level;
	} want[] = {
		{0x1000, HEAP_LEVEL_STRONG}, {0x2000, HEAP_LEVEL_STRONG},
		{0x2100, HEAP_LEVEL_STRONG}, {0x2200, HEAP_LEVEL_STRONG},
		{0x2300, HEAP_LEVEL_STRONG}, {0x3500, HEAP_LEVEL_STRONG},
		{0x3000, HEAP_LEVEL_SOFT}, {0x3100, HEAP_LEVEL_SOFT},
		{0x3700, HEAP_LEVEL_WEAK}, {0x3200, HEAP_LEVEL_FINAL},
		{0x3300, HEAP_LEVEL_PHANTOM},
		{0x3600, HEAP_LEVEL_UNREACHABLE},
	};
	struct heap *h = levels_dump();
	struct ht_error err;
	uint64_t charged = 0;
	uint8_t *levels;

	cr_assert_eq(h->n, ARRAY_SIZE(want));
	cr_assert_eq(heap_reach_levels(h, &levels, &charged, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		cr_assert_eq(levels[at(h, want[i].id)], want[i].level,
			     "0x%llx at %s, not %s",
			     (unsigned long long)want[i].id,
			     heap_level_name(levels[at(h, want[i].id)]),
			     heap_level_name(want[i].level));
	budget_array_free(levels, h->n, 1, &charged);
	cr_assert_eq(charged, 0);
	heap_free(h);
}

Test(example, retained_sizes_at_each_level)
{
	static const struct {
		enum heap_level level;
		uint64_t main_, soft, weak, fin, phantom;
		ht_id idom_of_3100; /* 0: unreachable */
	} want[] = {
		{HEAP_LEVEL_STRONG, 652, 32, 32, 40, 32, 0},
		{HEAP_LEVEL_SOFT, 3652, 3032, 32, 40, 32, 0x3000},
		{HEAP_LEVEL_WEAK, 3652, 1032, 32, 40, 32, 0x1000},
		{HEAP_LEVEL_FINAL, 6652, 1032, 32, 3040, 32, 0x1000},
		{HEAP_LEVEL_PHANTOM, 10652, 1032, 32, 3040, 4032, 0x1000},
	};
	struct heap *h = levels_dump();

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct heap_dominators d;
		struct ht_error err;
		uint32_t idom;

		cr_assert_eq(heap_dominators_at(h, want[i].level, &d, &err), 0);
		cr_assert_eq(d.level, want[i].level);
		cr_assert_eq(d.retained[at(h, 0x1000)], want[i].main_,
			     "at %s", heap_level_name(want[i].level));
		cr_assert_eq(d.retained[at(h, 0x2000)], want[i].soft);
		cr_assert_eq(d.retained[at(h, 0x2100)], want[i].weak);
		cr_assert_eq(d.retained[at(h, 0x2200)], want[i].fin);
		cr_assert_eq(d.retained[at(h, 0x2300)], want[i].phantom);
		idom = d.idom[at(h, 0x3100)];
		if (want[i].idom_of_3100)
			cr_assert_eq(idom, at(h, want[i].idom_of_3100));
		else
			cr_assert_eq(idom, HEAP_NONE);
		/* the weak root retains its object from weak on only */
		cr_assert_eq(d.retained[at(h, 0x3700)],
			     want[i].level >= HEAP_LEVEL_WEAK ? 700 : 0);
		heap_dominators_free(&d);
	}
	heap_free(h);
}

Test(example, paths_at_each_level)
{
	struct heap *h = levels_dump();
	struct heap_path *p;
	struct ht_error err;

	cr_assert_eq(heap_paths(h, at(h, 0x3100), 3, HEAP_LEVEL_STRONG, &p,
				&err), 0);
	cr_assert_eq(heap_paths(h, at(h, 0x3100), 3, HEAP_LEVEL_SOFT, &p,
				&err), 1);
	cr_assert_eq(p[0].length, 4);
	cr_assert_eq(p[0].objects[1], at(h, 0x2000));
	heap_paths_free(p, 1);
	cr_assert_eq(heap_paths(h, at(h, 0x3100), 3, HEAP_LEVEL_WEAK, &p,
				&err), 1);
	cr_assert_eq(p[0].length, 3);
	cr_assert_eq(p[0].objects[1], at(h, 0x2100));
	heap_paths_free(p, 1);
	cr_assert_eq(heap_paths(h, at(h, 0x3700), 3, HEAP_LEVEL_SOFT, &p,
				&err), 0);
	cr_assert_eq(heap_paths(h, at(h, 0x3700), 3, HEAP_LEVEL_WEAK, &p,
				&err), 1);
	cr_assert_eq(p[0].length, 1);
	heap_paths_free(p, 1);
	heap_free(h);
}

/* ---- Random graphs ---------------------------------------------------------- */

static uint32_t below(uint32_t n)
{
	return (uint32_t)(test_random() % n);
}

/*
 * A graph of n objects with random edges (nulls and dangling ones too),
 * random roots (some weak), and about one edge in four a referent of a
 * random strength, laid out as heap_scan lays a dump out (heap.h).
 */
static struct heap *random_graph(uint32_t n)
{
	struct heap *h = calloc(1, sizeof(*h));
	uint64_t e = 0, cap = (uint64_t)n * 4 + 1;
	size_t n_roots = 1 + below(4);

	cr_assert_not_null(h);
	h->n = n;
	h->id = malloc(n * sizeof(*h->id));
	h->cls = malloc(n * sizeof(*h->cls));
	h->size = malloc(n * sizeof(*h->size));
	h->ref_start = malloc((n + 1) * sizeof(*h->ref_start));
	h->ref = malloc(cap * sizeof(*h->ref));
	h->roots = calloc(n_roots, sizeof(*h->roots));
	h->has_referent = calloc(n / 64 + 1, sizeof(*h->has_referent));
	h->referent_edge = malloc(cap * sizeof(*h->referent_edge));
	h->referent_level = malloc(cap);
	cr_assert(h->id && h->cls && h->size && h->ref_start && h->ref &&
		  h->roots && h->has_referent && h->referent_edge &&
		  h->referent_level);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t deg = below(4);

		h->id[i] = 0x1000 + 16 * (ht_id)i;
		h->cls[i] = HEAP_NO_CLASS;
		h->size[i] = 1 + below(100);
		h->total_bytes += heap_size(h, i);
		h->ref_start[i] = e;
		for (uint32_t k = 0; k < deg; k++, e++) {
			uint32_t pick = below(20);

			h->ref[e] = pick == 0 ? HEAP_NULL_REF
				  : pick == 1 ? HEAP_DANGLING_REF : below(n);
			if (h->ref[e] != HEAP_NULL_REF && below(4) == 0) {
				h->referent_edge[h->n_referents] = e;
				h->referent_level[h->n_referents++] =
					(uint8_t)(HEAP_LEVEL_SOFT + below(4));
				h->has_referent[i / 64] |= 1ULL << (i % 64);
			}
		}
	}
	h->ref_start[n] = e;
	for (size_t r = 0; r < n_roots; r++) {
		struct heap_root *root = &h->roots[h->n_roots++];

		root->object = below(n);
		root->ref = heap_id(h, root->object);
		root->kind = HEAP_NO_KIND;
		root->root_flags = below(3) == 0 ? HT_ROOT_WEAK : 0;
	}
	return h;
}

/* The graph an analysis at `level` sees, as a strong one sees it: the
 * edges it does not follow are nulls, and weak roots that count at it
 * are strong. */
static struct heap *as_strong(const struct heap *h, enum heap_level level)
{
	struct heap *g = calloc(1, sizeof(*g));
	uint64_t refs = heap_ref_start(h, h->n);

	cr_assert_not_null(g);
	*g = (struct heap){.n = h->n, .n_roots = h->n_roots,
			   .total_bytes = h->total_bytes};
	g->id = malloc(h->n * sizeof(*g->id));
	g->cls = malloc(h->n * sizeof(*g->cls));
	g->size = malloc(h->n * sizeof(*g->size));
	g->ref_start = malloc((h->n + 1) * sizeof(*g->ref_start));
	g->ref = malloc((refs + 1) * sizeof(*g->ref));
	g->roots = malloc((h->n_roots + 1) * sizeof(*g->roots));
	cr_assert(g->id && g->cls && g->size && g->ref_start && g->ref &&
		  g->roots);
	memcpy(g->id, h->id, h->n * sizeof(*g->id));
	memcpy(g->cls, h->cls, h->n * sizeof(*g->cls));
	memcpy(g->size, h->size, h->n * sizeof(*g->size));
	memcpy(g->ref_start, h->ref_start, (h->n + 1) * sizeof(*g->ref_start));
	memcpy(g->roots, h->roots, h->n_roots * sizeof(*g->roots));
	for (uint32_t u = 0; u < h->n; u++)
		for (uint64_t e = heap_ref_start(h, u); e < heap_ref_start(h, u + 1); e++)
			g->ref[e] = heap_follows(h, level, u, e)
				? h->ref[e] : HEAP_NULL_REF;
	for (size_t r = 0; r < g->n_roots; r++)
		if (level >= HEAP_LEVEL_WEAK)
			g->roots[r].root_flags &= (uint8_t)~HT_ROOT_WEAK;
	return g;
}

static void assert_same_dominators(const struct heap *h,
				   enum heap_level level, uint64_t seed)
{
	struct heap *g = as_strong(h, level);
	struct heap_dominators d, want;
	struct ht_error err;

	cr_assert_eq(heap_dominators_at(h, level, &d, &err), 0);
	cr_assert_eq(heap_dominators(g, &want, &err), 0);
	cr_assert_eq(d.reachable, want.reachable, "seed %llu at %s",
		     (unsigned long long)seed, heap_level_name(level));
	cr_assert_eq(d.unreachable_bytes, want.unreachable_bytes);
	cr_assert_eq(d.weakly_reachable, want.weakly_reachable,
		     "seed %llu at %s", (unsigned long long)seed,
		     heap_level_name(level));
	for (uint32_t i = 0; i < h->n; i++) {
		cr_assert_eq(d.idom[i], want.idom[i], "seed %llu at %s: %u",
			     (unsigned long long)seed, heap_level_name(level),
			     i);
		cr_assert_eq(d.retained[i], want.retained[i]);
	}
	heap_dominators_free(&d);
	heap_dominators_free(&want);
	heap_free(g);
}

Test(random, a_level_is_the_strong_analysis_without_what_it_leaves_out)
{
	for (uint64_t seed = 1; seed <= 2000; seed++) {
		struct heap *h;

		test_random_seed(seed);
		h = random_graph(1 + below(40));
		for (int l = HEAP_LEVEL_STRONG; l < HEAP_LEVELS; l++)
			assert_same_dominators(h, (enum heap_level)l, seed);
		heap_free(h);
	}
}

Test(random, paths_use_only_what_the_level_follows)
{
	for (uint64_t seed = 1; seed <= 1000; seed++) {
		struct heap *h;

		test_random_seed(seed);
		h = random_graph(1 + below(40));
		for (int l = HEAP_LEVEL_STRONG; l < HEAP_LEVELS; l++) {
			struct heap *g = as_strong(h, (enum heap_level)l);
			uint32_t target = below(h->n);
			struct heap_path *p, *q;
			struct ht_error err;
			long n = heap_paths(h, target, 4, (enum heap_level)l,
					    &p, &err);
			long m = heap_paths(g, target, 4, HEAP_LEVEL_STRONG,
					    &q, &err);

			cr_assert_eq(n, m, "seed %llu", (unsigned long long)seed);
			for (long k = 0; k < n; k++) {
				cr_assert_eq(p[k].root, q[k].root);
				cr_assert_eq(p[k].length, q[k].length);
				cr_assert_arr_eq(p[k].objects, q[k].objects,
						 p[k].length *
						 sizeof(*p[k].objects));
			}
			heap_paths_free(p, (size_t)n);
			heap_paths_free(q, (size_t)m);
			heap_free(g);
		}
		heap_free(h);
	}
}

Test(random, the_strongest_level_is_the_first_that_reaches)
{
	for (uint64_t seed = 1; seed <= 2000; seed++) {
		struct heap_dominators d[HEAP_LEVELS];
		struct ht_error err;
		uint64_t charged = 0;
		uint8_t *levels;
		struct heap *h;

		test_random_seed(seed);
		h = random_graph(1 + below(40));
		for (int l = HEAP_LEVEL_STRONG; l < HEAP_LEVELS; l++)
			cr_assert_eq(heap_dominators_at(h, (enum heap_level)l,
							&d[l], &err), 0);
		cr_assert_eq(heap_reach_levels(h, &levels, &charged, &err), 0);
		for (uint32_t i = 0; i < h->n; i++) {
			int first = HEAP_LEVEL_UNREACHABLE;

			for (int l = HEAP_LEVELS - 1; l >= 0; l--)
				if (d[l].idom[i] != HEAP_NONE)
					first = l;
			cr_assert_eq(levels[i], first, "seed %llu: object %u",
				     (unsigned long long)seed, i);
		}
		budget_array_free(levels, h->n, 1, &charged);
		for (int l = HEAP_LEVEL_STRONG; l < HEAP_LEVELS; l++)
			heap_dominators_free(&d[l]);
		heap_free(h);
	}
}
