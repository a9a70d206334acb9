/*
 * heap_build.c - the graph of a dump from its raw form (heap_internal.h):
 * the parts put in id order (usually they already are), the parts of one
 * object joined, objects reported twice dropped, the per-object columns
 * gathered in their narrow forms, then the refs resolved (heap_ids.c),
 * the values (heap_values.c) and the fields (heap_fields.c) taken. The
 * steps are ordered so that no large array exists twice at once:
 * build_graph tells the order.
 */
#include "analysis/heap_internal.h"

#include "analysis/reach.h"

#include "util/alloc.h"
#include "util/search.h"

#include <stdlib.h>
#include <string.h>

/* ---- Object order ------------------------------------------------------- */

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)
#define RADIX_MAX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)

/* The bits in which ids differ: key = (id - min) >> shift spans `width`
 * bits. Aligned ids share their low bits, and ids of one heap their high
 * ones: a sort only needs the rest. */
struct key_bits {
	ht_id min;
	unsigned shift, width;
};

static struct key_bits key_bits_of(const ht_id *id, size_t n)
{
	struct key_bits k = {.min = n ? id[0] : 0};
	uint64_t spread = 0;

	for (size_t i = 1; i < n; i++)
		if (id[i] < k.min)
			k.min = id[i];
	for (size_t i = 0; i < n; i++)
		spread |= id[i] - k.min;
	if (spread) {
		k.shift = (unsigned)__builtin_ctzll(spread);
		k.width = 64 - (unsigned)__builtin_clzll(spread) - k.shift;
	}
	return k;
}

static unsigned digit_of(const ht_id *id, uint32_t p, const struct key_bits *k,
			 unsigned pass)
{
	return (unsigned)((id[p] - k->min) >> k->shift >>
			  (pass * RADIX_BITS)) & (RADIX_SIZE - 1);
}

/* One stable counting pass: src (NULL: 0, 1, 2 ...) to dst by one digit. */
static void radix_pass(const ht_id *id, size_t n, const struct key_bits *k,
		       unsigned pass, uint32_t *count, const uint32_t *src,
		       uint32_t *dst)
{
	uint32_t at = 0;

	for (unsigned d = 0; d < RADIX_SIZE; d++) {
		uint32_t c = count[d];

		count[d] = at;
		at += c;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t p = src ? src[i] : (uint32_t)i;

		dst[count[digit_of(id, p, k, pass)]++] = p;
	}
}

/*
 * The part numbers in id order, arrival order among parts of one id (the
 * continuations of an object stay after its first part): a least
 * significant digit radix sort of an index permutation, 4 bytes a part and
 * as many for the scratch, with the digit counts of every pass taken in
 * one sequential pass and digits that every id shares skipped.
 */
static uint32_t *sort_parts(const ht_id *id, size_t n)
{
	struct key_bits k = key_bits_of(id, n);
	unsigned passes = (k.width + RADIX_BITS - 1) / RADIX_BITS;
	uint32_t *count = calloc(RADIX_MAX_PASSES * RADIX_SIZE, sizeof(*count));
	uint32_t *order = alloc_array(n, sizeof(*order));
	uint32_t *scratch = alloc_array(n, sizeof(*scratch));
	bool sorted_any = false;

	if (!count || !order || !scratch) {
		free(count);
		free(order);
		free(scratch);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned pass = 0; pass < passes; pass++)
			count[pass * RADIX_SIZE +
			      digit_of(id, (uint32_t)i, &k, pass)]++;
	for (unsigned pass = 0; pass < passes; pass++) {
		uint32_t *c = count + pass * RADIX_SIZE;
		uint32_t *tmp;

		if (c[digit_of(id, 0, &k, pass)] == n)
			continue;
		radix_pass(id, n, &k, pass, c, sorted_any ? order : NULL,
			   scratch);
		tmp = order;
		order = scratch;
		scratch = tmp;
		sorted_any = true;
	}
	if (!sorted_any)
		for (size_t i = 0; i < n; i++)
			order[i] = (uint32_t)i;
	free(scratch);
	free(count);
	return order;
}

