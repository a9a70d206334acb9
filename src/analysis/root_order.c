/*
 * root_order.c - the order of a dump's roots that the analyses share
 * (root_order.h).
 */
#include "analysis/root_order.h"

#include "util/alloc.h"

#include <heaptrace/trace.h>

#include <stdlib.h>

enum heap_root_rank heap_root_rank(const struct heap *h,
				   const struct heap_root *r)
{
	if (heap_field_at(h, r->field))
		return HEAP_ROOT_STATIC;
	if (ht_container_is_frame((enum ht_container_type)r->container) ||
	    (!r->container && r->kind == HT_ROOT_STACK))
		return HEAP_ROOT_FRAME;
	return HEAP_ROOT_LASTING;
}

size_t *heap_roots_ranked(const struct heap *h)
{
	size_t *order = alloc_array(h->n_roots ? h->n_roots : 1,
				    sizeof(*order));
	size_t k = 0;

	if (!order)
		return NULL;
	/* three ranks: a pass each keeps the dump's order within one */
	for (int rank = HEAP_ROOT_STATIC; rank <= HEAP_ROOT_FRAME; rank++)
		for (size_t i = 0; i < h->n_roots; i++)
			if ((int)heap_root_rank(h, &h->roots[i]) == rank)
				order[k++] = i;
	return order;
}
