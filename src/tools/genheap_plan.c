/*
 * genheap_plan.c - ht-genheap's classes (a few hundred, the runtime's own
 * first), the heap's parallel arrays, and the plan: how many fields the
 * ordinary objects get, how much garbage, and where the long lists and
 * the huge arrays go, so that the heap ends with the references per
 * object asked for.
 */
#include "tools/genheap_internal.h"

/* ---- Classes ------------------------------------------------------------- */

/* A class that is not `pickable` has instances only where this program
 * puts them (list nodes), not among the ordinary objects. */
static uint16_t add_class(struct catalogue *cat, const char *name,
			  enum class_kind kind, unsigned fields, uint64_t size,
			  int pickable)
{
	struct klass *k = &cat->v[cat->n];
	struct bucket *b;

	snprintf(k->name, sizeof(k->name), "%s", name);
	k->kind = kind;
	k->fields = fields;
	k->size = size;
	if (kind == CK_INSTANCE)
		b = &cat->by_fields[fields];
	else
		b = kind == CK_REF_ARRAY ? &cat->ref_arrays : &cat->prim_arrays;
	if (pickable)
		b->cls[b->n++] = (uint16_t)cat->n;
	if (kind == CK_INSTANCE)
		cat->instances.cls[cat->instances.n++] = (uint16_t)cat->n;
	return (uint16_t)cat->n++;
}

/* Header, the reference fields, then some primitive fields: 16 .. ~200. */
static uint64_t instance_size(struct rng *r, unsigned fields)
{
	uint64_t prim = 4 * rng_below(r, 1 + rng_below(r, 16));

	return align8(16 + 8 * fields + prim);
}

/* The classes every Java heap has, first in their buckets: the likeliest. */
static void add_runtime_classes(struct catalogue *cat)
{
	static const struct { const char *name; unsigned elem; } prims[] = {
		{"[C", 2}, {"[B", 1}, {"[I", 4}, {"[J", 8},
		{"[Z", 1}, {"[S", 2}, {"[D", 8},
	};

	add_class(cat, "java.lang.Integer", CK_INSTANCE, 0, 16, 1);
	add_class(cat, "java.lang.String", CK_INSTANCE, 1, 24, 1);
	add_class(cat, "java.util.HashMap$Node", CK_INSTANCE, 3, 32, 1);
	add_class(cat, "java.util.ArrayList", CK_INSTANCE, 1, 24, 1);
	add_class(cat, "java.lang.Object", CK_INSTANCE, 0, 16, 1);
	add_class(cat, "java.util.HashMap", CK_INSTANCE, 3, 48, 1);
	cat->thread = add_class(cat, "java.lang.Thread", CK_INSTANCE, 6, 104,
				0);
	cat->linked_node = add_class(cat, "com.example.util.LinkedNode",
				     CK_INSTANCE, 3, 40, 0);
	cat->single_node = add_class(cat, "com.example.util.SingleNode",
				     CK_INSTANCE, 2, 32, 0);
	for (size_t i = 0; i < ARRAY_SIZE(prims); i++)
		add_class(cat, prims[i].name, CK_PRIM_ARRAY, 0, prims[i].elem,
			  1);
	cat->object_array = add_class(cat, "[Ljava.lang.Object;",
				      CK_REF_ARRAY, 0, 8, 1);
	cat->node_array = add_class(cat, "[Ljava.util.HashMap$Node;",
				    CK_REF_ARRAY, 0, 8, 1);
	add_class(cat, "[Ljava.lang.String;", CK_REF_ARRAY, 0, 8, 1);
}

/* Fewer classes have many reference fields than few; every count from 0
 * to MAX_FIELDS has some, so that any fan-out finds a class. */
static unsigned generated_fields(struct rng *r, size_t i)
{
	unsigned f;

	if (i <= MAX_FIELDS)
		return (unsigned)i;
	f = (unsigned)rng_geometric(r, 2.5);
	return f > MAX_FIELDS ? MAX_FIELDS : f;
}

