/*
 * protocol.c - the protocol state machine of doc/design.md section 2: which
 * event may come when. The recording shim steps it inside a compare-and-swap
 * loop from any thread, so the step path is a pure function of (state,
 * event): no allocation, no globals, no locks, no I/O.
 *
 * Two brackets exist: a heap dump (C_BEGIN ... C_END) and a GC (gc_started
 * ... gc_finished). The references a GC reports outside any heap dump form a
 * dump of their own (a "GC dump"), opened by its first references and closed
 * by gc_finished. At most one dump is open at a time; a heap dump may be
 * open inside a GC or a GC inside a heap dump only after a violation.
 *
 * When an event breaks a rule, the state still moves on so that later
 * checks stay meaningful and one fault yields one violation, not a cascade:
 *  - an opener inside its own kind of bracket (C_BEGIN in a dump,
 *    gc_started in a GC) closes the open bracket and opens a new one, as if
 *    the closer had been lost;
 *  - an opener inside the other kind (C_BEGIN in a GC, gc_started in a heap
 *    dump) opens its bracket alongside the open one, so that the rest of
 *    both still check cleanly; a GC dump open at a C_BEGIN is closed first;
 *  - a closer or a container with nothing open (C_END, gc_finished, a
 *    container outside a dump) and references outside any dump are ignored;
 *  - a container after an abort or after C_HEAP, a frame without a thread,
 *    roots in the wrong place and body events after finishing bounds are
 *    taken as they come (the container becomes current, the GC goes back
 *    to its body phase);
 *  - a field out of range is reported first; the event is then stepped as
 *    if it were in range, except a container of unknown type or an event of
 *    unknown type, which cannot be placed and leaves the state alone.
 */
#include "lib/common/protocol.h"

#include <stdio.h>
#include <string.h>

void proto_init(struct proto_state *s)
{
	memset(s, 0, sizeof(*s));
}

/* ---- Values out of range -------------------------------------------- */

struct bad_field {
	const char *what;
	uint64_t value;
	bool indexed;  /* an element of an array field */
	size_t index;
};

static bool set_bad(struct bad_field *bad, const char *what, uint64_t value,
		    bool indexed, size_t index)
{
	if (bad) {
		bad->what = what;
		bad->value = value;
		bad->indexed = indexed;
		bad->index = index;
	}
	return true;
}

static bool result_out_of_range(enum ht_result r)
{
	return (unsigned)r > HT_RESULT_ABORT;
}

static bool container_type_out_of_range(enum ht_container_type t)
{
	return (unsigned)t < HT_C_FIRST || (unsigned)t > HT_C_LAST;
}

/* Generations index the 32-bit set of gc_started: a larger one could never
 * be collected, and analyses shift by it. */
static bool generation_out_of_range(uint32_t g)
{
	return g > HT_GEN_MAX;
}

/* A field's type: none, a reference, or a primitive (version 3). */
static bool field_type_out_of_range(unsigned type)
{
	return type && type != HT_TYPE_OBJECT && !ht_value_type_width(type);
}

static bool bad_root_value(const struct ht_ev_root_references *e,
			   struct bad_field *bad)
{
	if (e->kinds)
		for (size_t i = 0; i < e->count; i++)
			if (e->kinds[i] > HT_ROOT_KIND_LAST)
				return set_bad(bad, "root kind", e->kinds[i],
					       true, i);
	if (result_out_of_range(e->result))
		return set_bad(bad, "result", (unsigned)e->result, false, 0);
	return false;
}

static bool bad_object_value(const struct ht_ev_object_references *e,
			     struct bad_field *bad)
{
	if (e->has_generation && generation_out_of_range(e->generation))
		return set_bad(bad, "generation", e->generation, false, 0);
	if (result_out_of_range(e->result))
		return set_bad(bad, "result", (unsigned)e->result, false, 0);
	/* a value's field 0 would be no field: the value would name none */
	for (size_t i = 0; i < e->n_values; i++)
		if (e->value_fields[i] == 0)
			return set_bad(bad, "value field", 0, true, i);
	return false;
}

static bool bad_bounds_value(const struct ht_ev_generation_bounds *e,
			     struct bad_field *bad)
{
	for (size_t i = 0; i < e->count; i++)
		if (generation_out_of_range(e->ranges[i].generation))
			return set_bad(bad, "generation",
				       e->ranges[i].generation, true, i);
	return false;
}

