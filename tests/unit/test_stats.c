/*
 * test_stats.c - the figures of dumps and GCs (src/analysis/stats.c),
 * over small .ht traces built in memory (htbuild.h) and read back as
 * `stats` reads them, each checked against figures worked out by hand:
 * roots grouped by container and by CLR root kind, null, dangling and
 * weak roots; unreachable, weakly reachable and dangling; counts and
 * bytes per class with and without retained sizes; generations as dumps
 * give them and as bounds do; and per GC its blocks and what they did to
 * the objects tracked across GCs (moved, survived, died, promoted, left
 * alone, kept), the dump of its references, the ages of a dump's objects,
 * and the GCs before damage.
 */
#include <criterion/criterion.h>

#include "analysis/dominators.h"
#include "analysis/levels.h"
#include "analysis/stats.h"
#include "htbuild.h"
#include "testutil.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- A trace in memory -------------------------------------------------- */

/* The events of one test (htbuild.h). */
static struct htb_events evs;

static void class_named(ht_id id, const char *name)
{
	htb_ev_class(&evs, id, name);
}

static void container(enum ht_container_type type, ht_id id1, ht_id id2)
{
	htb_ev_container(&evs, type, id1, id2);
}

static void dump_begin(void)
{
	container(HT_C_BEGIN, 0, 0);
}

static void heap_begin(void)
{
	container(HT_C_HEAP, 0, 0);
}

static void dump_end(void)
{
	container(HT_C_END, 0, 0);
}

static struct ht_ev_root_references *roots_of(const ht_id *refs, size_t n)
{
	return htb_ev_roots(&evs, refs, n);
}

/* A GC's roots: each with its CLR kind and root flags. */
static void kinded_roots_of(const ht_id *refs, size_t n,
			    const uint8_t *kinds, const uint8_t *flags)
{
	struct ht_ev_root_references *e = roots_of(refs, n);

	e->kinds = htb_ev_keep(&evs, kinds, n, 1);
	e->root_flags = htb_ev_keep(&evs, flags, n, 1);
}

static struct ht_ev_object_references *object_of(ht_id id, ht_id cls,
						 uint64_t size,
						 const ht_id *refs, size_t n)
{
	return htb_ev_object(&evs, id, cls, size, refs, n);
}

static void object_in_generation(ht_id id, ht_id cls, uint64_t size,
				 unsigned generation)
{
	struct ht_ev_object_references *e = object_of(id, cls, size, NULL, 0);

	e->has_generation = true;
	e->generation = generation;
}

static void allocated(ht_id id, ht_id cls, uint64_t size)
{
	htb_ev_allocated(&evs, id, cls, size);
}

static void gc_started(uint32_t generations)
{
	htb_ev_gc_started(&evs, generations);
}

static void numbered_gc_started(uint64_t gc, uint32_t generations,
				enum ht_gc_reason reason)
{
	struct ht_ev_gc_started *e = htb_ev_gc_started(&evs, generations);

	e->has_gc = true;
	e->gc = gc;
	e->reason = reason;
}

static void gc_finished(void)
{
	htb_ev_gc_finished(&evs);
}

#define ROOTS(...) roots_of(HTB_ARRAY(ht_id, __VA_ARGS__))
#define OBJ(id, cls, size, ...)                                         \
	object_of(id, cls, size, HTB_ARRAY(ht_id, __VA_ARGS__))
#define LEAF(id, cls, size) object_of(id, cls, size, NULL, 0)
#define BOUNDS(...)                                                     \
	htb_ev_bounds(&evs, HTB_ARRAY(struct ht_generation_range, __VA_ARGS__))
#define MOVED(...)                                                      \
	htb_ev_moved(&evs, HTB_ARRAY(struct ht_moved_block, __VA_ARGS__))
#define SURVIVING(...)                                                  \
	htb_ev_surviving(&evs,                                          \
			 HTB_ARRAY(struct ht_surviving_block, __VA_ARGS__))
#define GENS(...) gens_of(HTB_ARRAY(unsigned, __VA_ARGS__))

static uint32_t gens_of(const unsigned *g, size_t n)
{
	uint32_t bits = 0;

	for (size_t i = 0; i < n; i++)
		bits |= 1u << g[i];
	return bits;
}

