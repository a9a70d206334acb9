/*
 * test_heap.c - building the heap graph of a dump (src/analysis/heap.c)
 * from events: container dumps with threads, frames and statics, CLR GC
 * dumps with root kinds and flags, objects in several parts, duplicates,
 * null and dangling refs, ids out of order, which dumps are built, aborted
 * and unfinished dumps, names and generations; and the hand-solved
 * examples of testdata/analysis, read through the YAML reader.
 */
#include <criterion/criterion.h>

#include "analysis/dominators.h"
#include "analysis/heap.h"
#include "analysis/values.h"
#include "lib/read/source.h"
#include "htbuild.h"
#include "util/alloc.h"
#include "testheap.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A trace in memory -------------------------------------------------- */

/* The events of one test (htbuild.h). */
static struct htb_events evs;

static void container(enum ht_container_type type, ht_id id1, ht_id id2)
{
	htb_ev_container(&evs, type, id1, id2);
}

static void begin_dump(void)
{
	container(HT_C_BEGIN, 0, 0);
}

static void end_dump(void)
{
	container(HT_C_END, 0, 0);
}

static struct ht_ev_root_references *roots_of(size_t n, const ht_id *refs)
{
	return htb_ev_roots(&evs, refs, n);
}

static struct ht_ev_object_references *object_of(ht_id id, ht_id cls,
						 uint64_t size, uint32_t flags,
						 size_t n, const ht_id *refs)
{
	struct ht_ev_object_references *e =
		htb_ev_object(&evs, id, cls, size, refs, n);

	e->flags = flags;
	return e;
}

#define COUNT(...) (sizeof((const ht_id[]){__VA_ARGS__}) / sizeof(ht_id))
#define ROOTS(...) roots_of(COUNT(__VA_ARGS__), (const ht_id[]){__VA_ARGS__})
#define OBJ(id, cls, size, ...)                                         \
	object_of(id, cls, size, 0, COUNT(__VA_ARGS__),                 \
		  (const ht_id[]){__VA_ARGS__})
#define OBJ_MORE(id, cls, size, ...)                                    \
	object_of(id, cls, size, HT_OBJ_MORE_REFERENCES,                \
		  COUNT(__VA_ARGS__), (const ht_id[]){__VA_ARGS__})
#define LEAF(id, cls, size) object_of(id, cls, size, 0, 0, NULL)

static void named(enum ht_event_type type, ht_id id, const char *name)
{
	struct ht_event *ev = htb_ev_add(&evs, type);

	if (type == HT_EV_CLASS) {
		ev->u.class_.id = id;
		ev->u.class_.name = name;
	} else {
		ev->u.thread.id = id;
		ev->u.thread.name = name;
	}
}

static void gc_started(void)
{
	htb_ev_gc_started(&evs, 0x3);
}

static void gc_finished(void)
{
	htb_ev_gc_finished(&evs);
}

static void bounds(size_t n, const struct ht_generation_range *ranges)
{
	htb_ev_bounds(&evs, ranges, n);
}

/* A source over evs; it fails at the end when fail_at_end is set. */
struct array_source {
	size_t next;
	bool fail_at_end;
};

static int array_next(void *self, struct ht_event *ev, struct ht_error *err)
{
	struct array_source *a = self;

	if (a->next == evs.n) {
		if (!a->fail_at_end)
			return 0;
		err->code = HT_E_CORRUPT;
		snprintf(err->message, sizeof(err->message),
			 "array: chunk CRC mismatch");
		return -1;
	}
	*ev = evs.ev[a->next++];
	return 1;
}

static struct ht_position array_position(const void *self)
{
	const struct array_source *a = self;

	return (struct ht_position){.event_index = a->next ? a->next - 1 : 0};
}

static const struct ht_source_ops array_ops = {
	.format = "array",
	.next = array_next,
	.position = array_position,
};

/* ---- Scanning ----------------------------------------------------------- */

#define MAX_DUMPS 8

/* What the scan handed over: every graph, kept. */
static struct heap *got[MAX_DUMPS];
static size_t n_got;
static struct heap_scan_report report;
static struct ht_error scan_err;
static int stop_after = -1; /* fn returns 9 after this many dumps */
static bool keep_values;    /* heap_scan_options.values */

static int keep_dump(void *ctx, struct heap *h, bool *keep)
{
	(void)ctx;
	cr_assert_lt(n_got, MAX_DUMPS);
	got[n_got++] = h;
	*keep = true;
	return stop_after >= 0 && n_got >= (size_t)stop_after ? 9 : 0;
}

static int scan_with(int64_t select, bool fail_at_end)
{
	struct array_source a = {.fail_at_end = fail_at_end};
	struct ht_reader r = {.ops = &array_ops, .self = &a};

	return heap_scan_with(&r, select, &(struct heap_scan_options){
				      .values = keep_values},
			      keep_dump, NULL, &report, &scan_err);
}

/* The one graph a scan of the last dump gives. */
static struct heap *scan_last(void)
{
	cr_assert_eq(scan_with(HEAP_LAST_DUMP, false), 0, "%s",
		     scan_err.message);
	cr_assert_eq(n_got, 1);
	return got[0];
}

static void free_got(void)
{
	for (size_t i = 0; i < n_got; i++)
		heap_free(got[i]);
	n_got = 0;
}

/* The id a field refers to: 0 for null, 1 for dangling. */
static ht_id field(const struct heap *h, ht_id object, size_t index)
{
	uint32_t o = heap_find(h, object), t;

	cr_assert_neq(o, HEAP_NONE, "no object 0x%llx",
		      (unsigned long long)object);
	cr_assert_lt(index, heap_ref_start(h, o + 1) - heap_ref_start(h, o));
	t = h->ref[heap_ref_start(h, o) + index];
	if (t == HEAP_NULL_REF)
		return 0;
	if (t == HEAP_DANGLING_REF)
		return 1;
	return heap_id(h, t);
}

static size_t n_fields(const struct heap *h, ht_id object)
{
	uint32_t o = heap_find(h, object);

	return (size_t)(heap_ref_start(h, o + 1) - heap_ref_start(h, o));
}

static const char *class_of(const struct heap *h, ht_id object)
{
	static char buf[32];

	return heap_class_name(h, heap_find(h, object), buf);
}

/* Each object's id in ascending order, and refs that are indices. */
static void assert_well_formed(const struct heap *h)
{
	for (uint32_t i = 1; i < h->n; i++)
		cr_assert_lt(heap_id(h, i - 1), heap_id(h, i));
	cr_assert_eq(heap_ref_start(h, 0), 0);
	for (uint32_t i = 0; i < h->n; i++) {
		cr_assert_leq(heap_ref_start(h, i), heap_ref_start(h, i + 1));
		for (uint64_t e = heap_ref_start(h, i); e < heap_ref_start(h, i + 1); e++)
			cr_assert(h->ref[e] < h->n ||
				  h->ref[e] == HEAP_NULL_REF ||
				  h->ref[e] == HEAP_DANGLING_REF);
	}
}

/* ---- Fields -------------------------------------------------------------- */

static void declare_fields(size_t n, const struct ht_field *fields)
{
	static struct ht_field pool[64];
	static size_t used;
	struct ht_event *ev = htb_ev_add(&evs, HT_EV_FIELDS);

	cr_assert_leq(used + n, 64);
	memcpy(pool + used, fields, n * sizeof(*fields));
	ev->u.fields.count = n;
	ev->u.fields.fields = pool + used;
	used += n;
}

#define FIELDS(...)                                                         \
	declare_fields(sizeof((const struct ht_field[]){__VA_ARGS__}) /     \
			       sizeof(struct ht_field),                     \
		       (const struct ht_field[]){__VA_ARGS__})

