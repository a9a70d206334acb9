/*
 * relocation.h - every object of a trace followed through its GCs: the
 * relocation history of doc/design.md section 3.
 *
 * A tracker consumes a replay event by event: its three callbacks fit
 * struct ht_replay_callbacks (reloc_callbacks fills them in), or a caller
 * with callbacks of its own calls them from its own. It tracks every
 * object the trace shows, from its allocation or from the first dump that
 * reports it, and at each GC:
 *  - an object of a generation the GC did not collect is left alone, even
 *    if a block covers it;
 *  - one in a moved block (old <= id < old + length) moves to
 *    new + (id - old); one in a surviving block stays;
 *  - one in no block dies only where its death is proven: (a) the bounds
 *    of a collected generation, as recorded at the GC's start (else the
 *    last ones recorded before it), contain it; (b) no bounds at all, and
 *    the GC collected every generation the trace has shown (0, 1 and 2 at
 *    least). Both need a trace whose header says that the runtime reports
 *    every survivor as a block, and a GC that finished. Otherwise it keeps
 *    its id ("kept"): its fate is not known.
 * (c) A complete dump (its closer seen, not aborted) that lacks a tracked
 * object proves it died after it was last known alive.
 *
 * Two objects cannot share an id. When a block puts an object where a
 * tracked object was kept, when an object is allocated at the id of a
 * tracked one, or when a dump shows an object of another class or size at
 * a tracked id, the older object is "lost": its fate is not proven either
 * way, so it is dropped without being declared dead.
 *
 * The generation of an object comes from the bounds in effect when it is
 * allocated, from a dump that gives it, and after each GC from the bounds
 * recorded at its finish; a rise from 0 or 1 to 1 or 2 at a GC is a
 * promotion. Generation numbers are the CLR's (3: large object heap,
 * 4: pinned object heap).
 *
 * Objects live in parallel arrays sorted by current id, each with a serial
 * number: the order in which tracking began, from 0. A GC with R blocks
 * costs O(R log R) to sort its blocks and O(N) for N objects: one merge
 * walk over the objects and the blocks, then the moved runs put back in
 * order by the destinations of their blocks and merged with the objects
 * that stayed. Allocations and objects first seen in a dump wait apart
 * and are sorted in with a radix sort, so no per-GC comparison sort of the
 * objects ever happens.
 *
 * What the tracker finds comes out through hooks: a summary per GC, one
 * per dump (with the ages of the objects in it), and every step in the
 * life of the objects being watched.
 *
 * A tracker asked to prove (reloc_prove) also holds the rules to what the
 * dumps show, and reports every contradiction through the inconsistency
 * hook (doc/design.md section 3, "The relocation proof"). An object is
 * *placed* from the moment its id is proven (its allocation, a dump that
 * reports it) for as long as every GC since left it alone or carried it
 * with a block; a GC that keeps it without proof unplaces it until a dump
 * reports it again (a block does not: the place may have been freed and
 * taken by an object the trace never showed, and the block carry that
 * one). Then:
 *  - a dump that shows another class or size at a placed object's id
 *    contradicts the rules (RELOC_INCONSISTENT_DISPLACED);
 *  - a GC's own complete dump that lacks an object a block of that GC
 *    carried does too, placed or not: the block says an object is there
 *    (RELOC_INCONSISTENT_MISSING);
 *  - a GC's own complete dump that shows an object at the id of one that
 *    the GC's bounds proved dead (rules (a), (b)), where no moved block
 *    of that GC lands, does too: nothing is allocated inside a GC
 *    (RELOC_INCONSISTENT_DEAD_PRESENT).
 * An object kept without proof, lost, or never tracked proves nothing.
 */
#ifndef HT_RELOCATION_H
#define HT_RELOCATION_H

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RELOC_NO_GENERATION 0xffu
#define RELOC_NO_OBJECT UINT32_MAX

