/*
 * relocation_internal.h - what the pieces of the relocation tracker share:
 * its spans, its table of objects and the tracker's state, the small
 * helpers every piece calls on each object (static inline, as they were
 * when the tracker was one file: the walks over the objects call them per
 * row), and the functions one piece gives the others. relocation.c holds
 * the table (spans, radix sort, objects, new objects, settling),
 * relocation_gc.c a GC applied and the replay's callbacks,
 * relocation_dump.c a dump matched and the proof; relocation.c says how
 * the tracker works.
 *
 * This header is not an API; it may change from one release to the next.
 * The API is relocation.h.
 */
#ifndef HT_RELOCATION_INTERNAL_H
#define HT_RELOCATION_INTERNAL_H

#include "analysis/relocation.h"
#include "util/membudget.h"
#include "util/search.h"
#include "util/saturating.h"

#include <stdio.h>

/* ---- Spans: blocks and generation ranges -------------------------------- */

enum span_kind {
	SPAN_MOVED,
	SPAN_SURVIVING,
	SPAN_RANGE,
};

/*
 * A block of a GC or a range of a generation, as the half-open interval
 * [start, end) of the ids it covers. Once normalized, a list of spans is
 * sorted by start and disjoint: where reported spans overlap, the one
 * that starts first (then the one reported first) keeps the overlap.
 */
struct span {
	ht_id start, end;
	ht_id dest;         /* moved: where start goes; otherwise start */
	uint32_t seq;       /* arrival order */
	uint8_t kind;       /* enum span_kind */
	uint8_t gen;        /* SPAN_RANGE: its generation */
	uint32_t first;     /* moved: its objects in the GC's movers list */
	uint32_t count;
};

struct spans {
	struct span *s;
	size_t n, cap;
};

/* start + length, or the top of the id space when that overflows. */
static inline ht_id span_end(ht_id start, uint64_t length)
{
	return length > UINT64_MAX - start ? UINT64_MAX : start + length;
}

static inline uint8_t generation_byte(uint64_t g)
{
	return g <= HT_GEN_MAX ? (uint8_t)g : RELOC_NO_GENERATION;
}

/* The span holding id, for ids visited in ascending order: *at only moves
 * forward. NULL when no span holds it. */
static inline struct span *span_at(const struct spans *l, size_t *at, ht_id id)
{
	while (*at < l->n && l->s[*at].end <= id)
		(*at)++;
	return *at < l->n && l->s[*at].start <= id ? &l->s[*at] : NULL;
}

/* The same for one id, by binary search. */
static inline const struct span *span_find(const struct spans *l, ht_id id)
{
	size_t lo = LOWER_BOUND(0, l->n, mid, l->s[mid].end <= id);

	return lo < l->n && l->s[lo].start <= id ? &l->s[lo] : NULL;
}

/* ---- The objects --------------------------------------------------------- */

/* flags */
#define WATCHED 0x01u       /* its steps are reported */
#define PROMOTED_NOW 0x02u  /* promoted by the GC applied last */
#define GONE 0x04u          /* died or lost: dropped at the next settle */
#define UNPLACED 0x08u      /* kept without proof since it was last proven
			       alive at its id: the proof claims nothing.
			       A block that carries it does not place it
			       again: its place may have been freed and
			       taken by an object the trace never showed
			       (moved there, or allocated unrecorded), and
			       the block carries that one; only a dump that
			       reports it does */
#define FATE_SHIFT 4        /* during a GC: enum fate */
#define FATE_MASK (0x7u << FATE_SHIFT)

enum fate {
	FATE_UNTOUCHED,
	FATE_SURVIVED,
	FATE_KEPT,
	FATE_MOVED,
	FATE_DIED,
};

/* What only the steps and the summaries read of an object, kept
 * together so that rearranging the table moves it in one pass. */
struct info {
	ht_id cls;           /* class id, 0 when not known */
	uint32_t serial;
	uint32_t born;       /* GCs applied when its tracking began */
};

/*
 * Every tracked object, a row of parallel arrays: 38 bytes an object
 * (46 with prev, for the proof), and as many of scratch for rearranging
 * them. Rows [0, n_sorted) are sorted by id, rows [n_sorted, n) wait to
 * be sorted in. What a GC writes of every object has columns of its own.
 * The columns are charged to the memory budget.
 */