/* The events as a .ht file: one chunk, the index and the trailer. */
static struct htb trace;

static struct ht_reader *open_trace(void)
{
	struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "clr",
		.pointer_size = 8,
		.reports_survivors = true,
	};
	struct ht_error err;
	struct ht_reader *r;

	if (!trace.len) {
		htb_start(&trace, &header);
		htb_chunk(&trace, evs.ev, evs.n);
		htb_finish(&trace);
	}
	r = htb_open_memory(trace.data, trace.len, &err);
	cr_assert_not_null(r, "%s", err.message);
	return r;
}

/* ---- Reading it as stats does ------------------------------------------- */

#define MAX_DUMPS 4

/* Every dump's figures, from heap_scan's graphs. */
static struct dump_stats dumps[MAX_DUMPS];
static size_t n_dumps;

static int collect(void *ctx, struct heap *h, bool *keep)
{
	bool retained_by_class = *(bool *)ctx;
	struct ht_error err;

	*keep = false;
	cr_assert_lt(n_dumps, MAX_DUMPS);
	cr_assert_eq(dump_stats_compute(&dumps[n_dumps], h, retained_by_class,
					HEAP_LEVEL_STRONG,
					&err), 0, "%s", err.message);
	n_dumps++;
	return 0;
}

static void scan_dumps(bool retained_by_class)
{
	struct ht_reader *r = open_trace();
	struct heap_scan_report report;
	struct ht_error err;

	cr_assert_eq(heap_scan(r, HEAP_ALL_DUMPS, collect, &retained_by_class,
			       &report, &err), 0, "%s", err.message);
	ht_reader_close(r);
}

static struct trace_stats gcs;

static void scan_gcs(void)
{
	struct ht_reader *r = open_trace();
	struct ht_error err;

	cr_assert_eq(stats_scan_gcs(r, &gcs, true, NULL, NULL, &err), 0, "%s",
		     err.message);
	ht_reader_close(r);
}

static void forget(void)
{
	for (size_t i = 0; i < n_dumps; i++)
		dump_stats_free(&dumps[i]);
	n_dumps = 0;
	trace_stats_free(&gcs);
	htb_free(&trace);
	memset(&trace, 0, sizeof(trace));
}

TestSuite(roots, .fini = forget);
TestSuite(reachability, .fini = forget);
TestSuite(classes, .fini = forget);
TestSuite(generations, .fini = forget);
TestSuite(gcs, .fini = forget);

static uint64_t sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* ---- Roots --------------------------------------------------------------- */

/* A container dump's roots are grouped by the container that holds them;
 * the frame's null root is counted apart, the dangling one in its group. */
Test(roots, grouped_by_container)
{
	const struct dump_stats *d;

	dump_begin();
	container(HT_C_RT_THREAD, 0x1, 0);
	ROOTS(0x1000);
	container(HT_C_RT_JIT, 0x7ff0, 0x900);
	ROOTS(0x1100, 0);
	container(HT_C_RT_CLASS, 0x500, 0);
	ROOTS(0x1200, 0x9999);
	container(HT_C_RT_JIT, 0x7fe0, 0x900);
	ROOTS(0x1000);
	heap_begin();
	LEAF(0x1000, 0x500, 16);
	LEAF(0x1100, 0x500, 16);
	LEAF(0x1200, 0x500, 16);
	dump_end();
	scan_dumps(false);

	cr_assert_eq(n_dumps, 1);
	d = &dumps[0];
	cr_assert_not(d->gc_dump);
	cr_assert(d->complete);
	cr_assert_eq(d->roots, 5);
	cr_assert_eq(d->null_roots, 1);
	cr_assert_eq(d->dangling_roots, 1);
	cr_assert_eq(d->weak_roots, 0);
	cr_assert_eq(d->root_count[HT_C_RT_THREAD], 1);
	cr_assert_eq(d->root_count[HT_C_RT_JIT], 2);
	cr_assert_eq(d->root_count[HT_C_RT_CLASS], 2);
	cr_assert_eq(sum(d->root_count, STATS_ROOT_SLOTS), d->roots);
	cr_assert_eq(sum(d->root_weak, STATS_ROOT_SLOTS), 0);
}

