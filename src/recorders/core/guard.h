/*
 * guard.h - the recording guard every recorder puts around its callbacks,
 * and the flags its threads publish to each other.
 *
 * A runtime calls a recorder's callbacks on its own threads, some inside
 * a GC pause, until the very end of the process; the trace is closed
 * once, by whichever comes first (the runtime's shutdown, exit(), a
 * signal). A callback enters the guard before it records and leaves it
 * after: the closer marks the trace closed, waits for the callbacks in
 * flight (trace.h, trace_close) and then closes it; a callback that comes
 * later records nothing. Lock-free, and no malloc: it runs in pauses.
 */
#ifndef HT_RECORDERS_GUARD_H
#define HT_RECORDERS_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>

/* This struct is not an API; it may change from one release to the
 * next. */
struct rec_guard {
	_Atomic int inflight;  /* callbacks between enter and leave */
	_Atomic bool closed;   /* the trace is closed, or closing */
};

/* A flag one thread sets and another reads, with what was written
 * before it. */
static inline bool flag(_Atomic bool *f)
{
	return atomic_load_explicit(f, memory_order_acquire);
}

static inline void set_flag(_Atomic bool *f, bool value)
{
	atomic_store_explicit(f, value, memory_order_release);
}

static inline void guard_leave(struct rec_guard *g)
{
	atomic_fetch_sub_explicit(&g->inflight, 1, memory_order_release);
}

/* guard_enter and the closer (guard_close) each write one variable and
 * then read the other: sequentially consistent, so that they cannot both
 * miss. false: the trace is closed, record nothing (and do not leave). */
static inline bool guard_enter(struct rec_guard *g)
{
	atomic_fetch_add(&g->inflight, 1);
	if (atomic_load(&g->closed)) {
		guard_leave(g);
		return false;
	}
	return true;
}

static inline int guard_inflight(struct rec_guard *g)
{
	return atomic_load(&g->inflight);
}

/* Marks the trace closed: true for the one caller that does so first. */
static inline bool guard_close(struct rec_guard *g)
{
	return !atomic_exchange(&g->closed, true);
}

#endif
