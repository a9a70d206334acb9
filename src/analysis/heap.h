/*
 * heap.h - the heap graph of one dump (doc/design.md section 3), built by
 * replaying a trace. What the analyses compute on it has headers of its
 * own, so that a file includes what it uses: reachability levels
 * (levels.h, and reach.h on the graph), dominators and retained sizes
 * (dominators.h), root paths (paths.h).
 *
 * A dump is one C_BEGIN ... C_END bracket or the root and object references
 * of one GC. Its graph has one node per object reported (continuations
 * joined), an edge per non-null reference in field order, and the roots
 * with their container (and thread, method) or CLR root kind.
 *
 * Memory is the constraint that shapes this (a graph of 30 bytes an
 * object of three references, the analyses' peak under 60): objects live
 * in parallel arrays sorted by id and are named by their uint32 index in
 * them, each column 4 bytes an object (ids, sizes and ref starts in
 * narrow forms read through heap_id, heap_size, heap_ref_start);
 * references are one CSR array of uint32 indices, nulls and dangling
 * references kept as sentinels so that an edge's position in its object's
 * range is its field index. When the trace names fields, the field of
 * each edge costs about a bit an object (a layout per class; see
 * field_follows).
 */
#ifndef HT_HEAP_H
#define HT_HEAP_H

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_NONE UINT32_MAX          /* no such object */
#define HEAP_NULL_REF UINT32_MAX      /* in ref[]: a null reference */
#define HEAP_DANGLING_REF (UINT32_MAX - 1) /* in ref[]: an id never reported */
#define HEAP_MAX_OBJECTS (UINT32_MAX - 2)
/* The self sizes of a dump's objects add up to less than this: every sum
 * of sizes an analysis makes (totals, retained sizes) then fits 64 bits.
 * No real heap comes near; a dump over it is hostile, and refused. */
#define HEAP_MAX_BYTES (UINT64_C(1) << 63)
#define HEAP_NO_CLASS UINT32_MAX
#define HEAP_NO_GENERATION 0xff
#define HEAP_NO_KIND 0xff

/* This struct is not an API; it may change from one release to the next. */
struct heap_class {
	ht_id id;
	const char *name;  /* NULL when the trace never named it */
	bool has_size;
	uint64_t size;
};

struct heap_name {
	ht_id id;
	const char *name;
};

/* Objects first .. up to the next run's first share their ids' high
 * half (see heap.id_lo). */
struct heap_id_run {
	uint32_t first;
	uint32_t high;
};

#define HEAP_ID_BLOCK_BITS 16

/* An object of HEAP_BIG_SIZE bytes or more (see heap.size). */
struct heap_big_size {
	uint32_t object;
	uint64_t size;
};

/* This struct is not an API; it may change from one release to the next. */
/* A field the trace declared (a `fields` event): edges and roots name it
 * by its index + 1 in h->fields, 0 for none. */
struct heap_field {
	ht_id id;
	ht_id class_id;    /* the class that declares it */
	const char *name;  /* NULL: a reference named it, no event declared it */
	uint8_t kind;      /* enum ht_field_kind */
	uint8_t type;      /* a primitive's enum ht_value_type; 0 a reference */
};

#define HEAP_NO_FIELD 0

struct heap_root {
	uint32_t object;      /* index, or HEAP_NONE when the root is dangling or null */
	ht_id ref;            /* the id as reported */
	uint32_t flags;       /* JVM_OBJECT_FLAGS */
	uint8_t container;    /* enum ht_container_type; 0 for a GC's roots */
	uint8_t kind;         /* enum ht_root_kind, HEAP_NO_KIND when not given */
	uint8_t root_flags;   /* HT_ROOT_* */
	bool has_thread;
	ht_id id1, id2;       /* the container's ids (a frame: stack id, method id) */
	ht_id thread;         /* id1 of the C_RT_THREAD the container belongs to */
	ht_id root_id;        /* the CLR's root id, 0 if none */
	uint32_t field;       /* the static field it is: index + 1 into
				 h->fields, HEAP_NO_FIELD if none */
};

