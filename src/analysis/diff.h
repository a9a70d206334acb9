/*
 * diff.h - what changed between two dumps (doc/design.md section 6, `diff`):
 * dump A, before, and dump B, after, of one trace or of two.
 *
 * It compares them three ways:
 *  - per class name (class ids differ between runs): count, self bytes and
 *    retained bytes before and after;
 *  - the retainers whose retained size grew most. Objects are matched
 *    across the dumps by identity when both are of one trace (the caller
 *    passes the match, from diff_match_by_relocation), and otherwise by
 *    their path from the roots: objects whose shortest path has the same
 *    root (its static field where the trace names it, else its container
 *    or kind and what names it, such as the method of a frame) and the
 *    same chain of classes and steps (fields by name where the trace has
 *    them, else positions; an array's element by the array's class, not
 *    its slot; a node that hangs from a node of its own class, as a hash
 *    bucket's next entry, by the path of the first) share a signature,
 *    all the objects of one signature are one row, as "compare by path"
 *    does in heap analyzers, and of a signature with m objects in A and n
 *    in B, min(m, n) are old and the rest new. So a hash table's entries
 *    match through a resize that moves them to other slots. Roots are
 *    searched in an order of their own, not the runtime's, and hidden
 *    classes' addresses are left out, so that two runs of one program
 *    give the same signatures;
 *  - the objects new in B (no match in A) that objects living in both
 *    dumps retain: each new object is counted for the nearest object above
 *    it in B's dominator tree that is not new.
 *
 * Everything is ordered with ties broken by name or id, so the same dumps
 * give the same answer. No CLI knowledge here: diff_* only compute.
 */
#ifndef HT_DIFF_H
#define HT_DIFF_H

#include "analysis/dominators.h"
#include "analysis/heap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum diff_metric {
	DIFF_COUNT,     /* objects */
	DIFF_BYTES,     /* self sizes */
	DIFF_RETAINED,  /* retained sizes */
	/* a site's only (diff --fail-if site:NAME): the bytes its objects
	 * take in the dump, and the bytes it allocated (sites.h) */
	DIFF_LIVE,
	DIFF_ALLOCATED,
};

/* A figure in dump A and in dump B. Both are below HEAP_MAX_BYTES, so
 * their difference fits an int64_t.
 * This struct is not an API; it may change from one release to the next. */
struct diff_value {
	uint64_t before, after;
};

static inline int64_t diff_change(struct diff_value v)
{
	return (int64_t)(v.after - v.before);
}

enum diff_matching {
	DIFF_BY_ID,    /* one trace: the same object, through its moves */
	DIFF_BY_PATH,  /* two traces: the same path from the roots */
};

/* One class name. retained: the retained sizes of its objects that no
 * other object of that name dominates (as `top --classes` counts).
 * This struct is not an API; it may change from one release to the next. */
struct diff_class {
	char *name;
	struct diff_value count, bytes, retained;
};

/*
 * A retainer whose retained size grew: by id one object of B (before: its
 * match in A, HEAP_NONE when it is new); by path every object of one
 * signature, after naming the one of lowest id in B and before the one of
 * lowest id in A (HEAP_NONE when A has none), retained counting only the
 * objects that no object of the signature dominates.
 * This struct is not an API; it may change from one release to the next.
 */
struct diff_retainer {
	uint32_t after, before;
	struct diff_value objects;
	struct diff_value retained;
};

/* An object of B that is not new (before: its match in A by id, HEAP_NONE
 * by path) and the new objects it is the nearest such dominator of.
 * This struct is not an API; it may change from one release to the next. */
struct diff_holder {
	uint32_t after, before;
	uint64_t new_objects;
	uint64_t new_bytes;
};

/* This struct is not an API; it may change from one release to the next. */
struct diff {
	const struct heap *a, *b;
	const struct heap_dominators *da, *db;
	enum diff_matching matching;

	/* the whole dump: objects, self bytes, and bytes the strong roots
	 * retain (the reachable ones) */
	struct diff_value objects, bytes, retained;

	/* every class name of either dump; by self bytes grown (most first),
	 * then retained, then count, then name */
	size_t n_classes;
	struct diff_class *classes;

	/* retained size grew; by growth, then retained after, then id in B */
	size_t n_retainers;
	struct diff_retainer *retainers;

	/* by new bytes, then new objects, then id in B */
	size_t n_holders;
	struct diff_holder *holders;
	uint64_t new_objects, new_bytes;        /* reachable in B, new */
	uint64_t unheld_objects, unheld_bytes;  /* new, under no old object */

	/* private: the match, the shortest-path trees */
	const uint32_t *a_of_b;
	uint32_t *parent_a, *via_a, *parent_b, *via_b;
	uint64_t charged;        /* the per-object arrays, to the memory budget */
};

/*
 * Compares dump a (dominators da) with dump b (db). a_of_b, when not NULL,
 * is the match by identity: per object of b its index in a, or HEAP_NONE
 * when a lacks it; it is borrowed and must outlive d, as must the dumps
 * and their dominators. NULL matches by path. Returns 0, or -1 with err
 * filled (out of memory). Free with diff_free.
 */
int diff_compute(struct diff *d, const struct heap *a,
		 const struct heap_dominators *da, const struct heap *b,
		 const struct heap_dominators *db, const uint32_t *a_of_b,
		 struct ht_error *err);
void diff_free(struct diff *d);

/*
 * The match by identity of two dumps of one trace: replays r (opened at
 * its start) through the relocation tracker, which follows every object
 * through its moves, and sets (*a_of_b)[i] to the index in a of object i
 * of b, or HEAP_NONE. events is at least the number of events before the
 * later dump ends (heap_scan's count): each object begins to be tracked
 * at one event, so no serial number reaches it. Damage after the dumps
 * is no error. Returns 0, or -1 with err filled; free *a_of_b.
 */
int diff_match_by_relocation(struct ht_reader *r, const struct heap *a,
			     const struct heap *b, uint64_t events,
			     uint32_t **a_of_b, struct ht_error *err);

/* The path from the roots to an object of a (after false) or b, as
 * "C_RT_CLASS (Cache) > Cache > [0] Object[] > [3] Entry", with the middle
 * of a path longer than 10 objects left out ("> ... (42 more) >").
 * "(unreachable)" when no strong root reaches it. malloc'd; NULL when out
 * of memory. */
char *diff_path(const struct diff *d, bool after, uint32_t object);

/* ---- figures by name, for budgets --------------------------------------- */

void diff_total(const struct diff *d, enum diff_metric m, struct diff_value *v);

/* A class's figure; false (and zeros) when neither dump has the name. */
bool diff_class_value(const struct diff *d, const char *name,
		      enum diff_metric m, struct diff_value *v);

/*
 * An object's figure (count: 1 if the dump has it): after, the object
 * with this id in B; before, its match in A (by id: through the moves; by
 * path: the object with the same id). When B lacks the id, the object of
 * A with that id is the one before.
 */
void diff_object_value(const struct diff *d, ht_id id, enum diff_metric m,
		       struct diff_value *v);

#endif
