/*
 * reach.h - what reaches what at a reachability level (levels.h) on a
 * dump's graph (heap.h): the references held less than strongly (a
 * Reference's referent, indexed once per graph: see heap.referent_edge),
 * whether an analysis at a level follows an edge or starts at a root,
 * and the strongest level at which each object is reachable.
 */
#ifndef HT_REACH_H
#define HT_REACH_H

#include "analysis/heap.h"
#include "analysis/levels.h"

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stdint.h>

/* Whether the dump has references weaker than strong, or weak roots: only
 * then can levels differ. */
bool heap_has_levels(const struct heap *h);

/* The level of reference e of object (an index into h->ref in its range):
 * HEAP_LEVEL_STRONG unless it is a referent. */
enum heap_level heap_ref_level(const struct heap *h, uint32_t object,
			       uint64_t e);

/* Whether an analysis at `level` follows reference e of object: cheap for
 * the objects that are no Reference (a bit), a search for the others. */
static inline bool heap_follows(const struct heap *h, enum heap_level level,
				uint32_t object, uint64_t e)
{
	if (!h->has_referent || level >= HEAP_LEVEL_PHANTOM ||
	    !(h->has_referent[object / 64] >> (object % 64) & 1))
		return true;
	return heap_ref_level(h, object, e) <= level;
}

/* Whether a root is a starting point at `level`: a weak root from
 * HEAP_LEVEL_WEAK on. */
static inline bool heap_root_counts(const struct heap_root *r,
				    enum heap_level level)
{
	return !heap_root_is_weak(r) || level >= HEAP_LEVEL_WEAK;
}

/*
 * The strongest level at which each object is reachable (one byte an
 * object, enum heap_level, HEAP_LEVEL_UNREACHABLE when none is), in one
 * pass over the graph a level at a time. 0, or -1 with err filled (out of
 * memory). The bytes are charged to *charged: free them with
 * budget_array_free(levels, h->n, 1, charged).
 */
int heap_reach_levels(const struct heap *h, uint8_t **levels,
		      uint64_t *charged, struct ht_error *err);

/* Fills the referent index of a graph whose fields are laid out
 * (heap_scan does it). 0, or -1 when out of memory. */
int heap_index_referents(struct heap *h);

#endif
