/*
 * fields.c - the reference fields of classes for the Mono profiler: each
 * class's table (its own and inherited instance fields, its own static
 * ones, by offset), built in the pause that first meets the class with
 * Mono's plain getters, in memory allocated before and grown between
 * pauses; each field declared once by a `fields` event.
 */
#include "recorders/mono/mono.h"
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- reference fields ---------------------------------------------------- */

static size_t class_hash(uintptr_t k)
{
	uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 32);
}

static struct class_fields *class_entry(struct field_tables *t, uintptr_t k)
{
	for (size_t i = class_hash(k) & t->mask;; i = (i + 1) & t->mask)
		if (t->classes[i].klass == k || t->classes[i].klass == 0)
			return &t->classes[i];
}

static bool is_reference_field(MonoClassField *f, uint32_t flags)
{
	if (flags & FIELD_LITERAL)
		return false; /* a constant: no storage */
	return mono_type_is_reference(mono_field_get_type(f));
}

/* Pool slots from at to at + n by offset: insertion sort, as the slices
 * are short and this runs in a pause (qsort may allocate). */
static void sort_slots(struct field_slot *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct field_slot x = s[i];
		size_t j = i;

		for (; j > 0 && s[j - 1].offset > x.offset; j--)
			s[j] = s[j - 1];
		s[j] = x;
	}
}

/* Declares a class's own reference fields, batched. */
struct field_batch {
	size_t n;
	struct ht_field f[64];
};

static void batch_flush(struct field_batch *b)
{
	if (b->n)
		ht_fields(state.trace.rec, b->n, b->f);
	b->n = 0;
}

static void batch_add(struct field_batch *b, struct ht_field f)
{
	if (b->n == ARRAY_SIZE(b->f))
		batch_flush(b);
	b->f[b->n++] = f;
}

/* Room in the pool for the class's reference fields: the parent's
 * instance ones, then its own instance and static ones. */
static size_t own_reference_fields(MonoClass *k)
{
	void *iter = NULL;
	MonoClassField *f;
	size_t n = 0;

	while ((f = mono_class_get_fields(k, &iter)))
		if (is_reference_field(f, mono_field_get_flags(f)))
			n++;
	return n;
}


/* Fills entry e of class k: its parent's instance fields, then its own
 * reference fields, each given the next id and declared. */
static void build_class_fields(struct class_fields *e, MonoClass *k,
			       const struct class_fields *parent)
{
	struct field_tables *t = &state.ft;
	struct field_slot *pool = t->pool;
	struct field_batch b = {0};
	size_t inherited = parent ? parent->n : 0, n_inst = 0, n_stat = 0;
	size_t own = own_reference_fields(k), at = t->pool_used;
	void *iter = NULL;
	MonoClassField *f;

	if (at + inherited + 2 * own > t->pool_cap ||
	    (parent && !parent->complete)) {
		/* no room (for it or its parent): its references go without
		 * fields until the pool has grown */
		atomic_fetch_add(&state.classes_unmapped, 1);
		if (inherited + 2 * own > t->pool_short)
			t->pool_short = inherited + 2 * own;
		t->incomplete = true;
		return;
	}
	for (size_t i = 0; i < inherited; i++)
		pool[at + n_inst++] = pool[parent->first + i];
	name_class_in_pause(k);
	while ((f = mono_class_get_fields(k, &iter))) {
		uint32_t flags = mono_field_get_flags(f);
		uint32_t offset = mono_field_get_offset(f);
		bool is_static = (flags & FIELD_STATIC) != 0;
		struct field_slot slot;

		if (!is_reference_field(f, flags) || (int32_t)offset < 0)
			continue; /* a thread or context static has none */
		slot = (struct field_slot){offset, ++state.last_field};
		if (is_static)
			pool[at + inherited + own + n_stat++] = slot;
		else
			pool[at + n_inst++] = slot;
		batch_add(&b, (struct ht_field){
			.id = slot.id,
			.class_id = (ht_id)(uintptr_t)k,
			.name = mono_field_get_name(f),
			.kind = is_static ? HT_FIELD_STATIC : HT_FIELD_INSTANCE,
			.has_offset = true,
			.offset = offset,
		});
	}
	batch_flush(&b);
	/* the statics next to the instance fields */
	memmove(pool + at + n_inst, pool + at + inherited + own,
		n_stat * sizeof(*pool));
	sort_slots(pool + at, n_inst);
	sort_slots(pool + at + n_inst, n_stat);
	e->first = (uint32_t)at;
	e->n = (uint32_t)n_inst;
	e->first_static = (uint32_t)(at + n_inst);
	e->n_static = (uint32_t)n_stat;
	e->complete = true;
	t->pool_used = at + n_inst + n_stat;
}

