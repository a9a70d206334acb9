/*
 * heap_names.c - the names of a trace's classes, threads, methods and
 * fields (heap_internal.h): tracked over the whole trace as the scan
 * meets them, taken by each dump as they are when it ends (a snapshot,
 * sorted by id, its names in the same allocation), and looked up on the
 * graph (heap.h).
 */
#include "analysis/heap_internal.h"

#include "util/alloc.h"
#include "util/search.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Names -------------------------------------------------------------- */

/* The name's offset + 1, 0 for no name; UINT64_MAX when out of memory. */
uint64_t heap_arena_add(struct arena *a, const char *name)
{
	size_t n, at;

	if (!name)
		return 0;
	n = strlen(name) + 1;
	if (ALLOC_GROW(a->buf, a->len + n, a->cap) < 0)
		return UINT64_MAX;
	at = a->len;
	memcpy(a->buf + at, name, n);
	a->len += n;
	return (uint64_t)at + 1;
}

static const char *arena_name(const struct arena *a, uint64_t name)
{
	return name ? a->buf + name - 1 : NULL;
}

/* The entry of id, created when absent; NO_ENTRY when out of memory. */
uint32_t heap_registry_entry(struct registry *reg, ht_id id)
{
	uint32_t entry;

	if (idmap_get(&reg->map, id, &entry))
		return entry;
	if (reg->n >= UINT32_MAX - 1)
		return NO_ENTRY;
	if (ALLOC_GROW(reg->e, reg->n + 1, reg->cap) < 0 ||
	    idmap_put(&reg->map, id, (uint32_t)reg->n) < 0)
		return NO_ENTRY;
	reg->e[reg->n] = (struct name_entry){.id = id, .used_in = -1};
	return (uint32_t)reg->n++;
}

void heap_registry_free(struct registry *reg)
{
	idmap_free(&reg->map);
	free(reg->e);
}

/* ---- What a dump takes from the trace when it ends ---------------------- */

void heap_meta_free(struct dump_meta *m)
{
	free(m->classes);
	free(m->threads);
	free(m->methods);
	free(m->fields);
	free(m->class_of_entry);
	free(m->bounds);
	memset(m, 0, sizeof(*m));
}

struct picked {
	ht_id id;
	uint32_t entry;
};

static int compare_picked(const void *a, const void *b)
{
	ht_id x = ((const struct picked *)a)->id;
	ht_id y = ((const struct picked *)b)->id;

	return (x > y) - (x < y);
}

/* The entries to snapshot for dump (all declared ones, and for classes
 * those its objects use), sorted by id; *names_bytes the room their names
 * take. */
static struct picked *pick_entries(const struct registry *reg,
				   const struct arena *names, int64_t dump,
				   size_t *n, size_t *names_bytes)
{
	struct picked *p = malloc((reg->n ? reg->n : 1) * sizeof(*p));

	*n = 0;
	*names_bytes = 0;
	if (!p)
		return NULL;
	for (size_t i = 0; i < reg->n; i++) {
		const struct name_entry *e = &reg->e[i];

		if (!e->declared && e->used_in != dump)
			continue;
		p[(*n)++] = (struct picked){.id = e->id, .entry = (uint32_t)i};
		if (e->name)
			*names_bytes += strlen(arena_name(names, e->name)) + 1;
	}
	qsort(p, *n, sizeof(*p), compare_picked);
	return p;
}

/* Copies a name after the array it belongs to; *tail moves past it. */
static const char *copy_name(const struct arena *names, uint64_t name,
			     char **tail)
{
	const char *s = arena_name(names, name);
	char *copy = *tail;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	memcpy(copy, s, n);
	*tail += n;
	return copy;
}

/* The classes, each array followed by its names in one allocation (one
 * free, in heap_free), and where each registry entry went. */
int heap_snapshot_classes(const struct registry *reg,
			    const struct arena *names, struct dump_meta *m)
{
	size_t n, bytes;
	struct picked *p = pick_entries(reg, names, (int64_t)m->dump, &n,
					&bytes);
	char *tail;

	if (!p)
		return -1;
	m->classes = malloc(n * sizeof(*m->classes) + bytes + 1);
	m->class_of_entry = malloc((reg->n ? reg->n : 1) *
				   sizeof(*m->class_of_entry));
	if (!m->classes || !m->class_of_entry) {
		free(p);
		return -1;
	}
	for (size_t i = 0; i < reg->n; i++)
		m->class_of_entry[i] = HEAP_NO_CLASS;
	tail = (char *)(m->classes + n);
	for (size_t i = 0; i < n; i++) {
		const struct name_entry *e = &reg->e[p[i].entry];

		m->classes[i] = (struct heap_class){
			.id = e->id,
			.name = copy_name(names, e->name, &tail),
			.has_size = e->has_size,
			.size = e->size,
		};
		m->class_of_entry[p[i].entry] = (uint32_t)i;
	}
	m->n_classes = n;
	free(p);
	return 0;
}

