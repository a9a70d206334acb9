/*
 * search.h - the one binary search of heaptrace: the lower bound over
 * sorted rows, written once so that no copy of it gets the midpoint's
 * overflow or an off-by-one at the ends wrong.
 *
 * A macro, not a function taking a comparison callback: the searches run
 * in hot loops (an id looked up per reference of a heap), where an
 * indirect call per step costs more than the search itself, and the rows
 * are of every shape (parallel arrays, structs, ranges), which a
 * bsearch-like (base, size, compare) interface could not read without a
 * key struct made for each. Header-only, like alloc.h.
 */
#ifndef HT_UTIL_SEARCH_H
#define HT_UTIL_SEARCH_H

#include <stddef.h>

/*
 * LOWER_BOUND(lo, hi, i, before): the first index i in [lo, hi) for which
 * the expression `before` (of i) is false, hi when it is true for all;
 * `before` must be true on a prefix of the range and false after it (the
 * rows are sorted by what it tests). `i` names the probed index, a size_t,
 * in `before`; the bounds are evaluated once. "The first row at or after
 * key" is LOWER_BOUND(0, n, i, row[i] < key); "the last row at or before
 * key" is the one before LOWER_BOUND(0, n, i, row[i] <= key).
 */
#define LOWER_BOUND(lo, hi, i, before)                                    \
	__extension__({                                                   \
		size_t lb_lo_ = (lo), lb_hi_ = (hi);                      \
		while (lb_lo_ < lb_hi_) {                                 \
			size_t i = lb_lo_ + (lb_hi_ - lb_lo_) / 2;        \
			if (before)                                       \
				lb_lo_ = i + 1;                           \
			else                                              \
				lb_hi_ = i;                               \
		}                                                         \
		lb_lo_;                                                   \
	})

#endif