/* The field an object's reference index was read from: its name, "-"
 * for none. */
static const char *field_name(const struct heap *h, ht_id object, size_t index)
{
	uint32_t o = heap_find(h, object);
	const struct heap_field *f =
		heap_field_at(h, heap_ref_field(h, o, heap_ref_start(h, o) + index));

	return f ? f->name : "-";
}

static void with_ref_fields(struct ht_ev_object_references *e, size_t n,
			    const ht_id *fields)
{
	cr_assert_eq(e->count, n);
	e->ref_fields = htb_ev_keep(&evs, fields, n, sizeof(*fields));
}

#define REF_FIELDS(e, ...)                                                  \
	with_ref_fields(e, COUNT(__VA_ARGS__), (const ht_id[]){__VA_ARGS__})

/* The hand-solved case: a holder's instance field, a class's static,
 * an array's slots (no field) and a field named but never declared. */
static void fields_trace(bool in_order)
{
	named(HT_EV_CLASS, 0x10, "demo.Holder");
	named(HT_EV_CLASS, 0x20, "demo.HeapDemo");
	named(HT_EV_CLASS, 0x30, "java.lang.Object[]");
	FIELDS({.id = 1, .class_id = 0x10, .name = "cache",
		.kind = HT_FIELD_INSTANCE},
	       {.id = 2, .class_id = 0x20, .name = "listHead",
		.kind = HT_FIELD_STATIC});
	begin_dump();
	container(HT_C_RT_CLASS, 0x20, 0);
	roots_of(1, (const ht_id[]){0x1000})->root_fields =
		htb_ev_keep(&evs, (const ht_id[]){2}, 1, sizeof(ht_id));
	container(HT_C_HEAP, 0, 0);
	if (in_order) {
		REF_FIELDS(OBJ(0x1000, 0x10, 16, 0x1100, 0x1100), 1, 9);
		REF_FIELDS(OBJ(0x1100, 0x30, 32, 0, 0x1000), 0, 0);
	} else {
		REF_FIELDS(OBJ(0x1100, 0x30, 32, 0, 0x1000), 0, 0);
		REF_FIELDS(OBJ_MORE(0x1000, 0x10, 16, 0x1100), 1);
		REF_FIELDS(OBJ(0x1000, 0x10, 16, 0x1100), 9);
	}
	end_dump();
}

static void assert_fields_trace(const struct heap *h)
{
	const struct heap_field *f;

	assert_well_formed(h);
	cr_assert(heap_has_fields(h));
	cr_assert_str_eq(field_name(h, 0x1000, 0), "cache");
	/* field 9 is never declared: no field */
	cr_assert_str_eq(field_name(h, 0x1000, 1), "-");
	cr_assert_str_eq(field_name(h, 0x1100, 0), "-");
	cr_assert_str_eq(field_name(h, 0x1100, 1), "-");
	f = heap_field_at(h, heap_ref_field(h, heap_find(h, 0x1000),
					    heap_ref_start(h, heap_find(h, 0x1000))));
	cr_assert_eq(f->class_id, 0x10);
	cr_assert_eq(f->kind, HT_FIELD_INSTANCE);
	cr_assert_eq(h->n_roots, 1);
	f = heap_field_at(h, h->roots[0].field);
	cr_assert_not_null(f);
	cr_assert_str_eq(f->name, "listHead");
	cr_assert_eq(f->class_id, 0x20);
	cr_assert_eq(f->kind, HT_FIELD_STATIC);
	/* 0x1000 is its class's first object: it follows its layout; the
	 * array's fields are all none */
	cr_assert_eq(h->n_odd, 0);
}

Test(fields, of_objects_in_order)
{
	fields_trace(true);
	assert_fields_trace(scan_last());
	free_got();
}

Test(fields, of_objects_joined_from_parts_out_of_order)
{
	fields_trace(false);
	assert_fields_trace(scan_last());
	free_got();
}

Test(fields, none_in_a_trace_without_them)
{
	struct heap *h;

	begin_dump();
	ROOTS(0x1000);
	container(HT_C_HEAP, 0, 0);
	OBJ(0x1000, 0x10, 16, 0x1000);
	end_dump();
	h = scan_last();
	cr_assert_not(heap_has_fields(h));
	cr_assert_null(h->field_follows);
	cr_assert_eq(heap_ref_field(h, 0, 0), HEAP_NO_FIELD);
	cr_assert_eq(h->roots[0].field, HEAP_NO_FIELD);
	cr_assert_null(heap_field_at(h, HEAP_NO_FIELD));
	free_got();
}

Test(fields, refs_before_the_first_that_names_one_have_none)
{
	struct heap *h;

	FIELDS({.id = 7, .class_id = 0x10, .name = "next"});
	begin_dump();
	ROOTS(0x1000);
	container(HT_C_HEAP, 0, 0);
	OBJ(0x1000, 0x10, 16, 0x1100);
	REF_FIELDS(OBJ(0x1100, 0x10, 16, 0x1000), 7);
	end_dump();
	h = scan_last();
	cr_assert_str_eq(field_name(h, 0x1000, 0), "-");
	cr_assert_str_eq(field_name(h, 0x1100, 0), "next");
	free_got();
}

/* Objects of one class that name other fields than its first object did
 * (a null left out, a subclass's layout under one class id) are listed
 * with their own fields; the others follow the class's layout. */
Test(fields, objects_off_their_class_layout)
{
	struct heap *h;

	FIELDS({.id = 1, .class_id = 0x10, .name = "a"},
	       {.id = 2, .class_id = 0x10, .name = "b"},
	       {.id = 3, .class_id = 0x10, .name = "c"});
	begin_dump();
	ROOTS(0x1000);
	container(HT_C_HEAP, 0, 0);
	REF_FIELDS(OBJ(0x1000, 0x10, 16, 0x1100, 0x1200), 1, 2);
	REF_FIELDS(OBJ(0x1100, 0x10, 16, 0x1200), 1);
	REF_FIELDS(OBJ(0x1200, 0x10, 16, 0x1000), 2);
	REF_FIELDS(OBJ(0x1300, 0x10, 16, 0x1000, 0x1100, 0x1200), 1, 2, 3);
	REF_FIELDS(OBJ(0x1400, 0x20, 16, 0x1000, 0x1100), 0, 0);
	REF_FIELDS(OBJ(0x1500, 0x20, 16, 0x1000), 3);
	end_dump();
	h = scan_last();
	cr_assert_str_eq(field_name(h, 0x1000, 0), "a");
	cr_assert_str_eq(field_name(h, 0x1000, 1), "b");
	cr_assert_str_eq(field_name(h, 0x1100, 0), "a");
	cr_assert_str_eq(field_name(h, 0x1200, 0), "b");
	cr_assert_str_eq(field_name(h, 0x1300, 0), "a");
	cr_assert_str_eq(field_name(h, 0x1300, 1), "b");
	cr_assert_str_eq(field_name(h, 0x1300, 2), "c");
	cr_assert_str_eq(field_name(h, 0x1400, 1), "-");
	cr_assert_str_eq(field_name(h, 0x1500, 0), "c");
	/* 0x1200 (b where the layout has a), 0x1300 (c past its end) and
	 * 0x1500 (c where its class's first object named none) */
	cr_assert_eq(h->n_odd, 3);
	cr_assert_eq(h->odd[0], heap_find(h, 0x1200));
	cr_assert_eq(h->odd[1], heap_find(h, 0x1300));
	cr_assert_eq(h->odd[2], heap_find(h, 0x1500));
	free_got();
}

