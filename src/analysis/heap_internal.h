/*
 * heap_internal.h - what the files that build a dump's graph share
 * (analysis/heap.h is the graph they build): the names tracked over the
 * trace, the dump as it arrives, and the functions one of them calls in
 * another. Not for the analyses: they read the graph through heap.h.
 *
 *   heap.c         the scan: a replay's events into a raw dump
 *   heap_names.c   names over the whole trace, their snapshot at a
 *                  dump's end, and the graph's lookups of names
 *   heap_build.c   the graph from a raw dump: object order, joining
 *                  parts, the per-object columns, big sizes
 *   heap_ids.c     objects by id: the directory that resolves refs, the
 *                  ids in halves, heap_find
 *   heap_fields.c  the field of each reference: layouts per class and
 *                  the odd objects
 *   heap_values.c  objects' values in the graph
 *
 * These structs are not an API; they may change from one release to the
 * next.
 */
#ifndef HT_HEAP_INTERNAL_H
#define HT_HEAP_INTERNAL_H

#include "analysis/heap.h"
#include "analysis/values.h"

#include "util/idmap.h"

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Names (heap_names.c) ---------------------------------------------- */

/* All names live in one growing arena and are named by offset, so that no
 * pointer breaks when it grows. A rename appends and leaves the old name
 * unused: renames are rare. */
struct arena {
	char *buf;
	size_t len, cap;
};

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

/* The name's offset + 1, 0 for no name; UINT64_MAX when out of memory. */
uint64_t heap_arena_add(struct arena *a, const char *name);
/* The entry of id, created when absent; NO_ENTRY when out of memory. */
uint32_t heap_registry_entry(struct registry *reg, ht_id id);
void heap_registry_free(struct registry *reg);

/* ---- What a dump takes from the trace when it ends (heap_names.c) ------ */

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

void heap_meta_free(struct dump_meta *m);
int heap_snapshot_classes(const struct registry *reg, const struct arena *names,
		     struct dump_meta *m);
int heap_snapshot_names(const struct registry *reg, const struct arena *names,
		   struct heap_name **out, size_t *n_out);
int heap_snapshot_fields(const struct registry *reg, const struct arena *names,
		    struct dump_meta *m);

/* ---- A dump as it arrives (heap.c) ------------------------------------- */

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

void heap_raw_free(struct raw_dump *raw);

static inline uint64_t part_end(const struct raw_dump *raw, size_t p)
{
	return raw->ref_end32 ? raw->ref_end32[p] : raw->ref_end[p];
}

static inline uint64_t part_begin(const struct raw_dump *raw, size_t p)
{
	return p ? part_end(raw, p - 1) : 0;
}

static inline bool part_continues(const struct raw_dump *raw, size_t p)
{
	return raw->continued[p / 64] >> (p % 64) & 1;
}

/* ---- Building the graph (heap_build.c) --------------------------------- */

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

static inline bool begins_object(const struct kept_parts *k, size_t i)
{
	return k->first[i / 64] >> (i % 64) & 1;
}

#define BUILD_NOMEM (-1)
#define BUILD_LIMIT (-2)

/* The graph of the collected dump, consuming raw and m: 0 and *out, or
 * BUILD_NOMEM or BUILD_LIMIT. */
int heap_build_graph(struct raw_dump *raw, struct dump_meta *m,
		struct heap **out);
/* Offsets that all fit 4 bytes to 4 bytes, where they lie. */
uint32_t *heap_narrow_in_place(uint64_t *wide, size_t n);
/* Where `at` is, or would go, in a list of big sizes by position (object
 * or part). */
size_t heap_big_size_slot(const struct heap_big_size *big, size_t n, uint32_t at);
/* The resolved refs of the kept parts, object after object. */
uint32_t *heap_gather_refs(const struct raw_dump *raw, const struct kept_parts *k,
		      const uint32_t *resolved, uint64_t total);

/* ---- Objects by id (heap_ids.c) ---------------------------------------- */

/* Turns the raw refs and roots into indices; the refs end in h->ref. */
int heap_resolve(struct raw_dump *raw, struct kept_parts *k, struct heap *h);

/* ---- Fields (heap_fields.c) -------------------------------------------- */

int heap_gather_ref_fields(struct raw_dump *raw, const struct kept_parts *k,
		      const struct heap *h, uint32_t **out);
uint32_t *heap_take_ref_fields(struct raw_dump *raw);
int heap_compact_ref_fields(struct heap *h, uint32_t *field);

/* ---- Values (heap_values.c) -------------------------------------------- */

int heap_gather_values(struct raw_dump *raw, const struct kept_parts *k,
		  struct heap *h);

#endif
