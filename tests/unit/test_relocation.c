/*
 * test_relocation.c - the relocation tracker (src/analysis/relocation.c):
 * the seed's worked example with its formula's lengths and with the
 * lengths its table prints; blocks split over events and out of order,
 * adjacent and overlapping; generations not collected; promotions by
 * finishing bounds and by a GC's own references; deaths by (a), (b) and
 * (c) and never otherwise; reused ids; objects lost to a block, an
 * allocation or a dump; ages; watching by id; the relocation proof (each
 * contradiction, and what it must not call one); and thousands of small
 * random GCs against a naive O(N * R) reference fed by the same replay,
 * with the proof on and off.
 */
#include <criterion/criterion.h>

#include "htbuild.h"
#include "util/alloc.h"
#include "reloc_reference.h"
#include "analysis/relocation.h"
#include "lib/read/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A trace in memory -------------------------------------------------- */

/* The events of one test (htbuild.h). */
static struct htb_events evs;

static void reset_trace(void)
{
	htb_ev_reset(&evs);
}

static void alloc(ht_id id, ht_id cls, uint64_t size)
{
	htb_ev_allocated(&evs, id, cls, size);
}

static void gc_start(uint32_t generations)
{
	htb_ev_gc_started(&evs, generations);
}

static void gc_end(void)
{
	htb_ev_gc_finished(&evs);
}

#define GENS(...) gens_of(HTB_ARRAY(unsigned, __VA_ARGS__))

static uint32_t gens_of(const unsigned *g, size_t n)
{
	uint32_t bits = 0;

	for (size_t i = 0; i < n; i++)
		bits |= 1u << g[i];
	return bits;
}

#define BOUNDS(...)                                                     \
	htb_ev_bounds(&evs, HTB_ARRAY(struct ht_generation_range, __VA_ARGS__))
#define MOVED(...)                                                      \
	htb_ev_moved(&evs, HTB_ARRAY(struct ht_moved_block, __VA_ARGS__))
#define SURVIVING(...)                                                  \
	htb_ev_surviving(&evs,                                        \
			 HTB_ARRAY(struct ht_surviving_block, __VA_ARGS__))

static void container(enum ht_container_type type)
{
	htb_ev_container(&evs, type, 0, 0);
}

static void dump_begin(void)
{
	container(HT_C_BEGIN);
	container(HT_C_HEAP);
}

static void dump_end(void)
{
	container(HT_C_END);
}

static struct ht_ev_object_references *object(ht_id id, ht_id cls,
					      uint64_t size)
{
	return htb_ev_object(&evs, id, cls, size, NULL, 0);
}

static void object_gen(ht_id id, ht_id cls, uint64_t size, unsigned gen)
{
	struct ht_ev_object_references *e = object(id, cls, size);

	e->has_generation = true;
	e->generation = gen;
}

static void abort_dump(void)
{
	object(0x9999, 1, 1)->result = HT_RESULT_ABORT;
}

/* ---- Replaying it ------------------------------------------------------- */

/* What the tracker said on the last run (reloc_reference.h). */
static struct rref_outcome got;

/* The relocation proof: on for the next runs when set; what it found. */
static bool proving;
#define MAX_FOUND 64
static struct reloc_inconsistency found[MAX_FOUND];
static size_t n_found;

static void note_inconsistency(void *ctx, const struct reloc_inconsistency *x)
{
	(void)ctx;
	if (n_found < MAX_FOUND)
		found[n_found] = *x;
	n_found++;
}

/* Replays the events of the trace in memory through a tracker that
 * watches every object (and the naive reference, if given). */
static void run_with(bool reports_survivors, struct rref_outcome *o,
		     struct rref_naive *naive)
{
	struct reloc_hooks hooks = rref_outcome_hooks(o);
	struct ht_replay_callbacks cb = rref_pair_callbacks();
	struct rref_pair p = {.naive = naive};
	struct replayer *r;

	memset(o, 0, sizeof(*o));
	n_found = 0;
	hooks.inconsistent = note_inconsistency;
	p.tracker = reloc_new(reports_survivors, &hooks);
	cr_assert_not_null(p.tracker);
	if (proving)
		reloc_prove(p.tracker);
	for (uint32_t i = 0; i < RREF_MAX_OBJECTS; i++)
		cr_assert_eq(reloc_watch_object(p.tracker, i), 0);
	r = replayer_new(&cb, &p);
	cr_assert_not_null(r);
	for (size_t i = 0; i < evs.n; i++)
		cr_assert_eq(replayer_feed(r, &evs.ev[i], NULL), 0,
			     "event %zu: %s", i, reloc_error(p.tracker));
	cr_assert_eq(replayer_finish(r, NULL), 0, "%s",
		     reloc_error(p.tracker));
	cr_assert_eq(reloc_finish(p.tracker), 0, "%s",
		     reloc_error(p.tracker));
	if (naive)
		rref_naive_finish(naive);
	reloc_get_totals(p.tracker, &o->totals);
	o->violations = p.violations;
	replayer_free(r);
	reloc_free(p.tracker);
	cr_assert_str_empty(o->problem, "%s", o->problem);
	cr_assert_not(o->too_big, "the test's trace is past the bounds of "
		      "reloc_reference.h");
}

static void run(bool reports_survivors)
{
	run_with(reports_survivors, &got, NULL);
}

static void run_clean(bool reports_survivors)
{
	run(reports_survivors);
	cr_assert_eq(got.violations, 0, "the test's trace breaks the protocol");
}

/* ---- Assertions ---------------------------------------------------------- */

static void assert_alive(uint32_t object, ht_id id)
{
	const struct rref_fate *f = &got.fate[object];

	cr_assert(f->known, "object %u has no end", object);
	cr_assert_eq(f->end, RELOC_END, "object %u ended by %d (cause %d)",
		     object, f->end, f->cause);
	cr_assert_eq(f->id, id, "object %u is at 0x%llx, not 0x%llx", object,
		     (unsigned long long)f->id, (unsigned long long)id);
}

static void assert_alive_gen(uint32_t object, ht_id id, unsigned gen)
{
	assert_alive(object, id);
	cr_assert_eq(got.fate[object].generation, gen,
		     "object %u is of generation %u, not %u", object,
		     got.fate[object].generation, gen);
}

static void assert_died(uint32_t object, enum reloc_cause cause)
{
	const struct rref_fate *f = &got.fate[object];

	cr_assert(f->known, "object %u has no end", object);
	cr_assert_eq(f->end, RELOC_DIED, "object %u did not die (%d)",
		     object, f->end);
	cr_assert_eq(f->cause, cause, "object %u died of %d, not %d", object,
		     f->cause, cause);
}

