/*
 * dominators.h - the dominator tree of a dump's graph (heap.h) at a
 * reachability level (levels.h), the retained size of each object and of
 * each group of classes, and the tree's children for walks without
 * recursion.
 */
#ifndef HT_DOMINATORS_H
#define HT_DOMINATORS_H

#include "analysis/heap.h"
#include "analysis/levels.h"

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_VIRTUAL_ROOT (UINT32_MAX - 1) /* idom of objects a root dominates */

/* This struct is not an API; it may change from one release to the next. */
struct heap_dominators {
	uint32_t *idom;          /* per object: its immediate dominator's index,
				    HEAP_VIRTUAL_ROOT, or HEAP_NONE if unreachable */
	uint64_t *retained;      /* per object; 0 when unreachable */
	uint64_t reachable;      /* objects the roots reach at the level */
	uint64_t unreachable;    /* the others */
	uint64_t unreachable_bytes;
	uint64_t weakly_reachable; /* unreachable, but a weak root reaches
				      them (below HEAP_LEVEL_WEAK) */
	enum heap_level level;   /* what it was computed at */
	uint64_t charged;        /* idom and retained, to the memory budget */
};

/* Computes the dominator tree under one virtual root whose children are
 * the roots that count at `level` (heap_root_counts), following the
 * references it follows (heap_follows), in near-linear time and without
 * recursion. Returns 0, or -1 with err filled (out of memory). */
int heap_dominators_at(const struct heap *h, enum heap_level level,
		       struct heap_dominators *d, struct ht_error *err);
/* At HEAP_LEVEL_STRONG: strong roots, referents left out. */
int heap_dominators(const struct heap *h, struct heap_dominators *d,
		    struct ht_error *err);
void heap_dominators_free(struct heap_dominators *d);
/* For tests: the predecessor rows of 8 bytes that only graphs of 2^32
 * edges or more need, taken (true) for any graph. */
void heap_dominators_wide_rows(bool always);

/* This struct is not an API; it may change from one release to the next. */
/*
 * Children of each object in the dominator tree, in index (id) order:
 * first[x] is x's first child, next[x] its next sibling, HEAP_NONE ending
 * either; top is the first child of the virtual root. Walks go down by
 * first and next and back up by the dominators' idom, so they need no
 * recursion and no stack.
 */
struct dom_tree {
	uint32_t *first;
	uint32_t *next;
	uint32_t top;
	uint64_t charged;        /* first and next, to the memory budget */
};

/* 0, or -1 when out of memory. */
int dom_tree_build(const struct heap *h, const struct heap_dominators *d,
		   struct dom_tree *t);
void dom_tree_free(struct dom_tree *t);

/*
 * The object after x in a preorder walk of the tree (HEAP_NONE when the
 * walk is over): x's first child, else the next sibling of x or of its
 * nearest ancestor that has one. A parent comes before its children.
 */
uint32_t dom_tree_next(const struct dom_tree *t,
		       const struct heap_dominators *d, uint32_t x);

/*
 * Retained size per group of classes: each object adds its retained size
 * to its group's only when no other object of the group is above it in
 * the dominator tree, so that a linked list's nodes count once, at its
 * head. group_of_slot maps each class slot (heap_class_slot) to a group
 * below n_groups; NULL makes each slot its own group (n_groups is then
 * h->n_classes + 1). Adds to retained[group]. 0, or -1 when out of
 * memory.
 */
int heap_retained_by_class(const struct heap *h,
			   const struct heap_dominators *d,
			   const uint32_t *group_of_slot, size_t n_groups,
			   uint64_t *retained);
/* The same per group of objects: group_of_object[x] below n_groups, or
 * HEAP_NONE for an object in no group (h->n entries). */
int heap_retained_by_group(const struct heap *h,
			   const struct heap_dominators *d,
			   const uint32_t *group_of_object, size_t n_groups,
			   uint64_t *retained);

#endif
