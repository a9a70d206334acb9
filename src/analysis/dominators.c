/*
 * dominators.c - the dominator tree of a dump's graph and the retained
 * sizes it gives (heap.h), by the semi-NCA algorithm:
 *
 *  1. a depth-first search from a virtual root, whose children are the
 *     objects of the strong roots, numbers the objects it reaches in
 *     preorder and records the search tree's parents;
 *  2. in reverse preorder, each object's semidominator: the smallest number
 *     from which a path reaches it through larger numbers only, found with
 *     a link-eval forest whose paths are compressed;
 *  3. in preorder, its immediate dominator: the nearest ancestor of its
 *     tree parent, in the dominator tree built so far, whose number is at
 *     most its semidominator.
 *
 * Steps 2 and 3 work on preorder numbers only (0 is the virtual root), on
 * arrays indexed by them; each array is made when a step needs it and
 * freed when done, which keeps the peak near 40 bytes an object on top of
 * the graph. Nothing recurses: the search keeps its own stack, and path
 * compression reverses the links on its way up instead of stacking them.
 */
#include "heap.h"

#include "error.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DOM_UNSEEN UINT32_MAX       /* num[]: no root reaches the object */
#define DOM_WEAK (UINT32_MAX - 1)   /* num[]: only weak roots reach it */
#define DOM_END UINT32_MAX          /* end of a reversed path */

/*
 * The state of one computation. Arrays of `nr` entries are indexed by
 * preorder number; num[] is the only one indexed by object.
 */
struct dom_work {
	const struct heap *h;
	uint32_t nr;          /* objects reached, plus the virtual root */
	uint32_t *num;        /* object -> preorder number, DOM_UNSEEN, DOM_WEAK */
	uint32_t *vertex;     /* preorder number -> object */
	uint32_t *parent;     /* search tree parent; turned into the idom */
	uint64_t *pred_start; /* predecessors of v: pred[pred_start[v] ..] */
	uint32_t *pred;       /* by preorder number, roots' edges from 0 */
	uint32_t *semi;       /* semidominator */
	uint32_t *label;      /* smallest semi on the compressed path above */
	uint32_t *ancestor;   /* link-eval forest */
	uint64_t *retained;
	uint64_t weakly_reachable;
};

static void *alloc_array(size_t n, size_t elem)
{
	return malloc((n ? n : 1) * elem);
}

/* Gives back the tail of an array that turned out longer than needed. */
static void shrink(uint32_t **array, size_t n)
{
	uint32_t *smaller = realloc(*array, (n ? n : 1) * sizeof(**array));

	if (smaller)
		*array = smaller;
}

static void work_free(struct dom_work *w)
{
	free(w->num);
	free(w->vertex);
	free(w->parent);
	free(w->pred_start);
	free(w->pred);
	free(w->semi);
	free(w->label);
	free(w->ancestor);
	free(w->retained);
}

/* Object t as an edge target: the sentinels (null, dangling) are not. */
static bool is_object(const struct heap *h, uint32_t t)
{
	return t < h->n;
}

static bool is_strong_root(const struct heap *h, size_t r)
{
	return is_object(h, h->roots[r].object) &&
	       !heap_root_is_weak(&h->roots[r]);
}

/* ---- Step 1: the search ------------------------------------------------- */

static uint32_t number(struct dom_work *w, uint32_t object, uint32_t parent)
{
	uint32_t p = w->nr++;

	w->num[object] = p;
	w->vertex[p] = object;
	w->parent[p] = parent;
	return p;
}

/*
 * Depth-first from one strong root's object, in field order. The stack
 * holds preorder numbers and, beside them, how many refs of each were
 * looked at; it is as deep as the longest path, so it takes arrays of one
 * entry per object (those of step 2, not in use yet).
 */
static void search_from(struct dom_work *w, uint32_t root_object,
			uint32_t *stack, uint32_t *cursor)
{
	const struct heap *h = w->h;
	size_t depth = 1;

	stack[0] = number(w, root_object, 0);
	cursor[0] = 0;
	while (depth) {
		uint32_t p = stack[depth - 1];
		uint32_t v = w->vertex[p];
		uint64_t at = h->ref_start[v] + cursor[depth - 1];
		uint32_t t;

		if (at == h->ref_start[v + 1]) {
			depth--;
			continue;
		}
		cursor[depth - 1]++;
		t = h->ref[at];
		if (!is_object(h, t) || w->num[t] != DOM_UNSEEN)
			continue;
		stack[depth] = number(w, t, p);
		cursor[depth] = 0;
		depth++;
	}
}

/* Marks DOM_WEAK what a weak root reaches that no strong one does; the
 * stack holds objects here. */
