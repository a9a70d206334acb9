/*
 * field_table.c - the declared reference fields of a trace, by id (see
 * field_table.h).
 */
#include "lib/read/field_table.h"

#include "util/alloc.h"
#include "util/membudget.h"

#include <stdlib.h>
#include <string.h>

void field_table_init(struct field_table *t)
{
	memset(t, 0, sizeof(*t));
	idmap_init(&t->sparse);
}

void field_table_free(struct field_table *t)
{
	free(t->dense);
	idmap_free(&t->sparse);
	free(t->entries);
	free(t->names);
	mem_budget_release(t->charged);
	field_table_init(t);
}

static const char *entry_name(const struct field_table *t,
			      const struct field_entry *e)
{
	return e->name_at == UINT32_MAX ? NULL : t->names + e->name_at;
}

const struct field_entry *field_table_find(const struct field_table *t,
					   ht_id id)
{
	uint32_t i;

	if (id < t->dense_cap)
		return t->dense[id] ? &t->entries[t->dense[id] - 1] : NULL;
	if (id < FIELD_TABLE_DENSE || !idmap_get(&t->sparse, id, &i))
		return NULL;
	return &t->entries[i];
}

bool field_table_get(const struct field_table *t, ht_id id,
		     struct ht_field *out)
{
	const struct field_entry *e = field_table_find(t, id);

	if (!e)
		return false;
	out->id = e->id;
	out->class_id = e->class_id;
	out->name = entry_name(t, e);
	out->kind = e->kind;
	out->type = e->type;
	out->has_offset = e->has_offset;
	out->offset = e->offset;
	return true;
}

static bool same_name(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool declared_alike(const struct field_table *t,
			   const struct field_entry *e, const struct ht_field *f)
{
	return e->class_id == f->class_id && e->kind == f->kind &&
	       e->type == f->type &&
	       e->has_offset == f->has_offset &&
	       (!e->has_offset || e->offset == f->offset) &&
	       same_name(entry_name(t, e), f->name);
}

/* Room in the dense index for id; the array doubles so that ids declared
 * in ascending order cost O(n) copying in all. */
static int dense_reserve(struct field_table *t, ht_id id)
{
	size_t old = t->dense_cap, want = old ? old : 64;

	while (want <= id)
		want *= 2;
	if (want > FIELD_TABLE_DENSE)
		want = FIELD_TABLE_DENSE;
	if (mem_budget_charge((want - old) * sizeof(*t->dense)) < 0)
		return -1;
	if (RESIZE_ARRAY(t->dense, want) < 0) {
		mem_budget_release((want - old) * sizeof(*t->dense));
		return -1;
	}
	t->charged += (want - old) * sizeof(*t->dense);
	memset(t->dense + old, 0, (want - old) * sizeof(*t->dense));
	t->dense_cap = want;
	return 0;
}

static int add_entry(struct field_table *t, const struct ht_field *f,
		     uint64_t event_index)
{
	struct field_entry *e;
	size_t len = f->name ? strlen(f->name) + 1 : 0;

	if (t->n_entries >= UINT32_MAX - 1 ||
	    t->names_len + len >= UINT32_MAX ||
	    BUDGET_GROW(t->entries, t->n_entries + 1, t->entries_cap,
			t->charged) < 0 ||
	    BUDGET_GROW(t->names, t->names_len + len, t->names_cap,
			t->charged) < 0)
		return -1;
	if (f->id < FIELD_TABLE_DENSE) {
		if (f->id >= t->dense_cap && dense_reserve(t, f->id) < 0)
			return -1;
		t->dense[f->id] = (uint32_t)t->n_entries + 1;
	} else if (idmap_put(&t->sparse, f->id, (uint32_t)t->n_entries) < 0) {
		return -1;
	}
	e = &t->entries[t->n_entries++];
	e->id = f->id;
	e->class_id = f->class_id;
	e->offset = f->has_offset ? f->offset : 0;
	e->event_index = event_index;
	e->name_at = UINT32_MAX;
	e->kind = f->kind;
	e->type = f->type;
	e->has_offset = f->has_offset;
	if (f->name) {
		memcpy(t->names + t->names_len, f->name, len);
		e->name_at = (uint32_t)t->names_len;
		t->names_len += len;
	}
	return 0;
}

int field_table_declare(struct field_table *t, const struct ht_field *f,
			uint64_t event_index, const struct field_entry **earlier)
{
	const struct field_entry *e = field_table_find(t, f->id);

	*earlier = e;
	if (e)
		return declared_alike(t, e, f) ? FIELD_SAME : FIELD_DIFFERENT;
	return add_entry(t, f, event_index) < 0 ? -1 : FIELD_NEW;
}
