/*
 * heap.c - the heap graph of a dump, built from a replay (heap.h), and the
 * lookups on it.
 *
 * A scan collects the selected dump raw, as its events come: one "part" per
 * object_references event (an object continued with HT_OBJ_MORE_REFERENCES
 * has several), the ref ids as reported, and the roots. When the dump is
 * built, the parts are put in id order (usually they already are), the
 * parts of one object are joined, objects reported twice are dropped, and
 * every ref id becomes the index of its object, written over the array that
 * held the ids. The steps are ordered so that no large array exists twice
 * at once: build_graph tells the order.
 *
 * Names (classes, threads, methods) and generation bounds are tracked over
 * the whole trace; a dump takes a snapshot of them when it ends.
 */
#include "analysis/heap.h"
#include "analysis/values.h"

#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/idmap.h"
#include "util/membudget.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Arrays ------------------------------------------------------------- */

/*
 * Arrays grow with util/alloc.h. Large ones are mmapped by malloc, so
 * growing one remaps pages instead of copying them, and pages never
 * written cost no memory: a doubled capacity is free until it is used.
 */

/* ---- Names -------------------------------------------------------------- */

/* All names live in one growing arena and are named by offset, so that no
 * pointer breaks when it grows. A rename appends and leaves the old name
 * unused: renames are rare. */
struct arena {
	char *buf;
	size_t len, cap;
};

/* The name's offset + 1, 0 for no name; UINT64_MAX when out of memory. */
static uint64_t arena_add(struct arena *a, const char *name)
{
	size_t n, at;

	if (!name)
		return 0;
	n = strlen(name) + 1;
	if (ALLOC_GROW(a->buf, a->len + n, a->cap) < 0)
		return UINT64_MAX;
	at = a->len;
	memcpy(a->buf + at, name, n);
	a->len += n;
	return (uint64_t)at + 1;
}

static const char *arena_name(const struct arena *a, uint64_t name)
{
	return name ? a->buf + name - 1 : NULL;
}

/*
 * Everything the trace named so far of one kind, in first-seen order.
 * Class entries also come into being when an object uses an unnamed
 * class, so that raw objects can name their class by a 4-byte entry.
 */
struct name_entry {
	ht_id id;
	uint64_t name;   /* arena offset + 1; 0 when never named */
	bool declared;   /* a class/thread/method event was seen */
	bool has_size;
	uint64_t size;
	int64_t used_in; /* the last dump with an object of this class */
	ht_id owner;     /* a field's declaring class */
	uint8_t kind;    /* a field's enum ht_field_kind */
	uint8_t type;    /* a field's enum ht_value_type, 0 a reference */
};

struct registry {
	struct idmap map; /* id -> index in e */
	struct name_entry *e;
	size_t n, cap;
};

#define NO_ENTRY UINT32_MAX

/* The entry of id, created when absent; NO_ENTRY when out of memory. */
static uint32_t registry_entry(struct registry *reg, ht_id id)
{
	uint32_t entry;

	if (idmap_get(&reg->map, id, &entry))
		return entry;
	if (reg->n >= UINT32_MAX - 1)
		return NO_ENTRY;
	if (ALLOC_GROW(reg->e, reg->n + 1, reg->cap) < 0 ||
	    idmap_put(&reg->map, id, (uint32_t)reg->n) < 0)
		return NO_ENTRY;
	reg->e[reg->n] = (struct name_entry){.id = id, .used_in = -1};
	return (uint32_t)reg->n++;
}

static void registry_free(struct registry *reg)
{
	idmap_free(&reg->map);
	free(reg->e);
}

/* ---- What a dump takes from the trace when it ends ---------------------- */

/* Names as known at the dump's end, the bounds then in effect, and what
 * the dump was; handed over to its graph when built. */
struct dump_meta {
	uint64_t dump;
	bool gc_dump;
	int64_t gc;
	bool aborted, complete;
	size_t n_classes, n_threads, n_methods;
	struct heap_class *classes;
	struct heap_name *threads, *methods;
	size_t n_fields;
	struct heap_field *fields;
	uint32_t *class_of_entry; /* class registry entry -> index in classes */
	size_t n_bounds;
	struct ht_generation_range *bounds;
};

static void meta_free(struct dump_meta *m)
{
	free(m->classes);
	free(m->threads);
	free(m->methods);
	free(m->fields);
	free(m->class_of_entry);
	free(m->bounds);
	memset(m, 0, sizeof(*m));
}

struct picked {
	ht_id id;
	uint32_t entry;
};

static int compare_picked(const void *a, const void *b)
{
	ht_id x = ((const struct picked *)a)->id;
	ht_id y = ((const struct picked *)b)->id;

	return (x > y) - (x < y);
}

/* The entries to snapshot for dump (all declared ones, and for classes
 * those its objects use), sorted by id; *names_bytes the room their names
 * take. */
static struct picked *pick_entries(const struct registry *reg,
				   const struct arena *names, int64_t dump,
				   size_t *n, size_t *names_bytes)
{
	struct picked *p = malloc((reg->n ? reg->n : 1) * sizeof(*p));

	*n = 0;
	*names_bytes = 0;
	if (!p)
		return NULL;
	for (size_t i = 0; i < reg->n; i++) {
		const struct name_entry *e = &reg->e[i];

		if (!e->declared && e->used_in != dump)
			continue;
		p[(*n)++] = (struct picked){.id = e->id, .entry = (uint32_t)i};
		if (e->name)
			*names_bytes += strlen(arena_name(names, e->name)) + 1;
	}
	qsort(p, *n, sizeof(*p), compare_picked);
	return p;
}

/* Copies a name after the array it belongs to; *tail moves past it. */
static const char *copy_name(const struct arena *names, uint64_t name,
			     char **tail)
{
	const char *s = arena_name(names, name);
	char *copy = *tail;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	memcpy(copy, s, n);
	*tail += n;
	return copy;
}

/* The classes, each array followed by its names in one allocation (one
 * free, in heap_free), and where each registry entry went. */