static void assert_lost(uint32_t object, enum reloc_cause cause,
			uint32_t other)
{
	const struct rref_fate *f = &got.fate[object];

	cr_assert(f->known, "object %u has no end", object);
	cr_assert_eq(f->end, RELOC_LOST, "object %u was not lost (%d)",
		     object, f->end);
	cr_assert_eq(f->cause, cause);
	cr_assert_eq(f->other, other);
}

/* The steps of one object, by kind, in order. */
static size_t steps_of(uint32_t object, enum reloc_step_kind *kinds,
		       size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < got.n_steps && n < max; i++)
		if (got.steps[i].object == object)
			kinds[n++] = got.steps[i].kind;
	return n;
}

/* ---- The seed's worked example ------------------------------------------- */

enum { A, GAP, B, C, DEAD13, D, E, F, G, DEAD19 };

/* The ten objects of the seed's figure, each ending where the next
 * begins; generation 0's bounds cover them. */
static void seed_objects(bool with_bounds)
{
	if (with_bounds)
		BOUNDS({0, 0x08, 0x12, 0x1000});
	alloc(0x08, 1, 1);
	alloc(0x09, 3, 7);
	alloc(0x10, 2, 2);
	alloc(0x12, 1, 1);
	alloc(0x13, 2, 2);
	alloc(0x15, 1, 1);
	alloc(0x16, 1, 1);
	alloc(0x17, 1, 1);
	alloc(0x18, 1, 1);
	alloc(0x19, 1, 1);
}

static void seed_gc(uint64_t length_at_10, bool with_bounds)
{
	seed_objects(with_bounds);
	gc_start(GENS(0));
	if (with_bounds)
		BOUNDS({0, 0x08, 0x12, 0x1000});
	MOVED({0x08, 0x07, 1}, {0x10, 0x08, length_at_10}, {0x15, 0x11, 4});
	if (with_bounds)
		BOUNDS({0, 0x15, 0, 0x1000}, {1, 0x07, 0x0e, 0x1000});
	gc_end();
}

Test(seed, formula_lengths)
{
	seed_gc(3, true);
	run_clean(true);
	assert_alive_gen(A, 0x07, 1);
	assert_alive_gen(B, 0x08, 1);
	assert_alive_gen(C, 0x0a, 1);
	assert_alive_gen(D, 0x11, 1);
	assert_alive_gen(E, 0x12, 1);
	assert_alive_gen(F, 0x13, 1);
	assert_alive_gen(G, 0x14, 1);
	assert_died(GAP, RELOC_DIED_BOUNDS);
	assert_died(DEAD13, RELOC_DIED_BOUNDS);
	assert_died(DEAD19, RELOC_DIED_BOUNDS);
	cr_assert_eq(got.gc[0].moved_objects, 7);
	cr_assert_eq(got.gc[0].moved_bytes, 8);
	cr_assert_eq(got.gc[0].died_objects, 3);
	cr_assert_eq(got.gc[0].died_bytes, 10);
	cr_assert_eq(got.gc[0].promoted_objects, 7);
	cr_assert_eq(got.gc[0].survived_objects, 0);
	cr_assert_eq(got.gc[0].kept_objects, 0);
	cr_assert_eq(got.gc[0].lost_objects, 0);
	cr_assert_eq(got.gc[0].bounds, RELOC_BOUNDS_START);
	cr_assert_eq(got.totals.objects, 10);
	cr_assert_eq(got.totals.alive, 7);
	cr_assert_eq(got.totals.died, 3);
}

/* The table's lengths: the block at 0x10 leaves 0x12 out, and the bounds
 * then prove it dead, though the runtime moved it. */
Test(seed, table_lengths_kill_0x12)
{
	seed_gc(2, true);
	run_clean(true);
	assert_alive(B, 0x08);
	assert_died(C, RELOC_DIED_BOUNDS);
	assert_alive(E, 0x12);
	cr_assert_eq(got.gc[0].moved_objects, 6);
	cr_assert_eq(got.gc[0].died_objects, 4);
	cr_assert_eq(got.gc[0].died_bytes, 11);
}

/* Without bounds nothing proves 0x12 dead: it keeps its id, until the
 * object moving from 0x16 lands there and takes it. */
Test(seed, table_lengths_without_bounds)
{
	enum reloc_step_kind k[8];

	seed_gc(2, false);
	run_clean(true);
	cr_assert_eq(steps_of(C, k, 8), 3);
	cr_assert_eq(k[0], RELOC_ALLOCATED);
	cr_assert_eq(k[1], RELOC_KEPT);
	cr_assert_eq(k[2], RELOC_LOST);
	assert_lost(C, RELOC_LOST_BLOCK, E);
	assert_lost(DEAD13, RELOC_LOST_BLOCK, F);
	assert_alive(GAP, 0x09);
	assert_alive(DEAD19, 0x19);
	cr_assert_eq(got.gc[0].kept_objects, 4);
	cr_assert_eq(got.gc[0].lost_objects, 2);
	cr_assert_eq(got.gc[0].died_objects, 0);
	cr_assert_eq(got.gc[0].bounds, RELOC_BOUNDS_NONE);
}

/* An id reused: 0x08 is A before the GC and B after it. */
Test(seed, reused_id)
{
	seed_gc(3, true);
	run_clean(true);
	cr_assert_eq(got.fate[A].id, 0x07);
	cr_assert_eq(got.fate[B].id, 0x08);
	cr_assert_eq(got.gc[0].lost_objects, 0);
}

/* ---- Blocks -------------------------------------------------------------- */

/* The seed's blocks split over three events, in reverse order, with the
 * dead objects' neighbours as surviving blocks of length 0. */
Test(blocks, split_and_unordered)
{
	seed_objects(true);
	gc_start(GENS(0));
	BOUNDS({0, 0x08, 0x12, 0x1000});
	MOVED({0x15, 0x11, 4});
	SURVIVING({0x09, 0});
	MOVED({0x10, 0x08, 3});
	MOVED({0x08, 0x07, 1});
	gc_end();
	run_clean(true);
	assert_alive(A, 0x07);
	assert_alive(B, 0x08);
	assert_alive(C, 0x0a);
	assert_alive(G, 0x14);
	assert_died(GAP, RELOC_DIED_BOUNDS);
	cr_assert_eq(got.gc[0].moved_objects, 7);
}

/* Blocks that touch: the id at the seam belongs to the second. */
Test(blocks, adjacent)
{
	alloc(0x100, 1, 8);
	alloc(0x108, 1, 8);
	alloc(0x110, 1, 8);
	gc_start(GENS(0));
	MOVED({0x100, 0x500, 0x10}, {0x110, 0x400, 0x8});
	gc_end();
	run_clean(true);
	assert_alive(0, 0x500);
	assert_alive(1, 0x508);
	assert_alive(2, 0x400);
}