/* A field id of 0 would read as "no field" in every reference. */
static bool bad_fields_value(const struct ht_ev_fields *e,
			     struct bad_field *bad)
{
	for (size_t i = 0; i < e->count; i++) {
		if (e->fields[i].id == 0)
			return set_bad(bad, "field id", 0, true, i);
		if (e->fields[i].kind > HT_FIELD_KIND_LAST)
			return set_bad(bad, "field kind", e->fields[i].kind,
				       true, i);
		if (field_type_out_of_range(e->fields[i].type))
			return set_bad(bad, "field type", e->fields[i].type,
				       true, i);
		/* a referent's strength belongs to a reference */
		if (ht_value_type_width(e->fields[i].type) &&
		    e->fields[i].kind > HT_FIELD_STATIC)
			return set_bad(bad, "field kind", e->fields[i].kind,
				       true, i);
	}
	return false;
}

/* Finds the first field of ev out of range; bad may be NULL. */
static bool find_bad_value(const struct ht_event *ev, struct bad_field *bad)
{
	switch (ev->type) {
	case HT_EV_CLASS:
	case HT_EV_THREAD:
	case HT_EV_METHOD:
	case HT_EV_OBJECT_ALLOCATED:
	case HT_EV_STACK:
	case HT_EV_MOVED_REFERENCES:
	case HT_EV_SURVIVING_REFERENCES:
	case HT_EV_GC_FINISHED:
		return false;
	case HT_EV_GC_STARTED:
		if ((unsigned)ev->u.gc_started.reason > HT_GC_INDUCED)
			return set_bad(bad, "GC reason",
				       (unsigned)ev->u.gc_started.reason,
				       false, 0);
		return false;
	case HT_EV_GENERATION_BOUNDS:
		return bad_bounds_value(&ev->u.generation_bounds, bad);
	case HT_EV_BEGIN_CONTAINER:
		if (container_type_out_of_range(ev->u.begin_container.type))
			return set_bad(bad, "container type",
				       (unsigned)ev->u.begin_container.type,
				       false, 0);
		return false;
	case HT_EV_ROOT_REFERENCES:
		return bad_root_value(&ev->u.root_references, bad);
	case HT_EV_OBJECT_REFERENCES:
		return bad_object_value(&ev->u.object_references, bad);
	case HT_EV_FIELDS:
		return bad_fields_value(&ev->u.fields, bad);
	}
	return set_bad(bad, "event type", (unsigned)ev->type, false, 0);
}

bool proto_describe_bad_value(const struct ht_event *ev, char *buf,
			      size_t size)
{
	struct bad_field bad;

	if (!find_bad_value(ev, &bad))
		return false;
	if (bad.indexed)
		snprintf(buf, size, "%s %llu at index %zu", bad.what,
			 (unsigned long long)bad.value, bad.index);
	else
		snprintf(buf, size, "%s %llu", bad.what,
			 (unsigned long long)bad.value);
	return true;
}

/* An event that cannot be placed at all: nothing to step. */
static bool unplaceable(const struct ht_event *ev)
{
	if (ev->type == HT_EV_BEGIN_CONTAINER)
		return container_type_out_of_range(ev->u.begin_container.type);
	return (unsigned)ev->type < HT_EV_FIRST ||
	       (unsigned)ev->type > HT_EV_LAST;
}

/* ---- Brackets ---------------------------------------------------------- */

static void open_heap_dump(struct proto_state *s, unsigned *effects)
{
	s->in_dump = 1;
	s->aborted = 0;
	s->heap_begun = 0;
	s->has_thread = 0;
	s->container = HT_C_BEGIN; /* no real container yet */
	*effects |= PROTO_DUMP_BEGIN;
}

static void close_heap_dump(struct proto_state *s, unsigned *effects)
{
	s->in_dump = 0;
	s->aborted = 0;
	s->heap_begun = 0;
	s->has_thread = 0;
	s->container = 0;
	*effects |= PROTO_DUMP_END;
}

static void open_gc_dump(struct proto_state *s, unsigned *effects)
{
	s->gc_refs = 1;
	s->aborted = 0;
	s->has_thread = 0;
	s->container = 0;
	*effects |= PROTO_DUMP_BEGIN;
}

