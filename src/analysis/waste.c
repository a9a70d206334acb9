/*
 * waste.c - duplicate strings and primitive arrays, empty and sparse
 * collections (waste.h).
 *
 * Each candidate is a (key, object, array) triple: the key says what its
 * contents are (values.h: equal records share an offset), the array which
 * object holds them. Sorted by key, then array, then object, a group is a
 * run of one key, its distinct arrays the changes of array within the
 * run, and its first object the one of lowest id among those of the first
 * array. Memory: 16 bytes a string or array, charged to the budget.
 */
#include "analysis/waste.h"

#include "analysis/collections.h"
#include "analysis/values.h"
#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/membudget.h"
#include "util/saturating.h"

#include <stdlib.h>
#include <string.h>

struct waste_member {
	uint64_t key;
	uint32_t object;
	uint32_t array;
};

bool waste_is_string_class(const char *name)
{
	return name && (strcmp(name, "java.lang.String") == 0 ||
			strcmp(name, "System.String") == 0);
}

static int by_key(const void *pa, const void *pb)
{
	const struct waste_member *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->array != b->array)
		return a->array < b->array ? -1 : 1;
	return a->object < b->object ? -1 : a->object > b->object;
}

/* Most wasted first, then most copies, then lowest id (index). */
static int by_waste(const void *pa, const void *pb)
{
	const struct waste_group *a = pa, *b = pb;

	if (a->wasted != b->wasted)
		return a->wasted > b->wasted ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static int no_memory(struct ht_error *err)
{
	err_plain(err, HT_E_NOMEM, NULL, "out of memory");
	return -1;
}

/* Per class slot: whether its objects are strings. */
/* qsort, which takes no NULL even for nothing to sort. */
static void sort(void *base, size_t n, size_t size,
		 int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static bool *string_slots(const struct heap *h, uint64_t *charged)
{
	bool *is = budget_array(h->n_classes + 1, sizeof(*is), charged);

	if (!is)
		return NULL;
	for (size_t i = 0; i < h->n_classes; i++)
		is[i] = waste_is_string_class(h->classes[i].name);
	is[h->n_classes] = false;
	return is;
}

struct candidates {
	struct waste_member *c;
	size_t n, cap;
	uint64_t charged;
};

static int add_candidate(struct candidates *cs, uint64_t key,
			 uint32_t object, uint32_t array)
{
	if (BUDGET_GROW(cs->c, cs->n + 1, cs->cap, cs->charged) < 0)
		return -1;
	cs->c[cs->n++] = (struct waste_member){key, object, array};
	return 0;
}

static void candidates_free(struct candidates *cs)
{
	free(cs->c);
	mem_budget_release(cs->charged);
	memset(cs, 0, sizeof(*cs));
}

/* The group of the run cs->c[i..end): its objects, its distinct arrays
 * (a string's value, when not the object itself) and their bytes. */
static struct waste_group group_of_run(const struct heap *h,
				       const struct waste_member *c, size_t n)
{
	struct waste_group g = {.first = c[0].object, .count = n};
	uint32_t first_array = c[0].array;

	for (size_t k = 0; k < n; k++) {
		add_saturating(&g.bytes, heap_size(h, c[k].object));
		if (c[k].object < g.first) {
			g.first = c[k].object;
			first_array = c[k].array;
		}
		if (k > 0 && c[k].array == c[k - 1].array)
			continue;
		g.arrays++;
		if (c[k].array != c[k].object)
			add_saturating(&g.bytes, heap_size(h, c[k].array));
	}
	g.wasted = g.bytes - heap_size(h, g.first);
	if (first_array != g.first)
		g.wasted -= heap_size(h, first_array);
	return g;
}

/* The groups of two or more among cs, sorted, with their totals. */
static int group(const struct heap *h, struct candidates *cs,
		 struct waste_duplicates *d, uint64_t *charged)
{
	size_t cap = 0;

	d->examined = cs->n;
	sort(cs->c, cs->n, sizeof(*cs->c), by_key);
	for (size_t i = 0, end; i < cs->n; i = end) {
		struct waste_group g;

		for (end = i + 1; end < cs->n && cs->c[end].key == cs->c[i].key;
		     end++)
			;
		if (end - i < 2)
			continue;
		g = group_of_run(h, cs->c + i, end - i);
		g.run = i;
		if (BUDGET_GROW(d->groups, d->n_groups + 1, cap, *charged) < 0)
			return -1;
		d->groups[d->n_groups++] = g;
		d->objects += g.count;
		d->copies += g.count - 1;
		add_saturating(&d->wasted, g.wasted);
	}
	sort(d->groups, d->n_groups, sizeof(*d->groups), by_waste);
	/* the members stay, for waste_find_holders */
	d->members = cs->c;
	d->n_members = cs->n;
	d->members_charged = cs->charged;
	memset(cs, 0, sizeof(*cs));
	return 0;
}

/* The strings, and a bit per object for the arrays that hold their
 * characters (not counted again as arrays). */
static int find_strings(const struct heap *h, const bool *is_string,
			struct candidates *cs, uint64_t *chars_of_string)
{
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t chars;
		uint64_t key;

		if (!is_string[heap_class_slot(h, i)] ||
		    !values_string_chars(h, i, &chars, &key))
			continue;
		if (add_candidate(cs, key, i, chars) < 0)
			return -1;
		chars_of_string[chars / 64] |= UINT64_C(1) << (chars % 64);
	}
	return 0;
}

static int find_arrays(const struct heap *h, const bool *is_string,
		       struct candidates *cs, const uint64_t *chars_of_string)
{
	for (uint32_t i = 0; i < h->n; i++) {
		struct value_record r;

		if (is_string[heap_class_slot(h, i)] ||
		    (chars_of_string[i / 64] >> (i % 64) & 1) ||
		    !heap_object_values(h, i, &r) || !r.has_array)
			continue;
		if (add_candidate(cs, (uint64_t)(r.array.data - h->value_bytes),
				  i, i) < 0)
			return -1;
	}
	return 0;
}

/* One kind: candidates found by find, then grouped. */
static int duplicates_of_strings(const struct heap *h, const bool *is_string,
				 uint64_t *chars_of_string, struct waste *w)
{
	struct candidates cs = {0};
	int rc = find_strings(h, is_string, &cs, chars_of_string);

	if (rc == 0)
		rc = group(h, &cs, &w->strings, &w->charged);
	candidates_free(&cs);
	return rc;
}

static int duplicates_of_arrays(const struct heap *h, const bool *is_string,
				const uint64_t *chars_of_string,
				struct waste *w)
{
	struct candidates cs = {0};
	int rc = find_arrays(h, is_string, &cs, chars_of_string);

	if (rc == 0)
		rc = group(h, &cs, &w->arrays, &w->charged);
	candidates_free(&cs);
	return rc;
}

/* ---- collections ----------------------------------------------------------- */

/* Whether a collection's objects hold their entries in an inner
 * collection (a HashSet in its HashMap `map`), counted as the outer. */
static bool holds_inner_map(const struct collection_kind *k)
{
	return strcmp(k->name, "java.util.HashSet") == 0 ||
	       strcmp(k->name, "java.util.LinkedHashSet") == 0;
}

/* One collection into its row: empty when it holds nothing, sparse when
 * it holds less than half of what its backing array has room for. */
static void tally(struct waste_collection_row *r, const struct heap *h,
		  uint32_t object, const struct collection *c)
{
	r->count++;
	if (!c->has_size) {
		r->unknown++;
	} else if (c->size == 0) {
		r->empty++;
		r->empty_bytes += heap_size(h, object) + c->array_bytes;
	} else if (c->has_capacity && c->size < c->capacity &&
		   c->size < c->capacity - c->size) {
		r->sparse++;
		r->sparse_bytes += c->wasted;
	}
}

static void add_row(struct waste_collection_row *all,
		    const struct waste_collection_row *r)
{
	all->count += r->count;
	all->unknown += r->unknown;
	all->empty += r->empty;
	all->empty_bytes += r->empty_bytes;
	all->sparse += r->sparse;
	all->sparse_bytes += r->sparse_bytes;
}

static int by_collection_waste(const void *pa, const void *pb)
{
	const struct waste_collection_row *a = pa, *b = pb;
	uint64_t wa = a->empty_bytes + a->sparse_bytes;
	uint64_t wb = b->empty_bytes + b->sparse_bytes;

	if (wa != wb)
		return wa > wb ? -1 : 1;
	return a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* The inner maps of sets (a bit per object), not counted again. */
static void mark_inner(const struct heap *h,
		       const struct collection_kind *const *kind,
		       uint64_t *inner)
{
	for (uint32_t i = 0; i < h->n; i++) {
		const struct collection_kind *k = kind[heap_class_slot(h, i)];
		uint32_t map;

		if (!k || !holds_inner_map(k))
			continue;
		map = values_field_object(h, i, "map");
		if (map != HEAP_NONE)
			inner[map / 64] |= UINT64_C(1) << (map % 64);
	}
}

static void tally_all(const struct heap *h,
		      const struct collection_kind *const *kind,
		      const uint64_t *inner, struct waste_collection_row *rows)
{
	for (uint32_t i = 0; i < h->n; i++) {
		size_t slot = heap_class_slot(h, i);
		struct collection c;

		if (!kind[slot] || (inner[i / 64] >> (i % 64) & 1))
			continue;
		collection_measure(h, i, kind[slot], &c);
		tally(&rows[slot], h, i, &c);
	}
}

/* The rows of the classes that have collections, sorted, and the sum. */
static int keep_rows(struct waste_collections *wc,
		     const struct waste_collection_row *rows, size_t n_slots,
		     uint64_t *charged)
{
	size_t cap = 0;

	for (size_t i = 0; i < n_slots; i++) {
		if (!rows[i].count)
			continue;
		if (BUDGET_GROW(wc->rows, wc->n_rows + 1, cap, *charged) < 0)
			return -1;
		wc->rows[wc->n_rows] = rows[i];
		wc->rows[wc->n_rows++].slot = (uint32_t)i;
		add_row(&wc->all, &rows[i]);
	}
	sort(wc->rows, wc->n_rows, sizeof(*wc->rows), by_collection_waste);
	return 0;
}

static int find_collections(const struct heap *h, struct waste *w)
{
	size_t n_slots = h->n_classes + 1, words = (size_t)h->n / 64 + 1;
	uint64_t charged = 0, *inner;
	const struct collection_kind **kind;
	struct waste_collection_row *rows;
	int rc = -1;

	kind = budget_array(n_slots, sizeof(*kind), &charged);
	rows = budget_array(n_slots, sizeof(*rows), &charged);
	inner = budget_array(words, sizeof(*inner), &charged);
	if (kind && rows && inner) {
		for (size_t i = 0; i < h->n_classes; i++)
			kind[i] = h->classes[i].name ?
				  collection_kind_of_class(h->classes[i].name) :
				  NULL;
		kind[h->n_classes] = NULL;
		memset(rows, 0, n_slots * sizeof(*rows));
		memset(inner, 0, words * sizeof(*inner));
		mark_inner(h, kind, inner);
		tally_all(h, kind, inner, rows);
		rc = keep_rows(&w->collections, rows, n_slots, &w->charged);
	}
	budget_array_free(inner, words, sizeof(*inner), &charged);
	budget_array_free(rows, n_slots, sizeof(*rows), &charged);
	budget_array_free(kind, n_slots, sizeof(*kind), &charged);
	return rc;
}

int waste_compute(const struct heap *h, struct waste *w,
		  struct ht_error *err)
{
	size_t words = (size_t)h->n / 64 + 1;
	uint64_t charged = 0, *chars_of_string;
	bool *is_string;
	int rc = -1;

	memset(w, 0, sizeof(*w));
	w->has_values = h->has_values != NULL;
	if (!w->has_values)
		return 0;
	is_string = string_slots(h, &charged);
	chars_of_string = budget_array(words, sizeof(*chars_of_string),
				       &charged);
	if (is_string && chars_of_string) {
		memset(chars_of_string, 0, words * sizeof(*chars_of_string));
		if (duplicates_of_strings(h, is_string, chars_of_string, w) == 0 &&
		    duplicates_of_arrays(h, is_string, chars_of_string, w) == 0 &&
		    find_collections(h, w) == 0)
			rc = 0;
	}
	budget_array_free(chars_of_string, words, sizeof(*chars_of_string),
			  &charged);
	budget_array_free(is_string, h->n_classes + 1, sizeof(*is_string),
			  &charged);
	if (rc < 0) {
		waste_free(w);
		return no_memory(err);
	}
	return 0;
}

/* ---- holders --------------------------------------------------------------- */

/* A reference to a copy: which group, and from what. */
struct hold {
	uint32_t group;
	uint32_t slot;
	uint32_t field;
	uint32_t from;
	uint64_t edge;
};

static int by_holder(const void *pa, const void *pb)
{
	const struct hold *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->slot != b->slot)
		return a->slot < b->slot ? -1 : 1;
	if (a->field != b->field)
		return a->field < b->field ? -1 : 1;
	return a->edge < b->edge ? -1 : a->edge > b->edge;
}

static int by_count(const void *pa, const void *pb)
{
	const struct waste_holder *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->slot != b->slot)
		return a->slot < b->slot ? -1 : 1;
	return a->field < b->field ? -1 : a->field > b->field;
}