/* This struct is not an API; it may change from one release to the next. */
/* A thread or stack frame container as the dump begins it: the stacks as
 * the trace gives them, frames that hold no root included (an HPROF
 * source begins every frame of a thread's STACK TRACE). */
struct heap_stack_entry {
	uint8_t type;         /* HT_C_RT_THREAD or a frame's container type */
	bool has_thread;
	ht_id id1, id2;       /* a frame: its id and its method */
	ht_id thread;         /* a frame's thread: id1 of its C_RT_THREAD */
};

static inline bool heap_root_is_weak(const struct heap_root *r)
{
	return r->root_flags & HT_ROOT_WEAK;
}

struct heap {
	/* which dump this is */
	uint64_t dump;        /* its number in the trace, from 0 */
	bool gc_dump;         /* a GC's references rather than a bracket */
	int64_t gc;           /* the GC it belongs to (gc_dump) or follows, -1 if none */
	bool aborted;         /* the profiler returned abort in it */
	bool complete;        /* its end was seen (C_END or gc_finished) */

	/* names known when the dump ended, each sorted by id */
	size_t n_classes;
	struct heap_class *classes;
	size_t n_threads, n_methods;
	struct heap_name *threads, *methods;
	/* the fields the trace declared by the dump's end, in the order it
	 * first named them; 0 when it carries none */
	size_t n_fields;
	struct heap_field *fields;

	/* objects, sorted by id, named by index */
	uint32_t n;
	/*
	 * Their ids, read through heap_id. Sorted ids share their high 32
	 * bits over long runs (a heap lies in a few address ranges), so the
	 * graph keeps the low half of each (id_lo) and the high half once a
	 * run (id_runs; id_run_at finds the run of an index in a step or
	 * two): 4 bytes an object. Ids that change their high half too often
	 * for that stay whole in id, and id_lo is NULL.
	 */
	ht_id *id;
	uint32_t *id_lo;
	uint32_t n_id_runs;
	struct heap_id_run *id_runs;  /* by first index */
	uint32_t *id_run_at;          /* per HEAP_ID_BLOCK objects: the run
					 of the first, and one more entry */
	uint32_t *cls;        /* index into classes, HEAP_NO_CLASS if unknown */
	/*
	 * Self sizes, read through heap_size. An object of 4 GiB or more is
	 * rare enough (a huge array) to be looked up: its entry says
	 * HEAP_BIG_SIZE and its size is in big. Four bytes an object
	 * instead of eight.
	 */
	uint32_t *size;
	uint32_t n_big;
	struct heap_big_size *big; /* by object, ascending */
	uint8_t *generation;  /* per object, HEAP_NO_GENERATION unknown; NULL if none known */
	/* n + 1 offsets into ref, read through heap_ref_start: 4 bytes each
	 * (ref_start32, ref_start NULL) while the refs number less than
	 * 2^32, as they do in all but heaps of a billion objects; 8 past
	 * that (ref_start, ref_start32 NULL) */
	uint64_t *ref_start;
	uint32_t *ref_start32;
	uint32_t *ref;        /* object index, HEAP_NULL_REF or HEAP_DANGLING_REF */
	/*
	 * The field each reference was read from (heap_ref_field), only when
	 * the dump's references name fields; all NULL otherwise. Objects of a
	 * class nearly always name the same fields in the same order, so a
	 * class keeps one layout (the fields of its first object; past its
	 * end, no field) and an object a bit that says it follows it: about
	 * a bit an object. The few objects that do not are listed, in index
	 * order, with their fields. A field is an index + 1 into fields,
	 * HEAP_NO_FIELD for an array's element or unknown.
	 */
	uint64_t *field_follows;  /* a bit per object */
	uint64_t *layout_start;   /* per class slot, h->n_classes + 2 of them */
	uint32_t *layout;
	uint32_t n_odd;           /* objects that do not follow their layout */
	uint32_t *odd;            /* their indices, ascending */
	uint64_t *odd_start;      /* n_odd + 1 offsets into odd_field */
	uint32_t *odd_field;

