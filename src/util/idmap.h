/*
 * idmap.h - the one map from 64-bit ids (HPROF ids, a trace's class,
 * thread and method ids, flame's frame keys, JVMTI tags and method ids)
 * to 32-bit values, usually indexes into an array kept in first-seen
 * order.
 *
 * Open addressing with linear probing, at most half full, each slot
 * holding the id next to its value so that a probe touches one cache line.
 * The ids come from the input, which may be hostile: a map that places
 * them by a fixed hash can be fed ids that all land in one run of slots
 * (80,000 class ids whose Fibonacci hashes agreed in their top bits,
 * testdata/hostile/classes-colliding.ht, once made `top` take 13.6 s).
 * So each table places ids by a keyed hash, its key drawn at random when
 * the table is allocated: where an id lands cannot be known in advance.
 * The JVM agent's tags are its own, not input, but one map serves all:
 * their old placement kept consecutive tags in neighbouring slots.
 *
 * The order of the slots therefore changes from run to run; nothing may
 * be printed in slot order, which is why the map offers no iteration.
 */
#ifndef HT_UTIL_IDMAP_H
#define HT_UTIL_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- The keyed hash, also for tables that need more than the map
 * (removal, keys in two parts: the replay's) ---- */

/* A fresh secret for a table (salt: the table's address): from the
 * kernel's random pool, or the clock and addresses if that fails. */
uint64_t idhash_key(const void *salt);

/* Where id goes under a table's secret key: MurmurHash3's 64-bit
 * finalizer of id ^ key, whose every bit changes about half of the bits
 * of the result, the low ones (which pick the slot) included. A plain
 * multiply would leave ids that differ only in high bits in one slot;
 * without the key, ids could be chosen to collide. */
static inline uint64_t idhash(uint64_t key, uint64_t id)
{
	uint64_t x = id ^ key;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* ---- The map ---- */

/* This struct is not an API; it may change from one release to the next. */
struct idmap_slot {
	uint64_t id;
	uint32_t value;
	uint32_t used;    /* any id, 0 included, is a key */
};

/* This struct is not an API; it may change from one release to the next. */
struct idmap {
	struct idmap_slot *slots; /* NULL until the first insert */
	size_t mask;      /* capacity - 1; capacity is a power of two */
	size_t count;
	uint64_t key;     /* the secret of the hash, drawn per table */
	size_t max_probe; /* longest probe an insert took, for the tests */
};

/* An empty map that allocates on the first insert; all zeroes is one too. */
#define IDMAP_INIT {0}
void idmap_init(struct idmap *m);
void idmap_free(struct idmap *m);
/* Forgets every entry and keeps the memory. */
void idmap_clear(struct idmap *m);

/* The value of id in *value, or false when it is absent. */
bool idmap_get(const struct idmap *m, uint64_t id, uint32_t *value);

/* The value of id into *value if it is there (returns 1); else adds id
 * with *value (returns 0). -1 when out of memory, the map unchanged. */
int idmap_get_or_add(struct idmap *m, uint64_t id, uint32_t *value);

/* Adds id with value unless it is there already. 0, or -1 when out of
 * memory. */
static inline int idmap_add(struct idmap *m, uint64_t id, uint32_t value)
{
	return idmap_get_or_add(m, id, &value) < 0 ? -1 : 0;
}

/* Sets id to value, replacing any. 0, or -1 when out of memory. */
int idmap_put(struct idmap *m, uint64_t id, uint32_t value);

/* Ids in the map. */
static inline size_t idmap_count(const struct idmap *m)
{
	return m->count;
}

/* Slots past its home the longest insert had to look at (0: every id
 * went home), since the table was last allocated: what a test checks to
 * know that chosen ids do not pile up. */
static inline size_t idmap_max_probe(const struct idmap *m)
{
	return m->max_probe;
}

#endif