/* The table of class k, built the first time: NULL when there is no room
 * for it. Only in a pause that holds the tables. An array's is empty:
 * its elements are no fields. */
const struct class_fields *class_fields_of(MonoClass *k, int depth)
{
	struct field_tables *t = &state.ft;
	const struct class_fields *parent = NULL;
	struct class_fields *e;
	MonoClass *up;

	if (!k || !t->classes)
		return NULL;
	e = class_entry(t, (uintptr_t)k);
	if (e->klass)
		return e;
	if (mono_class_get_rank(k) == 0 && depth < 64 &&
	    (up = mono_class_get_parent(k)) &&
	    !(parent = class_fields_of(up, depth + 1)))
		return NULL; /* no room for the parent, nor for it */
	/* the parent's table may have taken the entry's place */
	e = class_entry(t, (uintptr_t)k);
	if (e->klass)
		return e;
	if (t->used + 1 > (t->mask + 1) / 4 * 3) {
		atomic_fetch_add(&state.classes_unmapped, 1);
		return NULL;
	}
	*e = (struct class_fields){.klass = (uintptr_t)k};
	t->used++;
	if (mono_class_get_rank(k) == 0)
		build_class_fields(e, k, parent);
	else
		e->complete = true;
	return e;
}

/* The field of a slice at offset, or 0. */
static ht_id field_at(const struct field_slot *s, size_t n, uint64_t offset)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].offset == offset)
			return s[mid].id;
		if (s[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

ht_id instance_field_at(const struct class_fields *c, uintptr_t off)
{
	return c ? field_at(state.ft.pool + c->first, c->n, off) : 0;
}

ht_id static_field_at(MonoClass *k, uintptr_t offset)
{
	const struct class_fields *c;

	if (!state.tables_held || !(c = class_fields_of(k, 0)))
		return 0;
	return field_at(state.ft.pool + c->first_static, c->n_static, offset);
}

bool tables_claim(void)
{
	bool was = false;

	return atomic_compare_exchange_strong(&state.tables_busy, &was, true);
}

void tables_release(void)
{
	atomic_store(&state.tables_busy, false);
}

int field_tables_alloc(struct field_tables *t, size_t classes,
		       size_t slots)
{
	t->classes = calloc(classes, sizeof(*t->classes));
	t->pool = calloc(slots, sizeof(*t->pool));
	if (!t->classes || !t->pool) {
		free(t->classes);
		free(t->pool);
		return -1;
	}
	t->mask = classes - 1;
	t->pool_cap = slots;
	t->used = t->pool_used = t->pool_short = 0;
	t->incomplete = false;
	return 0;
}

/* Between pauses: twice the room when half of it is used, so that the
 * next pause's new classes fit; the classes that found no room are left
 * out of the copy, to be built again. */
void field_tables_make_room(void)
{
	struct field_tables *t = &state.ft, n;
	size_t classes = t->mask + 1, slots = t->pool_cap;

	if (!t->classes || !tables_claim())
		return;
	while (t->used * 4 > classes)
		classes *= 2;
	while ((t->pool_used + t->pool_short) * 2 > slots)
		slots *= 2;
	if ((classes != t->mask + 1 || slots != t->pool_cap ||
	     t->incomplete) &&
	    field_tables_alloc(&n, classes, slots) == 0) {
		memcpy(n.pool, t->pool, t->pool_used * sizeof(*t->pool));
		n.pool_used = t->pool_used;
		for (size_t i = 0; i <= t->mask; i++) {
			if (t->classes[i].klass && t->classes[i].complete) {
				*class_entry(&n, t->classes[i].klass) =
					t->classes[i];
				n.used++;
			}
		}
		free(t->classes);
		free(t->pool);
		*t = n;
	}
	tables_release();
}
