/*
 * relocation_dump.c - a dump matched against the relocation tracker's
 * objects (relocation.c says how): the objects it reports gathered as they
 * come, sorted by id when it ends and walked together with the tracked
 * ones, so that each tracked object is seen, first seen, absent or
 * displaced; and the proof, which holds the rules' predictions against a
 * GC's own complete dump and reports where they fail.
 */
#include "analysis/relocation_internal.h"
#include "util/alloc.h"
#include "util/sort.h"

#include <string.h>

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

int reloc_sighted(struct reloc *t, const struct ht_ev_object_references *e)
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
	reloc_radix_sort(t->dump_order, t->order, d->n, d->id);
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
	i = reloc_add_object(t, d->id[k], d->cls[k], d->size[k], gen, born,
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
	    reloc_apply_gc(t, false, st->event_index) != 0)
		return RELOC_STOP;
	d->open = false;
	if (d->gc_dump && (t->gc.open || t->gc.number != d->gc))
		w.complete = false; /* not after its own GC: ids unsure */
	/* a dump inside a GC not applied yet (a violation) has ids that are
	 * neither before nor after it */
	w.prove = t->proving && !t->gc.open;
	w.own_gc = w.complete && d->gc_dump && t->gc.number == d->gc ? d->gc
								      : -1;
	if (reloc_settle(t) != 0)
		return RELOC_STOP;
	if (order_sightings(t, &distinct) < 0)
		return out_of_memory(t);
	if (walk_dump(t, &w, distinct) != 0 || reloc_settle(t) != 0)
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
		reloc_emit_gc_summary(t);
	if (t->hooks.dump_done)
		t->hooks.dump_done(t->hooks.ctx, &w.sum);
	return 0;
}
