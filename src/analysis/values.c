/*
 * values.c - the records of objects' values (values.h): written at the
 * arena's end, kept only when no equal record is there already, so that
 * the many objects whose fields hold the same values, and equal strings'
 * arrays, share one.
 */
#include "analysis/values.h"

#include "analysis/heap.h"
#include "lib/common/varint.h"
#include "util/alloc.h"
#include "util/membudget.h"
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

/* The most bytes a record of n values and this array takes. */
static size_t record_bound(size_t n, const struct ht_array_values *array)
{
	size_t bytes = VARINT_MAX + n * 2 * VARINT_MAX + 1;

	if (array)
		bytes += 3 * VARINT_MAX + 8 +
			 (size_t)array->stored * ht_value_type_width(array->type);
	return bytes;
}

static size_t put_record(uint8_t *out, const uint32_t *fields,
			 const uint64_t *values, size_t n,
			 const struct ht_array_values *array)
{
	uint8_t *p = varint_put(out, n);

	for (size_t i = 0; i < n; i++) {
		p = varint_put(p, fields[i]);
		p = varint_put(p, zigzag_encode((int64_t)values[i]));
	}
	*p++ = array != NULL;
	if (array) {
		size_t bytes = (size_t)array->stored *
			       ht_value_type_width(array->type);

		*p++ = array->type;
		p = varint_put(p, array->length);
		p = varint_put(p, array->stored);
		memcpy(p, array->data, bytes);
		p += bytes;
		if (array->stored < array->length) {
			for (int i = 0; i < 8; i++)
				*p++ = (uint8_t)(array->hash >> (8 * i));
		}
	}
	return (size_t)(p - out);
}

/*
 * An index slot: the record's tag in its high 32 bits, its offset in
 * 4-byte units + 1 in its low 32 (0 for a free slot). The tag, 32 bits of
 * the record's hash, picks the slot and screens out most unequal records
 * before their bytes are compared, and growing the index needs no record
 * read again. The offset + 1 fits: a record starts at least its bound
 * before VALUE_ARENA_MAX, so its offset in 4-byte units is below 2^32 - 1.
 */
static uint32_t record_tag(const uint8_t *rec, size_t len)
{
	uint64_t h = ht_values_hash(rec, len);

	h ^= h >> 29;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	return (uint32_t)(h >> 32);
}

static uint64_t slot_of(uint32_t tag, size_t start)
{
	return (uint64_t)tag << 32 | (start / 4 + 1);
}

static uint32_t slot_tag(uint64_t slot)
{
	return (uint32_t)(slot >> 32);
}

static size_t slot_start(uint64_t slot)
{
	return ((size_t)(slot & UINT32_MAX) - 1) * 4;
}

/* Doubles the index (at least 64 slots) and puts every record back. */
static int grow_index(struct value_arena *a)
{
	size_t n = a->n_slots ? 2 * a->n_slots : 64;
	uint64_t *slots;

	if (mem_budget_charge(n * sizeof(*slots)) < 0)
		return -1;
	slots = calloc(n, sizeof(*slots));
	if (!slots) {
		mem_budget_release(n * sizeof(*slots));
		return -1;
	}
	for (size_t i = 0; i < a->n_slots; i++) {
		uint64_t slot = a->slots[i];
		size_t j;

		if (!slot)
			continue;
		j = slot_tag(slot) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = slot;
	}
	free(a->slots);
	mem_budget_release(a->n_slots * sizeof(*slots));
	a->slots = slots;
	a->n_slots = n;
	return 0;
}

int value_arena_add(struct value_arena *a, const uint32_t *fields,
		    const uint64_t *values, size_t n,
		    const struct ht_array_values *array, uint32_t *at)
{
	size_t start = (a->len + 3) & ~(size_t)3, len, j;
	uint8_t *rec;
	uint32_t tag;

	if (start + record_bound(n, array) > VALUE_ARENA_MAX)
		return -2;
	if (BUDGET_GROW(a->bytes, start + record_bound(n, array), a->cap,
			a->charged) < 0 ||
	    ((a->used + 1) * 2 > a->n_slots && grow_index(a) < 0))
		return -1;
	memset(a->bytes + a->len, 0, start - a->len);
	rec = a->bytes + start;
	len = put_record(rec, fields, values, n, array);
	tag = record_tag(rec, len);
	j = tag & (a->n_slots - 1);
	/* records decode alone, so equal leading bytes are an equal record */
	for (; a->slots[j]; j = (j + 1) & (a->n_slots - 1)) {
		size_t old = slot_start(a->slots[j]);

		if (slot_tag(a->slots[j]) == tag && old + len <= start &&
		    memcmp(a->bytes + old, rec, len) == 0) {
			*at = (uint32_t)(old / 4);
			return 0;
		}
	}
	a->slots[j] = slot_of(tag, start);
	a->used++;
	a->len = start + len;
	*at = (uint32_t)(start / 4);
	return 0;
}

void value_arena_end(struct value_arena *a)
{
	free(a->slots);
	mem_budget_release(a->n_slots * sizeof(*a->slots));
	a->slots = NULL;
	a->n_slots = a->used = 0;
}

void value_arena_free(struct value_arena *a)
{
	value_arena_end(a);
	free(a->bytes);
	mem_budget_release(a->charged);
	memset(a, 0, sizeof(*a));
}

