/*
 * relocation.c - the tracker of relocation.h: objects followed through
 * GCs by their blocks, with deaths claimed only where proven.
 *
 * The objects are a table of parallel arrays. Its first n_sorted rows are
 * sorted by id; the rows after them are objects that arrived since the
 * table was last put in order (allocated, or first seen in a dump), in
 * arrival order. Anything that needs the order first "settles" the table:
 * the newcomers are radix sorted and merged in, in O(N + A).
 *
 * A GC is applied when it finishes (or when the trace shows it never
 * will). Its blocks, from any number of events in any order, are sorted
 * by old start and made disjoint; one walk over the objects and the
 * blocks together decides each object's fate and writes the new ids of
 * the moved ones in place. The objects that kept their ids are still in
 * order; the moved ones are in order within each block, so laying the
 * blocks out by destination puts them all in order (a radix sort steps in
 * when destinations overlap, which no sound runtime reports). A merge of
 * the two sequences gives the new order, and is where two objects that
 * claim one id are caught. The columns are then gathered into that order,
 * or, when it keeps the rows' order (a GC that slides objects down),
 * compacted in place.
 */
#include "analysis/relocation.h"
#include "util/alloc.h"
#include "util/search.h"
#include "util/membudget.h"
#include "util/sort.h"
#include "util/saturating.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static ht_id span_end(ht_id start, uint64_t length)
{
	return length > UINT64_MAX - start ? UINT64_MAX : start + length;
}

static uint8_t generation_byte(uint64_t g)
{
	return g <= HT_GEN_MAX ? (uint8_t)g : RELOC_NO_GENERATION;
}

static int compare_spans(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sorts and clips the spans so that each id lies in one at most. A span
 * that starts inside an earlier one loses what they share, its
 * destination shifted with its start. */
static void normalize(struct spans *l)
{
	ht_id reach = 0;
	size_t out = 0;

	if (!l->n)
		return;
	qsort(l->s, l->n, sizeof(*l->s), compare_spans);
	for (size_t i = 0; i < l->n; i++) {
		struct span x = l->s[i];

		if (x.end <= x.start || (out && x.end <= reach))
			continue;
		if (out && x.start < reach) {
			x.dest += reach - x.start;
			x.start = reach;
		}
		x.count = 0;
		l->s[out++] = x;
		reach = x.end;
	}
	l->n = out;
}

/* The span holding id, for ids visited in ascending order: *at only moves
 * forward. NULL when no span holds it. */
static struct span *span_at(const struct spans *l, size_t *at, ht_id id)
{
	while (*at < l->n && l->s[*at].end <= id)
		(*at)++;
	return *at < l->n && l->s[*at].start <= id ? &l->s[*at] : NULL;
}

/* The same for one id, by binary search. */
static const struct span *span_find(const struct spans *l, ht_id id)
{
	size_t lo = LOWER_BOUND(0, l->n, mid, l->s[mid].end <= id);

	return lo < l->n && l->s[lo].start <= id ? &l->s[lo] : NULL;
}

/* The generation ranges of a generation_bounds event, normalized. */
static int spans_of_bounds(struct spans *l,
			   const struct ht_ev_generation_bounds *e)
{
	if (ALLOC_GROW(l->s, e->count, l->cap) < 0)
		return -1;
	l->n = 0;
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_generation_range *r = &e->ranges[i];

		l->s[l->n++] = (struct span){
			.start = r->start,
			.end = span_end(r->start, r->length),
			.dest = r->start,
			.seq = (uint32_t)i,
			.kind = SPAN_RANGE,
			.gen = generation_byte(r->generation),
		};
	}
	normalize(l);
	return 0;
}

static int spans_copy(struct spans *to, const struct spans *from)
{
	if (ALLOC_GROW(to->s, from->n, to->cap) < 0)
		return -1;
	if (from->n)
		memcpy(to->s, from->s, from->n * sizeof(*from->s));
	to->n = from->n;
	return 0;
}

/* ---- Radix sort ---------------------------------------------------------- */

/* 11 bits a digit: the 27 bits in which the ids of a heap of a GiB differ
 * take three passes, where 8 bits took four; the counts of every digit
 * stay small enough for the cache. */
#define RADIX_BITS 11u
#define RADIX_BUCKETS (1u << RADIX_BITS)
#define RADIX_MAX_DIGITS ((64u + RADIX_BITS - 1) / RADIX_BITS)
#define RADIX_PREFETCH 16u /* rows: about a miss's latency of work */

/*
 * Sorts idx[0..n) by key[idx[k]], ascending and stable: least significant
 * digit first, over only the bits in which the keys differ (aligned
 * addresses share their low bits, one heap's addresses their high ones).
 * tmp has room for n. The keys are read in idx's order to find those bits
 * and to count every digit at once; each pass then reads them once more
 * to scatter. Keys already in order, as a runtime that walks its heap by
 * address reports them, are left as they are: the sort is stable, so that
 * is its answer.
 */