int heap_snapshot_names(const struct registry *reg,
			  const struct arena *names, struct heap_name **out,
			  size_t *n_out)
{
	size_t n, bytes;
	struct picked *p = pick_entries(reg, names, INT64_MIN, &n, &bytes);
	struct heap_name *list;
	char *tail;

	if (!p)
		return -1;
	list = malloc(n * sizeof(*list) + bytes + 1);
	if (!list) {
		free(p);
		return -1;
	}
	tail = (char *)(list + n);
	for (size_t i = 0; i < n; i++) {
		const struct name_entry *e = &reg->e[p[i].entry];

		list[i] = (struct heap_name){
			.id = e->id,
			.name = copy_name(names, e->name, &tail),
		};
	}
	free(p);
	*out = list;
	*n_out = n;
	return 0;
}

/* Every field named so far, in registry order, so that the entries the
 * raw dump holds need no renumbering: an edge's field is its entry + 1. */
int heap_snapshot_fields(const struct registry *reg,
			   const struct arena *names, struct dump_meta *m)
{
	size_t bytes = 0;
	char *tail;

	for (size_t i = 0; i < reg->n; i++)
		if (reg->e[i].name)
			bytes += strlen(arena_name(names, reg->e[i].name)) + 1;
	m->fields = malloc(reg->n * sizeof(*m->fields) + bytes + 1);
	if (!m->fields)
		return -1;
	tail = (char *)(m->fields + reg->n);
	for (size_t i = 0; i < reg->n; i++) {
		const struct name_entry *e = &reg->e[i];

		m->fields[i] = (struct heap_field){
			.id = e->id,
			.class_id = e->owner,
			.name = e->declared ? copy_name(names, e->name, &tail)
					    : NULL,
			.kind = e->kind,
			.type = e->type,
		};
	}
	m->n_fields = reg->n;
	return 0;
}

/* ---- The graph's names -------------------------------------------------- */

const char *heap_class_name(const struct heap *h, uint32_t object, char *buf)
{
	uint32_t c = h->cls[object];
	ht_id id = 0;

	if (c != HEAP_NO_CLASS) {
		if (h->classes[c].name)
			return h->classes[c].name;
		id = h->classes[c].id;
	}
	snprintf(buf, 32, "?0x%" PRIx64, id);
	return buf;
}

size_t heap_class_slot_of_id(const struct heap *h, ht_id class_id)
{
	size_t lo = LOWER_BOUND(0, h->n_classes, mid,
				h->classes[mid].id < class_id);

	return lo < h->n_classes && h->classes[lo].id == class_id
		? lo : h->n_classes;
}

const char *heap_class_name_by_id(const struct heap *h, ht_id class_id)
{
	size_t c = heap_class_slot_of_id(h, class_id);

	return c < h->n_classes ? h->classes[c].name : NULL;
}

static const char *find_name(const struct heap_name *list, size_t n, ht_id id)
{
	size_t lo = LOWER_BOUND(0, n, mid, list[mid].id < id);

	return lo < n && list[lo].id == id ? list[lo].name : NULL;
}

const char *heap_thread_name(const struct heap *h, ht_id thread)
{
	return find_name(h->threads, h->n_threads, thread);
}

const char *heap_method_name(const struct heap *h, ht_id method)
{
	return find_name(h->methods, h->n_methods, method);
}

static bool names_class_type(const char *name)
{
	return name && (strcmp(name, "java.lang.Class") == 0 ||
			strcmp(name, "System.RuntimeType") == 0);
}

const char *heap_class_object_name(const struct heap *h, uint32_t object)
{
	uint32_t c = h->cls[object];

	if (c == HEAP_NO_CLASS || c >= h->n_classes ||
	    !names_class_type(h->classes[c].name))
		return NULL;
	return heap_class_name_by_id(h, heap_id(h, object));
}
