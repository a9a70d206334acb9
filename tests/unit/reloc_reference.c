/*
 * reloc_reference.c - the naive reference for the relocation tracker, and
 * the record of a tracker's hooks it is compared with (reloc_reference.h).
 */
#include "reloc_reference.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference's own bounds, past which it marks itself too big. */
#define RREF_MAX_RANGES 64
#define RREF_MAX_BLOCKS 2048
#define RREF_MAX_SIGHTINGS 2048

/* ---- What the tracker says ----------------------------------------------- */

static void problem(struct rref_outcome *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct rref_outcome *o, const char *fmt, ...)
{
	va_list ap;

	if (o->problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(o->problem, sizeof(o->problem), fmt, ap);
	va_end(ap);
}

static void on_step(void *ctx, const struct reloc_step *s)
{
	struct rref_outcome *o = ctx;
	struct rref_fate *f;

	if (o->n_steps < RREF_MAX_STEPS)
		o->steps[o->n_steps++] = *s;
	if (s->object >= RREF_MAX_OBJECTS) {
		o->too_big = true;
		return;
	}
	f = &o->fate[s->object];
	if (s->kind != RELOC_END && s->kind != RELOC_DIED &&
	    s->kind != RELOC_LOST) {
		if (f->known)
			problem(o, "object %u has a step after its end",
				s->object);
		return;
	}
	if (f->known)
		problem(o, "object %u ended twice", s->object);
	f->known = true;
	f->end = s->kind;
	f->cause = s->cause;
	f->id = s->kind == RELOC_END ? s->to : s->from;
	f->generation = s->generation;
	f->other = s->other;
	f->alive_gc = s->alive_gc;
}

static void on_gc(void *ctx, const struct reloc_gc_summary *g)
{
	struct rref_outcome *o = ctx;

	if (g->gc < 0) {
		problem(o, "a GC numbered %lld", (long long)g->gc);
		return;
	}
	if (g->gc >= RREF_MAX_GCS) {
		o->too_big = true;
		return;
	}
	o->gc[g->gc] = *g;
	o->gc_seen[g->gc] = true;
	o->gc_reports[g->gc]++;
}

static void on_dump(void *ctx, const struct reloc_dump_summary *d)
{
	struct rref_outcome *o = ctx;
	struct rref_dump *s;

	if (d->dump < 0) {
		problem(o, "a dump numbered %lld", (long long)d->dump);
		return;
	}
	if (d->dump >= RREF_MAX_DUMPS || d->n_ages > RREF_MAX_AGES) {
		o->too_big = true;
		return;
	}
	s = &o->dump[d->dump];
	if (s->seen)
		problem(o, "dump %lld reported twice", (long long)d->dump);
	s->seen = true;
	s->sum = *d;
	if (d->n_ages)
		memcpy(s->ages, d->ages, d->n_ages * sizeof(*d->ages));
	s->sum.ages = s->ages;
}

struct reloc_hooks rref_outcome_hooks(struct rref_outcome *o)
{
	return (struct reloc_hooks){o, on_gc, on_dump, on_step};
}

/* ---- The naive reference ------------------------------------------------- */

struct nobj {
	uint32_t serial;
	ht_id id, cls;
	uint64_t size;
	unsigned gen;
	uint64_t born;
	int64_t alive_gc;
	bool promoted_now;
	bool proven;        /* during a GC: in a block */
	int state;          /* 0 tracked, 1 died, 2 lost */
	enum reloc_cause cause;
	ht_id end_id;
	unsigned end_gen;
};

struct nrange {
	ht_id start, end;
	unsigned gen;
};

struct nblock {
	ht_id start, end, dest;
};

struct rref_naive {
	bool reports;
	struct nobj obj[RREF_MAX_OBJECTS];
	size_t n;
	uint64_t gcs_applied;
	int64_t last_gc;
	uint32_t shown;
	struct nrange bounds[RREF_MAX_RANGES];
	size_t n_bounds;
	bool gc_open;
	int64_t gc_number;
	uint32_t gens;
	bool in_body, start_from_event, has_finish;
	struct nrange start[RREF_MAX_RANGES], finish[RREF_MAX_RANGES];
	size_t n_start, n_finish;
	struct nblock blocks[RREF_MAX_BLOCKS];
	size_t n_blocks;
	bool dump_open, dump_gc;
	int64_t dump_number, dump_gc_number;
	uint64_t closer_at;
	struct ht_ev_object_references sight[RREF_MAX_SIGHTINGS];
	struct ht_ev_object_references unique[RREF_MAX_SIGHTINGS];
	size_t n_sight;
	struct reloc_gc_summary gc[RREF_MAX_GCS];
	bool gc_seen[RREF_MAX_GCS];
	struct rref_dump dump[RREF_MAX_DUMPS];
	uint64_t died, lost;
	bool too_big;  /* past a bound: the state above is not to be trusted */
};

static ht_id nend(ht_id start, uint64_t length)
{
	return length > UINT64_MAX - start ? UINT64_MAX : start + length;
}

static unsigned ngen(uint64_t g)
{
	return g <= HT_GEN_MAX ? (unsigned)g : RELOC_NO_GENERATION;
}

/* The range a list gives id: the first by start, then by order. */
static const struct nrange *nrange_of(const struct nrange *r, size_t n,
				      ht_id id)
{
	const struct nrange *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (r[i].start <= id && id < r[i].end &&
		    (!best || r[i].start < best->start))
			best = &r[i];
	return best;
}

static const struct nblock *nblock_of(const struct rref_naive *v, ht_id id)
{
	const struct nblock *best = NULL;

	for (size_t i = 0; i < v->n_blocks; i++) {
		const struct nblock *b = &v->blocks[i];

		if (b->start <= id && id < b->end &&
		    (!best || b->start < best->start))
			best = b;
	}
	return best;
}

static void ncopy_bounds(struct nrange *to, size_t *n,
			 const struct ht_ev_generation_bounds *e)
{
	*n = 0;
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_generation_range *r = &e->ranges[i];

		if (!r->length)
			continue;
		to[(*n)++] = (struct nrange){
			r->start, nend(r->start, r->length),
			ngen(r->generation)};
	}
}