Test(fields, a_class_object_stands_for_its_class)
{
	struct heap *h;

	named(HT_EV_CLASS, 0x10, "java.lang.Class");
	named(HT_EV_CLASS, 0x2000, "demo.HeapDemo");
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x2000, 0x10, 64);   /* demo.HeapDemo's class object */
	LEAF(0x3000, 0x10, 64);   /* no class has this id */
	LEAF(0x4000, 0x2000, 16); /* an instance of demo.HeapDemo */
	end_dump();
	h = scan_last();
	cr_assert_str_eq(heap_class_object_name(h, heap_find(h, 0x2000)),
			 "demo.HeapDemo");
	cr_assert_null(heap_class_object_name(h, heap_find(h, 0x3000)));
	cr_assert_null(heap_class_object_name(h, heap_find(h, 0x4000)));
	free_got();
}

/* ---- Container dumps ---------------------------------------------------- */

Test(container_dump, threads_frames_statics_and_the_heap)
{
	struct heap *h;
	const struct heap_root *r;

	named(HT_EV_CLASS, 0x500, "Shop");
	named(HT_EV_THREAD, 0x1, "main");
	named(HT_EV_METHOD, 0x900, "Shop.main");
	begin_dump();
	container(HT_C_RT_THREAD, 0x1, 0);
	ROOTS(0x1000);
	container(HT_C_RT_JIT, 0x7ff0, 0x900);
	ROOTS(0x1100, 0);
	container(HT_C_RT_CLASS, 0x500, 0);
	ROOTS(0x1200);
	container(HT_C_RT_NATIVEGC, 0x7fe0, 0);
	ROOTS(0x1000);
	container(HT_C_RT_CLASS, 0x500, 0);
	ROOTS(0x1100);
	container(HT_C_HEAP, 0, 0);
	OBJ(0x1000, 0x500, 16, 0x1100);
	OBJ(0x1100, 0x500, 16, 0x1200);
	LEAF(0x1200, 0x500, 16);
	end_dump();
	h = scan_last();
	assert_well_formed(h);
	cr_assert_eq(h->n, 3);
	cr_assert_eq(h->n_roots, 6);
	cr_assert(h->complete);
	cr_assert_not(h->aborted);
	cr_assert_not(h->gc_dump);
	cr_assert_eq(h->dump, 0);
	cr_assert_eq(h->gc, -1);

	r = &h->roots[0];
	cr_assert_eq(r->container, HT_C_RT_THREAD);
	cr_assert(r->has_thread);
	cr_assert_eq(r->thread, 0x1);
	cr_assert_eq(r->id1, 0x1);
	cr_assert_eq(r->object, heap_find(h, 0x1000));
	cr_assert_eq(r->kind, HEAP_NO_KIND);

	r = &h->roots[1];
	cr_assert_eq(r->container, HT_C_RT_JIT);
	cr_assert(r->has_thread);
	cr_assert_eq(r->thread, 0x1);
	cr_assert_eq(r->id1, 0x7ff0);
	cr_assert_eq(r->id2, 0x900);
	cr_assert_str_eq(heap_method_name(h, r->id2), "Shop.main");
	cr_assert_str_eq(heap_thread_name(h, r->thread), "main");

	r = &h->roots[2]; /* the frame's null root is kept */
	cr_assert_eq(r->ref, 0);
	cr_assert_eq(r->object, HEAP_NONE);
	cr_assert_eq(r->container, HT_C_RT_JIT);

	r = &h->roots[3]; /* statics belong to no thread */
	cr_assert_eq(r->container, HT_C_RT_CLASS);
	cr_assert_not(r->has_thread);
	cr_assert_eq(r->id1, 0x500);

	r = &h->roots[4]; /* a native GC frame is a frame of thread 1 */
	cr_assert_eq(r->container, HT_C_RT_NATIVEGC);
	cr_assert(r->has_thread);
	cr_assert_eq(r->thread, 0x1);

	r = &h->roots[5]; /* the class container begun again adds its root */
	cr_assert_eq(r->container, HT_C_RT_CLASS);
	cr_assert_eq(r->id1, 0x500);
	cr_assert_eq(r->object, heap_find(h, 0x1100));
	cr_assert_eq(h->n_dangling_roots, 0);
	free_got();
}

Test(container_dump, containers_without_thread_after_a_thread)
{
	struct heap *h;

	begin_dump();
	container(HT_C_RT_THREAD, 0x7, 0);
	container(HT_C_RT_INTERNALVM, 0, 0);
	ROOTS(0x10);
	container(HT_C_RT_FINALIZED, 0, 0);
	ROOTS(0x10);
	container(HT_C_RT_INTERNALFRAME, 0x99, 0);
	ROOTS(0x10);
	container(HT_C_HEAP, 0, 0);
	LEAF(0x10, 0x1, 8);
	end_dump();
	h = scan_last();
	cr_assert_not(h->roots[0].has_thread);
	cr_assert_not(h->roots[1].has_thread);
	cr_assert(h->roots[2].has_thread);
	cr_assert_eq(h->roots[2].thread, 0x7);
	free_got();
}

/* ---- CLR GC dumps ------------------------------------------------------- */

Test(gc_dump, roots_with_kinds_flags_and_ids)
{
	struct ht_ev_root_references *e;
	struct heap *h;

	gc_started();
	e = ROOTS(0x100, 0x200, 0x300);
	e->kinds = htb_ev_keep(&evs, (const uint8_t[]){HT_ROOT_STACK,
		HT_ROOT_HANDLE, HT_ROOT_FINALIZER}, 3, 1);
	e->root_flags = htb_ev_keep(&evs, (const uint8_t[]){0, HT_ROOT_WEAK,
		HT_ROOT_PINNING}, 3, 1);
	e->root_ids = htb_ev_keep(&evs, (const ht_id[]){0x7ffe, 0, 0x55}, 3,
				  sizeof(ht_id));
	OBJ(0x100, 0xc1, 24, 0x200);
	LEAF(0x200, 0xc1, 24);
	LEAF(0x300, 0xc1, 24);
	gc_finished();
	h = scan_last();
	cr_assert(h->gc_dump);
	cr_assert(h->complete);
	cr_assert_eq(h->gc, 0);
	cr_assert_eq(h->n_roots, 3);
	cr_assert_eq(h->roots[0].kind, HT_ROOT_STACK);
	cr_assert_eq(h->roots[0].root_id, 0x7ffe);
	cr_assert_not(heap_root_is_weak(&h->roots[0]));
	cr_assert_eq(h->roots[1].kind, HT_ROOT_HANDLE);
	cr_assert(heap_root_is_weak(&h->roots[1]));
	cr_assert_eq(h->roots[2].kind, HT_ROOT_FINALIZER);
	cr_assert_eq(h->roots[2].root_flags, HT_ROOT_PINNING);
	cr_assert_eq(h->roots[2].root_id, 0x55);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(h->roots[i].container, 0);
		cr_assert_not(h->roots[i].has_thread);
	}
	free_got();
}

Test(gc_dump, numbers_of_dumps_and_gcs)
{
	gc_started();
	gc_finished();
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x10, 0x1, 8);
	end_dump();
	gc_started();
	LEAF(0x20, 0x1, 8);
	gc_finished();
	cr_assert_eq(scan_with(HEAP_ALL_DUMPS, false), 0);
	cr_assert_eq(n_got, 2);
	cr_assert_not(got[0]->gc_dump);
	cr_assert_eq(got[0]->gc, 0);  /* the GC it follows */
	cr_assert_eq(got[0]->dump, 0);
	cr_assert(got[1]->gc_dump);
	cr_assert_eq(got[1]->gc, 1);
	cr_assert_eq(got[1]->dump, 1);
	cr_assert_eq(report.dumps, 2);
	cr_assert_eq(report.gcs, 2);
	cr_assert_eq(report.events, 9);
	free_got();
}