	/*
	 * The references held less than strongly: the edges whose field is
	 * of a soft, weak, final or phantom kind (a java.lang.ref.Reference's
	 * referent), sorted by edge, with their level (enum heap_level). Only
	 * Reference objects have them, so a bit per object says which
	 * objects to look up: analyses skip them cheaply (heap_follows).
	 * All NULL and 0 when the dump has none.
	 */
	uint64_t *has_referent;   /* a bit per object */
	size_t n_referents;
	uint64_t *referent_edge;  /* index into ref, ascending */
	uint8_t *referent_level;  /* parallel: enum heap_level */

	/*
	 * Values (heap_scan_with, values; doc/design.md section 3): the
	 * objects that carry values have a bit; the rank says how many
	 * objects before each 64 have one, so that an object's bit finds
	 * its record's offset (analysis/values.h) among values_at. Equal
	 * records are kept once. All NULL when the dump kept none.
	 */
	uint64_t *has_values;     /* a bit per object */
	uint32_t *values_rank;    /* per 64 objects */
	uint32_t *values_at;      /* per object with values: 4-byte units */
	uint8_t *value_bytes;     /* the records */
	size_t n_value_bytes;

	size_t n_roots;
	struct heap_root *roots;
	/* every C_RT_THREAD and frame container begun, in trace order (one
	 * begun again is listed again) */
	size_t n_stack;
	struct heap_stack_entry *stack;

	/* generation bounds in effect at the dump (the last recorded before
	 * or inside it), for the generation of objects the dump does not
	 * give one */
	size_t n_bounds;
	struct ht_generation_range *bounds;

	uint64_t total_bytes;     /* sum of self sizes */
	uint64_t n_references;    /* non-null references, dangling ones included */
	uint64_t n_dangling;      /* references to ids never reported */
	uint64_t n_dangling_roots;
	uint64_t n_duplicates;    /* objects reported twice (the first is kept) */
};

/* Which dumps heap_scan builds. */
#define HEAP_LAST_DUMP (-1)
#define HEAP_ALL_DUMPS (-2)

/* This struct is not an API; it may change from one release to the next. */
/* What the scan saw of the whole trace. */
struct heap_scan_report {
	uint64_t events;
	uint64_t dumps;            /* dumps in the trace */
	uint64_t gcs;
	uint64_t violations;
	bool read_error;           /* the trace is damaged: see the error */
	/* an object carried values, kept or not: a scan that keeps them
	 * finds some (top and paths read a trace again only then) */
	bool values_seen;
};

/* Called once per selected dump, in trace order, when it is complete (or
 * when the trace ends inside it). The graph is freed after fn returns
 * unless fn sets *keep (then the caller frees it with heap_free). A
 * non-zero return stops the scan and is returned. */
typedef int (*heap_dump_fn)(void *ctx, struct heap *h, bool *keep);

/*
 * Replays r and builds the graph of the selected dump(s): HEAP_LAST_DUMP,
 * HEAP_ALL_DUMPS or a dump number. Returns 0; -1 with err filled when the
 * trace cannot be read (events before the damage were used, and fn was
 * called for the dumps they hold), out of memory, or a limit is passed;
 * or fn's non-zero value. A selected dump number that the trace does not
 * have is not an error: fn is simply never called for it.
 */
int heap_scan(struct ht_reader *r, int64_t select, heap_dump_fn fn, void *ctx,
	      struct heap_scan_report *report, struct ht_error *err);

/* This struct is not an API; it may change from one release to the next. */
/* What heap_scan_with keeps beyond the graph. */
struct heap_scan_options {
	bool values; /* objects' values and array contents, when the trace
			has them (an HPROF reader gives them when asked) */
	/* With values: only the objects of these ids (ascending) keep
	 * theirs, when values_of is not NULL; a command that shows a few
	 * objects' labels reads the dump again for them (top). */
	const ht_id *values_of;
	size_t n_values_of;
};

/* heap_scan, with options (NULL: none, as heap_scan). */
int heap_scan_with(struct ht_reader *r, int64_t select,
		   const struct heap_scan_options *options, heap_dump_fn fn,
		   void *ctx, struct heap_scan_report *report,
		   struct ht_error *err);

struct value_record;
/* Opens object's values (analysis/values.h): false when it has none.
 * A value's field is an index into h->fields. */
bool heap_object_values(const struct heap *h, uint32_t object,
			struct value_record *r);