static void add_generated_classes(struct catalogue *cat, struct rng *r)
{
	char name[64];
	size_t first = cat->n;

	for (size_t i = 0; i < N_GENERATED_CLASSES; i++) {
		unsigned fields = generated_fields(r, i);

		snprintf(name, sizeof(name), "com.example.pkg%u.Class%zu",
			 (unsigned)rng_below(r, 40), i);
		add_class(cat, name, CK_INSTANCE, fields,
			  instance_size(r, fields), 1);
	}
	for (size_t i = 0; i < N_TYPED_ARRAYS; i++) {
		const struct klass *elem =
			&cat->v[first + rng_below(r, N_GENERATED_CLASSES)];

		/* Bounded: the name fits even for the longest element name. */
		snprintf(name, sizeof(name), "[L%.60s;", elem->name);
		add_class(cat, name, CK_REF_ARRAY, 0, 8, 1);
	}
}

void catalogue_build(struct catalogue *cat, struct rng *r)
{
	memset(cat, 0, sizeof(*cat));
	add_runtime_classes(cat);
	add_generated_classes(cat, r);
}

/* ---- The heap ------------------------------------------------------------ */

void genheap_alloc(struct heap *h, size_t n, double refs_per_object)
{
	memset(h, 0, sizeof(*h));
	h->n = n;
	h->id = xcalloc(n + 1, sizeof(*h->id));
	h->cls = xcalloc(n, sizeof(*h->cls));
	h->first = xcalloc(n + 1, sizeof(*h->first));
	h->mark = xcalloc(n, sizeof(*h->mark));
	h->cap_slots = (size_t)((double)n * (refs_per_object + 1.0)) + 1024;
	h->ref = alloc_array(h->cap_slots, sizeof(*h->ref));
	if (!h->ref)
		die("out of memory (%zu x %zu bytes)", h->cap_slots,
		    sizeof(*h->ref));
}

void genheap_free(struct heap *h)
{
	free(h->id);
	free(h->cls);
	free(h->first);
	free(h->mark);
	free(h->ref);
	free(h->popular);
	free(h->shared.v);
	free(h->tables.v);
}

/* Appends object i (the next one) with its fields all undecided. */
void genheap_append(struct heap *h, size_t i, uint16_t cls,
		 uint64_t size, size_t fields, uint8_t mark)
{
	XGROW(h->ref, h->slots + fields, h->cap_slots);
	for (size_t k = 0; k < fields; k++)
		h->ref[h->slots + k] = UNSET;
	h->cls[i] = cls;
	h->mark[i] = mark;
	h->first[i] = h->slots;
	h->slots += fields;
	h->first[i + 1] = h->slots;
	h->id[i + 1] = h->id[i] + size;
}

/* ---- The plan: how many fields, how much garbage, where the lists go ----- */

/* Expected length of an ordinary ref array: a discrete Pareto of
 * exponent 1.4 from 0, capped; P(L >= k) = (3 / (k + 3))^1.4. */
static double array_length_mean(void)
{
	double sum = 0;

	for (unsigned k = 1; k <= ARRAY_CAP; k++)
		sum += pow(3.0 / (k + 3.0), 1.4);
	return sum;
}

size_t array_length(struct rng *r)
{
	double u = 1.0 - rng_unit(r);
	double x = 3.0 * pow(u, -1.0 / 1.4) - 3.0;

	return x >= ARRAY_CAP ? ARRAY_CAP : (size_t)x;
}