/* A GC's roots are grouped by CLR root kind, those given none in a slot
 * of their own; a weak root counts in its kind's weak figure. */
Test(roots, grouped_by_kind)
{
	const struct dump_stats *d;

	gc_started(GENS(0));
	kinded_roots_of(HTB_ARRAY(ht_id, 0x2000, 0x2100, 0x2200),
			(const uint8_t[]){HT_ROOT_STACK, HT_ROOT_HANDLE,
					  HT_ROOT_HANDLE},
			(const uint8_t[]){0, HT_ROOT_WEAK, HT_ROOT_PINNING});
	ROOTS(0x2300);
	kinded_roots_of(HTB_ARRAY(ht_id, 0x2400), (const uint8_t[]){
			HT_ROOT_FINALIZER}, (const uint8_t[]){0});
	LEAF(0x2000, 0x500, 8);
	LEAF(0x2100, 0x500, 8);
	LEAF(0x2200, 0x500, 8);
	LEAF(0x2300, 0x500, 8);
	LEAF(0x2400, 0x500, 8);
	gc_finished();
	scan_dumps(false);

	cr_assert_eq(n_dumps, 1);
	d = &dumps[0];
	cr_assert(d->gc_dump);
	cr_assert_eq(d->gc, 0);
	cr_assert_eq(d->roots, 5);
	cr_assert_eq(d->weak_roots, 1);
	cr_assert_eq(d->null_roots, 0);
	cr_assert_eq(d->root_count[STATS_KIND_SLOT(HT_ROOT_STACK)], 1);
	cr_assert_eq(d->root_count[STATS_KIND_SLOT(HT_ROOT_HANDLE)], 2);
	cr_assert_eq(d->root_weak[STATS_KIND_SLOT(HT_ROOT_HANDLE)], 1);
	cr_assert_eq(d->root_count[STATS_KIND_SLOT(HT_ROOT_FINALIZER)], 1);
	cr_assert_eq(d->root_count[STATS_NO_KIND_SLOT], 1);
	cr_assert_eq(sum(d->root_count, STATS_KIND_SLOT(0)), 0,
		     "no container slot");
	/* what only the weak handle holds is not reachable */
	cr_assert_eq(d->unreachable, 1);
	cr_assert_eq(d->unreachable_bytes, 8);
	cr_assert_eq(d->weakly_reachable, 1);
}

/* ---- Reachability -------------------------------------------------------- */

/*
 * root -> 0x10 -> 0x20, and 0x10 -> 0x7777, an id the dump never reports;
 * 0x40 -> 0x30, which no root reaches; 0x20 reported twice. Objects and
 * bytes count the first report of each object only.
 */
Test(reachability, unreachable_dangling_and_duplicates)
{
	const struct dump_stats *d;

	dump_begin();
	container(HT_C_RT_THREAD, 0x1, 0);
	ROOTS(0x10);
	heap_begin();
	OBJ(0x10, 0x500, 8, 0x20, 0x7777, 0);
	LEAF(0x20, 0x500, 16);
	LEAF(0x30, 0x500, 32);
	OBJ(0x40, 0x500, 64, 0x30);
	LEAF(0x20, 0x500, 16);
	dump_end();
	scan_dumps(false);

	d = &dumps[0];
	cr_assert_eq(d->objects, 4);
	cr_assert_eq(d->bytes, 8 + 16 + 32 + 64);
	cr_assert_eq(d->references, 3, "null references are no references");
	cr_assert_eq(d->dangling, 1);
	cr_assert_eq(d->duplicates, 1);
	cr_assert_eq(d->unreachable, 2);
	cr_assert_eq(d->unreachable_bytes, 32 + 64);
	cr_assert_eq(d->weakly_reachable, 0);
}

static void fields_of(const struct ht_field *f, size_t n)
{
	struct ht_event *ev = htb_ev_add(&evs, HT_EV_FIELDS);

	ev->u.fields.count = n;
	ev->u.fields.fields = htb_ev_keep(&evs, f, n, sizeof(*f));
}

/*
 * As HPROF has them: a live demo.Kept, whose class object nothing refers
 * to (no edge from an instance to its class), the class object of
 * demo.Lost, and a demo.Kept that nothing holds. The class objects are
 * counted apart among the unreachable, in a trace that carries fields.
 */
