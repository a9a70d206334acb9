/*
 * stats.h - the figures of a trace, as `stats` and `top --classes` show
 * them. Per dump, from its graph: objects, bytes, references, roots by
 * container or CLR root kind, unreachable and dangling, per class and per
 * generation. Per GC, from a replay of the trace and the relocation
 * tracker's summaries: what it collected, the blocks it moved or left in
 * place, and what that did to the objects tracked across GCs; and per
 * dump what the tracker learned from it (the ages of its objects).
 *
 * The GCs are gathered in one pass over the trace (stats_scan_gcs); the
 * dumps' figures are made one dump at a time (dump_stats_compute, from
 * heap_scan's callback), so that a trace of thousands of dumps is never
 * held in memory. No CLI knowledge here: these only compute.
 */
#ifndef HT_STATS_H
#define HT_STATS_H

#include "analysis/dominators.h"
#include "analysis/heap.h"
#include "analysis/levels.h"
#include "analysis/relocation.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- per class ----------------------------------------------------------- */

/* This struct is not an API; it may change from one release to the next. */
struct class_row {
	uint32_t cls;         /* index into h->classes, HEAP_NO_CLASS */
	ht_id id;             /* the class id, 0 when unknown */
	char *name;           /* a copy of heap_class_name's */
	uint64_t count;
	uint64_t bytes;       /* self sizes */
	uint64_t retained;    /* see class_table */
};

enum class_order {
	CLASS_BY_BYTES,
	CLASS_BY_RETAINED,
	CLASS_BY_COUNT,
};

/*
 * Counts and self bytes per class. With d, also each class's retained
 * size: the sum of the retained sizes of its objects that no other object
 * of the same class dominates (so a linked list's nodes are not counted
 * once per node above them). Sorted by order, descending, ties by name
 * then class id. Returns 0, or -1 when out of memory.
 */
int class_table(const struct heap *h, const struct heap_dominators *d,
		enum class_order order, struct class_row **rows, size_t *n);
void class_table_free(struct class_row *rows, size_t n);

/* ---- per dump ------------------------------------------------------------ */

/* Roots are grouped in slots: by container type (1..HT_C_LAST; slot 0
 * for a type past those) or, for a GC's roots, by CLR root kind (after
 * them, the last slot: no kind given). */
#define STATS_KIND_SLOT(kind) (HT_C_LAST + 1 + (kind))
#define STATS_NO_KIND_SLOT STATS_KIND_SLOT(HT_ROOT_KIND_LAST + 1)
#define STATS_ROOT_SLOTS (STATS_NO_KIND_SLOT + 1)

/* Generations 0..HT_GEN_MAX, then one slot for objects of no known one. */
#define STATS_UNKNOWN_GEN_SLOT (HT_GEN_MAX + 1)
#define STATS_GEN_SLOTS (STATS_UNKNOWN_GEN_SLOT + 1)

/* This struct is not an API; it may change from one release to the next. */
struct dump_stats {
	/* which dump, as struct heap says */
	uint64_t index;
	bool gc_dump;
	int64_t gc;
	bool aborted, complete;

	uint64_t objects, bytes;
	uint64_t references, dangling, duplicates;
	/* null roots hold nothing: they are counted apart, and in no slot */
	uint64_t roots, weak_roots, dangling_roots, null_roots;
	uint64_t root_count[STATS_ROOT_SLOTS], root_weak[STATS_ROOT_SLOTS];
	/* the trace carries fields: its roots have names in the runtime's
	 * words (analysis/names.h) */
	bool named_roots;
	uint64_t unreachable, unreachable_bytes, weakly_reachable;
	/* the level the unreachable and retained figures are computed at */
	enum heap_level level;
	/* the dump has referents or weak roots: objects and bytes by the
	 * strongest level that reaches them (heap_reach_levels), the last
	 * slot for those none reaches */
	bool has_levels;
	uint64_t level_count[HEAP_LEVEL_UNREACHABLE + 1];
	uint64_t level_bytes[HEAP_LEVEL_UNREACHABLE + 1];
	/* the class objects among the unreachable (a trace with fields):
	 * HPROF records no reference from an instance or its loader to its
	 * class, so a class no root or static holds is one of them */
	uint64_t unreachable_classes, unreachable_class_bytes;
	/* by self bytes; retained sizes only when asked for */
	struct class_row *classes;
	size_t n_classes;
	bool has_generations;  /* some object's generation is known */
	uint64_t gen_count[STATS_GEN_SLOTS], gen_bytes[STATS_GEN_SLOTS];
};

/*
 * The figures of dump h, reachability and retained sizes at `level`; with
 * retained_by_class, each class's retained size too. They own copies of
 * what they name, and outlive h. Returns 0, or -1 with err filled (out of
 * memory). Free with dump_stats_free.
 */