static void radix_sort(uint32_t *idx, uint32_t *tmp, size_t n,
		       const uint64_t *key)
{
	/* rows are uint32_t, so no count exceeds UINT32_MAX */
	static_assert(RADIX_MAX_DIGITS * RADIX_BUCKETS * sizeof(uint32_t) <=
			      64 * 1024,
		      "the counts fit on the stack");
	uint32_t count[RADIX_MAX_DIGITS][RADIX_BUCKETS];
	uint64_t low = UINT64_MAX, high = 0, differ = 0, prev = 0;
	uint32_t *src = idx, *dst = tmp;
	bool in_order = true;
	unsigned shift, digits;

	if (n < 2)
		return;
	for (size_t k = 0; k < n; k++) {
		uint64_t x = key[idx[k]];

		in_order &= x >= prev;
		prev = x;
		differ |= x ^ key[idx[0]];
		low = x < low ? x : low;
		high = x > high ? x : high;
	}
	if (in_order || !differ)
		return;
	/* the keys agree below the lowest bit in which any two differ */
	shift = (unsigned)__builtin_ctzll(differ);
	digits = ((64u - (unsigned)__builtin_clzll((high - low) >> shift)) +
		  RADIX_BITS - 1) / RADIX_BITS;
	memset(count, 0, digits * sizeof(count[0]));
	for (size_t k = 0; k < n; k++) {
		uint64_t v = (key[idx[k]] - low) >> shift;

		for (unsigned d = 0; d < digits; d++)
			count[d][v >> (d * RADIX_BITS) & (RADIX_BUCKETS - 1)]++;
	}
	for (unsigned d = 0; d < digits; d++) {
		uint32_t at = 0;

		for (unsigned b = 0; b < RADIX_BUCKETS; b++) {
			uint32_t c = count[d][b];

			count[d][b] = at;
			at += c;
		}
	}
	for (unsigned d = 0; d < digits; d++) {
		uint32_t *place = count[d], *swap;

		for (size_t k = 0; k < n; k++) {
			uint64_t v;

			/* the keys are read at random after the first pass:
			 * asked for a few rows before they are needed */
			if (k + RADIX_PREFETCH < n)
				__builtin_prefetch(&key[src[k + RADIX_PREFETCH]]);
			v = (key[src[k]] - low) >> shift;
			dst[place[v >> (d * RADIX_BITS) &
				  (RADIX_BUCKETS - 1)]++] = src[k];
		}
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != idx)
		memcpy(idx, src, n * sizeof(*idx));
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

static void objects_free(struct objects *o)
{
	free(o->id);
	free(o->prev);
	free(o->size);
	free(o->gen);
	free(o->flags);
	free(o->alive);
	free(o->info);
	free(o->scratch);
	free(o->scratch32);
	free(o->scratch8);
	free(o->scratch_info);
	free(o->perm);
}

/* Every column keeps the same capacity, so that a gathered column and
 * the scratch of its width can trade places. */
static int objects_reserve(struct objects *o, size_t need)
{
	/* every column, the scratch of each width, perm: by row */
	uint64_t row = sizeof(*o->id) + sizeof(*o->size) + sizeof(*o->scratch) +
		       2 * sizeof(*o->info) + 2 * sizeof(*o->alive) +
		       3 * sizeof(*o->gen) + sizeof(*o->perm) +
		       (o->with_prev ? sizeof(*o->prev) : 0);
	uint64_t more;
	size_t cap;

	if (need <= o->cap)
		return 0;
	cap = grown_capacity(o->cap, need, sizeof(uint64_t));
	more = (uint64_t)(cap - o->cap) * row;
	if (cap == 0 || mem_budget_charge(more) < 0)
		return -1;
	o->charged += more;
	if (RESIZE_ARRAY(o->id, cap) < 0 ||
	    (o->with_prev && RESIZE_ARRAY(o->prev, cap) < 0) ||
	    RESIZE_ARRAY(o->size, cap) < 0 ||
	    RESIZE_ARRAY(o->gen, cap) < 0 ||
	    RESIZE_ARRAY(o->flags, cap) < 0 ||
	    RESIZE_ARRAY(o->alive, cap) < 0 ||
	    RESIZE_ARRAY(o->info, cap) < 0 ||
	    RESIZE_ARRAY(o->scratch, cap) < 0 ||
	    RESIZE_ARRAY(o->scratch32, cap) < 0 ||
	    RESIZE_ARRAY(o->scratch8, cap) < 0 ||
	    RESIZE_ARRAY(o->scratch_info, cap) < 0 ||
	    RESIZE_ARRAY(o->perm, cap) < 0)
		return -1;
	o->cap = cap;
	return 0;
}

/*
 * A whole column is gathered into the scratch of its width, which then
 * trades places with it (and serves the next column of that width); a
 * column's tail is gathered and copied back.
 */
#define GATHER(column, scratch, perm, from, m)                          \
	do {                                                            \
		__typeof__(column) src_ = (column), dst_ = (scratch);   \
		for (size_t k_ = 0; k_ < (m); k_++)                     \
			dst_[k_] = src_[(perm)[k_]];                    \
		if ((from) == 0) {                                      \
			(column) = dst_;                                \
			(scratch) = src_;                               \
		} else if (m) {                                         \
			memcpy(src_ + (from), dst_, (m) * sizeof(*src_)); \
		}                                                       \
	} while (0)

/* Rows from + k become what rows o->perm[k] (each at or after from) were,
 * for k < m; rows before `from` stay. The table is then from + m rows,
 * all sorted. */
static void objects_permute(struct objects *o, size_t from, size_t m)
{
	const uint32_t *perm = o->perm;

	GATHER(o->id, o->scratch, perm, from, m);
	if (o->prev)
		GATHER(o->prev, o->scratch, perm, from, m);
	GATHER(o->size, o->scratch, perm, from, m);
	GATHER(o->gen, o->scratch8, perm, from, m);
	GATHER(o->flags, o->scratch8, perm, from, m);
	GATHER(o->alive, o->scratch32, perm, from, m);
	GATHER(o->info, o->scratch_info, perm, from, m);
	o->n = o->n_sorted = from + m;
}

/* The same when the rows keep their order (o->perm rising), as after a
 * GC that slides objects down without reordering them: each row moves
 * down in place, if at all, with no scratch. */
static void objects_compact(struct objects *o, size_t from, size_t m)
{
	for (size_t k = 0; k < m; k++) {
		size_t to = from + k, row = o->perm[k];

		if (row == to)
			continue;
		o->id[to] = o->id[row];
		if (o->prev)
			o->prev[to] = o->prev[row];
		o->size[to] = o->size[row];
		o->gen[to] = o->gen[row];
		o->flags[to] = o->flags[row];
		o->alive[to] = o->alive[row];
		o->info[to] = o->info[row];
	}
	o->n = o->n_sorted = from + m;
}

/* Rows from + k become rows o->perm[k], in place when the order allows. */
static void objects_reorder(struct objects *o, size_t from, size_t m)
{
	for (size_t k = 1; k < m; k++) {
		if (o->perm[k] <= o->perm[k - 1]) {
			objects_permute(o, from, m);
			return;
		}
	}
	objects_compact(o, from, m);
}

static enum fate fate_of(const struct objects *o, size_t i)
{
	return (enum fate)((o->flags[i] & FATE_MASK) >> FATE_SHIFT);
}

static void set_fate(struct objects *o, size_t i, enum fate f)
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

struct reloc *reloc_new(bool reports_survivors, const struct reloc_hooks *hooks)
{
	struct reloc *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->reports_survivors = reports_survivors;
	if (hooks)
		t->hooks = *hooks;
	t->last_gc = -1;
	return t;
}

void reloc_free(struct reloc *t)
{
	if (!t)
		return;
	objects_free(&t->obj);
	free(t->bounds.s);
	free(t->gc.start.s);
	free(t->gc.finish.s);
	free(t->gc.blocks.s);
	free(t->dump.id);
	free(t->dump.cls);
	free(t->dump.size);
	free(t->dump.gen);
	free(t->watch);
	free(t->tail_event);
	free(t->movers);
	free(t->order);
	free(t->dump_order);
	free(t->age);
	free(t->ages);
	free(t->dead);
	free(t->landing);
	mem_budget_release(t->charged + t->obj.charged + t->dump.charged);
	free(t);
}

static int fail(struct reloc *t, const char *why)
{
	if (!t->failed)
		snprintf(t->error, sizeof(t->error), "%s", why);
	t->failed = true;
	return RELOC_STOP;
}

static int out_of_memory(struct reloc *t)
{
	char why[96];

	if (mem_budget_exceeded()) {
		snprintf(why, sizeof(why), MEM_BUDGET_MESSAGE,
			 mem_budget_limit());
		return fail(t, why);
	}
	return fail(t, "out of memory tracking objects across GCs");
}

const char *reloc_error(const struct reloc *t)
{
	return t->failed ? t->error : "";
}

void reloc_get_totals(const struct reloc *t, struct reloc_totals *totals)
{
	*totals = t->totals;
	totals->objects = t->next_serial;
	totals->gcs = t->gcs_applied;
}

/* ---- Watching ------------------------------------------------------------ */

int reloc_watch_object(struct reloc *t, uint32_t serial)
{
	size_t at = t->n_watch;

	while (at > 0 && t->watch[at - 1] > serial)
		at--;
	if (at > 0 && t->watch[at - 1] == serial)
		return 0;
	if (ALLOC_GROW(t->watch, t->n_watch + 1, t->cap_watch) < 0)
		return -1;
	memmove(t->watch + at + 1, t->watch + at,
		(t->n_watch - at) * sizeof(*t->watch));
	t->watch[at] = serial;
	t->n_watch++;
	return 0;
}

void reloc_prove(struct reloc *t)
{
	t->proving = true;
	t->obj.with_prev = true;
}

void reloc_watch_id(struct reloc *t, ht_id id)
{
	t->watching_id = true;
	t->watch_id = id;
}

static bool serial_watched(const struct reloc *t, uint32_t serial)
{
	size_t lo = LOWER_BOUND(0, t->n_watch, mid, t->watch[mid] < serial);

	return lo < t->n_watch && t->watch[lo] == serial;
}

/* An object starts being watched when it takes the watched id. */
static void watch_if_holding(struct reloc *t, size_t i)
{
	if (t->watching_id && t->obj.id[i] == t->watch_id)
		t->obj.flags[i] |= WATCHED;
}

/* ---- Steps --------------------------------------------------------------- */

static bool is_watched(const struct reloc *t, size_t i)
{
	return t->hooks.step && (t->obj.flags[i] & WATCHED);
}

/* A step of row i as it is now; the caller sets what differs. */
static struct reloc_step step_of(const struct reloc *t,
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

static void emit(const struct reloc *t, const struct reloc_step *s)
{
	t->hooks.step(t->hooks.ctx, s);
}

/* ---- The proof ----------------------------------------------------------- */

/* Whether the rules hold row i at its id: the proof may claim. */
static bool placed(const struct reloc *t, size_t i)
{
	return t->proving && !(t->obj.flags[i] & UNPLACED);
}

/* A contradiction about row i, as it is now; the caller sets what the
 * dump showed. */
static struct reloc_inconsistency inconsistency_of(
	const struct reloc *t, enum reloc_inconsistency_kind kind, size_t i,
	int64_t dump, uint64_t event_index)
{
	const struct objects *o = &t->obj;

	return (struct reloc_inconsistency){
		.kind = kind,
		.cause = RELOC_CAUSE_NONE,
		.object = o->info[i].serial,
		.gc = (int64_t)o->alive[i] - 1,
		.dump = dump,
		.event_index = event_index,
		.old_id = o->prev ? o->prev[i] : o->id[i],
		.predicted_id = o->id[i],
		.class_id = o->info[i].cls,
		.size = o->size[i],
	};
}

static void report_inconsistency(const struct reloc *t,
				 const struct reloc_inconsistency *x)
{
	if (t->hooks.inconsistent)
		t->hooks.inconsistent(t->hooks.ctx, x);
}

/* ---- New objects --------------------------------------------------------- */

/* The generation that the bounds in effect give id. */
static uint8_t generation_now(const struct reloc *t, ht_id id)
{
	const struct span *r = span_find(&t->bounds, id);

	return r ? r->gen : RELOC_NO_GENERATION;
}

static uint32_t alive_mark(const struct reloc *t)
{
	return (uint32_t)(t->last_gc + 1);
}

/* A row for a newly tracked object, after the others (it waits to be
 * sorted in). Its index, or SIZE_MAX (t->failed set). */
static size_t add_object(struct reloc *t, ht_id id, ht_id cls, uint64_t size,
			 uint8_t gen, uint64_t born, uint64_t event_index)
{
	struct objects *o = &t->obj;
	size_t i = o->n, tail = o->n - o->n_sorted;

	if (t->next_serial >= RELOC_NO_OBJECT || o->n >= UINT32_MAX - 1) {
		fail(t, "more objects than the tracker can number (2^32 - 1)");
		return SIZE_MAX;
	}
	if (objects_reserve(o, o->n + 1) < 0 ||
	    BUDGET_GROW(t->tail_event, tail + 1, t->cap_tail_event,
			t->charged) < 0) {
		out_of_memory(t);
		return SIZE_MAX;
	}
	o->id[i] = id;
	if (o->prev)
		o->prev[i] = id;
	o->info[i].cls = cls;
	o->size[i] = size;
	o->info[i].serial = (uint32_t)t->next_serial++;
	o->info[i].born = (uint32_t)born;
	o->alive[i] = alive_mark(t);
	o->gen[i] = gen;
	o->flags[i] = serial_watched(t, o->info[i].serial) ? WATCHED : 0;
	t->tail_event[tail] = event_index;
	o->n++;
	watch_if_holding(t, i);
	return i;
}

static int allocated(struct reloc *t, const struct ht_ev_object_allocated *e,
		     const struct ht_replay_state *st)
{
	size_t i = add_object(t, e->id, e->class_id, e->size,
			      generation_now(t, e->id), t->gcs_applied,
			      st->event_index);
	struct reloc_step s;

	if (i == SIZE_MAX)
		return RELOC_STOP;
	if (is_watched(t, i)) {
		s = step_of(t, RELOC_ALLOCATED, i, st->event_index);
		s.from = 0;
		emit(t, &s);
	}
	return 0;
}

/* ---- Settling the table -------------------------------------------------- */

/* Row `loser` gave its id to row `winner`. */
static void lose(struct reloc *t, size_t loser, size_t winner,
		 enum reloc_cause cause, uint64_t event_index, int64_t gc)
{
	struct reloc_step s;

	t->totals.lost++;
	if (!is_watched(t, loser))
		return;
	s = step_of(t, RELOC_LOST, loser, event_index);
	s.cause = cause;
	s.gc = gc;
	s.to = 0;
	s.other = t->obj.info[winner].serial;
	emit(t, &s);
}

/* The first sorted row with an id at least id. */
static size_t first_at_or_after(const struct objects *o, ht_id id)
{
	return LOWER_BOUND(0, o->n_sorted, mid, o->id[mid] < id);
}

/* The first sorted row that settling may change: the first one flagged
 * GONE, or the first at or after the lowest waiting id. Allocations
 * mostly come above every tracked id, and then only they move. */
static size_t first_unsettled(const struct reloc *t, size_t waiting)
{
	const struct objects *o = &t->obj;
	size_t from = waiting ? first_at_or_after(o, o->id[t->order[0]])
			      : o->n_sorted;

	for (size_t i = 0; t->has_gone && i < from; i++)
		if (o->flags[i] & GONE)
			return i;
	return from;
}

/*
 * Sorts the waiting rows in among the others and drops the rows flagged
 * GONE. Two rows at one id: the waiting one was allocated over the other
 * (or over an earlier waiting one), which is lost to it.
 */
static int settle(struct reloc *t)
{
	struct objects *o = &t->obj;
	size_t waiting = o->n - o->n_sorted;
	size_t from, i, j = 0, k = 0;

	if (!waiting && !t->has_gone)
		return 0;
	if (BUDGET_GROW(t->order, waiting, t->cap_order, t->charged) < 0 ||
	    BUDGET_GROW(t->movers, waiting, t->cap_movers, t->charged) < 0)
		return out_of_memory(t);
	for (size_t w = 0; w < waiting; w++)
		t->order[w] = (uint32_t)(o->n_sorted + w);
	radix_sort(t->order, t->movers, waiting, o->id);
	from = first_unsettled(t, waiting);
	i = from;
	for (;;) {
		size_t c;

		while (i < o->n_sorted && (o->flags[i] & GONE))
			i++;
		if (i < o->n_sorted &&
		    (j == waiting || o->id[i] <= o->id[t->order[j]]))
			c = i++;
		else if (j < waiting)
			c = t->order[j++];
		else
			break;
		if (k && o->id[o->perm[k - 1]] == o->id[c]) {
			lose(t, o->perm[k - 1], c, RELOC_LOST_ALLOCATION,
			     c >= o->n_sorted ? t->tail_event[c - o->n_sorted]
					      : t->events, -1);
			o->perm[k - 1] = (uint32_t)c;
			continue;
		}
		o->perm[k++] = (uint32_t)c;
	}
	objects_reorder(o, from, k);
	t->has_gone = false;
	return 0;
}

/* ---- Applying a GC ------------------------------------------------------- */

static bool collects(uint32_t generations, unsigned gen)
{
	return gen <= HT_GEN_MAX && (generations >> gen & 1u);
}

/* Every generation the trace has shown, 0 to 2 at least. */
static bool collects_everything(const struct reloc *t, uint32_t generations)
{
	uint32_t all = t->shown | 0x7u;

	return (generations & all) == all;
}

static bool is_promotion(unsigned before, unsigned after)
{
	return before != RELOC_NO_GENERATION && after != RELOC_NO_GENERATION &&
	       before < after && after <= 2;
}

/* What the GC decides for one object, and the rules it decides by. */
struct gc_walk {
	const struct spans *blocks;
	const struct spans *ranges;   /* bounds for (a), or none */
	uint32_t generations;
	bool may_kill_by_bounds;      /* (a) can apply */
	bool may_kill_all;            /* (b) can apply */
	uint64_t event_index;
	size_t at_block, at_range;
	size_t movers;
};

static enum fate decide(struct gc_walk *w, struct objects *o, size_t i,
			struct span **block)
{
	const struct span *r = span_at(w->ranges, &w->at_range, o->id[i]);
	unsigned gen = r ? r->gen : o->gen[i];

	/* the freshest word on its generation: the bounds at the start */
	o->gen[i] = (uint8_t)gen;
	/* a runtime reports no blocks for generations it does not collect,
	 * so a block over such an object says nothing of it */
	if (gen != RELOC_NO_GENERATION && !collects(w->generations, gen))
		return FATE_UNTOUCHED;
	*block = span_at(w->blocks, &w->at_block, o->id[i]);
	if (*block)
		return (*block)->dest != (*block)->start ? FATE_MOVED
							  : FATE_SURVIVED;
	if (w->may_kill_by_bounds && r && r->gen != RELOC_NO_GENERATION)
		return FATE_DIED;
	if (w->may_kill_all)
		return FATE_DIED;
	return FATE_KEPT;
}

static void count(uint64_t *objects, uint64_t *bytes, uint64_t size)
{
	(*objects)++;
	add_saturating(bytes, size);
}

static enum reloc_step_kind step_kind_of(enum fate f)
{
	switch (f) {
	case FATE_MOVED:
		return RELOC_MOVED;
	case FATE_SURVIVED:
		return RELOC_SURVIVED;
	case FATE_KEPT:
		return RELOC_KEPT;
	case FATE_DIED:
		return RELOC_DIED;
	default:
		return RELOC_UNTOUCHED;
	}
}

/* Row i died by the GC being applied: kept for the proof, which holds it
 * against the GC's own dump. Out of memory stops the tracker after the
 * walk. */
static void note_dead(struct reloc *t, size_t i)
{
	const struct objects *o = &t->obj;

	if (BUDGET_GROW(t->dead, t->n_dead + 1, t->cap_dead, t->charged) < 0) {
		out_of_memory(t);
		return;
	}
	t->dead[t->n_dead++] = (struct dead_object){
		.id = o->id[i],
		.cls = o->info[i].cls,
		.size = o->size[i],
		.serial = o->info[i].serial,
		.prev = o->prev ? o->prev[i] : o->id[i],
	};
}

/* One object through the GC: its fate, its new id in place, its count. */
static void walk_one(struct reloc *t, struct gc_walk *w, size_t i)
{
	struct objects *o = &t->obj;
	struct reloc_gc_summary *g = &t->gc.sum;
	struct span *b = NULL;
	ht_id from = o->id[i];
	enum fate f;
	struct reloc_step s;

	o->flags[i] &= (uint8_t)~PROMOTED_NOW;
	f = decide(w, o, i, &b);
	set_fate(o, i, f);
	switch (f) {
	case FATE_MOVED:
		o->id[i] = b->dest + (from - b->start);
		if (o->prev)
			o->prev[i] = from;
		/* a block re-places only what was placed (UNPLACED) */
		watch_if_holding(t, i);
		if (!b->count++)
			b->first = (uint32_t)w->movers;
		t->movers[w->movers++] = (uint32_t)i;
		o->alive[i] = (uint32_t)(t->gc.number + 1);
		count(&g->moved_objects, &g->moved_bytes, o->size[i]);
		break;
	case FATE_SURVIVED:
		o->alive[i] = (uint32_t)(t->gc.number + 1);
		count(&g->survived_objects, &g->survived_bytes, o->size[i]);
		break;
	case FATE_KEPT:
		o->flags[i] |= UNPLACED;
		count(&g->kept_objects, &g->kept_bytes, o->size[i]);
		break;
	case FATE_UNTOUCHED:
		count(&g->untouched_objects, &g->untouched_bytes, o->size[i]);
		break;
	case FATE_DIED:
		count(&g->died_objects, &g->died_bytes, o->size[i]);
		t->totals.died++;
		if (t->proving)
			note_dead(t, i);
		break;
	}
	if (!is_watched(t, i))
		return;
	s = step_of(t, step_kind_of(f), i, w->event_index);
	s.gc = t->gc.number;
	s.from = from;
	if (f == FATE_DIED) {
		s.to = 0;
		s.cause = w->may_kill_all ? RELOC_DIED_FULL_GC
					  : RELOC_DIED_BOUNDS;
	}
	emit(t, &s);
}

struct destination {
	ht_id dest;
	uint32_t span;
};

static int compare_destinations(const void *a, const void *b)
{
	const struct destination *x = a, *y = b;

	if (x->dest != y->dest)
		return x->dest < y->dest ? -1 : 1;
	return (x->span > y->span) - (x->span < y->span);
}

/* The moved rows in order of new id, into t->order: each block's rows
 * are in order, so the blocks laid out by destination give the order
 * unless their destinations overlap, which the blocks alone tell. */
static int order_movers(struct reloc *t, const struct spans *blocks,
			size_t m)
{
	struct destination *d;
	size_t nd = 0, k = 0;
	ht_id reach = 0;
	bool sorted = true;

	if (BUDGET_GROW(t->order, m, t->cap_order, t->charged) < 0)
		return -1;
	d = malloc((blocks->n ? blocks->n : 1) * sizeof(*d));
	if (!d)
		return -1;
	for (size_t b = 0; b < blocks->n; b++)
		if (blocks->s[b].count)
			d[nd++] = (struct destination){blocks->s[b].dest,
						       (uint32_t)b};
	qsort(d, nd, sizeof(*d), compare_destinations);
	for (size_t x = 0; x < nd; x++) {
		const struct span *b = &blocks->s[d[x].span];
		ht_id dest_end = span_end(b->dest, b->end - b->start);

		if (x && b->dest < reach)
			sorted = false;
		if (dest_end > reach)
			reach = dest_end;
		memcpy(t->order + k, t->movers + b->first,
		       b->count * sizeof(*t->order));
		k += b->count;
	}
	free(d);
	if (!sorted)
		radix_sort(t->order, t->movers, m, t->obj.id);
	return 0;
}

static bool proven_alive(const struct objects *o, size_t i)
{
	enum fate f = fate_of(o, i);

	return f == FATE_MOVED || f == FATE_SURVIVED;
}

/* Two rows claim one id after the GC: both cannot be live. The one whose
 * place no block proves loses; between equals, the older. Returns the
 * winner. */
static size_t settle_claim(struct reloc *t, size_t a, size_t b,
			   uint64_t event_index)
{
	const struct objects *o = &t->obj;
	struct reloc_gc_summary *g = &t->gc.sum;
	size_t loser, winner;

	if (proven_alive(o, a) != proven_alive(o, b))
		loser = proven_alive(o, a) ? b : a;
	else
		loser = o->info[a].serial < o->info[b].serial ? a : b;
	winner = loser == a ? b : a;
	count(&g->lost_objects, &g->lost_bytes, o->size[loser]);
	lose(t, loser, winner, RELOC_LOST_BLOCK, event_index, t->gc.number);
	return winner;
}

/* The rows that kept their ids (in order) merged with the moved ones (in
 * t->order) into o->perm: the new table has that many rows. */
static size_t merge_after_gc(struct reloc *t, size_t m, uint64_t event_index)
{
	struct objects *o = &t->obj;
	size_t i = 0, j = 0, k = 0;
	ht_id last = 0;

	for (;;) {
		size_t c;

		while (i < o->n && (fate_of(o, i) == FATE_MOVED ||
				    fate_of(o, i) == FATE_DIED))
			i++;
		if (i < o->n && (j == m || o->id[i] <= o->id[t->order[j]]))
			c = i++;
		else if (j < m)
			c = t->order[j++];
		else
			break;
		if (k && last == o->id[c]) {
			o->perm[k - 1] = (uint32_t)settle_claim(
				t, o->perm[k - 1], c, event_index);
		} else {
			o->perm[k++] = (uint32_t)c;
			last = o->id[c];
		}
	}
	return k;
}

/* The generations the bounds at the GC's finish give: promotions. */
static void apply_finish_bounds(struct reloc *t, uint64_t event_index)
{
	struct objects *o = &t->obj;
	struct reloc_gc_summary *g = &t->gc.sum;
	size_t at = 0;

	for (size_t i = 0; i < o->n; i++) {
		const struct span *r = span_at(&t->gc.finish, &at, o->id[i]);
		struct reloc_step s;

		if (!r || r->gen == o->gen[i])
			continue;
		if (is_promotion(o->gen[i], r->gen)) {
			count(&g->promoted_objects, &g->promoted_bytes,
			      o->size[i]);
			o->flags[i] |= PROMOTED_NOW;
			if (is_watched(t, i)) {
				s = step_of(t, RELOC_PROMOTED, i, event_index);
				s.gc = t->gc.number;
				s.old_generation = o->gen[i];
				s.generation = r->gen;
				emit(t, &s);
			}
		}
		o->gen[i] = r->gen;
	}
}

static void emit_gc_summary(struct reloc *t)
{
	t->gc.summary_waits = false;
	if (t->hooks.gc_done)
		t->hooks.gc_done(t->hooks.ctx, &t->gc.sum);
}

/*
 * Applies the open GC to every object. An unfinished GC (the trace ends
 * inside it, or another begins) may lack blocks, so it claims no death.
 */
static int apply_gc(struct reloc *t, bool finished, uint64_t event_index)
{
	struct gc_state *gc = &t->gc;
	struct objects *o = &t->obj;
	bool has_bounds = gc->start_source != RELOC_BOUNDS_NONE &&
			  gc->start.n > 0;
	bool may_kill = finished && t->reports_survivors;
	struct gc_walk w = {
		.blocks = &gc->blocks,
		.ranges = &gc->start,
		.generations = gc->generations,
		.may_kill_by_bounds = may_kill && has_bounds,
		.may_kill_all = may_kill && !has_bounds &&
				collects_everything(t, gc->generations),
		.event_index = event_index,
	};
	size_t rows;

	gc->open = false;
	if (settle(t) != 0)
		return RELOC_STOP;
	if (BUDGET_GROW(t->movers, o->n, t->cap_movers, t->charged) < 0)
		return out_of_memory(t);
	normalize(&gc->blocks);
	gc->sum.gc = gc->number;
	gc->sum.generations = gc->generations;
	gc->sum.finished = finished;
	gc->sum.bounds = has_bounds ? gc->start_source : RELOC_BOUNDS_NONE;
	t->n_dead = 0;
	t->dead_by_full_gc = w.may_kill_all;
	t->landing_ready = false;
	for (size_t i = 0; i < o->n; i++)
		walk_one(t, &w, i);
	if (t->failed)
		return RELOC_STOP;
	if (order_movers(t, &gc->blocks, w.movers) < 0)
		return out_of_memory(t);
	rows = merge_after_gc(t, w.movers, event_index);
	objects_reorder(o, 0, rows);
	if (gc->has_finish)
		apply_finish_bounds(t, event_index);
	t->gcs_applied++;
	if (t->dump.open && t->dump.gc_dump && t->dump.gc == gc->number)
		gc->summary_waits = true;
	else
		emit_gc_summary(t);
	return 0;
}

/* ---- GC events ----------------------------------------------------------- */

static int gc_started(struct reloc *t, const struct ht_ev_gc_started *e,
		      const struct ht_replay_state *st)
{
	struct gc_state *gc = &t->gc;

	if (gc->open && apply_gc(t, false, st->event_index) != 0)
		return RELOC_STOP;
	if (gc->summary_waits)
		emit_gc_summary(t);
	gc->open = true;
	gc->number = st->gc;
	gc->generations = e->generations;
	gc->in_body = false;
	gc->has_finish = false;
	gc->blocks.n = 0;
	gc->finish.n = 0;
	gc->seq = 0;
	memset(&gc->sum, 0, sizeof(gc->sum));
	/* until bounds come at its start, the last ones before it rule */
	if (spans_copy(&gc->start, &t->bounds) < 0)
		return out_of_memory(t);
	gc->start_source = t->bounds.n ? RELOC_BOUNDS_BEFORE
				       : RELOC_BOUNDS_NONE;
	t->shown |= e->generations;
	t->last_gc = st->gc;
	return 0;
}

/*
 * Bounds inside a GC before its body are its start bounds (the first
 * ones that hold a range); any later ones, after its body or a second
 * set before it, are its finish bounds. Outside a GC they are simply the
 * bounds in effect.
 */
static int bounds(struct reloc *t, const struct ht_ev_generation_bounds *e)
{
	struct gc_state *gc = &t->gc;

	if (spans_of_bounds(&t->bounds, e) < 0)
		return out_of_memory(t);
	for (size_t i = 0; i < e->count; i++)
		if (e->ranges[i].generation <= HT_GEN_MAX)
			t->shown |= 1u << e->ranges[i].generation;
	if (!gc->open)
		return 0;
	if (!gc->in_body && gc->start_source != RELOC_BOUNDS_START) {
		if (t->bounds.n == 0)
			return 0;
		if (spans_copy(&gc->start, &t->bounds) < 0)
			return out_of_memory(t);
		gc->start_source = RELOC_BOUNDS_START;
		return 0;
	}
	if (spans_copy(&gc->finish, &t->bounds) < 0)
		return out_of_memory(t);
	gc->has_finish = true;
	return 0;
}

static int add_block(struct reloc *t, ht_id old, ht_id dest, uint64_t length,
		     enum span_kind kind)
{
	struct spans *l = &t->gc.blocks;

	if (BUDGET_GROW(l->s, l->n + 1, l->cap, t->charged) < 0)
		return out_of_memory(t);
	l->s[l->n++] = (struct span){
		.start = old,
		.end = span_end(old, length),
		.dest = dest,
		.seq = t->gc.seq++,
		.kind = (uint8_t)kind,
	};
	return 0;
}

static int moved(struct reloc *t, const struct ht_ev_moved_references *e)
{
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_moved_block *b = &e->blocks[i];

		if (add_block(t, b->old_id, b->new_id, b->length,
			      SPAN_MOVED) != 0)
			return RELOC_STOP;
	}
	return 0;
}

static int surviving(struct reloc *t,
		     const struct ht_ev_surviving_references *e)
{
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_surviving_block *b = &e->blocks[i];

		if (add_block(t, b->start, b->start, b->length,
			      SPAN_SURVIVING) != 0)
			return RELOC_STOP;
	}
	return 0;
}