static void class_objects_dump(bool with_fields)
{
	static const struct ht_field next = {
		.id = 1, .class_id = 0x600, .name = "next",
		.kind = HT_FIELD_INSTANCE};

	class_named(0x500, "java.lang.Class");
	class_named(0x600, "demo.Kept");
	class_named(0x700, "demo.Lost");
	if (with_fields)
		fields_of(&next, 1);
	dump_begin();
	container(HT_C_RT_THREAD, 0x1, 0);
	ROOTS(0x10);
	heap_begin();
	OBJ(0x10, 0x600, 16, 0);
	LEAF(0x30, 0x600, 16);
	LEAF(0x600, 0x500, 96);
	LEAF(0x700, 0x500, 80);
	dump_end();
	scan_dumps(false);
}

Test(reachability, unreachable_class_objects_are_counted_apart)
{
	class_objects_dump(true);
	cr_assert_eq(dumps[0].unreachable, 3);
	cr_assert_eq(dumps[0].unreachable_bytes, 16 + 96 + 80);
	cr_assert_eq(dumps[0].unreachable_classes, 2);
	cr_assert_eq(dumps[0].unreachable_class_bytes, 96 + 80);
}

Test(reachability, a_trace_without_fields_names_no_class_objects)
{
	class_objects_dump(false);
	cr_assert_eq(dumps[0].unreachable, 3);
	cr_assert_eq(dumps[0].unreachable_classes, 0);
	cr_assert_eq(dumps[0].unreachable_class_bytes, 0);
}

/* ---- Classes ------------------------------------------------------------- */

/*
 * Shop -> Node -> Node -> Node -> byte[], and an unreachable object of a
 * class the trace never named (named by its id). A class retains what its
 * topmost objects retain: the list's head holds the two nodes below it,
 * which are not counted again.
 */
static void shop_with_a_list(void)
{
	class_named(0x10, "Shop");
	class_named(0x11, "Node");
	class_named(0x12, "byte[]");
	dump_begin();
	container(HT_C_RT_THREAD, 0x1, 0);
	ROOTS(0x100);
	heap_begin();
	OBJ(0x100, 0x10, 8, 0x200);
	OBJ(0x200, 0x11, 16, 0x300);
	OBJ(0x300, 0x11, 16, 0x400);
	OBJ(0x400, 0x11, 16, 0x500);
	LEAF(0x500, 0x12, 100);
	LEAF(0x600, 0x13, 4);
	dump_end();
}

static void assert_class(const struct class_row *c, const char *name,
			 ht_id id, uint64_t count, uint64_t bytes,
			 uint64_t retained)
{
	cr_assert_str_eq(c->name, name);
	cr_assert_eq(c->id, id, "%s: class id", name);
	cr_assert_eq(c->count, count, "%s: count", name);
	cr_assert_eq(c->bytes, bytes, "%s: bytes", name);
	cr_assert_eq(c->retained, retained, "%s: retained", name);
}

Test(classes, counts_and_bytes_by_self_bytes)
{
	const struct dump_stats *d;

	shop_with_a_list();
	scan_dumps(false);
	d = &dumps[0];
	cr_assert_eq(d->n_classes, 4);
	assert_class(&d->classes[0], "byte[]", 0x12, 1, 100, 0);
	assert_class(&d->classes[1], "Node", 0x11, 3, 48, 0);
	assert_class(&d->classes[2], "Shop", 0x10, 1, 8, 0);
	assert_class(&d->classes[3], "?0x13", 0x13, 1, 4, 0);
}

Test(classes, retained_counts_a_list_once)
{
	const struct dump_stats *d;

	shop_with_a_list();
	scan_dumps(true);
	d = &dumps[0];
	cr_assert_eq(d->n_classes, 4);
	assert_class(&d->classes[0], "byte[]", 0x12, 1, 100, 100);
	assert_class(&d->classes[1], "Node", 0x11, 3, 48, 48 + 100);
	assert_class(&d->classes[2], "Shop", 0x10, 1, 8, 8 + 48 + 100);
	assert_class(&d->classes[3], "?0x13", 0x13, 1, 4, 0);
}

