/*
 * heap_values.c - objects' values in a dump's graph (heap.h; the records
 * are analysis/values.h's): each object's record, the first its parts
 * give, found through a bit and a rank per object and an offset per
 * object that has one.
 */
#include "analysis/heap_internal.h"

#include "util/alloc.h"

#include <stdlib.h>

/* Each object's record (the first its parts give), found through a bit
 * and a rank per object and an offset per object that has one; the
 * arena's records become the graph's, its index goes. */
int heap_gather_values(struct raw_dump *raw, const struct kept_parts *k,
			 struct heap *h)
{
	size_t words = ((size_t)h->n + 63) / 64;
	uint32_t *at = raw->val, n_valued = 0;

	if (!raw->val)
		return 0;
	value_arena_end(&raw->values);
	if (k->order) {
		int64_t j = -1;

		at = calloc(h->n ? h->n : 1, sizeof(*at));
		if (!at)
			return -1;
		for (size_t i = 0; i < k->n; i++) {
			uint32_t v = raw->val[k->order[i]];

			if (begins_object(k, i))
				j++;
			if (!at[j])
				at[j] = v;
		}
	}
	h->has_values = calloc(words + 1, sizeof(*h->has_values));
	h->values_rank = calloc(words + 1, sizeof(*h->values_rank));
	if (!h->has_values || !h->values_rank)
		goto nomem;
	for (uint32_t i = 0; i < h->n; i++) {
		if (i % 64 == 0)
			h->values_rank[i / 64] = n_valued;
		if (at[i]) {
			h->has_values[i / 64] |= 1ULL << (i % 64);
			n_valued++;
		}
	}
	h->values_at = alloc_array(n_valued ? n_valued : 1,
				   sizeof(*h->values_at));
	if (!h->values_at)
		goto nomem;
	for (uint32_t i = 0, j = 0; i < h->n; i++)
		if (at[i])
			h->values_at[j++] = at[i] - 1;
	h->value_bytes = raw->values.bytes;
	h->n_value_bytes = raw->values.len;
	raw->values.bytes = NULL;
	if (at != raw->val)
		free(at);
	return 0;
nomem:
	if (at != raw->val)
		free(at);
	return -1;
}

bool heap_object_values(const struct heap *h, uint32_t object,
			struct value_record *r)
{
	uint64_t word, below;

	if (!h->has_values || object >= h->n)
		return false;
	word = h->has_values[object / 64];
	if (!(word >> (object % 64) & 1))
		return false;
	below = word & ((UINT64_C(1) << (object % 64)) - 1);
	value_record_open(h->value_bytes,
			  h->values_at[h->values_rank[object / 64] +
				       (uint32_t)__builtin_popcountll(below)],
			  r);
	return true;
}