/* Overlapping blocks: the one that starts first keeps what they share;
 * at the same start, the one reported first. */
Test(blocks, overlapping)
{
	alloc(0x100, 1, 8);
	alloc(0x110, 1, 8);
	alloc(0x120, 1, 8);
	alloc(0x200, 1, 8);
	gc_start(GENS(0));
	MOVED({0x110, 0x900, 0x20}, {0x100, 0x500, 0x18});
	MOVED({0x200, 0x700, 8});
	SURVIVING({0x200, 8});
	gc_end();
	run_clean(true);
	assert_alive(0, 0x500);
	assert_alive(1, 0x510);       /* both cover 0x110: 0x100's wins */
	assert_alive(2, 0x910);       /* only 0x110's covers 0x120 */
	assert_alive(3, 0x700);       /* same start: the first reported */
}

/* A runtime that reports single objects moving: blocks of length 1. */
Test(blocks, single_objects)
{
	alloc(0x100, 1, 24);
	alloc(0x118, 1, 24);
	alloc(0x130, 1, 24);
	gc_start(GENS(0, 1, 2));
	MOVED({0x130, 0x100, 1}, {0x100, 0x118, 1}, {0x118, 0x130, 1});
	gc_end();
	run_clean(true);
	assert_alive(0, 0x118);
	assert_alive(1, 0x130);
	assert_alive(2, 0x100);
	cr_assert_eq(got.gc[0].lost_objects, 0);
	cr_assert_eq(got.gc[0].moved_objects, 3);
}

/* A moved block that does not move, as MovedReferences reports objects
 * that stayed: survived in place. */
Test(blocks, moved_in_place_survives)
{
	alloc(0x100, 1, 8);
	gc_start(GENS(0));
	MOVED({0x100, 0x100, 8});
	gc_end();
	run_clean(true);
	assert_alive(0, 0x100);
	cr_assert_eq(got.gc[0].survived_objects, 1);
	cr_assert_eq(got.gc[0].moved_objects, 0);
}

/* A block that reaches past the end of the id space is clipped there. */
Test(blocks, overflowing_length)
{
	alloc(UINT64_MAX - 15, 1, 8);
	gc_start(GENS(0));
	MOVED({UINT64_MAX - 31, 0x1000, UINT64_MAX});
	gc_end();
	run_clean(true);
	assert_alive(0, 0x1010);
}

/* ---- Generations --------------------------------------------------------- */

/* Generation 2, by the bounds: a gen-0 GC leaves it alone even under a
 * block, and its bounds prove nothing. */
Test(generations, not_collected_untouched)
{
	BOUNDS({0, 0x1000, 0x1000, 0}, {2, 0x8000, 0x1000, 0});
	alloc(0x1000, 1, 8);
	alloc(0x8000, 1, 8);
	alloc(0x8010, 1, 8);
	gc_start(GENS(0));
	MOVED({0x1000, 0x2000, 8}, {0x8000, 0x9000, 8});
	gc_end();
	run_clean(true);
	assert_alive(0, 0x2000);
	assert_alive_gen(1, 0x8000, 2);
	assert_alive_gen(2, 0x8010, 2);
	cr_assert_eq(got.gc[0].untouched_objects, 2);
	cr_assert_eq(got.gc[0].moved_objects, 1);
	cr_assert_eq(got.gc[0].died_objects, 0);
	cr_assert_eq(got.gc[0].bounds, RELOC_BOUNDS_BEFORE);
}

/* Generation known only from a dump: still left alone. */
Test(generations, from_dump_not_collected)
{
	dump_begin();
	object_gen(0x500, 1, 8, 2);
	object_gen(0x600, 1, 8, 0);
	dump_end();
	gc_start(GENS(0));
	MOVED({0x500, 0x700, 8}, {0x600, 0x800, 8});
	gc_end();
	run_clean(true);
	assert_alive_gen(0, 0x500, 2);
	assert_alive(1, 0x800);
}

/* Promotion: the bounds at the finish put survivors in generation 1;
 * the large object heap is not a promotion. */
Test(generations, promoted_by_finish_bounds)
{
	BOUNDS({0, 0x1000, 0x1000, 0}, {3, 0x9000, 0x1000, 0});
	alloc(0x1000, 1, 8);
	alloc(0x1008, 1, 8);
	alloc(0x9000, 1, 100000);
	gc_start(GENS(0, 1, 2, 3));
	BOUNDS({0, 0x1000, 0x1000, 0}, {3, 0x9000, 0x1000, 0});
	MOVED({0x1000, 0x3000, 0x10});
	SURVIVING({0x9000, 0x1000});
	BOUNDS({1, 0x3000, 0x10, 0}, {0, 0x1000, 0, 0},
	       {3, 0x9000, 0x1000, 0});
	gc_end();
	run_clean(true);
	assert_alive_gen(0, 0x3000, 1);
	assert_alive_gen(1, 0x3008, 1);
	assert_alive_gen(2, 0x9000, 3);
	cr_assert_eq(got.gc[0].promoted_objects, 2);
	cr_assert_eq(got.gc[0].promoted_bytes, 16);
	cr_assert_eq(got.gc[0].survived_objects, 1);
}

/* The GC's own references tell a generation too, and a promotion that
 * both they and the finishing bounds tell counts once. */
Test(generations, promoted_by_gc_references)
{
	BOUNDS({0, 0x1000, 0x1000, 0});
	alloc(0x1000, 1, 8);
	alloc(0x1008, 1, 8);
	gc_start(GENS(0));
	MOVED({0x1000, 0x3000, 0x10});
	object_gen(0x3000, 1, 8, 1);
	object_gen(0x3008, 1, 8, 1);
	BOUNDS({1, 0x3008, 0x8, 0});
	gc_end();
	run_clean(true);
	assert_alive_gen(0, 0x3000, 1);
	assert_alive_gen(1, 0x3008, 1);
	cr_assert_eq(got.gc[0].promoted_objects, 2);
	cr_assert_eq(got.gc[0].promoted_bytes, 16);
	cr_assert_eq(got.gc_reports[0], 1);
}

/* ---- Deaths -------------------------------------------------------------- */

/* (a): bounds at the start win over those before; an object outside
 * every range keeps its id. */
