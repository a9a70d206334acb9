/*
 * referrers.h - what holds one object of a dump, as `heaptrace object`
 * shows it: the objects that refer to it, through which field, the roots
 * that hold it directly, and the strongest level that reaches it. The
 * graph stores references forward only, so finding referrers is a pass
 * over every reference; this is that pass, once. Only computes.
 */
#ifndef HT_REFERRERS_H
#define HT_REFERRERS_H

#include "analysis/heap.h"
#include "analysis/levels.h"

#include <stddef.h>
#include <stdint.h>

/* One reference to the target. This struct is not an API; it may change
 * from one release to the next. */
struct referrer {
	uint32_t object; /* the referring object's index */
	uint32_t field;  /* which of its references: from heap_ref_start */
};

/*
 * The referrers of target in h, in id order (each reference once, so an
 * object that refers to it twice is there twice): the first max of them
 * (0: all) into *out, an array the caller frees (NULL when none is kept),
 * and how many there are in all into *n_all. 0, or -1 when out of memory
 * (*out is then NULL).
 */
int referrers_find(const struct heap *h, uint32_t target, uint64_t max,
		   struct referrer **out, size_t *n_all);

/* How many of h's roots hold target directly. */
size_t referrers_roots(const struct heap *h, uint32_t target);

/*
 * The strongest level that reaches target (enum heap_level, or
 * HEAP_LEVEL_UNREACHABLE), where the dump has referents; a dump without
 * them says nothing new: HEAP_LEVEL_UNREACHABLE + 1 then. 0, or -1 with
 * err filled.
 */
int referrers_reach_level(const struct heap *h, uint32_t target, int *level,
			  struct ht_error *err);

#endif
