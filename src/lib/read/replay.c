/*
 * replay.c - the replayer (see replay.h for the order of callbacks) and
 * ht_replay on top of it: the one path by which every analysis and
 * `heaptrace check` consume a trace.
 *
 * The protocol state machine decides what each event does to the brackets;
 * the replayer adds what needs memory or counting: dump and GC numbers, the
 * current container and thread with their ids, and the objects that
 * announced more references (HT_OBJ_MORE_REFERENCES) and wait for them,
 * and the fields declared, against which the references that name a field
 * are checked when their dump ends.
 */
#include "lib/read/replay.h"

#include "lib/common/error.h"
#include "lib/common/protocol.h"
#include "lib/read/field_table.h"
#include "util/alloc.h"
#include "util/membudget.h"
#include "util/idmap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Objects waiting for more references ------------------------------- */

struct pending {
	ht_id id;
	ht_id class_id;
	uint64_t size;
	uint64_t event_index; /* of the last part that announced more */
	bool used;
};

/* Open addressing with linear probing, at most half full so that probes
 * stay short and always end at a free slot. Removal shifts the following
 * entries back instead of leaving tombstones, so a long dump that joins
 * millions of objects does not clog the table. */
struct pending_table {
	struct pending *slots;
	size_t capacity; /* a power of two, or 0 before the first insert */
	size_t count;
	uint64_t key;    /* the secret of the hash (util/idmap.h) */
};

#define PENDING_MIN_CAPACITY 64

/* Ids are aligned addresses, and they come from the input: the keyed
 * hash of util/idmap.h mixes the high bits down, and ids cannot be chosen
 * to collide. */
static size_t home_slot(const struct pending_table *t, ht_id id)
{
	return (size_t)idhash(t->key, id) & (t->capacity - 1);
}

static size_t next_slot(const struct pending_table *t, size_t i)
{
	return (i + 1) & (t->capacity - 1);
}

static struct pending *pending_find(struct pending_table *t, ht_id id)
{
	if (t->count == 0)
		return NULL;
	for (size_t i = home_slot(t, id);; i = next_slot(t, i)) {
		if (!t->slots[i].used)
			return NULL;
		if (t->slots[i].id == id)
			return &t->slots[i];
	}
}

static void place(struct pending_table *t, const struct pending *p)
{
	size_t i = home_slot(t, p->id);

	while (t->slots[i].used)
		i = next_slot(t, i);
	t->slots[i] = *p;
	t->slots[i].used = true;
}

static int pending_grow(struct pending_table *t)
{
	struct pending_table bigger = {
		.capacity = t->capacity ? t->capacity * 2 : PENDING_MIN_CAPACITY,
		.count = t->count,
	};

	bigger.slots = calloc(bigger.capacity, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	bigger.key = idhash_key(bigger.slots);
	for (size_t i = 0; i < t->capacity; i++)
		if (t->slots[i].used)
			place(&bigger, &t->slots[i]);
	free(t->slots);
	*t = bigger;
	return 0;
}

/* p->id must not be in the table yet. */
static int pending_add(struct pending_table *t, const struct pending *p)
{
	if ((t->count + 1) * 2 > t->capacity && pending_grow(t) < 0)
		return -1;
	place(t, p);
	t->count++;
	return 0;
}

/* Whether x lies in (lo, hi] going round the table. */
static bool cyclically_within(size_t lo, size_t x, size_t hi)
{
	if (lo <= hi)
		return lo < x && x <= hi;
	return lo < x || x <= hi;
}

/* Fills the hole with the next entry of the run whose home slot does not
 * lie between the hole and that entry (it would then no longer be found),
 * and repeats from the slot it left. */
static void pending_remove(struct pending_table *t, struct pending *p)
{
	size_t hole = (size_t)(p - t->slots);

	for (size_t i = next_slot(t, hole); t->slots[i].used;
	     i = next_slot(t, i)) {
		if (cyclically_within(hole, home_slot(t, t->slots[i].id), i))
			continue;
		t->slots[hole] = t->slots[i];
		hole = i;
	}
	t->slots[hole].used = false;
	t->count--;
}

static int compare_pending_ids(const void *a, const void *b)
{
	ht_id x = ((const struct pending *)a)->id;
	ht_id y = ((const struct pending *)b)->id;

	return (x > y) - (x < y);
}

/* Moves the waiting objects to the front of the slots, in ascending id
 * order so that reports do not depend on the hash; the table is then
 * unusable until pending_clear. Returns how many there are. */
static size_t pending_sort(struct pending_table *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->capacity; i++)
		if (t->slots[i].used)
			t->slots[n++] = t->slots[i];
	qsort(t->slots, n, sizeof(*t->slots), compare_pending_ids);
	return n;
}