/* What happened to an object. */
enum reloc_step_kind {
	RELOC_ALLOCATED,  /* object_allocated: tracking begins */
	RELOC_SEEN,       /* reported in a dump (first: tracking begins) */
	RELOC_MOVED,      /* a GC moved it, from -> to */
	RELOC_SURVIVED,   /* a GC's block kept it in place */
	RELOC_KEPT,       /* in a collected generation, in no block, its
			     death not proven: it keeps its id */
	RELOC_UNTOUCHED,  /* its generation was not collected */
	RELOC_PROMOTED,   /* a GC raised its generation */
	RELOC_DIED,       /* proven dead: tracking ends */
	RELOC_LOST,       /* its id taken by another object: tracking ends,
			     fate unknown */
	RELOC_END,        /* still tracked at the end of the trace */
};

/* Why an object died or was lost. */
enum reloc_cause {
	RELOC_CAUSE_NONE,
	RELOC_DIED_BOUNDS,      /* (a) */
	RELOC_DIED_FULL_GC,     /* (b) */
	RELOC_DIED_ABSENT,      /* (c) */
	RELOC_LOST_BLOCK,       /* a block put another object at its id */
	RELOC_LOST_ALLOCATION,  /* another object was allocated at its id */
	RELOC_LOST_DUMP,        /* a dump shows another object at its id */
};

/* One step in the life of a watched object. Ids are 0 where they do not
 * apply, numbers -1.
 * This struct is not an API; it may change from one release to the next. */
struct reloc_step {
	enum reloc_step_kind kind;
	enum reloc_cause cause;   /* RELOC_DIED, RELOC_LOST */
	uint32_t object;          /* its serial number */
	uint64_t event_index;     /* of the event that told it */
	int64_t gc;               /* the GC, for the steps a GC causes */
	int64_t dump;             /* RELOC_SEEN, died absent, lost to a dump */
	ht_id from, to;           /* its id before and after the step */
	unsigned generation;      /* after the step, RELOC_NO_GENERATION */
	unsigned old_generation;  /* RELOC_PROMOTED: before it */
	ht_id class_id;           /* as known at the step, 0 if not */
	uint64_t size;
	bool first;               /* RELOC_SEEN: tracking begins here */
	int64_t alive_gc;         /* died absent: the last GC after which it was
				     known alive, -1 when before any GC */
	uint32_t other;           /* RELOC_LOST: the object that took its id */
	ht_id other_class;        /* RELOC_LOST_DUMP: what the dump showed */
	uint64_t other_size;
	ht_id stack;              /* RELOC_ALLOCATED: the stack that made it
				     (version 4), 0 when none was recorded */
};

/* Where the bounds that rule (a) used came from. */
enum reloc_bounds_source {
	RELOC_BOUNDS_NONE,    /* none recorded before or at the GC's start */
	RELOC_BOUNDS_START,   /* recorded at the GC's start */
	RELOC_BOUNDS_BEFORE,  /* the last ones recorded before the GC */
};

/* This struct is not an API; it may change from one release to the next. */
struct reloc_gc_summary {
	int64_t gc;               /* replay numbering, from 0 */
	uint32_t generations;     /* bit g: generation g collected */
	bool finished;            /* gc_finished seen: deaths may be proven */
	enum reloc_bounds_source bounds;
	uint64_t moved_objects, moved_bytes;
	uint64_t survived_objects, survived_bytes;
	uint64_t kept_objects, kept_bytes;
	uint64_t untouched_objects, untouched_bytes;
	uint64_t died_objects, died_bytes;
	uint64_t promoted_objects, promoted_bytes;
	uint64_t lost_objects, lost_bytes;
};

/* Objects of a dump that had survived `gcs` GCs while tracked.
 * This struct is not an API; it may change from one release to the next. */
struct reloc_age {
	uint64_t gcs;
	uint64_t count;
	uint64_t bytes;
};

/* This struct is not an API; it may change from one release to the next. */
struct reloc_dump_summary {
	int64_t dump;             /* replay numbering, from 0 */
	bool gc_dump;             /* the references of GC `gc` */
	int64_t gc;
	bool complete;            /* its absences prove deaths */
	uint64_t objects;         /* distinct objects it reports */
	uint64_t new_objects;     /* first seen in it */
	uint64_t died_objects, died_bytes;  /* tracked, absent from it */
	uint64_t lost_objects;    /* it shows another object at their id */
	size_t n_ages;            /* by ascending gcs, counts not zero */
	const struct reloc_age *ages;
};

