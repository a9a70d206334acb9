/*
 * pauses.c - GC pauses in the Mono profiler: which GC is open (one at a
 * time, never across the end of a pause), which pause walks the heap,
 * and the serial major collections it requests from the finalizer thread
 * when a dump is wanted at another moment (doc/design.md, the recorders).
 */
#include "recorders/mono/mono.h"
#include "recorders/core/dump_policy.h"
#include "recorders/core/report.h"

#include <mono/metadata/mono-gc.h>

#include <stdlib.h>

/* ---- GC pauses ----------------------------------------------------------- */

static uint32_t collected_generations(int gen)
{
	if (gen >= state.max_gen)
		gen = state.max_gen;
	return gen >= 31 ? UINT32_MAX : (1u << (gen + 1)) - 1;
}

/* Does a collection of gen count for --every (dump_policy.h)? */
static bool qualifies(int gen)
{
	return dump_qualifies(&state.opt, gen >= state.max_gen);
}

static void pause_begin(uint32_t gen, bool serial)
{
	bool walkable = (int)gen >= state.max_gen && serial;
	bool stopping = flag(&state.stopping);
	bool requested = flag(&state.requested);
	bool due = dump_due(&state.opt, state.qualifying + 1);

	set_flag(&state.in_pause, true);
	state.gc_open = false;
	state.notify_after = false;
	state.induced_pause = walkable && requested && !stopping;
	state.walk_pause = walkable && !stopping &&
			   (requested || (qualifies((int)gen) && due));
	if (state.walk_pause) {
		/* held only by a thread growing them after its pause */
		state.tables_held = tables_claim();
	}
}

/* Every thread is suspended now: no range can change until the world
 * starts again. */
static void world_stopped(void)
{
	if (state.walk_pause)
		rootmap_freeze(&state.roots);
}

static bool dests_claim(void)
{
	bool was = false;

	return atomic_compare_exchange_strong(&state.dests_busy, &was, true);
}

static void dests_release(void)
{
	atomic_store(&state.dests_busy, false);
}

void gc_close(void)
{
	if (!state.gc_open)
		return;
	if (flag(&state.nursery_known)) {
		if (!state.gc_roots_seen)
			record_nursery_kept();
		if (state.gc_proves_old && !state.gc_walked)
			record_old_kept();
		record_finish_bounds();
	}
	ht_gc_finished(state.trace.rec);
	state.gc_open = false;
	if (state.gc_proves_old) {
		if (state.n_dests > state.most_dests || state.dests_overflow)
			state.most_dests = state.dests_overflow
						   ? 2 * state.cap_dests
						   : state.n_dests;
		dests_release();
	}
	state.gc_proves_old = false;
}

/* Opens a GC; proving_old: a major GC this pause walks, which can prove
 * the old generation's dead. */
static void gc_open_as(int gen, bool proving_old)
{
	gc_close();
	ht_gc_started(state.trace.rec, state.gc_number++,
		      collected_generations(gen),
		      state.induced_pause ? HT_GC_INDUCED : HT_GC_OTHER);
	state.gc_proves_old = proving_old && flag(&state.nursery_known) &&
			      state.dests && dests_claim();
	state.gc_walked = false;
	state.n_dests = 0;
	state.dests_overflow = false;
	if (flag(&state.nursery_known))
		record_start_bounds(state.gc_proves_old);
	state.gc_open = true;
	state.gc_roots_seen = false;
	state.gc_major = gen >= state.max_gen;
	state.gc_started_here = false;
}

void gc_open(int gen)
{
	gc_open_as(gen, false);
}

/* A collection starts: it counts for --every unless we forced it, and
 * one that is due but cannot be walked here asks for a forced one. */
static void gc_start(int gen)
{
	gc_open_as(gen, state.walk_pause && gen >= state.max_gen);
	state.gc_started_here = true;
	if (gen >= state.max_gen)
		state.major_running = true;
	if (state.induced_pause || !qualifies(gen))
		return;
	state.qualifying++;
	if (dump_due(&state.opt, state.qualifying) && !state.walk_pause &&
	    !flag(&state.stopping)) {
		set_flag(&state.requested, true);
		state.notify_after = true;
	}
}

/* The end of a collection begun in an earlier pause (a concurrent major)
 * is a GC of its own here. */
static void gc_end(int gen)
{
	if (!state.gc_open)
		gc_open(gen);
	if (gen >= state.max_gen) {
		state.major_running = false;
		/* a dump waits for it (on_finalized) */
		if (flag(&state.concurrent) && flag(&state.requested))
			state.notify_after = true;
		set_flag(&state.concurrent, false);
	}
}

static void pause_end(void)
{
	if (state.major_running)
		set_flag(&state.concurrent, true);
	if (state.walk_pause) {
		if (!state.gc_open)
			gc_open(state.max_gen);
		walk_heap();
		set_flag(&state.requested, false);
	}
	gc_close();
	if (state.tables_held)
		tables_release();
	state.tables_held = false;
	state.walk_pause = false;
	set_flag(&state.in_pause, false);
}

/* Between pauses: room for twice the most moves a walked GC has had. */
static void dests_make_room(void)
{
	size_t cap = state.cap_dests;
	ht_id *more;

	if (state.most_dests * 2 <= cap || !dests_claim())
		return;
	while (state.most_dests * 2 > cap)
		cap *= 2;
	more = realloc(state.dests, cap * sizeof(*more));
	if (more) {
		state.dests = more;
		state.cap_dests = cap;
	}
	dests_release();
}

/* The finalizer thread serves requests (on_finalized): waking it is all
 * that may be done from here, and only once the world runs again. */
static void after_pause(void)
{
	report_if_failed(state.trace.rec);
	field_tables_make_room();
	dests_make_room();
	if (state.notify_after && flag(&state.runtime_ready))
		mono_gc_finalize_notify();
	state.notify_after = false;
}

void on_gc_phase(MonoProfiler *prof, MonoProfilerGCEvent ev,
		 uint32_t gen, mono_bool serial)
{
	(void)prof;
	if (!enter())
		return;
	switch (ev) {
	case MONO_GC_EVENT_PRE_STOP_WORLD_LOCKED:
		pause_begin(gen, serial);
		break;
	case MONO_GC_EVENT_POST_STOP_WORLD:
		world_stopped();
		break;
	case MONO_GC_EVENT_START:
		gc_start((int)gen);
		break;
	case MONO_GC_EVENT_END:
		gc_end((int)gen);
		break;
	case MONO_GC_EVENT_PRE_START_WORLD:
		pause_end();
		break;
	case MONO_GC_EVENT_POST_START_WORLD_UNLOCKED:
		after_pause();
		break;
	default:
		break;
	}
	leave();
}

/* Runs on the finalizer thread each time it wakes: a thread the runtime
 * knows, outside any pause, where a collection may be forced. Not while a
 * concurrent major collection runs: the forced one would finish it first,
 * in the same pause, and Mono reports a pause's last moves only when it
 * ends, so the first collection's would be recorded in the second, which
 * may free what they carry. The end of the concurrent one wakes it
 * again (gc_end). */
void on_finalized(MonoProfiler *prof)
{
	(void)prof;
	if (flag(&state.requested) &&
	    !flag(&state.concurrent) &&
	    !flag(&state.stopping) &&
	    !flag(&state.trace.guard.closed))
		mono_gc_collect(mono_gc_max_generation());
}