/* Keeps the slots: the next dump will likely need as many. */
static void pending_clear(struct pending_table *t)
{
	if (t->count)
		memset(t->slots, 0, t->capacity * sizeof(*t->slots));
	t->count = 0;
}

/* ---- The replayer ------------------------------------------------------ */

/*
 * The thread each frame container of the current dump was first begun
 * under. A frame belongs to the thread container begun last, but the same
 * frame may be begun again later, after other threads' containers: it
 * still belongs to its first thread. Open addressing keyed by the frame's
 * type and id1, at most half full; cleared at every dump.
 */
struct frame_thread {
	ht_id id1;
	uint8_t type;
	bool used;
	bool has_thread;
	ht_id thread;
};

struct frame_table {
	struct frame_thread *slots;
	size_t capacity; /* a power of two, or 0 */
	size_t count;
	uint64_t key;    /* the secret of the hash (util/idmap.h) */
};

/* A field id a reference named before any declaration of it: the dump may
 * still declare it before its end. */
struct unresolved_field {
	ht_id id;
	uint64_t event_index; /* of the first reference that named it */
};

struct replayer {
	struct ht_replay_callbacks cb;
	void *ctx;
	struct proto_state proto;
	struct ht_replay_state st;
	struct pending_table pending;
	struct frame_table frames;
	struct field_table fields;
	struct unresolved_field *unresolved;
	size_t n_unresolved, unresolved_cap;
	struct idmap unresolved_ids; /* the ids in unresolved */
	struct ht_position where; /* of the event being fed, for violations */
	uint64_t events, dumps, gcs, violations;
	bool out_of_memory;
};

struct replayer *replayer_new(const struct ht_replay_callbacks *cb,
			      void *ctx)
{
	struct replayer *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (cb)
		r->cb = *cb;
	r->ctx = ctx;
	proto_init(&r->proto);
	field_table_init(&r->fields);
	idmap_init(&r->unresolved_ids);
	r->st.dump = -1;
	r->st.gc = -1;
	return r;
}

void replayer_free(struct replayer *r)
{
	if (!r)
		return;
	free(r->pending.slots);
	free(r->frames.slots);
	field_table_free(&r->fields);
	free(r->unresolved);
	idmap_free(&r->unresolved_ids);
	free(r);
}

void replayer_summary(const struct replayer *r,
		      struct ht_replay_summary *summary)
{
	memset(summary, 0, sizeof(*summary));
	summary->events = r->events;
	summary->dumps = r->dumps;
	summary->gcs = r->gcs;
	summary->violations = r->violations;
}

bool replayer_out_of_memory(const struct replayer *r)
{
	return r->out_of_memory;
}

/* ---- Violations --------------------------------------------------------- */

static void report(struct replayer *r, enum ht_violation_code code,
		   const char *fmt, ...) HT_PRINTF(3, 4);

static void report(struct replayer *r, enum ht_violation_code code,
		   const char *fmt, ...)
{
	struct ht_violation v;
	va_list ap;

	memset(&v, 0, sizeof(v));
	v.code = code;
	v.where = r->where;
	va_start(ap, fmt);
	vsnprintf(v.detail, sizeof(v.detail), fmt, ap);
	va_end(ap);
	r->violations++;
	if (r->cb.on_violation)
		r->cb.on_violation(r->ctx, &v);
}

/* id1 means something for these containers only (see the seed). */
static bool container_has_id(enum ht_container_type t)
{
	return t != HT_C_BEGIN && t != HT_C_END && t != HT_C_HEAP &&
	       t != HT_C_RT_INTERNALVM && t != HT_C_RT_ROOTTABLE &&
	       t != HT_C_RT_STRONGPTR && t != HT_C_RT_FINALIZED;
}