static void mark_weak_from(struct dom_work *w, uint32_t root_object,
			   uint32_t *stack, uint32_t *cursor)
{
	const struct heap *h = w->h;
	size_t depth = 1;

	w->num[root_object] = DOM_WEAK;
	w->weakly_reachable++;
	stack[0] = root_object;
	cursor[0] = 0;
	while (depth) {
		uint32_t v = stack[depth - 1];
		uint64_t at = h->ref_start[v] + cursor[depth - 1];
		uint32_t t;

		if (at == h->ref_start[v + 1]) {
			depth--;
			continue;
		}
		cursor[depth - 1]++;
		t = h->ref[at];
		if (!is_object(h, t) || w->num[t] != DOM_UNSEEN)
			continue;
		w->num[t] = DOM_WEAK;
		w->weakly_reachable++;
		stack[depth] = t;
		cursor[depth] = 0;
		depth++;
	}
}

static int search(struct dom_work *w)
{
	const struct heap *h = w->h;
	size_t cap = (size_t)h->n + 1;
	uint32_t *stack, *cursor;

	w->num = alloc_array(h->n, sizeof(*w->num));
	w->vertex = alloc_array(cap, sizeof(*w->vertex));
	w->parent = alloc_array(cap, sizeof(*w->parent));
	w->semi = stack = alloc_array(cap, sizeof(*stack));
	w->label = cursor = alloc_array(cap, sizeof(*cursor));
	if (!w->num || !w->vertex || !w->parent || !stack || !cursor)
		return -1;
	memset(w->num, 0xff, (size_t)h->n * sizeof(*w->num));
	w->vertex[0] = HEAP_NONE;
	w->parent[0] = 0;
	w->nr = 1;
	for (size_t r = 0; r < h->n_roots; r++)
		if (is_strong_root(h, r) &&
		    w->num[h->roots[r].object] == DOM_UNSEEN)
			search_from(w, h->roots[r].object, stack, cursor);
	for (size_t r = 0; r < h->n_roots; r++)
		if (is_object(h, h->roots[r].object) &&
		    heap_root_is_weak(&h->roots[r]) &&
		    w->num[h->roots[r].object] == DOM_UNSEEN)
			mark_weak_from(w, h->roots[r].object, stack, cursor);
	free(w->semi);
	free(w->label);
	w->semi = w->label = NULL;
	shrink(&w->vertex, w->nr);
	shrink(&w->parent, w->nr);
	return 0;
}

/* ---- Predecessors, by preorder number ------------------------------------ */

/* One edge, counted in pred_start[to] (first pass) or stored at it. */
static void add_edge(struct dom_work *w, uint32_t from, uint32_t to, bool fill)
{
	if (fill)
		w->pred[w->pred_start[to]++] = from;
	else
		w->pred_start[to]++;
}

/* Every edge between reached objects, by preorder number, and the virtual
 * root's edges to the strong roots. */
static void add_edges(struct dom_work *w, bool fill)
{
	const struct heap *h = w->h;

	for (size_t r = 0; r < h->n_roots; r++)
		if (is_strong_root(h, r))
			add_edge(w, 0, w->num[h->roots[r].object], fill);
	for (uint32_t u = 0; u < h->n; u++) {
		uint32_t from = w->num[u];

		if (from >= w->nr)
			continue;
		for (uint64_t e = h->ref_start[u]; e < h->ref_start[u + 1];
		     e++) {
			uint32_t t = h->ref[e];

			if (is_object(h, t) && w->num[t] < w->nr)
				add_edge(w, from, w->num[t], fill);
		}
	}
}

/* Reverse edges in compressed rows, made in two passes (count, fill) over
 * the edges: 4 bytes an edge and 8 a reached object. */
static int build_predecessors(struct dom_work *w)
{
	uint64_t *start, total = 0;

	start = w->pred_start = calloc((size_t)w->nr + 1, sizeof(*start));
	if (!start)
		return -1;
	add_edges(w, false);
	for (uint32_t v = 0; v <= w->nr; v++) {
		uint64_t c = start[v];

		start[v] = total;
		total += c;
	}
	w->pred = alloc_array(total, sizeof(*w->pred));
	if (!w->pred)
		return -1;
	/* start[v] walks to the start of v + 1, then all shift back */
	add_edges(w, true);
	memmove(start + 1, start, w->nr * sizeof(*start));
	start[0] = 0;
	free(w->num);
	w->num = NULL;
	return 0;
}

/* ---- Step 2: semidominators ------------------------------------------------ */

/*
 * The smallest semidominator on the forest path from u up to the first
 * vertex not processed yet (numbered v or less), that vertex excluded.
 * Vertices above v are processed; each is linked to its tree parent from
 * the start (ancestor[] begins as a copy of parent[]), a link that only
 * counts once the vertex is processed.
 *
 * The path is compressed: each vertex on it ends up linked straight to
 * that first unprocessed vertex, its label the minimum of the stretch it
 * skips. The walk goes up reversing the links, then down restoring them
 * to point at the top, carrying the minimum from above: no stack, however
 * long the path.
 */