/* ---- Dumps --------------------------------------------------------------- */

int reloc_on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	struct reloc *t = ctx;
	struct dump_state *d = &t->dump;

	if (t->failed)
		return RELOC_STOP;
	d->open = true;
	d->number = st->dump;
	d->gc_dump = st->gc_dump;
	d->gc = st->gc;
	d->n = 0;
	return 0;
}

/* The dump's columns share one capacity. */
static int dump_reserve(struct dump_state *d, size_t need)
{
	uint64_t row = sizeof(*d->id) + sizeof(*d->cls) + sizeof(*d->size) +
		       sizeof(*d->gen);
	uint64_t more;
	size_t cap;

	if (need <= d->cap)
		return 0;
	cap = grown_capacity(d->cap, need, sizeof(uint64_t));
	more = (uint64_t)(cap - d->cap) * row;
	if (cap == 0 || mem_budget_charge(more) < 0)
		return -1;
	d->charged += more;
	if (RESIZE_ARRAY(d->id, cap) < 0 ||
	    RESIZE_ARRAY(d->cls, cap) < 0 ||
	    RESIZE_ARRAY(d->size, cap) < 0 ||
	    RESIZE_ARRAY(d->gen, cap) < 0)
		return -1;
	d->cap = cap;
	return 0;
}