/* ---- Objects ------------------------------------------------------------ */

Test(objects, continuations_joined_in_arrival_order)
{
	struct heap *h;
	const ht_id want[] = {0x20, 0, 0x30, 0, 0x20, 0x40};

	begin_dump();
	container(HT_C_HEAP, 0, 0);
	OBJ_MORE(0x10, 0x1, 64, 0x20, 0);
	LEAF(0x20, 0x2, 8);
	OBJ_MORE(0x30, 0x3, 16, 0x10);
	OBJ_MORE(0x10, 0x1, 64, 0x30, 0);  /* continues 0x10 */
	OBJ(0x30, 0x3, 16, 0);             /* ends 0x30 */
	OBJ(0x10, 0x1, 64, 0x20, 0x40);    /* ends 0x10 */
	LEAF(0x40, 0x2, 8);
	end_dump();
	h = scan_last();
	assert_well_formed(h);
	cr_assert_eq(h->n, 4);
	cr_assert_eq(h->n_duplicates, 0);
	cr_assert_eq(n_fields(h, 0x10), 6);
	for (size_t i = 0; i < 6; i++)
		cr_assert_eq(field(h, 0x10, i), want[i], "field %zu", i);
	cr_assert_eq(n_fields(h, 0x30), 2);
	cr_assert_eq(field(h, 0x30, 0), 0x10);
	cr_assert_eq(field(h, 0x30, 1), 0);
	cr_assert_eq(heap_size(h, heap_find(h, 0x10)), 64);
	cr_assert_eq(h->total_bytes, 64 + 8 + 16 + 8);
	cr_assert_eq(h->n_references, 5);
	free_got();
}

Test(objects, duplicates_keep_the_first_report)
{
	struct heap *h;

	begin_dump();
	container(HT_C_HEAP, 0, 0);
	OBJ(0x10, 0x1, 8, 0x20);
	LEAF(0x20, 0x1, 8);
	OBJ(0x10, 0x1, 99, 0x30, 0x30);      /* again: dropped */
	OBJ_MORE(0x20, 0x1, 8, 0x10);       /* again, in two parts: dropped */
	OBJ(0x20, 0x1, 8, 0x10);
	LEAF(0x30, 0x1, 8);
	end_dump();
	h = scan_last();
	assert_well_formed(h);
	cr_assert_eq(h->n, 3);
	cr_assert_eq(h->n_duplicates, 2);
	cr_assert_eq(n_fields(h, 0x10), 1);
	cr_assert_eq(field(h, 0x10, 0), 0x20);
	cr_assert_eq(heap_size(h, heap_find(h, 0x10)), 8);
	cr_assert_eq(n_fields(h, 0x20), 0);
	cr_assert_eq(h->total_bytes, 24);
	cr_assert_eq(h->n_references, 1);
	free_got();
}

Test(objects, dangling_and_null_refs)
{
	struct heap *h;

	begin_dump();
	container(HT_C_RT_STRONGPTR, 0, 0);
	ROOTS(0x10, 0xdead, 0);
	container(HT_C_HEAP, 0, 0);
	OBJ(0x10, 0x1, 8, 0, 0, 0x20, 0xbad, 0, 0x10);
	OBJ(0x20, 0x1, 8, 0xbad, 0xbad);
	end_dump();
	h = scan_last();
	assert_well_formed(h);
	cr_assert_eq(n_fields(h, 0x10), 6);
	cr_assert_eq(field(h, 0x10, 0), 0);
	cr_assert_eq(field(h, 0x10, 1), 0);
	cr_assert_eq(field(h, 0x10, 2), 0x20);
	cr_assert_eq(field(h, 0x10, 3), 1);
	cr_assert_eq(field(h, 0x10, 4), 0);
	cr_assert_eq(field(h, 0x10, 5), 0x10);
	cr_assert_eq(h->n_references, 5);
	cr_assert_eq(h->n_dangling, 3);
	cr_assert_eq(h->n_dangling_roots, 1);
	cr_assert_eq(h->roots[1].object, HEAP_NONE);
	cr_assert_eq(h->roots[1].ref, 0xdead);
	cr_assert_eq(h->roots[2].object, HEAP_NONE);
	free_got();
}

Test(objects, ids_out_of_order)
{
	struct heap *h;

	begin_dump();
	container(HT_C_HEAP, 0, 0);
	OBJ(0x300, 0x1, 3, 0x100);
	OBJ(0x100, 0x2, 1, 0x200, 0x300);
	OBJ(0x200, 0x3, 2, 0x300);
	end_dump();
	h = scan_last();
	assert_well_formed(h);
	cr_assert_eq(h->n, 3);
	cr_assert_eq(heap_id(h, 0), 0x100);
	cr_assert_eq(heap_size(h, 0), 1);
	cr_assert_eq(heap_size(h, 2), 3);
	cr_assert_eq(field(h, 0x100, 1), 0x300);
	cr_assert_eq(field(h, 0x300, 0), 0x100);
	cr_assert_str_eq(class_of(h, 0x300), "?0x1");
	cr_assert_str_eq(class_of(h, 0x100), "?0x2");
	free_got();
}

/*
 * Ids kept in halves (heap.id_lo): runs of one high half that begin
 * anywhere in a block of objects, several in one block, one across a
 * block's end; and ids whose high half changes too often to be kept so,
 * kept whole. Each object's id reads back, and each id finds its object
 * while its neighbours in either half find nothing.
 */
static void ids_in_runs(const uint32_t *run_first, size_t n_runs, uint32_t n)
{
	struct heap *h;
	ht_id *ids = malloc(n * sizeof(*ids));
	size_t r = 0;

	cr_assert(ids);
	for (uint32_t i = 0; i < n; i++) {
		while (r + 1 < n_runs && run_first[r + 1] <= i)
			r++;
		ids[i] = (ht_id)(r * 3 + 1) << 32 | (0x1000 + 16 * (ht_id)i);
	}
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	for (uint32_t i = n; i > 0; i--)        /* out of order: sorted */
		LEAF(ids[i - 1], 0x1, 8);
	end_dump();
	h = scan_last();
	cr_assert_eq(h->n, n);
	cr_assert_eq(h->id_lo != NULL, n_runs <= n / 8 + 1);
	for (uint32_t i = 0; i < n; i++) {
		cr_assert_eq(heap_id(h, i), ids[i], "object %u", i);
		cr_assert_eq(heap_find(h, ids[i]), i, "id of object %u", i);
		cr_assert_eq(heap_find(h, ids[i] + 8), HEAP_NONE);
		cr_assert_eq(heap_find(h, ids[i] ^ (ht_id)1 << 33), HEAP_NONE);
	}
	cr_assert_eq(heap_find(h, 0), HEAP_NONE);
	cr_assert_eq(heap_find(h, UINT64_MAX), HEAP_NONE);
	free(ids);
	free_got();
}

Test(objects, ids_in_halves_over_runs_and_blocks)
{
	const uint32_t first[] = {0, 100, 65530, 65534, 65540, 69000};

	ids_in_runs(first, ARRAY_SIZE(first), 70000);
}

Test(objects, ids_of_many_high_halves_kept_whole)
{
	uint32_t first[200];

	for (uint32_t r = 0; r < 200; r++)
		first[r] = r * 5;
	ids_in_runs(first, 200, 1000);
}

/*
 * Sizes of 4 GiB and more (huge arrays) are kept as exactly as small ones,
 * in id order or not, whatever the continuations and repeats of their
 * objects say, and they add up into totals and retained sizes.
 */
