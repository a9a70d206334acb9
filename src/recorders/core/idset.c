/*
 * idset.c - a set of ids readable and, within limits, writable inside a
 * GC pause (idset.h).
 */
#include "recorders/core/idset.h"

#include <stdlib.h>
#include <string.h>

static struct idset_table *table_new(size_t cap)
{
	struct idset_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->keys = calloc(cap, sizeof(*t->keys));
	if (!t->keys) {
		free(t);
		return NULL;
	}
	t->mask = cap - 1;
	return t;
}

static void table_free(struct idset_table *t)
{
	free((void *)t->keys);
	free(t);
}

static size_t round_pow2(size_t n)
{
	size_t p = 64;

	while (p < n)
		p *= 2;
	return p;
}

int idset_init(struct idset *s, size_t initial_cap)
{
	struct idset_table *t;

	memset(s, 0, sizeof(*s));
	t = table_new(round_pow2(initial_cap));
	if (!t)
		return -1;
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		table_free(t);
		return -1;
	}
	atomic_init(&s->table, t);
	return 0;
}

void idset_destroy(struct idset *s)
{
	struct idset_table *t = atomic_load(&s->table), *next;

	if (t)
		table_free(t);
	for (t = s->retired; t; t = next) {
		next = t->retired_next;
		table_free(t);
	}
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
}

/* Ids are addresses: their low bits are alignment, the high ones alike. */
static size_t hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id;
}

bool idset_contains(const struct idset *s, uint64_t id)
{
	const struct idset_table *t;

	t = atomic_load_explicit(&s->table, memory_order_acquire);
	if (id == 0)
		return false; /* 0 marks the empty slots */
	for (size_t i = hash(id) & t->mask, n = 0; n <= t->mask;
	     i = (i + 1) & t->mask, n++) {
		uint64_t k = atomic_load_explicit(&t->keys[i],
						  memory_order_relaxed);

		if (k == id)
			return true;
		if (k == 0)
			return false;
	}
	return false;
}

/* 1 added, 0 present, -1 full. Lock-free. */
static int table_add(struct idset_table *t, uint64_t id)
{
	for (size_t i = hash(id) & t->mask, n = 0; n <= t->mask;
	     i = (i + 1) & t->mask, n++) {
		uint64_t k = atomic_load_explicit(&t->keys[i],
						  memory_order_relaxed);

		if (k == id)
			return 0;
		if (k != 0)
			continue;
		if (atomic_compare_exchange_strong_explicit(
			    &t->keys[i], &k, id, memory_order_relaxed,
			    memory_order_relaxed)) {
			atomic_fetch_add_explicit(&t->count, 1,
						  memory_order_relaxed);
			return 1;
		}
		if (k == id)
			return 0;
	}
	return -1;
}

/* Under the lock: a table twice as big with every id, published.
 * Not util/alloc.h's growth nor util/idmap.h: adds inside a GC pause run
 * on this table without a lock or malloc, and a thread suspended there
 * may still read the old table, so it is replaced (and retired), never
 * reallocated. Its ids are the runtime's class pointers, not input, so
 * the fixed hash cannot be steered; calloc checks the size product. */
static struct idset_table *grow(struct idset *s, struct idset_table *t)
{
	struct idset_table *n = table_new((t->mask + 1) * 2);

	if (!n)
		return NULL;
	for (size_t i = 0; i <= t->mask; i++) {
		uint64_t k = atomic_load_explicit(&t->keys[i],
						  memory_order_relaxed);

		if (k)
			table_add(n, k);
	}
	atomic_store_explicit(&s->table, n, memory_order_release);
	t->retired_next = s->retired;
	s->retired = t;
	return n;
}

int idset_add(struct idset *s, uint64_t id, bool in_pause)
{
	struct idset_table *t;
	int rc;

	if (id == 0)
		return -1;
	if (in_pause) {
		t = atomic_load_explicit(&s->table, memory_order_acquire);
		/* leave room so that lookups always meet an empty slot */
		if (atomic_load_explicit(&t->count, memory_order_relaxed) >=
		    t->mask - t->mask / 8)
			return idset_contains(s, id) ? 0 : -1;
		return table_add(t, id);
	}
	pthread_mutex_lock(&s->lock);
	t = atomic_load_explicit(&s->table, memory_order_relaxed);
	if (atomic_load_explicit(&t->count, memory_order_relaxed) + 1 >
	    (t->mask + 1) / 2) {
		struct idset_table *n = grow(s, t);

		if (n)
			t = n;
	}
	rc = table_add(t, id);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int idset_make_room(struct idset *s, size_t more)
{
	struct idset_table *t;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	t = atomic_load_explicit(&s->table, memory_order_relaxed);
	while (atomic_load_explicit(&t->count, memory_order_relaxed) + more >
	       (t->mask + 1) / 2) {
		struct idset_table *n = grow(s, t);

		if (!n) {
			rc = -1;
			break;
		}
		t = n;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void idset_for_each(struct idset *s, void (*fn)(uint64_t id, void *ctx),
		    void *ctx)
{
	struct idset_table *t;

	pthread_mutex_lock(&s->lock);
	t = atomic_load_explicit(&s->table, memory_order_acquire);
	pthread_mutex_unlock(&s->lock);
	/* tables are retired, never freed, until idset_destroy */
	for (size_t i = 0; i <= t->mask; i++) {
		uint64_t k = atomic_load_explicit(&t->keys[i],
						  memory_order_relaxed);

		if (k)
			fn(k, ctx);
	}
}
