/*
 * collections.c - known collections measured from their fields
 * (collections.h): a table by class name of where each keeps its size and
 * its backing array, read through the dump's values and references.
 */
#include "analysis/collections.h"

#include "analysis/heap.h"
#include "analysis/values.h"
#include "util/alloc.h"

#include <string.h>

/* How a kind's size is kept. */
enum size_rule {
	SIZE_FIELD,       /* one int field */
	SIZE_LESS_FREE,   /* .NET Dictionary, HashSet: the slots used less
			     the free list's, which removals leave */
	SIZE_HEAD_TAIL,   /* ArrayDeque: a ring, (tail - head) mod length */
	SIZE_COUNTERS,    /* ConcurrentHashMap: baseCount plus every
			     CounterCell's value, as its size() adds them */
	SIZE_INNER,       /* HashSet: the map it wraps */
};

/* How a backing array's length is known. */
enum length_rule {
	/* its element references (a Java array: HPROF and the JVM recorder
	 * keep null elements in place), or its values when the dump kept
	 * them */
	LENGTH_REFERENCES,
	/* its values (a primitive array's contents); for an array of
	 * references, its element references only when the collection
	 * itself carries field values: the CLR runtime reports no null
	 * element, so a count of references is no length, but the CLR
	 * recorder that reads fields reads arrays too and keeps their nulls
	 * in place */
	LENGTH_VALUES,
};

#define NAMES 3 /* a field's names across runtime versions, tried in order */

struct kind_rule {
	struct collection_kind kind;
	enum size_rule size;
	const char *size_field[NAMES];  /* SIZE_FIELD, SIZE_LESS_FREE (the
					   used slots), SIZE_COUNTERS (the
					   base), SIZE_INNER (the inner
					   collection), SIZE_HEAD_TAIL
					   (head) */
	const char *less_field[NAMES];  /* SIZE_LESS_FREE: the free slots;
					   SIZE_HEAD_TAIL: tail;
					   SIZE_COUNTERS: the cells' array */
	const char *array_field[NAMES]; /* the array whose length is the
					   capacity */
	const char *also_field[NAMES];  /* another array of as many slots,
					   whose bytes empty slots waste
					   alike (.NET's entries beside
					   the buckets) */
	unsigned slots_per_entry;       /* IdentityHashMap: key and value
					   side by side; 1 otherwise */
	enum length_rule length;
};

/*
 * The known collections. Java's fields are OpenJDK's (8 to 21 alike);
 * .NET's are .NET Core's (_count, _items...) and, second, the .NET
 * Framework's and Mono's (count, m_count...). A hash table's capacity is
 * its buckets: a table of 16 holding 12 entries is "12 of 16" even when
 * chaining puts several in one bucket. Subclasses a program defines are
 * not matched: only these classes are known to keep these fields.
 */
static const struct kind_rule rules[] = {
	{{"java.util.HashMap", "map"}, SIZE_FIELD, {"size"}, {0},
	 {"table"}, {0}, 1, LENGTH_REFERENCES},
	{{"java.util.LinkedHashMap", "map"}, SIZE_FIELD, {"size"}, {0},
	 {"table"}, {0}, 1, LENGTH_REFERENCES},
	{{"java.util.WeakHashMap", "map"}, SIZE_FIELD, {"size"}, {0},
	 {"table"}, {0}, 1, LENGTH_REFERENCES},
	{{"java.util.Hashtable", "map"}, SIZE_FIELD, {"count"}, {0},
	 {"table"}, {0}, 1, LENGTH_REFERENCES},
	{{"java.util.IdentityHashMap", "map"}, SIZE_FIELD, {"size"}, {0},
	 {"table"}, {0}, 2, LENGTH_REFERENCES},
	{{"java.util.concurrent.ConcurrentHashMap", "map"}, SIZE_COUNTERS,
	 {"baseCount"}, {"counterCells"}, {"table"}, {0}, 1,
	 LENGTH_REFERENCES},
	{{"java.util.HashSet", "set"}, SIZE_INNER, {"map"}, {0}, {0}, {0}, 1,
	 LENGTH_REFERENCES},
	{{"java.util.LinkedHashSet", "set"}, SIZE_INNER, {"map"}, {0}, {0},
	 {0}, 1, LENGTH_REFERENCES},
	{{"java.util.ArrayList", "list"}, SIZE_FIELD, {"size"}, {0},
	 {"elementData"}, {0}, 1, LENGTH_REFERENCES},
	{{"java.util.Vector", "list"}, SIZE_FIELD, {"elementCount"}, {0},
	 {"elementData"}, {0}, 1, LENGTH_REFERENCES},
	{{"java.util.Stack", "stack"}, SIZE_FIELD, {"elementCount"}, {0},
	 {"elementData"}, {0}, 1, LENGTH_REFERENCES},
	{{"java.util.ArrayDeque", "deque"}, SIZE_HEAD_TAIL, {"head"},
	 {"tail"}, {"elements"}, {0}, 1, LENGTH_REFERENCES},

	{{"System.Collections.Generic.Dictionary", "map"}, SIZE_LESS_FREE,
	 {"_count", "count"}, {"_freeCount", "freeCount"},
	 {"_buckets", "buckets"}, {"_entries", "entries"}, 1, LENGTH_VALUES},
	{{"System.Collections.Generic.HashSet", "set"}, SIZE_LESS_FREE,
	 {"_count", "m_count"}, {"_freeCount"}, {"_buckets", "m_buckets"},
	 {"_entries", "m_slots"}, 1, LENGTH_VALUES},
	{{"System.Collections.Generic.List", "list"}, SIZE_FIELD, {"_size"},
	 {0}, {"_items"}, {0}, 1, LENGTH_VALUES},
	{{"System.Collections.Generic.Queue", "queue"}, SIZE_FIELD,
	 {"_size"}, {0}, {"_array"}, {0}, 1, LENGTH_VALUES},
	{{"System.Collections.Generic.Stack", "stack"}, SIZE_FIELD,
	 {"_size"}, {0}, {"_array"}, {0}, 1, LENGTH_VALUES},
};