static int snapshot_classes(const struct registry *reg,
			    const struct arena *names, struct dump_meta *m)
{
	size_t n, bytes;
	struct picked *p = pick_entries(reg, names, (int64_t)m->dump, &n,
					&bytes);
	char *tail;

	if (!p)
		return -1;
	m->classes = malloc(n * sizeof(*m->classes) + bytes + 1);
	m->class_of_entry = malloc((reg->n ? reg->n : 1) *
				   sizeof(*m->class_of_entry));
	if (!m->classes || !m->class_of_entry) {
		free(p);
		return -1;
	}
	for (size_t i = 0; i < reg->n; i++)
		m->class_of_entry[i] = HEAP_NO_CLASS;
	tail = (char *)(m->classes + n);
	for (size_t i = 0; i < n; i++) {
		const struct name_entry *e = &reg->e[p[i].entry];

		m->classes[i] = (struct heap_class){
			.id = e->id,
			.name = copy_name(names, e->name, &tail),
			.has_size = e->has_size,
			.size = e->size,
		};
		m->class_of_entry[p[i].entry] = (uint32_t)i;
	}
	m->n_classes = n;
	free(p);
	return 0;
}

static int snapshot_names(const struct registry *reg,
			  const struct arena *names, struct heap_name **out,
			  size_t *n_out)
{
	size_t n, bytes;
	struct picked *p = pick_entries(reg, names, INT64_MIN, &n, &bytes);
	struct heap_name *list;
	char *tail;

	if (!p)
		return -1;
	list = malloc(n * sizeof(*list) + bytes + 1);
	if (!list) {
		free(p);
		return -1;
	}
	tail = (char *)(list + n);
	for (size_t i = 0; i < n; i++) {
		const struct name_entry *e = &reg->e[p[i].entry];

		list[i] = (struct heap_name){
			.id = e->id,
			.name = copy_name(names, e->name, &tail),
		};
	}
	free(p);
	*out = list;
	*n_out = n;
	return 0;
}

/* Every field named so far, in registry order, so that the entries the
 * raw dump holds need no renumbering: an edge's field is its entry + 1. */
static int snapshot_fields(const struct registry *reg,
			   const struct arena *names, struct dump_meta *m)
{
	size_t bytes = 0;
	char *tail;

	for (size_t i = 0; i < reg->n; i++)
		if (reg->e[i].name)
			bytes += strlen(arena_name(names, reg->e[i].name)) + 1;
	m->fields = malloc(reg->n * sizeof(*m->fields) + bytes + 1);
	if (!m->fields)
		return -1;
	tail = (char *)(m->fields + reg->n);
	for (size_t i = 0; i < reg->n; i++) {
		const struct name_entry *e = &reg->e[i];

		m->fields[i] = (struct heap_field){
			.id = e->id,
			.class_id = e->owner,
			.name = e->declared ? copy_name(names, e->name, &tail)
					    : NULL,
			.kind = e->kind,
			.type = e->type,
		};
	}
	m->n_fields = reg->n;
	return 0;
}

/* ---- A dump as it arrives ----------------------------------------------- */

/*
 * Parts are parallel arrays of the smallest types that hold them: 28 bytes
 * and a bit per part, plus 8 per ref id. Continued objects make several
 * parts with one id; they are joined when the dump is built, in one pass
 * over the parts sorted by id, which is cheaper than looking each one up as
 * it comes.
 */
struct raw_dump {
	size_t n_parts, cap_parts;
	ht_id *id;
	uint32_t *cls;       /* class registry entry, or NO_ENTRY */
	uint32_t *size;      /* a part that begins an object: as heap.size,
				big sizes in big by part; a continuation: 0,
				its size is not kept */
	size_t n_big, cap_big;
	struct heap_big_size *big;
	uint64_t *ref_end;   /* where the part's refs end in ref; they begin
				where the previous part's end */
	uint32_t *ref_end32; /* the same in 4 bytes, for parts out of order
				whose refs number less than 2^32, once all
				are in (narrow_ref_ends); ref_end is NULL
				then */
	uint64_t *continued; /* a bit per part: it continues an earlier part */
	uint8_t *gen;        /* NULL until a part gives its generation */
	size_t n_refs, cap_refs;
	ht_id *ref;          /* every part's refs, in arrival order */
	size_t cap_ref_fields;
	uint32_t *ref_field; /* parallel to ref once a reference names a
				field: field registry entry + 1, 0 none */
	size_t n_roots, cap_roots;
	struct heap_root *roots; /* object still unresolved */
	size_t n_stack, cap_stack;
	struct heap_stack_entry *stack;
	uint32_t *val;       /* NULL until a part keeps values: its record's
				offset (values.h) + 1, 0 for none */
	struct value_arena values;
	uint64_t bytes;      /* self sizes of the parts that begin an object */
	uint64_t charged;    /* to the memory budget (util/membudget.h) */
};

static void raw_clear(struct raw_dump *raw)
{
	if (raw->continued)
		memset(raw->continued, 0,
		       (raw->cap_parts + 63) / 64 * sizeof(uint64_t));
	free(raw->gen);
	raw->gen = NULL;
	if (raw->val) {
		uint64_t bytes = (uint64_t)raw->cap_parts * sizeof(*raw->val);

		mem_budget_release(bytes);
		raw->charged -= bytes;
		free(raw->val);
		raw->val = NULL;
	}
	value_arena_free(&raw->values);
	raw->n_parts = 0;
	raw->n_big = 0;
	raw->n_refs = 0;
	raw->n_roots = 0;
	raw->n_stack = 0;
	raw->bytes = 0;
}

static void raw_free(struct raw_dump *raw)
{
	free(raw->id);
	free(raw->cls);
	free(raw->size);
	free(raw->big);
	free(raw->ref_end);
	free(raw->ref_end32);
	free(raw->continued);
	free(raw->gen);
	free(raw->val);
	value_arena_free(&raw->values);
	free(raw->ref);
	free(raw->ref_field);
	free(raw->roots);
	free(raw->stack);
	mem_budget_release(raw->charged);
	memset(raw, 0, sizeof(*raw));
}

static uint64_t part_end(const struct raw_dump *raw, size_t p)
{
	return raw->ref_end32 ? raw->ref_end32[p] : raw->ref_end[p];
}

static uint64_t part_begin(const struct raw_dump *raw, size_t p)
{
	return p ? part_end(raw, p - 1) : 0;
}

static bool part_continues(const struct raw_dump *raw, size_t p)
{
	return raw->continued[p / 64] >> (p % 64) & 1;
}