/* Whether the parts are one per object and in id order already, as heap
 * walks in address order give them. */
static bool parts_in_order(const struct raw_dump *raw)
{
	for (size_t p = 0; p < (raw->n_parts + 63) / 64; p++)
		if (raw->continued[p])
			return false;
	for (size_t p = 1; p < raw->n_parts; p++)
		if (raw->id[p] <= raw->id[p - 1])
			return false;
	return true;
}

/* ---- Building the graph ------------------------------------------------- */

static uint32_t class_index(const struct dump_meta *m, uint32_t entry)
{
	return entry == NO_ENTRY ? HEAP_NO_CLASS : m->class_of_entry[entry];
}

/* The ref count of each object must fit the 32-bit cursors of the graph
 * walks. */
static bool degrees_fit(const struct heap *h)
{
	for (uint32_t i = 0; i < h->n; i++)
		if (heap_ref_start(h, i + 1) - heap_ref_start(h, i) > UINT32_MAX)
			return false;
	return true;
}

/*
 * Offsets that all fit 4 bytes to 4 bytes, where they lie: entry i is
 * written at byte 4i as entry i is read from byte 8i, which no earlier
 * write reached (as in resolve_refs_in_place). The array then shrinks to
 * half, or stays whole if that fails.
 */
uint32_t *heap_narrow_in_place(uint64_t *wide, size_t n)
{
	unsigned char *bytes = (unsigned char *)wide;
	void *narrow = wide;

	for (size_t i = 0; i < n; i++) {
		uint64_t x;
		uint32_t y;

		memcpy(&x, bytes + 8 * i, sizeof(x));
		y = (uint32_t)x;
		memcpy(bytes + 4 * i, &y, sizeof(y));
	}
	(void)resize_array(&narrow, n, sizeof(uint32_t));
	return narrow;
}

static void narrow_ref_starts(struct heap *h)
{
	if (h->ref_start[h->n] >= UINT32_MAX)
		return;
	h->ref_start32 = heap_narrow_in_place(h->ref_start, (size_t)h->n + 1);
	h->ref_start = NULL;
}

/* The parts' ref ends to 4 bytes when they fit, before parts out of
 * order are sorted: the sort, with the raw dump whole, is the build's
 * peak. */
static void narrow_ref_ends(struct raw_dump *raw)
{
	if (raw->n_parts == 0 || raw->n_refs >= UINT32_MAX)
		return;
	raw->ref_end32 = heap_narrow_in_place(raw->ref_end, raw->n_parts);
	raw->ref_end = NULL;
}

/*
 * Parts already one per object in id order: the raw arrays become the
 * graph's, the classes renumbered in place and ref_end shifted into
 * ref_start.
 */
static int take_parts_in_order(struct raw_dump *raw,
			       const struct dump_meta *m, struct heap *h)
{
	uint32_t n = (uint32_t)raw->n_parts;

	for (uint32_t i = 0; i < n; i++)
		raw->cls[i] = class_index(m, raw->cls[i]);
	if (RESIZE_ARRAY(raw->ref_end, (size_t)n + 1) < 0)
		return -1;
	memmove(raw->ref_end + 1, raw->ref_end, n * sizeof(*raw->ref_end));
	raw->ref_end[0] = 0;
	h->n = n;
	h->id = raw->id;
	h->cls = raw->cls;
	h->size = raw->size;
	h->big = raw->big;
	h->n_big = (uint32_t)raw->n_big;
	h->generation = raw->gen;
	h->ref_start = raw->ref_end;
	raw->id = NULL;
	raw->cls = NULL;
	raw->size = NULL;
	raw->big = NULL;
	raw->n_big = raw->cap_big = 0;
	raw->gen = NULL;
	raw->ref_end = NULL;
	SHRINK_ARRAY(h->id, n);
	SHRINK_ARRAY(h->cls, n);
	SHRINK_ARRAY(h->size, n);
	if (h->generation)
		SHRINK_ARRAY(h->generation, n);
	return 0;
}