#define N_RULES (ARRAY_SIZE(rules))

/* ---- names ------------------------------------------------------------- */

/* The index in s of the bracket that closes s[0], or 0 when none does. */
static size_t closing(const char *s, char open, char close)
{
	int depth = 0;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] == open)
			depth++;
		else if (s[i] == close && --depth == 0)
			return i;
	}
	return 0;
}

/*
 * The length of a .NET generic's name without its arguments, as the CLR
 * recorder ("List<System.String>") and Mono ("List`1", "List`1[[...]]")
 * write it; the whole length for any other name. -1 when the arguments
 * are followed by more: a nested type ("Dictionary`2+Entry") or an array
 * ("List<System.String>[]"), which are no collection.
 */
static long generic_base(const char *name)
{
	size_t at = strcspn(name, "<`");
	const char *rest = name + at;

	if (*rest == '<') {
		size_t end = closing(rest, '<', '>');

		return end && rest[end + 1] == 0 ? (long)at : -1;
	}
	if (*rest == '`') {
		rest++;
		while (*rest >= '0' && *rest <= '9')
			rest++;
		if (*rest == 0)
			return (long)at;
		if (rest[0] == '[' && rest[1] == '[') {
			size_t end = closing(rest, '[', ']');

			return end && rest[end + 1] == 0 ? (long)at : -1;
		}
		return -1;
	}
	return (long)at;
}

static const struct kind_rule *rule_of_class(const char *name)
{
	long base;

	if (!name)
		return NULL;
	base = generic_base(name);
	if (base < 0)
		return NULL;
	for (size_t i = 0; i < N_RULES; i++)
		if (strlen(rules[i].kind.name) == (size_t)base &&
		    memcmp(rules[i].kind.name, name, (size_t)base) == 0)
			return &rules[i];
	return NULL;
}

const struct collection_kind *collection_kind_of_class(const char *name)
{
	const struct kind_rule *r = rule_of_class(name);

	return r ? &r->kind : NULL;
}

static const struct kind_rule *rule_of(const struct collection_kind *k)
{
	/* kind is the first member: the table's entry is where it lies */
	return (const struct kind_rule *)k;
}

/* ---- fields ------------------------------------------------------------- */

/* The first of names the object has a value for, as a signed number. */
static bool value_of(const struct heap *h, uint32_t object,
		     const char *const names[NAMES], int64_t *value)
{
	uint64_t bits;

	for (int i = 0; i < NAMES && names[i]; i++)
		if (values_field(h, object, names[i], &bits)) {
			*value = (int64_t)bits;
			return true;
		}
	return false;
}

/* Whether name is one of object's reference fields: *ref what it holds,
 * an object's index, HEAP_NULL_REF or HEAP_DANGLING_REF. */
static bool reference_field(const struct heap *h, uint32_t object,
			    const char *name, uint32_t *ref)
{
	uint64_t e;

	if (!heap_named_ref(h, object, name, &e))
		return false;
	*ref = h->ref[e];
	return true;
}

