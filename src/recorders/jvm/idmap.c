/*
 * idmap.c - the open-addressing map of idmap.h.
 */
#include "recorders/jvm/idmap.h"

#include <stdlib.h>
#include <string.h>

#define MIN_CAPACITY 1024u

void idmap_init(struct idmap *m)
{
	memset(m, 0, sizeof(*m));
}

void idmap_free(struct idmap *m)
{
	free(m->v);
	idmap_init(m);
}

void idmap_clear(struct idmap *m)
{
	if (m->v)
		memset(m->v, 0, (m->mask + 1) * sizeof(*m->v));
	m->count = 0;
}

/*
 * Tags are handed out in sequence, and a walk meets the objects it tagged
 * before in about the order it tagged them: keeping neighbours in
 * neighbouring entries makes those lookups hit the cache. So the low bits
 * of a key pick its entry as they are; the high ones, mixed in, spread
 * keys that are far apart (and method ids, which are pointers).
 */
static size_t slot_of(uint64_t key, size_t mask)
{
	return (size_t)(key ^ (key >> 24) ^ (key >> 48)) & mask;
}

/* The entry of key, or the empty one where it would go. */
static struct idmap_entry *probe(struct idmap_entry *v, size_t mask,
				 uint64_t key)
{
	size_t i = slot_of(key, mask);

	while (v[i].key != 0 && v[i].key != key)
		i = (i + 1) & mask;
	return &v[i];
}

bool idmap_get(const struct idmap *m, uint64_t key, uint32_t *value)
{
	const struct idmap_entry *e;

	if (!m->v)
		return false;
	e = probe(m->v, m->mask, key);
	if (e->key == 0)
		return false;
	*value = e->value;
	return true;
}

static int grow(struct idmap *m)
{
	size_t cap = m->v ? (m->mask + 1) * 2 : MIN_CAPACITY;
	struct idmap_entry *v = calloc(cap, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; m->v && i <= m->mask; i++)
		if (m->v[i].key)
			*probe(v, cap - 1, m->v[i].key) = m->v[i];
	free(m->v);
	m->v = v;
	m->mask = cap - 1;
	return 0;
}

int idmap_get_or_add(struct idmap *m, uint64_t key, uint32_t *value)
{
	struct idmap_entry *e;

	if (m->v) {
		e = probe(m->v, m->mask, key);
		if (e->key) {
			*value = e->value;
			return 1;
		}
		/* at most half full keeps linear probing short */
		if ((m->count + 1) * 2 <= m->mask + 1)
			goto add;
	}
	if (grow(m) < 0)
		return -1;
	e = probe(m->v, m->mask, key);
add:
	e->key = key;
	e->value = *value;
	m->count++;
	return 0;
}

int idmap_put(struct idmap *m, uint64_t key, uint32_t value)
{
	uint32_t v = value;
	int rc = idmap_get_or_add(m, key, &v);

	if (rc == 1)
		probe(m->v, m->mask, key)->value = value;
	return rc < 0 ? -1 : 0;
}