static int keep_graph(void *ctx, struct heap *h, bool *keep)
{
	*(struct heap **)ctx = h;
	*keep = true;
	return 0;
}

/* Two classes of one name stay two rows here (diff merges names), and
 * each retains under the other: no row is above the other's. */
Test(classes, one_name_two_classes)
{
	struct heap *h;
	struct heap_dominators dm;
	struct class_row *rows;
	size_t n;
	struct ht_error err;
	struct ht_reader *r;
	struct heap_scan_report report;

	class_named(0x10, "Node");
	class_named(0x20, "Node");
	dump_begin();
	container(HT_C_RT_THREAD, 0x1, 0);
	ROOTS(0x100);
	heap_begin();
	OBJ(0x100, 0x10, 8, 0x200);
	LEAF(0x200, 0x20, 16);
	dump_end();
	r = open_trace();
	h = NULL;
	cr_assert_eq(heap_scan(r, HEAP_LAST_DUMP, keep_graph, &h, &report,
			       &err), 0, "%s", err.message);
	ht_reader_close(r);
	cr_assert_not_null(h);
	cr_assert_eq(heap_dominators(h, &dm, &err), 0);
	cr_assert_eq(class_table(h, &dm, CLASS_BY_RETAINED, &rows, &n), 0);
	cr_assert_eq(n, 2);
	assert_class(&rows[0], "Node", 0x10, 1, 8, 24);
	assert_class(&rows[1], "Node", 0x20, 1, 16, 16);
	class_table_free(rows, n);
	heap_dominators_free(&dm);
	heap_free(h);
}

/* ---- Generations --------------------------------------------------------- */

/* As the dump gives them; without, from the bounds in effect; else
 * unknown. A dump of no known generation has none to show. */
Test(generations, from_the_dump_and_from_bounds)
{
	const struct dump_stats *d;

	dump_begin();
	heap_begin();
	object_in_generation(0x100, 0x500, 8, 0);
	object_in_generation(0x108, 0x500, 8, 0);
	object_in_generation(0x200, 0x500, 16, 1);
	object_in_generation(0x300, 0x500, 1000, HT_GEN_LOH);
	LEAF(0x9010, 0x500, 32);
	dump_end();
	dump_begin();
	heap_begin();
	LEAF(0x9010, 0x500, 32);
	LEAF(0x9020, 0x500, 64);
	dump_end();
	BOUNDS({2, 0x9000, 0x18, 0});
	dump_begin();
	heap_begin();
	LEAF(0x9010, 0x500, 32);
	LEAF(0x9020, 0x500, 64);
	dump_end();
	scan_dumps(false);
	cr_assert_eq(n_dumps, 3);

	d = &dumps[0];
	cr_assert(d->has_generations);
	cr_assert_eq(d->gen_count[0], 2);
	cr_assert_eq(d->gen_bytes[0], 16);
	cr_assert_eq(d->gen_count[1], 1);
	cr_assert_eq(d->gen_bytes[1], 16);
	cr_assert_eq(d->gen_count[HT_GEN_LOH], 1);
	cr_assert_eq(d->gen_bytes[HT_GEN_LOH], 1000);
	cr_assert_eq(d->gen_count[STATS_UNKNOWN_GEN_SLOT], 1);
	cr_assert_eq(d->gen_bytes[STATS_UNKNOWN_GEN_SLOT], 32);

	d = &dumps[1];
	cr_assert_not(d->has_generations);
	cr_assert_eq(d->gen_count[STATS_UNKNOWN_GEN_SLOT], 2);
	cr_assert_eq(d->gen_bytes[STATS_UNKNOWN_GEN_SLOT], 96);

	d = &dumps[2]; /* generation 2 ends at 0x9018 */
	cr_assert(d->has_generations);
	cr_assert_eq(d->gen_count[2], 1);
	cr_assert_eq(d->gen_bytes[2], 32);
	cr_assert_eq(d->gen_count[STATS_UNKNOWN_GEN_SLOT], 1);
	cr_assert_eq(d->gen_bytes[STATS_UNKNOWN_GEN_SLOT], 64);
}

/* ---- GCs ----------------------------------------------------------------- */

