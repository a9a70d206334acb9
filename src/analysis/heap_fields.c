/*
 * heap_fields.c - the field each reference of a graph was read from
 * (heap.h, field_follows): kept, when the trace names fields, as a layout
 * per class (the fields of its first object), a bit per object that
 * follows it, and the fields of the few objects that do not; and looked
 * up by edge or by name.
 */
#include "analysis/heap_internal.h"

#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- Building ----------------------------------------------------------- */

/* The field entries of the kept parts, object after object, as
 * gather_refs lays out their refs. */
int heap_gather_ref_fields(struct raw_dump *raw, const struct kept_parts *k,
			     const struct heap *h, uint32_t **out)
{
	uint64_t total = heap_ref_start(h, h->n), at = 0;
	uint32_t *field;

	if (!raw->ref_field)
		return 0;
	field = alloc_array(total, sizeof(*field));
	if (!field)
		return -1;
	for (size_t i = 0; i < k->n; i++) {
		uint32_t p = k->order[i];
		uint64_t begin = part_begin(raw, p);
		uint64_t count = part_end(raw, p) - begin;

		memcpy(field + at, raw->ref_field + begin,
		       count * sizeof(*field));
		at += count;
	}
	free(raw->ref_field);
	raw->ref_field = NULL;
	raw->cap_ref_fields = 0;
	*out = field;
	return 0;
}

/* The full field array, an entry an edge, made compact (heap.h): each
 * class slot's layout is its first object's fields. */
static int make_layouts(struct heap *h, const uint32_t *field)
{
	size_t slots = h->n_classes + 1;
	uint32_t *first = alloc_array(slots, sizeof(*first));
	uint64_t at = 0;

	h->layout_start = alloc_array(slots + 1, sizeof(*h->layout_start));
	if (!first || !h->layout_start) {
		free(first);
		return -1;
	}
	for (size_t s = 0; s < slots; s++)
		first[s] = HEAP_NONE;
	for (uint32_t i = 0; i < h->n; i++)
		if (first[heap_class_slot(h, i)] == HEAP_NONE)
			first[heap_class_slot(h, i)] = i;
	for (size_t s = 0; s < slots; s++) {
		h->layout_start[s] = at;
		if (first[s] != HEAP_NONE)
			at += heap_ref_start(h, first[s] + 1) - heap_ref_start(h, first[s]);
	}
	h->layout_start[slots] = at;
	h->layout = alloc_array(at ? at : 1, sizeof(*h->layout));
	if (!h->layout) {
		free(first);
		return -1;
	}
	for (size_t s = 0; s < slots; s++)
		if (first[s] != HEAP_NONE)
			memcpy(h->layout + h->layout_start[s],
			       field + heap_ref_start(h, first[s]),
			       (h->layout_start[s + 1] - h->layout_start[s]) *
			       sizeof(*field));
	free(first);
	return 0;
}

/* The field of position pos of an object that follows its layout. */
static uint32_t layout_field(const struct heap *h, size_t slot, uint64_t pos)
{
	uint64_t len = h->layout_start[slot + 1] - h->layout_start[slot];

	return pos < len ? h->layout[h->layout_start[slot] + pos]
			 : HEAP_NO_FIELD;
}

static bool follows_layout(const struct heap *h, const uint32_t *field,
			   uint32_t i)
{
	size_t slot = heap_class_slot(h, i);

	for (uint64_t e = heap_ref_start(h, i); e < heap_ref_start(h, i + 1); e++)
		if (field[e] != layout_field(h, slot, e - heap_ref_start(h, i)))
			return false;
	return true;
}

/* The objects that do not follow their layout, with their fields. */
static int list_odd_objects(struct heap *h, const uint32_t *field,
			    uint64_t odd_edges)
{
	uint32_t k = 0;
	uint64_t at = 0;

	h->odd = alloc_array(h->n_odd ? h->n_odd : 1, sizeof(*h->odd));
	h->odd_start = alloc_array((size_t)h->n_odd + 1,
				   sizeof(*h->odd_start));
	h->odd_field = alloc_array(odd_edges ? odd_edges : 1,
				   sizeof(*h->odd_field));
	if (!h->odd || !h->odd_start || !h->odd_field)
		return -1;
	for (uint32_t i = 0; i < h->n; i++) {
		uint64_t deg = heap_ref_start(h, i + 1) - heap_ref_start(h, i);

		if (h->field_follows[i / 64] >> (i % 64) & 1)
			continue;
		h->odd[k] = i;
		h->odd_start[k++] = at;
		memcpy(h->odd_field + at, field + heap_ref_start(h, i),
		       deg * sizeof(*field));
		at += deg;
	}
	h->odd_start[k] = at;
	return 0;
}

/* Replaces the dump's full field array (an entry an edge, freed here) by
 * the layouts, a bit an object, and the odd objects' fields. */
int heap_compact_ref_fields(struct heap *h, uint32_t *field)
{
	uint64_t odd_edges = 0;
	int rc = -1;

	if (!field)
		return 0;
	h->field_follows = calloc((h->n + 63) / 64 + 1,
				  sizeof(*h->field_follows));
	if (!h->field_follows || make_layouts(h, field) < 0)
		goto done;
	for (uint32_t i = 0; i < h->n; i++) {
		if (follows_layout(h, field, i)) {
			h->field_follows[i / 64] |= 1ULL << (i % 64);
		} else {
			h->n_odd++;
			odd_edges += heap_ref_start(h, i + 1) - heap_ref_start(h, i);
		}
	}
	rc = list_odd_objects(h, field, odd_edges);
done:
	free(field);
	return rc;
}

/* Parts in order: the raw field array is the dump's as it is. */
uint32_t *heap_take_ref_fields(struct raw_dump *raw)
{
	uint32_t *field = raw->ref_field;

	raw->ref_field = NULL;
	raw->cap_ref_fields = 0;
	return field;
}

/* ---- Lookups ------------------------------------------------------------ */

uint32_t heap_ref_field(const struct heap *h, uint32_t object, uint64_t e)
{
	uint64_t pos = e - heap_ref_start(h, object);
	uint32_t lo = 0, hi;

	if (!h->field_follows)
		return HEAP_NO_FIELD;
	if (h->field_follows[object / 64] >> (object % 64) & 1)
		return layout_field(h, heap_class_slot(h, object), pos);
	for (hi = h->n_odd; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->odd[mid] < object)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->n_odd || h->odd[lo] != object)
		return HEAP_NO_FIELD;
	return h->odd_field[h->odd_start[lo] + pos];
}

const struct heap_field *heap_field_at(const struct heap *h, uint32_t field)
{
	if (field == HEAP_NO_FIELD || field > h->n_fields ||
	    !h->fields[field - 1].name)
		return NULL;
	return &h->fields[field - 1];
}

bool heap_named_ref(const struct heap *h, uint32_t object, const char *name,
		    uint64_t *e)
{
	uint64_t end = heap_ref_start(h, object + 1);

	for (*e = heap_ref_start(h, object); *e < end; (*e)++) {
		const struct heap_field *f =
			heap_field_at(h, heap_ref_field(h, object, *e));

		if (f && strcmp(f->name, name) == 0)
			return true;
	}
	return false;
}