static uint32_t eval(uint32_t *ancestor, uint32_t *label, uint32_t u,
		     uint32_t v)
{
	uint32_t below = DOM_END, x = u, above, top;

	while (ancestor[x] > v) {
		uint32_t up = ancestor[x];

		ancestor[x] = below;
		below = x;
		x = up;
	}
	top = ancestor[x];
	above = x;
	while (below != DOM_END) {
		uint32_t next = ancestor[below];

		if (label[above] < label[below])
			label[below] = label[above];
		ancestor[below] = top;
		above = below;
		below = next;
	}
	return label[u];
}

static void semidominators(struct dom_work *w)
{
	for (uint32_t v = w->nr - 1; v > 0; v--) {
		uint32_t s = v;

		for (uint64_t e = w->pred_start[v]; e < w->pred_start[v + 1];
		     e++) {
			uint32_t u = w->pred[e], candidate;

			if (u == v)
				continue;
			candidate = u < v ? u : eval(w->ancestor, w->label, u, v);
			if (candidate < s)
				s = candidate;
		}
		w->semi[v] = s;
		w->label[v] = s;
	}
}

/* ---- Step 3: immediate dominators ------------------------------------------ */

/* In preorder, so that the idoms of smaller numbers are final; parent[]
 * becomes idom[] in place. */
static void immediate_dominators(struct dom_work *w)
{
	uint32_t *idom = w->parent;

	for (uint32_t v = 1; v < w->nr; v++) {
		uint32_t d = idom[v];

		while (d > w->semi[v])
			d = idom[d];
		idom[v] = d;
	}
}

static int dominator_tree(struct dom_work *w)
{
	size_t nr = w->nr;

	w->semi = alloc_array(nr, sizeof(*w->semi));
	w->label = alloc_array(nr, sizeof(*w->label));
	w->ancestor = alloc_array(nr, sizeof(*w->ancestor));
	if (!w->semi || !w->label || !w->ancestor)
		return -1;
	memcpy(w->ancestor, w->parent, nr * sizeof(*w->ancestor));
	semidominators(w);
	free(w->pred);
	free(w->pred_start);
	free(w->ancestor);
	free(w->label);
	w->pred = NULL;
	w->pred_start = NULL;
	w->ancestor = w->label = NULL;
	immediate_dominators(w);
	free(w->semi);
	w->semi = NULL;
	return 0;
}

/* ---- Retained sizes and the answer ------------------------------------------ */

/* A dominator has a smaller number than what it dominates: in reverse
 * preorder, each subtree is summed before its root hands it up. */
static int retained_sizes(struct dom_work *w)
{
	const uint32_t *idom = w->parent;

	w->retained = calloc(w->nr, sizeof(*w->retained));
	if (!w->retained)
		return -1;
	for (uint32_t v = w->nr - 1; v > 0; v--) {
		w->retained[v] += w->h->size[w->vertex[v]];
		w->retained[idom[v]] += w->retained[v];
	}
	return 0;
}

static void unreachable_totals(const struct heap *h, struct heap_dominators *d)
{
	for (uint32_t i = 0; i < h->n; i++) {
		if (d->idom[i] != HEAP_NONE)
			continue;
		d->unreachable++;
		d->unreachable_bytes += h->size[i];
	}
}

/* From preorder numbers back to objects. */
static int answer(struct dom_work *w, struct heap_dominators *d)
{
	const struct heap *h = w->h;

	d->idom = alloc_array(h->n, sizeof(*d->idom));
	d->retained = calloc(h->n ? h->n : 1, sizeof(*d->retained));
	if (!d->idom || !d->retained)
		return -1;
	memset(d->idom, 0xff, (size_t)h->n * sizeof(*d->idom));
	for (uint32_t v = 1; v < w->nr; v++) {
		uint32_t object = w->vertex[v], dom = w->parent[v];

		d->idom[object] = dom ? w->vertex[dom] : HEAP_VIRTUAL_ROOT;
		d->retained[object] = w->retained[v];
	}
	d->reachable = w->nr - 1;
	d->weakly_reachable = w->weakly_reachable;
	unreachable_totals(h, d);
	return 0;
}

int heap_dominators(const struct heap *h, struct heap_dominators *d,
		    struct ht_error *err)
{
	struct dom_work w = {.h = h};
	int rc = -1;

	memset(d, 0, sizeof(*d));
	if (search(&w) == 0 && build_predecessors(&w) == 0 &&
	    dominator_tree(&w) == 0 && retained_sizes(&w) == 0 &&
	    answer(&w, d) == 0)
		rc = 0;
	work_free(&w);
	if (rc < 0) {
		heap_dominators_free(d);
		err_plain(err, HT_E_NOMEM, NULL,
			  "out of memory computing the dominators of %" PRIu32
			  " objects", h->n);
	}
	return rc;
}

void heap_dominators_free(struct heap_dominators *d)
{
	free(d->idom);
	free(d->retained);
	memset(d, 0, sizeof(*d));
}