static void big_sizes(bool in_order)
{
	const uint64_t big = UINT64_C(1) << 40, edge = UINT32_MAX;
	struct heap_dominators d;
	struct ht_error err;
	struct heap *h;

	begin_dump();
	container(HT_C_RT_STRONGPTR, 0, 0);
	ROOTS(0x10);
	container(HT_C_HEAP, 0, 0);
	if (in_order) {
		OBJ(0x10, 0x1, 16, 0x20, 0x30, 0x40);
		LEAF(0x20, 0x2, big);
		LEAF(0x30, 0x2, edge);
		LEAF(0x40, 0x2, edge - 1);
	} else {
		LEAF(0x30, 0x2, edge);
		OBJ_MORE(0x20, 0x2, big);
		OBJ_MORE(0x10, 0x1, 16, 0x20);
		OBJ(0x20, 0x2, big + 1);          /* ends 0x20 */
		OBJ(0x10, 0x1, 16, 0x30, 0x40);   /* ends 0x10 */
		LEAF(0x40, 0x2, edge - 1);
		LEAF(0x20, 0x2, 3);               /* again: dropped */
	}
	end_dump();
	h = scan_last();
	assert_well_formed(h);
	cr_assert_eq(h->n, 4);
	cr_assert_eq(heap_size(h, heap_find(h, 0x10)), 16);
	cr_assert_eq(heap_size(h, heap_find(h, 0x20)), big);
	cr_assert_eq(heap_size(h, heap_find(h, 0x30)), edge);
	cr_assert_eq(heap_size(h, heap_find(h, 0x40)), edge - 1);
	cr_assert_eq(h->total_bytes, 16 + big + edge + edge - 1);
	cr_assert_eq(heap_dominators(h, &d, &err), 0);
	cr_assert_eq(d.retained[heap_find(h, 0x10)], h->total_bytes);
	cr_assert_eq(d.retained[heap_find(h, 0x20)], big);
	heap_dominators_free(&d);
	free_got();
}

Test(objects, sizes_past_4_gib_in_order)
{
	big_sizes(true);
}

Test(objects, sizes_past_4_gib_joined_from_parts)
{
	big_sizes(false);
}

/*
 * Many objects in a random order, some in several parts, some reported
 * twice, ids spread over the whole 64-bit range (every radix pass) or over
 * a few bits, against what the events say.
 */
static void shuffled_heap(unsigned seed, ht_id spread)
{
	enum { N = 3000 };
	static ht_id ids[N];
	static uint32_t order[N];
	uint64_t x = seed;
	struct heap *h;

	for (size_t i = 0; i < N; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		ids[i] = 0x1000 + ((x >> 11) % spread) * 8;
		for (size_t j = 0; j < i; j++)
			if (ids[j] == ids[i]) {
				i--;
				break;
			}
	}
	for (size_t i = 0; i < N; i++)
		order[i] = (uint32_t)i;
	for (size_t i = N - 1; i > 0; i--) {
		size_t j;
		uint32_t t;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		j = (x >> 33) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	/* object k refers to objects k+1 and k+2 (by id), in two parts for
	 * every third object, the second part after the next object */
	for (size_t i = 0; i < N; i++) {
		uint32_t k = order[i];
		ht_id a = ids[(k + 1) % N], b = ids[(k + 2) % N];

		if (k % 3) {
			OBJ(ids[k], 0x10 + k % 5, k, a, b);
			continue;
		}
		OBJ_MORE(ids[k], 0x10 + k % 5, k, a);
		if (i + 1 < N) {
			uint32_t k2 = order[++i];

			OBJ(ids[k2], 0x10 + k2 % 5, k2, ids[(k2 + 1) % N],
			    ids[(k2 + 2) % N]);
			if (k2 % 3 == 0)
				OBJ(ids[k2], 0x10, 0, 0x1, 0x2, 0x3);
		}
		OBJ(ids[k], 0x10 + k % 5, k, b);
	}
	end_dump();
	h = scan_last();
	assert_well_formed(h);
	cr_assert_eq(h->n, N);
	for (uint32_t k = 0; k < N; k++) {
		uint32_t o = heap_find(h, ids[k]);

		cr_assert_neq(o, HEAP_NONE);
		cr_assert_eq(heap_size(h, o), k);
		cr_assert_eq(h->classes[h->cls[o]].id, 0x10 + k % 5);
		cr_assert_eq(n_fields(h, ids[k]), 2, "object %u", k);
		cr_assert_eq(field(h, ids[k], 0), ids[(k + 1) % N]);
		cr_assert_eq(field(h, ids[k], 1), ids[(k + 2) % N]);
	}
	cr_assert_eq(h->n_dangling, 0);
	cr_assert_eq(h->n_references, 2 * N);
	free_got();
}

Test(objects, many_in_random_order_over_64_bits)
{
	for (unsigned seed = 1; seed <= 3; seed++) {
		htb_ev_reset(&evs);
		shuffled_heap(seed, UINT64_MAX / 16);
	}
}

Test(objects, many_in_random_order_close_together)
{
	for (unsigned seed = 1; seed <= 3; seed++) {
		htb_ev_reset(&evs);
		shuffled_heap(seed, 5000);
	}
}

Test(objects, many_in_order)
{
	struct heap *h;

	begin_dump();
	container(HT_C_HEAP, 0, 0);
	for (ht_id i = 0; i < 500; i++)
		OBJ(0x1000 + i * 24, 0x1, 24, 0x1000 + ((i * 7) % 500) * 24,
		    i % 2 ? 0 : 0x77);
	end_dump();
	h = scan_last();
	assert_well_formed(h);
	cr_assert_eq(h->n, 500);
	for (ht_id i = 0; i < 500; i++) {
		cr_assert_eq(field(h, 0x1000 + i * 24, 0),
			     0x1000 + ((i * 7) % 500) * 24);
		cr_assert_eq(field(h, 0x1000 + i * 24, 1), i % 2 ? 0 : 1);
	}
	cr_assert_eq(h->n_dangling, 250);
	cr_assert_eq(heap_find(h, 0x1001), HEAP_NONE);
	cr_assert_eq(heap_find(h, 0x10), HEAP_NONE);
	cr_assert_eq(heap_find(h, 0xffffffff), HEAP_NONE);
	free_got();
}

Test(objects, an_empty_dump)
{
	struct heap *h;

	begin_dump();
	end_dump();
	h = scan_last();
	cr_assert_eq(h->n, 0);
	cr_assert_eq(h->n_roots, 0);
	cr_assert_eq(heap_find(h, 0x10), HEAP_NONE);
	cr_assert(h->complete);
	free_got();
}

/* ---- Which dumps -------------------------------------------------------- */

/* Three dumps of one object each: 0x10, then 0x20, then 0x30. */
static void three_dumps(void)
{
	for (ht_id id = 0x10; id <= 0x30; id += 0x10) {
		begin_dump();
		container(HT_C_HEAP, 0, 0);
		LEAF(id, 0x1, id);
		end_dump();
	}
}

Test(select, the_last_dump_by_default)
{
	struct heap *h;

	three_dumps();
	h = scan_last();
	cr_assert_eq(h->dump, 2);
	cr_assert_eq(h->n, 1);
	cr_assert_eq(heap_id(h, 0), 0x30);
	cr_assert_eq(report.dumps, 3);
	free_got();
}

Test(select, one_dump_by_number)
{
	three_dumps();
	cr_assert_eq(scan_with(1, false), 0);
	cr_assert_eq(n_got, 1);
	cr_assert_eq(got[0]->dump, 1);
	cr_assert_eq(heap_id(got[0], 0), 0x20);
	free_got();
}

Test(select, a_dump_the_trace_lacks)
{
	three_dumps();
	cr_assert_eq(scan_with(7, false), 0);
	cr_assert_eq(n_got, 0);
}

Test(select, every_dump_in_order)
{
	three_dumps();
	cr_assert_eq(scan_with(HEAP_ALL_DUMPS, false), 0);
	cr_assert_eq(n_got, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(got[i]->dump, i);
		cr_assert_eq(heap_id(got[i], 0), 0x10 * (i + 1));
		cr_assert_eq(got[i]->total_bytes, 0x10 * (i + 1));
	}
	free_got();
}

Test(select, fn_stops_the_scan)
{
	three_dumps();
	stop_after = 2;
	cr_assert_eq(scan_with(HEAP_ALL_DUMPS, false), 9);
	cr_assert_eq(n_got, 2);
	free_got();
}

Test(select, a_bad_selection)
{
	three_dumps();
	cr_assert_eq(scan_with(-3, false), -1);
	cr_assert_eq(scan_err.code, HT_E_INVALID);
}

Test(select, a_graph_not_kept_is_freed)
{
	struct array_source a = {0};
	struct ht_reader r = {.ops = &array_ops, .self = &a};

	three_dumps();
	/* under ASan, a leak here fails the test */
	cr_assert_eq(heap_scan(&r, HEAP_ALL_DUMPS, NULL, NULL, NULL, NULL), 0);
}

/* ---- Unfinished dumps --------------------------------------------------- */

Test(end, an_aborted_dump_is_marked)
{
	struct heap *h;

	begin_dump();
	container(HT_C_HEAP, 0, 0);
	OBJ(0x10, 0x1, 8, 0x20)->result = HT_RESULT_ABORT;
	end_dump();
	h = scan_last();
	cr_assert(h->aborted);
	cr_assert(h->complete);
	cr_assert_eq(h->n, 1);
	cr_assert_eq(h->n_dangling, 1);
	free_got();
}

Test(end, a_trace_that_ends_inside_a_dump)
{
	struct heap *h;

	three_dumps();
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x40, 0x1, 8);
	h = scan_last();
	cr_assert_not(h->complete);
	cr_assert_eq(h->dump, 3);
	cr_assert_eq(heap_id(h, 0), 0x40);
	free_got();
}