static int sighted(struct reloc *t, const struct ht_ev_object_references *e)
{
	struct dump_state *d = &t->dump;

	if (dump_reserve(d, d->n + 1) < 0)
		return out_of_memory(t);
	d->id[d->n] = e->id;
	d->cls[d->n] = e->class_id;
	d->size[d->n] = e->size;
	d->gen[d->n] = e->has_generation ? generation_byte(e->generation)
					 : RELOC_NO_GENERATION;
	if (e->has_generation && e->generation <= HT_GEN_MAX)
		t->shown |= 1u << e->generation;
	d->n++;
	return 0;
}

/* The ages of a dump's objects, counted as they are met. */
static int count_age(struct reloc *t, uint64_t age, uint64_t size)
{
	size_t old = t->cap_age;

	if (ALLOC_GROW(t->age, age + 1, t->cap_age) < 0)
		return -1;
	if (t->cap_age > old)
		memset(t->age + old, 0, (t->cap_age - old) * sizeof(*t->age));
	t->age[age].count++;
	add_saturating(&t->age[age].bytes, size);
	return 0;
}

/* The counted ages as a list (the counts reset for the next dump). */
static int collect_ages(struct reloc *t, struct reloc_dump_summary *sum)
{
	size_t n = 0;

	for (size_t a = 0; a < t->cap_age; a++)
		n += t->age[a].count != 0;
	if (ALLOC_GROW(t->ages, n, t->cap_ages) < 0)
		return -1;
	n = 0;
	for (size_t a = 0; a < t->cap_age; a++) {
		if (!t->age[a].count)
			continue;
		t->ages[n++] = (struct reloc_age){a, t->age[a].count,
						  t->age[a].bytes};
		t->age[a] = (struct age_slot){0, 0};
	}
	sum->ages = t->ages;
	sum->n_ages = n;
	return 0;
}

