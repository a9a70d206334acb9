/*
 * relocation_gc.c - a GC applied to the relocation tracker's objects
 * (relocation.c says how): each object's fate decided in one walk over
 * the objects and the GC's blocks together, the moved ones laid out by
 * destination and merged with the others into the new order, two claims
 * on one id settled; then the events of a GC as they come, and the
 * replay's callbacks that feed the tracker every event.
 */
#include "analysis/relocation_internal.h"
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

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
		reloc_radix_sort(t->order, t->movers, m, t->obj.id);
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
	reloc_lose(t, loser, winner, RELOC_LOST_BLOCK, event_index,
		   t->gc.number);
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

void reloc_emit_gc_summary(struct reloc *t)
{
	t->gc.summary_waits = false;
	if (t->hooks.gc_done)
		t->hooks.gc_done(t->hooks.ctx, &t->gc.sum);
}

/*
 * Applies the open GC to every object. An unfinished GC (the trace ends
 * inside it, or another begins) may lack blocks, so it claims no death.
 */
int reloc_apply_gc(struct reloc *t, bool finished, uint64_t event_index)
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
	if (reloc_settle(t) != 0)
		return RELOC_STOP;
	if (BUDGET_GROW(t->movers, o->n, t->cap_movers, t->charged) < 0)
		return out_of_memory(t);
	reloc_normalize(&gc->blocks);
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
	reloc_objects_reorder(o, 0, rows);
	if (gc->has_finish)
		apply_finish_bounds(t, event_index);
	t->gcs_applied++;
	if (t->dump.open && t->dump.gc_dump && t->dump.gc == gc->number)
		gc->summary_waits = true;
	else
		reloc_emit_gc_summary(t);
	return 0;
}

/* ---- GC events ----------------------------------------------------------- */

static int gc_started(struct reloc *t, const struct ht_ev_gc_started *e,
		      const struct ht_replay_state *st)
{
	struct gc_state *gc = &t->gc;

	if (gc->open && reloc_apply_gc(t, false, st->event_index) != 0)
		return RELOC_STOP;
	if (gc->summary_waits)
		reloc_emit_gc_summary(t);
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
	if (reloc_spans_copy(&gc->start, &t->bounds) < 0)
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

	if (reloc_spans_of_bounds(&t->bounds, e) < 0)
		return out_of_memory(t);
	for (size_t i = 0; i < e->count; i++)
		if (e->ranges[i].generation <= HT_GEN_MAX)
			t->shown |= 1u << e->ranges[i].generation;
	if (!gc->open)
		return 0;
	if (!gc->in_body && gc->start_source != RELOC_BOUNDS_START) {
		if (t->bounds.n == 0)
			return 0;
		if (reloc_spans_copy(&gc->start, &t->bounds) < 0)
			return out_of_memory(t);
		gc->start_source = RELOC_BOUNDS_START;
		return 0;
	}
	if (reloc_spans_copy(&gc->finish, &t->bounds) < 0)
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
		return reloc_allocated(t, &ev->u.object_allocated, st);
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
		return t->gc.open ? reloc_apply_gc(t, true, st->event_index)
				  : 0;
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
		return reloc_sighted(t, &ev->u.object_references);
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
	if (t->gc.open && reloc_apply_gc(t, false, end) != 0)
		return RELOC_STOP;
	if (t->gc.summary_waits)
		reloc_emit_gc_summary(t);
	if (reloc_settle(t) != 0)
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