/* Marks the objects of the first n groups of d with their group's
 * number in of (HEAP_NONE elsewhere). */
static void mark_groups(const struct heap *h, const struct waste_duplicates *d,
			size_t n, uint32_t *of)
{
	for (uint32_t i = 0; i < h->n; i++)
		of[i] = HEAP_NONE;
	for (size_t g = 0; g < n; g++)
		for (size_t k = 0; k < d->groups[g].count; k++)
			of[d->members[d->groups[g].run + k].object] =
				(uint32_t)g;
}

/* Every reference to a marked object, as a hold. */
static int gather_holds(const struct heap *h, const uint32_t *of,
			struct hold **holds, size_t *n, uint64_t *charged)
{
	size_t cap = 0;

	for (uint32_t i = 0; i < h->n; i++) {
		for (uint64_t e = heap_ref_start(h, i); e < heap_ref_start(h, i + 1);
		     e++) {
			uint32_t t = h->ref[e];

			if (t >= h->n || of[t] == HEAP_NONE)
				continue;
			if (BUDGET_GROW(*holds, *n + 1, cap, *charged) < 0)
				return -1;
			struct hold *k = &(*holds)[(*n)++];

			k->group = of[t];
			k->field = heap_ref_field(h, i, e);
			/* a field is its declaring class's, whichever
			 * subclass's object holds it */
			k->slot = k->field == HEAP_NO_FIELD ?
				  (uint32_t)heap_class_slot(h, i) : UINT32_MAX;
			k->from = i;
			k->edge = e;
		}
	}
	return 0;
}