static int keep_first_reports(const struct raw_dump *raw,
			      struct kept_parts *k, uint64_t *duplicates)
{
	bool dropping = false;
	size_t kept = 0;

	k->first = calloc((raw->n_parts + 63) / 64 + 1, sizeof(*k->first));
	if (!k->first)
		return -1;
	for (size_t i = 0; i < raw->n_parts; i++) {
		uint32_t p = k->order[i];

		if (kept == 0 || raw->id[p] != raw->id[k->order[kept - 1]]) {
			k->first[kept / 64] |= 1ULL << (kept % 64);
			k->objects++;
			dropping = false;
		} else if (dropping || !part_continues(raw, p)) {
			if (!dropping)
				(*duplicates)++;
			dropping = true;
			continue;
		}
		k->order[kept++] = p;
	}
	k->n = kept;
	return 0;
}

/* The per-object arrays take each object's first part; the raw per-part
 * array goes as soon as its per-object one is made. */
static int gather_ids(struct raw_dump *raw, const struct kept_parts *k,
		      struct heap *h)
{
	uint32_t j = 0;

	h->id = alloc_array(k->objects, sizeof(*h->id));
	if (!h->id)
		return -1;
	for (size_t i = 0; i < k->n; i++)
		if (begins_object(k, i))
			h->id[j++] = raw->id[k->order[i]];
	free(raw->id);
	raw->id = NULL;
	return 0;
}

static int gather_classes(struct raw_dump *raw, const struct kept_parts *k,
			  const struct dump_meta *m, struct heap *h)
{
	uint32_t j = 0;

	h->cls = alloc_array(k->objects, sizeof(*h->cls));
	if (!h->cls)
		return -1;
	for (size_t i = 0; i < k->n; i++)
		if (begins_object(k, i))
			h->cls[j++] = class_index(m, raw->cls[k->order[i]]);
	free(raw->cls);
	raw->cls = NULL;
	return 0;
}

/* Where `at` is, or would go, in a list of big sizes by position (object
 * or part). */
size_t heap_big_size_slot(const struct heap_big_size *big, size_t n,
			    uint32_t at)
{
	return LOWER_BOUND(0, n, mid, big[mid].object < at);
}

/* The big size of part p, which raw->big has (it holds the parts that
 * begin an object with HEAP_BIG_SIZE in raw->size, in part order). */
static uint64_t raw_big_size(const struct raw_dump *raw, uint32_t p)
{
	return raw->big[heap_big_size_slot(raw->big, raw->n_big, p)].size;
}

/* Sizes by object; the big ones listed again by object, which is id
 * order, not arrival order. */
static int gather_sizes(struct raw_dump *raw, const struct kept_parts *k,
			struct heap *h)
{
	uint32_t j = 0, b = 0;

	h->size = alloc_array(k->objects, sizeof(*h->size));
	if (!h->size)
		return -1;
	if (raw->n_big) {
		h->big = alloc_array(raw->n_big, sizeof(*h->big));
		if (!h->big)
			return -1;
	}
	for (size_t i = 0; i < k->n; i++) {
		uint32_t p = k->order[i];

		if (!begins_object(k, i))
			continue;
		if (raw->size[p] == HEAP_BIG_SIZE)
			h->big[b++] = (struct heap_big_size){
				.object = j, .size = raw_big_size(raw, p)};
		h->size[j++] = raw->size[p];
	}
	h->n_big = b;
	free(raw->size);
	raw->size = NULL;
	free(raw->big);
	raw->big = NULL;
	raw->n_big = raw->cap_big = 0;
	return 0;
}