/* Frees the graph, h itself included (heap_scan allocates it). */
void heap_free(struct heap *h);

/* Index of the object with this id, HEAP_NONE if the dump lacks it. */
uint32_t heap_find(const struct heap *h, ht_id id);

#define HEAP_BIG_SIZE UINT32_MAX  /* in size[]: see big */

uint64_t heap_big_size(const struct heap *h, uint32_t object);

uint32_t heap_id_run_of(const struct heap *h, uint32_t object);

/* The id of an object. */
static inline ht_id heap_id(const struct heap *h, uint32_t object)
{
	uint32_t r;

	if (!h->id_lo)
		return h->id[object];
	r = h->id_run_at[object >> HEAP_ID_BLOCK_BITS];
	if (r + 1 < h->n_id_runs && h->id_runs[r + 1].first <= object)
		r = heap_id_run_of(h, object);
	return (ht_id)h->id_runs[r].high << 32 | h->id_lo[object];
}

/* Where object's refs begin in ref, and end: heap_ref_start(h, i + 1). */
static inline uint64_t heap_ref_start(const struct heap *h, uint32_t object)
{
	return h->ref_start32 ? h->ref_start32[object] : h->ref_start[object];
}

/* The self size of an object. */
static inline uint64_t heap_size(const struct heap *h, uint32_t object)
{
	uint32_t s = h->size[object];

	return s != HEAP_BIG_SIZE ? s : heap_big_size(h, object);
}

/* Class name of an object ("?" + hex id when unnamed); buf holds at least
 * 32 bytes for that case. */
const char *heap_class_name(const struct heap *h, uint32_t object, char *buf);
/* The name the trace gave a class id (roots of class statics name their
 * class by id); NULL if unnamed or unknown. */
const char *heap_class_name_by_id(const struct heap *h, ht_id class_id);
/* The slot in classes[] (sorted by id) of the class class_id, or
 * h->n_classes when the trace named no such class. */
size_t heap_class_slot_of_id(const struct heap *h, ht_id class_id);
const char *heap_thread_name(const struct heap *h, ht_id thread); /* NULL if unnamed */
const char *heap_method_name(const struct heap *h, ht_id method); /* NULL if unnamed */

/* The field that reference e (an index into h->ref, in the range of
 * `object`) was read from: an index + 1 into h->fields, or
 * HEAP_NO_FIELD. */
uint32_t heap_ref_field(const struct heap *h, uint32_t object, uint64_t e);

/* The declared field of an index + 1 (an edge's or a root's), NULL for
 * HEAP_NO_FIELD or a field no event declared. */
const struct heap_field *heap_field_at(const struct heap *h, uint32_t field);

/* Where object's reference field called name is in h->ref (the first of
 * that name): true with *e set, false when no reference names it. */
bool heap_named_ref(const struct heap *h, uint32_t object, const char *name,
		    uint64_t *e);

/* Whether the trace names fields: the analyses then name things as a
 * developer reads them (describe.h). */
static inline bool heap_has_fields(const struct heap *h)
{
	return h->n_fields > 0;
}

/* Whether the dump has objects but no roots at all: cut before its roots
 * (HotSpot writes them after the objects), so that nothing is reachable
 * for want of them rather than for what the heap holds. */
static inline bool heap_no_roots_read(const struct heap *h)
{
	return h->n > 0 && h->n_roots == 0;
}

/* Whether the object is a class object (an object whose id is a class id
 * the trace named, of class java.lang.Class or System.RuntimeType, as in
 * HPROF and the JVM recorder): the name of the class it stands for, else
 * NULL. */
const char *heap_class_object_name(const struct heap *h, uint32_t object);

/* Objects are counted per class slot: one per entry of h->classes, and a
 * last one, h->n_classes, for objects whose class the dump does not know. */
static inline size_t heap_class_slot(const struct heap *h, uint32_t object)
{
	uint32_t cls = h->cls[object];

	return cls == HEAP_NO_CLASS || cls >= h->n_classes ? h->n_classes : cls;
}

/* The object's generation: as the dump gave it, else from the bounds,
 * else HEAP_NO_GENERATION. */
unsigned heap_generation(const struct heap *h, uint32_t object);

#endif
