/*
 * top.c - the k biggest objects of a dump (top.h). The k best so far are
 * kept in a binary heap whose root is the worst of them, so each further
 * object costs log k and the memory is k indices, whatever the dump.
 */
#include "analysis/top.h"

#include <stdlib.h>
#include <string.h>

/* What the ranking reads: the key of every object, and which count. */
struct ranking {
	const struct heap *h;
	const uint64_t *retained; /* NULL: by self size */
};

static uint64_t key_of(const struct ranking *r, uint32_t i)
{
	return r->retained ? r->retained[i] : heap_size(r->h, i);
}

/* Whether object a is listed before b: larger key first, then lower id
 * (objects are sorted by id, so lower index). */
static bool ranks_before(const struct ranking *r, uint32_t a, uint32_t b)
{
	uint64_t ka = key_of(r, a), kb = key_of(r, b);

	return ka != kb ? ka > kb : a < b;
}

static void sift_down(const struct ranking *r, uint32_t *heap, size_t n,
		      size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, rt = l + 1, worst = i;
		uint32_t tmp;

		if (l < n && ranks_before(r, heap[worst], heap[l]))
			worst = l;
		if (rt < n && ranks_before(r, heap[worst], heap[rt]))
			worst = rt;
		if (worst == i)
			return;
		tmp = heap[i];
		heap[i] = heap[worst];
		heap[worst] = tmp;
		i = worst;
	}
}

static void sift_up(const struct ranking *r, uint32_t *heap, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		uint32_t tmp;

		if (!ranks_before(r, heap[parent], heap[i]))
			return;
		tmp = heap[i];
		heap[i] = heap[parent];
		heap[parent] = tmp;
		i = parent;
	}
}

void top_objects(const struct heap *h, const uint64_t *retained,
		 const bool *in_class, uint32_t *best, size_t k)
{
	const struct ranking r = {.h = h, .retained = retained};
	size_t n = 0;

	if (k == 0)
		return;
	for (uint32_t i = 0; i < h->n; i++) {
		if (in_class && !in_class[heap_class_slot(h, i)])
			continue;
		if (n < k) {
			best[n] = i;
			sift_up(&r, best, n++);
		} else if (ranks_before(&r, i, best[0])) {
			best[0] = i;
			sift_down(&r, best, n, 0);
		}
	}
	/* taking the worst off the heap, one by one, fills it from the back */
	while (n > 1) {
		uint32_t worst = best[0];

		best[0] = best[--n];
		sift_down(&r, best, n, 0);
		best[n] = worst;
	}
}

int top_class_slots(const struct heap *h, const char *name, bool **in_class,
		    uint64_t *n_instances)
{
	bool *slots = calloc(h->n_classes + 1, sizeof(*slots));
	bool any = false;
	uint64_t n = 0;

	if (!slots)
		return -1;
	for (size_t i = 0; i < h->n_classes; i++) {
		const char *c = h->classes[i].name;

		if (c && strcmp(c, name) == 0)
			any = slots[i] = true;
	}
	for (uint32_t i = 0; any && i < h->n; i++)
		n += slots[heap_class_slot(h, i)];
	*in_class = slots;
	*n_instances = n;
	return 0;
}