Test(deaths, by_bounds_at_start)
{
	BOUNDS({0, 0x1000, 0x10, 0});
	alloc(0x1000, 1, 8);
	alloc(0x1100, 1, 8);
	alloc(0x5000, 1, 8);
	gc_start(GENS(0));
	BOUNDS({0, 0x1000, 0x200, 0});
	gc_end();
	run_clean(true);
	assert_died(0, RELOC_DIED_BOUNDS);
	assert_died(1, RELOC_DIED_BOUNDS);
	assert_alive(2, 0x5000);
	cr_assert_eq(got.gc[0].kept_objects, 1);
	cr_assert_eq(got.gc[0].bounds, RELOC_BOUNDS_START);
}

/* (a) with the last bounds before the GC when none come at its start. */
Test(deaths, by_bounds_before)
{
	BOUNDS({0, 0x1000, 0x10, 0});
	alloc(0x1000, 1, 8);
	alloc(0x1100, 1, 8);
	gc_start(GENS(0));
	MOVED({0x2000, 0x3000, 8});
	BOUNDS({0, 0x1000, 0x200, 0});
	gc_end();
	run_clean(true);
	assert_died(0, RELOC_DIED_BOUNDS);
	assert_alive(1, 0x1100);
	cr_assert_eq(got.gc[0].bounds, RELOC_BOUNDS_BEFORE);
}

/* (a) and (b) need a runtime that reports every survivor. */
Test(deaths, none_without_reported_survivors)
{
	BOUNDS({0, 0x1000, 0x100, 0});
	alloc(0x1000, 1, 8);
	gc_start(GENS(0, 1, 2));
	gc_end();
	gc_start(GENS(0, 1, 2));
	gc_end();
	run_clean(false);
	assert_alive(0, 0x1000);
	cr_assert_eq(got.gc[0].kept_objects, 1);
	cr_assert_eq(got.gc[1].kept_objects, 1);
}

/* (b): no bounds, a GC of every generation the trace has shown. */
Test(deaths, by_full_gc)
{
	alloc(0x1000, 1, 8);
	alloc(0x2000, 1, 8);
	gc_start(GENS(0, 1));
	gc_end();
	gc_start(GENS(0, 1, 2));
	MOVED({0x2000, 0x3000, 8});
	gc_end();
	run_clean(true);
	cr_assert_eq(got.gc[0].kept_objects, 2);
	assert_died(0, RELOC_DIED_FULL_GC);
	assert_alive(1, 0x3000);
}

/* (b) is not full when the trace has shown a generation the GC spares. */
Test(deaths, not_full_when_loh_shown)
{
	dump_begin();
	object_gen(0x9000, 1, 100000, 3);
	dump_end();
	alloc(0x1000, 1, 8);
	gc_start(GENS(0, 1, 2));
	gc_end();
	run_clean(true);
	assert_alive(1, 0x1000);
	assert_alive(0, 0x9000);
	cr_assert_eq(got.gc[0].untouched_objects, 1);
}

/* (c): a complete dump that lacks an object. */
Test(deaths, absent_from_complete_dump)
{
	alloc(0x1000, 1, 8);
	alloc(0x2000, 1, 8);
	gc_start(GENS(0));
	MOVED({0x1000, 0x1100, 8});
	gc_end();
	gc_start(GENS(0));
	gc_end();
	dump_begin();
	object(0x1100, 1, 8);
	dump_end();
	run_clean(true);
	assert_alive(0, 0x1100);
	assert_died(1, RELOC_DIED_ABSENT);
	cr_assert_eq(got.fate[1].alive_gc, -1);
	cr_assert_eq(got.dump[0].sum.died_objects, 1);
	cr_assert_eq(got.dump[0].sum.died_bytes, 8);
	cr_assert(got.dump[0].sum.complete);
}

/* (c) says after which GC the object was last known alive. */
Test(deaths, absent_after_last_sighting)
{
	alloc(0x1000, 1, 8);
	gc_start(GENS(0));
	SURVIVING({0x1000, 8});
	gc_end();
	gc_start(GENS(0));
	gc_end();
	dump_begin();
	dump_end();
	run_clean(true);
	assert_died(0, RELOC_DIED_ABSENT);
	cr_assert_eq(got.fate[0].alive_gc, 0);
}

/* An aborted dump, and one the trace ends inside, prove nothing. */
Test(deaths, not_by_incomplete_dumps)
{
	alloc(0x1000, 1, 8);
	dump_begin();
	abort_dump();
	dump_end();
	dump_begin();
	run(true);
	assert_alive(0, 0x1000);
	cr_assert_not(got.dump[0].sum.complete);
	cr_assert_not(got.dump[1].sum.complete);
	cr_assert_eq(got.dump[0].sum.died_objects, 0);
}

/* A GC's references are a complete dump. */
Test(deaths, absent_from_gc_references)
{
	alloc(0x1000, 1, 8);
	alloc(0x2000, 1, 8);
	gc_start(GENS(0));
	MOVED({0x1000, 0x1100, 8});
	object(0x1100, 1, 8);
	gc_end();
	run_clean(true);
	assert_alive(0, 0x1100);
	assert_died(1, RELOC_DIED_ABSENT);
	cr_assert(got.dump[0].sum.gc_dump);
	cr_assert(got.dump[0].sum.complete);
}

/* A GC that never finishes may lack blocks: no death, even in bounds. */
Test(deaths, never_in_unfinished_gc)
{
	BOUNDS({0, 0x1000, 0x100, 0});
	alloc(0x1000, 1, 8);
	alloc(0x1010, 1, 8);
	gc_start(GENS(0));
	MOVED({0x1010, 0x1008, 8});
	gc_start(GENS(0, 1, 2));
	run(true);
	assert_alive(0, 0x1000);
	assert_alive(1, 0x1008);
	cr_assert_not(got.gc[0].finished);
	cr_assert_not(got.gc[1].finished);
	cr_assert_eq(got.gc[0].kept_objects, 1);
	cr_assert_eq(got.totals.died, 0);
}

/* A dump may report its objects in any order (a walk from the roots),
 * with ids anywhere in the address space: they are matched with the
 * tracked ones in id order whatever their order and spread (here five
 * digits of the radix sort, and ids that differ only in the highest), so
 * a second complete dump of the same objects in the reverse order sees
 * every one again, none new, none dead. */
Test(deaths, none_when_dumps_list_objects_in_other_orders)
{
	static const ht_id ids[] = {
		0x7ff0000000a8, 0x1000, 0x10000000000, 0x88, 0x400000000040,
		0x1008, 0x7ff000000000, 0x40, 0x2000000040, 0xfff8,
		0x200000000040, 0x10000, 0x3fffffffff8, 0x1010, 0x48, 0x800,
	};
	const size_t n = ARRAY_SIZE(ids);

	dump_begin();
	for (size_t i = 0; i < n; i++)
		object(ids[i], 1, 8);
	dump_end();
	dump_begin();
	for (size_t i = n; i-- > 0;)
		object(ids[i], 1, 8);
	dump_end();
	run_clean(true);
	cr_assert_eq(got.dump[0].sum.new_objects, n);
	cr_assert_eq(got.dump[1].sum.objects, n);
	cr_assert_eq(got.dump[1].sum.new_objects, 0);
	cr_assert_eq(got.dump[1].sum.died_objects, 0);
	cr_assert_eq(got.dump[1].sum.lost_objects, 0);
	cr_assert_eq(got.totals.objects, n);
}