/* The arena wrote the record: its varints end where they should. */
static uint64_t get(const uint8_t **p)
{
	uint64_t v = 0;

	(void)varint_get(p, *p + VARINT_MAX, &v);
	return v;
}

void value_record_open(const uint8_t *bytes, uint32_t at,
		       struct value_record *r)
{
	const uint8_t *p = bytes + (size_t)at * 4;

	memset(r, 0, sizeof(*r));
	r->left = (size_t)get(&p);
	r->next = p;
	/* the array after the values: skip them once */
	for (size_t i = 0; i < 2 * r->left; i++)
		(void)get(&p);
	r->has_array = *p++;
	if (!r->has_array)
		return;
	r->array.type = *p++;
	r->array.length = get(&p);
	r->array.stored = get(&p);
	r->array.data = p;
	p += (size_t)r->array.stored * ht_value_type_width(r->array.type);
	if (r->array.stored < r->array.length)
		for (int i = 0; i < 8; i++)
			r->array.hash |= (uint64_t)p[i] << (8 * i);
}

bool value_record_next(struct value_record *r, uint32_t *field,
		       uint64_t *bits)
{
	if (!r->left)
		return false;
	*field = (uint32_t)get(&r->next);
	*bits = (uint64_t)zigzag_decode(get(&r->next));
	r->left--;
	return true;
}

/* ---- strings ------------------------------------------------------------ */

static bool class_named(const struct heap *h, uint32_t object,
			const char *name)
{
	uint32_t c = h->cls[object];

	return c < h->n_classes && h->classes[c].name &&
	       strcmp(h->classes[c].name, name) == 0;
}

bool values_field(const struct heap *h, uint32_t object,
			const char *name, uint64_t *bits)
{
	struct value_record r;
	uint32_t field;

	if (!heap_object_values(h, object, &r))
		return false;
	while (value_record_next(&r, &field, bits))
		if (field < h->n_fields && h->fields[field].name &&
		    strcmp(h->fields[field].name, name) == 0)
			return true;
	return false;
}

uint32_t values_field_object(const struct heap *h, uint32_t object,
				const char *name)
{
	uint64_t e;

	return heap_named_ref(h, object, name, &e) && h->ref[e] < h->n ?
	       h->ref[e] : HEAP_NONE;
}

/* The array object holds its characters in, how they lie, and which
 * object holds them (*chars: the String's value array, or a
 * System.String itself). */
static bool string_units(const struct heap *h, uint32_t object,
			 struct value_record *r, enum utf8_units *units,
			 uint32_t *chars)
{
	uint64_t coder = 0;
	uint32_t value;

	if (class_named(h, object, "System.String")) {
		*units = UNITS_UTF16LE;
		*chars = object;
		return heap_object_values(h, object, r) && r->has_array &&
		       r->array.type == HT_TYPE_CHAR;
	}
	if (!class_named(h, object, "java.lang.String"))
		return false;
	value = values_field_object(h, object, "value");
	if (value == HEAP_NONE || !heap_object_values(h, value, r) ||
	    !r->has_array)
		return false;
	*chars = value;
	/* before JDK 9 a char[] and no coder */
	if (r->array.type == HT_TYPE_CHAR) {
		*units = UNITS_UTF16LE;
		return true;
	}
	(void)values_field(h, object, "coder", &coder);
	*units = coder == 1 ? UNITS_UTF16LE : UNITS_LATIN1;
	return r->array.type == HT_TYPE_BYTE;
}

size_t values_string_sources(const struct heap *h, uint32_t object,
			     uint32_t out[2])
{
	uint32_t value;

	if (object >= h->n)
		return 0;
	if (class_named(h, object, "System.String")) {
		out[0] = object;
		return 1;
	}
	if (!class_named(h, object, "java.lang.String"))
		return 0;
	out[0] = object; /* its coder */
	value = values_field_object(h, object, "value");
	if (value == HEAP_NONE)
		return 1;
	out[1] = value;
	return 2;
}

bool values_string_chars(const struct heap *h, uint32_t object,
			 uint32_t *chars, uint64_t *key)
{
	struct value_record r;
	enum utf8_units units;

	if (object >= h->n || !string_units(h, object, &r, &units, chars))
		return false;
	/* equal records are one (value_arena_add): their arrays' data is
	 * at one offset */
	*key = (uint64_t)(r.array.data - h->value_bytes) << 1 |
	       (units == UNITS_LATIN1);
	return true;
}

bool values_string_text(const struct heap *h, uint32_t object, char *out,
			size_t max_chars, uint64_t *units_shown, uint64_t *length)
{
	struct value_record r;
	enum utf8_units units;
	size_t bytes, len, used;
	uint32_t holder;

	if (object >= h->n || !string_units(h, object, &r, &units, &holder))
		return false;
	bytes = (size_t)r.array.stored * ht_value_type_width(r.array.type);
	if (bytes > 4 * max_chars) /* max_chars pairs of UTF-16 units */
		bytes = 4 * max_chars;
	len = utf8_from_units(out, r.array.data, bytes, units, max_chars,
			      &used);
	out[len] = 0;
	*units_shown = used;
	*length = r.array.length * ht_value_type_width(r.array.type) /
		  (units == UNITS_LATIN1 ? 1 : 2);
	return true;
}