static void describe_container(const struct ht_ev_begin_container *c,
			       char *buf, size_t size)
{
	const char *name = ht_container_name(c->type);

	if (!name)
		snprintf(buf, size, "begin_container of type %u",
			 (unsigned)c->type);
	else if (container_has_id(c->type))
		snprintf(buf, size, "%s (id1 0x%" PRIx64 ")", name, c->id1);
	else
		snprintf(buf, size, "%s", name);
}

/* The event in a few words, for details: its name and what identifies it. */
static void describe_event(const struct ht_event *ev, char *buf, size_t size)
{
	const char *name = ht_event_name(ev->type);

	switch (ev->type) {
	case HT_EV_BEGIN_CONTAINER:
		describe_container(&ev->u.begin_container, buf, size);
		return;
	case HT_EV_ROOT_REFERENCES:
		snprintf(buf, size, "root_references (%zu refs)",
			 ev->u.root_references.count);
		return;
	case HT_EV_OBJECT_REFERENCES:
		snprintf(buf, size, "object_references of 0x%" PRIx64,
			 ev->u.object_references.id);
		return;
	default:
		break;
	}
	if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "event of type %u", (unsigned)ev->type);
}

/* A rule broken by ev, said with the numbers of the state before it. */
static void report_step(struct replayer *r, enum ht_violation_code code,
			const struct ht_event *ev)
{
	const struct ht_replay_state *st = &r->st;
	char what[96], bad[96];

	describe_event(ev, what, sizeof(what));
	switch (code) {
	case HT_V_DUMP_NESTED:
		report(r, code, "C_BEGIN inside dump %" PRId64
		       ", which had no C_END: dump %" PRId64 " begins",
		       st->dump, st->dump + 1);
		break;
	case HT_V_DUMP_IN_GC:
		report(r, code, "C_BEGIN inside GC %" PRId64, st->gc);
		break;
	case HT_V_DUMP_NOT_OPEN:
		report(r, code, "%s outside a heap dump", what);
		break;
	case HT_V_REFS_OUTSIDE:
		report(r, code, "%s outside any heap dump or GC", what);
		break;
	case HT_V_ROOTS_NO_CONTAINER:
		report(r, code, "%s in dump %" PRId64 " before any container",
		       what, st->dump);
		break;
	case HT_V_ROOTS_IN_HEAP:
		report(r, code, "%s in C_HEAP of dump %" PRId64, what,
		       st->dump);
		break;
	case HT_V_FRAME_NO_THREAD:
		report(r, code, "%s with no thread container in dump %" PRId64,
		       what, st->dump);
		break;
	case HT_V_AFTER_HEAP:
		report(r, code, "%s after C_HEAP in dump %" PRId64, what,
		       st->dump);
		break;
	case HT_V_AFTER_ABORT:
		report(r, code, "%s after dump %" PRId64 " was aborted", what,
		       st->dump);
		break;
	case HT_V_GC_NESTED:
		report(r, code, "gc_started inside GC %" PRId64
		       ", which had no gc_finished: GC %" PRId64 " begins",
		       st->gc, st->gc + 1);
		break;
	case HT_V_GC_NOT_OPEN:
		report(r, code, "%s outside a GC", what);
		break;
	case HT_V_GC_IN_DUMP:
		report(r, code, "gc_started inside dump %" PRId64, st->dump);
		break;
	case HT_V_BOUNDS_IN_GC:
		report(r, code, "%s after generation_bounds in the middle of GC %"
		       PRId64, what, st->gc);
		break;
	case HT_V_BAD_VALUE:
		if (!proto_describe_bad_value(ev, bad, sizeof(bad)))
			snprintf(bad, sizeof(bad), "a field");
		report(r, code, "%s: %s out of range", what, bad);
		break;
	default:
		report(r, code, "%s: %s", what, ht_violation_text(code));
		break;
	}
}

/* At the end of a dump, the objects still waiting, in ascending id order.
 * An aborted dump is exempt: the runtime sends nothing after an abort. */