/* Objects this dump reports: never two of one id, the first kept. */
static int order_sightings(struct reloc *t, size_t *distinct)
{
	struct dump_state *d = &t->dump;
	size_t n = 0;

	if (BUDGET_GROW(t->dump_order, d->n, t->cap_dump_order,
			t->charged) < 0 ||
	    BUDGET_GROW(t->order, d->n, t->cap_order, t->charged) < 0)
		return -1;
	for (size_t k = 0; k < d->n; k++)
		t->dump_order[k] = (uint32_t)k;
	radix_sort(t->dump_order, t->order, d->n, d->id);
	for (size_t k = 0; k < d->n; k++)
		if (!n || d->id[t->dump_order[k]] !=
			  d->id[t->dump_order[n - 1]])
			t->dump_order[n++] = t->dump_order[k];
	*distinct = n;
	return 0;
}

/* A dump's context for its objects. */
struct dump_walk {
	int64_t dump;
	bool gc_dump;
	bool complete;
	bool prove;               /* its ids are those the rules predict */
	int64_t own_gc;           /* a GC's own complete dump: the GC */
	uint64_t event_index;
	struct reloc_dump_summary sum;
};

static bool same_object(const struct reloc *t, size_t i, size_t k)
{
	const struct objects *o = &t->obj;
	const struct dump_state *d = &t->dump;
	ht_id cls = o->info[i].cls;

	return (!cls || !d->cls[k] || cls == d->cls[k]) &&
	       (!o->size[i] || !d->size[k] || o->size[i] == d->size[k]);
}