/* Outside bounds and without a full GC, objects keep their ids GC after
 * GC, and only a dump proves them gone. */
Test(deaths, never_otherwise)
{
	BOUNDS({0, 0x1000, 0x100, 0});
	alloc(0x5000, 1, 8);
	for (int i = 0; i < 5; i++) {
		gc_start(GENS(0, 1));
		MOVED({0x1000, 0x2000, 8});
		gc_end();
	}
	run_clean(true);
	assert_alive(0, 0x5000);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(got.gc[i].kept_objects, 1);
}

/* ---- Lost objects -------------------------------------------------------- */

/* A kept object and a moved one at one id: the kept one is lost. */
Test(lost, to_a_block)
{
	alloc(0x1000, 1, 8);
	alloc(0x2000, 1, 8);
	gc_start(GENS(0));
	MOVED({0x2000, 0x1000, 8});
	gc_end();
	run_clean(true);
	assert_lost(0, RELOC_LOST_BLOCK, 1);
	assert_alive(1, 0x1000);
	cr_assert_eq(got.gc[0].lost_objects, 1);
	cr_assert_eq(got.totals.died, 0);
}

/* Two moved onto one id (no sound runtime does it): the older is lost. */
Test(lost, between_blocks)
{
	alloc(0x1000, 1, 8);
	alloc(0x2000, 1, 8);
	gc_start(GENS(0));
	MOVED({0x1000, 0x3000, 8}, {0x2000, 0x3000, 8});
	gc_end();
	run_clean(true);
	assert_lost(0, RELOC_LOST_BLOCK, 1);
	assert_alive(1, 0x3000);
}

/* An allocation at a tracked id: the old object is lost, not dead. */
Test(lost, to_an_allocation)
{
	alloc(0x1000, 1, 8);
	gc_start(GENS(0));
	gc_end();
	alloc(0x1000, 2, 16);
	gc_start(GENS(0));
	gc_end();
	run_clean(true);
	assert_lost(0, RELOC_LOST_ALLOCATION, 1);
	assert_alive(1, 0x1000);
	cr_assert_eq(got.totals.lost, 1);
}

/* A dump shows another class at a tracked id. */
Test(lost, to_a_dump)
{
	alloc(0x1000, 1, 8);
	alloc(0x2000, 1, 8);
	dump_begin();
	object(0x1000, 2, 8);
	object(0x2000, 0, 0);
	dump_end();
	run_clean(true);
	assert_lost(0, RELOC_LOST_DUMP, 2);
	assert_alive(1, 0x2000);
	assert_alive(2, 0x1000);
	cr_assert_eq(got.dump[0].sum.lost_objects, 1);
	cr_assert_eq(got.dump[0].sum.new_objects, 1);
}

/* ---- Dumps and ages ------------------------------------------------------ */

/* Objects first seen in dumps are tracked from there; ages count the
 * GCs survived while tracked, a GC's references counting their GC. */
Test(dumps, ages)
{
	alloc(0x1000, 1, 8);
	gc_start(GENS(0));
	SURVIVING({0x1000, 8});
	gc_end();
	dump_begin();
	object(0x1000, 1, 8);
	object(0x4000, 1, 16);
	dump_end();
	gc_start(GENS(0));
	SURVIVING({0x1000, 8}, {0x4000, 16});
	object(0x1000, 1, 8);
	object(0x4000, 1, 16);
	object(0x5000, 1, 32);
	gc_end();
	run_clean(true);
	cr_assert_eq(got.dump[0].sum.n_ages, 2);
	cr_assert_eq(got.dump[0].ages[0].gcs, 0);
	cr_assert_eq(got.dump[0].ages[0].bytes, 16);
	cr_assert_eq(got.dump[0].ages[1].gcs, 1);
	cr_assert_eq(got.dump[1].sum.n_ages, 2);
	cr_assert_eq(got.dump[1].ages[0].gcs, 1);
	cr_assert_eq(got.dump[1].ages[0].count, 2);
	cr_assert_eq(got.dump[1].ages[0].bytes, 48);
	cr_assert_eq(got.dump[1].ages[1].gcs, 2);
	cr_assert_eq(got.dump[1].sum.new_objects, 1);
	cr_assert_eq(got.dump[1].sum.objects, 3);
}

/* Parts of one object and objects reported twice count once. */
Test(dumps, continuations_and_duplicates)
{
	dump_begin();
	object(0x1000, 1, 8)->flags = HT_OBJ_MORE_REFERENCES;
	object(0x1000, 1, 8);
	object(0x2000, 1, 8);
	object(0x2000, 1, 8);
	dump_end();
	run_clean(true);
	cr_assert_eq(got.dump[0].sum.objects, 2);
	cr_assert_eq(got.totals.objects, 2);
}

/* ---- Watching by id ------------------------------------------------------ */

static ht_id watched_ids[64];
static uint32_t watched_objects[64];
static size_t n_watched;

static void note_watched(void *ctx, const struct reloc_step *s)
{
	(void)ctx;
	if (n_watched < 64) {
		watched_objects[n_watched] = s->object;
		watched_ids[n_watched++] = s->to;
	}
}

Test(watch, by_id)
{
	struct reloc_hooks hooks = {.step = note_watched};
	struct ht_replay_callbacks cb = {0};
	struct reloc *t = reloc_new(true, &hooks);
	struct replayer *r;

	seed_gc(3, true);
	reloc_watch_id(t, 0x08);
	reloc_callbacks(&cb);
	r = replayer_new(&cb, t);
	for (size_t i = 0; i < evs.n; i++)
		cr_assert_eq(replayer_feed(r, &evs.ev[i], NULL), 0);
	replayer_finish(r, NULL);
	cr_assert_eq(reloc_finish(t), 0);
	replayer_free(r);
	reloc_free(t);
	/* A from its allocation at 0x08, B from its move to 0x08; then
	 * their promotions, and their ends in id order */
	cr_assert_eq(n_watched, 7);
	cr_assert_eq(watched_objects[0], A);
	cr_assert_eq(watched_ids[0], 0x08);
	cr_assert_eq(watched_objects[1], A);
	cr_assert_eq(watched_ids[1], 0x07);
	cr_assert_eq(watched_objects[2], B);
	cr_assert_eq(watched_ids[2], 0x08);
	for (size_t i = 3; i < 7; i++)
		cr_assert(watched_objects[i] == A || watched_objects[i] == B);
}