static void report_missing(struct replayer *r)
{
	struct pending_table *t = &r->pending;
	size_t n;

	if (t->count == 0)
		return;
	if (!r->st.dump_aborted) {
		n = pending_sort(t);
		for (size_t i = 0; i < n; i++)
			report(r, HT_V_CONTINUATION_MISSING,
			       "object 0x%" PRIx64 " (class 0x%" PRIx64
			       ") announced more references at event %" PRIu64
			       "; dump %" PRId64 " ended without them",
			       t->slots[i].id, t->slots[i].class_id,
			       t->slots[i].event_index, r->st.dump);
	}
	pending_clear(t);
}

/* ---- Fields ------------------------------------------------------------ */

static void describe_field(const struct ht_field *f, char *buf, size_t size)
{
	snprintf(buf, size, "%s field '%s' of class 0x%" PRIx64,
		 f->kind == HT_FIELD_STATIC ? "static" : "instance",
		 f->name ? f->name : "", f->class_id);
	if (f->has_offset) {
		size_t n = strlen(buf);

		snprintf(buf + n, size - n, " at offset %" PRIu64, f->offset);
	}
	if (ht_value_type_name(f->type)) {
		size_t n = strlen(buf);

		snprintf(buf + n, size - n, " of type %s",
			 ht_value_type_name(f->type));
	}
}

static int declare_fields(struct replayer *r, const struct ht_ev_fields *e)
{
	for (size_t i = 0; i < e->count; i++) {
		const struct field_entry *earlier;
		struct ht_field was;
		char now_text[128], was_text[128];
		int rc;

		if (e->fields[i].id == 0)
			continue; /* a bad value, already reported */
		rc = field_table_declare(&r->fields, &e->fields[i],
					 r->st.event_index, &earlier);
		if (rc < 0)
			return -1;
		if (rc != FIELD_DIFFERENT)
			continue;
		field_table_get(&r->fields, e->fields[i].id, &was);
		describe_field(&e->fields[i], now_text, sizeof(now_text));
		describe_field(&was, was_text, sizeof(was_text));
		report(r, HT_V_FIELD_REDECLARED,
		       "field %" PRIu64 " declared as the %s; at event %" PRIu64
		       " it was the %s", e->fields[i].id, now_text,
		       earlier->event_index, was_text);
	}
	return 0;
}

/* Notes the field ids of a reference event that are not declared yet. */
static int note_field_refs(struct replayer *r, size_t count, const ht_id *ids)
{
	for (size_t i = 0; i < count; i++) {
		uint32_t slot = (uint32_t)r->n_unresolved;
		int rc;

		if (ids[i] == 0 || field_table_has(&r->fields, ids[i]))
			continue;
		rc = idmap_get_or_add(&r->unresolved_ids, ids[i], &slot);
		if (rc < 0 ||
		    (rc == 0 && ALLOC_GROW(r->unresolved, r->n_unresolved + 1,
					   r->unresolved_cap) < 0))
			return -1;
		if (rc == 0)
			r->unresolved[r->n_unresolved++] = (struct unresolved_field){
				ids[i], r->st.event_index };
	}
	return 0;
}

static int note_fields(struct replayer *r, const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_FIELDS:
		return declare_fields(r, &ev->u.fields);
	case HT_EV_OBJECT_REFERENCES:
		if (note_field_refs(r, ev->u.object_references.n_values,
				    ev->u.object_references.value_fields) < 0)
			return -1;
		if (!ev->u.object_references.ref_fields)
			return 0;
		return note_field_refs(r, ev->u.object_references.count,
				       ev->u.object_references.ref_fields);
	case HT_EV_ROOT_REFERENCES:
		if (!ev->u.root_references.root_fields)
			return 0;
		return note_field_refs(r, ev->u.root_references.count,
				       ev->u.root_references.root_fields);
	default:
		return 0;
	}
}

static int compare_unresolved(const void *a, const void *b)
{
	ht_id x = ((const struct unresolved_field *)a)->id;
	ht_id y = ((const struct unresolved_field *)b)->id;

	return (x > y) - (x < y);
}

/* At the end of a dump (or of the trace), the fields its references named
 * that are still undeclared, in ascending id order. */