/* A tracked object that the dump reports. */
static int seen(struct reloc *t, struct dump_walk *w, size_t i, size_t k)
{
	struct objects *o = &t->obj;
	const struct dump_state *d = &t->dump;
	unsigned dgen = d->gen[k];
	struct reloc_step s;

	if (!o->info[i].cls)
		o->info[i].cls = d->cls[k];
	if (!o->size[i])
		o->size[i] = d->size[k];
	o->alive[i] = alive_mark(t);
	o->flags[i] &= (uint8_t)~UNPLACED;
	/* a GC's own references may tell of a promotion its finishing
	 * bounds did not */
	if (dgen != RELOC_NO_GENERATION && w->gc_dump &&
	    !(o->flags[i] & PROMOTED_NOW) && is_promotion(o->gen[i], dgen)) {
		count(&t->gc.sum.promoted_objects, &t->gc.sum.promoted_bytes,
		      o->size[i]);
		o->flags[i] |= PROMOTED_NOW;
		if (is_watched(t, i)) {
			s = step_of(t, RELOC_PROMOTED, i, w->event_index);
			s.gc = d->gc;
			s.old_generation = o->gen[i];
			s.generation = dgen;
			emit(t, &s);
		}
	}
	if (dgen != RELOC_NO_GENERATION)
		o->gen[i] = (uint8_t)dgen;
	w->sum.objects++;
	if (is_watched(t, i)) {
		s = step_of(t, RELOC_SEEN, i, w->event_index);
		s.dump = w->dump;
		emit(t, &s);
	}
	return count_age(t, t->gcs_applied - o->info[i].born, o->size[i]);
}

