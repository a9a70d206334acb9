/*
 * heap_ids.c - objects by id (heap_internal.h): the directory through
 * which a dump's ref ids become the indices of their objects as the
 * graph is built, the ids then kept in halves (heap.id_lo) when their
 * runs are few, and heap_find, which looks an id up in either form.
 */
#include "analysis/heap_internal.h"

#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- Finding objects by id ---------------------------------------------- */

/* A function that only prefetches looks free of effects to GCC, which
 * then drops its calls: the prefetching helpers are inlined into their
 * loops, where the prefetches stay. */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/*
 * The ids are sorted; a directory on the high bits of (id - min) points at
 * the two or so ids that share them, so a lookup reads a directory entry
 * and a cache line of ids instead of the twenty scattered lines a binary
 * search over millions of ids would. Ids bunched in a few buckets (heaps
 * in distant segments) fall back to a binary search inside the bucket.
 */
struct id_directory {
	const ht_id *id;
	uint32_t n;
	ht_id min, max;
	unsigned shift;
	uint32_t *first; /* first[b]: the first index in bucket b or later;
			    first[buckets] = n */
};

static int directory_build(struct id_directory *d, const ht_id *id,
			   uint32_t n)
{
	uint64_t target = n / 2 ? n / 2 : 1, buckets, b = 0;

	memset(d, 0, sizeof(*d));
	d->id = id;
	d->n = n;
	if (n == 0)
		return 0;
	d->min = id[0];
	d->max = id[n - 1];
	while (d->shift < 63 && (d->max - d->min) >> d->shift >= target)
		d->shift++;
	buckets = ((d->max - d->min) >> d->shift) + 1;
	d->first = alloc_array(buckets + 1, sizeof(*d->first));
	if (!d->first)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t bucket = (id[i] - d->min) >> d->shift;

		while (b <= bucket)
			d->first[b++] = i;
	}
	while (b <= buckets)
		d->first[b++] = n;
	return 0;
}

static bool in_directory(const struct id_directory *d, ht_id x)
{
	return d->n && x >= d->min && x <= d->max;
}

static uint32_t directory_find(const struct id_directory *d, ht_id x)
{
	uint64_t bucket;
	uint32_t lo, hi;

	if (!in_directory(d, x))
		return HEAP_NONE;
	bucket = (x - d->min) >> d->shift;
	lo = d->first[bucket];
	hi = d->first[bucket + 1];
	while (hi - lo > 8) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->id[mid] < x)
			lo = mid + 1;
		else
			hi = mid + 1;
	}
	for (; lo < hi && d->id[lo] <= x; lo++)
		if (d->id[lo] == x)
			return lo;
	return HEAP_NONE;
}

/* How far ahead the resolution asks for a ref's directory entry, and, half
 * as far, for the ids it points at: two stages, so that the second finds
 * its input in the cache. Refs to random places would otherwise wait for
 * two cache misses each, one after the other. */
#define AHEAD 64

static ht_id raw_ref(const unsigned char *bytes, size_t i)
{
	ht_id id;

	memcpy(&id, bytes + 8 * i, sizeof(id));
	return id;
}

static ALWAYS_INLINE void prefetch_lookup(const struct id_directory *d,
					  const unsigned char *bytes, size_t i,
					  size_t n)
{
	ht_id x;

	if (i + AHEAD < n) {
		x = raw_ref(bytes, i + AHEAD);
		if (in_directory(d, x))
			__builtin_prefetch(&d->first[(x - d->min) >> d->shift]);
	}
	if (i + AHEAD / 2 < n) {
		x = raw_ref(bytes, i + AHEAD / 2);
		if (in_directory(d, x))
			__builtin_prefetch(
				&d->id[d->first[(x - d->min) >> d->shift]]);
	}
}

/*
 * Ref ids to indices, where they lie: index i is written at byte 4i as id i
 * is read from byte 8i, which no earlier write reached (4i + 4 <= 8i for
 * i >= 1, and i = 0 reads before writing; the look-ahead reads further
 * still). memcpy keeps the compiler from assuming the two views of the
 * buffer are apart. The buffer then shrinks to half.
 */
static uint32_t *resolve_refs_in_place(ht_id *ref, size_t n,
				       const struct id_directory *d)
{
	unsigned char *bytes = (unsigned char *)ref;
	void *resolved = ref;

	for (size_t i = 0; i < n; i++) {
		ht_id id = raw_ref(bytes, i);
		uint32_t index = HEAP_NULL_REF;

		prefetch_lookup(d, bytes, i, n);
		if (id) {
			index = directory_find(d, id);
			if (index == HEAP_NONE)
				index = HEAP_DANGLING_REF;
		}
		memcpy(bytes + 4 * i, &index, sizeof(index));
	}
	/* the ids took 8 bytes each, the indexes 4: give the rest back, or
	 * keep it if that fails */
	(void)resize_array(&resolved, n, sizeof(uint32_t));
	return resolved;
}