static void nsettle(struct rref_naive *v)
{
	for (size_t i = 0; i < v->n; i++) {
		struct nobj *a = &v->obj[i];

		if (a->state)
			continue;
		for (size_t j = i + 1; j < v->n; j++) {
			struct nobj *b = &v->obj[j];

			if (!b->state && b->id == a->id) {
				a->state = 2;
				a->cause = RELOC_LOST_ALLOCATION;
				v->lost++;
				break;
			}
		}
	}
}

static bool npromotion(unsigned a, unsigned b)
{
	return a != RELOC_NO_GENERATION && b != RELOC_NO_GENERATION &&
	       a < b && b <= 2;
}

/* Byte sums stop at UINT64_MAX rather than wrap (saturating.h). */
static void nadd_bytes(uint64_t *bytes, uint64_t size)
{
	*bytes = size > UINT64_MAX - *bytes ? UINT64_MAX : *bytes + size;
}

static void ncount(uint64_t *n, uint64_t *bytes, uint64_t size)
{
	(*n)++;
	nadd_bytes(bytes, size);
}

static void napply(struct rref_naive *v, bool finished)
{
	struct reloc_gc_summary *g;
	bool has_bounds = v->n_start > 0;
	uint32_t all = v->shown | 7u;
	bool full = (v->gens & all) == all;

	v->gc_open = false;
	if (v->gc_number < 0 || v->gc_number >= RREF_MAX_GCS) {
		v->too_big = true;
		return;
	}
	g = &v->gc[v->gc_number];
	nsettle(v);
	memset(g, 0, sizeof(*g));
	g->gc = v->gc_number;
	g->generations = v->gens;
	g->finished = finished;
	g->bounds = !has_bounds ? RELOC_BOUNDS_NONE
		    : v->start_from_event ? RELOC_BOUNDS_START
					  : RELOC_BOUNDS_BEFORE;
	for (size_t i = 0; i < v->n; i++) {
		struct nobj *o = &v->obj[i];
		const struct nrange *r;
		const struct nblock *b;

		if (o->state)
			continue;
		o->promoted_now = false;
		o->proven = false;
		r = nrange_of(v->start, v->n_start, o->id);
		if (r)
			o->gen = r->gen;
		if (o->gen != RELOC_NO_GENERATION && !(v->gens >> o->gen & 1)) {
			ncount(&g->untouched_objects, &g->untouched_bytes,
			       o->size);
			continue;
		}
		b = nblock_of(v, o->id);
		if (b && b->dest != b->start) {
			o->id = b->dest + (o->id - b->start);
			o->proven = true;
			o->alive_gc = v->gc_number;
			ncount(&g->moved_objects, &g->moved_bytes, o->size);
		} else if (b) {
			o->proven = true;
			o->alive_gc = v->gc_number;
			ncount(&g->survived_objects, &g->survived_bytes,
			       o->size);
		} else if (finished && v->reports &&
			   (has_bounds ? r && r->gen != RELOC_NO_GENERATION
				       : full)) {
			o->state = 1;
			o->cause = has_bounds ? RELOC_DIED_BOUNDS
					      : RELOC_DIED_FULL_GC;
			v->died++;
			ncount(&g->died_objects, &g->died_bytes, o->size);
		} else {
			ncount(&g->kept_objects, &g->kept_bytes, o->size);
		}
	}
	/* one id, one object: the proven one, else the newest */
	for (size_t i = 0; i < v->n; i++) {
		struct nobj *a = &v->obj[i];
		struct nobj *best = a;

		if (a->state)
			continue;
		for (size_t j = 0; j < v->n; j++) {
			struct nobj *b = &v->obj[j];

			if (b->state || b->id != a->id)
				continue;
			if (b->proven > best->proven ||
			    (b->proven == best->proven &&
			     b->serial > best->serial))
				best = b;
		}
		if (best != a) {
			a->state = 2;
			a->cause = RELOC_LOST_BLOCK;
			v->lost++;
			ncount(&g->lost_objects, &g->lost_bytes, a->size);
		}
	}
	for (size_t i = 0; v->has_finish && i < v->n; i++) {
		struct nobj *o = &v->obj[i];
		const struct nrange *r;

		if (o->state)
			continue;
		r = nrange_of(v->finish, v->n_finish, o->id);
		if (!r || r->gen == o->gen)
			continue;
		if (npromotion(o->gen, r->gen)) {
			ncount(&g->promoted_objects, &g->promoted_bytes,
			       o->size);
			o->promoted_now = true;
		}
		o->gen = r->gen;
	}
	v->gcs_applied++;
	v->gc_seen[v->gc_number] = true;
}