int dump_stats_compute(struct dump_stats *ds, const struct heap *h,
		       bool retained_by_class, enum heap_level level,
		       struct ht_error *err);
void dump_stats_free(struct dump_stats *ds);

/* ---- per GC, and what the tracker saw ------------------------------------ */

/* This struct is not an API; it may change from one release to the next. */
struct gc_stats {
	uint64_t index;        /* replay numbering, from 0 */
	bool has_gc;
	uint64_t gc;           /* the runtime's number */
	uint32_t generations;  /* bit g: generation g collected */
	enum ht_gc_reason reason;
	bool finished;
	/* unfinished because the trace ends inside it, never closed: its
	 * process ended there (killed, crashed), so its figures stop where
	 * the trace does and it claims no death */
	bool cut_off;
	int64_t dump;          /* the dump of its references, -1 if none */
	uint64_t moved_blocks, moved_bytes;
	uint64_t surviving_blocks, surviving_bytes;
	/* when it started and finished (format version 3), nanoseconds
	 * since the trace's start */
	bool has_start_time, has_finish_time;
	uint64_t start_time, finish_time;
	/* what the relocation tracker saw it do to the objects */
	bool tracked;
	struct reloc_gc_summary objects;
};

/* What the relocation tracker saw of a dump. The ages are a copy.
 * This struct is not an API; it may change from one release to the next. */
struct dump_tracking {
	bool tracked;
	struct reloc_dump_summary sum;
};

/* When a dump began and ended (its C_BEGIN's and C_END's times).
 * This struct is not an API; it may change from one release to the next. */
struct dump_times {
	bool has_begin, has_end;
	uint64_t begin, end;
};

/* This struct is not an API; it may change from one release to the next. */
struct trace_stats {
	uint64_t dumps;        /* in the trace */
	/* the times the trace carries: whether any, and the last (the end
	 * of the run, which starts at time 0) */
	bool has_times;
	uint64_t last_time;
	struct dump_times *dump_times; /* by dump number; NULL without times */
	size_t n_dump_times, cap_dump_times;
	struct gc_stats *gcs;  /* in trace order */
	size_t n_gcs, cap_gcs;
	struct dump_tracking *tracking; /* by dump number */
	size_t n_tracking;
	struct reloc_totals totals;
	bool tracked;          /* the tracker ran: tracking and totals hold */
	bool damaged;          /* the scan ended at damage */
};

/* Called after each event of the scan (a progress line, say). */
typedef void (*stats_event_fn)(void *ctx, const struct ht_replay_state *st);

/*
 * Replays r from its start, the relocation tracker with it when `track`:
 * the GCs, the tracker's summaries and totals, and how many dumps there
 * are (without `track`, no summaries and zero totals: ts->tracked says
 * which). Returns 0; 1 when the trace is damaged (ts->damaged, err says how: what was
 * read before the damage was used); -1 with err filled when it cannot go
 * on (out of memory, the tracker stopped, an unreadable trace). on_event
 * may be NULL. Free ts with trace_stats_free, whatever the answer.
 */
int stats_scan_gcs(struct ht_reader *r, struct trace_stats *ts, bool track,
		   stats_event_fn on_event, void *ctx, struct ht_error *err);
void trace_stats_free(struct trace_stats *ts);

/* The times of dump `dump`, NULL when the trace gives none. */
const struct dump_times *trace_stats_dump_times(const struct trace_stats *ts,
						uint64_t dump);

/* ---- GC pauses ----------------------------------------------------------- */

/* A GC's pause, finish - start, when both times are known and in order. */
bool gc_pause(const struct gc_stats *g, uint64_t *pause);

/*
 * The pauses of the timed GCs: how many, their total, mean (truncated),
 * percentiles by nearest rank (the smallest pause with at least p% of the
 * pauses at or below it) and maximum; and the run they fall in, from the
 * trace's start (time 0) to its last time, with the share of it spent in
 * GCs in per cent (0 when the run has no length).
 * This struct is not an API; it may change from one release to the next.
 */
struct pause_summary {
	uint64_t count;
	uint64_t total, mean, p50, p99, max;
	uint64_t run;
	double share;
};

/* Pauses of n values in pauses (sorted here). */
void pause_summary_of(uint64_t *pauses, size_t n, uint64_t run,
		      struct pause_summary *out);
/* The summary of ts's GCs. Returns 0, or -1 when out of memory. */
int stats_pause_summary(const struct trace_stats *ts,
			struct pause_summary *out);

/* What the tracker saw of dump `dump`, NULL if it saw none of it. */
const struct dump_tracking *trace_stats_tracking(const struct trace_stats *ts,
						 uint64_t dump);

#endif