struct objects {
	size_t n, n_sorted, cap;
	bool with_prev;      /* the prev column is kept (reloc_prove) */
	uint64_t charged;    /* to the memory budget */
	ht_id *id;
	ht_id *prev;         /* its id before its last move */
	uint64_t *size;      /* 0 when not known */
	uint8_t *gen;        /* RELOC_NO_GENERATION when not known */
	uint8_t *flags;
	uint32_t *alive;     /* 1 + the last GC after which it was known
				alive; 0: before any GC */
	struct info *info;
	uint64_t *scratch;   /* cap: a column being gathered, by width */
	uint32_t *scratch32;
	uint8_t *scratch8;
	struct info *scratch_info;
	uint32_t *perm;      /* cap: the rows of the next order */
};

static inline enum fate fate_of(const struct objects *o, size_t i)
{
	return (enum fate)((o->flags[i] & FATE_MASK) >> FATE_SHIFT);
}

static inline void set_fate(struct objects *o, size_t i, enum fate f)
{
	o->flags[i] = (uint8_t)((o->flags[i] & ~FATE_MASK) |
				((unsigned)f << FATE_SHIFT));
}

/* ---- The tracker --------------------------------------------------------- */

/* The GC being recorded: its blocks and bounds, until it is applied. */
struct gc_state {
	bool open;
	int64_t number;
	uint32_t generations;
	bool in_body;            /* a block or a reference came */
	enum reloc_bounds_source start_source;
	struct spans start;      /* bounds ruling (a) */
	bool has_finish;
	struct spans finish;     /* bounds at its finish */
	struct spans blocks;
	uint32_t seq;
	bool summary_waits;      /* applied; its references have not ended */
	struct reloc_gc_summary sum;
};

/* The dump being recorded: the objects it reports (continuations left
 * out), processed when it ends. */
struct dump_state {
	bool open;
	int64_t number;
	bool gc_dump;
	int64_t gc;
	size_t n, cap;
	uint64_t charged;        /* to the memory budget */
	ht_id *id;
	ht_id *cls;
	uint64_t *size;
	uint8_t *gen;
};

/* An object that the GC applied last proved dead (rules (a), (b)), for
 * the proof to hold against that GC's own dump. */
struct dead_object {
	ht_id id, cls;
	uint64_t size;
	uint32_t serial;
	ht_id prev;              /* its id before its last move */
};

struct age_slot {
	uint64_t count, bytes;
};

/* This struct is not an API; it may change from one release to the next. */
struct reloc {
	bool reports_survivors;
	struct reloc_hooks hooks;
	struct objects obj;
	uint64_t next_serial;
	uint64_t gcs_applied;
	int64_t last_gc;          /* the number of the last GC begun, -1 */
	uint32_t shown;           /* generations the trace has shown */
	struct spans bounds;      /* the last bounds recorded */
	uint64_t closer_at;       /* 1 + index of the last C_END, gc_finished */
	uint64_t events;          /* index + 1 of the last event */
	bool has_gone;            /* rows flagged GONE wait for a settle */

	struct gc_state gc;
	struct dump_state dump;

	uint32_t *watch;          /* serials watched, sorted */
	size_t n_watch, cap_watch;
	bool watching_id;
	ht_id watch_id;
	bool watching_sampled;    /* reloc_watch_sampled */

	/* work arrays, kept from one use to the next */
	uint64_t *tail_event;     /* per waiting row: the event it came by */
	size_t cap_tail_event;
	uint32_t *movers, *order; /* a GC's moved rows; sorting */
	size_t cap_movers, cap_order;
	uint32_t *dump_order;     /* a dump's objects in id order */
	size_t cap_dump_order;
	struct age_slot *age;      /* a dump's ages, counted by age */
	size_t cap_age;
	struct reloc_age *ages;
	size_t cap_ages;

	/* the relocation proof (reloc_prove) */
	bool proving;
	struct dead_object *dead; /* proven dead by the GC applied last, */
	size_t n_dead, cap_dead;  /* in id order */
	bool dead_by_full_gc;     /* by rule (b), not (a) */
	struct span *landing;     /* that GC's moved blocks by destination */
	size_t n_landing, cap_landing;
	bool landing_ready;