Test(end, a_dump_cut_short_by_the_next)
{
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x40, 0x1, 8);
	begin_dump();
	end_dump();
	cr_assert_eq(scan_with(HEAP_ALL_DUMPS, false), 0);
	cr_assert_eq(n_got, 2);
	cr_assert_not(got[0]->complete);
	cr_assert(got[1]->complete);
	cr_assert_eq(report.violations, 1);
	free_got();
}

Test(end, a_read_error_still_gives_what_was_read)
{
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x40, 0x1, 8);
	cr_assert_eq(scan_with(HEAP_LAST_DUMP, true), -1);
	cr_assert_eq(scan_err.code, HT_E_CORRUPT);
	cr_assert(report.read_error);
	cr_assert_eq(n_got, 1);
	cr_assert_not(got[0]->complete);
	cr_assert_eq(got[0]->n, 1);
	free_got();
}

/* ---- Names and generations ---------------------------------------------- */

Test(names, as_known_when_the_dump_ended)
{
	struct ht_event *ev;
	struct heap *h;

	named(HT_EV_CLASS, 0x1, "Old");
	named(HT_EV_CLASS, 0x1, "Renamed");
	ev = htb_ev_add(&evs, HT_EV_CLASS);
	ev->u.class_ = (struct ht_ev_class){.id = 0x2, .name = "Sized",
					    .has_size = true, .size = 48};
	named(HT_EV_THREAD, 0x7, "worker");
	named(HT_EV_METHOD, 0x9, "run");
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x10, 0x1, 8);
	LEAF(0x20, 0x2, 8);
	LEAF(0x30, 0x3, 8);    /* never named */
	LEAF(0x40, 0, 8);      /* no class */
	end_dump();
	named(HT_EV_CLASS, 0x1, "TooLate");
	named(HT_EV_CLASS, 0x5, "AfterTheDump");
	named(HT_EV_THREAD, 0x7, "renamed-too-late");
	h = scan_last();
	cr_assert_str_eq(class_of(h, 0x10), "Renamed");
	cr_assert_str_eq(class_of(h, 0x20), "Sized");
	cr_assert_str_eq(class_of(h, 0x30), "?0x3");
	cr_assert_str_eq(class_of(h, 0x40), "?0x0");
	cr_assert_eq(h->cls[heap_find(h, 0x40)], HEAP_NO_CLASS);
	cr_assert_eq(h->n_classes, 3);
	cr_assert(h->classes[1].has_size);
	cr_assert_eq(h->classes[1].size, 48);
	cr_assert_null(h->classes[2].name);
	cr_assert_str_eq(heap_thread_name(h, 0x7), "worker");
	cr_assert_null(heap_thread_name(h, 0x8));
	cr_assert_str_eq(heap_method_name(h, 0x9), "run");
	cr_assert_null(heap_method_name(h, 0x7));
	free_got();
}

Test(names, each_dump_its_own)
{
	named(HT_EV_CLASS, 0x1, "First");
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x10, 0x1, 8);
	LEAF(0x20, 0x2, 8);
	end_dump();
	named(HT_EV_CLASS, 0x1, "Second");
	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x10, 0x1, 8);
	end_dump();
	cr_assert_eq(scan_with(HEAP_ALL_DUMPS, false), 0);
	cr_assert_str_eq(class_of(got[0], 0x10), "First");
	cr_assert_str_eq(class_of(got[1], 0x10), "Second");
	/* class 0x2, used by dump 0 only and never named, is not in dump 1 */
	cr_assert_eq(got[0]->n_classes, 2);
	cr_assert_eq(got[1]->n_classes, 1);
	free_got();
}

Test(generations, from_the_object_or_from_the_bounds)
{
	const struct ht_generation_range early[] = {
		{.generation = 0, .start = 0x1000, .length = 0x1000},
	};
	const struct ht_generation_range at_finish[] = {
		{.generation = 0, .start = 0x8000, .length = 0},
		{.generation = 1, .start = 0x1000, .length = 0x100},
		{.generation = 2, .start = 0x2000, .length = 0x1000},
	};
	struct heap *h;

	bounds(1, early);
	gc_started();
	OBJ(0x1010, 0x1, 8, 0)->has_generation = true;
	LEAF(0x1020, 0x1, 8);
	LEAF(0x2100, 0x1, 8);
	LEAF(0x5000, 0x1, 8);
	LEAF(0x8000, 0x1, 8);
	bounds(3, at_finish);
	gc_finished();
	bounds(1, early); /* after the dump: not its bounds */
	h = scan_last();
	cr_assert_not_null(h->generation);
	cr_assert_eq(heap_generation(h, heap_find(h, 0x1010)), 0);
	cr_assert_eq(heap_generation(h, heap_find(h, 0x1020)), 1);
	cr_assert_eq(heap_generation(h, heap_find(h, 0x2100)), 2);
	cr_assert_eq(heap_generation(h, heap_find(h, 0x5000)),
		     HEAP_NO_GENERATION);
	cr_assert_eq(heap_generation(h, heap_find(h, 0x8000)),
		     HEAP_NO_GENERATION);
	cr_assert_eq(h->n_bounds, 3);
	free_got();
}

Test(generations, none_known)
{
	struct heap *h;

	begin_dump();
	container(HT_C_HEAP, 0, 0);
	LEAF(0x10, 0x1, 8);
	end_dump();
	h = scan_last();
	cr_assert_null(h->generation);
	cr_assert_eq(heap_generation(h, 0), HEAP_NO_GENERATION);
	free_got();
}

