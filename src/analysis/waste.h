/*
 * waste.h - what a dump's values say it wastes (doc/design.md section 3,
 * waste): strings with equal text and primitive arrays with equal
 * contents, kept more than once; collections empty or under half full.
 *
 * It needs the dump's values (heap_scan_with, values): equal records are
 * kept once in the values' arena (analysis/values.h), so two arrays are
 * equal exactly when their records share an offset, whether the trace
 * kept them whole or as a prefix and a hash (equal type, length, prefix
 * and hash: equal). Grouping is a sort of (offset, object) pairs: no
 * hashing of contents, and memory in proportion to the strings and
 * arrays, not the heap.
 *
 * No CLI knowledge here: waste_* only compute.
 */
#ifndef HT_WASTE_H
#define HT_WASTE_H

#include "analysis/heap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A field that holds copies of a group (an index + 1 into h->fields;
 * slot UINT32_MAX: the field is one whatever subclass's objects hold
 * it), or, for an array's element or an unnamed field (HEAP_NO_FIELD),
 * the referrers' class slot (heap_class_slot); with one such reference
 * to name it by (edge: an index into h->ref of object from) and how many
 * references of that kind point at the copies.
 * This struct is not an API; it may change from one release to the next. */
struct waste_holder {
	uint32_t slot;
	uint32_t field;
	uint32_t from;
	uint64_t edge;
	uint64_t count;
};

struct waste_member;

/*
 * Objects of equal contents. For strings: java.lang.String objects whose
 * value arrays are equal (and so is their coder), or System.String
 * objects of equal characters. `first` is the one of lowest id (the text
 * or contents to show); `count` how many there are; `arrays` the
 * distinct value arrays among them (a java.lang.String's copies may
 * share one); `bytes` the self sizes of the objects and of their
 * distinct arrays; `wasted` what would go if one copy were kept: bytes
 * less the first and its array.
 * This struct is not an API; it may change from one release to the next.
 */
struct waste_group {
	uint32_t first;
	uint64_t count;
	uint64_t arrays;
	uint64_t bytes;
	uint64_t wasted;
	/* filled by waste_find_holders for the first groups only: the
	 * most frequent first */
	size_t n_holders;
	struct waste_holder *holders;
	size_t run;            /* private: where its objects are in members */
};

/* The groups of one kind, by wasted bytes (most first), then count, then
 * first's id; with their totals.
 * This struct is not an API; it may change from one release to the next. */
struct waste_duplicates {
	uint64_t examined;     /* strings, or arrays not a string's */
	size_t n_groups;       /* groups of two or more */
	struct waste_group *groups;
	uint64_t objects;      /* in those groups */
	uint64_t copies;       /* objects beyond one per group */
	uint64_t wasted;       /* bytes */
	/* private: every candidate, sorted by contents, kept for
	 * waste_find_holders */
	struct waste_member *members;
	size_t n_members;
	uint64_t members_charged;
};

/*
 * Empty and sparse collections (analysis/collections.h) of one class, or
 * of all: how many, how many of unknown size (no values for them), how
 * many empty (size 0) and the bytes those take with their backing arrays
 * (what allocating them only when first used would save), how many
 * sparse (holding something, but less than half their capacity) and the
 * bytes their empty slots take. A HashSet's inner HashMap counts as the
 * set, not again as a map.
 * This struct is not an API; it may change from one release to the next.
 */
struct waste_collection_row {
	uint32_t slot;         /* heap_class_slot; any in the totals */
	uint64_t count, unknown;
	uint64_t empty, empty_bytes;
	uint64_t sparse, sparse_bytes;
};

/* This struct is not an API; it may change from one release to the next. */
struct waste_collections {
	size_t n_rows;         /* the classes with collections */
	struct waste_collection_row *rows; /* by empty_bytes + sparse_bytes,
					      most first, then class slot */
	struct waste_collection_row all;
};

/* This struct is not an API; it may change from one release to the next. */
struct waste {
	bool has_values;       /* the dump kept values: else nothing is known */
	struct waste_duplicates strings;
	struct waste_duplicates arrays; /* primitive arrays no string holds
					   as its value */
	struct waste_collections collections;
	uint64_t charged;      /* groups, holders and rows, to the memory
				  budget */
};

/* The figures a budget names (diff --fail-if waste:...), which need no
 * groups kept.
 * This struct is not an API; it may change from one release to the next. */
struct waste_totals {
	uint64_t string_copies, string_bytes;
	uint64_t array_copies, array_bytes;
	uint64_t empty_collections, empty_bytes;
	uint64_t sparse_collections, sparse_bytes;
};

/*
 * Finds the duplicate strings and primitive arrays of h, and its empty
 * and sparse collections. 0, or -1 with
 * err filled (out of memory, or the memory budget refused). A dump
 * without values gives w->has_values false and no groups.
 */
int waste_compute(const struct heap *h, struct waste *w,
		  struct ht_error *err);

/*
 * The referrers of the copies in the first `groups` groups of d: per
 * group the (class, field) pairs that hold its objects, at most
 * max_holders of them, most references first (ties by class slot, then
 * field). One pass over the references. 0, or -1 with err filled.
 */
int waste_find_holders(const struct heap *h, struct waste *w,
		       struct waste_duplicates *d, size_t groups,
		       size_t max_holders, struct ht_error *err);

void waste_totals_of(const struct waste *w, struct waste_totals *t);

void waste_free(struct waste *w);

/* Whether object is a string whose text values.h can give:
 * java.lang.String or System.String. */
bool waste_is_string_class(const char *name);

#endif