/* An object's generation is the first its parts give. */
static int gather_generations(struct raw_dump *raw, const struct kept_parts *k,
			      struct heap *h)
{
	int64_t j = -1;

	if (!raw->gen)
		return 0;
	h->generation = alloc_array(k->objects, 1);
	if (!h->generation)
		return -1;
	memset(h->generation, HEAP_NO_GENERATION, k->objects);
	for (size_t i = 0; i < k->n; i++) {
		uint8_t g = raw->gen[k->order[i]];

		if (begins_object(k, i))
			j++;
		if (h->generation[j] == HEAP_NO_GENERATION)
			h->generation[j] = g;
	}
	free(raw->gen);
	raw->gen = NULL;
	return 0;
}

static int gather_ref_starts(const struct raw_dump *raw,
			     const struct kept_parts *k, struct heap *h)
{
	uint64_t total = 0;
	uint32_t j = 0;

	h->ref_start = alloc_array((size_t)k->objects + 1,
				   sizeof(*h->ref_start));
	if (!h->ref_start)
		return -1;
	for (size_t i = 0; i < k->n; i++) {
		uint32_t p = k->order[i];

		if (begins_object(k, i))
			h->ref_start[j++] = total;
		total += part_end(raw, p) - part_begin(raw, p);
	}
	h->ref_start[k->objects] = total;
	return 0;
}

/* The resolved refs of the kept parts, object after object. */
uint32_t *heap_gather_refs(const struct raw_dump *raw,
			     const struct kept_parts *k,
			     const uint32_t *resolved, uint64_t total)
{
	uint32_t *ref = alloc_array(total, sizeof(*ref));
	uint64_t at = 0;

	if (!ref)
		return NULL;
	for (size_t i = 0; i < k->n; i++) {
		uint32_t p = k->order[i];
		uint64_t begin = part_begin(raw, p);
		uint64_t count = part_end(raw, p) - begin;

		memcpy(ref + at, resolved + begin, count * sizeof(*ref));
		at += count;
	}
	return ref;
}

static void count_totals(struct heap *h)
{
	uint64_t refs = h->n ? heap_ref_start(h, h->n) : 0;
	uint64_t bytes = 0, references = 0, dangling = 0;

	for (uint32_t i = 0; i < h->n; i++)
		bytes += heap_size(h, i);
	for (uint64_t e = 0; e < refs; e++) {
		references += h->ref[e] != HEAP_NULL_REF;
		dangling += h->ref[e] == HEAP_DANGLING_REF;
	}
	h->total_bytes = bytes;
	h->n_references = references;
	h->n_dangling = dangling;
}

/* Objects from parts out of order or in several pieces: sort, join,
 * deduplicate. Memory peaks in the sort, at about 59 bytes an object of
 * three refs: the raw dump's 51 and the order with its scratch. */
static int join_parts(struct raw_dump *raw, const struct dump_meta *m,
		      struct heap *h, struct kept_parts *k)
{
	narrow_ref_ends(raw);
	k->order = sort_parts(raw->id, raw->n_parts);
	if (!k->order || keep_first_reports(raw, k, &h->n_duplicates) < 0)
		return -1;
	if (gather_ids(raw, k, h) < 0 || gather_classes(raw, k, m, h) < 0 ||
	    gather_sizes(raw, k, h) < 0 || gather_generations(raw, k, h) < 0 ||
	    gather_ref_starts(raw, k, h) < 0)
		return -1;
	h->n = k->objects;
	return 0;
}

