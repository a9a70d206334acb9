/*
 * genheap.c - ht-genheap: a synthetic heap, recorded through the shim as a
 * Microsoft VM heap dump, for the analyses' tests and benchmarks.
 *
 * The heap is meant to look like a real one, so that the analyses meet
 * the shapes, sizes and orders they will meet in the field:
 *  - ids are addresses handed out in allocation order; an object's size
 *    comes from its class (a few hundred of them) or its array length;
 *  - fan-out follows a power law: most objects have 0..4 fields, a few
 *    arrays have hundreds, a few huge ones 10^4..10^6;
 *  - most objects are owned by an object allocated just before them (a
 *    program builds its data depth-first), so the heap is a forest of
 *    shallow trees hanging off thread frames, class statics and JNI
 *    pointers; the other fields point near by (often back: cycles), to a
 *    few popular objects (shared subgraphs), far away, or are null;
 *  - huge arrays (caches) hold whole trees, so that a few objects retain
 *    a large share of the heap, as in the heaps people look into;
 *  - long linked lists, some doubly linked or circular;
 *  - about 5% garbage, in runs, that no live object points to;
 *  - the C_HEAP walk reports objects depth-first from the roots, the
 *    garbage last, as a runtime's heap walker would.
 * The same options give the same trace, byte for byte.
 */
#include <heaptrace/record.h>

#include "util/alloc.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define PROGRAM "ht-genheap"

/* Where things live in the synthetic address space. */
#define HEAP_BASE 0x7f3a00000000ull
#define CLASS_BASE 0x7f1100000000ull
#define CLASS_STRIDE 0x240ull
#define METHOD_BASE 0x7f2200000000ull
#define METHOD_STRIDE 0x58ull
#define STACK_BASE 0x7ffe00000000ull
#define THREAD_STACK_SPAN 0x100000ull

/* Field values while the heap is built: an object index, or these. */
#define NO_REF UINT32_MAX        /* null */
#define UNSET (UINT32_MAX - 1u)  /* not decided yet */
#define MAX_OBJECTS (UINT32_MAX - 2u)

/* The shape of the heap. Shares are of objects unless said otherwise. */
#define MAX_FIELDS 12            /* reference fields of an instance class */
#define ARRAY_CAP 4096           /* longest ordinary array */
#define HUGE_MIN 10000u
#define HUGE_MAX 1000000u
#define HUGE_SHARE 0.10          /* of the references */
#define CHAIN_MIN 10000u
#define CHAIN_MAX 100000u
#define CHAIN_SHARE 0.05
#define GARBAGE_SHARE 0.05
#define GARBAGE_RUN_MEAN 16.0
#define NULL_SHARE 0.12          /* of the fields */
#define LEAF_SHARE 0.30          /* instances without reference fields */
#define PRIM_ARRAY_SHARE 0.45    /* of the leaves */
#define OWNER_WINDOW 64          /* recent objects that may adopt a new one */
#define DEPTH_LIMIT 16           /* of an ownership tree */
#define CONTEXT_MEAN 500.0       /* objects per unit of work (one root) */
#define SHARED_DEPTH 2           /* objects this near their tree's top may
				    be referred to from afar */
#define PUBLIC_SHARE 0.3         /* of the trees: others may share their top */
#define TABLE_HELD_SHARE 0.5     /* of the trees, held by huge arrays */
#define PIECE 65536              /* refs per object_references of an array */

#define N_GENERATED_CLASSES 300
#define N_TYPED_ARRAYS 24
#define MAX_CLASSES 512
#define N_METHODS 240
#define N_THREADS 8

/* ---- Deterministic randomness -------------------------------------------- */

struct rng {
	uint64_t state;
};

/* splitmix64: tiny, fast, and good enough to shape a heap. */
static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), without the bias of a modulo. */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in [0, 1). */
static double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static int rng_chance(struct rng *r, double p)
{
	return rng_unit(r) < p;
}

/* 0, 1, 2 ... with the given mean, each value rarer than the last. */
static uint64_t rng_geometric(struct rng *r, double mean)
{
	double u = 1.0 - rng_unit(r); /* (0, 1]: log is finite */

	if (mean <= 0)
		return 0;
	return (uint64_t)floor(log(u) / log(mean / (mean + 1.0)));
}

/* Spread evenly over orders of magnitude between lo and hi. */
static uint64_t rng_log_uniform(struct rng *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	return (uint64_t)((double)lo * exp(rng_unit(r) *
					   log((double)hi / (double)lo)));
}

/* An index in [0, n) where the first few are far the likeliest: class
 * and popular-object choices are Zipf-like in real programs. */
static size_t rng_skewed(struct rng *r, size_t n)
{
	double u = rng_unit(r);

	return (size_t)((double)n * u * u * u);
}

/* ---- Small helpers ------------------------------------------------------- */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROGRAM ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

/* ALLOC_GROW (util/alloc.h), or die: a generator has nothing to save. */
#define XGROW(p, need, cap)                                               \
	do {                                                              \
		if (ALLOC_GROW(p, need, cap) < 0)                         \
			die("out of memory (%zu x %zu bytes)",            \
			    (size_t)(need), sizeof(*(p)));                \
	} while (0)