static struct nobj *nadd(struct rref_naive *v, ht_id id, ht_id cls, uint64_t size,
			 unsigned gen, uint64_t born)
{
	struct nobj *o;

	if (v->n == RREF_MAX_OBJECTS) {
		v->too_big = true;
		return NULL;
	}
	o = &v->obj[v->n];
	*o = (struct nobj){
		.serial = (uint32_t)v->n, .id = id, .cls = cls, .size = size,
		.gen = gen, .born = born, .alive_gc = v->last_gc,
	};
	v->n++;
	return o;
}

/* The same object, unless class or size (both known) differ. */
static bool nsame(const struct nobj *o,
		  const struct ht_ev_object_references *e)
{
	return (!o->cls || !e->class_id || o->cls == e->class_id) &&
	       (!o->size || !e->size || o->size == e->size);
}

static int compare_sightings(const void *a, const void *b)
{
	const struct ht_ev_object_references *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static void nage(struct rref_naive *v, struct rref_dump *d, uint64_t age,
		 uint64_t size)
{
	size_t k = 0;

	while (k < d->sum.n_ages && d->ages[k].gcs < age)
		k++;
	if (k == d->sum.n_ages || d->ages[k].gcs != age) {
		if (d->sum.n_ages == RREF_MAX_AGES) {
			v->too_big = true;
			return;
		}
		memmove(d->ages + k + 1, d->ages + k,
			(d->sum.n_ages - k) * sizeof(*d->ages));
		d->ages[k] = (struct reloc_age){age, 0, 0};
		d->sum.n_ages++;
	}
	d->ages[k].count++;
	nadd_bytes(&d->ages[k].bytes, size);
}

static void ndump(struct rref_naive *v, bool complete)
{
	struct rref_dump *d;
	struct ht_ev_object_references *s = v->unique;
	size_t ns = 0;
	struct reloc_gc_summary *g = NULL;

	if (v->dump_number < 0 || v->dump_number >= RREF_MAX_DUMPS ||
	    (v->dump_gc && (v->dump_gc_number < 0 ||
			    v->dump_gc_number >= RREF_MAX_GCS))) {
		v->too_big = true;
		return;
	}
	d = &v->dump[v->dump_number];
	if (v->dump_gc)
		g = &v->gc[v->dump_gc_number];
	nsettle(v);
	memset(d, 0, sizeof(*d));
	d->seen = true;
	d->sum.dump = v->dump_number;
	d->sum.gc_dump = v->dump_gc;
	d->sum.gc = v->dump_gc_number;
	d->sum.complete = complete;
	/* stable: the first report of an id wins */
	for (size_t i = 0; i < v->n_sight; i++) {
		bool dup = false;

		for (size_t j = 0; j < ns && !dup; j++)
			dup = s[j].id == v->sight[i].id;
		if (!dup)
			s[ns++] = v->sight[i];
	}
	qsort(s, ns, sizeof(*s), compare_sightings);
	for (size_t i = 0; i < v->n; i++) {
		struct nobj *o = &v->obj[i];
		bool present = false;

		if (o->state)
			continue;
		for (size_t k = 0; k < ns; k++)
			present |= s[k].id == o->id;
		if (!present && complete) {
			o->state = 1;
			o->cause = RELOC_DIED_ABSENT;
			v->died++;
			ncount(&d->sum.died_objects, &d->sum.died_bytes,
			       o->size);
		}
	}
	for (size_t k = 0; k < ns; k++) {
		struct nobj *o = NULL;
		unsigned sg = s[k].has_generation ? ngen(s[k].generation)
						  : RELOC_NO_GENERATION;

		for (size_t i = 0; i < v->n; i++)
			if (!v->obj[i].state && v->obj[i].id == s[k].id)
				o = &v->obj[i];
		d->sum.objects++;
		if (o && nsame(o, &s[k])) {
			if (!o->cls)
				o->cls = s[k].class_id;
			if (!o->size)
				o->size = s[k].size;
			o->alive_gc = v->last_gc;
			if (sg != RELOC_NO_GENERATION && v->dump_gc &&
			    !o->promoted_now && npromotion(o->gen, sg)) {
				ncount(&g->promoted_objects, &g->promoted_bytes,
				       o->size);
				o->promoted_now = true;
			}
			if (sg != RELOC_NO_GENERATION)
				o->gen = sg;
			nage(v, d, v->gcs_applied - o->born, o->size);
			continue;
		}
		if (o) {
			o->state = 2;
			o->cause = RELOC_LOST_DUMP;
			v->lost++;
			d->sum.lost_objects++;
		}
		{
			const struct nrange *r =
				nrange_of(v->bounds, v->n_bounds, s[k].id);
			uint64_t born = v->gcs_applied;

			if (v->dump_gc && born)
				born--;
			nadd(v, s[k].id, s[k].class_id, s[k].size,
			     sg != RELOC_NO_GENERATION ? sg
			     : r ? r->gen : RELOC_NO_GENERATION, born);
			d->sum.new_objects++;
			nage(v, d, v->gcs_applied - born, s[k].size);
		}
	}
}

void rref_naive_event(struct rref_naive *v, const struct ht_event *ev,
		      const struct ht_replay_state *st)
{
	if (v->too_big)
		return;

	switch (ev->type) {
	case HT_EV_OBJECT_ALLOCATED: {
		const struct ht_ev_object_allocated *e =
			&ev->u.object_allocated;
		const struct nrange *r =
			nrange_of(v->bounds, v->n_bounds, e->id);

		nadd(v, e->id, e->class_id, e->size,
		     r ? r->gen : RELOC_NO_GENERATION, v->gcs_applied);
		break;
	}
	case HT_EV_GC_STARTED:
		if (v->gc_open)
			napply(v, false);
		v->gc_open = true;
		v->gc_number = st->gc;
		v->gens = ev->u.gc_started.generations;
		v->in_body = v->start_from_event = v->has_finish = false;
		v->n_blocks = 0;
		memcpy(v->start, v->bounds, sizeof(v->bounds));
		v->n_start = v->n_bounds;
		v->shown |= v->gens;
		v->last_gc = st->gc;
		break;
	case HT_EV_GENERATION_BOUNDS: {
		const struct ht_ev_generation_bounds *e =
			&ev->u.generation_bounds;

		if (e->count > RREF_MAX_RANGES) {
			v->too_big = true;
			return;
		}
		ncopy_bounds(v->bounds, &v->n_bounds, e);
		for (size_t i = 0; i < e->count; i++)
			if (e->ranges[i].generation <= HT_GEN_MAX)
				v->shown |= 1u << e->ranges[i].generation;
		if (!v->gc_open)
			break;
		if (!v->in_body && !v->start_from_event) {
			if (v->n_bounds) {
				memcpy(v->start, v->bounds, sizeof(v->bounds));
				v->n_start = v->n_bounds;
				v->start_from_event = true;
			}
		} else {
			memcpy(v->finish, v->bounds, sizeof(v->bounds));
			v->n_finish = v->n_bounds;
			v->has_finish = true;
		}
		break;
	}
	case HT_EV_MOVED_REFERENCES:
		if (!v->gc_open)
			break;
		v->in_body = true;
		for (size_t i = 0; i < ev->u.moved_references.count; i++) {
			const struct ht_moved_block *b =
				&ev->u.moved_references.blocks[i];

			if (v->n_blocks == RREF_MAX_BLOCKS) {
				v->too_big = true;
				return;
			}
			v->blocks[v->n_blocks++] = (struct nblock){
				b->old_id, nend(b->old_id, b->length),
				b->new_id};
		}
		break;
	case HT_EV_SURVIVING_REFERENCES:
		if (!v->gc_open)
			break;
		v->in_body = true;
		for (size_t i = 0; i < ev->u.surviving_references.count; i++) {
			const struct ht_surviving_block *b =
				&ev->u.surviving_references.blocks[i];

			if (v->n_blocks == RREF_MAX_BLOCKS) {
				v->too_big = true;
				return;
			}
			v->blocks[v->n_blocks++] = (struct nblock){
				b->start, nend(b->start, b->length), b->start};
		}
		break;
	case HT_EV_GC_FINISHED:
		v->closer_at = st->event_index + 1;
		if (v->gc_open)
			napply(v, true);
		break;
	case HT_EV_BEGIN_CONTAINER:
		if (ev->u.begin_container.type == HT_C_END)
			v->closer_at = st->event_index + 1;
		break;
	case HT_EV_ROOT_REFERENCES:
		if (v->gc_open)
			v->in_body = true;
		break;
	case HT_EV_OBJECT_REFERENCES: {
		const struct ht_ev_object_references *e =
			&ev->u.object_references;

		if (v->gc_open)
			v->in_body = true;
		if (!v->dump_open || st->continuation)
			break;
		if (v->n_sight == RREF_MAX_SIGHTINGS) {
			v->too_big = true;
			return;
		}
		v->sight[v->n_sight++] = *e;
		if (e->has_generation && e->generation <= HT_GEN_MAX)
			v->shown |= 1u << e->generation;
		break;
	}
	default:
		break;
	}
}

void rref_naive_dump_begin(struct rref_naive *v,
			   const struct ht_replay_state *st)
{
	if (v->too_big)
		return;

	v->dump_open = true;
	v->dump_number = st->dump;
	v->dump_gc = st->gc_dump;
	v->dump_gc_number = st->gc;
	v->n_sight = 0;
}

void rref_naive_dump_end(struct rref_naive *v,
			 const struct ht_replay_state *st)
{
	bool complete = v->closer_at == st->event_index + 1 &&
			!st->dump_aborted;

	if (v->too_big || !v->dump_open)
		return;
	if (v->dump_gc && v->gc_open && v->gc_number == v->dump_gc_number) {
		napply(v, false);
		complete = false;
	}
	v->dump_open = false;
	ndump(v, complete);
}

void rref_naive_finish(struct rref_naive *v)
{
	if (v->too_big)
		return;

	if (v->gc_open)
		napply(v, false);
	nsettle(v);
}

struct rref_naive *rref_naive_new(bool reports)
{
	struct rref_naive *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->reports = reports;
	v->last_gc = -1;
	return v;
}

void rref_naive_free(struct rref_naive *v)
{
	free(v);
}

bool rref_too_big(const struct rref_outcome *got, const struct rref_naive *v)
{
	return got->too_big || v->too_big;
}

/* ---- One replay for both ------------------------------------------------- */

static int pair_event(void *ctx, const struct ht_event *ev,
		      const struct ht_replay_state *st)
{
	struct rref_pair *p = ctx;

	if (p->naive)
		rref_naive_event(p->naive, ev, st);
	return reloc_on_event(p->tracker, ev, st);
}

static int pair_begin(void *ctx, const struct ht_replay_state *st)
{
	struct rref_pair *p = ctx;

	if (p->naive)
		rref_naive_dump_begin(p->naive, st);
	return reloc_on_dump_begin(p->tracker, st);
}

static int pair_end(void *ctx, const struct ht_replay_state *st)
{
	struct rref_pair *p = ctx;

	if (p->naive)
		rref_naive_dump_end(p->naive, st);
	return reloc_on_dump_end(p->tracker, st);
}

static void pair_violation(void *ctx, const struct ht_violation *v)
{
	(void)v;
	((struct rref_pair *)ctx)->violations++;
}

struct ht_replay_callbacks rref_pair_callbacks(void)
{
	struct ht_replay_callbacks cb = {
		.on_dump_begin = pair_begin,
		.on_dump_end = pair_end,
		.on_violation = pair_violation,
	};

	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = pair_event;
	return cb;
}

/* ---- The comparison ------------------------------------------------------ */

static const char *say(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static const char *say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

#define SAME(what, a, b, f)                                               \
	do {                                                              \
		if ((a)->f != (b)->f)                                     \
			return say(buf, len, "%s: " #f " %llu, naive %llu", \
				   what, (unsigned long long)(a)->f,      \
				   (unsigned long long)(b)->f);           \
	} while (0)

static const char *compare_gc(const struct reloc_gc_summary *a,
			      const struct reloc_gc_summary *b, char *buf,
			      size_t len)
{
	char what[32];

	snprintf(what, sizeof(what), "gc %lld", (long long)a->gc);
	SAME(what, a, b, generations);
	SAME(what, a, b, finished);
	SAME(what, a, b, bounds);
	SAME(what, a, b, moved_objects);
	SAME(what, a, b, moved_bytes);
	SAME(what, a, b, survived_objects);
	SAME(what, a, b, survived_bytes);
	SAME(what, a, b, kept_objects);
	SAME(what, a, b, kept_bytes);
	SAME(what, a, b, untouched_objects);
	SAME(what, a, b, untouched_bytes);
	SAME(what, a, b, died_objects);
	SAME(what, a, b, died_bytes);
	SAME(what, a, b, promoted_objects);
	SAME(what, a, b, promoted_bytes);
	SAME(what, a, b, lost_objects);
	SAME(what, a, b, lost_bytes);
	return NULL;
}

static const char *compare_dump(const struct rref_dump *a,
				const struct rref_dump *b, char *buf,
				size_t len)
{
	char what[32];

	snprintf(what, sizeof(what), "dump %lld", (long long)a->sum.dump);
	SAME(what, &a->sum, &b->sum, complete);
	SAME(what, &a->sum, &b->sum, objects);
	SAME(what, &a->sum, &b->sum, new_objects);
	SAME(what, &a->sum, &b->sum, died_objects);
	SAME(what, &a->sum, &b->sum, died_bytes);
	SAME(what, &a->sum, &b->sum, lost_objects);
	SAME(what, &a->sum, &b->sum, n_ages);
	for (size_t k = 0; k < a->sum.n_ages; k++) {
		snprintf(what, sizeof(what), "dump %lld age %zu",
			 (long long)a->sum.dump, k);
		SAME(what, &a->ages[k], &b->ages[k], gcs);
		SAME(what, &a->ages[k], &b->ages[k], count);
		SAME(what, &a->ages[k], &b->ages[k], bytes);
	}
	return NULL;
}

static const char *compare_fate(const struct rref_fate *f,
				const struct nobj *o, size_t i, char *buf,
				size_t len)
{
	if (!f->known)
		return say(buf, len, "object %zu: tracking never ended", i);
	if (o->state == 0) {
		if (f->end != RELOC_END)
			return say(buf, len, "object %zu ended %d/%d, naive: "
				   "tracked", i, f->end, f->cause);
		if (f->id != o->id)
			return say(buf, len, "object %zu at 0x%llx, naive "
				   "0x%llx", i, (unsigned long long)f->id,
				   (unsigned long long)o->id);
		if (f->generation != o->gen)
			return say(buf, len, "object %zu in generation %u, "
				   "naive %u", i, f->generation, o->gen);
		return NULL;
	}
	if (f->end != (o->state == 1 ? RELOC_DIED : RELOC_LOST) ||
	    f->cause != o->cause)
		return say(buf, len, "object %zu ended %d/%d, naive %d/%d", i,
			   f->end, f->cause, o->state, o->cause);
	return NULL;
}

const char *rref_compare(const struct rref_outcome *got,
			 const struct rref_naive *v, char *buf, size_t len)
{
	const char *why;

	if (got->problem[0])
		return say(buf, len, "%s", got->problem);
	if (got->totals.objects != v->n)
		return say(buf, len, "%llu objects tracked, naive %zu",
			   (unsigned long long)got->totals.objects, v->n);
	for (size_t i = 0; i < v->n; i++)
		if ((why = compare_fate(&got->fate[i], &v->obj[i], i, buf,
					len)))
			return why;
	SAME("totals", &got->totals, v, died);
	SAME("totals", &got->totals, v, lost);
	for (size_t g = 0; g < RREF_MAX_GCS; g++) {
		if (got->gc_seen[g] != v->gc_seen[g])
			return say(buf, len, "gc %zu: reported %d, naive %d", g,
				   got->gc_seen[g], v->gc_seen[g]);
		if (!got->gc_seen[g])
			continue;
		if (got->gc_reports[g] != 1)
			return say(buf, len, "gc %zu reported %u times", g,
				   got->gc_reports[g]);
		if ((why = compare_gc(&got->gc[g], &v->gc[g], buf, len)))
			return why;
	}
	for (size_t d = 0; d < RREF_MAX_DUMPS; d++) {
		if (got->dump[d].seen != v->dump[d].seen)
			return say(buf, len, "dump %zu: reported %d, naive %d",
				   d, got->dump[d].seen, v->dump[d].seen);
		if (got->dump[d].seen &&
		    (why = compare_dump(&got->dump[d], &v->dump[d], buf, len)))
			return why;
	}
	return NULL;
}