/* ---- The relocation proof ------------------------------------------------ */

static void run_proof(bool reports_survivors)
{
	proving = true;
	run_clean(reports_survivors);
	proving = false;
}

static void assert_found(size_t k, enum reloc_inconsistency_kind kind,
			 int64_t gc, ht_id old_id, ht_id predicted_id)
{
	const struct reloc_inconsistency *x = &found[k];

	cr_assert_lt(k, n_found, "only %zu inconsistencies", n_found);
	cr_assert_eq(x->kind, kind, "inconsistency %zu is of kind %d", k,
		     x->kind);
	cr_assert_eq(x->gc, gc, "inconsistency %zu: GC %lld, not %lld", k,
		     (long long)x->gc, (long long)gc);
	cr_assert_eq(x->old_id, old_id, "inconsistency %zu: old id 0x%llx",
		     k, (unsigned long long)x->old_id);
	cr_assert_eq(x->predicted_id, predicted_id,
		     "inconsistency %zu: predicted id 0x%llx", k,
		     (unsigned long long)x->predicted_id);
}

/* The seed's GC with its formula's lengths and its own references as
 * the runtime would give them: every survivor where the blocks put it. */
Test(proof, seed_consistent)
{
	seed_objects(true);
	gc_start(GENS(0));
	BOUNDS({0, 0x08, 0x12, 0x1000});
	MOVED({0x08, 0x07, 1}, {0x10, 0x08, 3}, {0x15, 0x11, 4});
	object(0x07, 1, 1);
	object(0x08, 2, 2);
	object(0x0a, 1, 1);
	for (ht_id id = 0x11; id <= 0x14; id++)
		object(id, 1, 1);
	gc_end();
	run_proof(true);
	cr_assert_eq(n_found, 0);
	assert_died(DEAD13, RELOC_DIED_BOUNDS);
}

/* Its own references showing another class where a block put A. */
Test(proof, displaced_in_gc_references)
{
	alloc(0x100, 1, 16);
	gc_start(GENS(0));
	MOVED({0x100, 0x10, 0x10});
	object(0x10, 2, 16);
	gc_end();
	run_proof(true);
	cr_assert_eq(n_found, 1);
	assert_found(0, RELOC_INCONSISTENT_DISPLACED, 0, 0x100, 0x10);
	cr_assert_eq(found[0].class_id, 1);
	cr_assert_eq(found[0].found_class, 2);
	cr_assert_eq(found[0].size, 16);
	cr_assert_eq(found[0].found_size, 16);
	cr_assert_eq(found[0].dump, 0);
}

/* A generation the GC does not collect keeps what a block put there: a
 * later dump with another size there contradicts the move. */
Test(proof, wrong_size_after_an_untouching_gc)
{
	alloc(0x120, 1, 16);
	gc_start(GENS(0));
	MOVED({0x120, 0x20, 0x10});
	BOUNDS({0, 0x200, 0x100, 0}, {1, 0x10, 0x1f0, 0});
	gc_end();
	gc_start(GENS(0));
	gc_end();
	dump_begin();
	object(0x20, 1, 24);
	dump_end();
	run_proof(true);
	cr_assert_eq(n_found, 1);
	assert_found(0, RELOC_INCONSISTENT_DISPLACED, 0, 0x120, 0x20);
	cr_assert_eq(found[0].found_size, 24);
}

/* A survivor the GC's own references lack; an object allocated after it
 * and absent from the next dump is no contradiction (it may have died). */
Test(proof, missing_from_gc_references_only)
{
	alloc(0x100, 1, 16);
	alloc(0x110, 2, 16);
	gc_start(GENS(0));
	MOVED({0x100, 0x10, 0x10});
	SURVIVING({0x110, 0x10});
	object(0x10, 1, 16);
	gc_end();
	alloc(0x300, 2, 24);
	dump_begin();
	object(0x10, 1, 16);
	dump_end();
	run_proof(true);
	cr_assert_eq(n_found, 1);
	assert_found(0, RELOC_INCONSISTENT_MISSING, 0, 0x110, 0x110);
	cr_assert_eq(found[0].dump, 0);
}

/* Proven dead by the bounds, still in the GC's own references; the same
 * with a block landing there is the object that moved in. */
Test(proof, dead_present_unless_a_block_lands)
{
	alloc(0x100, 1, 16);
	alloc(0x130, 2, 16);
	alloc(0x140, 1, 16);
	gc_start(GENS(0));
	BOUNDS({0, 0x100, 0x100, 0});
	MOVED({0x100, 0x10, 0x10});
	object(0x10, 1, 16);
	object(0x130, 2, 16);
	gc_end();
	run_proof(true);
	cr_assert_eq(n_found, 1);
	assert_found(0, RELOC_INCONSISTENT_DEAD_PRESENT, 0, 0x130, 0x130);
	cr_assert_eq(found[0].cause, RELOC_DIED_BOUNDS);

	reset_trace();
	alloc(0x130, 2, 16);
	alloc(0x140, 1, 16);
	gc_start(GENS(0));
	BOUNDS({0, 0x100, 0x100, 0});
	MOVED({0x140, 0x130, 0x10});
	object(0x130, 1, 16);
	gc_end();
	run_proof(true);
	cr_assert_eq(n_found, 0);
}

/* Without bounds, a full GC proves deaths (rule (b)): the same holds. */
Test(proof, dead_present_after_a_full_gc)
{
	alloc(0x100, 1, 16);
	gc_start(GENS(0, 1, 2));
	object(0x100, 1, 16);
	gc_end();
	run_proof(true);
	cr_assert_eq(n_found, 1);
	assert_found(0, RELOC_INCONSISTENT_DEAD_PRESENT, 0, 0x100, 0x100);
	cr_assert_eq(found[0].cause, RELOC_DIED_FULL_GC);
}

/* Kept without proof (a runtime that does not report survivors), lost,
 * or never tracked: anything may be there, or nothing. */
Test(proof, nothing_claimed_without_proof)
{
	alloc(0x100, 1, 16);
	alloc(0x110, 1, 16);
	alloc(0x120, 1, 16);
	gc_start(GENS(0, 1));
	MOVED({0x100, 0x10, 1});
	object(0x10, 1, 16);
	object(0x110, 2, 32);
	object(0x50, 2, 8);
	gc_end();
	gc_start(GENS(0, 1));
	object(0x10, 2, 16);
	gc_end();
	run_proof(false);
	cr_assert_eq(n_found, 0);
}