/* The holders of group g from its sorted holds [0, n): one per (class,
 * field), the most frequent max of them. */
static int keep_holders(struct waste_group *g, const struct hold *hold,
			size_t n, size_t max, uint64_t *charged)
{
	size_t cap = 0;

	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && hold[end].slot == hold[i].slot &&
				  hold[end].field == hold[i].field;
		     end++)
			;
		if (BUDGET_GROW(g->holders, g->n_holders + 1, cap,
				*charged) < 0)
			return -1;
		g->holders[g->n_holders++] = (struct waste_holder){
			.slot = hold[i].slot,
			.field = hold[i].field,
			.from = hold[i].from,
			.edge = hold[i].edge,
			.count = end - i,
		};
	}
	sort(g->holders, g->n_holders, sizeof(*g->holders), by_count);
	if (g->n_holders > max)
		g->n_holders = max;
	return 0;
}

int waste_find_holders(const struct heap *h, struct waste *w,
		       struct waste_duplicates *d, size_t groups,
		       size_t max_holders, struct ht_error *err)
{
	uint64_t charged = 0;
	struct hold *holds = NULL;
	size_t n = 0;
	uint32_t *of;
	int rc = 0;

	if (groups > d->n_groups)
		groups = d->n_groups;
	if (groups == 0 || !d->members)
		return 0;
	of = budget_array(h->n, sizeof(*of), &charged);
	if (!of)
		return no_memory(err);
	mark_groups(h, d, groups, of);
	if (gather_holds(h, of, &holds, &n, &charged) < 0)
		rc = -1;
	budget_array_free(of, h->n, sizeof(*of), &charged);
	if (rc == 0)
		sort(holds, n, sizeof(*holds), by_holder);
	for (size_t i = 0, end; rc == 0 && i < n; i = end) {
		for (end = i + 1; end < n && holds[end].group == holds[i].group;
		     end++)
			;
		rc = keep_holders(&d->groups[holds[i].group], holds + i,
				  end - i, max_holders, &w->charged);
	}
	free(holds);
	mem_budget_release(charged);
	return rc < 0 ? no_memory(err) : 0;
}

void waste_totals_of(const struct waste *w, struct waste_totals *t)
{
	t->string_copies = w->strings.copies;
	t->string_bytes = w->strings.wasted;
	t->array_copies = w->arrays.copies;
	t->array_bytes = w->arrays.wasted;
	t->empty_collections = w->collections.all.empty;
	t->empty_bytes = w->collections.all.empty_bytes;
	t->sparse_collections = w->collections.all.sparse;
	t->sparse_bytes = w->collections.all.sparse_bytes;
}

static void duplicates_free(struct waste_duplicates *d)
{
	for (size_t i = 0; i < d->n_groups; i++)
		free(d->groups[i].holders);
	free(d->groups);
	free(d->members);
	mem_budget_release(d->members_charged);
}

void waste_free(struct waste *w)
{
	duplicates_free(&w->strings);
	duplicates_free(&w->arrays);
	free(w->collections.rows);
	mem_budget_release(w->charged);
	memset(w, 0, sizeof(*w));
}
