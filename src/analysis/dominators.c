/*
 * dominators.c - the dominator tree of a dump's graph and the retained
 * sizes it gives (dominators.h), by the semi-NCA algorithm:
 *
 *  1. a depth-first search from a virtual root, whose children are the
 *     objects of the roots that count at the level asked (strong roots, and
 *     weak ones from the weak level on), over the references followed at
 *     that level (a Reference's referent only from its strength on),
 *     numbers the objects it reaches in preorder and records the search
 *     tree's parents;
 *  2. in reverse preorder, each object's semidominator: the smallest number
 *     from which a path reaches it through larger numbers only, found with
 *     a link-eval forest whose paths shorten as they are walked;
 *  3. in preorder, its immediate dominator: the nearest ancestor of its
 *     tree parent, in the dominator tree built so far, whose number is at
 *     most its semidominator.
 *
 * Steps 2 and 3 work on preorder numbers only (0 is the virtual root), on
 * arrays indexed by them; each array is made when a step needs it and
 * freed when done, and one that is done with lends its place to the next
 * (the search counts the predecessor rows; a row's end, once read, keeps
 * a semidominator; the search's tree edges, which a bit marks, stay out
 * of the rows). The peak, in step 2, is 20 bytes a reached object and 4
 * an edge outside the tree on top of the graph: 28 a reached object on a
 * heap of 3 edges each. Each array is charged to the memory budget (util/membudget.h)
 * before it is made and given back when freed. Nothing recurses: the
 * search keeps its own stack, and the forest's paths are walked in one
 * pass.
 *
 * Big graphs do not fit any cache, and every step reads at random: the
 * time goes into cache misses, so the loops ask for what they will read
 * soon (prefetch) and the data read together lies together.
 *
 * Also here, for the analyses that walk the tree (diff, flame, the class
 * table): the tree as child lists, and the retained size per class.
 */
#include "analysis/dominators.h"

#include "analysis/heap.h"
#include "analysis/levels.h"
#include "analysis/reach.h"

#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/membudget.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DOM_UNSEEN UINT32_MAX       /* num: no root reaches the object */
#define DOM_WEAK (UINT32_MAX - 1)   /* num: only weak roots reach it */

/* A function that only prefetches looks free of effects to GCC, which
 * then drops its calls: the prefetching helpers are inlined into their
 * loops, where the prefetches stay. */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* A vertex of the link-eval forest: its link, and the smallest semi on
 * the stretch of path from it up to that link. Walking a path reads both
 * of each vertex, at random: side by side, they cost one cache miss. */
struct dom_link {
	uint32_t ancestor;
	uint32_t label;
};

/* A frame of the search's stack: a vertex and how many of its refs were
 * looked at. */
struct dom_frame {
	uint32_t vertex;
	uint32_t cursor;
};

/*
 * The state of one computation. Arrays of `nr` entries are indexed by
 * preorder number; num is the only one indexed by object.
 */
struct dom_work {
	const struct heap *h;
	enum heap_level level; /* which roots and references count */
	uint32_t nr;           /* objects reached, plus the virtual root */
	uint64_t n_refs;       /* in the graph */
	uint32_t *num;         /* object -> preorder number, DOM_UNSEEN or DOM_WEAK */
	uint32_t *vertex;      /* preorder number -> object */
	uint32_t *parent;      /* search tree parent; turned into the idom */
	/*
	 * The predecessors of v are pred[row(v) .. row(v + 1)]: 4 bytes a row
	 * while the edges number less than 2^32 (start32, counted by the
	 * search as it passes them), 8 past that (start64, counted by a pass
	 * of their own). Once the semidominators are found, each row's end,
	 * read for the last time, holds the semidominator of the row's
	 * vertex: no array of its own at the peak.
	 */
	uint32_t *start32;
	uint64_t *start64;
	/* A bit per ref slot and per root: the edge that first reached its
	 * target in the search, the tree's, which no row holds (its source
	 * is the target's parent, the semidominator's first candidate) */
	uint64_t *tree_edge;
	uint64_t *tree_root;
	uint32_t *pred;        /* by preorder number, roots' edges from 0 */
	struct dom_link *link; /* the link-eval forest */
	uint64_t weakly_reachable;
	uint64_t n_pred;       /* entries of pred */
	uint64_t charged;      /* what the arrays hold, to the memory budget */
};