static int by_position(const void *a, const void *b)
{
	const struct feature *x = a, *y = b;

	if (x->at != y->at)
		return x->at > y->at ? 1 : -1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void add_feature(struct plan *p, size_t *cap,
			const struct feature *f)
{
	XGROW(p->features, p->n_features + 1, *cap);
	p->features[p->n_features++] = *f;
}

/* Long lists take CHAIN_SHARE of the objects, in lists of 10^4 .. 10^5
 * nodes (shorter on small heaps, none on tiny ones). */
static void plan_chains(struct plan *p, size_t *cap, struct rng *r,
			uint64_t n)
{
	uint64_t budget = (uint64_t)(CHAIN_SHARE * (double)n);
	uint64_t lo = budget < CHAIN_MIN ? budget : CHAIN_MIN;

	if (budget < 100)
		return;
	while (budget >= lo) {
		uint64_t hi = budget < CHAIN_MAX ? budget : CHAIN_MAX;
		struct feature f = { .kind = F_CHAIN };

		/* One by one: an initializer list's order is unspecified. */
		f.length = (uint32_t)rng_log_uniform(r, lo, hi);
		f.doubly = rng_chance(r, 0.5);
		f.circular = rng_chance(r, 0.3);
		add_feature(p, cap, &f);
		budget -= f.length;
		p->special_objects += f.length;
		p->special_slots += (uint64_t)f.length * (f.doubly ? 3 : 2);
	}
}

/* Huge arrays take HUGE_SHARE of the references, 10^4 .. 10^6 each. */
static void plan_huge_arrays(struct plan *p, size_t *cap, struct rng *r,
			     uint64_t n, double refs)
{
	uint64_t budget = (uint64_t)(HUGE_SHARE * refs * (double)n);

	while (budget >= HUGE_MIN && p->special_objects < n / 2) {
		uint64_t hi = budget < HUGE_MAX ? budget : HUGE_MAX;
		struct feature f = {
			.kind = F_HUGE_ARRAY,
			.length = (uint32_t)rng_log_uniform(r, HUGE_MIN, hi),
		};

		add_feature(p, cap, &f);
		budget -= f.length;
		p->special_objects++;
		p->special_slots += f.length;
	}
}

/*
 * Sizes the ordinary objects' fan-out so that, after nulls, the heap has
 * about `refs` references per object: the fields planned are
 * refs / (1 - NULL_SHARE) per object; the features take theirs, arrays
 * a share of the rest, instances the remainder.
 */
static void plan_fanout(struct plan *p, const struct options *o)
{
	double n = (double)o->objects;
	double ordinary = n - (double)p->special_objects;
	double fields = o->refs * n / (1.0 - NULL_SHARE);
	double mean = ordinary > 0 ?
		(fields - (double)p->special_slots) / ordinary : 0;
	double array_mean = array_length_mean();
	double instance_mean;

	if (mean < 0)
		mean = 0;
	p->array_share = 0.05;
	if (p->array_share * array_mean > mean / 2)
		p->array_share = mean / 2 / array_mean;
	instance_mean = (mean - p->array_share * array_mean) /
			(1.0 - p->array_share);
	p->leaf_share = LEAF_SHARE;
	p->extra_fields = instance_mean / (1.0 - LEAF_SHARE) - 1.0;
	if (p->extra_fields < 0) {
		p->extra_fields = 0;
		p->leaf_share = 1.0 - instance_mean;
	}
	/* Runs of mean length m cover g*m/(1 + g*m) of the ordinary objects. */
	{
		double share = GARBAGE_SHARE * n /
			       (ordinary > 1 ? ordinary : 1);

		if (share > 0.5)
			share = 0.5;
		p->garbage_start = share / ((1.0 - share) * GARBAGE_RUN_MEAN);
	}
}

void plan_build(struct plan *p, const struct options *o,
		struct rng *r)
{
	size_t cap = 0;
	uint64_t ordinary;

	memset(p, 0, sizeof(*p));
	plan_chains(p, &cap, r, o->objects);
	plan_huge_arrays(p, &cap, r, o->objects, o->refs);
	ordinary = o->objects - p->special_objects;
	for (size_t i = 0; i < p->n_features; i++) {
		p->features[i].at = rng_below(r, ordinary + 1);
		p->features[i].seq = i;
	}
	if (p->n_features)
		qsort(p->features, p->n_features, sizeof(*p->features),
		      by_position);
	plan_fanout(p, o);
}
