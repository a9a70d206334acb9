/*
 * hprof_roots.c - a dump's roots in the HPROF reader's event pass
 * (hprof_internal.h): planned when the dump begins, as the containers of
 * the event model (each thread, its stack's frames from the top, sticky
 * classes, JNI globals, monitors, the rest) with the roots in each, then
 * delivered a step at a time before the dump's objects.
 */
#include "lib/read/hprof_internal.h"

#include <stdlib.h>
#include <string.h>

static int plan_container(struct hprof_source *s, unsigned type, ht_id id1,
			  ht_id id2, uint64_t offset)
{
	if (HPROF_GROW(s->plan, s->n_plan + 1, s->cap_plan) < 0)
		return -1;
	s->plan[s->n_plan++] = (struct step){.type = (uint8_t)type,
					     .id1 = id1, .id2 = id2,
					     .offset = offset};
	return 0;
}

/* One root in the container planned last, joining the roots step before
 * it when there is one with room. */
static int plan_root(struct hprof_source *s, ht_id ref, uint64_t offset)
{
	struct step *last = s->n_plan ? &s->plan[s->n_plan - 1] : NULL;

	if (HPROF_GROW(s->plan_refs, s->n_plan_refs + 1, s->cap_plan_refs) < 0)
		return -1;
	if (!last || !last->roots || last->count == REFS_PER_EVENT) {
		if (HPROF_GROW(s->plan, s->n_plan + 1, s->cap_plan) < 0)
			return -1;
		s->plan[s->n_plan++] = (struct step){.roots = true,
						     .offset = offset,
						     .first = s->n_plan_refs};
		last = &s->plan[s->n_plan - 1];
	}
	s->plan_refs[s->n_plan_refs++] = ref;
	last->count++;
	return 0;
}

/* A root of a thread, in the order its containers go out: by thread,
 * the thread's own roots before its frames', frames from the top. */
struct thread_root {
	uint32_t serial;
	int64_t depth;     /* -1: in the thread's container */
	size_t index;      /* into the dump's roots: file order */
	ht_id frame, method;
	uint8_t type;      /* of the frame's container */
};