/* What the first of names that object has holds (reference_field's
 * *ref); false when it has none of them (then the answer is unknown, not
 * a null). */
static bool reference_of(const struct heap *h, uint32_t object,
			 const char *const names[NAMES], uint32_t *ref)
{
	for (int i = 0; i < NAMES && names[i]; i++)
		if (reference_field(h, object, names[i], ref))
			return true;
	return false;
}

/* The object the first of names holds; HEAP_NONE when none, null or
 * dangling. */
static uint32_t object_of(const struct heap *h, uint32_t object,
			  const char *const names[NAMES])
{
	uint32_t ref;

	return reference_of(h, object, names, &ref) && ref < h->n ? ref
								  : HEAP_NONE;
}

/* An array's element references: those no field names (its link to its
 * class is named). */
static uint64_t element_references(const struct heap *h, uint32_t array)
{
	uint64_t n = 0;

	for (uint64_t e = heap_ref_start(h, array); e < heap_ref_start(h, array + 1);
	     e++)
		n += heap_ref_field(h, array, e) == HEAP_NO_FIELD;
	return n;
}

static bool array_length(const struct heap *h, uint32_t object,
			 uint32_t array, enum length_rule rule,
			 uint64_t *length)
{
	struct value_record r;

	if (heap_object_values(h, array, &r) && r.has_array) {
		*length = r.array.length;
		return true;
	}
	if (rule != LENGTH_REFERENCES &&
	    !(heap_object_values(h, object, &r) && r.left > 0))
		return false;
	*length = element_references(h, array);
	return true;
}

/* ---- sizes ------------------------------------------------------------- */

/* ConcurrentHashMap's size(): baseCount plus the counter cells' values
 * (the cells take the counts that contended threads could not add to the
 * base); a negative sum, which a dump taken mid-update may show, is 0 as
 * size() says. Unknown when any cell's value is. */
static bool counters_size(const struct heap *h, uint32_t object,
			  const struct kind_rule *k, int64_t *size)
{
	int64_t sum;
	uint64_t cell_value;
	uint32_t cells;

	if (!value_of(h, object, k->size_field, &sum))
		return false;
	cells = object_of(h, object, k->less_field);
	if (cells != HEAP_NONE)
		for (uint64_t e = heap_ref_start(h, cells);
		     e < heap_ref_start(h, cells + 1); e++) {
			uint32_t cell = h->ref[e];

			if (heap_ref_field(h, cells, e) != HEAP_NO_FIELD ||
			    cell >= h->n)
				continue;
			/* a sum past 64 bits is no count: a hostile dump */
			if (!values_field(h, cell, "value", &cell_value) ||
			    __builtin_add_overflow(sum, (int64_t)cell_value,
						   &sum))
				return false;
		}
	*size = sum < 0 ? 0 : sum;
	return true;
}

static bool measure_size(const struct heap *h, uint32_t object,
			 const struct kind_rule *k, const struct collection *c,
			 int64_t *size)
{
	int64_t a, b;

	switch (k->size) {
	case SIZE_FIELD:
		return value_of(h, object, k->size_field, size);
	case SIZE_LESS_FREE:
		if (!value_of(h, object, k->size_field, &a))
			return false;
		/* the .NET Framework's HashSet keeps its count net */
		if (!value_of(h, object, k->less_field, &b))
			b = 0;
		/* more free than used is no count: a hostile dump */
		if (a < 0 || b < 0 || b > a)
			return false;
		*size = a - b;
		return true;
	case SIZE_HEAD_TAIL:
		if (!c->has_capacity ||
		    !value_of(h, object, k->size_field, &a) ||
		    !value_of(h, object, k->less_field, &b))
			return false;
		if (c->capacity == 0) {
			*size = 0;
			return true;
		}
		/* head and tail index the array; others are no ring */
		if (a < 0 || b < 0 || (uint64_t)a >= c->capacity ||
		    (uint64_t)b >= c->capacity)
			return false;
		*size = (int64_t)(((uint64_t)b + c->capacity - (uint64_t)a) %
				  c->capacity);
		return true;
	case SIZE_COUNTERS:
		return counters_size(h, object, k, size);
	case SIZE_INNER:
		return false; /* measure_inner's */
	}
	return false;
}

/* ---- measuring --------------------------------------------------------- */