	struct reloc_totals totals;
	bool failed;
	char error[160];
	uint64_t charged; /* to the memory budget (util/membudget.h) */
};

static inline int fail(struct reloc *t, const char *why)
{
	if (!t->failed)
		snprintf(t->error, sizeof(t->error), "%s", why);
	t->failed = true;
	return RELOC_STOP;
}

static inline int out_of_memory(struct reloc *t)
{
	char why[96];

	if (mem_budget_exceeded()) {
		snprintf(why, sizeof(why), MEM_BUDGET_MESSAGE,
			 mem_budget_limit());
		return fail(t, why);
	}
	return fail(t, "out of memory tracking objects across GCs");
}

/* ---- Watching and steps ------------------------------------------------ */

/* An object starts being watched when it takes the watched id. */
static inline void watch_if_holding(struct reloc *t, size_t i)
{
	if (t->watching_id && t->obj.id[i] == t->watch_id)
		t->obj.flags[i] |= WATCHED;
}

static inline bool is_watched(const struct reloc *t, size_t i)
{
	return t->hooks.step && (t->obj.flags[i] & WATCHED);
}

/* A step of row i as it is now; the caller sets what differs. */
static inline struct reloc_step step_of(const struct reloc *t,
					enum reloc_step_kind kind, size_t i,
					uint64_t event_index)
{
	const struct objects *o = &t->obj;

	return (struct reloc_step){
		.kind = kind,
		.object = o->info[i].serial,
		.event_index = event_index,
		.gc = -1,
		.dump = -1,
		.from = o->id[i],
		.to = o->id[i],
		.generation = o->gen[i],
		.old_generation = RELOC_NO_GENERATION,
		.class_id = o->info[i].cls,
		.size = o->size[i],
		.alive_gc = -1,
		.other = RELOC_NO_OBJECT,
	};
}

static inline void emit(const struct reloc *t, const struct reloc_step *s)
{
	t->hooks.step(t->hooks.ctx, s);
}

/* ---- New objects and counts ---------------------------------------------- */

/* The generation that the bounds in effect give id. */
static inline uint8_t generation_now(const struct reloc *t, ht_id id)
{
	const struct span *r = span_find(&t->bounds, id);

	return r ? r->gen : RELOC_NO_GENERATION;
}

static inline uint32_t alive_mark(const struct reloc *t)
{
	return (uint32_t)(t->last_gc + 1);
}

static inline bool is_promotion(unsigned before, unsigned after)
{
	return before != RELOC_NO_GENERATION && after != RELOC_NO_GENERATION &&
	       before < after && after <= 2;
}

static inline void count(uint64_t *objects, uint64_t *bytes, uint64_t size)
{
	(*objects)++;
	add_saturating(bytes, size);
}

/* ---- Given by one piece to the others ----------------------------------- */

/* relocation.c */
void reloc_normalize(struct spans *l);
int reloc_spans_of_bounds(struct spans *l, const struct ht_ev_generation_bounds *e);
int reloc_spans_copy(struct spans *to, const struct spans *from);
void reloc_radix_sort(uint32_t *idx, uint32_t *tmp, size_t n,
		      const uint64_t *key);
void reloc_objects_reorder(struct objects *o, size_t from, size_t m);
size_t reloc_add_object(struct reloc *t, ht_id id, ht_id cls, uint64_t size,
			uint8_t gen, uint64_t born, uint64_t event_index);
int reloc_allocated(struct reloc *t, const struct ht_ev_object_allocated *e,
		    const struct ht_replay_state *st);
void reloc_lose(struct reloc *t, size_t loser, size_t winner,
		enum reloc_cause cause, uint64_t event_index, int64_t gc);
int reloc_settle(struct reloc *t);

/* relocation_gc.c */
int reloc_apply_gc(struct reloc *t, bool finished, uint64_t event_index);
void reloc_emit_gc_summary(struct reloc *t);

/* relocation_dump.c */
int reloc_sighted(struct reloc *t, const struct ht_ev_object_references *e);

#endif