/* What the relocation proof found (reloc_prove). */
enum reloc_inconsistency_kind {
	RELOC_INCONSISTENT_DISPLACED,    /* another class or size at its id */
	RELOC_INCONSISTENT_MISSING,      /* placed, absent from a complete dump */
	RELOC_INCONSISTENT_DEAD_PRESENT, /* proven dead, its id in the GC's
					    own dump */
};

/*
 * One contradiction between the rules and a dump. The object is the
 * tracked one: its class and size as last known, old_id where it was
 * before the last GC that moved it (its id when it never moved),
 * predicted_id where the rules put it (for DEAD_PRESENT: where it died).
 * gc: DISPLACED, MISSING: the last GC after which it was proven alive
 * (by a block or a dump; -1: not since any GC, by its allocation or a
 * dump before every GC); DEAD_PRESENT: the GC that proved it dead.
 * found_*: what the dump shows at predicted_id (DISPLACED, DEAD_PRESENT).
 * This struct is not an API; it may change from one release to the next.
 */
struct reloc_inconsistency {
	enum reloc_inconsistency_kind kind;
	enum reloc_cause cause;   /* DEAD_PRESENT: bounds or full_gc */
	uint32_t object;          /* its serial number */
	int64_t gc;
	int64_t dump;             /* the dump that contradicts */
	uint64_t event_index;     /* of the event that ended it */
	ht_id old_id, predicted_id;
	ht_id class_id;           /* 0 when not known */
	uint64_t size;
	ht_id found_class;
	uint64_t found_size;
};

/* The summaries are valid during the call only. A hook may be NULL.
 * This struct is not an API; it may change from one release to the next. */
struct reloc_hooks {
	void *ctx;
	void (*gc_done)(void *ctx, const struct reloc_gc_summary *g);
	void (*dump_done)(void *ctx, const struct reloc_dump_summary *d);
	void (*step)(void *ctx, const struct reloc_step *s);
	void (*inconsistent)(void *ctx, const struct reloc_inconsistency *x);
};

/* This struct is not an API; it may change from one release to the next. */
struct reloc_totals {
	uint64_t objects;  /* ever tracked */
	uint64_t alive;    /* tracked at the end */
	uint64_t died;
	uint64_t lost;
	uint64_t gcs;      /* applied */
};

struct reloc;

/* reports_survivors: the trace header's. hooks may be NULL; copied. NULL
 * when out of memory. */
struct reloc *reloc_new(bool reports_survivors,
			const struct reloc_hooks *hooks);
void reloc_free(struct reloc *t);

/* Watching, before the first event: the object with this serial number,
 * and every object from the moment it holds this id. 0, or -1 when out of
 * memory. */
int reloc_watch_object(struct reloc *t, uint32_t serial);
void reloc_watch_id(struct reloc *t, ht_id id);
/* And every object allocated with a stack (an allocation site's sample,
 * version 4), from its allocation. */
void reloc_watch_sampled(struct reloc *t);

/* Turns the relocation proof on, before the first event: 8 bytes more an
 * object (where it was before its last move) and a list of the objects
 * each GC proves dead. */
void reloc_prove(struct reloc *t);

/* The replay callbacks, ctx being the tracker. They return 0, or
 * RELOC_STOP when the tracker cannot go on (reloc_error says why). */
#define RELOC_STOP 1
int reloc_on_event(void *ctx, const struct ht_event *ev,
		   const struct ht_replay_state *st);
int reloc_on_dump_begin(void *ctx, const struct ht_replay_state *st);
int reloc_on_dump_end(void *ctx, const struct ht_replay_state *st);

/* Sets every callback of cb to the tracker's (on_violation untouched). */
void reloc_callbacks(struct ht_replay_callbacks *cb);

/* After the last event (and after the replay's own finish, which ends a
 * dump left open): applies a GC left open, without claiming deaths, and
 * reports RELOC_END for the watched objects still tracked. 0 or
 * RELOC_STOP. */
int reloc_finish(struct reloc *t);

void reloc_get_totals(const struct reloc *t, struct reloc_totals *totals);

/* Why a callback returned RELOC_STOP; "" when none did. */
const char *reloc_error(const struct reloc *t);

#endif