static void report_undeclared(struct replayer *r)
{
	if (r->n_unresolved == 0)
		return;
	qsort(r->unresolved, r->n_unresolved, sizeof(*r->unresolved),
	      compare_unresolved);
	for (size_t i = 0; i < r->n_unresolved; i++) {
		const struct unresolved_field *u = &r->unresolved[i];

		if (field_table_has(&r->fields, u->id))
			continue;
		if (r->st.dump >= 0)
			report(r, HT_V_FIELD_UNDECLARED,
			       "field %" PRIu64 ", named by a reference at "
			       "event %" PRIu64 ", was not declared by the "
			       "end of dump %" PRId64, u->id, u->event_index,
			       r->st.dump);
		else
			report(r, HT_V_FIELD_UNDECLARED,
			       "field %" PRIu64 ", named by a reference at "
			       "event %" PRIu64 ", was never declared",
			       u->id, u->event_index);
	}
	r->n_unresolved = 0;
	idmap_clear(&r->unresolved_ids);
}

/* Joins an object_references of an open dump to the earlier parts of the
 * same object, if any, and remembers it if it announces more. */
static int join_continuation(struct replayer *r,
			     const struct ht_ev_object_references *e)
{
	struct pending *p = pending_find(&r->pending, e->id);
	bool more = (e->flags & HT_OBJ_MORE_REFERENCES) != 0;

	if (!p) {
		struct pending fresh = {
			.id = e->id,
			.class_id = e->class_id,
			.size = e->size,
			.event_index = r->st.event_index,
		};

		return more ? pending_add(&r->pending, &fresh) : 0;
	}
	r->st.continuation = true;
	if (p->class_id != e->class_id || p->size != e->size)
		report(r, HT_V_CONTINUATION_MISMATCH,
		       "object 0x%" PRIx64 " continued with class 0x%" PRIx64
		       " and size %" PRIu64 "; at event %" PRIu64
		       " it had class 0x%" PRIx64 " and size %" PRIu64,
		       e->id, e->class_id, e->size, p->event_index,
		       p->class_id, p->size);
	if (more)
		p->event_index = r->st.event_index;
	else
		pending_remove(&r->pending, p);
	return 0;
}

/* ---- Feeding events ----------------------------------------------------- */

static bool dump_open(const struct proto_state *s)
{
	return s->in_dump || (s->in_gc && s->gc_refs);
}

/* Whether ev is the closer of the dump it ends (C_END, gc_finished), as
 * opposed to an opener that ends the previous dump before beginning. */
static bool closes_dump(const struct ht_event *ev, unsigned effects)
{
	if (!(effects & PROTO_DUMP_END))
		return false;
	return ev->type == HT_EV_GC_FINISHED ||
	       (ev->type == HT_EV_BEGIN_CONTAINER &&
		ev->u.begin_container.type == HT_C_END);
}

static void set_where(struct replayer *r, const struct ht_position *pos,
		      uint64_t index)
{
	if (pos)
		r->where = *pos;
	else
		memset(&r->where, 0, sizeof(r->where));
	r->where.event_index = index;
}

static void forget_container(struct ht_replay_state *st)
{
	st->container = 0;
	st->container_id1 = 0;
	st->container_id2 = 0;
	st->thread_id = 0;
	st->has_thread = false;
	st->container_thread = 0;
	st->container_has_thread = false;
}

static struct frame_thread *frame_slot(struct frame_table *t, uint8_t type,
				       ht_id id1)
{
	uint64_t h = idhash(t->key, id1 ^ ((uint64_t)type << 59));
	size_t i = (size_t)h & (t->capacity - 1);

	while (t->slots[i].used &&
	       (t->slots[i].type != type || t->slots[i].id1 != id1))
		i = (i + 1) & (t->capacity - 1);
	return &t->slots[i];
}

