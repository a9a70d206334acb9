/*
 * field_table.h - the reference fields a trace has declared (fields
 * events), by their id: what the replay checks references against, and
 * what an analysis looks a field's class and name up in.
 *
 * Field ids are the trace's own small dense numbers, so those below
 * FIELD_TABLE_DENSE are found by an index into an array and only others
 * go through a hash map (util/idmap.h). The table owns copies of the
 * names. What its arrays grow by is charged to the memory budget
 * (util/membudget.h): a trace may declare millions of fields.
 */
#ifndef HT_READ_FIELD_TABLE_H
#define HT_READ_FIELD_TABLE_H

#include <heaptrace/trace.h>

#include "util/idmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ids below this are looked up by index; the array grows to the largest
 * one declared, at most this many entries. */
#define FIELD_TABLE_DENSE (UINT32_C(1) << 22)

/* This struct is not an API; it may change from one release to the next. */
struct field_table {
	uint32_t *dense;     /* id -> entry index + 1, 0 = undeclared */
	size_t dense_cap;
	struct idmap sparse; /* ids from FIELD_TABLE_DENSE up -> entry index */
	struct field_entry *entries;
	size_t n_entries, entries_cap;
	char *names;         /* every name, each with its NUL */
	size_t names_len, names_cap;
	uint64_t charged;    /* to the memory budget */
};

/* A declaration, packed: a trace may declare millions.
 * This struct is not an API; it may change from one release to the next. */
struct field_entry {
	ht_id id;
	ht_id class_id;
	uint64_t offset;
	uint64_t event_index;  /* of the declaration */
	uint32_t name_at;      /* in names, or UINT32_MAX for no name */
	uint8_t kind;
	uint8_t type;          /* version 3: a primitive's, 0 a reference */
	bool has_offset;
};

void field_table_init(struct field_table *t);
void field_table_free(struct field_table *t);

enum field_declared {
	FIELD_NEW,       /* first declaration of the id */
	FIELD_SAME,      /* declared before, alike */
	FIELD_DIFFERENT, /* declared before otherwise: the first one stays */
};

/* Declares f (at the trace's event event_index). Returns what the table
 * knew of the id, and in *earlier its first declaration when there was
 * one; -1 when out of memory or past the memory budget. */
int field_table_declare(struct field_table *t, const struct ht_field *f,
			uint64_t event_index, const struct field_entry **earlier);

/* The entry of id, or NULL when it was never declared. */
const struct field_entry *field_table_find(const struct field_table *t,
					   ht_id id);

static inline bool field_table_has(const struct field_table *t, ht_id id)
{
	if (id < t->dense_cap)
		return t->dense[id] != 0;
	return field_table_find(t, id) != NULL;
}

/* Fills *out with the field id declares, its name pointing into the table
 * (valid until the next declaration); false when it was never declared. */
bool field_table_get(const struct field_table *t, ht_id id,
		     struct ht_field *out);

/* Fields declared. */
static inline size_t field_table_count(const struct field_table *t)
{
	return t->n_entries;
}

#endif