Test(generations, given_by_a_later_part)
{
	struct heap *h;

	begin_dump();
	container(HT_C_HEAP, 0, 0);
	OBJ_MORE(0x30, 0x1, 8, 0);
	OBJ(0x10, 0x1, 8, 0)->has_generation = true;
	OBJ(0x30, 0x1, 8, 0)->has_generation = true;
	evs.ev[evs.n - 1].u.object_references.generation = 2;
	end_dump();
	h = scan_last();
	cr_assert_eq(heap_generation(h, heap_find(h, 0x10)), 0);
	cr_assert_eq(heap_generation(h, heap_find(h, 0x30)), 2);
	free_got();
}

/* ---- The hand-solved examples of testdata/analysis ---------------------- */

static struct heap *load(const char *name)
{
	struct heap *h = testheap_load(testdata(name), HEAP_LAST_DUMP, &report);

	cr_assert_eq(report.violations, 0);
	return h;
}

struct expected {
	ht_id id;
	const char *class_name;
	uint64_t size, retained;
	ht_id idom; /* 0: a root dominates it; 1: unreachable */
};

static void assert_expected(const struct heap *h, const struct expected *x,
			    size_t n)
{
	struct heap_dominators d;
	struct ht_error err;

	cr_assert_eq(heap_dominators(h, &d, &err), 0);
	cr_assert_eq(h->n, n);
	for (size_t i = 0; i < n; i++) {
		uint32_t o = heap_find(h, x[i].id);
		uint32_t want = x[i].idom == 0 ? HEAP_VIRTUAL_ROOT :
				x[i].idom == 1 ? HEAP_NONE :
				heap_find(h, x[i].idom);

		cr_assert_neq(o, HEAP_NONE);
		cr_assert_str_eq(class_of(h, x[i].id), x[i].class_name);
		cr_assert_eq(heap_size(h, o), x[i].size);
		cr_assert_eq(d.retained[o], x[i].retained, "0x%llx: %llu",
			     (unsigned long long)x[i].id,
			     (unsigned long long)d.retained[o]);
		cr_assert_eq(d.idom[o], want, "idom of 0x%llx",
			     (unsigned long long)x[i].id);
	}
	heap_dominators_free(&d);
}

Test(testdata, diamond)
{
	const struct expected x[] = {
		{0x1000, "Node", 16, 240, 0},
		{0x1100, "Node", 32, 32, 0x1000},
		{0x1200, "Node", 48, 48, 0x1000},
		{0x1300, "Node", 64, 144, 0x1000},
		{0x1400, "Node", 80, 80, 0x1300},
		{0x1500, "Leaf", 96, 96, 0},
		{0x1600, "Node", 112, 0, 1},
		{0x1700, "Holder", 128, 272, 0},
		{0x1800, "Node", 144, 144, 0x1700},
	};
	struct heap *h = load("analysis/diamond.yaml");
	struct heap_dominators d;

	cr_assert(h->complete);
	cr_assert_not(h->aborted);
	cr_assert_eq(h->total_bytes, 720);
	cr_assert_eq(h->n_references, 11);
	cr_assert_eq(h->n_dangling, 0);
	cr_assert_eq(h->n_roots, 2);
	assert_expected(h, x, ARRAY_SIZE(x));
	cr_assert_eq(heap_dominators(h, &d, NULL), 0);
	cr_assert_eq(d.reachable, 8);
	cr_assert_eq(d.unreachable, 1);
	cr_assert_eq(d.unreachable_bytes, 112);
	cr_assert_eq(d.weakly_reachable, 0);
	heap_dominators_free(&d);
	heap_free(h);
}

Test(testdata, msvm_threads)
{
	const struct expected x[] = {
		{0x2000, "java.lang.Thread", 40, 40, 0},
		{0x2100, "Shop", 16, 136, 0},
		{0x2200, "[LOrder;", 40, 120, 0x2100},
		{0x2300, "java.lang.String", 24, 24, 0},
		{0x2400, "Order", 24, 24, 0},
		{0x2500, "Order", 24, 24, 0x2200},
		{0x2600, "Order", 24, 56, 0x2200},
		{0x2700, "java.lang.String", 32, 32, 0x2600},
		{0x2800, "java.lang.Thread", 40, 40, 0},
		{0x2900, "Config", 8, 8, 0},
	};
	const struct {
		uint8_t container;
		ht_id thread, method;
		ht_id object;
	} roots[] = {
		{HT_C_RT_THREAD, 0x1, 0, 0x2000},
		{HT_C_RT_JIT, 0x1, 0x900, 0x2100},
		{HT_C_RT_JIT, 0x1, 0x900, 0},
		{HT_C_RT_CLASS, 0, 0, 0x2900},
		{HT_C_RT_THREAD, 0x2, 0, 0x2800},
		{HT_C_RT_INTERPRETED, 0x2, 0x910, 0x2800},
		{HT_C_RT_CLASS, 0, 0, 0x2300},
	};
	const ht_id array_fields[] = {0x2400, 0x2500, 0, 0x2600};
	struct heap *h = load("analysis/msvm-threads.yaml");
	struct heap_dominators d;

	cr_assert(h->complete);
	cr_assert_eq(h->total_bytes, 272);
	cr_assert_eq(h->n_references, 11);
	cr_assert_eq(h->n_duplicates, 0);
	cr_assert_eq(h->n_roots, 7);
	for (size_t i = 0; i < 7; i++) {
		const struct heap_root *r = &h->roots[i];

		cr_assert_eq(r->container, roots[i].container, "root %zu", i);
		cr_assert_eq(r->has_thread, roots[i].thread != 0, "root %zu",
			     i);
		if (r->has_thread)
			cr_assert_eq(r->thread, roots[i].thread);
		if (roots[i].method)
			cr_assert_eq(r->id2, roots[i].method);
		cr_assert_eq(r->object, roots[i].object ?
			     heap_find(h, roots[i].object) : HEAP_NONE);
	}
	cr_assert_str_eq(heap_thread_name(h, 0x2), "worker");
	cr_assert_str_eq(heap_method_name(h, 0x910), "Worker.run()V");
	cr_assert_eq(n_fields(h, 0x2200), 4);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(field(h, 0x2200, i), array_fields[i]);
	assert_expected(h, x, ARRAY_SIZE(x));
	cr_assert_eq(heap_dominators(h, &d, NULL), 0);
	cr_assert_eq(d.reachable, 10);
	cr_assert_eq(d.unreachable, 0);
	heap_dominators_free(&d);
	heap_free(h);
}

Test(testdata, clr_weak)
{
	const struct expected x[] = {
		{0x1fff1000, "List<String>", 32, 120, 0},
		{0x1fff1040, "Object[]", 48, 88, 0x1fff1000},
		{0x1fff1080, "String", 40, 40, 0},
		{0x1fff10b0, "String", 40, 40, 0x1fff1040},
		{0x1fff2000, "Cache", 24, 80, 0},
		{0x1fff2020, "String", 56, 56, 0x1fff2000},
		{0x1fff3000, "Cache", 24, 0, 1},
		{0x1fff3020, "Object[]", 64, 0, 1},
		{0x1fff3080, "String", 40, 0, 1},
		{0x1fff4000, "String", 72, 0, 1},
		{0x1fff4040, "Object[]", 32, 0, 1},
	};
	const unsigned generations[] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 0, 2};
	struct heap *h = load("analysis/clr-weak.yaml");
	struct heap_dominators d;

	cr_assert(h->gc_dump);
	cr_assert_eq(h->gc, 0);
	cr_assert(h->complete);
	cr_assert_eq(h->total_bytes, 472);
	cr_assert_eq(h->n_references, 11);
	cr_assert_eq(h->n_dangling, 1);
	cr_assert_eq(h->n_roots, 4);
	cr_assert_eq(h->n_dangling_roots, 1);
	cr_assert_eq(h->roots[0].kind, HT_ROOT_STACK);
	cr_assert_eq(h->roots[0].root_id, 0x7ffe1000);
	cr_assert_eq(h->roots[1].root_flags, HT_ROOT_PINNING);
	cr_assert(heap_root_is_weak(&h->roots[2]));
	cr_assert_eq(h->roots[3].kind, HT_ROOT_OTHER);
	for (size_t i = 0; i < 11; i++)
		cr_assert_eq(heap_generation(h, heap_find(h, x[i].id)),
			     generations[i], "0x%llx",
			     (unsigned long long)x[i].id);
	assert_expected(h, x, ARRAY_SIZE(x));
	cr_assert_eq(heap_dominators(h, &d, NULL), 0);
	cr_assert_eq(d.reachable, 6);
	cr_assert_eq(d.unreachable, 5);
	cr_assert_eq(d.unreachable_bytes, 232);
	cr_assert_eq(d.weakly_reachable, 3);
	heap_dominators_free(&d);
	heap_free(h);
}

