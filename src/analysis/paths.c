/*
 * paths.c - the shortest chains of references from the roots to an object
 * (paths.h).
 *
 * One breadth-first search goes backwards from the target over reversed
 * edges and leaves at each object it reaches the next hop toward the
 * target and the field that holds it: the distance it records is the
 * length of a shortest path from there. Every root whose object was
 * reached then has its shortest path, read off by following the hops; two
 * roots on one object are two paths. The reversed edges are built per
 * query: a path query is rare, and they would double the graph if kept.
 */
#include "analysis/paths.h"

#include "analysis/heap.h"
#include "analysis/levels.h"
#include "analysis/reach.h"
#include "analysis/root_order.h"

#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/membudget.h"

#include <stdlib.h>
#include <string.h>

/* What the search leaves per object; hop[] is HEAP_NONE where it did not
 * reach. */
struct path_search {
	uint32_t *hop;   /* the next object toward the target */
	uint32_t *field; /* index of the ref to hop[] in the object's refs */
	uint32_t *dist;  /* references from the object to the target */
	uint64_t charged; /* the arrays', to the memory budget */
};

static void search_free(struct path_search *s)
{
	free(s->hop);
	free(s->field);
	free(s->dist);
	mem_budget_release(s->charged);
	s->charged = 0;
}

/* Who refers to each object, in compressed rows: referrers in index order,
 * once per reference followed at the level (null and dangling refs are no
 * edges). */
struct referrers {
	uint64_t *start; /* n + 1 */
	uint32_t *from;
	uint64_t n_from;
};

/* The rows, charged to *charged. */
static int build_referrers(const struct heap *h, enum heap_level level,
			   struct referrers *rv, uint64_t *charged)
{
	uint64_t total = 0;

	rv->start = budget_array((size_t)h->n + 1, sizeof(*rv->start),
				 charged);
	rv->from = NULL;
	if (!rv->start)
		return -1;
	memset(rv->start, 0, ((size_t)h->n + 1) * sizeof(*rv->start));
	for (uint32_t u = 0; u < h->n; u++)
		for (uint64_t e = heap_ref_start(h, u); e < heap_ref_start(h, u + 1); e++)
			if (h->ref[e] < h->n && heap_follows(h, level, u, e))
				rv->start[h->ref[e]]++;
	for (uint32_t v = 0; v <= h->n; v++) {
		uint64_t c = rv->start[v];

		rv->start[v] = total;
		total += c;
	}
	rv->from = budget_array(total, sizeof(*rv->from), charged);
	if (!rv->from)
		return -1;
	rv->n_from = total;
	for (uint32_t u = 0; u < h->n; u++)
		for (uint64_t e = heap_ref_start(h, u); e < heap_ref_start(h, u + 1); e++)
			if (h->ref[e] < h->n && heap_follows(h, level, u, e))
				rv->from[rv->start[h->ref[e]]++] = u;
	memmove(rv->start + 1, rv->start, h->n * sizeof(*rv->start));
	rv->start[0] = 0;
	return 0;
}

/* The first field of u followed at the level that refers to v: with
 * duplicate refs, the path names the first. */
static uint32_t field_to(const struct heap *h, enum heap_level level,
			 uint32_t u, uint32_t v)
{
	uint64_t e = heap_ref_start(h, u);

	while (h->ref[e] != v || !heap_follows(h, level, u, e))
		e++;
	return (uint32_t)(e - heap_ref_start(h, u));
}

static int search_back(const struct heap *h, enum heap_level level,
		       uint32_t target, struct path_search *s)
{
	struct referrers rv = {0};
	uint32_t *queue = budget_array(h->n, sizeof(*queue), &s->charged);
	size_t head = 0, tail = 0;
	int rc = -1;

	s->hop = budget_array(h->n, sizeof(*s->hop), &s->charged);
	s->field = budget_array(h->n, sizeof(*s->field), &s->charged);
	s->dist = budget_array(h->n, sizeof(*s->dist), &s->charged);
	if (!queue || !s->hop || !s->field || !s->dist ||
	    build_referrers(h, level, &rv, &s->charged) < 0)
		goto done;
	memset(s->hop, 0xff, (size_t)h->n * sizeof(*s->hop));
	s->hop[target] = target;
	s->dist[target] = 0;
	queue[tail++] = target;
	while (head < tail) {
		uint32_t v = queue[head++];

		for (uint64_t e = rv.start[v]; e < rv.start[v + 1]; e++) {
			uint32_t u = rv.from[e];

			if (s->hop[u] != HEAP_NONE)
				continue;
			s->hop[u] = v;
			s->field[u] = field_to(h, level, u, v);
			s->dist[u] = s->dist[v] + 1;
			queue[tail++] = u;
		}
	}
	rc = 0;
done:
	budget_array_free(rv.start, (size_t)h->n + 1, sizeof(*rv.start),
			  &s->charged);
	budget_array_free(rv.from, rv.n_from, sizeof(*rv.from), &s->charged);
	budget_array_free(queue, h->n, sizeof(*queue), &s->charged);
	return rc;
}

