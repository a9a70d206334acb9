/*
 * genheap_internal.h - what the pieces of ht-genheap share: the shape of
 * the heap (its constants), the deterministic randomness, the classes,
 * the heap and its plan, the roots, and the small helpers every pass
 * calls per object or per draw (static inline, as when the program was
 * one file). genheap.c is the command, genheap_plan.c the classes, the
 * heap's arrays and the plan, genheap_build.c the three passes that lay
 * the heap out, genheap_record.c the roots and the recording; genheap.c
 * says what the heap is meant to look like.
 *
 * This header is not an API; it may change from one release to the next.
 */
#ifndef HT_GENHEAP_INTERNAL_H
#define HT_GENHEAP_INTERNAL_H

#include <heaptrace/record.h>

#include "util/alloc.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), without the bias of a modulo. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in [0, 1). */
static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static inline int rng_chance(struct rng *r, double p)
{
	return rng_unit(r) < p;
}

/* 0, 1, 2 ... with the given mean, each value rarer than the last. */
static inline uint64_t rng_geometric(struct rng *r, double mean)
{
	double u = 1.0 - rng_unit(r); /* (0, 1]: log is finite */

	if (mean <= 0)
		return 0;
	return (uint64_t)floor(log(u) / log(mean / (mean + 1.0)));
}

/* Spread evenly over orders of magnitude between lo and hi. */
static inline uint64_t rng_log_uniform(struct rng *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	return (uint64_t)((double)lo * exp(rng_unit(r) *
					   log((double)hi / (double)lo)));
}

/* An index in [0, n) where the first few are far the likeliest: class
 * and popular-object choices are Zipf-like in real programs. */
static inline size_t rng_skewed(struct rng *r, size_t n)
{
	double u = rng_unit(r);

	return (size_t)((double)n * u * u * u);
}

/* ---- Small helpers ------------------------------------------------------- */

/* genheap.c */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
					       noreturn));

static inline void *xcalloc(size_t n, size_t size)
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

static inline uint64_t align8(uint64_t v)
{
	return (v + 7) & ~7ull;
}

static inline double now(void)
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

static inline void list_push(struct index_list *l, uint32_t x)
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

static inline ht_id class_id(size_t c)
{
	return CLASS_BASE + CLASS_STRIDE * (ht_id)c;
}

static inline uint16_t pick_from(const struct bucket *b, struct rng *r)
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

static inline size_t fanout(const struct heap *h, size_t i)
{
	return (size_t)(h->first[i + 1] - h->first[i]);
}

static inline uint64_t object_size(const struct heap *h, size_t i)
{
	return h->id[i + 1] - h->id[i];
}

static inline int is_garbage(const struct heap *h, size_t i)
{
	return (h->mark[i] & M_GARBAGE) != 0;
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

/* ---- The other fields (pass 3) ------------------------------------------- */

/* Live objects are never garbage's referrers: move to the next live one. */
static inline uint32_t live_from(const struct heap *h, size_t j)
{
	while (is_garbage(h, j))
		j = j + 1 < h->n ? j + 1 : 0;
	return (uint32_t)j;
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

static inline ht_id method_id(size_t m)
{
	return METHOD_BASE + METHOD_STRIDE * (ht_id)m;
}

/* ---- Given by one piece to the others ----------------------------------- */

/* genheap_plan.c */
void catalogue_build(struct catalogue *cat, struct rng *r);
void genheap_alloc(struct heap *h, size_t n, double refs_per_object);
void genheap_free(struct heap *h);
void genheap_append(struct heap *h, size_t i, uint16_t cls, uint64_t size,
		 size_t fields, uint8_t mark);
size_t array_length(struct rng *r);
void plan_build(struct plan *p, const struct options *o, struct rng *r);

/* genheap_build.c */
void lay_out_heap(struct heap *h, const struct catalogue *cat,
		  const struct plan *p, struct rng *r);
void assign_owners(struct heap *h, struct rng *r, struct index_list *orphans);
void hold_trees_in_tables(struct heap *h, struct index_list *orphans,
			  struct rng *r);
void fill_fields(struct heap *h, struct rng *r, double refs);

/* genheap_record.c */
void plan_roots(struct roots *rs, const struct heap *h,
		const struct catalogue *cat, const struct index_list *orphans,
		struct rng *r);
void roots_free(struct roots *rs);
void record_trace(const struct options *o, const struct heap *h,
		  const struct catalogue *cat, const struct roots *rs,
		  struct rng *r, double started);

#endif
