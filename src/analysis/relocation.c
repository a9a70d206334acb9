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
 *
 * This file holds the table: its spans, the radix sort, the columns of
 * objects, the tracker's life, watching, new objects and settling. A GC
 * applied and the replay's callbacks are relocation_gc.c, a dump matched
 * and the proof relocation_dump.c, what they share relocation_internal.h.
 */
#include "analysis/relocation_internal.h"
#include "util/alloc.h"
#include "util/sort.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- Spans: blocks and generation ranges -------------------------------- */


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
void reloc_normalize(struct spans *l)
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

/* The generation ranges of a generation_bounds event, normalized. */
int reloc_spans_of_bounds(struct spans *l,
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
	reloc_normalize(l);
	return 0;
}

int reloc_spans_copy(struct spans *to, const struct spans *from)
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
void reloc_radix_sort(uint32_t *idx, uint32_t *tmp, size_t n,
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
void reloc_objects_reorder(struct objects *o, size_t from, size_t m)
{
	for (size_t k = 1; k < m; k++) {
		if (o->perm[k] <= o->perm[k - 1]) {
			objects_permute(o, from, m);
			return;
		}
	}
	objects_compact(o, from, m);
}

/* ---- The tracker --------------------------------------------------------- */

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

void reloc_watch_sampled(struct reloc *t)
{
	t->watching_sampled = true;
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

/* ---- Steps --------------------------------------------------------------- */

/* is_watched, step_of and emit are relocation_internal.h's. */

/* ---- New objects --------------------------------------------------------- */

/* A row for a newly tracked object, after the others (it waits to be
 * sorted in). Its index, or SIZE_MAX (t->failed set). */
size_t reloc_add_object(struct reloc *t, ht_id id, ht_id cls, uint64_t size,
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

int reloc_allocated(struct reloc *t, const struct ht_ev_object_allocated *e,
		    const struct ht_replay_state *st)
{
	size_t i = reloc_add_object(t, e->id, e->class_id, e->size,
				    generation_now(t, e->id), t->gcs_applied,
				    st->event_index);
	struct reloc_step s;

	if (i == SIZE_MAX)
		return RELOC_STOP;
	if (t->watching_sampled && e->stack)
		t->obj.flags[i] |= WATCHED;
	if (is_watched(t, i)) {
		s = step_of(t, RELOC_ALLOCATED, i, st->event_index);
		s.from = 0;
		s.stack = e->stack;
		emit(t, &s);
	}
	return 0;
}

/* ---- Settling the table -------------------------------------------------- */

/* Row `loser` gave its id to row `winner`. */
void reloc_lose(struct reloc *t, size_t loser, size_t winner,
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
int reloc_settle(struct reloc *t)
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
	reloc_radix_sort(t->order, t->movers, waiting, o->id);
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
			reloc_lose(t, o->perm[k - 1], c, RELOC_LOST_ALLOCATION,
				   c >= o->n_sorted ?
				   t->tail_event[c - o->n_sorted] : t->events,
				   -1);
			o->perm[k - 1] = (uint32_t)c;
			continue;
		}
		o->perm[k++] = (uint32_t)c;
	}
	reloc_objects_reorder(o, from, k);
	t->has_gone = false;
	return 0;
}