static void heap_take_meta(struct heap *h, struct dump_meta *m)
{
	h->dump = m->dump;
	h->gc_dump = m->gc_dump;
	h->gc = m->gc;
	h->aborted = m->aborted;
	h->complete = m->complete;
	h->n_classes = m->n_classes;
	h->classes = m->classes;
	h->n_threads = m->n_threads;
	h->threads = m->threads;
	h->n_methods = m->n_methods;
	h->methods = m->methods;
	h->n_fields = m->n_fields;
	h->fields = m->fields;
	m->fields = NULL;
	h->n_bounds = m->n_bounds;
	h->bounds = m->bounds;
	m->classes = NULL;
	m->threads = m->methods = NULL;
	m->bounds = NULL;
}

/*
 * The graph of the collected dump, consuming raw and m: 0 and *out, or
 * BUILD_NOMEM or BUILD_LIMIT. The order of steps keeps memory low: every
 * per-object array is gathered and its raw form freed at once; ref ids are
 * resolved where they lie, and only then copied into object order (parts
 * out of order) or left where they are.
 */
int heap_build_graph(struct raw_dump *raw, struct dump_meta *m,
		       struct heap **out)
{
	struct heap *h = calloc(1, sizeof(*h));
	struct kept_parts k = {0};
	uint32_t *field = NULL;
	int rc = BUILD_NOMEM;

	if (!h)
		goto done;
	if (parts_in_order(raw))
		rc = take_parts_in_order(raw, m, h);
	else
		rc = join_parts(raw, m, h, &k);
	if (rc == 0 && !degrees_fit(h))
		rc = BUILD_LIMIT;
	if (rc == 0)
		narrow_ref_starts(h);
	if (rc == 0)
		rc = heap_resolve(raw, &k, h);
	if (rc == 0)
		rc = heap_gather_values(raw, &k, h);
	if (rc == 0 && k.order)
		rc = heap_gather_ref_fields(raw, &k, h, &field);
	else if (rc == 0 && raw->ref_field)
		field = heap_take_ref_fields(raw);
	/* the names first: the layouts are per class slot */
	heap_take_meta(h, m);
	if (rc == 0)
		rc = heap_compact_ref_fields(h, field);
	if (rc == 0 && heap_index_referents(h) < 0)
		rc = BUILD_NOMEM;
	free(k.order);
	free(k.first);
done:
	heap_meta_free(m);
	heap_raw_free(raw);
	if (rc < 0) {
		heap_free(h);
		return rc;
	}
	count_totals(h);
	*out = h;
	return 0;
}

/* ---- The graph's columns ------------------------------------------------ */

void heap_free(struct heap *h)
{
	if (!h)
		return;
	free(h->classes);
	free(h->threads);
	free(h->methods);
	free(h->fields);
	free(h->field_follows);
	free(h->layout_start);
	free(h->layout);
	free(h->odd);
	free(h->odd_start);
	free(h->odd_field);
	free(h->has_referent);
	free(h->referent_edge);
	free(h->referent_level);
	free(h->has_values);
	free(h->values_rank);
	free(h->values_at);
	free(h->value_bytes);
	free(h->id);
	free(h->id_lo);
	free(h->id_runs);
	free(h->id_run_at);
	free(h->cls);
	free(h->size);
	free(h->big);
	free(h->generation);
	free(h->ref_start);
	free(h->ref_start32);
	free(h->ref);
	free(h->roots);
	free(h->stack);
	free(h->bounds);
	free(h);
}

uint64_t heap_big_size(const struct heap *h, uint32_t object)
{
	size_t at = heap_big_size_slot(h->big, h->n_big, object);

	return at < h->n_big && h->big[at].object == object ?
	       h->big[at].size : HEAP_BIG_SIZE;
}

unsigned heap_generation(const struct heap *h, uint32_t object)
{
	ht_id id = heap_id(h, object);

	if (h->generation && h->generation[object] != HEAP_NO_GENERATION)
		return h->generation[object];
	for (size_t i = 0; i < h->n_bounds; i++)
		if (id >= h->bounds[i].start &&
		    id - h->bounds[i].start < h->bounds[i].length)
			return h->bounds[i].generation;
	return HEAP_NO_GENERATION;
}
