/*
 * referrers.c - what holds one object (referrers.h): a pass over every
 * reference, the roots, and the reach levels computed for one answer.
 */
#include "analysis/referrers.h"
#include "analysis/reach.h"

#include "util/alloc.h"
#include "util/membudget.h"

#include <stdlib.h>

int referrers_find(const struct heap *h, uint32_t target, uint64_t max,
		   struct referrer **out, size_t *n_all)
{
	struct referrer *at = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t i = 0; i < h->n; i++) {
		uint64_t start = heap_ref_start(h, i);

		for (uint64_t e = start; e < heap_ref_start(h, i + 1); e++) {
			if (h->ref[e] != target)
				continue;
			if (max == 0 || n < max) {
				if (ALLOC_GROW(at, n + 1, cap) < 0) {
					free(at);
					*out = NULL;
					return -1;
				}
				at[n].object = i;
				at[n].field = (uint32_t)(e - start);
			}
			n++;
		}
	}
	*out = at;
	*n_all = n;
	return 0;
}

size_t referrers_roots(const struct heap *h, uint32_t target)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n_roots; i++)
		n += h->roots[i].object == target;
	return n;
}

int referrers_reach_level(const struct heap *h, uint32_t target, int *level,
			  struct ht_error *err)
{
	uint8_t *levels;
	uint64_t charged = 0;

	*level = HEAP_LEVEL_UNREACHABLE + 1;
	if (!h->n_referents)
		return 0;
	if (heap_reach_levels(h, &levels, &charged, err) < 0)
		return -1;
	*level = levels[target];
	budget_array_free(levels, h->n, 1, &charged);
	return 0;
}