static void measure_capacity(const struct heap *h, uint32_t object,
			     const struct kind_rule *k, struct collection *c)
{
	uint64_t length;
	uint32_t array, also;

	if (!reference_of(h, object, k->array_field, &array) ||
	    array == HEAP_DANGLING_REF)
		return; /* no such field, or an array the dump lacks */
	if (array == HEAP_NULL_REF) {
		c->has_capacity = true; /* a null table: nothing allocated */
		return;
	}
	c->array = array;
	if (!array_length(h, object, c->array, k->length, &length))
		return;
	c->has_capacity = true;
	c->capacity = length / k->slots_per_entry;
	c->array_bytes = heap_size(h, c->array);
	also = object_of(h, object, k->also_field);
	if (also != HEAP_NONE && also != c->array)
		c->array_bytes += heap_size(h, also);
}

static void measure_waste(struct collection *c)
{
	if (!c->has_size || !c->has_capacity || c->size >= c->capacity)
		return;
	c->wasted = (uint64_t)((unsigned __int128)c->array_bytes *
			       (c->capacity - c->size) / c->capacity);
}

/* A set wraps a map: the map (*inner) and its rule, whatever kind it is,
 * but no set (a hostile dump may make a set wrap a set); NULL when the
 * set's field holds no known map. */
static const struct kind_rule *inner_rule(const struct heap *h,
					  uint32_t object,
					  const struct kind_rule *k,
					  uint32_t *inner)
{
	const struct kind_rule *ik;

	*inner = object_of(h, object, k->size_field);
	ik = *inner != HEAP_NONE && h->cls[*inner] < h->n_classes ?
	     rule_of_class(h->classes[h->cls[*inner]].name) : NULL;
	return ik && ik->size != SIZE_INNER ? ik : NULL;
}

static void measure(const struct heap *h, uint32_t object,
		    const struct kind_rule *k, struct collection *c,
		    int depth)
{
	int64_t size;

	*c = (struct collection){.kind = &k->kind, .array = HEAP_NONE};
	if (k->size == SIZE_INNER) {
		/* measured once: the map, not a map a map wraps */
		uint32_t inner;
		const struct kind_rule *ik = inner_rule(h, object, k, &inner);

		if (ik && depth == 0) {
			measure(h, inner, ik, c, depth + 1);
			c->kind = &k->kind;
		}
		return;
	}
	measure_capacity(h, object, k, c);
	if (measure_size(h, object, k, c, &size) && size >= 0) {
		c->has_size = true;
		c->size = (uint64_t)size;
	}
	measure_waste(c);
}

void collection_measure(const struct heap *h, uint32_t object,
			const struct collection_kind *k, struct collection *c)
{
	measure(h, object, rule_of(k), c, 0);
}

bool collection_of(const struct heap *h, uint32_t object,
		   struct collection *c)
{
	const struct kind_rule *k;
	uint32_t cls;

	if (object >= h->n)
		return false;
	cls = h->cls[object];
	k = cls < h->n_classes ? rule_of_class(h->classes[cls].name) : NULL;
	if (!k)
		return false;
	measure(h, object, k, c, 0);
	return true;
}

/* ---- what measuring reads ---------------------------------------------- */

/* As measure follows references: the objects whose values it reads. */
static void sources(const struct heap *h, uint32_t object,
		    const struct kind_rule *k, object_fn add, void *ctx,
		    int depth)
{
	uint32_t array, cells, inner;

	add(ctx, object); /* its size fields */
	if (k->size == SIZE_INNER) {
		const struct kind_rule *ik = inner_rule(h, object, k, &inner);

		if (ik && depth == 0)
			sources(h, inner, ik, add, ctx, depth + 1);
		return;
	}
	/* the capacity: the array's length (array_length) */
	if (reference_of(h, object, k->array_field, &array) && array < h->n)
		add(ctx, array);
	if (k->size != SIZE_COUNTERS)
		return;
	/* counters_size: each cell's value */
	cells = object_of(h, object, k->less_field);
	if (cells == HEAP_NONE)
		return;
	for (uint64_t e = heap_ref_start(h, cells);
	     e < heap_ref_start(h, cells + 1); e++)
		if (heap_ref_field(h, cells, e) == HEAP_NO_FIELD &&
		    h->ref[e] < h->n)
			add(ctx, h->ref[e]);
}

void collection_sources(const struct heap *h, uint32_t object,
			object_fn add, void *ctx)
{
	const struct kind_rule *k;
	uint32_t cls;

	if (object >= h->n)
		return;
	cls = h->cls[object];
	k = cls < h->n_classes ? rule_of_class(h->classes[cls].name) : NULL;
	if (k)
		sources(h, object, k, add, ctx, 0);
}
