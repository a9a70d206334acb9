/*
 * saturating.h - sums of byte counts that a hostile trace cannot wrap.
 *
 * Sizes and block lengths come from the trace as 64-bit numbers; a sum of
 * a few of them can pass 2^64 and wrap to a small, believable figure. A
 * dump's own sizes are refused past 2^63 (heap.c), but the figures of
 * GCs sum sizes and lengths from the whole trace, so they stop at
 * UINT64_MAX instead: an answer that is plainly a ceiling, never a wrong
 * small one (heaptrace-stats(1)).
 */
#ifndef HT_SATURATING_H
#define HT_SATURATING_H

#include <stdint.h>

static inline void add_saturating(uint64_t *sum, uint64_t v)
{
	if (__builtin_add_overflow(*sum, v, sum))
		*sum = UINT64_MAX;
}

#endif