/* gc_refs doubles as "the GC dump is open": once closed early (by a
 * C_BEGIN), later references of the same GC open a new GC dump. */
static void close_gc_dump(struct proto_state *s, unsigned *effects)
{
	if (!s->gc_refs)
		return;
	s->gc_refs = 0;
	s->aborted = 0;
	s->has_thread = 0;
	s->container = 0;
	*effects |= PROTO_DUMP_END;
}

static void open_gc(struct proto_state *s, unsigned *effects)
{
	s->in_gc = 1;
	s->gc_refs = 0;
	s->gc_phase = PROTO_GC_START;
	*effects |= PROTO_GC_BEGIN;
}

static void close_gc(struct proto_state *s, unsigned *effects)
{
	close_gc_dump(s, effects);
	s->in_gc = 0;
	s->gc_phase = PROTO_GC_START;
	*effects |= PROTO_GC_END;
}

/* A move, survival or reference of the open GC. Bounds seen after earlier
 * body events were finishing bounds; a body event after them means the
 * bounds came in the middle of the GC. */
static enum ht_violation_code enter_gc_body(struct proto_state *s)
{
	enum ht_violation_code v = HT_V_NONE;

	if (s->gc_phase == PROTO_GC_FINISH)
		v = HT_V_BOUNDS_IN_GC;
	s->gc_phase = PROTO_GC_BODY;
	return v;
}

/* ---- Steps by event ---------------------------------------------------- */

static enum ht_violation_code step_gc_started(struct proto_state *s,
					      unsigned *effects)
{
	enum ht_violation_code v = HT_V_NONE;

	if (s->in_gc) {
		v = HT_V_GC_NESTED;
		close_gc(s, effects);
	} else if (s->in_dump) {
		v = HT_V_GC_IN_DUMP;
	}
	open_gc(s, effects);
	return v;
}

static enum ht_violation_code step_gc_finished(struct proto_state *s,
					       unsigned *effects)
{
	if (!s->in_gc)
		return HT_V_GC_NOT_OPEN;
	close_gc(s, effects);
	return HT_V_NONE;
}

static enum ht_violation_code step_gc_blocks(struct proto_state *s)
{
	if (!s->in_gc)
		return HT_V_GC_NOT_OPEN;
	return enter_gc_body(s);
}

static enum ht_violation_code step_bounds(struct proto_state *s)
{
	if (s->in_gc && s->gc_phase == PROTO_GC_BODY)
		s->gc_phase = PROTO_GC_FINISH;
	return HT_V_NONE;
}

static enum ht_violation_code step_c_begin(struct proto_state *s,
					   unsigned *effects)
{
	enum ht_violation_code v = HT_V_NONE;

	if (s->in_dump) {
		v = HT_V_DUMP_NESTED;
		close_heap_dump(s, effects);
	} else if (s->in_gc) {
		v = HT_V_DUMP_IN_GC;
		close_gc_dump(s, effects);
	}
	open_heap_dump(s, effects);
	return v;
}

/* A container between C_BEGIN and C_END. Begun again is fine, so C_HEAP
 * after C_HEAP is too. */
static enum ht_violation_code enter_container(struct proto_state *s,
					      enum ht_container_type t)
{
	enum ht_violation_code v = HT_V_NONE;

	if (s->aborted)
		v = HT_V_AFTER_ABORT;
	else if (s->heap_begun && t != HT_C_HEAP)
		v = HT_V_AFTER_HEAP;
	else if (ht_container_is_frame(t) && !s->has_thread)
		v = HT_V_FRAME_NO_THREAD;
	if (t == HT_C_RT_THREAD)
		s->has_thread = 1;
	if (t == HT_C_HEAP)
		s->heap_begun = 1;
	s->container = (uint8_t)t;
	return v;
}

/* CLR style: in a GC, a thread or frame container opens the GC dump as a
 * reference does, and the stack roots after it are its (the CLR recorder
 * says which thread holds a local so). */
bool proto_gc_container(enum ht_container_type t)
{
	return t == HT_C_RT_THREAD || ht_container_is_frame(t);
}

static enum ht_violation_code gc_dump_refs(struct proto_state *s,
					   unsigned *effects);