static void resolve_roots(struct raw_dump *raw, const struct id_directory *d,
			  struct heap *h)
{
	for (size_t i = 0; i < raw->n_roots; i++) {
		struct heap_root *r = &raw->roots[i];

		r->object = r->ref ? directory_find(d, r->ref) : HEAP_NONE;
		if (r->ref && r->object == HEAP_NONE)
			h->n_dangling_roots++;
	}
	h->n_roots = raw->n_roots;
	h->roots = raw->roots;
	SHRINK_ARRAY(h->roots, h->n_roots);
	raw->roots = NULL;
	raw->n_roots = raw->cap_roots = 0;
	h->n_stack = raw->n_stack;
	h->stack = raw->stack;
	raw->stack = NULL;
	raw->n_stack = raw->cap_stack = 0;
}

/* ---- Ids in halves ------------------------------------------------------ */

/* How many runs of one high half the ids may have and still be kept in
 * halves: a run costs 8 bytes, and finding one a step or two. */
static bool runs_are_few(uint32_t runs, uint32_t n)
{
	return runs <= n / 8 + 1;
}

static uint32_t count_id_runs(const struct heap *h)
{
	uint32_t runs = h->n ? 1 : 0;

	for (uint32_t i = 1; i < h->n; i++)
		runs += h->id[i] >> 32 != h->id[i - 1] >> 32;
	return runs;
}

static int list_id_runs(struct heap *h, uint32_t runs)
{
	uint32_t blocks = (h->n >> HEAP_ID_BLOCK_BITS) + 2, r = 0;

	h->id_runs = alloc_array(runs, sizeof(*h->id_runs));
	h->id_run_at = alloc_array(blocks, sizeof(*h->id_run_at));
	if (!h->id_runs || !h->id_run_at)
		return -1;
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t high = (uint32_t)(h->id[i] >> 32);

		if (i == 0 || high != h->id_runs[r - 1].high)
			h->id_runs[r++] = (struct heap_id_run){.first = i,
							       .high = high};
		if (i % (1u << HEAP_ID_BLOCK_BITS) == 0)
			h->id_run_at[i >> HEAP_ID_BLOCK_BITS] = r - 1;
	}
	for (uint32_t b = ((h->n + (1u << HEAP_ID_BLOCK_BITS) - 1) >>
			   HEAP_ID_BLOCK_BITS); b < blocks; b++)
		h->id_run_at[b] = runs ? runs - 1 : 0;
	h->n_id_runs = runs;
	return 0;
}

/* The ids in halves (heap.id_lo), once the directory that resolves refs
 * is done with them whole, when their runs are few. */
static int compress_ids(struct heap *h)
{
	uint32_t runs = count_id_runs(h);

	if (h->n == 0 || !runs_are_few(runs, h->n))
		return 0;
	if (list_id_runs(h, runs) < 0)
		return -1;
	h->id_lo = heap_narrow_in_place(h->id, h->n);
	h->id = NULL;
	return 0;
}

/* ---- Resolving ---------------------------------------------------------- */

/* Turns the raw refs and roots into indices; the refs end in h->ref. */
int heap_resolve(struct raw_dump *raw, struct kept_parts *k, struct heap *h)
{
	struct id_directory d;
	uint32_t *resolved;

	if (directory_build(&d, h->id, h->n) < 0)
		return -1;
	resolved = resolve_refs_in_place(raw->ref, raw->n_refs, &d);
	raw->ref = NULL;
	raw->n_refs = raw->cap_refs = 0;
	resolve_roots(raw, &d, h);
	free(d.first);
	if (compress_ids(h) < 0) {
		free(resolved);
		return -1;
	}
	if (!k->order) {
		h->ref = resolved;
		return 0;
	}
	h->ref = heap_gather_refs(raw, k, resolved, heap_ref_start(h, h->n));
	free(resolved);
	return h->ref ? 0 : -1;
}

/* ---- Lookups ------------------------------------------------------------ */

uint32_t heap_id_run_of(const struct heap *h, uint32_t object)
{
	uint32_t b = object >> HEAP_ID_BLOCK_BITS;
	uint32_t lo = h->id_run_at[b], hi = h->id_run_at[b + 1] + 1;

	/* the last run that begins at object or before */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->id_runs[mid].first <= object)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* In halves: the run of the id's high half, then its low half among the
 * run's. */
static uint32_t find_in_halves(const struct heap *h, ht_id id)
{
	uint32_t high = (uint32_t)(id >> 32), low = (uint32_t)id;
	uint32_t lo = 0, hi = h->n_id_runs, end;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->id_runs[mid].high < high)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->n_id_runs || h->id_runs[lo].high != high)
		return HEAP_NONE;
	end = lo + 1 < h->n_id_runs ? h->id_runs[lo + 1].first : h->n;
	lo = h->id_runs[lo].first;
	hi = end;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->id_lo[mid] < low)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < end && h->id_lo[lo] == low ? lo : HEAP_NONE;
}

uint32_t heap_find(const struct heap *h, ht_id id)
{
	uint32_t lo = 0, hi = h->n;

	if (h->id_lo)
		return find_in_halves(h, id);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->id[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->n && h->id[lo] == id ? lo : HEAP_NONE;
}