struct path_end {
	uint32_t dist;
	enum heap_root_rank rank;
	size_t root;
};

static int compare_ends(const void *a, const void *b)
{
	const struct path_end *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->root > y->root) - (x->root < y->root);
}

/* The roots the search reached, shortest first, then by rank (a static
 * before a handle before a local: root_order.h), then by root index. */
static struct path_end *reached_roots(const struct heap *h,
				      const struct path_search *s,
				      enum heap_level level, size_t *n)
{
	struct path_end *ends = alloc_array(h->n_roots, sizeof(*ends));

	*n = 0;
	if (!ends)
		return NULL;
	for (size_t r = 0; r < h->n_roots; r++) {
		uint32_t object = h->roots[r].object;

		if (object >= h->n || s->hop[object] == HEAP_NONE)
			continue;
		if (!heap_root_counts(&h->roots[r], level))
			continue;
		ends[(*n)++] = (struct path_end){
			.dist = s->dist[object],
			.rank = heap_root_rank(h, &h->roots[r]),
			.root = r,
		};
	}
	qsort(ends, *n, sizeof(*ends), compare_ends);
	return ends;
}

static int read_path(const struct heap *h, const struct path_search *s,
		     const struct path_end *end, struct heap_path *path)
{
	uint32_t object = h->roots[end->root].object;

	path->root = end->root;
	path->length = (size_t)end->dist + 1;
	path->objects = alloc_array(path->length, sizeof(*path->objects));
	path->fields = alloc_array(end->dist, sizeof(*path->fields));
	if (!path->objects || !path->fields)
		return -1;
	for (size_t i = 0; i < path->length; i++) {
		path->objects[i] = object;
		if (i + 1 < path->length) {
			path->fields[i] = s->field[object];
			object = s->hop[object];
		}
	}
	return 0;
}

static long no_memory(struct ht_error *err)
{
	if (mem_budget_exceeded())
		err_plain(err, HT_E_NOMEM, NULL, MEM_BUDGET_MESSAGE,
			  mem_budget_limit());
	else
		err_plain(err, HT_E_NOMEM, NULL,
			  "out of memory looking for paths");
	return -1;
}

long heap_paths(const struct heap *h, uint32_t target, size_t max_paths,
		enum heap_level level, struct heap_path **paths,
		struct ht_error *err)
{
	struct path_search s = {0};
	struct path_end *ends;
	size_t n_ends, n;

	*paths = NULL;
	if (target >= h->n) {
		err_plain(err, HT_E_INVALID, NULL, "no object %u in the dump",
			  (unsigned)target);
		return -1;
	}
	if (max_paths == 0)
		return 0;
	if (search_back(h, level, target, &s) < 0) {
		search_free(&s);
		return no_memory(err);
	}
	ends = reached_roots(h, &s, level, &n_ends);
	n = n_ends < max_paths ? n_ends : max_paths;
	*paths = n ? calloc(n, sizeof(**paths)) : NULL;
	if (!ends || (n && !*paths))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (read_path(h, &s, &ends[i], &(*paths)[i]) < 0)
			goto fail;
	free(ends);
	search_free(&s);
	return (long)n;
fail:
	free(ends);
	search_free(&s);
	heap_paths_free(*paths, n);
	*paths = NULL;
	return no_memory(err);
}

void heap_paths_free(struct heap_path *paths, size_t n)
{
	if (!paths)
		return;
	for (size_t i = 0; i < n; i++) {
		free(paths[i].objects);
		free(paths[i].fields);
	}
	free(paths);
}