static enum ht_violation_code step_gc_container(struct proto_state *s,
						enum ht_container_type t,
						unsigned *effects)
{
	enum ht_violation_code v = gc_dump_refs(s, effects);
	enum ht_violation_code w = enter_container(s, t);

	return v != HT_V_NONE ? v : w;
}

static enum ht_violation_code step_container(struct proto_state *s,
					     enum ht_container_type t,
					     unsigned *effects)
{
	if (t == HT_C_BEGIN)
		return step_c_begin(s, effects);
	if (!s->in_dump && s->in_gc && proto_gc_container(t))
		return step_gc_container(s, t, effects);
	if (!s->in_dump)
		return HT_V_DUMP_NOT_OPEN;
	if (t == HT_C_END) {
		close_heap_dump(s, effects);
		return HT_V_NONE;
	}
	return enter_container(s, t);
}

static enum ht_violation_code heap_dump_refs(const struct proto_state *s,
					     bool roots)
{
	if (s->aborted)
		return HT_V_AFTER_ABORT;
	if (roots && s->container == HT_C_BEGIN)
		return HT_V_ROOTS_NO_CONTAINER;
	if (roots && s->container == HT_C_HEAP)
		return HT_V_ROOTS_IN_HEAP;
	return HT_V_NONE;
}

/* CLR style: a GC's references need no container; the first opens the
 * GC dump. */
static enum ht_violation_code gc_dump_refs(struct proto_state *s,
					   unsigned *effects)
{
	enum ht_violation_code v = enter_gc_body(s);

	if (!s->gc_refs)
		open_gc_dump(s, effects);
	else if (s->aborted)
		v = HT_V_AFTER_ABORT;
	return v;
}

static enum ht_violation_code step_refs(struct proto_state *s, bool roots,
					enum ht_result result,
					unsigned *effects)
{
	enum ht_violation_code v;

	if (s->in_dump)
		v = heap_dump_refs(s, roots);
	else if (s->in_gc)
		v = gc_dump_refs(s, effects);
	else
		return HT_V_REFS_OUTSIDE;
	if (result == HT_RESULT_ABORT)
		s->aborted = 1;
	return v;
}

static enum ht_violation_code step_event(struct proto_state *s,
					 const struct ht_event *ev,
					 unsigned *effects)
{
	switch (ev->type) {
	case HT_EV_CLASS:
	case HT_EV_THREAD:
	case HT_EV_METHOD:
	case HT_EV_OBJECT_ALLOCATED:
	case HT_EV_FIELDS:
	case HT_EV_STACK:
		return HT_V_NONE; /* metadata: valid anywhere */
	case HT_EV_GC_STARTED:
		return step_gc_started(s, effects);
	case HT_EV_GENERATION_BOUNDS:
		return step_bounds(s);
	case HT_EV_MOVED_REFERENCES:
	case HT_EV_SURVIVING_REFERENCES:
		return step_gc_blocks(s);
	case HT_EV_GC_FINISHED:
		return step_gc_finished(s, effects);
	case HT_EV_BEGIN_CONTAINER:
		return step_container(s, ev->u.begin_container.type, effects);
	case HT_EV_ROOT_REFERENCES:
		return step_refs(s, true, ev->u.root_references.result,
				 effects);
	case HT_EV_OBJECT_REFERENCES:
		return step_refs(s, false, ev->u.object_references.result,
				 effects);
	}
	return HT_V_NONE;
}

enum ht_violation_code proto_step(struct proto_state *s,
				  const struct ht_event *ev,
				  unsigned *effects)
{
	enum ht_violation_code value = HT_V_NONE, order;
	unsigned ignored;

	if (!effects)
		effects = &ignored;
	*effects = 0;
	if (find_bad_value(ev, NULL)) {
		value = HT_V_BAD_VALUE;
		if (unplaceable(ev))
			return value;
	}
	order = step_event(s, ev, effects);
	return value != HT_V_NONE ? value : order;
}

enum ht_violation_code proto_finish(const struct proto_state *s)
{
	if (s->in_dump)
		return HT_V_DUMP_UNFINISHED;
	if (s->in_gc)
		return HT_V_GC_UNFINISHED;
	return HT_V_NONE;
}