/*
 * Four objects allocated in generation 0, then a GC of it: its block
 * moves the two at 0x1000 (16 bytes) to 0x3000, one survives in place,
 * and the last, in no block and inside the bounds at the GC's start,
 * died. The bounds at its finish put the moved ones in generation 1:
 * promoted.
 */
Test(gcs, blocks_and_what_they_did)
{
	const struct gc_stats *g;
	const struct reloc_gc_summary *o;

	BOUNDS({0, 0x1000, 0x100, 0});
	allocated(0x1000, 0x500, 8);
	allocated(0x1008, 0x500, 8);
	allocated(0x1010, 0x500, 16);
	allocated(0x1020, 0x500, 32);
	numbered_gc_started(7, GENS(0), HT_GC_INDUCED);
	BOUNDS({0, 0x1000, 0x100, 0});
	MOVED({0x1000, 0x3000, 0x10});
	SURVIVING({0x1010, 0x10});
	BOUNDS({1, 0x3000, 0x10, 0}, {0, 0x1010, 0x10, 0});
	gc_finished();
	scan_gcs();

	cr_assert_eq(gcs.dumps, 0);
	cr_assert_not(gcs.damaged);
	cr_assert_eq(gcs.n_gcs, 1);
	g = &gcs.gcs[0];
	cr_assert_eq(g->index, 0);
	cr_assert(g->has_gc);
	cr_assert_eq(g->gc, 7);
	cr_assert_eq(g->generations, GENS(0));
	cr_assert_eq(g->reason, HT_GC_INDUCED);
	cr_assert(g->finished);
	cr_assert_eq(g->dump, -1);
	cr_assert_eq(g->moved_blocks, 1);
	cr_assert_eq(g->moved_bytes, 0x10);
	cr_assert_eq(g->surviving_blocks, 1);
	cr_assert_eq(g->surviving_bytes, 0x10);

	cr_assert(g->tracked);
	o = &g->objects;
	cr_assert_eq(o->moved_objects, 2);
	cr_assert_eq(o->moved_bytes, 16);
	cr_assert_eq(o->survived_objects, 1);
	cr_assert_eq(o->survived_bytes, 16);
	cr_assert_eq(o->died_objects, 1);
	cr_assert_eq(o->died_bytes, 32);
	cr_assert_eq(o->promoted_objects, 2);
	cr_assert_eq(o->promoted_bytes, 16);
	cr_assert_eq(o->kept_objects + o->untouched_objects + o->lost_objects,
		     0);
	cr_assert_eq(o->bounds, RELOC_BOUNDS_START);

	cr_assert_eq(gcs.totals.objects, 4);
	cr_assert_eq(gcs.totals.alive, 3);
	cr_assert_eq(gcs.totals.died, 1);
	cr_assert_eq(gcs.totals.lost, 0);
}

/*
 * A GC of generation 0 that reports its references: the dump is its, the
 * generation-1 objects are left alone, and the dump's objects are aged
 * by the GCs they survived, the references' GC included.
 */
Test(gcs, references_and_generations_left_alone)
{
	const struct gc_stats *g;
	const struct dump_tracking *t;

	BOUNDS({0, 0x1000, 0x100, 0}, {1, 0x3000, 0x100, 0});
	allocated(0x1000, 0x500, 8);
	allocated(0x3000, 0x500, 16);
	allocated(0x3010, 0x500, 32);
	gc_started(GENS(0));
	SURVIVING({0x1000, 8});
	gc_finished();
	gc_started(GENS(0));
	SURVIVING({0x1000, 8});
	ROOTS(0x1000);
	LEAF(0x1000, 0x500, 8);
	LEAF(0x3000, 0x500, 16);
	LEAF(0x3010, 0x500, 32);
	gc_finished();
	scan_gcs();

	cr_assert_eq(gcs.dumps, 1);
	cr_assert_eq(gcs.n_gcs, 2);
	cr_assert_eq(gcs.gcs[0].dump, -1);
	g = &gcs.gcs[1];
	cr_assert_eq(g->index, 1);
	cr_assert_not(g->has_gc);
	cr_assert_eq(g->dump, 0);
	cr_assert_eq(g->surviving_blocks, 1);
	cr_assert_eq(g->surviving_bytes, 8);
	cr_assert_eq(g->objects.survived_objects, 1);
	cr_assert_eq(g->objects.survived_bytes, 8);
	cr_assert_eq(g->objects.untouched_objects, 2);
	cr_assert_eq(g->objects.untouched_bytes, 48);
	cr_assert_eq(g->objects.died_objects, 0);

	t = trace_stats_tracking(&gcs, 0);
	cr_assert_not_null(t);
	cr_assert(t->sum.gc_dump);
	cr_assert_eq(t->sum.objects, 3);
	cr_assert_eq(t->sum.new_objects, 0);
	cr_assert_eq(t->sum.n_ages, 1);
	cr_assert_eq(t->sum.ages[0].gcs, 2);
	cr_assert_eq(t->sum.ages[0].count, 3);
	cr_assert_eq(t->sum.ages[0].bytes, 56);
	cr_assert_null(trace_stats_tracking(&gcs, 1));
}