static int frame_table_grow(struct frame_table *t)
{
	struct frame_table bigger = {.capacity = t->capacity ? 2 * t->capacity : 64};

	bigger.slots = calloc(bigger.capacity, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	bigger.key = idhash_key(bigger.slots);
	for (size_t i = 0; i < t->capacity; i++)
		if (t->slots[i].used)
			*frame_slot(&bigger, t->slots[i].type, t->slots[i].id1) =
				t->slots[i];
	bigger.count = t->count;
	free(t->slots);
	*t = bigger;
	return 0;
}

static void frame_table_clear(struct frame_table *t)
{
	if (t->count)
		memset(t->slots, 0, t->capacity * sizeof(*t->slots));
	t->count = 0;
}

/* The thread a frame container belongs to: remembered from its first
 * begin in the dump, else the thread begun last (and remembered). -1 when
 * out of memory. */
static int frame_thread(struct replayer *r, const struct ht_ev_begin_container *c)
{
	struct ht_replay_state *st = &r->st;
	struct frame_thread *f;

	if (2 * (r->frames.count + 1) > r->frames.capacity &&
	    frame_table_grow(&r->frames) < 0)
		return -1;
	f = frame_slot(&r->frames, (uint8_t)c->type, c->id1);
	if (!f->used) {
		f->used = true;
		f->type = (uint8_t)c->type;
		f->id1 = c->id1;
		f->thread = st->thread_id;
		f->has_thread = st->has_thread;
		r->frames.count++;
	}
	st->container_thread = f->thread;
	st->container_has_thread = f->has_thread;
	return 0;
}

static int enter_container(struct replayer *r,
			   const struct ht_ev_begin_container *c)
{
	struct ht_replay_state *st = &r->st;

	st->container = c->type;
	st->container_id1 = c->id1;
	st->container_id2 = c->id2;
	st->container_thread = 0;
	st->container_has_thread = false;
	if (c->type == HT_C_RT_THREAD) {
		st->thread_id = c->id1;
		st->has_thread = true;
		st->container_thread = c->id1;
		st->container_has_thread = true;
	} else if (ht_container_is_frame(c->type)) {
		return frame_thread(r, c);
	}
	return 0;
}

static int end_dump(struct replayer *r)
{
	int rc = 0;

	if (r->cb.on_dump_end)
		rc = r->cb.on_dump_end(r->ctx, &r->st);
	r->st.in_dump = false;
	forget_container(&r->st);
	return rc;
}

/* Whether the state machine took the container into a dump (a container
 * outside any dump, or of unknown type, is left out). */
static bool container_taken(const struct replayer *r,
			    const struct ht_ev_begin_container *c,
			    unsigned effects)
{
	if ((unsigned)c->type < HT_C_FIRST || (unsigned)c->type > HT_C_LAST)
		return false;
	if (!r->proto.in_dump && r->proto.gc_refs)
		return proto_gc_container(c->type);
	return r->proto.in_dump || (effects & PROTO_DUMP_END);
}

/* Brings the replay state to the event's own: the numbers of what it
 * begins, the container it enters, the abort it reports. */
static void enter_event(struct replayer *r, const struct ht_event *ev,
			unsigned effects)
{
	struct ht_replay_state *st = &r->st;

	if (effects & PROTO_GC_BEGIN) {
		st->gc = (int64_t)r->gcs++;
		st->in_gc = true;
	}
	if (effects & PROTO_DUMP_BEGIN) {
		st->dump = (int64_t)r->dumps++;
		st->in_dump = true;
		st->dump_aborted = false;
		/* a C_BEGIN opens a container dump even inside a GC */
		st->gc_dump = !(ev->type == HT_EV_BEGIN_CONTAINER &&
				ev->u.begin_container.type == HT_C_BEGIN);
		forget_container(st);
		frame_table_clear(&r->frames);
	}
	if (r->proto.aborted)
		st->dump_aborted = true;
	if (ev->type == HT_EV_BEGIN_CONTAINER &&
	    container_taken(r, &ev->u.begin_container, effects) &&
	    enter_container(r, &ev->u.begin_container) < 0)
		r->out_of_memory = true;
}

static int call_event(struct replayer *r, const struct ht_event *ev)
{
	unsigned t = (unsigned)ev->type;

	if (t < HT_EV_FIRST || t > HT_EV_LAST || !r->cb.on_event[t])
		return 0;
	return r->cb.on_event[t](r->ctx, ev, &r->st);
}

static int deliver(struct replayer *r, const struct ht_event *ev,
		   unsigned effects)
{
	bool closes = closes_dump(ev, effects);
	int rc;

	if ((effects & PROTO_DUMP_END) && !closes) {
		rc = end_dump(r);
		if (rc)
			return rc;
	}
	enter_event(r, ev, effects);
	if ((effects & PROTO_DUMP_BEGIN) && r->cb.on_dump_begin) {
		rc = r->cb.on_dump_begin(r->ctx, &r->st);
		if (rc)
			return rc;
	}
	rc = call_event(r, ev);
	if (rc)
		return rc;
	if (closes)
		rc = end_dump(r);
	r->st.in_gc = r->proto.in_gc;
	return rc;
}

int replayer_feed(struct replayer *r, const struct ht_event *ev,
		  const struct ht_position *pos)
{
	enum ht_violation_code code;
	unsigned effects;
	int rc;

	r->st.event_index = r->events++;
	r->st.continuation = false;
	set_where(r, pos, r->st.event_index);
	code = proto_step(&r->proto, ev, &effects);
	if (code != HT_V_NONE)
		report_step(r, code, ev);
	if (effects & PROTO_DUMP_END) {
		report_missing(r);
		report_undeclared(r);
	}
	if (note_fields(r, ev) < 0) {
		r->out_of_memory = true;
		return -1;
	}
	if (ev->type == HT_EV_OBJECT_REFERENCES && dump_open(&r->proto) &&
	    join_continuation(r, &ev->u.object_references) < 0) {
		r->out_of_memory = true;
		return -1;
	}
	rc = deliver(r, ev, effects);
	return rc ? rc : (r->out_of_memory ? -1 : 0);
}

int replayer_finish(struct replayer *r, const struct ht_position *end_pos)
{
	enum ht_violation_code code = proto_finish(&r->proto);

	r->st.event_index = r->events;
	r->st.continuation = false;
	set_where(r, end_pos, r->events);
	if (code == HT_V_DUMP_UNFINISHED)
		report(r, code, "dump %" PRId64 " has no C_END", r->st.dump);
	/* proto_finish names one bracket; with both open (a double fault,
	 * already reported) the GC is unfinished too. */
	if (r->proto.in_gc)
		report(r, HT_V_GC_UNFINISHED, "GC %" PRId64
		       " has no gc_finished", r->st.gc);
	report_missing(r);
	report_undeclared(r);
	if (r->st.in_dump)
		return end_dump(r);
	return 0;
}

/* ---- Replaying a reader ------------------------------------------------- */

/* Feeds every event of the reader. Returns 0 at the end of the input, -1
 * on a read error (*read_error set) or when out of memory, or a callback's
 * stop value. */
static int feed_reader(struct replayer *r, struct ht_reader *reader,
		       struct ht_error *err, bool *read_error)
{
	struct ht_event ev;
	struct ht_position pos;
	int n, rc;

	while ((n = ht_reader_next(reader, &ev, err)) > 0) {
		pos = ht_reader_position(reader);
		rc = replayer_feed(r, &ev, &pos);
		if (rc)
			return rc;
	}
	if (n < 0) {
		*read_error = err_is_damage(err);
		return -1;
	}
	return 0;
}

int ht_replay(struct ht_reader *reader, const struct ht_replay_callbacks *cb,
	      void *ctx, struct ht_replay_summary *summary,
	      struct ht_error *err)
{
	struct ht_error local;
	struct ht_position end;
	struct replayer *r;
	bool read_error = false;
	int rc, finish_rc;

	if (!err)
		err = &local;
	err_clear(err);
	if (summary)
		memset(summary, 0, sizeof(*summary));
	r = replayer_new(cb, ctx);
	if (!r) {
		err_plain(err, HT_E_NOMEM, NULL, "out of memory for the replay");
		return -1;
	}
	rc = feed_reader(r, reader, err, &read_error);
	/* What was read before damage still ends its brackets, so analyses
	 * keep the partial dump and check reports what is unfinished. */
	if (rc == 0 || read_error) {
		end = ht_reader_position(reader);
		finish_rc = replayer_finish(r, &end);
		if (rc == 0)
			rc = finish_rc;
	}
	if (replayer_out_of_memory(r) && mem_budget_exceeded()) {
		err_plain(err, HT_E_NOMEM, ht_reader_path(reader),
			  MEM_BUDGET_MESSAGE, mem_budget_limit());
		rc = -1;
		read_error = false;
	} else if (replayer_out_of_memory(r)) {
		err_plain(err, HT_E_NOMEM, NULL,
			  "out of memory joining continued objects or "
			  "keeping the fields declared");
		rc = -1;
		read_error = false; /* the error now is not the damage */
	}
	if (summary) {
		replayer_summary(r, summary);
		summary->read_error = read_error;
	}
	replayer_free(r);
	return rc;
}
