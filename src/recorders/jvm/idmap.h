/*
 * idmap.h - a map from non-zero 64-bit ids (JVMTI tags, method ids) to
 * 32-bit indexes, for the agent's tables: the objects of a dump by tag,
 * the classes by tag, the methods already named.
 *
 * Open addressing with linear probing over entries that hold the key next
 * to its value: the heap walk looks up every reference it is told about,
 * and on a large heap each lookup is a cache miss, so one probe touches
 * one cache line. Only an insert that crosses the load limit allocates.
 */
#ifndef JVM_IDMAP_H
#define JVM_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idmap_entry {
	uint64_t key;     /* 0 = empty */
	uint32_t value;
};

struct idmap {
	struct idmap_entry *v;
	size_t mask;      /* capacity - 1; capacity is a power of two */
	size_t count;
};

/* An empty map that allocates on the first insert. */
void idmap_init(struct idmap *m);
void idmap_free(struct idmap *m);
/* Forgets every entry and keeps the memory. */
void idmap_clear(struct idmap *m);

/* The value of key, or false when it is absent. key must not be 0. */
bool idmap_get(const struct idmap *m, uint64_t key, uint32_t *value);

/* Sets key to value (replacing any). 0, or -1 when out of memory. */
int idmap_put(struct idmap *m, uint64_t key, uint32_t value);

/* The value of key if it is there (returns 1); else adds key with *value
 * (returns 0). -1 when out of memory. */
int idmap_get_or_add(struct idmap *m, uint64_t key, uint32_t *value);

#endif