/* The bytes of a GC's blocks add up without wrapping around. */
Test(gcs, block_bytes_saturate)
{
	gc_started(GENS(0));
	MOVED({0x1000, 0x2000, UINT64_MAX / 2}, {0x8000, 0x9000, UINT64_MAX});
	SURVIVING({0x100, UINT64_MAX}, {0x200, 8});
	gc_finished();
	scan_gcs();

	cr_assert_eq(gcs.n_gcs, 1);
	cr_assert_eq(gcs.gcs[0].moved_blocks, 2);
	cr_assert_eq(gcs.gcs[0].moved_bytes, UINT64_MAX);
	cr_assert_eq(gcs.gcs[0].surviving_blocks, 2);
	cr_assert_eq(gcs.gcs[0].surviving_bytes, UINT64_MAX);
}

/* A GC the trace ends inside is listed, unfinished, its deaths unproven. */
Test(gcs, unfinished)
{
	BOUNDS({0, 0x1000, 0x100, 0});
	allocated(0x1000, 0x500, 8);
	gc_started(GENS(0));
	scan_gcs();

	cr_assert_eq(gcs.n_gcs, 1);
	cr_assert_not(gcs.gcs[0].finished);
	cr_assert_eq(gcs.gcs[0].objects.died_objects, 0);
	cr_assert_eq(gcs.totals.alive, 1);
}

/* Damage ends the scan with what came before it: a trace cut in its
 * second chunk still has the GC of its first. */
Test(gcs, before_damage)
{
	struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.pointer_size = 8,
	};
	struct ht_error err;
	struct ht_reader *r;
	size_t second;

	gc_started(GENS(0));
	gc_finished();
	gc_started(GENS(1));
	gc_finished();
	htb_start(&trace, &header);
	htb_chunk(&trace, evs.ev, 2);
	second = trace.len;
	htb_chunk(&trace, evs.ev + 2, 2);
	trace.len = second + (trace.len - second) / 2;
	r = htb_open_memory(trace.data, trace.len, &err);
	cr_assert_not_null(r, "%s", err.message);
	cr_assert_eq(stats_scan_gcs(r, &gcs, true, NULL, NULL, &err), 1);
	ht_reader_close(r);
	cr_assert(gcs.damaged);
	cr_assert_str_not_empty(err.message);
	cr_assert_eq(gcs.n_gcs, 1);
	cr_assert(gcs.gcs[0].finished);
}

/* ---- GC pauses ------------------------------------------------------------ */

TestSuite(pauses, .fini = forget);

static void timed(uint64_t t)
{
	evs.ev[evs.n - 1].has_time = true;
	evs.ev[evs.n - 1].time = t;
}

/* Nearest rank on 1..100 ms, given out of order: p50 is the 50th
 * smallest, p99 the 99th; the mean truncates. */
Test(pauses, percentiles_by_nearest_rank)
{
	uint64_t p[100];
	struct pause_summary s;

	for (size_t i = 0; i < 100; i++)
		p[i] = (uint64_t)((i * 37) % 100 + 1) * 1000000; /* a permutation */
	pause_summary_of(p, 100, 10000000000u, &s);
	cr_assert_eq(s.count, 100);
	cr_assert_eq(s.total, 5050000000u);
	cr_assert_eq(s.mean, 50500000);
	cr_assert_eq(s.p50, 50000000);
	cr_assert_eq(s.p99, 99000000);
	cr_assert_eq(s.max, 100000000);
	cr_assert_eq(s.run, 10000000000u);
	cr_assert_float_eq(s.share, 50.5, 1e-9);
}