/* An object the dump reports first; its row waits to be sorted in. A GC's
 * references use the ids after it, so the object was there before it. */
static int first_seen(struct reloc *t, struct dump_walk *w, size_t k)
{
	const struct dump_state *d = &t->dump;
	uint64_t born = t->gcs_applied;
	uint8_t gen = d->gen[k];
	size_t i;
	struct reloc_step s;

	if (w->gc_dump && born > 0)
		born--;
	if (gen == RELOC_NO_GENERATION)
		gen = generation_now(t, d->id[k]);
	i = add_object(t, d->id[k], d->cls[k], d->size[k], gen, born,
		       w->event_index);
	if (i == SIZE_MAX)
		return RELOC_STOP;
	w->sum.objects++;
	w->sum.new_objects++;
	if (is_watched(t, i)) {
		s = step_of(t, RELOC_SEEN, i, w->event_index);
		s.dump = w->dump;
		s.first = true;
		emit(t, &s);
	}
	if (count_age(t, t->gcs_applied - born, d->size[k]) < 0)
		return out_of_memory(t);
	return 0;
}

/* A tracked object that a complete dump lacks: it died after it was last
 * known alive. */
static void absent(struct reloc *t, struct dump_walk *w, size_t i)
{
	struct objects *o = &t->obj;
	struct reloc_step s;

	/* only the references of the GC whose block carried it are sure to
	 * show it: any later dump may leave out what died since. The block
	 * says something is at its id, placed or not (UNPLACED): a missing
	 * id contradicts it whatever object the block carried. */
	if (w->prove && w->own_gc >= 0 &&
	    o->alive[i] == (uint64_t)w->own_gc + 1) {
		struct reloc_inconsistency x = inconsistency_of(
			t, RELOC_INCONSISTENT_MISSING, i, w->dump,
			w->event_index);

		report_inconsistency(t, &x);
	}
	o->flags[i] |= GONE;
	t->has_gone = true;
	count(&w->sum.died_objects, &w->sum.died_bytes, o->size[i]);
	t->totals.died++;
	if (!is_watched(t, i))
		return;
	s = step_of(t, RELOC_DIED, i, w->event_index);
	s.cause = RELOC_DIED_ABSENT;
	s.dump = w->dump;
	s.to = 0;
	s.alive_gc = (int64_t)o->alive[i] - 1;
	emit(t, &s);
}

/* The dump shows another object (class or size) at a tracked id. */
static int displaced(struct reloc *t, struct dump_walk *w, size_t i, size_t k)
{
	struct objects *o = &t->obj;
	const struct dump_state *d = &t->dump;
	struct reloc_step s;

	/* a trace that records no GC may have lost one that freed it */
	if (w->prove && placed(t, i) && t->last_gc >= 0) {
		struct reloc_inconsistency x = inconsistency_of(
			t, RELOC_INCONSISTENT_DISPLACED, i, w->dump,
			w->event_index);

		x.found_class = d->cls[k];
		x.found_size = d->size[k];
		report_inconsistency(t, &x);
	}
	o->flags[i] |= GONE;
	t->has_gone = true;
	w->sum.lost_objects++;
	t->totals.lost++;
	if (is_watched(t, i)) {
		s = step_of(t, RELOC_LOST, i, w->event_index);
		s.cause = RELOC_LOST_DUMP;
		s.dump = w->dump;
		s.to = 0;
		s.other = (uint32_t)t->next_serial;
		s.other_class = d->cls[k];
		s.other_size = d->size[k];
		emit(t, &s);
	}
	return first_seen(t, w, k);
}

/* One walk over the tracked objects and the dump's, both in id order. */
static int walk_dump(struct reloc *t, struct dump_walk *w, size_t distinct)
{
	const struct dump_state *d = &t->dump;
	size_t n = t->obj.n_sorted, i = 0, j = 0;
	int rc = 0;

	while (rc == 0 && (i < n || j < distinct)) {
		size_t k = j < distinct ? t->dump_order[j] : 0;
		ht_id id = i < n ? t->obj.id[i] : 0;

		if (j == distinct || (i < n && id < d->id[k])) {
			if (w->complete)
				absent(t, w, i);
			i++;
		} else if (i == n || d->id[k] < id) {
			rc = first_seen(t, w, k);
			j++;
		} else {
			if (!same_object(t, i, k))
				rc = displaced(t, w, i, k);
			else if (seen(t, w, i, k) < 0)
				rc = out_of_memory(t);
			i++;
			j++;
		}
	}
	return rc;
}

static int compare_landing(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->dest != y->dest)
		return x->dest < y->dest ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The GC's moved blocks as the ranges they land on, sorted by where they
 * start, each end raised to the furthest reached so far (so that one
 * binary search tells whether any covers an id). Built at the first
 * need: a GC's own dump that shows an object where one died. */
static int prepare_landing(struct reloc *t)
{
	const struct spans *b = &t->gc.blocks;
	ht_id reach = 0;
	size_t n = 0;

	if (t->landing_ready)
		return 0;
	if (BUDGET_GROW(t->landing, b->n, t->cap_landing, t->charged) < 0)
		return -1;
	for (size_t k = 0; k < b->n; k++) {
		if (b->s[k].kind != SPAN_MOVED || b->s[k].dest == b->s[k].start)
			continue;
		t->landing[n] = b->s[k];
		t->landing[n].start = b->s[k].dest;
		t->landing[n].end = span_end(b->s[k].dest,
					     b->s[k].end - b->s[k].start);
		n++;
	}
	sort_items(t->landing, n, sizeof(*t->landing), compare_landing);
	for (size_t k = 0; k < n; k++) {
		if (t->landing[k].end < reach)
			t->landing[k].end = reach;
		reach = t->landing[k].end;
	}
	t->n_landing = n;
	t->landing_ready = true;
	return 0;
}