static int raw_grow_parts(struct raw_dump *raw)
{
	/* the columns share one capacity */
	size_t cap = grown_capacity(raw->cap_parts, raw->n_parts + 1,
				    sizeof(*raw->id));
	size_t old_words = (raw->cap_parts + 63) / 64;
	size_t words = (cap + 63) / 64;
	/* the columns, a generation byte and a bit of each part */
	uint64_t per_part = sizeof(*raw->id) + sizeof(*raw->cls) +
			    sizeof(*raw->size) + sizeof(*raw->ref_end) + 1 +
			    (raw->val ? sizeof(*raw->val) : 0);
	uint64_t more = (uint64_t)(cap - raw->cap_parts) * per_part +
			(words - old_words) * sizeof(uint64_t);

	if (cap == 0 || mem_budget_charge(more) < 0)
		return -1;
	raw->charged += more;
	if (RESIZE_ARRAY(raw->id, cap) < 0 ||
	    RESIZE_ARRAY(raw->cls, cap) < 0 ||
	    RESIZE_ARRAY(raw->size, cap) < 0 ||
	    RESIZE_ARRAY(raw->ref_end, cap) < 0 ||
	    RESIZE_ARRAY(raw->continued, words) < 0 ||
	    (raw->gen && RESIZE_ARRAY(raw->gen, cap) < 0) ||
	    (raw->val && RESIZE_ARRAY(raw->val, cap) < 0))
		return -1;
	memset(raw->continued + old_words, 0,
	       (words - old_words) * sizeof(uint64_t));
	raw->cap_parts = cap;
	return 0;
}

static int raw_reserve_refs(struct raw_dump *raw, size_t more)
{
	if (more > SIZE_MAX - raw->n_refs)
		return -1;
	if (raw->ref_field &&
	    BUDGET_GROW(raw->ref_field, raw->n_refs + more,
			raw->cap_ref_fields, raw->charged) < 0)
		return -1;
	return BUDGET_GROW(raw->ref, raw->n_refs + more, raw->cap_refs,
			   raw->charged);
}

/* Fields are kept only for dumps whose references name them: the refs
 * before the first such event were read from no known field. */
static int raw_start_ref_fields(struct raw_dump *raw, size_t more)
{
	if (BUDGET_GROW(raw->ref_field, raw->n_refs + more,
			raw->cap_ref_fields, raw->charged) < 0)
		return -1;
	if (raw->n_refs)
		memset(raw->ref_field, 0, raw->n_refs * sizeof(*raw->ref_field));
	return 0;
}

/* Values are kept only for dumps that have them, when asked. The column
 * is charged as the others are, by raw_grow_parts's per-part bytes. */
static int raw_start_values(struct raw_dump *raw)
{
	uint64_t bytes = (uint64_t)raw->cap_parts * sizeof(*raw->val);

	if (mem_budget_charge(bytes) < 0)
		return -1;
	raw->charged += bytes;
	raw->val = calloc(raw->cap_parts ? raw->cap_parts : 1,
			  sizeof(*raw->val));
	return raw->val ? 0 : -1;
}

/* Generations are kept only for dumps that give them. */
static int raw_start_generations(struct raw_dump *raw)
{
	raw->gen = alloc_array(raw->cap_parts, 1);
	if (!raw->gen)
		return -1;
	memset(raw->gen, HEAP_NO_GENERATION, raw->n_parts);
	return 0;
}

static uint8_t generation_byte(const struct ht_ev_object_references *e)
{
	if (!e->has_generation || e->generation >= HEAP_NO_GENERATION)
		return HEAP_NO_GENERATION;
	return (uint8_t)e->generation;
}

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
static uint32_t *narrow_in_place(uint64_t *wide, size_t n)
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
	h->ref_start32 = narrow_in_place(h->ref_start, (size_t)h->n + 1);
	h->ref_start = NULL;
}

/* The parts' ref ends to 4 bytes when they fit, before parts out of
 * order are sorted: the sort, with the raw dump whole, is the build's
 * peak. */