/* Few pauses: every percentile of one is that one; of three, p50 is the
 * middle and p99 the largest; none gives zeros, and no share of a run
 * without length. */
Test(pauses, small_counts)
{
	uint64_t one[] = {7}, three[] = {30, 10, 20};
	struct pause_summary s;

	pause_summary_of(one, 1, 100, &s);
	cr_assert(s.count == 1 && s.p50 == 7 && s.p99 == 7 && s.max == 7 &&
		  s.mean == 7);
	cr_assert_float_eq(s.share, 7.0, 1e-9);
	pause_summary_of(three, 3, 0, &s);
	cr_assert(s.p50 == 20 && s.p99 == 30 && s.max == 30 && s.mean == 20 &&
		  s.total == 60);
	cr_assert_eq(s.share, 0.0);
	pause_summary_of(NULL, 0, 50, &s);
	cr_assert(s.count == 0 && s.total == 0 && s.max == 0 && s.run == 50);
	cr_assert_eq(s.share, 0.0);
}

/* From a trace: each GC's start, finish and pause, a dump's begin and
 * end, the run up to the last time; a GC without a finish time, or whose
 * finish comes before its start, has no pause and counts in no figure. */
Test(pauses, from_a_timed_trace)
{
	struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.pointer_size = 8,
	};
	struct pause_summary s;
	uint64_t pause;

	gc_started(GENS(0));
	timed(1000);
	gc_finished();
	timed(3000);
	dump_begin();
	timed(4000);
	dump_end();
	timed(4500);
	gc_started(GENS(0));
	timed(6000);
	gc_finished();
	gc_started(GENS(0));
	timed(9000);
	gc_finished();
	timed(8000);
	gc_started(GENS(0));
	timed(10000);
	gc_finished();
	timed(10000);
	htb_start(&trace, &header);
	htb_chunk(&trace, evs.ev, evs.n);
	htb_finish(&trace);
	scan_gcs();
	cr_assert(gcs.has_times);
	cr_assert_eq(gcs.last_time, 10000);
	cr_assert_eq(gcs.n_gcs, 4);
	cr_assert(gc_pause(&gcs.gcs[0], &pause));
	cr_assert_eq(pause, 2000);
	cr_assert(gcs.gcs[1].has_start_time && !gcs.gcs[1].has_finish_time);
	cr_assert_not(gc_pause(&gcs.gcs[1], &pause));
	cr_assert_not(gc_pause(&gcs.gcs[2], &pause), "finish before start");
	cr_assert(gc_pause(&gcs.gcs[3], &pause));
	cr_assert_eq(pause, 0);
	cr_assert_not_null(trace_stats_dump_times(&gcs, 0));
	cr_assert_eq(trace_stats_dump_times(&gcs, 0)->begin, 4000);
	cr_assert_eq(trace_stats_dump_times(&gcs, 0)->end, 4500);
	cr_assert_eq(stats_pause_summary(&gcs, &s), 0);
	cr_assert_eq(s.count, 2);
	cr_assert_eq(s.total, 2000);
	cr_assert_eq(s.run, 10000);
	cr_assert_float_eq(s.share, 20.0, 1e-9);
}

/* A trace without times has none to show. */
Test(pauses, none_without_times)
{
	struct ht_header header = {
		.version = 2,
		.pointer_size = 8,
	};
	struct pause_summary s;

	gc_started(GENS(0));
	gc_finished();
	htb_start(&trace, &header);
	htb_chunk(&trace, evs.ev, evs.n);
	htb_finish(&trace);
	scan_gcs();
	cr_assert_not(gcs.has_times);
	cr_assert_null(trace_stats_dump_times(&gcs, 0));
	cr_assert_eq(stats_pause_summary(&gcs, &s), 0);
	cr_assert_eq(s.count, 0);
	cr_assert_eq(s.run, 0);
}