static void work_free(struct dom_work *w)
{
	free(w->num);
	free(w->vertex);
	free(w->parent);
	free(w->start32);
	free(w->start64);
	free(w->tree_edge);
	free(w->tree_root);
	free(w->pred);
	free(w->link);
	mem_budget_release(w->charged);
	w->charged = 0;
}

/* Object t as an edge target: the sentinels (null, dangling) are not. */
static bool is_object(const struct heap *h, uint32_t t)
{
	return t < h->n;
}

/* A root that is a child of the virtual root at the level. */
static bool counts_as_root(const struct dom_work *w, size_t r)
{
	const struct heap *h = w->h;

	return is_object(h, h->roots[r].object) &&
	       heap_root_counts(&h->roots[r], w->level);
}

/* ---- Rows of predecessors ----------------------------------------------- */

static bool rows_narrow(const struct dom_work *w)
{
	return w->start32 != NULL;
}

static ALWAYS_INLINE uint64_t row(const struct dom_work *w, uint32_t v)
{
	return rows_narrow(w) ? w->start32[v] : w->start64[v];
}

/* Counts an edge into v (the first pass), or takes the next place in its
 * row (the second, where each row start walks to the next row's). */
static ALWAYS_INLINE uint64_t row_bump(struct dom_work *w, uint32_t v)
{
	return rows_narrow(w) ? w->start32[v]++ : w->start64[v]++;
}

/* ---- Step 1: the search ------------------------------------------------- */

/* How many of an object's targets the search asks the cache for ahead. */
#define PREFETCH_TARGETS 16

/* The search reads the number of each target of an object soon after
 * reaching it, and the refs of the first it descends to: asking for them
 * all at once overlaps their cache misses, which otherwise come one by
 * one. */
static ALWAYS_INLINE void prefetch_targets(const struct dom_work *w,
					   uint32_t v)
{
	const struct heap *h = w->h;
	uint64_t e = heap_ref_start(h, v), end = heap_ref_start(h, v + 1);

	if (end - e > PREFETCH_TARGETS)
		end = e + PREFETCH_TARGETS;
	for (; e < end; e++)
		if (is_object(h, h->ref[e])) {
			__builtin_prefetch(&w->num[h->ref[e]], 1);
			__builtin_prefetch(h->ref_start32 ?
					   (const void *)&h->ref_start32[h->ref[e]] :
					   (const void *)&h->ref_start[h->ref[e]]);
		}
}

static uint32_t number(struct dom_work *w, uint32_t object, uint32_t parent)
{
	uint32_t p = w->nr++;

	w->num[object] = p;
	w->vertex[p] = object;
	w->parent[p] = parent;
	prefetch_targets(w, object);
	return p;
}

