/*
 * root_order.h - the order in which the analyses look at a dump's roots
 * when several hold what they look for: a root the trace names by a static
 * field first (it says what the program keeps), then the other roots that
 * outlive a call (handles, the finalizer queue, a runtime's tables), the
 * locals of stack frames last (they hold what a call happens to be
 * using). paths breaks ties between paths of one length by it, flame and
 * diff take an object's root by it, object lists the roots in it.
 */
#ifndef HT_ROOT_ORDER_H
#define HT_ROOT_ORDER_H

#include "analysis/heap.h"

#include <stddef.h>

enum heap_root_rank {
	HEAP_ROOT_STATIC = 0, /* named by a static field */
	HEAP_ROOT_LASTING = 1, /* any other root that outlives a call */
	HEAP_ROOT_FRAME = 2,  /* a local of a stack frame */
};

enum heap_root_rank heap_root_rank(const struct heap *h,
				   const struct heap_root *r);

/* The indexes of h->roots in rank order, the dump's order within a rank;
 * malloc'd (free it), NULL when out of memory. */
size_t *heap_roots_ranked(const struct heap *h);

#endif