/* Whether a moved block of the GC applied last lands on id. */
static bool lands_on(const struct reloc *t, ht_id id)
{
	/* the last range that starts at or before id is the one before lo */
	size_t lo = LOWER_BOUND(0, t->n_landing, mid,
				t->landing[mid].start <= id);

	return lo > 0 && t->landing[lo - 1].end > id;
}

/*
 * The proof against a GC's own complete dump: an object there at the id
 * of one the GC proved dead, where no moved block of the GC lands, is the
 * dead one still there or one that came from nowhere: nothing is
 * allocated inside a GC. Both lists are in id order.
 */
static int dead_present(struct reloc *t, const struct dump_walk *w,
			size_t distinct)
{
	const struct dump_state *d = &t->dump;
	size_t j = 0;

	for (size_t k = 0; k < t->n_dead; k++) {
		const struct dead_object *x = &t->dead[k];
		size_t at;

		while (j < distinct && d->id[t->dump_order[j]] < x->id)
			j++;
		if (j == distinct)
			break;
		at = t->dump_order[j];
		if (d->id[at] != x->id)
			continue;
		if (prepare_landing(t) < 0)
			return out_of_memory(t);
		if (lands_on(t, x->id))
			continue;
		report_inconsistency(t, &(struct reloc_inconsistency){
			.kind = RELOC_INCONSISTENT_DEAD_PRESENT,
			.cause = t->dead_by_full_gc ? RELOC_DIED_FULL_GC
						    : RELOC_DIED_BOUNDS,
			.object = x->serial,
			.gc = d->gc,
			.dump = w->dump,
			.event_index = w->event_index,
			.old_id = x->prev,
			.predicted_id = x->id,
			.class_id = x->cls,
			.size = x->size,
			.found_class = d->cls[at],
			.found_size = d->size[at],
		});
	}
	return 0;
}

/*
 * The end of a dump: its objects matched against the tracked ones. A GC's
 * references end with the GC (at gc_finished, which applied it); if they
 * end before (another dump or GC cuts in), the GC is applied unfinished.
 */
int reloc_on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	struct reloc *t = ctx;
	struct dump_state *d = &t->dump;
	struct dump_walk w = {
		.dump = d->number,
		.gc_dump = d->gc_dump,
		.event_index = st->event_index,
		.complete = t->closer_at == st->event_index + 1 &&
			    !st->dump_aborted,
	};
	size_t distinct;

	if (t->failed)
		return RELOC_STOP;
	if (!d->open)
		return 0;
	if (d->gc_dump && t->gc.open && t->gc.number == d->gc &&
	    apply_gc(t, false, st->event_index) != 0)
		return RELOC_STOP;
	d->open = false;
	if (d->gc_dump && (t->gc.open || t->gc.number != d->gc))
		w.complete = false; /* not after its own GC: ids unsure */
	/* a dump inside a GC not applied yet (a violation) has ids that are
	 * neither before nor after it */
	w.prove = t->proving && !t->gc.open;
	w.own_gc = w.complete && d->gc_dump && t->gc.number == d->gc ? d->gc
								      : -1;
	if (settle(t) != 0)
		return RELOC_STOP;
	if (order_sightings(t, &distinct) < 0)
		return out_of_memory(t);
	if (walk_dump(t, &w, distinct) != 0 || settle(t) != 0)
		return RELOC_STOP;
	if (w.prove && w.own_gc >= 0 && dead_present(t, &w, distinct) != 0)
		return RELOC_STOP;
	w.sum.dump = d->number;
	w.sum.gc_dump = d->gc_dump;
	w.sum.gc = d->gc;
	w.sum.complete = w.complete;
	if (collect_ages(t, &w.sum) < 0)
		return out_of_memory(t);
	if (t->gc.summary_waits && d->gc_dump && t->gc.number == d->gc)
		emit_gc_summary(t);
	if (t->hooks.dump_done)
		t->hooks.dump_done(t->hooks.ctx, &w.sum);
	return 0;
}

/* ---- The replay's callbacks ---------------------------------------------- */

/* What a GC's body is made of, for telling start bounds from finish. */
static void note_body(struct reloc *t)
{
	if (t->gc.open)
		t->gc.in_body = true;
}

int reloc_on_event(void *ctx, const struct ht_event *ev,
		   const struct ht_replay_state *st)
{
	struct reloc *t = ctx;

	if (t->failed)
		return RELOC_STOP;
	t->events = st->event_index + 1;
	switch (ev->type) {
	case HT_EV_OBJECT_ALLOCATED:
		return allocated(t, &ev->u.object_allocated, st);
	case HT_EV_GC_STARTED:
		return gc_started(t, &ev->u.gc_started, st);
	case HT_EV_GENERATION_BOUNDS:
		return bounds(t, &ev->u.generation_bounds);
	case HT_EV_MOVED_REFERENCES:
		if (!t->gc.open)
			return 0;
		note_body(t);
		return moved(t, &ev->u.moved_references);
	case HT_EV_SURVIVING_REFERENCES:
		if (!t->gc.open)
			return 0;
		note_body(t);
		return surviving(t, &ev->u.surviving_references);
	case HT_EV_GC_FINISHED:
		t->closer_at = st->event_index + 1;
		return t->gc.open ? apply_gc(t, true, st->event_index) : 0;
	case HT_EV_BEGIN_CONTAINER:
		if (ev->u.begin_container.type == HT_C_END)
			t->closer_at = st->event_index + 1;
		return 0;
	case HT_EV_ROOT_REFERENCES:
		note_body(t);
		return 0;
	case HT_EV_OBJECT_REFERENCES:
		note_body(t);
		if (!t->dump.open || st->continuation)
			return 0;
		return sighted(t, &ev->u.object_references);
	default:
		return 0;
	}
}

void reloc_callbacks(struct ht_replay_callbacks *cb)
{
	for (int type = HT_EV_FIRST; type <= HT_EV_LAST; type++)
		cb->on_event[type] = reloc_on_event;
	cb->on_dump_begin = reloc_on_dump_begin;
	cb->on_dump_end = reloc_on_dump_end;
}

int reloc_finish(struct reloc *t)
{
	struct objects *o = &t->obj;
	uint64_t end = t->events;

	if (t->failed)
		return RELOC_STOP;
	if (t->gc.open && apply_gc(t, false, end) != 0)
		return RELOC_STOP;
	if (t->gc.summary_waits)
		emit_gc_summary(t);
	if (settle(t) != 0)
		return RELOC_STOP;
	t->totals.alive = o->n;
	for (size_t i = 0; i < o->n; i++) {
		if (is_watched(t, i)) {
			struct reloc_step s = step_of(t, RELOC_END, i, end);

			s.gc = t->last_gc;
			emit(t, &s);
		}
	}
	return 0;
}
