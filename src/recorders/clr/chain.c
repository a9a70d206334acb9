/*
 * chain.c - where each stack root sits among a snapshot's frames: the
 * roots, in order, are a chain through the frames, in order (a root at a
 * frame of its own method, never before the frame of the root before it:
 * stacks.c says why). The earliest chain and the latest bound every
 * chain, so a root they put at the same frame is there in all of them.
 * A search from the root before's frame for each root is linear in the
 * frames; a dump has some hundreds of each, and it runs once per forced
 * dump, with no allocation, inside the GC.
 */
#include "recorders/clr/chain.h"

/* The first frame at or after from with this method, or -1. */
static int64_t frame_from(const uint64_t *frames, size_t n, uint64_t fid,
			  size_t from)
{
	for (size_t g = from; g < n; g++)
		if (frames[g] == fid)
			return (int64_t)g;
	return -1;
}

/* The last frame at or before to with this method, or -1. */
static int64_t frame_until(const uint64_t *frames, uint64_t fid, int64_t to)
{
	for (int64_t g = to; g >= 0; g--)
		if (frames[g] == fid)
			return g;
	return -1;
}

bool chain_bound(const uint64_t *frames, size_t n_frames,
		 const uint64_t *roots, size_t n_roots, int64_t *lo,
		 int64_t *hi)
{
	int64_t at = 0;

	for (size_t i = 0; i < n_roots; i++) {
		lo[i] = hi[i] = -1;
		/* a root of no frame of the snapshot constrains nothing */
		if (!roots[i] || frame_from(frames, n_frames, roots[i], 0) < 0)
			continue;
		lo[i] = frame_from(frames, n_frames, roots[i], (size_t)at);
		if (lo[i] < 0)
			return false;
		at = lo[i];
	}
	at = (int64_t)n_frames - 1;
	for (size_t i = n_roots; i-- > 0;) {
		if (lo[i] < 0)
			continue;
		hi[i] = frame_until(frames, roots[i], at);
		at = hi[i];
	}
	return true;
}