static uint64_t align8(uint64_t v)
{
	return (v + 7) & ~7ull;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A growable array of object indexes. */
struct index_list {
	uint32_t *v;
	size_t n, cap;
};

static void list_push(struct index_list *l, uint32_t x)
{
	XGROW(l->v, l->n + 1, l->cap);
	l->v[l->n++] = x;
}

/* ---- Classes ------------------------------------------------------------- */

enum class_kind {
	CK_INSTANCE,
	CK_REF_ARRAY,
	CK_PRIM_ARRAY,
};

struct klass {
	char name[64];
	enum class_kind kind;
	unsigned fields;   /* reference fields of an instance */
	uint64_t size;     /* instance size, or array element size */
};

/* Instance classes by their number of reference fields, most used first. */
struct bucket {
	uint16_t cls[MAX_CLASSES];
	size_t n;
};

struct catalogue {
	struct klass v[MAX_CLASSES];
	size_t n;
	struct bucket by_fields[MAX_FIELDS + 1];
	struct bucket ref_arrays, prim_arrays;
	uint16_t object_array, node_array, linked_node, single_node, thread;
	struct bucket instances; /* all of them, in catalogue order */
};

static ht_id class_id(size_t c)
{
	return CLASS_BASE + CLASS_STRIDE * (ht_id)c;
}

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

static void catalogue_build(struct catalogue *cat, struct rng *r)
{
	memset(cat, 0, sizeof(*cat));
	add_runtime_classes(cat);
	add_generated_classes(cat, r);
}

static uint16_t pick_from(const struct bucket *b, struct rng *r)
{
	return b->cls[rng_skewed(r, b->n)];
}

/* ---- The heap ------------------------------------------------------------ */

/* Per-object marks. */
#define M_GARBAGE 0x01u  /* no live object points to it */
#define M_OWNED 0x02u    /* its owner is already decided */
#define M_NO_ADOPT 0x04u /* its fields do not adopt new objects */
#define M_HUGE 0x08u     /* a huge array: its fields spread over the heap */
#define M_CHAIN 0x10u    /* a list node: its free field is the item */
#define M_HEAD 0x20u     /* the first object of a tree (of a unit of work) */
#define M_ROOTED 0x40u   /* a head whose tree a root must hold */
#define M_VISITED 0x80u  /* reached by the heap walk of the current dump */

struct heap {
	size_t n;
	ht_id *id;        /* n + 1: object i spans id[i] .. id[i + 1] */
	uint16_t *cls;
	uint64_t *first;  /* n + 1: object i's fields are ref[first[i] ..] */
	uint32_t *ref;    /* an object index, or NO_REF */
	uint64_t slots;
	size_t cap_slots;
	uint8_t *mark;
	uint32_t *popular;
	size_t n_popular;
	uint32_t threads[N_THREADS]; /* Thread objects, if the heap has them */
	struct index_list shared;    /* far refs' targets, in address order */
	struct index_list tables;    /* the huge arrays */
	uint64_t garbage;
};

static size_t fanout(const struct heap *h, size_t i)
{
	return (size_t)(h->first[i + 1] - h->first[i]);
}

static uint64_t object_size(const struct heap *h, size_t i)
{
	return h->id[i + 1] - h->id[i];
}

static int is_garbage(const struct heap *h, size_t i)
{
	return (h->mark[i] & M_GARBAGE) != 0;
}

static void heap_alloc(struct heap *h, size_t n, double refs_per_object)
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

static void heap_free(struct heap *h)
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
static void heap_append(struct heap *h, size_t i, uint16_t cls,
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

enum feature_kind {
	F_CHAIN,
	F_HUGE_ARRAY,
};

/* A linked list or a huge array, placed after `at` ordinary objects;
 * `seq` orders features placed at the same point, whatever qsort does. */
struct feature {
	uint64_t at;
	size_t seq;
	enum feature_kind kind;
	uint32_t length;
	int doubly, circular;
};

struct plan {
	struct feature *features;
	size_t n_features;
	uint64_t special_objects; /* in the features */
	uint64_t special_slots;
	double array_share;       /* ordinary objects that are ref arrays */
	double leaf_share;        /* instances without reference fields */
	double extra_fields;      /* the others: 1 + geometric(this) fields */
	double garbage_start;     /* chance that a garbage run starts */
};

struct options {
	uint64_t objects;
	double refs;
	uint64_t seed;
	const char *out;
	unsigned dumps;
	bool fields;              /* declare fields and name them in refs */
};

/* Expected length of an ordinary ref array: a discrete Pareto of
 * exponent 1.4 from 0, capped; P(L >= k) = (3 / (k + 3))^1.4. */
static double array_length_mean(void)
{
	double sum = 0;

	for (unsigned k = 1; k <= ARRAY_CAP; k++)
		sum += pow(3.0 / (k + 3.0), 1.4);
	return sum;
}

static size_t array_length(struct rng *r)
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

static void plan_build(struct plan *p, const struct options *o,
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

/* ---- Laying out the objects in allocation order (pass 1) ----------------- */

struct layout {
	struct heap *h;
	const struct catalogue *cat;
	const struct plan *plan;
	struct rng *r;
	uint64_t garbage_left; /* of the current run */
};

/* Leaves: boxed values, plain objects, and primitive arrays (mostly
 * short, as strings' characters are; a few large buffers). */
static void lay_leaf(struct layout *l, size_t i, uint8_t mark)
{
	const struct catalogue *cat = l->cat;
	uint16_t c;
	uint64_t len;

	if (!rng_chance(l->r, PRIM_ARRAY_SHARE)) {
		c = pick_from(&cat->by_fields[0], l->r);
		heap_append(l->h, i, c, cat->v[c].size, 0, mark);
		return;
	}
	c = pick_from(&cat->prim_arrays, l->r);
	len = rng_chance(l->r, 0.01) ? rng_log_uniform(l->r, 256, 65536) :
				       rng_geometric(l->r, 20.0);
	heap_append(l->h, i, c, align8(16 + len * cat->v[c].size), 0, mark);
}

static void lay_ref_array(struct layout *l, size_t i, size_t len,
			  uint8_t mark)
{
	uint16_t c = pick_from(&l->cat->ref_arrays, l->r);

	heap_append(l->h, i, c, align8(16 + 8 * (uint64_t)len), len, mark);
}

static uint8_t next_garbage_mark(struct layout *l)
{
	if (l->garbage_left == 0 && rng_chance(l->r, l->plan->garbage_start))
		l->garbage_left = 1 + rng_geometric(l->r, GARBAGE_RUN_MEAN - 1);
	if (l->garbage_left == 0)
		return 0;
	l->garbage_left--;
	return M_GARBAGE;
}

/* The threads' own objects come first, after the heap's first object. */
static void lay_thread_object(struct layout *l, size_t i, unsigned t)
{
	uint16_t c = l->cat->thread;

	heap_append(l->h, i, c, l->cat->v[c].size, l->cat->v[c].fields, 0);
	l->h->threads[t] = (uint32_t)i;
}

static void lay_ordinary(struct layout *l, size_t i, uint64_t ordinary)
{
	const struct plan *p = l->plan;
	uint64_t extra;
	unsigned fields;
	uint8_t mark;
	uint16_t c;

	if (ordinary >= 1 && ordinary <= N_THREADS) {
		lay_thread_object(l, i, ordinary - 1);
		return;
	}
	/* The first object roots the heap: never garbage. */
	mark = i ? next_garbage_mark(l) : 0;
	if (rng_chance(l->r, p->array_share)) {
		lay_ref_array(l, i, array_length(l->r), mark);
		return;
	}
	if (rng_chance(l->r, p->leaf_share)) {
		lay_leaf(l, i, mark);
		return;
	}
	extra = rng_geometric(l->r, p->extra_fields);
	fields = 1 + (unsigned)(extra < ARRAY_CAP ? extra : ARRAY_CAP);
	if (fields > MAX_FIELDS) {
		lay_ref_array(l, i, fields, mark);
		return;
	}
	c = pick_from(&l->cat->by_fields[fields], l->r);
	heap_append(l->h, i, c, l->cat->v[c].size, fields, mark);
}

/* A list allocated node after node: each node owns the next one. Fields
 * are next, [prev,] item; the item is decided with the other fields. */
static size_t lay_chain(struct layout *l, size_t i, const struct feature *f)
{
	struct heap *h = l->h;
	uint16_t c = f->doubly ? l->cat->linked_node : l->cat->single_node;
	size_t head = i, last = i + f->length - 1;

	for (size_t k = head; k <= last; k++) {
		uint8_t mark = M_NO_ADOPT | M_CHAIN | (k > head ? M_OWNED : 0);
		uint32_t *field;

		heap_append(h, k, c, l->cat->v[c].size, f->doubly ? 3 : 2,
			    mark);
		field = &h->ref[h->first[k]];
		field[0] = k < last ? (uint32_t)(k + 1) :
			   f->circular ? (uint32_t)head : NO_REF;
		if (f->doubly)
			field[1] = k > head ? (uint32_t)(k - 1) :
				   f->circular ? (uint32_t)last : NO_REF;
	}
	return last + 1;
}

static size_t lay_huge_array(struct layout *l, size_t i,
			     const struct feature *f)
{
	uint16_t c = rng_chance(l->r, 0.5) ? l->cat->object_array :
					      l->cat->node_array;

	heap_append(l->h, i, c, align8(16 + 8 * (uint64_t)f->length),
		    f->length, M_NO_ADOPT | M_HUGE);
	list_push(&l->h->tables, (uint32_t)i);
	return i + 1;
}

static void lay_out_heap(struct heap *h, const struct catalogue *cat,
			 const struct plan *p, struct rng *r)
{
	struct layout l = { .h = h, .cat = cat, .plan = p, .r = r };
	size_t i = 0, f = 0;
	uint64_t ordinary = 0;

	h->id[0] = HEAP_BASE;
	while (i < h->n) {
		if (f < p->n_features && p->features[f].at <= ordinary) {
			const struct feature *ft = &p->features[f++];

			i = ft->kind == F_CHAIN ? lay_chain(&l, i, ft) :
						  lay_huge_array(&l, i, ft);
			continue;
		}
		lay_ordinary(&l, i++, ordinary);
		ordinary++;
	}
	for (i = 0; i < h->n; i++)
		h->garbage += is_garbage(h, i);
}

/* ---- Owners (pass 2) ----------------------------------------------------- */

/* A recent object with fields still free to adopt new objects. */
struct adopter {
	uint32_t obj;
	uint32_t used;
};

/* Per object while owners are assigned: its depth in its tree, and
 * whether the tree is public. */
#define DEPTH_MASK 0x7fu
#define PUBLIC_TREE 0x80u

struct adopters {
	struct adopter v[OWNER_WINDOW];
	size_t n;
	uint8_t *tree; /* DEPTH_MASK | PUBLIC_TREE */
};

static void adopters_push(struct adopters *a, uint32_t obj)
{
	if (a->n == OWNER_WINDOW) {
		/* The oldest half is done building: forget it at once. */
		memmove(a->v, a->v + OWNER_WINDOW / 2,
			(OWNER_WINDOW / 2) * sizeof(a->v[0]));
		a->n = OWNER_WINDOW / 2;
	}
	a->v[a->n].obj = obj;
	a->v[a->n].used = 0;
	a->n++;
}

/* The owner is most often the newest adopter: data is built depth-first. */
static int adopt(struct heap *h, struct adopters *a, struct rng *r,
		 size_t child)
{
	size_t back, at;
	struct adopter *e;

	if (a->n == 0)
		return 0;
	back = (size_t)rng_geometric(r, 0.7);
	at = back < a->n ? a->n - 1 - back : a->n - 1;
	e = &a->v[at];
	h->ref[h->first[e->obj] + e->used++] = (uint32_t)child;
	a->tree[child] = (uint8_t)(a->tree[e->obj] + 1); /* the flag stays */
	if (e->used == fanout(h, e->obj)) {
		memmove(e, e + 1, (a->n - at - 1) * sizeof(*e));
		a->n--;
	}
	return 1;
}

/*
 * Gives every live object one owner allocated before it, or makes it the
 * head of a new tree (an orphan, to be held by a root or a table) when no
 * recent object can adopt it or a new unit of work starts. Owners come
 * before their objects, so no ownership cycle exists; the cycles come from
 * the other fields. The objects near the top of a tree are the ones that
 * other trees may share: deeper ones stay private to their tree, so that
 * trees retain what they own, as in real programs.
 */
static void assign_owners(struct heap *h, struct rng *r,
			  struct index_list *orphans)
{
	struct adopters a = { .n = 0 };

	a.tree = xcalloc(h->n, 1);
	for (size_t i = 0; i < h->n; i++) {
		uint8_t mark = h->mark[i];
		unsigned depth;

		if (mark & M_GARBAGE)
			continue;
		if (rng_chance(r, 1.0 / CONTEXT_MEAN))
			a.n = 0;
		if (mark & M_OWNED) {
			a.tree[i] = DEPTH_LIMIT; /* a list node: private */
		} else if (!adopt(h, &a, r, i)) {
			list_push(orphans, (uint32_t)i);
			h->mark[i] |= M_HEAD;
			a.tree[i] = rng_chance(r, PUBLIC_SHARE) ?
				    PUBLIC_TREE : 0;
		}
		depth = a.tree[i] & DEPTH_MASK;
		if ((a.tree[i] & PUBLIC_TREE) && depth >= 1 &&
		    depth <= SHARED_DEPTH && !(mark & M_CHAIN))
			list_push(&h->shared, (uint32_t)i);
		if (!(mark & M_NO_ADOPT) && fanout(h, i) > 0 &&
		    depth < DEPTH_LIMIT)
			adopters_push(&a, (uint32_t)i);
	}
	free(a.tree);
}

/* ---- The other fields (pass 3) ------------------------------------------- */

struct filler {
	struct heap *h;
	struct rng *r;
	double null_share;
};

/* Live objects are never garbage's referrers: move to the next live one. */
static uint32_t live_from(const struct heap *h, size_t j)
{
	while (is_garbage(h, j))
		j = j + 1 < h->n ? j + 1 : 0;
	return (uint32_t)j;
}

/* Near: most often back to something just allocated, sometimes forward,
 * but within the object's own tree: what a unit of work builds refers to
 * itself, not to the insides of its neighbours' data. */
static size_t near_target(struct filler *f, size_t i)
{
	const struct heap *h = f->h;
	uint64_t d = 1 + rng_geometric(f->r, 12.0);
	size_t j = i;

	/* A head has nothing of its tree before it. */
	if (rng_chance(f->r, 0.7) && !(h->mark[i] & M_HEAD)) {
		for (; d && j > 0 && !(h->mark[j] & M_HEAD); d--)
			j--;
	} else {
		for (; d && j + 1 < h->n && !(h->mark[j + 1] & M_HEAD); d--)
			j++;
	}
	/* Garbage may point anywhere; the live go back towards i (live)
	 * rather than on into another tree. */
	while (!is_garbage(h, i) && is_garbage(h, j))
		j = j < i ? j + 1 : j - 1;
	return j;
}

static size_t popular_target(struct filler *f)
{
	double u = rng_unit(f->r);

	return f->h->popular[(size_t)((double)f->h->n_popular * u * u)];
}

static size_t far_target(struct filler *f)
{
	const struct index_list *shared = &f->h->shared;

	if (shared->n == 0) /* a tiny heap */
		return live_from(f->h, rng_below(f->r, f->h->n));
	return shared->v[rng_below(f->r, shared->n)];
}

static uint32_t ordinary_target(struct filler *f, size_t i)
{
	double u = rng_unit(f->r);

	if (u < 0.75)
		return (uint32_t)near_target(f, i);
	return (uint32_t)(u < 0.90 ? popular_target(f) : far_target(f));
}

/* A list's items: values kept elsewhere, often shared. */
static uint32_t item_target(struct filler *f)
{
	return (uint32_t)(rng_chance(f->r, 0.3) ? popular_target(f) :
						   far_target(f));
}

/* Besides the trees it holds, a huge array is an index of shared objects
 * over much of the heap, in address order. */
static uint32_t huge_target(struct filler *f, size_t k, size_t len)
{
	const struct index_list *shared = &f->h->shared;
	size_t at, stride;

	if (shared->n == 0)
		return live_from(f->h, rng_below(f->r, f->h->n));
	stride = shared->n / len ? shared->n / len : 1;
	at = (k * shared->n / len + rng_below(f->r, stride)) % shared->n;
	return shared->v[at];
}

static void fill_object(struct filler *f, size_t i)
{
	struct heap *h = f->h;
	uint32_t *field = &h->ref[h->first[i]];
	size_t len = fanout(h, i);
	uint8_t mark = h->mark[i];

	for (size_t k = 0; k < len; k++) {
		if (field[k] != UNSET)
			continue;
		if (rng_chance(f->r, f->null_share))
			field[k] = NO_REF;
		else if (mark & M_HUGE)
			field[k] = huge_target(f, k, len);
		else if (mark & M_CHAIN)
			field[k] = item_target(f);
		else
			field[k] = ordinary_target(f, i);
	}
}

/* Interned strings, singletons, enum constants: a few objects that very
 * many refer to, and whose subgraphs are shared. */
static void choose_popular(struct heap *h, struct rng *r)
{
	size_t n = h->n / 4000;

	if (n < 8)
		n = 8;
	if (n > 4096)
		n = 4096;
	h->popular = xcalloc(n, sizeof(*h->popular));
	h->n_popular = n;
	for (size_t k = 0; k < n; k++)
		h->popular[k] = h->shared.n ?
			h->shared.v[rng_below(r, h->shared.n)] :
			live_from(h, rng_below(r, h->n));
}

/* The share of undecided fields left null so that the heap ends with
 * `refs` references per object. */
static double null_share(const struct heap *h, double refs)
{
	uint64_t set = 0, unset = 0;
	double want, share;

	for (uint64_t s = 0; s < h->slots; s++) {
		if (h->ref[s] == UNSET)
			unset++;
		else if (h->ref[s] != NO_REF)
			set++;
	}
	if (unset == 0)
		return 0;
	want = refs * (double)h->n - (double)set;
	share = 1.0 - want / (double)unset;
	return share < 0 ? 0 : share > 0.95 ? 0.95 : share;
}

/* A free field of table t, as a hash table fills: anywhere, then the next
 * free one. UINT64_MAX when the table is full. */
static uint64_t free_table_field(const struct heap *h, size_t t,
				 struct rng *r)
{
	size_t len = fanout(h, t);
	uint64_t at = rng_below(r, len);

	for (size_t probe = 0; probe < len; probe++) {
		uint64_t s = h->first[t] + (at + probe) % len;

		if (h->ref[s] == UNSET)
			return s;
	}
	return UINT64_MAX;
}

/* The trees that hold a huge array must hang off roots: held by arrays,
 * two of them could hold each other, and nothing else. A tree is all the
 * objects from its head to the next head. */
static void root_trees_of_tables(struct heap *h)
{
	for (size_t k = 0; k < h->tables.n; k++) {
		size_t i = h->tables.v[k];

		while (!(h->mark[i] & M_HEAD))
			i--;
		h->mark[i] |= M_ROOTED;
	}
}

/* Caches and registries: huge arrays hold a share of the trees, and so
 * retain them. A tree goes into a table that existed before it, so that
 * the earlier dumps of a growing heap do not lose it. */
static void hold_trees_in_tables(struct heap *h, struct index_list *orphans,
				 struct rng *r)
{
	size_t kept = 0, older = 0;

	root_trees_of_tables(h);
	for (size_t k = 0; k < orphans->n; k++) {
		uint32_t o = orphans->v[k];
		uint64_t s = UINT64_MAX;

		/* The orphans come in address order, as the tables do. */
		while (older < h->tables.n && h->tables.v[older] < o)
			older++;
		if (older && !(h->mark[o] & M_ROOTED) &&
		    rng_chance(r, TABLE_HELD_SHARE))
			s = free_table_field(
				h, h->tables.v[rng_below(r, older)], r);
		if (s == UINT64_MAX)
			orphans->v[kept++] = o;
		else
			h->ref[s] = o;
	}
	orphans->n = kept;
}

static void fill_fields(struct heap *h, struct rng *r, double refs)
{
	struct filler f = { .h = h, .r = r };

	choose_popular(h, r);
	f.null_share = null_share(h, refs);
	for (size_t i = 0; i < h->n; i++)
		fill_object(&f, i);
}

/* ---- Roots --------------------------------------------------------------- */

struct root_set {
	enum ht_container_type type;
	ht_id id1, id2;
	struct index_list refs;
};

struct roots {
	struct root_set *v;
	size_t n, cap;
	size_t first_static; /* containers that may take orphans: from here */
};

static struct root_set *add_container(struct roots *rs,
				      enum ht_container_type type, ht_id id1,
				      ht_id id2)
{
	struct root_set *s;

	XGROW(rs->v, rs->n + 1, rs->cap);
	s = &rs->v[rs->n++];
	memset(s, 0, sizeof(*s));
	s->type = type;
	s->id1 = id1;
	s->id2 = id2;
	return s;
}

/* Locals mostly hold what the thread allocated lately. */
static uint32_t local_target(const struct heap *h, struct rng *r)
{
	size_t recent = h->n / 20 + 1;

	if (rng_chance(r, 0.6))
		return live_from(h, h->n - 1 - rng_below(r, recent));
	return live_from(h, rng_below(r, h->n));
}

static enum ht_container_type frame_type(struct rng *r)
{
	double u = rng_unit(r);

	if (u < 0.85)
		return HT_C_RT_JIT;
	return u < 0.93 ? HT_C_RT_NATIVE : HT_C_RT_INTERNALFRAME;
}

static ht_id method_id(size_t m)
{
	return METHOD_BASE + METHOD_STRIDE * (ht_id)m;
}

/* Each thread: its container (rooting its Thread object), then its frames
 * from the top of the stack down, each with a few locals. */
static void plan_thread_roots(struct roots *rs, const struct heap *h,
			      struct rng *r)
{
	for (unsigned t = 0; t < N_THREADS; t++) {
		size_t frames = 4 + rng_below(r, 36);
		ht_id sp = STACK_BASE + t * THREAD_STACK_SPAN;

		struct root_set *thread =
			add_container(rs, HT_C_RT_THREAD, t + 1, 0);

		if (h->threads[t])
			list_push(&thread->refs, h->threads[t]);
		for (size_t f = 0; f < frames; f++) {
			enum ht_container_type type = frame_type(r);
			ht_id method = type == HT_C_RT_INTERNALFRAME ? 0 :
				method_id(rng_skewed(r, N_METHODS));
			struct root_set *s;
			size_t locals = rng_geometric(r, 1.5);

			sp += 0x40 + 0x10 * rng_below(r, 16);
			s = add_container(rs, type, sp, method);
			for (size_t k = 0; k < locals; k++)
				list_push(&s->refs, local_target(h, r));
		}
	}
}

/* Statics of a third of the classes: popular objects and caches. */
static void plan_static_roots(struct roots *rs, const struct heap *h,
			      const struct catalogue *cat, struct rng *r)
{
	for (size_t c = 0; c < cat->instances.n; c++) {
		struct root_set *s;
		size_t n;

		if (!rng_chance(r, 0.35))
			continue;
		s = add_container(rs, HT_C_RT_CLASS,
				  class_id(cat->instances.cls[c]), 0);
		n = 1 + rng_below(r, 4);
		for (size_t k = 0; k < n; k++)
			list_push(&s->refs, rng_chance(r, 0.5) ?
				  h->popular[rng_below(r, h->n_popular)] :
				  live_from(h, rng_below(r, h->n)));
	}
}

/* The VM's own tables, JNI global references, the finalizer queue. */
static void plan_vm_roots(struct roots *rs, const struct heap *h,
			  struct rng *r)
{
	struct root_set *s = add_container(rs, HT_C_RT_ROOTTABLE, 0, 0);
	size_t n = h->n / 2000 + 1;

	for (size_t k = 0; k < h->n_popular && k < 200; k++)
		list_push(&s->refs, h->popular[k]);
	s = add_container(rs, HT_C_RT_INTERNALVM, 0, 0);
	for (size_t k = 0; k < 4; k++)
		list_push(&s->refs, live_from(h, rng_below(r, h->n)));
	for (unsigned p = 0; p < 3; p++) {
		size_t pointers = 5 + rng_below(r, 10);

		s = add_container(rs, HT_C_RT_STRONGPTR, 0, 0);
		for (size_t k = 0; k < pointers; k++)
			list_push(&s->refs, live_from(h, rng_below(r, h->n)));
	}
	s = add_container(rs, HT_C_RT_FINALIZED, 0, 0);
	for (size_t k = 0; k < n && k < 10000; k++)
		list_push(&s->refs, live_from(h, rng_below(r, h->n)));
}

/* The objects no one owns hang off frames, statics and JNI pointers. */
static void root_orphans(struct roots *rs, const struct index_list *orphans,
			 struct rng *r)
{
	size_t takers = rs->n;

	for (size_t k = 0; k < orphans->n; k++) {
		size_t c = rng_below(r, takers);

		while (rs->v[c].type == HT_C_RT_THREAD ||
		       rs->v[c].type == HT_C_RT_FINALIZED)
			c = (c + 1) % takers;
		list_push(&rs->v[c].refs, orphans->v[k]);
	}
}

/* A container may be begun again later: its roots add up. */
static void plan_reopened_static(struct roots *rs, const struct heap *h,
				 struct rng *r)
{
	for (size_t c = 0; c < rs->n; c++) {
		if (rs->v[c].type != HT_C_RT_CLASS)
			continue;
		list_push(&add_container(rs, HT_C_RT_CLASS, rs->v[c].id1,
					 0)->refs,
			  live_from(h, rng_below(r, h->n)));
		return;
	}
}

static void plan_roots(struct roots *rs, const struct heap *h,
		       const struct catalogue *cat,
		       const struct index_list *orphans, struct rng *r)
{
	memset(rs, 0, sizeof(*rs));
	plan_thread_roots(rs, h, r);
	plan_static_roots(rs, h, cat, r);
	plan_vm_roots(rs, h, r);
	root_orphans(rs, orphans, r);
	plan_reopened_static(rs, h, r);
}

static void roots_free(struct roots *rs)
{
	for (size_t c = 0; c < rs->n; c++)
		free(rs->v[c].refs.v);
	free(rs->v);
}

/* ---- Recording ----------------------------------------------------------- */

struct counts {
	uint64_t objects, references, nulls, roots, unreachable;
};

struct recording {
	struct ht_recorder *rec;
	const struct heap *h;
	const struct roots *roots;
	const struct catalogue *cat;
	bool fields;           /* refs name the fields they are read from */
	ht_id *field_ids;      /* of the PIECE refs being passed */
	enum ht_error_code first_error;
	ht_id *ids;            /* PIECE refs or roots being passed */
	uint32_t *flags;       /* as many zeros */
	uint32_t *stack;       /* of the heap walk */
	size_t limit;          /* objects allocated by the current dump */
	struct counts last;    /* of the last dump */
	uint64_t recorded;     /* objects, over all the dumps */
};

static void note(struct recording *g, enum ht_error_code code)
{
	if (code != HT_OK && g->first_error == HT_OK)
		g->first_error = code;
}

static void record_classes(struct recording *g, const struct catalogue *cat)
{
	for (size_t c = 0; c < cat->n; c++) {
		const struct klass *k = &cat->v[c];

		note(g, ht_class(g->rec, class_id(c), k->name,
				 k->kind == CK_INSTANCE, k->size));
	}
}

/* An instance class's k-th reference field: small dense numbers, as a
 * recorder would choose them. */
static ht_id field_id(size_t cls, size_t k)
{
	return (ht_id)(cls * MAX_FIELDS + k + 1);
}

static void record_fields(struct recording *g, const struct catalogue *cat)
{
	struct ht_field f[MAX_FIELDS];
	char names[MAX_FIELDS][16];

	for (size_t c = 0; c < cat->n; c++) {
		const struct klass *k = &cat->v[c];

		if (k->kind != CK_INSTANCE || k->fields == 0)
			continue;
		for (unsigned i = 0; i < k->fields && i < MAX_FIELDS; i++) {
			snprintf(names[i], sizeof(names[i]), "ref%u", i);
			f[i] = (struct ht_field){
				.id = field_id(c, i),
				.class_id = class_id(c),
				.name = names[i],
				.kind = HT_FIELD_INSTANCE,
			};
		}
		note(g, ht_fields(g->rec, k->fields < MAX_FIELDS ? k->fields :
				  MAX_FIELDS, f));
	}
}

static void record_methods(struct recording *g, const struct catalogue *cat,
			   struct rng *r)
{
	static const char *const verbs[] = {
		"run", "process", "handle", "get", "update", "visit", "build",
		"load", "apply", "lambda$main$0",
	};
	char name[128];

	for (size_t m = 0; m < N_METHODS; m++) {
		const struct klass *k =
			&cat->v[cat->instances.cls[rng_below(
				r, cat->instances.n)]];

		snprintf(name, sizeof(name), "%s.%s%s", k->name,
			 verbs[rng_below(r, ARRAY_SIZE(verbs))],
			 m % 3 ? "" : "Internal");
		note(g, ht_method(g->rec, method_id(m), name));
	}
}

static void record_threads(struct recording *g)
{
	static const char *const fixed[] = {
		"main", "Finalizer", "Reference Handler",
	};
	char name[32];

	for (unsigned t = 0; t < N_THREADS; t++) {
		if (t < ARRAY_SIZE(fixed))
			snprintf(name, sizeof(name), "%s", fixed[t]);
		else
			snprintf(name, sizeof(name), "worker-%u", t - 2);
		note(g, ht_thread(g->rec, t + 1, name));
	}
}

/* The roots of one container among the objects allocated so far. */
static void record_root_set(struct recording *g, const struct root_set *s)
{
	size_t n = 0;

	note(g, ht_begin_container(g->rec, s->type, s->id1, s->id2));
	for (size_t k = 0; k < s->refs.n; k++)
		if (s->refs.v[k] < g->limit)
			g->ids[n++] = g->h->id[s->refs.v[k]];
	if (n == 0)
		return;
	note(g, ht_root_references(g->rec, n, g->ids, g->flags, NULL, NULL,
				   NULL, HT_RESULT_OK));
	g->last.roots += n;
}

/* The field an instance's k-th reference is read from; an array's
 * elements are no field. */
static ht_id object_field(const struct recording *g, size_t i, size_t k)
{
	const struct klass *c = &g->cat->v[g->h->cls[i]];

	return c->kind == CK_INSTANCE && k < c->fields && k < MAX_FIELDS ?
		field_id(g->h->cls[i], k) : 0;
}

/* One object's fields, those past the dump's allocation point null. A
 * long array goes in pieces, each but the last saying more will come. */
static void record_object(struct recording *g, size_t i)
{
	const struct heap *h = g->h;
	const uint32_t *field = &h->ref[h->first[i]];
	size_t len = fanout(h, i), done = 0;

	do {
		size_t n = len - done < PIECE ? len - done : PIECE;
		uint32_t flags = done + n < len ? HT_OBJ_MORE_REFERENCES : 0;

		for (size_t k = 0; k < n; k++) {
			uint32_t t = field[done + k];
			int present = t != NO_REF && t < g->limit;

			g->ids[k] = present ? h->id[t] : 0;
			if (g->fields)
				g->field_ids[k] = object_field(g, i, done + k);
			g->last.references += present;
			g->last.nulls += !present;
		}
		note(g, ht_object_references_fields(
				g->rec, h->id[i], class_id(h->cls[i]),
				object_size(h, i), flags, n, g->ids, NULL,
				g->fields ? g->field_ids : NULL, -1,
				HT_RESULT_OK));
		done += n;
	} while (done < len);
	g->last.objects++;
	g->recorded++;
}

/* Depth-first from one object, each reported when first reached. An
 * object is marked when pushed, so the stack never holds more than the
 * heap. */
static void walk_from(struct recording *g, uint8_t *mark, size_t start)
{
	const struct heap *h = g->h;
	size_t top = 0;

	if (mark[start] & M_VISITED)
		return;
	mark[start] |= M_VISITED;
	g->stack[top++] = (uint32_t)start;
	while (top) {
		size_t i = g->stack[--top];
		const uint32_t *field = &h->ref[h->first[i]];

		record_object(g, i);
		/* Reversed, so that the first field is walked first. */
		for (size_t k = fanout(h, i); k-- > 0;) {
			uint32_t t = field[k];

			if (t == NO_REF || t >= g->limit ||
			    (mark[t] & M_VISITED))
				continue;
			mark[t] |= M_VISITED;
			g->stack[top++] = t;
		}
	}
}

/* The heap walk: from the roots in container order, then the rest (the
 * garbage) in address order, as "the remaining portions of the heap". */
static void record_heap_walk(struct recording *g, uint8_t *mark)
{
	uint64_t reached;

	for (size_t i = 0; i < g->limit; i++)
		mark[i] &= (uint8_t)~M_VISITED;
	for (size_t c = 0; c < g->roots->n; c++) {
		const struct index_list *refs = &g->roots->v[c].refs;

		for (size_t k = 0; k < refs->n; k++)
			if (refs->v[k] < g->limit)
				walk_from(g, mark, refs->v[k]);
	}
	reached = g->last.objects;
	for (size_t i = 0; i < g->limit; i++)
		walk_from(g, mark, i);
	g->last.unreachable = g->last.objects - reached;
}

static void record_dump(struct recording *g, uint8_t *mark, size_t limit)
{
	memset(&g->last, 0, sizeof(g->last));
	g->limit = limit;
	note(g, ht_begin_container(g->rec, HT_C_BEGIN, 0, 0));
	for (size_t c = 0; c < g->roots->n; c++)
		record_root_set(g, &g->roots->v[c]);
	note(g, ht_begin_container(g->rec, HT_C_HEAP, 0, 0));
	record_heap_walk(g, mark);
	note(g, ht_begin_container(g->rec, HT_C_END, 0, 0));
}

static size_t longest_root_set(const struct roots *rs)
{
	size_t most = 0;

	for (size_t c = 0; c < rs->n; c++)
		if (rs->v[c].refs.n > most)
			most = rs->v[c].refs.n;
	return most;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* ---- The command --------------------------------------------------------- */

static const char usage[] =
	"usage: " PROGRAM " -n OBJECTS [-r REFS_PER_OBJECT] [-s SEED] "
	"[-o OUT.ht] [--dumps K]\n"
	"                  [--fields]\n"
	"\n"
	"Records a synthetic Microsoft-VM-style heap dump through the shim:\n"
	"allocation-ordered ids, a few hundred classes, power-law fan-out,\n"
	"linked lists, huge arrays, cycles, shared objects, ~5% garbage.\n"
	"The same options give the same file.\n"
	"\n"
	"  -n, --objects N   objects in the (last) dump\n"
	"  -r, --refs R      non-null references per object (default 3)\n"
	"  -s, --seed S      random seed (default 1)\n"
	"  -o, --output F    the trace (default heaptrace.ht)\n"
	"      --dumps K     K dumps of the growing heap, the last one whole\n"
	"                    (default 1)\n"
	"      --fields      declare each class's fields and name the field\n"
	"                    of every reference (format version 2)\n"
	"  -h, --help        this help\n";

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROGRAM ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee '" PROGRAM " --help'\n");
	exit(2);
}

static uint64_t parse_count(const char *opt, const char *arg, uint64_t min,
			    uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v < min ||
	    v > max)
		usage_error("%s wants a number from %" PRIu64 " to %" PRIu64
			    ", not '%s'", opt, min, max, arg);
	return v;
}

static double parse_refs(const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0 && v <= 100)) {
		usage_error("-r wants a number from 0 to 100, not '%s'", arg);
	}
	return v;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"objects", required_argument, NULL, 'n'},
		{"refs", required_argument, NULL, 'r'},
		{"seed", required_argument, NULL, 's'},
		{"output", required_argument, NULL, 'o'},
		{"dumps", required_argument, NULL, 'd'},
		{"fields", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct options){ .refs = 3, .seed = 1, .out = "heaptrace.ht",
			       .dumps = 1 };
	while ((c = getopt_long(argc, argv, "n:r:s:o:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'n':
			o->objects = parse_count("-n", optarg, 1, MAX_OBJECTS);
			break;
		case 'r':
			o->refs = parse_refs(optarg);
			break;
		case 's':
			o->seed = parse_count("-s", optarg, 0, UINT64_MAX);
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'd':
			o->dumps = (unsigned)parse_count("--dumps", optarg, 1,
							 1000);
			break;
		case 'f':
			o->fields = true;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default: /* getopt said what is wrong */
			fprintf(stderr, "see '" PROGRAM " --help'\n");
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->objects == 0)
		usage_error("-n OBJECTS is required");
	if (o->dumps > o->objects)
		o->dumps = (unsigned)o->objects;
}

static struct ht_recorder *open_trace(const struct options *o)
{
	char command[256], seed[32];
	const struct ht_metadata meta[] = {
		{"generator", PROGRAM},
		{"seed", seed},
	};
	const struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "msjvm",
		.runtime_version = "synthetic",
		.pointer_size = 8,
		.command_line = command,
		.n_metadata = ARRAY_SIZE(meta),
		.metadata = meta,
	};
	struct ht_error err;
	struct ht_recorder *rec;

	snprintf(seed, sizeof(seed), "%" PRIu64, o->seed);
	snprintf(command, sizeof(command),
		 PROGRAM " -n %" PRIu64 " -r %g -s %" PRIu64 " --dumps %u",
		 o->objects, o->refs, o->seed, o->dumps);
	rec = ht_recorder_open(o->out, &header, NULL, &err);
	if (!rec)
		die("%s", err.message);
	return rec;
}

