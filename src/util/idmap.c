/*
 * idmap.c - the keyed open-addressing map of idmap.h.
 */
#include "util/idmap.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* Capacity of a table when it first allocates. */
#define FIRST_CAPACITY 64u

void idmap_init(struct idmap *m)
{
	memset(m, 0, sizeof(*m));
}

void idmap_free(struct idmap *m)
{
	free(m->slots);
	idmap_init(m);
}

void idmap_clear(struct idmap *m)
{
	if (m->slots)
		memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
	m->max_probe = 0;
}

uint64_t idhash_key(const void *salt)
{
	static _Atomic uint64_t counter;
	uint64_t key = 0;
	struct timespec ts;

	if (getrandom(&key, sizeof(key), GRND_NONBLOCK) == (ssize_t)sizeof(key))
		return key;
	/* an old kernel or a seccomp filter: what an input cannot know
	 * either, mixed */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	key = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
	      (uint64_t)(uintptr_t)salt ^ (uint64_t)(uintptr_t)&key;
	return idhash(0x9e3779b97f4a7c15ULL * ++counter, key);
}

static size_t home_of(uint64_t key, size_t mask, uint64_t id)
{
	return (size_t)idhash(key, id) & mask;
}

/* The slot of id, or the free one where it would go; *probes counts the
 * slots passed. The table is never full, so the walk ends. */
static struct idmap_slot *probe(struct idmap_slot *slots, size_t mask,
				uint64_t key, uint64_t id, size_t *probes)
{
	size_t i = home_of(key, mask, id), n = 0;

	while (slots[i].used && slots[i].id != id) {
		i = (i + 1) & mask;
		n++;
	}
	*probes = n;
	return &slots[i];
}

bool idmap_get(const struct idmap *m, uint64_t id, uint32_t *value)
{
	const struct idmap_slot *s;
	size_t probes;

	if (!m->slots)
		return false;
	s = probe(m->slots, m->mask, m->key, id, &probes);
	if (!s->used)
		return false;
	*value = s->value;
	return true;
}

/* Moves the entries to a table twice as large (FIRST_CAPACITY at first)
 * under a new key. -1 out of memory, m unchanged. */
static int grow(struct idmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : FIRST_CAPACITY;
	struct idmap_slot *slots;
	uint64_t key;
	size_t longest = 0, probes;

	if (cap > SIZE_MAX / sizeof(*slots))
		return -1;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	key = idhash_key(slots);
	for (size_t i = 0; m->slots && i <= m->mask; i++) {
		if (!m->slots[i].used)
			continue;
		*probe(slots, cap - 1, key, m->slots[i].id, &probes) =
			m->slots[i];
		if (probes > longest)
			longest = probes;
	}
	free(m->slots);
	m->slots = slots;
	m->mask = cap - 1;
	m->key = key;
	m->max_probe = longest;
	return 0;
}

int idmap_get_or_add(struct idmap *m, uint64_t id, uint32_t *value)
{
	struct idmap_slot *s;
	size_t probes;

	if (m->slots) {
		s = probe(m->slots, m->mask, m->key, id, &probes);
		if (s->used) {
			*value = s->value;
			return 1;
		}
		/* at most half full keeps linear probing short */
		if ((m->count + 1) * 2 <= m->mask + 1)
			goto add;
	}
	if (grow(m) < 0)
		return -1;
	s = probe(m->slots, m->mask, m->key, id, &probes);
add:
	*s = (struct idmap_slot){.id = id, .value = *value, .used = 1};
	m->count++;
	if (probes > m->max_probe)
		m->max_probe = probes;
	return 0;
}

int idmap_put(struct idmap *m, uint64_t id, uint32_t value)
{
	uint32_t v = value;
	int rc = idmap_get_or_add(m, id, &v);
	size_t probes;

	if (rc == 1)
		probe(m->slots, m->mask, m->key, id, &probes)->value = value;
	return rc < 0 ? -1 : 0;
}