static ALWAYS_INLINE bool bit_is_set(const uint64_t *bits, uint64_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

static ALWAYS_INLINE void set_bit(uint64_t *bits, uint64_t i)
{
	bits[i / 64] |= UINT64_C(1) << (i % 64);
}

/* An edge of the strong graph that is not the tree's, counted into its
 * target's row when the search counts (rows_narrow). Leaving the tree's
 * edges out of the rows spares 4 bytes a reached object. */
static ALWAYS_INLINE void count_edge(struct dom_work *w, uint32_t to)
{
	if (rows_narrow(w))
		w->start32[to]++;
}

/*
 * Depth-first from one root's object, in field order. Each edge it
 * passes to a target already numbered is counted into the target's row;
 * one that reaches its target first is the tree's (tree_edge), never a
 * row's. The stack is as deep as the longest path, so it has a frame per
 * object.
 */
static void search_from(struct dom_work *w, uint32_t root_object,
			struct dom_frame *stack)
{
	const struct heap *h = w->h;
	size_t depth = 1;

	stack[0] = (struct dom_frame){.vertex = number(w, root_object, 0)};
	while (depth) {
		struct dom_frame *top = &stack[depth - 1];
		uint32_t v = w->vertex[top->vertex];
		uint64_t at = heap_ref_start(h, v) + top->cursor;
		uint32_t t, p;

		if (at == heap_ref_start(h, v + 1)) {
			depth--;
			continue;
		}
		top->cursor++;
		t = h->ref[at];
		if (!is_object(h, t) || !heap_follows(h, w->level, v, at))
			continue;
		p = w->num[t];
		if (p == DOM_UNSEEN) {
			set_bit(w->tree_edge, at);
			p = number(w, t, top->vertex);
			stack[depth++] = (struct dom_frame){.vertex = p};
			continue;
		}
		count_edge(w, p);
	}
}

/* Marks DOM_WEAK what a weak root reaches, over the references followed
 * at the level, that no strong one does, below the weak level (from it on,
 * weak roots are roots); the stack holds objects here, and nothing is
 * counted. */
static void mark_weak_from(struct dom_work *w, uint32_t root_object,
			   struct dom_frame *stack)
{
	const struct heap *h = w->h;
	size_t depth = 1;

	w->num[root_object] = DOM_WEAK;
	w->weakly_reachable++;
	stack[0] = (struct dom_frame){.vertex = root_object};
	while (depth) {
		struct dom_frame *top = &stack[depth - 1];
		uint32_t v = top->vertex;
		uint64_t at = heap_ref_start(h, v) + top->cursor;
		uint32_t t;

		if (at == heap_ref_start(h, v + 1)) {
			depth--;
			continue;
		}
		top->cursor++;
		t = h->ref[at];
		if (!is_object(h, t) || w->num[t] != DOM_UNSEEN ||
		    !heap_follows(h, w->level, v, at))
			continue;
		w->num[t] = DOM_WEAK;
		w->weakly_reachable++;
		stack[depth++] = (struct dom_frame){.vertex = t};
	}
}

static void search_roots(struct dom_work *w, struct dom_frame *stack)
{
	const struct heap *h = w->h;

	for (size_t r = 0; r < h->n_roots; r++) {
		uint32_t object = h->roots[r].object;

		if (!counts_as_root(w, r))
			continue;
		if (w->num[object] == DOM_UNSEEN) {
			set_bit(w->tree_root, r);
			search_from(w, object, stack);
		} else {
			count_edge(w, w->num[object]);
		}
	}
}

static void search_weak_roots(struct dom_work *w, struct dom_frame *stack)
{
	const struct heap *h = w->h;

	for (size_t r = 0; r < h->n_roots; r++) {
		uint32_t object = h->roots[r].object;

		if (is_object(h, object) && heap_root_is_weak(&h->roots[r]) &&
		    w->num[object] == DOM_UNSEEN)
			mark_weak_from(w, object, stack);
	}
}

static bool always_wide_rows;

void heap_dominators_wide_rows(bool always)
{
	always_wide_rows = always;
}

/* The row counts the search makes, one per preorder number and one for
 * the end, while every count fits: when the edges and roots number less
 * than 2^32. */
static int start_narrow_rows(struct dom_work *w)
{
	size_t rows = (size_t)w->h->n + 2;

	if (w->n_refs + w->h->n_roots >= UINT32_MAX || always_wide_rows)
		return 0;
	w->start32 = budget_array(rows, sizeof(*w->start32), &w->charged);
	if (!w->start32)
		return -1;
	memset(w->start32, 0, rows * sizeof(*w->start32));
	return 0;
}

static size_t bit_words(uint64_t bits)
{
	return (size_t)((bits + 63) / 64);
}

static int search(struct dom_work *w)
{
	const struct heap *h = w->h;
	size_t cap = (size_t)h->n + 1;
	struct dom_frame *stack;

	w->num = budget_array(h->n, sizeof(*w->num), &w->charged);
	w->tree_edge = budget_array(bit_words(w->n_refs), sizeof(uint64_t),
				    &w->charged);
	w->tree_root = budget_array(bit_words(h->n_roots), sizeof(uint64_t),
				    &w->charged);
	w->vertex = budget_array(cap, sizeof(*w->vertex), &w->charged);
	w->parent = budget_array(cap, sizeof(*w->parent), &w->charged);
	stack = budget_array(cap, sizeof(*stack), &w->charged);
	if (!w->num || !w->tree_edge || !w->tree_root || !w->vertex ||
	    !w->parent || !stack || start_narrow_rows(w) < 0) {
		budget_array_free(stack, cap, sizeof(*stack), &w->charged);
		return -1;
	}
	memset(w->num, 0xff, (size_t)h->n * sizeof(*w->num));
	memset(w->tree_edge, 0, bit_words(w->n_refs) * sizeof(uint64_t));
	memset(w->tree_root, 0, bit_words(h->n_roots) * sizeof(uint64_t));
	w->vertex[0] = HEAP_NONE;
	w->parent[0] = 0;
	w->nr = 1;
	search_roots(w, stack);
	if (w->level < HEAP_LEVEL_WEAK)
		search_weak_roots(w, stack);
	budget_array_free(stack, cap, sizeof(*stack), &w->charged);
	SHRINK_ARRAY(w->vertex, w->nr);
	SHRINK_ARRAY(w->parent, w->nr);
	budget_give_back((uint64_t)(cap - w->nr) * (sizeof(*w->vertex) +
						   sizeof(*w->parent)),
			 &w->charged);
	if (rows_narrow(w)) {
		SHRINK_ARRAY(w->start32, (size_t)w->nr + 1);
		budget_give_back((uint64_t)(h->n + 1 - w->nr) *
				 sizeof(*w->start32), &w->charged);
	}
	return 0;
}

/* ---- Predecessors, by preorder number ----------------------------------- */

/* How far ahead in the refs the edge passes ask for the number of a
 * target, and, half as far, for the predecessor row of that number: two
 * stages, so that the second finds its input in the cache. */
#define AHEAD 64

static ALWAYS_INLINE void prefetch_edge(const struct dom_work *w, uint64_t e,
					bool fill)
{
	const struct heap *h = w->h;
	uint32_t t, p;

	if (e + AHEAD < w->n_refs && is_object(h, h->ref[e + AHEAD]))
		__builtin_prefetch(&w->num[h->ref[e + AHEAD]]);
	if (e + AHEAD / 2 >= w->n_refs)
		return;
	t = h->ref[e + AHEAD / 2];
	if (!is_object(h, t) || (p = w->num[t]) >= w->nr)
		return;
	if (fill)
		__builtin_prefetch(&w->pred[row(w, p)], 1);
	else if (rows_narrow(w))
		__builtin_prefetch(&w->start32[p], 1);
	else
		__builtin_prefetch(&w->start64[p], 1);
}

/* One edge, counted in its row (first pass) or stored at the row's next
 * place. */
static ALWAYS_INLINE void add_edge(struct dom_work *w, uint32_t from,
				   uint32_t to, bool fill)
{
	uint64_t at = row_bump(w, to);

	if (fill)
		w->pred[at] = from;
}

/* Every edge followed between reached objects but the tree's, by preorder
 * number, and the virtual root's edges to the roots but the tree's. */
static void add_edges(struct dom_work *w, bool fill)
{
	const struct heap *h = w->h;

	for (size_t r = 0; r < h->n_roots; r++)
		if (counts_as_root(w, r) && !bit_is_set(w->tree_root, r))
			add_edge(w, 0, w->num[h->roots[r].object], fill);
	for (uint32_t u = 0; u < h->n; u++) {
		uint32_t from = w->num[u];
		uint64_t e = heap_ref_start(h, u), end = heap_ref_start(h, u + 1);

		if (from >= w->nr)
			continue;
		for (; e < end; e++) {
			uint32_t t = h->ref[e];

			prefetch_edge(w, e, fill);
			if (is_object(h, t) && !bit_is_set(w->tree_edge, e) &&
			    w->num[t] < w->nr && heap_follows(h, w->level, u, e))
				add_edge(w, from, w->num[t], fill);
		}
	}
}

/* Past 2^32 edges: rows of 8 bytes, counted by a pass of their own. */
static int count_wide_rows(struct dom_work *w)
{
	size_t rows = (size_t)w->nr + 1;

	w->start64 = budget_array(rows, sizeof(*w->start64), &w->charged);
	if (!w->start64)
		return -1;
	memset(w->start64, 0, rows * sizeof(*w->start64));
	add_edges(w, false);
	return 0;
}

/* Counts become row starts: each row starts where the previous ends. */
static uint64_t counts_to_starts(struct dom_work *w)
{
	uint64_t total = 0;

	for (uint32_t v = 0; v <= w->nr; v++) {
		uint64_t c = row(w, v);

		if (rows_narrow(w))
			w->start32[v] = (uint32_t)total;
		else
			w->start64[v] = total;
		total += c;
	}
	return total;
}

/* Each row start walked to the next row's start as the row filled: all
 * shift back one. */
static void rewind_rows(struct dom_work *w)
{
	if (rows_narrow(w)) {
		memmove(w->start32 + 1, w->start32, w->nr * sizeof(*w->start32));
		w->start32[0] = 0;
	} else {
		memmove(w->start64 + 1, w->start64, w->nr * sizeof(*w->start64));
		w->start64[0] = 0;
	}
}

/* Reverse edges in compressed rows, 4 bytes an edge and 4 (or 8) a
 * reached object: counted (by the search, or by a pass over the edges),
 * then filled in a pass over the edges. */
static int build_predecessors(struct dom_work *w)
{
	uint64_t total;

	if (!rows_narrow(w) && count_wide_rows(w) < 0)
		return -1;
	total = counts_to_starts(w);
	w->pred = budget_array(total, sizeof(*w->pred), &w->charged);
	if (!w->pred)
		return -1;
	w->n_pred = total;
	add_edges(w, true);
	rewind_rows(w);
	budget_array_free(w->num, w->h->n, sizeof(*w->num), &w->charged);
	budget_array_free(w->tree_edge, bit_words(w->n_refs), sizeof(uint64_t),
			  &w->charged);
	budget_array_free(w->tree_root, bit_words(w->h->n_roots),
			  sizeof(uint64_t), &w->charged);
	w->num = NULL;
	w->tree_edge = NULL;
	w->tree_root = NULL;
	return 0;
}

/* ---- Step 2: semidominators --------------------------------------------- */

/*
 * The smallest semidominator on the forest path from u up to the first
 * vertex not processed yet (numbered v or less), that vertex excluded.
 * Vertices above v are processed; each is linked to its tree parent from
 * the start (ancestors begin as copies of the parents), a link that only
 * counts once the vertex is processed. A label stands for the stretch of
 * path from its vertex up to its ancestor, that one excluded.
 *
 * The path shortens as it is walked, by halving: each vertex passed links
 * to its grandparent instead, taking in the label of the parent it skips,
 * and the walk goes on from there. One pass, no stack, however long the
 * path.
 */
static uint32_t eval(struct dom_link *link, uint32_t u, uint32_t v)
{
	uint32_t x = u, smallest = UINT32_MAX;

	for (;;) {
		struct dom_link *at = &link[x];
		uint32_t a = at->ancestor;

		if (a > v) {
			if (link[a].label < at->label)
				at->label = link[a].label;
			at->ancestor = link[a].ancestor;
		}
		if (at->label < smallest)
			smallest = at->label;
		x = at->ancestor;
		if (x <= v)
			return smallest;
	}
}

/* How many vertices ahead the semidominator pass asks for the forest
 * entries of the predecessors: the first reads of their evals, which do
 * not depend on one another. */
#define PREDS_AHEAD 8

static ALWAYS_INLINE void prefetch_preds(const struct dom_work *w,
					 uint32_t v)
{
	if (v <= PREDS_AHEAD)
		return;
	v -= PREDS_AHEAD;
	for (uint64_t e = row(w, v), end = row(w, v + 1); e < end; e++)
		if (w->pred[e] > v)
			__builtin_prefetch(&w->link[w->pred[e]]);
}

/* Where the semidominator of v is kept once found: the end of v's row,
 * which the pass, going down, has read for the last time. */
static ALWAYS_INLINE void keep_semi(struct dom_work *w, uint32_t v,
				    uint32_t s)
{
	if (rows_narrow(w))
		w->start32[v + 1] = s;
	else
		w->start64[v + 1] = s;
}

static ALWAYS_INLINE uint32_t semi(const struct dom_work *w, uint32_t v)
{
	return (uint32_t)row(w, v + 1);
}

static void semidominators(struct dom_work *w)
{
	for (uint32_t v = w->nr - 1; v > 0; v--) {
		uint32_t s = w->parent[v];

		prefetch_preds(w, v);
		for (uint64_t e = row(w, v), end = row(w, v + 1); e < end;
		     e++) {
			uint32_t u = w->pred[e], candidate;

			if (u == v)
				continue;
			candidate = u < v ? u : eval(w->link, u, v);
			if (candidate < s)
				s = candidate;
		}
		keep_semi(w, v, s);
		w->link[v].label = s;
	}
}

/* ---- Step 3: immediate dominators --------------------------------------- */

/* In preorder, so that the idoms of smaller numbers are final; parent[]
 * becomes idom[] in place. */
static void immediate_dominators(struct dom_work *w)
{
	uint32_t *idom = w->parent;

	for (uint32_t v = 1; v < w->nr; v++) {
		uint32_t d = idom[v], s = semi(w, v);

		while (d > s)
			d = idom[d];
		idom[v] = d;
	}
}

static void free_rows(struct dom_work *w)
{
	size_t rows = (size_t)w->nr + 1;

	budget_array_free(w->start32, rows, sizeof(*w->start32), &w->charged);
	budget_array_free(w->start64, rows, sizeof(*w->start64), &w->charged);
	w->start32 = NULL;
	w->start64 = NULL;
}

static int dominator_tree(struct dom_work *w)
{
	size_t nr = w->nr;

	w->link = budget_array(nr, sizeof(*w->link), &w->charged);
	if (!w->link)
		return -1;
	for (size_t v = 0; v < nr; v++)
		w->link[v].ancestor = w->parent[v];
	semidominators(w);
	budget_array_free(w->pred, w->n_pred, sizeof(*w->pred), &w->charged);
	budget_array_free(w->link, nr, sizeof(*w->link), &w->charged);
	w->pred = NULL;
	w->link = NULL;
	immediate_dominators(w);
	free_rows(w);
	return 0;
}

/* ---- Retained sizes and the answer -------------------------------------- */

/* A dominator has a smaller number than what it dominates: in reverse
 * preorder, each subtree is summed before its root hands it up. */
static int retained_sizes(struct dom_work *w, struct heap_dominators *d)
{
	const struct heap *h = w->h;
	const uint32_t *idom = w->parent;
	uint64_t *retained;

	/* summed straight into the answer, by object: no array by preorder
	 * beside it at the peak */
	retained = d->retained = budget_array(h->n, sizeof(*d->retained),
					      &d->charged);
	if (!retained)
		return -1;
	memset(retained, 0, (size_t)h->n * sizeof(*retained));
	for (uint32_t v = w->nr - 1; v > 0; v--) {
		uint32_t object = w->vertex[v];

		retained[object] += heap_size(h, object);
		if (idom[v])
			retained[w->vertex[idom[v]]] += retained[object];
	}
	return 0;
}

static void unreachable_totals(const struct heap *h, struct heap_dominators *d)
{
	for (uint32_t i = 0; i < h->n; i++) {
		if (d->idom[i] != HEAP_NONE)
			continue;
		d->unreachable++;
		d->unreachable_bytes += heap_size(h, i);
	}
}

/* From preorder numbers back to objects. */
static int answer(struct dom_work *w, struct heap_dominators *d)
{
	const struct heap *h = w->h;

	d->idom = budget_array(h->n, sizeof(*d->idom), &d->charged);
	if (!d->idom)
		return -1;
	memset(d->idom, 0xff, (size_t)h->n * sizeof(*d->idom));
	for (uint32_t v = 1; v < w->nr; v++) {
		uint32_t object = w->vertex[v], dom = w->parent[v];

		d->idom[object] = dom ? w->vertex[dom] : HEAP_VIRTUAL_ROOT;
	}
	d->reachable = w->nr - 1;
	d->weakly_reachable = w->weakly_reachable;
	d->level = w->level;
	unreachable_totals(h, d);
	return 0;
}

int heap_dominators(const struct heap *h, struct heap_dominators *d,
		    struct ht_error *err)
{
	return heap_dominators_at(h, HEAP_LEVEL_STRONG, d, err);
}

int heap_dominators_at(const struct heap *h, enum heap_level level,
		       struct heap_dominators *d, struct ht_error *err)
{
	struct dom_work w = {.h = h, .level = level,
			     .n_refs = h->n ? heap_ref_start(h, h->n) : 0};
	int rc = -1;

	memset(d, 0, sizeof(*d));
	if (search(&w) == 0 && build_predecessors(&w) == 0 &&
	    dominator_tree(&w) == 0 && retained_sizes(&w, d) == 0 &&
	    answer(&w, d) == 0)
		rc = 0;
	work_free(&w);
	if (rc < 0) {
		heap_dominators_free(d);
		if (mem_budget_exceeded())
			err_plain(err, HT_E_NOMEM, NULL, MEM_BUDGET_MESSAGE,
				  mem_budget_limit());
		else
			err_plain(err, HT_E_NOMEM, NULL,
				  "out of memory computing the dominators of "
				  "%" PRIu32 " objects", h->n);
	}
	return rc;
}

void heap_dominators_free(struct heap_dominators *d)
{
	free(d->idom);
	free(d->retained);
	mem_budget_release(d->charged);
	memset(d, 0, sizeof(*d));
}

/* ---- The dominator tree as child lists ---------------------------------- */

int dom_tree_build(const struct heap *h, const struct heap_dominators *d,
		   struct dom_tree *t)
{
	t->charged = 0;
	t->first = budget_array(h->n, sizeof(*t->first), &t->charged);
	t->next = budget_array(h->n, sizeof(*t->next), &t->charged);
	t->top = HEAP_NONE;
	if (!t->first || !t->next) {
		dom_tree_free(t);
		return -1;
	}
	for (uint32_t i = 0; i < h->n; i++)
		t->first[i] = t->next[i] = HEAP_NONE;
	/* prepending from the last object leaves every list in index order */
	for (uint32_t i = h->n; i-- > 0;) {
		uint32_t p = d->idom[i];

		if (p == HEAP_NONE)
			continue;
		if (p == HEAP_VIRTUAL_ROOT) {
			t->next[i] = t->top;
			t->top = i;
		} else {
			t->next[i] = t->first[p];
			t->first[p] = i;
		}
	}
	return 0;
}

void dom_tree_free(struct dom_tree *t)
{
	free(t->first);
	free(t->next);
	mem_budget_release(t->charged);
	t->charged = 0;
	t->first = t->next = NULL;
	t->top = HEAP_NONE;
}

uint32_t dom_tree_next(const struct dom_tree *t,
		       const struct heap_dominators *d, uint32_t x)
{
	if (t->first[x] != HEAP_NONE)
		return t->first[x];
	while (x != HEAP_NONE) {
		uint32_t p;

		if (t->next[x] != HEAP_NONE)
			return t->next[x];
		p = d->idom[x];
		x = p == HEAP_VIRTUAL_ROOT ? HEAP_NONE : p;
	}
	return HEAP_NONE;
}

/* ---- Retained size per group -------------------------------------------- */

/* Which group an object is in: by its class's slot, or given per object
 * (HEAP_NONE: in none). */
struct grouping {
	const struct heap *h;
	const uint32_t *of_slot;   /* by class; NULL: each slot its own */
	const uint32_t *of_object; /* or per object */
};

static size_t group_of(const struct grouping *g, uint32_t object)
{
	size_t slot;

	if (g->of_object)
		return g->of_object[object] == HEAP_NONE ? SIZE_MAX
							  : g->of_object[object];
	slot = heap_class_slot(g->h, object);
	return g->of_slot ? g->of_slot[slot] : slot;
}

/*
 * Walks the tree depth first, down the child lists and back up by idom,
 * counting per group the objects open on the way down (open[]): an
 * object whose group has none open above it is the topmost of its group
 * there, and adds its retained size.
 */
static int retained_by_group(const struct grouping *gr,
			     const struct heap_dominators *d, size_t n_groups,
			     uint64_t *retained)
{
	uint32_t *open = calloc(n_groups ? n_groups : 1, sizeof(*open));
	struct dom_tree t;
	uint32_t x;

	if (!open || dom_tree_build(gr->h, d, &t) < 0) {
		free(open);
		return -1;
	}
	x = t.top;
	while (x != HEAP_NONE) {
		size_t g = group_of(gr, x);

		if (g != SIZE_MAX && open[g]++ == 0)
			retained[g] += d->retained[x];
		if (t.first[x] != HEAP_NONE) {
			x = t.first[x];
			continue;
		}
		for (;;) { /* x is done: close it and the ancestors it ends */
			uint32_t p;

			g = group_of(gr, x);
			if (g != SIZE_MAX)
				open[g]--;
			if (t.next[x] != HEAP_NONE) {
				x = t.next[x];
				break;
			}
			p = d->idom[x];
			if (p == HEAP_VIRTUAL_ROOT) {
				x = HEAP_NONE;
				break;
			}
			x = p;
		}
	}
	dom_tree_free(&t);
	free(open);
	return 0;
}

int heap_retained_by_class(const struct heap *h,
			   const struct heap_dominators *d,
			   const uint32_t *group_of_slot, size_t n_groups,
			   uint64_t *retained)
{
	const struct grouping g = {.h = h, .of_slot = group_of_slot};

	return retained_by_group(&g, d, n_groups, retained);
}

int heap_retained_by_group(const struct heap *h,
			   const struct heap_dominators *d,
			   const uint32_t *group_of_object, size_t n_groups,
			   uint64_t *retained)
{
	const struct grouping g = {.h = h, .of_object = group_of_object};

	return retained_by_group(&g, d, n_groups, retained);
}