static uint64_t violations(const struct ht_recorder *rec)
{
	struct ht_record_stats st;
	uint64_t sum = 0;

	ht_recorder_stats(rec, &st);
	for (size_t v = 0; v < HT_V_COUNT_; v++)
		sum += st.violations[v];
	return sum;
}

static void record_trace(const struct options *o, const struct heap *h,
			 const struct catalogue *cat, const struct roots *rs,
			 struct rng *r, double started)
{
	size_t most = longest_root_set(rs);
	struct recording g = {
		.h = h,
		.roots = rs,
		.cat = cat,
		.fields = o->fields,
		.rec = open_trace(o),
	};
	struct ht_error err;
	uint64_t bad;

	most = most > PIECE ? most : PIECE;
	g.ids = xcalloc(most, sizeof(*g.ids));
	g.flags = xcalloc(most, sizeof(*g.flags));
	g.field_ids = xcalloc(most, sizeof(*g.field_ids));
	g.stack = xcalloc(h->n, sizeof(*g.stack));
	record_classes(&g, cat);
	if (o->fields)
		record_fields(&g, cat);
	record_methods(&g, cat, r);
	record_threads(&g);
	for (unsigned d = 1; d <= o->dumps; d++)
		record_dump(&g, h->mark, (size_t)(h->n * d / o->dumps));
	bad = violations(g.rec);
	if (ht_recorder_close(g.rec, &err) != HT_OK)
		die("%s", err.message);
	if (g.first_error != HT_OK)
		die("%s: the shim refused an event (error %d)", o->out,
		    (int)g.first_error);
	if (bad)
		die("%s: the shim counted %" PRIu64 " protocol violations",
		    o->out, bad);
	fprintf(stderr, PROGRAM ": %s: %" PRIu64 " objects, %" PRIu64
		" references (%.2f per object, %" PRIu64 " null fields), %"
		PRIu64 " roots, %" PRIu64 " unreachable, %u dump%s, %" PRIu64
		" file bytes (%.2f per object recorded), %.2f s\n",
		o->out, g.last.objects, g.last.references,
		(double)g.last.references / (double)g.last.objects,
		g.last.nulls, g.last.roots, g.last.unreachable, o->dumps,
		o->dumps == 1 ? "" : "s", file_size(o->out),
		(double)file_size(o->out) / (double)g.recorded,
		now() - started);
	free(g.ids);
	free(g.flags);
	free(g.field_ids);
	free(g.stack);
}

int main(int argc, char **argv)
{
	struct options o;
	struct rng r;
	struct catalogue *cat = xcalloc(1, sizeof(*cat));
	struct plan plan;
	struct heap h;
	struct index_list orphans = { 0 };
	struct roots roots;
	double started = now();

	parse_options(argc, argv, &o);
	r.state = o.seed;
	catalogue_build(cat, &r);
	plan_build(&plan, &o, &r);
	heap_alloc(&h, o.objects, o.refs);
	lay_out_heap(&h, cat, &plan, &r);
	assign_owners(&h, &r, &orphans);
	hold_trees_in_tables(&h, &orphans, &r);
	fill_fields(&h, &r, o.refs);
	plan_roots(&roots, &h, cat, &orphans, &r);
	record_trace(&o, &h, cat, &roots, &r, started);
	roots_free(&roots);
	free(orphans.v);
	heap_free(&h);
	free(plan.features);
	free(cat);
	return 0;
}
