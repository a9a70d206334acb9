/*
 * collections.h - the collections of a dump's graph (doc/design.md section
 * 3, collections): whether an object is a known Java or .NET collection,
 * how many entries it holds (its size), how many slots its backing array
 * has allocated (its capacity), and the bytes its empty slots take.
 *
 * The size comes only from the collection's own primitive fields, so only
 * from a dump that kept values (heap_scan_with, values): without them it
 * is unknown, never guessed (a count of non-null slots is no size: a list
 * may hold nulls, a hash table chains several entries in one slot). The
 * capacity comes from the backing array: a Java array's length is its
 * element references, which HPROF and the JVM recorder keep with their
 * nulls; a .NET array's only from its values (the CLR reports no null
 * element), so a .NET capacity needs values too. A null backing array is
 * capacity 0.
 */
#ifndef HT_COLLECTIONS_H
#define HT_COLLECTIONS_H

#include <stdbool.h>
#include <stdint.h>

struct heap;

/* A kind of collection (an entry of the table in collections.c).
 * This struct is not an API; it may change from one release to the next. */
struct collection_kind {
	const char *name;  /* the class as matched: "java.util.HashMap",
			      "System.Collections.Generic.Dictionary" (a
			      .NET generic by its name without arguments) */
	const char *family;/* "map", "set", "list", "deque", "queue",
			      "stack": how a report may group kinds */
};

/* What one collection holds and allocates.
 * This struct is not an API; it may change from one release to the next. */
struct collection {
	const struct collection_kind *kind;
	bool has_size;         /* false: the dump kept no values for it */
	uint64_t size;         /* entries it holds */
	bool has_capacity;     /* false: its backing array's length unknown */
	uint64_t capacity;     /* entries its backing array(s) have room for */
	uint64_t array_bytes;  /* self sizes of its backing arrays */
	/* the share of array_bytes the empty slots take:
	 * array_bytes * (capacity - size) / capacity; 0 unless size and
	 * capacity are both known (and when size >= capacity) */
	uint64_t wasted;
	uint32_t array;        /* the backing array that gives the capacity,
				  HEAP_NONE when null or unknown */
};

/* The kind of collection a class of this name is, NULL for none. Cheap
 * enough per class, not per object: a caller walking every object looks
 * its classes up once (h->classes[h->cls[o]].name). */
const struct collection_kind *collection_kind_of_class(const char *name);

/* Measures object as a collection of kind k (its class's kind). */
void collection_measure(const struct heap *h, uint32_t object,
			const struct collection_kind *k, struct collection *c);

/* Whether object is a known collection; if so, *c measured. */
bool collection_of(const struct heap *h, uint32_t object,
		   struct collection *c);

/* Called with each object whose values measuring object (a known
 * collection: collection_of) reads, as collection_of would follow its
 * references: the object, its backing array, a set's map and the map's,
 * a ConcurrentHashMap's counter cells. Reads no values, so that a graph
 * built without them says which objects a second read must keep them
 * for (labels.h, object_label_sources). An object may come twice. */
typedef void (*object_fn)(void *ctx, uint32_t object);
void collection_sources(const struct heap *h, uint32_t object,
			object_fn add, void *ctx);

#endif