/* A GC that keeps an object without proof may have freed its place, and
 * an object the trace never showed may take it (moved there from an
 * untracked id, as Mono promotes nursery objects into freed slots of its
 * old generation, or allocated unrecorded): a later block at that id
 * carries that object, so it places nothing, and another class or size
 * there in a dump is no contradiction. The same block over an object
 * still placed does place it, and the other class is one. */
Test(proof, a_block_does_not_place_what_was_kept)
{
	for (int kept = 1; kept >= 0; kept--) {
		reset_trace();
		BOUNDS({0, 0x1000, 0x100, 0}, {1, 0, 0x1000, 0});
		alloc(0x100, 1, 16);
		gc_start(GENS(0, 1));
		BOUNDS({0, 0x1000, 0x100, 0});
		if (!kept)
			SURVIVING({0x100, 1});
		gc_end();
		gc_start(GENS(0));
		BOUNDS({0, 0x1000, 0x100, 0});
		MOVED({0x1000, 0x100, 1});
		gc_end();
		gc_start(GENS(0, 1));
		BOUNDS({0, 0x1000, 0x100, 0});
		SURVIVING({0x100, 1});
		object(0x100, 2, 24);
		gc_end();
		run_proof(true);
		if (kept) {
			cr_assert_eq(got.gc[0].kept_objects, 1);
			cr_assert_eq(n_found, 0);
			continue;
		}
		cr_assert_eq(n_found, 1);
		assert_found(0, RELOC_INCONSISTENT_DISPLACED, 2, 0x100, 0x100);
		cr_assert_eq(found[0].found_class, 2);
		cr_assert_eq(found[0].found_size, 24);
	}
}

/* A block says an object is at its id, whichever one it carried: the
 * GC's own references that lack the id contradict it, even where the
 * object the tracker had there was kept without proof. */
Test(proof, missing_whatever_the_block_carried)
{
	BOUNDS({0, 0x1000, 0x100, 0}, {1, 0, 0x1000, 0});
	alloc(0x100, 1, 16);
	gc_start(GENS(0, 1));
	BOUNDS({0, 0x1000, 0x100, 0});
	gc_end();
	gc_start(GENS(0, 1));
	BOUNDS({0, 0x1000, 0x100, 0});
	SURVIVING({0x100, 1});
	object(0x200, 2, 24);
	gc_end();
	run_proof(true);
	cr_assert_eq(got.gc[0].kept_objects, 1);
	cr_assert_eq(n_found, 1);
	assert_found(0, RELOC_INCONSISTENT_MISSING, 1, 0x100, 0x100);
}

/* Two dumps and no GC: the trace may not record its GCs, so another
 * object where one was proves nothing. */
Test(proof, nothing_claimed_without_gcs)
{
	dump_begin();
	object(0x10, 1, 16);
	dump_end();
	dump_begin();
	object(0x10, 2, 16);
	dump_end();
	run_proof(true);
	cr_assert_eq(n_found, 0);
}

/* An unfinished GC claims nothing, and unplaces what it kept. */
Test(proof, nothing_claimed_by_an_unfinished_gc)
{
	alloc(0x100, 1, 16);
	alloc(0x200, 1, 16);
	gc_start(GENS(0));
	BOUNDS({0, 0x100, 0x200, 0});
	MOVED({0x100, 0x10, 0x10});
	gc_start(GENS(0));
	gc_end();
	dump_begin();
	object(0x200, 2, 16);
	dump_end();
	proving = true;
	run(true); /* a GC begun inside another breaks the protocol */
	proving = false;
	cr_assert_eq(got.violations, 1);
	cr_assert_eq(n_found, 0);
}

/* ---- Random traces against the reference --------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? rng_state % n : 0;
}

#define SPACE 160 /* ids 8 .. 8 + SPACE */

static ht_id rid(void)
{
	return 8 + rnd(SPACE);
}

static void random_bounds(void)
{
	struct ht_generation_range r[4];
	size_t n = rnd(4);

	for (size_t i = 0; i < n; i++)
		r[i] = (struct ht_generation_range){
			(uint32_t)rnd(5), rid(), rnd(64), 0};
	htb_ev_bounds(&evs, r, n);
}

static void random_blocks(void)
{
	size_t events_n = 1 + rnd(3);

	for (size_t e = 0; e < events_n; e++) {
		struct ht_moved_block m[6];
		struct ht_surviving_block s[3];
		size_t nm = rnd(6), ns = rnd(3);

		for (size_t i = 0; i < nm; i++)
			m[i] = (struct ht_moved_block){
				rid(), rnd(4) ? rid() : 0, rnd(20)};
		for (size_t i = 0; i < ns; i++)
			s[i] = (struct ht_surviving_block){rid(), rnd(20)};
		if (rnd(2)) {
			htb_ev_moved(&evs, m, nm);
			htb_ev_surviving(&evs, s, ns);
		} else {
			htb_ev_surviving(&evs, s, ns);
			htb_ev_moved(&evs, m, nm);
		}
	}
}

static void random_sightings(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ht_ev_object_references *e =
			object(rid(), rnd(2) ? 0 : 1 + rnd(3),
			       rnd(2) ? 0 : 1 + rnd(4));

		if (rnd(3) == 0) {
			e->has_generation = true;
			e->generation = (uint32_t)rnd(5);
		}
	}
}

static void random_gc(void)
{
	gc_start((uint32_t)(rnd(4) ? (1u << (1 + rnd(3))) - 1 : rnd(32)));
	if (rnd(2))
		random_bounds();
	random_blocks();
	if (rnd(3) == 0)
		random_sightings(rnd(12));
	if (rnd(2))
		random_bounds();
	if (rnd(12))
		gc_end();
}

static void random_trace(void)
{
	size_t steps = 4 + rnd(10);

	reset_trace();
	if (rnd(2))
		random_bounds();
	for (size_t i = 0; i < steps; i++) {
		switch (rnd(5)) {
		case 0:
		case 1:
			for (size_t k = rnd(8); k > 0; k--)
				alloc(rid(), 1 + rnd(3), 1 + rnd(4));
			break;
		case 2:
		case 3:
			random_gc();
			break;
		default:
			dump_begin();
			random_sightings(rnd(24));
			if (rnd(8) == 0)
				abort_dump();
			if (rnd(10))
				dump_end();
			break;
		}
	}
}

/*
 * An honest heap, CLR style, for the proof: objects bump-allocated in
 * generation 0 at [GEN0, ...), which each GC of generation 0 empties,
 * moving its survivors to the top of generation 1 at [GEN1, ...) in
 * blocks of one object; a full GC also kills objects of generation 1
 * and slides the rest down, the ones that stay in surviving blocks.
 * Bounds at each GC's start and finish, its own references list every
 * live object, and dumps between GCs list some of them (as a walk from
 * the roots would, leaving out garbage not yet collected). Nothing in
 * such a trace contradicts the rules.
 */