/* ---- Values (format version 3) ------------------------------------------ */

static void with_values(struct ht_ev_object_references *e, size_t n,
			const ht_id *fields, const uint64_t *values)
{
	e->n_values = n;
	e->value_fields = htb_ev_keep(&evs, fields, n, sizeof(*fields));
	e->values = htb_ev_keep(&evs, values, n, sizeof(*values));
}

static void with_array(struct ht_ev_object_references *e, uint8_t type,
		       uint64_t length, const void *data, uint64_t stored,
		       uint64_t hash)
{
	struct ht_array_values array = {
		.type = type, .length = length, .stored = stored,
		.data = htb_ev_keep(&evs, data,
				    stored * ht_value_type_width(type), 1),
		.hash = hash};

	e->array = htb_ev_keep(&evs, &array, 1, sizeof(array));
}

/* Each field and value of object's record, as "name=value ...". */
static const char *values_of(const struct heap *h, ht_id object)
{
	static char buf[256];
	struct value_record r;
	uint32_t field;
	uint64_t bits;
	size_t len = 0;

	buf[0] = 0;
	if (!heap_object_values(h, heap_find(h, object), &r))
		return "none";
	while (value_record_next(&r, &field, &bits))
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s=%lld",
				len ? " " : "",
				field < h->n_fields ? h->fields[field].name : "?",
				(long long)bits);
	if (r.has_array)
		snprintf(buf + len, sizeof(buf) - len, "%s%s[%llu/%llu]",
			 len ? " " : "", ht_value_type_name(r.array.type),
			 (unsigned long long)r.array.stored,
			 (unsigned long long)r.array.length);
	return buf;
}

/* The offset of object's record: equal records are kept once. */
static uint32_t record_at(const struct heap *h, ht_id object)
{
	uint32_t o = heap_find(h, object);
	uint64_t word = h->has_values[o / 64];

	cr_assert(word >> (o % 64) & 1);
	return h->values_at[h->values_rank[o / 64] +
			    (uint32_t)__builtin_popcountll(
				    word & ((UINT64_C(1) << (o % 64)) - 1))];
}

/* A Session with values, one with the same values, a String and its
 * Latin-1 byte[], objects without values; in_order: one part each, by
 * id (the graph takes the parts as they are), or else out of order,
 * with an object in two parts whose values come with the second and one
 * reported twice, the first report kept (the parts are then joined). */
static void values_trace(bool in_order)
{
	const ht_id session[] = {1, 2}, string[] = {4};
	const uint8_t hello[] = {'h', 0xe9, 'l', 'l', 'o'};

	named(HT_EV_CLASS, 0x10, "demo.Session");
	named(HT_EV_CLASS, 0x20, "java.lang.String");
	named(HT_EV_CLASS, 0x30, "byte[]");
	FIELDS({.id = 1, .class_id = 0x10, .name = "count",
		.type = HT_TYPE_INT},
	       {.id = 2, .class_id = 0x10, .name = "on",
		.type = HT_TYPE_BOOLEAN},
	       {.id = 3, .class_id = 0x20, .name = "value"},
	       {.id = 4, .class_id = 0x20, .name = "coder",
		.type = HT_TYPE_BYTE});
	struct ht_ev_object_references *str;

	begin_dump();
	container(HT_C_HEAP, 0, 0);
	if (!in_order)
		with_values(LEAF(0x1100, 0x10, 16), 2, session,
			    (const uint64_t[]){(uint64_t)-7, 1});
	with_values(LEAF(0x1000, 0x10, 16), 2, session,
		    (const uint64_t[]){(uint64_t)-7, 1});
	if (in_order)
		with_values(LEAF(0x1100, 0x10, 16), 2, session,
			    (const uint64_t[]){(uint64_t)-7, 1});
	str = OBJ(0x1200, 0x20, 24, 0x1300);
	REF_FIELDS(str, 3);
	with_values(str, 1, string, (const uint64_t[]){0});
	with_array(LEAF(0x1300, 0x30, 24), HT_TYPE_BYTE, 5, hello, 5, 0);
	if (!in_order)
		OBJ_MORE(0x1400, 0x10, 16, 0x1000);
	with_values(LEAF(0x1400, 0x10, 16), 2, session,
		    (const uint64_t[]){5, 0});
	LEAF(0x1500, 0x10, 16);
	with_values(LEAF(0x1600, 0x10, 16), 2, session,
		    (const uint64_t[]){1, 1});
	if (!in_order)
		with_values(LEAF(0x1600, 0x10, 16), 2, session,
			    (const uint64_t[]){2, 0});
	end_dump();
}

static void check_values(const struct heap *h)
{
	char text[VALUES_TEXT_BOUND(8)];
	uint64_t length;
	uint64_t chars;

	cr_assert_str_eq(values_of(h, 0x1000), "count=-7 on=1");
	cr_assert_str_eq(values_of(h, 0x1100), "count=-7 on=1");
	cr_assert_eq(record_at(h, 0x1000), record_at(h, 0x1100),
		     "equal values share one record");
	cr_assert_str_eq(values_of(h, 0x1200), "coder=0");
	cr_assert_str_eq(values_of(h, 0x1300), "byte[5/5]");
	cr_assert_str_eq(values_of(h, 0x1400), "count=5 on=0");
	cr_assert_str_eq(values_of(h, 0x1500), "none");
	cr_assert_str_eq(values_of(h, 0x1600), "count=1 on=1",
			 "the first report is kept");
	cr_assert(values_string_text(h, heap_find(h, 0x1200), text, 8, &chars,
				     &length));
	cr_assert_str_eq(text, "h\xc3\xa9llo");
	cr_assert_eq(chars, 5);
	cr_assert_eq(length, 5);
	cr_assert(values_string_text(h, heap_find(h, 0x1200), text, 2, &chars,
				     &length));
	cr_assert_str_eq(text, "h\xc3\xa9");
	cr_assert_not(values_string_text(h, heap_find(h, 0x1300), text, 8,
					 &chars, &length));
}

Test(heap, values_in_order)
{
	keep_values = true;
	values_trace(true);
	check_values(scan_last());
	free_got();
}

Test(heap, values_of_parts_joined)
{
	keep_values = true;
	values_trace(false);
	check_values(scan_last());
	free_got();
}

/* A scan that is not asked keeps none, and allocates nothing for them. */
Test(heap, no_values_unless_asked)
{
	struct heap *h;

	values_trace(true);
	h = scan_last();
	cr_assert_null(h->has_values);
	cr_assert_null(h->value_bytes);
	cr_assert_str_eq(values_of(h, 0x1000), "none");
	free_got();
}