static int compare_thread_roots(const void *x, const void *y)
{
	const struct thread_root *a = x, *b = y;

	if (a->serial != b->serial)
		return a->serial < b->serial ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

static bool is_thread_root(unsigned tag)
{
	return tag == S_ROOT_THREAD_OBJECT || tag == S_ROOT_JAVA_FRAME ||
	       tag == S_ROOT_JNI_LOCAL || tag == S_ROOT_NATIVE_STACK ||
	       tag == S_ROOT_THREAD_BLOCK;
}

static const struct trace *trace_of(const struct hprof_source *s,
				    uint32_t thread_serial)
{
	uint32_t i;

	if (idmap_get(&s->thread_by_serial, thread_serial, &i) &&
	    s->threads[i].has_trace &&
	    idmap_get(&s->trace_by_serial, s->threads[i].trace_serial, &i))
		return &s->traces[i];
	if (idmap_get(&s->trace_by_thread, thread_serial, &i))
		return &s->traces[i];
	return NULL;
}

/* The container of frame `depth` of trace t: a native method's frame is
 * C_RT_NATIVE, a compiled one's C_RT_JIT, any other C_RT_INTERPRETED
 * (HPROF does not say which frames HotSpot had compiled). */
static void frame_at(const struct hprof_source *s, const struct trace *t,
		     uint32_t depth, struct thread_root *tr)
{
	uint32_t i;

	tr->depth = depth;
	tr->frame = s->frame_ids[t->first + depth];
	tr->type = HT_C_RT_INTERPRETED;
	tr->method = tr->frame;
	if (idmap_get(&s->frame_by_id, tr->frame, &i)) {
		tr->method = s->frames[i].method_id;
		if (s->frames[i].line == LINE_NATIVE)
			tr->type = HT_C_RT_NATIVE;
		else if (s->frames[i].line == LINE_COMPILED)
			tr->type = HT_C_RT_JIT;
	}
}

/* The frame a JAVA_FRAME or JNI_LOCAL root lies in, when the thread's
 * trace has it; depth -1 (the thread's own container) otherwise. */
static void place_in_frame(const struct hprof_source *s, const struct root *r,
			   struct thread_root *tr)
{
	const struct trace *t;

	tr->depth = -1;
	if ((r->tag != S_ROOT_JAVA_FRAME && r->tag != S_ROOT_JNI_LOCAL) ||
	    r->depth < 0)
		return;
	t = trace_of(s, r->thread_serial);
	if (t && (uint32_t)r->depth < t->n_frames)
		frame_at(s, t, (uint32_t)r->depth, tr);
}

static ht_id thread_id_of(struct hprof_source *s, uint32_t serial)
{
	uint32_t i;

	if (idmap_get(&s->thread_by_serial, serial, &i))
		return thread_id(&s->threads[i]);
	return serial;
}

/* The frames of trace t from `from` up to (not including) `to`, each
 * begun with no roots: a developer reads the whole stack, not only the
 * frames whose locals hold objects. */
static int plan_empty_frames(struct hprof_source *s, const struct trace *t,
			     uint32_t from, uint32_t to, uint64_t offset)
{
	for (uint32_t depth = from; t && depth < to && depth < t->n_frames;
	     depth++) {
		struct thread_root fr;

		frame_at(s, t, depth, &fr);
		if (plan_container(s, fr.type, fr.frame, fr.method, offset) < 0)
			return -1;
	}
	return 0;
}

/* A file's dumps spread out at most this many times the frames its
 * traces hold: HotSpot writes one dump whose threads each have a trace
 * of their own, while a hostile file of many tiny dumps naming one long
 * trace would otherwise make millions of events a byte. */
#define MAX_SPREAD_PER_FRAME 64

/* The roots of one thread, tr[0..n) in container order: its container,
 * its own roots, then every frame of its trace from the top, each with
 * the roots its locals are. A trace is spread out once a dump (a thread
 * whose trace another's named already gets only the frames of its
 * roots), and within MAX_SPREAD_PER_FRAME, so that the frames stay
 * within what the file holds. */
static int plan_thread(struct hprof_source *s, const struct dump *d,
		       const struct thread_root *tr, size_t n,
		       uint8_t *spread)
{
	const struct trace *t = trace_of(s, tr[0].serial);
	uint64_t offset = d->roots[tr[0].index].offset;
	uint32_t next = 0; /* the first frame not yet begun */

	if (t && (spread[t - s->traces] ||
		  s->frames_spread + t->n_frames >
			  (uint64_t)s->n_frame_ids * MAX_SPREAD_PER_FRAME)) {
		t = NULL;
	} else if (t) {
		spread[t - s->traces] = 1;
		s->frames_spread += t->n_frames;
	}

	if (plan_container(s, HT_C_RT_THREAD, thread_id_of(s, tr[0].serial), 0,
			   offset) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct root *r = &d->roots[tr[i].index];

		if (tr[i].depth >= 0 &&
		    (i == 0 || tr[i].depth != tr[i - 1].depth)) {
			if (plan_empty_frames(s, t, next,
					      (uint32_t)tr[i].depth,
					      r->offset) < 0 ||
			    plan_container(s, tr[i].type, tr[i].frame,
					   tr[i].method, r->offset) < 0)
				return -1;
			next = (uint32_t)tr[i].depth + 1;
		}
		if (plan_root(s, r->object, r->offset) < 0)
			return -1;
	}
	return plan_empty_frames(s, t, next, UINT32_MAX, offset);
}

static int plan_threads(struct hprof_source *s, const struct dump *d)
{
	uint64_t bytes = (d->n_roots ? d->n_roots : 1) *
			 sizeof(struct thread_root);
	struct thread_root *tr;
	uint8_t *spread;
	bool spread_charged;
	size_t n = 0;
	int rc = 0;

	if (mem_budget_charge(bytes) < 0)
		return -1;
	tr = malloc(bytes);
	if (!tr) {
		mem_budget_release(bytes);
		return -1;
	}
	for (size_t i = 0; i < d->n_roots; i++) {
		if (!is_thread_root(d->roots[i].tag))
			continue;
		tr[n] = (struct thread_root){
			.serial = d->roots[i].thread_serial,
			.index = i,
		};
		place_in_frame(s, &d->roots[i], &tr[n]);
		n++;
	}
	qsort(tr, n, sizeof(*tr), compare_thread_roots);
	/* a flag per trace: spread out in this dump already */
	spread = calloc(s->n_traces ? s->n_traces : 1, 1);
	spread_charged = spread && mem_budget_charge(s->n_traces) == 0;
	if (!spread_charged)
		rc = -1;
	for (size_t i = 0, j; i < n && rc == 0; i = j) {
		for (j = i + 1; j < n && tr[j].serial == tr[i].serial; j++)
			;
		rc = plan_thread(s, d, tr + i, j - i, spread);
	}
	if (spread_charged)
		mem_budget_release(s->n_traces);
	free(spread);
	free(tr);
	mem_budget_release(bytes);
	return rc;
}

/* Roots of one kind, all in one container of type `type`. */
static int plan_kind(struct hprof_source *s, const struct dump *d,
		     unsigned tag, unsigned type)
{
	bool begun = false;

	for (size_t i = 0; i < d->n_roots; i++) {
		const struct root *r = &d->roots[i];

		if (r->tag != tag)
			continue;
		if (!begun && plan_container(s, type, 0, 0, r->offset) < 0)
			return -1;
		begun = true;
		if (plan_root(s, r->object, r->offset) < 0)
			return -1;
	}
	return 0;
}

/* A sticky class is the root of its own C_RT_CLASS container. */
static int plan_classes(struct hprof_source *s, const struct dump *d)
{
	for (size_t i = 0; i < d->n_roots; i++) {
		const struct root *r = &d->roots[i];

		if (r->tag != S_ROOT_STICKY_CLASS)
			continue;
		if (plan_container(s, HT_C_RT_CLASS, r->object, 0,
				   r->offset) < 0 ||
		    plan_root(s, r->object, r->offset) < 0)
			return -1;
	}
	return 0;
}

int hprof_build_plan(struct hprof_source *s, const struct dump *d)
{
	s->n_plan = 0;
	s->n_plan_refs = 0;
	s->plan_at = 0;
	if (plan_threads(s, d) < 0 || plan_classes(s, d) < 0 ||
	    plan_kind(s, d, S_ROOT_JNI_GLOBAL, HT_C_RT_STRONGPTR) < 0 ||
	    plan_kind(s, d, S_ROOT_MONITOR_USED, HT_C_RT_INTERNALVM) < 0 ||
	    plan_kind(s, d, S_ROOT_UNKNOWN, HT_C_RT_ROOTTABLE) < 0)
		return -1;
	return 0;
}

static int zero_flags(struct hprof_source *s, size_t n)
{
	size_t old = s->cap_zero_flags;

	if (HPROF_GROW(s->zero_flags, n, s->cap_zero_flags) < 0)
		return -1;
	memset(s->zero_flags + old, 0,
	       (s->cap_zero_flags - old) * sizeof(*s->zero_flags));
	return 0;
}

void hprof_container_event(struct hprof_source *s, struct ht_event *ev,
			    unsigned type, ht_id id1, ht_id id2,
			    uint64_t offset)
{
	start_event(s, ev, HT_EV_BEGIN_CONTAINER, offset);
	ev->u.begin_container.type = (enum ht_container_type)type;
	ev->u.begin_container.id1 = id1;
	ev->u.begin_container.id2 = id2;
}

int hprof_step_event(struct hprof_source *s, const struct step *st,
		      struct ht_event *ev)
{
	if (!st->roots) {
		hprof_container_event(s, ev, st->type, st->id1, st->id2, st->offset);
		return 0;
	}
	if (zero_flags(s, st->count) < 0)
		return -1;
	start_event(s, ev, HT_EV_ROOT_REFERENCES, st->offset);
	ev->u.root_references.count = st->count;
	ev->u.root_references.refs = s->plan_refs + st->first;
	ev->u.root_references.flags = s->zero_flags;
	return 0;
}
