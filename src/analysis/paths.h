/*
 * paths.h - the shortest paths from roots to an object of a dump's graph
 * (heap.h), at a reachability level (levels.h).
 */
#ifndef HT_PATHS_H
#define HT_PATHS_H

#include "analysis/heap.h"
#include "analysis/levels.h"

#include <heaptrace/trace.h>

#include <stddef.h>
#include <stdint.h>

struct heap_path {
	size_t root;        /* index into h->roots */
	size_t length;      /* objects on the path, the target included */
	uint32_t *objects;  /* root-side first, ending with the target */
	uint32_t *fields;   /* fields[i]: index of the reference from objects[i]
			       to objects[i + 1] in objects[i]'s refs (length - 1 of them) */
};

/*
 * Shortest paths from roots to target: the shortest first, then further
 * shortest paths that end at other roots, at most max_paths, ordered by
 * length, then by root index. Only the roots and references that count at
 * `level` make paths (heap_root_counts, heap_follows). Returns the number
 * of paths (0: no root reaches the target at that level), or -1 with err
 * filled. Free with heap_paths_free.
 */
long heap_paths(const struct heap *h, uint32_t target, size_t max_paths,
		enum heap_level level, struct heap_path **paths,
		struct ht_error *err);
void heap_paths_free(struct heap_path *paths, size_t n);

#endif