static void narrow_ref_ends(struct raw_dump *raw)
{
	if (raw->n_parts == 0 || raw->n_refs >= UINT32_MAX)
		return;
	raw->ref_end32 = narrow_in_place(raw->ref_end, raw->n_parts);
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

/*
 * The parts that make the objects, in id order. A run of parts with one id
 * is one object: its first part and the continuations that follow; a part
 * of the run that continues nothing reports the object again, and it and
 * its continuations are dropped. `order` keeps the kept parts, `first`
 * marks (by position in order) those that begin an object.
 */
struct kept_parts {
	uint32_t *order;
	size_t n;
	uint64_t *first;
	uint32_t objects;
};

static bool begins_object(const struct kept_parts *k, size_t i)
{
	return k->first[i / 64] >> (i % 64) & 1;
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
static size_t big_size_slot(const struct heap_big_size *big, size_t n,
			    uint32_t at)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (big[mid].object < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The big size of part p, which raw->big has (it holds the parts that
 * begin an object with HEAP_BIG_SIZE in raw->size, in part order). */
static uint64_t raw_big_size(const struct raw_dump *raw, uint32_t p)
{
	return raw->big[big_size_slot(raw->big, raw->n_big, p)].size;
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
static uint32_t *gather_refs(const struct raw_dump *raw,
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

/* The field entries of the kept parts, object after object, as
 * gather_refs lays out their refs. */
static int gather_ref_fields(struct raw_dump *raw, const struct kept_parts *k,
			     const struct heap *h, uint32_t **out)
{
	uint64_t total = heap_ref_start(h, h->n), at = 0;
	uint32_t *field;

	if (!raw->ref_field)
		return 0;
	field = alloc_array(total, sizeof(*field));
	if (!field)
		return -1;
	for (size_t i = 0; i < k->n; i++) {
		uint32_t p = k->order[i];
		uint64_t begin = part_begin(raw, p);
		uint64_t count = part_end(raw, p) - begin;

		memcpy(field + at, raw->ref_field + begin,
		       count * sizeof(*field));
		at += count;
	}
	free(raw->ref_field);
	raw->ref_field = NULL;
	raw->cap_ref_fields = 0;
	*out = field;
	return 0;
}

/* The full field array, an entry an edge, made compact (heap.h): each
 * class slot's layout is its first object's fields. */
static int make_layouts(struct heap *h, const uint32_t *field)
{
	size_t slots = h->n_classes + 1;
	uint32_t *first = alloc_array(slots, sizeof(*first));
	uint64_t at = 0;

	h->layout_start = alloc_array(slots + 1, sizeof(*h->layout_start));
	if (!first || !h->layout_start) {
		free(first);
		return -1;
	}
	for (size_t s = 0; s < slots; s++)
		first[s] = HEAP_NONE;
	for (uint32_t i = 0; i < h->n; i++)
		if (first[heap_class_slot(h, i)] == HEAP_NONE)
			first[heap_class_slot(h, i)] = i;
	for (size_t s = 0; s < slots; s++) {
		h->layout_start[s] = at;
		if (first[s] != HEAP_NONE)
			at += heap_ref_start(h, first[s] + 1) - heap_ref_start(h, first[s]);
	}
	h->layout_start[slots] = at;
	h->layout = alloc_array(at ? at : 1, sizeof(*h->layout));
	if (!h->layout) {
		free(first);
		return -1;
	}
	for (size_t s = 0; s < slots; s++)
		if (first[s] != HEAP_NONE)
			memcpy(h->layout + h->layout_start[s],
			       field + heap_ref_start(h, first[s]),
			       (h->layout_start[s + 1] - h->layout_start[s]) *
			       sizeof(*field));
	free(first);
	return 0;
}

/* The field of position pos of an object that follows its layout. */
static uint32_t layout_field(const struct heap *h, size_t slot, uint64_t pos)
{
	uint64_t len = h->layout_start[slot + 1] - h->layout_start[slot];

	return pos < len ? h->layout[h->layout_start[slot] + pos]
			 : HEAP_NO_FIELD;
}

static bool follows_layout(const struct heap *h, const uint32_t *field,
			   uint32_t i)
{
	size_t slot = heap_class_slot(h, i);

	for (uint64_t e = heap_ref_start(h, i); e < heap_ref_start(h, i + 1); e++)
		if (field[e] != layout_field(h, slot, e - heap_ref_start(h, i)))
			return false;
	return true;
}

/* The objects that do not follow their layout, with their fields. */
static int list_odd_objects(struct heap *h, const uint32_t *field,
			    uint64_t odd_edges)
{
	uint32_t k = 0;
	uint64_t at = 0;

	h->odd = alloc_array(h->n_odd ? h->n_odd : 1, sizeof(*h->odd));
	h->odd_start = alloc_array((size_t)h->n_odd + 1,
				   sizeof(*h->odd_start));
	h->odd_field = alloc_array(odd_edges ? odd_edges : 1,
				   sizeof(*h->odd_field));
	if (!h->odd || !h->odd_start || !h->odd_field)
		return -1;
	for (uint32_t i = 0; i < h->n; i++) {
		uint64_t deg = heap_ref_start(h, i + 1) - heap_ref_start(h, i);

		if (h->field_follows[i / 64] >> (i % 64) & 1)
			continue;
		h->odd[k] = i;
		h->odd_start[k++] = at;
		memcpy(h->odd_field + at, field + heap_ref_start(h, i),
		       deg * sizeof(*field));
		at += deg;
	}
	h->odd_start[k] = at;
	return 0;
}

/* Replaces the dump's full field array (an entry an edge, freed here) by
 * the layouts, a bit an object, and the odd objects' fields. */
static int compact_ref_fields(struct heap *h, uint32_t *field)
{
	uint64_t odd_edges = 0;
	int rc = -1;

	if (!field)
		return 0;
	h->field_follows = calloc((h->n + 63) / 64 + 1,
				  sizeof(*h->field_follows));
	if (!h->field_follows || make_layouts(h, field) < 0)
		goto done;
	for (uint32_t i = 0; i < h->n; i++) {
		if (follows_layout(h, field, i)) {
			h->field_follows[i / 64] |= 1ULL << (i % 64);
		} else {
			h->n_odd++;
			odd_edges += heap_ref_start(h, i + 1) - heap_ref_start(h, i);
		}
	}
	rc = list_odd_objects(h, field, odd_edges);
done:
	free(field);
	return rc;
}

/* Parts in order: the raw field array is the dump's as it is. */
static uint32_t *take_ref_fields(struct raw_dump *raw)
{
	uint32_t *field = raw->ref_field;

	raw->ref_field = NULL;
	raw->cap_ref_fields = 0;
	return field;
}

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
	h->id_lo = narrow_in_place(h->id, h->n);
	h->id = NULL;
	return 0;
}

/* Turns the raw refs and roots into indices; the refs end in h->ref. */
static int resolve(struct raw_dump *raw, struct kept_parts *k, struct heap *h)
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
	h->ref = gather_refs(raw, k, resolved, heap_ref_start(h, h->n));
	free(resolved);
	return h->ref ? 0 : -1;
}

/* Each object's record (the first its parts give), found through a bit
 * and a rank per object and an offset per object that has one; the
 * arena's records become the graph's, its index goes. */
static int gather_values(struct raw_dump *raw, const struct kept_parts *k,
			 struct heap *h)
{
	size_t words = ((size_t)h->n + 63) / 64;
	uint32_t *at = raw->val, n_valued = 0;

	if (!raw->val)
		return 0;
	value_arena_end(&raw->values);
	if (k->order) {
		int64_t j = -1;

		at = calloc(h->n ? h->n : 1, sizeof(*at));
		if (!at)
			return -1;
		for (size_t i = 0; i < k->n; i++) {
			uint32_t v = raw->val[k->order[i]];

			if (begins_object(k, i))
				j++;
			if (!at[j])
				at[j] = v;
		}
	}
	h->has_values = calloc(words + 1, sizeof(*h->has_values));
	h->values_rank = calloc(words + 1, sizeof(*h->values_rank));
	if (!h->has_values || !h->values_rank)
		goto nomem;
	for (uint32_t i = 0; i < h->n; i++) {
		if (i % 64 == 0)
			h->values_rank[i / 64] = n_valued;
		if (at[i]) {
			h->has_values[i / 64] |= 1ULL << (i % 64);
			n_valued++;
		}
	}
	h->values_at = alloc_array(n_valued ? n_valued : 1,
				   sizeof(*h->values_at));
	if (!h->values_at)
		goto nomem;
	for (uint32_t i = 0, j = 0; i < h->n; i++)
		if (at[i])
			h->values_at[j++] = at[i] - 1;
	h->value_bytes = raw->values.bytes;
	h->n_value_bytes = raw->values.len;
	raw->values.bytes = NULL;
	if (at != raw->val)
		free(at);
	return 0;
nomem:
	if (at != raw->val)
		free(at);
	return -1;
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

#define BUILD_NOMEM (-1)
#define BUILD_LIMIT (-2)

/*
 * The graph of the collected dump, consuming raw and m: 0 and *out, or
 * BUILD_NOMEM or BUILD_LIMIT. The order of steps keeps memory low: every
 * per-object array is gathered and its raw form freed at once; ref ids are
 * resolved where they lie, and only then copied into object order (parts
 * out of order) or left where they are.
 */
static int build_graph(struct raw_dump *raw, struct dump_meta *m,
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
		rc = resolve(raw, &k, h);
	if (rc == 0)
		rc = gather_values(raw, &k, h);
	if (rc == 0 && k.order)
		rc = gather_ref_fields(raw, &k, h, &field);
	else if (rc == 0 && raw->ref_field)
		field = take_ref_fields(raw);
	/* the names first: the layouts are per class slot */
	heap_take_meta(h, m);
	if (rc == 0)
		rc = compact_ref_fields(h, field);
	if (rc == 0 && heap_index_referents(h) < 0)
		rc = BUILD_NOMEM;
	free(k.order);
	free(k.first);
done:
	meta_free(m);
	raw_free(raw);
	if (rc < 0) {
		heap_free(h);
		return rc;
	}
	count_totals(h);
	*out = h;
	return 0;
}

/* ---- The scan ----------------------------------------------------------- */

struct scan {
	int64_t select;
	bool keep_values;   /* heap_scan_options.values */
	const ht_id *values_of;  /* heap_scan_options.values_of */
	size_t n_values_of;
	bool values_seen;   /* heap_scan_report.values_seen */
	uint32_t *value_field; /* an event's value fields as entries */
	size_t cap_value_field;
	heap_dump_fn fn;
	void *ctx;
	const char *path;   /* for messages */

	struct arena names;
	struct registry classes, threads, methods, fields;
	ht_id last_class;   /* the class of the last object, for a short cut */
	uint32_t last_class_entry;
	ht_id last_field;   /* the same for the last field of a reference */
	uint32_t last_field_entry;
	uint32_t *field_at; /* entry + 1 of field ids below DIRECT_FIELDS
			       (recorders number fields densely from 1), 0
			       until seen; NULL until a reference names one */
	size_t n_bounds, cap_bounds;
	struct ht_generation_range *bounds;

	bool collecting;    /* inside a selected dump */
	bool pending;       /* raw and meta hold a finished dump, not built */
	uint64_t closer_at; /* index + 1 of the last C_END or gc_finished */
	struct raw_dump raw;
	struct dump_meta meta;

	bool failed;        /* err says why */
	struct ht_error err;
	bool fn_stopped;
	int fn_rc;
};

#define SCAN_STOP (-1)

static int scan_fail(struct scan *s, enum ht_error_code code,
		     const char *fmt, ...) HT_PRINTF(3, 4);

static int scan_fail(struct scan *s, enum ht_error_code code,
		     const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	err_plain(&s->err, code, s->path, "%s", what);
	s->failed = true;
	return SCAN_STOP;
}

static int out_of_memory(struct scan *s)
{
	if (mem_budget_exceeded())
		return scan_fail(s, HT_E_NOMEM, MEM_BUDGET_MESSAGE,
				 mem_budget_limit());
	return scan_fail(s, HT_E_NOMEM, "out of memory building dump %" PRIu64,
			 s->meta.dump);
}

static int deliver(struct scan *s)
{
	uint64_t dump = s->meta.dump;
	struct heap *h = NULL;
	bool keep = false;
	int rc = build_graph(&s->raw, &s->meta, &h);

	if (rc == BUILD_LIMIT)
		return scan_fail(s, HT_E_LIMIT, "dump %" PRIu64 ": an object "
				 "with more than %" PRIu32 " references",
				 dump, UINT32_MAX);
	if (rc < 0)
		return scan_fail(s, HT_E_NOMEM, "out of memory building dump %"
				 PRIu64, dump);
	rc = s->fn ? s->fn(s->ctx, h, &keep) : 0;
	if (!keep)
		heap_free(h);
	if (rc) {
		s->fn_stopped = true;
		s->fn_rc = rc;
	}
	return rc;
}

static bool selected(const struct scan *s, int64_t dump)
{
	return s->select == HEAP_LAST_DUMP || s->select == HEAP_ALL_DUMPS ||
	       s->select == dump;
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	struct scan *s = ctx;

	if (!selected(s, st->dump))
		return 0;
	/* the dump collected before was not the last one */
	meta_free(&s->meta);
	raw_clear(&s->raw);
	s->pending = false;
	s->collecting = true;
	s->meta.dump = (uint64_t)st->dump;
	s->meta.gc_dump = st->gc_dump;
	s->meta.gc = st->gc;
	return 0;
}

static int snapshot_meta(struct scan *s)
{
	struct dump_meta *m = &s->meta;

	if (snapshot_classes(&s->classes, &s->names, m) < 0 ||
	    snapshot_names(&s->threads, &s->names, &m->threads,
			   &m->n_threads) < 0 ||
	    snapshot_names(&s->methods, &s->names, &m->methods,
			   &m->n_methods) < 0 ||
	    snapshot_fields(&s->fields, &s->names, m) < 0)
		return -1;
	m->bounds = malloc((s->n_bounds ? s->n_bounds : 1) *
			   sizeof(*m->bounds));
	if (!m->bounds)
		return -1;
	if (s->n_bounds)
		memcpy(m->bounds, s->bounds, s->n_bounds * sizeof(*m->bounds));
	m->n_bounds = s->n_bounds;
	return 0;
}

/* The last dump is known only at the end of the trace: until then the
 * finished dump waits, and the next one that begins replaces it. */
static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	struct scan *s = ctx;

	if (!s->collecting)
		return 0;
	s->collecting = false;
	s->meta.aborted = st->dump_aborted;
	s->meta.complete = s->closer_at == st->event_index + 1;
	if (snapshot_meta(s) < 0)
		return out_of_memory(s);
	if (s->select == HEAP_LAST_DUMP) {
		s->pending = true;
		return 0;
	}
	return deliver(s);
}

static uint32_t class_entry_of_object(struct scan *s, ht_id class_id)
{
	uint32_t entry;

	if (class_id == 0)
		return NO_ENTRY;
	if (s->classes.n && class_id == s->last_class)
		entry = s->last_class_entry;
	else
		entry = registry_entry(&s->classes, class_id);
	if (entry == NO_ENTRY)
		return NO_ENTRY;
	s->last_class = class_id;
	s->last_class_entry = entry;
	s->classes.e[entry].used_in = (int64_t)s->meta.dump;
	return entry;
}

/* Field ids looked up by index instead of by hash: a table of 256 KiB,
 * made when a reference first names a field. */
#define DIRECT_FIELDS (1u << 16)

/* A field id as the raw dump keeps it: its registry entry + 1, 0 for
 * none; an id no event has declared yet gets an entry too, which stays
 * nameless if none ever does. UINT32_MAX when out of memory. */
static uint32_t field_entry(struct scan *s, ht_id field)
{
	uint32_t entry;

	if (field == 0)
		return HEAP_NO_FIELD;
	if (s->fields.n && field == s->last_field)
		return s->last_field_entry + 1;
	if (field < DIRECT_FIELDS && s->field_at && s->field_at[field])
		return s->field_at[field];
	entry = registry_entry(&s->fields, field);
	if (entry == NO_ENTRY)
		return UINT32_MAX;
	s->last_field = field;
	s->last_field_entry = entry;
	if (field < DIRECT_FIELDS && !s->field_at)
		s->field_at = calloc(DIRECT_FIELDS, sizeof(*s->field_at));
	if (field < DIRECT_FIELDS && s->field_at)
		s->field_at[field] = entry + 1;
	return entry + 1;
}

/* The fields of e's refs, after the refs already kept (0 when e names
 * none, as an event of an older recorder would). */
static int add_ref_fields(struct scan *s,
			  const struct ht_ev_object_references *e)
{
	uint32_t *out = s->raw.ref_field + s->raw.n_refs;

	for (size_t i = 0; i < e->count; i++) {
		out[i] = e->ref_fields ? field_entry(s, e->ref_fields[i]) : 0;
		if (out[i] == UINT32_MAX)
			return -1;
	}
	return 0;
}

/* Whether id is among ids[0..n), which ascend. */
static bool id_listed(const ht_id *ids, size_t n, ht_id id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids[mid] == id)
			return true;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* e's values and array as a record of the raw dump's arena; *at its
 * offset + 1, 0 when e has none. */
static int add_values(struct scan *s, const struct ht_ev_object_references *e,
		      uint32_t *at)
{
	struct raw_dump *raw = &s->raw;
	int rc;

	*at = 0;
	if (e->n_values || e->array)
		s->values_seen = true;
	if (!s->keep_values || (!e->n_values && !e->array) ||
	    (s->values_of && !id_listed(s->values_of, s->n_values_of, e->id)))
		return 0;
	if (!raw->val && raw_start_values(raw) < 0)
		return out_of_memory(s);
	if (ALLOC_GROW(s->value_field, e->n_values + 1, s->cap_value_field) < 0)
		return out_of_memory(s);
	for (size_t i = 0; i < e->n_values; i++) {
		uint32_t entry = field_entry(s, e->value_fields[i]);

		if (entry == UINT32_MAX)
			return out_of_memory(s);
		/* a value of field 0 is a bad value (check says so) */
		s->value_field[i] = entry ? entry - 1 : UINT32_MAX;
	}
	rc = value_arena_add(&raw->values, s->value_field, e->values,
			     e->n_values, e->array, at);
	if (rc == -2)
		return scan_fail(s, HT_E_LIMIT, "dump %" PRIu64 ": its "
				 "values take more than %" PRIu64 " GiB",
				 s->meta.dump, VALUE_ARENA_MAX >> 30);
	if (rc < 0)
		return out_of_memory(s);
	(*at)++;
	return 0;
}

/* Part p's size, listed in raw->big past 4 bytes. */
static int add_size(struct raw_dump *raw, size_t p, uint64_t size)
{
	if (size < HEAP_BIG_SIZE) {
		raw->size[p] = (uint32_t)size;
		return 0;
	}
	if (BUDGET_GROW(raw->big, raw->n_big + 1, raw->cap_big,
			raw->charged) < 0)
		return -1;
	raw->big[raw->n_big++] = (struct heap_big_size){
		.object = (uint32_t)p, .size = size};
	raw->size[p] = HEAP_BIG_SIZE;
	return 0;
}

static int add_part(struct scan *s, const struct ht_ev_object_references *e,
		    bool continued)
{
	struct raw_dump *raw = &s->raw;
	size_t p = raw->n_parts;
	uint8_t gen = generation_byte(e);
	uint32_t values_at;

	if (p >= HEAP_MAX_OBJECTS)
		return scan_fail(s, HT_E_LIMIT, "dump %" PRIu64 " reports more "
				 "than %" PRIu32 " objects", s->meta.dump,
				 (uint32_t)HEAP_MAX_OBJECTS);
	/* checked before anything adds sizes up: a total that wrapped would
	 * be a wrong answer, not a crash */
	if (!continued && e->size >= HEAP_MAX_BYTES - raw->bytes)
		return scan_fail(s, HT_E_LIMIT, "dump %" PRIu64 ": the sizes "
				 "of its objects add up to 2^63 bytes or more "
				 "(object 0x%" PRIx64 " has %" PRIu64 " bytes)",
				 s->meta.dump, e->id, e->size);
	if (!continued)
		raw->bytes += e->size;
	if (p == raw->cap_parts && raw_grow_parts(raw) < 0)
		return out_of_memory(s);
	if (raw_reserve_refs(raw, e->count) < 0)
		return out_of_memory(s);
	if (gen != HEAP_NO_GENERATION && !raw->gen &&
	    raw_start_generations(raw) < 0)
		return out_of_memory(s);
	if (e->ref_fields && e->count && !raw->ref_field &&
	    raw_start_ref_fields(raw, e->count) < 0)
		return out_of_memory(s);
	raw->cls[p] = class_entry_of_object(s, e->class_id);
	if (e->class_id && raw->cls[p] == NO_ENTRY)
		return out_of_memory(s);
	raw->id[p] = e->id;
	if (continued)
		raw->size[p] = 0;
	else if (add_size(raw, p, e->size) < 0)
		return out_of_memory(s);
	if (e->count)
		memcpy(raw->ref + raw->n_refs, e->refs,
		       e->count * sizeof(*e->refs));
	if (raw->ref_field && add_ref_fields(s, e) < 0)
		return out_of_memory(s);
	raw->n_refs += e->count;
	raw->ref_end[p] = raw->n_refs;
	if (continued)
		raw->continued[p / 64] |= 1ULL << (p % 64);
	if (raw->gen)
		raw->gen[p] = gen;
	if (add_values(s, e, &values_at) < 0)
		return SCAN_STOP;
	if (raw->val)
		raw->val[p] = values_at;
	raw->n_parts++;
	return 0;
}

static int on_object(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	struct scan *s = ctx;

	if (!s->collecting)
		return 0;
	return add_part(s, &ev->u.object_references, st->continuation);
}

static struct heap_root root_of(const struct ht_ev_root_references *e,
				size_t i, const struct ht_replay_state *st)
{
	struct heap_root r = {
		.object = HEAP_NONE,
		.ref = e->refs[i],
		.flags = e->flags ? e->flags[i] : 0,
		.kind = e->kinds ? e->kinds[i] : HEAP_NO_KIND,
		.root_flags = e->root_flags ? e->root_flags[i] : 0,
		.root_id = e->root_ids ? e->root_ids[i] : 0,
	};

	if (st->gc_dump)
		return r;
	r.container = (uint8_t)st->container;
	r.id1 = st->container_id1;
	r.id2 = st->container_id2;
	/* the replay knows the thread of a frame begun again */
	if (st->container_has_thread) {
		r.has_thread = true;
		r.thread = st->container_thread;
	}
	return r;
}

static int on_roots(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	const struct ht_ev_root_references *e = &ev->u.root_references;
	struct scan *s = ctx;
	struct raw_dump *raw = &s->raw;

	if (!s->collecting || e->count == 0)
		return 0;
	if (e->count > SIZE_MAX - raw->n_roots ||
	    BUDGET_GROW(raw->roots, raw->n_roots + e->count, raw->cap_roots,
			raw->charged) < 0)
		return out_of_memory(s);
	for (size_t i = 0; i < e->count; i++) {
		struct heap_root r = root_of(e, i, st);

		if (e->root_fields) {
			r.field = field_entry(s, e->root_fields[i]);
			if (r.field == UINT32_MAX)
				return out_of_memory(s);
		}
		raw->roots[raw->n_roots++] = r;
	}
	return 0;
}

/* A later name for an id replaces the earlier one. */
static int name_entry(struct scan *s, struct registry *reg, ht_id id,
		      const char *name, struct name_entry **out)
{
	uint32_t entry = registry_entry(reg, id);
	uint64_t at;

	if (entry == NO_ENTRY)
		return -1;
	at = arena_add(&s->names, name);
	if (at == UINT64_MAX)
		return -1;
	*out = &reg->e[entry];
	(*out)->name = at;
	(*out)->declared = true;
	return 0;
}

static int on_class(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	const struct ht_ev_class *e = &ev->u.class_;
	struct scan *s = ctx;
	struct name_entry *entry;

	(void)st;
	if (name_entry(s, &s->classes, e->id, e->name, &entry) < 0)
		return out_of_memory(s);
	if (e->has_size) {
		entry->has_size = true;
		entry->size = e->size;
	}
	return 0;
}

static int on_thread(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	struct scan *s = ctx;
	struct name_entry *entry;

	(void)st;
	if (name_entry(s, &s->threads, ev->u.thread.id, ev->u.thread.name,
		       &entry) < 0)
		return out_of_memory(s);
	return 0;
}

static int on_method(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	struct scan *s = ctx;
	struct name_entry *entry;

	(void)st;
	if (name_entry(s, &s->methods, ev->u.method.id, ev->u.method.name,
		       &entry) < 0)
		return out_of_memory(s);
	return 0;
}

/* A field declared again says the same (check reports it if not): the
 * last declaration wins, as with class names. */
static int on_fields(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	const struct ht_ev_fields *e = &ev->u.fields;
	struct scan *s = ctx;

	(void)st;
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_field *f = &e->fields[i];
		struct name_entry *entry;

		if (f->id == 0)
			continue;
		if (name_entry(s, &s->fields, f->id, f->name, &entry) < 0)
			return out_of_memory(s);
		entry->owner = f->class_id;
		entry->kind = f->kind;
		entry->type = f->type;
	}
	return 0;
}

static int on_bounds(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	const struct ht_ev_generation_bounds *e = &ev->u.generation_bounds;
	struct scan *s = ctx;

	(void)st;
	if (e->count > s->cap_bounds) {
		if (RESIZE_ARRAY(s->bounds, e->count) < 0)
			return out_of_memory(s);
		s->cap_bounds = e->count;
	}
	if (e->count)
		memcpy(s->bounds, e->ranges, e->count * sizeof(*s->bounds));
	s->n_bounds = e->count;
	return 0;
}

/* A thread or frame container begun, with the thread the replay gives a
 * frame (doc/design.md section 3). */
static int add_stack_entry(struct scan *s, const struct ht_replay_state *st)
{
	struct raw_dump *raw = &s->raw;

	if (BUDGET_GROW(raw->stack, raw->n_stack + 1, raw->cap_stack,
			raw->charged) < 0)
		return out_of_memory(s);
	raw->stack[raw->n_stack++] = (struct heap_stack_entry){
		.type = (uint8_t)st->container,
		.has_thread = st->container_has_thread,
		.id1 = st->container_id1,
		.id2 = st->container_id2,
		.thread = st->container_thread,
	};
	return 0;
}

/* Remembers the event that closes a dump, so that its end can tell a
 * dump closed by its own closer from one cut short. */
static int on_container(void *ctx, const struct ht_event *ev,
			const struct ht_replay_state *st)
{
	struct scan *s = ctx;
	enum ht_container_type type = ev->u.begin_container.type;

	if (type == HT_C_END)
		s->closer_at = st->event_index + 1;
	if (s->collecting && !st->gc_dump &&
	    (type == HT_C_RT_THREAD || ht_container_is_frame(type)))
		return add_stack_entry(s, st);
	return 0;
}

static int on_gc_finished(void *ctx, const struct ht_event *ev,
			  const struct ht_replay_state *st)
{
	struct scan *s = ctx;

	(void)ev;
	s->closer_at = st->event_index + 1;
	return 0;
}

static void scan_free(struct scan *s)
{
	free(s->names.buf);
	registry_free(&s->classes);
	registry_free(&s->threads);
	registry_free(&s->methods);
	registry_free(&s->fields);
	free(s->field_at);
	free(s->value_field);
	free(s->bounds);
	raw_free(&s->raw);
	meta_free(&s->meta);
	free(s);
}

static void fill_report(struct heap_scan_report *report,
			const struct ht_replay_summary *sum)
{
	if (!report)
		return;
	report->events = sum->events;
	report->dumps = sum->dumps;
	report->gcs = sum->gcs;
	report->violations = sum->violations;
	report->read_error = sum->read_error;
}

/* After the replay: the last dump, when it is the one asked for. A read
 * error stays the result unless fn stops the scan. */
static int finish_scan(struct scan *s, int rc, struct ht_error *err)
{
	if (!s->failed && !s->fn_stopped && s->pending &&
	    (rc == 0 || rc == -1)) {
		s->pending = false;
		deliver(s);
	}
	if (s->failed) {
		*err = s->err;
		return -1;
	}
	if (s->fn_stopped)
		return s->fn_rc;
	return rc;
}

int heap_scan(struct ht_reader *r, int64_t select, heap_dump_fn fn, void *ctx,
	      struct heap_scan_report *report, struct ht_error *err)
{
	return heap_scan_with(r, select, NULL, fn, ctx, report, err);
}

int heap_scan_with(struct ht_reader *r, int64_t select,
		   const struct heap_scan_options *options, heap_dump_fn fn,
		   void *ctx, struct heap_scan_report *report,
		   struct ht_error *err)
{
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
	};
	struct ht_replay_summary sum = {0};
	struct ht_error local;
	struct scan *s;
	int rc;

	if (!err)
		err = &local;
	err_clear(err);
	if (report)
		memset(report, 0, sizeof(*report));
	if (select < HEAP_ALL_DUMPS) {
		err_plain(err, HT_E_INVALID, NULL, "no dump %" PRId64, select);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err_plain(err, HT_E_NOMEM, NULL, "out of memory");
		return -1;
	}
	s->select = select;
	s->keep_values = options && options->values;
	if (s->keep_values) {
		s->values_of = options->values_of;
		s->n_values_of = options->n_values_of;
	}
	s->fn = fn;
	s->ctx = ctx;
	s->path = ht_reader_path(r);
	cb.on_event[HT_EV_CLASS] = on_class;
	cb.on_event[HT_EV_THREAD] = on_thread;
	cb.on_event[HT_EV_METHOD] = on_method;
	cb.on_event[HT_EV_FIELDS] = on_fields;
	cb.on_event[HT_EV_GENERATION_BOUNDS] = on_bounds;
	cb.on_event[HT_EV_BEGIN_CONTAINER] = on_container;
	cb.on_event[HT_EV_GC_FINISHED] = on_gc_finished;
	cb.on_event[HT_EV_ROOT_REFERENCES] = on_roots;
	cb.on_event[HT_EV_OBJECT_REFERENCES] = on_object;
	rc = ht_replay(r, &cb, s, &sum, err);
	rc = finish_scan(s, rc, err);
	fill_report(report, &sum);
	if (report)
		report->values_seen = s->values_seen;
	/* the error returned is the scan's own (out of memory), not the
	 * damage that the replay stopped at */
	if (report && s->failed)
		report->read_error = false;
	scan_free(s);
	return rc;
}

/* ---- The graph's lookups ------------------------------------------------ */

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

uint64_t heap_big_size(const struct heap *h, uint32_t object)
{
	size_t at = big_size_slot(h->big, h->n_big, object);

	return at < h->n_big && h->big[at].object == object ?
	       h->big[at].size : HEAP_BIG_SIZE;
}

const char *heap_class_name(const struct heap *h, uint32_t object, char *buf)
{
	uint32_t c = h->cls[object];
	ht_id id = 0;

	if (c != HEAP_NO_CLASS) {
		if (h->classes[c].name)
			return h->classes[c].name;
		id = h->classes[c].id;
	}
	snprintf(buf, 32, "?0x%" PRIx64, id);
	return buf;
}

size_t heap_class_slot_of_id(const struct heap *h, ht_id class_id)
{
	size_t lo = 0, hi = h->n_classes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->classes[mid].id < class_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->n_classes && h->classes[lo].id == class_id
		? lo : h->n_classes;
}

const char *heap_class_name_by_id(const struct heap *h, ht_id class_id)
{
	size_t c = heap_class_slot_of_id(h, class_id);

	return c < h->n_classes ? h->classes[c].name : NULL;
}

static const char *find_name(const struct heap_name *list, size_t n, ht_id id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (list[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && list[lo].id == id ? list[lo].name : NULL;
}

const char *heap_thread_name(const struct heap *h, ht_id thread)
{
	return find_name(h->threads, h->n_threads, thread);
}

const char *heap_method_name(const struct heap *h, ht_id method)
{
	return find_name(h->methods, h->n_methods, method);
}

uint32_t heap_ref_field(const struct heap *h, uint32_t object, uint64_t e)
{
	uint64_t pos = e - heap_ref_start(h, object);
	uint32_t lo = 0, hi;

	if (!h->field_follows)
		return HEAP_NO_FIELD;
	if (h->field_follows[object / 64] >> (object % 64) & 1)
		return layout_field(h, heap_class_slot(h, object), pos);
	for (hi = h->n_odd; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->odd[mid] < object)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->n_odd || h->odd[lo] != object)
		return HEAP_NO_FIELD;
	return h->odd_field[h->odd_start[lo] + pos];
}

const struct heap_field *heap_field_at(const struct heap *h, uint32_t field)
{
	if (field == HEAP_NO_FIELD || field > h->n_fields ||
	    !h->fields[field - 1].name)
		return NULL;
	return &h->fields[field - 1];
}

bool heap_named_ref(const struct heap *h, uint32_t object, const char *name,
		    uint64_t *e)
{
	uint64_t end = heap_ref_start(h, object + 1);

	for (*e = heap_ref_start(h, object); *e < end; (*e)++) {
		const struct heap_field *f =
			heap_field_at(h, heap_ref_field(h, object, *e));

		if (f && strcmp(f->name, name) == 0)
			return true;
	}
	return false;
}

static bool names_class_type(const char *name)
{
	return name && (strcmp(name, "java.lang.Class") == 0 ||
			strcmp(name, "System.RuntimeType") == 0);
}

const char *heap_class_object_name(const struct heap *h, uint32_t object)
{
	uint32_t c = h->cls[object];

	if (c == HEAP_NO_CLASS || c >= h->n_classes ||
	    !names_class_type(h->classes[c].name))
		return NULL;
	return heap_class_name_by_id(h, heap_id(h, object));
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

bool heap_object_values(const struct heap *h, uint32_t object,
			struct value_record *r)
{
	uint64_t word, below;

	if (!h->has_values || object >= h->n)
		return false;
	word = h->has_values[object / 64];
	if (!(word >> (object % 64) & 1))
		return false;
	below = word & ((UINT64_C(1) << (object % 64)) - 1);
	value_record_open(h->value_bytes,
			  h->values_at[h->values_rank[object / 64] +
				       (uint32_t)__builtin_popcountll(below)],
			  r);
	return true;
}
