/*
 * generations.c - the nursery (generation 0) of the Mono profiler: its
 * bounds, both generations' bounds at a GC's start and finish, and the
 * objects that survived where they were (pinned nursery objects, and
 * the old generation's survivors after a walked major GC) as surviving
 * blocks.
 */
#include "recorders/mono/mono.h"

#include <mono/metadata/mono-gc.h>

#include <stdlib.h>
#include <string.h>

/* ---- the nursery --------------------------------------------------------- */

/*
 * sgen's nursery is one range of addresses, and mono_gc_get_generation
 * tells whether an address lies in it by arithmetic alone (it reads
 * nothing there), so the range's edges can be searched for from any
 * address inside it. They do not change once the runtime runs (a nursery
 * that resizes itself does so inside the range reserved at startup).
 */
static bool in_nursery_by_mono(uintptr_t a)
{
	return mono_gc_get_generation((MonoObject *)a) == 0;
}

/* The range of addresses around inside, an address in the nursery. */
static void nursery_around(uintptr_t inside, uintptr_t *start, uintptr_t *end)
{
	uintptr_t lo = 0, hi = inside;

	/* the lowest address of the nursery: in it from hi to inside */
	while (lo < hi) {
		uintptr_t mid = lo + (hi - lo) / 2;

		if (in_nursery_by_mono(mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	*start = hi;
	/* the first address above it: lo in it, hi not */
	lo = inside;
	hi = UINTPTR_MAX;
	while (hi - lo > 1) {
		uintptr_t mid = lo + (hi - lo) / 2;

		if (in_nursery_by_mono(mid))
			lo = mid;
		else
			hi = mid;
	}
	*end = hi;
}

/* A fresh small object is in the nursery: its address finds the range.
 * Runs once, on the main thread, when the runtime is ready; the GCs
 * before it record no bounds and so prove no death. */
void find_nursery(void)
{
	MonoObject *probe = mono_object_new(mono_domain_get(),
					    mono_get_object_class());
	uintptr_t at = (uintptr_t)probe, start, end;

	if (!probe || !in_nursery_by_mono(at))
		return; /* allocated elsewhere (degraded mode): none known */
	nursery_around(at, &start, &end);
	if (end - start < 4096 || in_nursery_by_mono(start - 1) ||
	    in_nursery_by_mono(end))
		return;
	state.nursery_start = start;
	state.nursery_end = end;
	set_flag(&state.nursery_known, true);
}

bool in_nursery(uintptr_t a)
{
	return a >= state.nursery_start && a < state.nursery_end;
}

/* At a GC's start: the nursery, generation 0, the only generation whose
 * survivors Mono reports all (see gc_close and on_gc_roots), so the only
 * bounds that may prove deaths (doc/design.md, rule (a)). */
/* Both generations: the nursery, and the old generation as every other
 * address (mono_gc_get_generation's answer for them). */
static void both_generations(struct ht_generation_range g[3])
{
	uint64_t size = state.nursery_end - state.nursery_start;
	uint64_t above = (uint64_t)0 - state.nursery_end; /* to the top */

	g[0] = (struct ht_generation_range){
		.generation = 0, .start = state.nursery_start,
		.length = size, .reserved = size};
	g[1] = (struct ht_generation_range){
		.generation = 1, .start = 0,
		.length = state.nursery_start, .reserved = state.nursery_start};
	g[2] = (struct ht_generation_range){
		.generation = 1, .start = state.nursery_end,
		.length = above, .reserved = above};
}

/* At a GC's start: the generations whose every survivor is reported as
 * a block, since only their bounds may prove deaths (doc/design.md, rule
 * (a)): the nursery, whose survivors Mono moves or pins (see gc_close and
 * on_gc_roots), and in a walked major GC the old generation too, whose
 * survivors the walk shows (record_walked_survivor). */
void record_start_bounds(bool with_old)
{
	struct ht_generation_range g[3];

	both_generations(g);
	ht_generation_bounds(state.trace.rec, with_old ? 3 : 1, g);
}

/* At a GC's finish: both, so that an object carried out of the nursery
 * is seen promoted. */
void record_finish_bounds(void)
{
	struct ht_generation_range g[3];

	both_generations(g);
	ht_generation_bounds(state.trace.rec, 3, g);
}

/* A GC that proves the old generation's dead but was not walked (another
 * collection followed it in its pause): its old objects are all kept in
 * place, as no report tells which survived. */
void record_old_kept(void)
{
	ht_id starts[2] = {0, state.nursery_end};
	uint64_t lengths[2] = {state.nursery_start,
			       (uint64_t)0 - state.nursery_end};

	ht_surviving_references(state.trace.rec, 2, starts, lengths);
}

/* A GC whose roots Mono did not report (the pause that starts a
 * concurrent major collection, which moves and frees nothing): no
 * survivor is known, so the whole nursery is reported surviving in
 * place, and none of its objects is claimed dead. */
void record_nursery_kept(void)
{
	ht_id start = state.nursery_start;
	uint64_t length = state.nursery_end - state.nursery_start;

	ht_surviving_references(state.trace.rec, 1, &start, &length);
}

/* Roots into the nursery, reported once the collection is done: Mono
 * reports them after every object has been copied out and the roots
 * updated, so the nursery objects they hold are those pinned there, the
 * survivors that did not move. A block of 1 byte covers the object's id;
 * its header is not read (sgen keeps its pin bit there now). */
void record_nursery_survivors(uint64_t count,
			      MonoObject *const *objects)
{
	ht_id starts[BATCH];
	uint64_t lengths[BATCH];
	size_t n = 0;

	for (uint64_t i = 0; i < count; i++) {
		uintptr_t a = (uintptr_t)objects[i];

		if (!in_nursery(a))
			continue;
		if (n == BATCH) {
			ht_surviving_references(state.trace.rec, n, starts,
						lengths);
			n = 0;
		}
		starts[n] = a;
		lengths[n++] = 1;
	}
	if (n)
		ht_surviving_references(state.trace.rec, n, starts, lengths);
}