#define GEN1 0x1000u
#define GEN0 0x100000u
#define HEAP_MAX 512

struct sim_object {
	ht_id id, cls;
	uint64_t size;
};

static struct sim_object heap[HEAP_MAX];
static size_t heap_n;
static ht_id gen0_top, gen1_top;

static void sim_bounds(void)
{
	BOUNDS({1, GEN1, gen1_top - GEN1, 0}, {0, GEN0, gen0_top - GEN0, 0});
}

static void sim_references(void)
{
	for (size_t i = 0; i < heap_n; i++)
		object(heap[i].id, heap[i].cls, heap[i].size);
}

/* One GC: of generation 0, or of both. heap[] stays in id order: the
 * objects of generation 1 first. */
static void sim_gc(bool full)
{
	size_t n = 0;
	ht_id top = GEN1;

	gc_start(full ? GENS(0, 1) : GENS(0, 1) & ~2u);
	sim_bounds();
	for (size_t i = 0; i < heap_n; i++) {
		struct sim_object o = heap[i];
		bool young = o.id >= GEN0;

		if ((young || full) && rnd(3) == 0)
			continue; /* dies */
		if (!young && !full) {
			top = o.id + o.size;
		} else if (o.id == top) {
			SURVIVING({o.id, o.size});
			top += o.size;
		} else {
			MOVED({o.id, top, o.size});
			o.id = top;
			top += o.size;
		}
		heap[n++] = o;
	}
	heap_n = n;
	gen1_top = top;
	gen0_top = GEN0;
	sim_references();
	sim_bounds();
	gc_end();
}

static void sim_allocate(void)
{
	struct sim_object o = {gen0_top, 1 + rnd(4), 8 * (1 + rnd(8))};

	if (heap_n == HEAP_MAX)
		return;
	heap[heap_n++] = o;
	gen0_top += o.size;
	alloc(o.id, o.cls, o.size);
}

static void sim_dump(void)
{
	dump_begin();
	for (size_t i = 0; i < heap_n; i++)
		if (rnd(5))
			object(heap[i].id, heap[i].cls, heap[i].size);
	dump_end();
}

static void honest_trace(void)
{
	reset_trace();
	heap_n = 0;
	gen0_top = GEN0;
	gen1_top = GEN1;
	sim_bounds();
	for (size_t step = 0, steps = 10 + rnd(30); step < steps; step++) {
		switch (rnd(6)) {
		case 0:
			sim_gc(rnd(3) == 0);
			break;
		case 1:
			sim_dump();
			break;
		default:
			for (size_t k = 1 + rnd(10); k > 0; k--)
				sim_allocate();
		}
	}
	sim_gc(false);
}

/* The GC references of the trace in memory: the last GC's objects. */
static struct ht_ev_object_references *last_gc_reference(void)
{
	for (size_t i = evs.n; i > 0; i--) {
		if (evs.ev[i - 1].type == HT_EV_GC_STARTED)
			return NULL;
		if (evs.ev[i - 1].type == HT_EV_OBJECT_REFERENCES)
			return &evs.ev[i - 1].u.object_references;
	}
	return NULL;
}

Test(proof, honest_heaps_are_consistent, .timeout = 120)
{
	uint64_t checked = 0, caught = 0, missing = 0;

	for (uint64_t seed = 1; seed <= 500; seed++) {
		struct ht_ev_object_references *e;

		rng_state = seed * 0x9e3779b97f4a7c15ULL;
		honest_trace();
		run_proof(true);
		cr_assert_eq(n_found, 0, "seed %llu: %zu inconsistencies, the "
			     "first of kind %d at 0x%llx",
			     (unsigned long long)seed, n_found, found[0].kind,
			     (unsigned long long)found[0].predicted_id);
		checked += got.totals.gcs;
		/* the same trace with the last object of the last GC's
		 * references of another class (even seeds) or moved by 4
		 * bytes, where no object is (odd seeds): caught when the rules
		 * placed it (displaced), or when that GC's block carried it
		 * (missing) */
		e = last_gc_reference();
		if (!e)
			continue;
		if (seed % 2) {
			ht_id was = e->id;

			e->id += 4;
			run_proof(true);
			cr_assert_leq(n_found, 1, "seed %llu",
				      (unsigned long long)seed);
			if (!n_found)
				continue;
			cr_assert_eq(found[0].kind, RELOC_INCONSISTENT_MISSING);
			cr_assert_eq(found[0].predicted_id, was);
			cr_assert_eq(found[0].gc, (int64_t)got.totals.gcs - 1);
			missing++;
			continue;
		}
		e->class_id += 100;
		run_proof(true);
		cr_assert_leq(n_found, 1, "seed %llu",
			      (unsigned long long)seed);
		if (n_found) {
			cr_assert_eq(found[0].kind,
				     RELOC_INCONSISTENT_DISPLACED);
			cr_assert_eq(found[0].predicted_id, e->id);
			cr_assert_eq(found[0].found_class, e->class_id);
			caught++;
		}
	}
	cr_assert_gt(checked, 2000, "only %llu GCs",
		     (unsigned long long)checked);
	cr_assert_gt(caught, 200, "only %llu of 250 changed classes caught",
		     (unsigned long long)caught);
	cr_assert_gt(missing, 150, "only %llu of 250 moved objects caught",
		     (unsigned long long)missing);
}

/* The proof on changes nothing of what the tracker says (every other
 * seed). */
Test(random, against_naive_reference, .timeout = 300)
{
	uint64_t gcs = 0;
	char why[256];

	for (uint64_t seed = 1; seed <= 3000; seed++) {
		proving = seed % 2 == 0;
		struct rref_naive *v;
		const char *diff;
		bool reports;

		rng_state = seed * 0x9e3779b97f4a7c15ULL;
		random_trace();
		reports = rnd(4) != 0;
		v = rref_naive_new(reports);
		cr_assert_not_null(v);
		run_with(reports, &got, v);
		cr_assert_not(rref_too_big(&got, v), "seed %llu: too big",
			      (unsigned long long)seed);
		diff = rref_compare(&got, v, why, sizeof(why));
		cr_assert_null(diff, "seed %llu: %s", (unsigned long long)seed,
			       diff);
		gcs += got.totals.gcs;
		rref_naive_free(v);
	}
	proving = false;
	cr_assert_gt(gcs, 5000, "only %llu random GCs",
		     (unsigned long long)gcs);
}
