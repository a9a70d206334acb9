/*
 * chain.h - where the stack roots of a CLR dump sit among the frames of a
 * snapshot of the stacks (chain.c; stacks.c says why), built without the
 * runtime for the tests.
 */
#ifndef HT_RECORDERS_CLR_CHAIN_H
#define HT_RECORDERS_CLR_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* frames: the FunctionIDs of every thread's frames, one thread after
 * another in the scan's order, each from the top; roots: the stack roots'
 * FunctionIDs in the order the GC reported them. Sets lo[i] and hi[i] to
 * the frame root i sits at in the earliest and in the latest chain (-1
 * for a root whose method no frame has, or that has none), and returns
 * false when no chain exists. Root i is certain of its frame when lo[i]
 * is hi[i] and not -1 (chain_certain). No allocation: it runs in a GC. */
bool chain_bound(const uint64_t *frames, size_t n_frames,
		 const uint64_t *roots, size_t n_roots, int64_t *lo,
		 int64_t *hi);

static inline bool chain_certain(const int64_t *lo, const int64_t *hi,
				 size_t i)
{
	return lo[i] >= 0 && lo[i] == hi[i];
}

#endif
