/*
 * heap.c - the heap graph of a dump, built from a replay (heap.h): the
 * scan that collects each selected dump as its events come.
 *
 * A scan collects the selected dump raw, as its events come: one "part" per
 * object_references event (an object continued with HT_OBJ_MORE_REFERENCES
 * has several), the ref ids as reported, and the roots. When the dump is
 * built, the parts are put in id order (usually they already are), the
 * parts of one object are joined, objects reported twice are dropped, and
 * every ref id becomes the index of its object, written over the array that
 * held the ids. The steps are ordered so that no large array exists twice
 * at once: build_graph tells the order.
 *
 * Names (classes, threads, methods) and generation bounds are tracked over
 * the whole trace; a dump takes a snapshot of them when it ends.
 *
 * The files that build the graph, and what each holds, are listed in
 * heap_internal.h; this one holds the scan and the raw dump it fills.
 */
#include "analysis/heap.h"

#include "analysis/alloc_stacks.h"
#include "analysis/heap_internal.h"
#include "analysis/values.h"

#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/membudget.h"
#include "util/search.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Arrays ------------------------------------------------------------- */

/*
 * Arrays grow with util/alloc.h. Large ones are mmapped by malloc, so
 * growing one remaps pages instead of copying them, and pages never
 * written cost no memory: a doubled capacity is free until it is used.
 */

/* ---- A dump as it arrives ----------------------------------------------- */

static void raw_clear(struct raw_dump *raw)
{
	if (raw->continued)
		memset(raw->continued, 0,
		       (raw->cap_parts + 63) / 64 * sizeof(uint64_t));
	free(raw->gen);
	raw->gen = NULL;
	if (raw->val) {
		uint64_t bytes = (uint64_t)raw->cap_parts * sizeof(*raw->val);

		mem_budget_release(bytes);
		raw->charged -= bytes;
		free(raw->val);
		raw->val = NULL;
	}
	value_arena_free(&raw->values);
	raw->n_parts = 0;
	raw->n_big = 0;
	raw->n_refs = 0;
	raw->n_roots = 0;
	raw->n_stack = 0;
	raw->bytes = 0;
}

void heap_raw_free(struct raw_dump *raw)
{
	free(raw->id);
	free(raw->cls);
	free(raw->size);
	free(raw->big);
	free(raw->ref_end);
	free(raw->ref_end32);
	free(raw->continued);
	free(raw->gen);
	free(raw->val);
	value_arena_free(&raw->values);
	free(raw->ref);
	free(raw->ref_field);
	free(raw->roots);
	free(raw->stack);
	mem_budget_release(raw->charged);
	memset(raw, 0, sizeof(*raw));
}

static int raw_grow_parts(struct raw_dump *raw)
{
	/* the columns share one capacity */
	size_t cap = grown_capacity(raw->cap_parts, raw->n_parts + 1,
				    sizeof(*raw->id));
	size_t old_words = (raw->cap_parts + 63) / 64;
	size_t words = (cap + 63) / 64;
	/* the columns, a generation byte and a bit of each part */
	uint64_t per_part = sizeof(*raw->id) + sizeof(*raw->cls) +
			    sizeof(*raw->size) + sizeof(*raw->ref_end) + 1 +
			    (raw->val ? sizeof(*raw->val) : 0);
	uint64_t more = (uint64_t)(cap - raw->cap_parts) * per_part +
			(words - old_words) * sizeof(uint64_t);

	if (cap == 0 || mem_budget_charge(more) < 0)
		return -1;
	raw->charged += more;
	if (RESIZE_ARRAY(raw->id, cap) < 0 ||
	    RESIZE_ARRAY(raw->cls, cap) < 0 ||
	    RESIZE_ARRAY(raw->size, cap) < 0 ||
	    RESIZE_ARRAY(raw->ref_end, cap) < 0 ||
	    RESIZE_ARRAY(raw->continued, words) < 0 ||
	    (raw->gen && RESIZE_ARRAY(raw->gen, cap) < 0) ||
	    (raw->val && RESIZE_ARRAY(raw->val, cap) < 0))
		return -1;
	memset(raw->continued + old_words, 0,
	       (words - old_words) * sizeof(uint64_t));
	raw->cap_parts = cap;
	return 0;
}

static int raw_reserve_refs(struct raw_dump *raw, size_t more)
{
	if (more > SIZE_MAX - raw->n_refs)
		return -1;
	if (raw->ref_field &&
	    BUDGET_GROW(raw->ref_field, raw->n_refs + more,
			raw->cap_ref_fields, raw->charged) < 0)
		return -1;
	return BUDGET_GROW(raw->ref, raw->n_refs + more, raw->cap_refs,
			   raw->charged);
}

/* Fields are kept only for dumps whose references name them: the refs
 * before the first such event were read from no known field. */
static int raw_start_ref_fields(struct raw_dump *raw, size_t more)
{
	if (BUDGET_GROW(raw->ref_field, raw->n_refs + more,
			raw->cap_ref_fields, raw->charged) < 0)
		return -1;
	if (raw->n_refs)
		memset(raw->ref_field, 0, raw->n_refs * sizeof(*raw->ref_field));
	return 0;
}

/* Values are kept only for dumps that have them, when asked. The column
 * is charged as the others are, by raw_grow_parts's per-part bytes. */
static int raw_start_values(struct raw_dump *raw)
{
	uint64_t bytes = (uint64_t)raw->cap_parts * sizeof(*raw->val);

	if (mem_budget_charge(bytes) < 0)
		return -1;
	raw->charged += bytes;
	raw->val = calloc(raw->cap_parts ? raw->cap_parts : 1,
			  sizeof(*raw->val));
	return raw->val ? 0 : -1;
}

/* Generations are kept only for dumps that give them. */
static int raw_start_generations(struct raw_dump *raw)
{
	raw->gen = alloc_array(raw->cap_parts, 1);
	if (!raw->gen)
		return -1;
	memset(raw->gen, HEAP_NO_GENERATION, raw->n_parts);
	return 0;
}

static uint8_t generation_byte(const struct ht_ev_object_references *e)
{
	if (!e->has_generation || e->generation >= HEAP_NO_GENERATION)
		return HEAP_NO_GENERATION;
	return (uint8_t)e->generation;
}

/* ---- The scan ----------------------------------------------------------- */

struct scan {
	int64_t select;
	bool keep_values;   /* heap_scan_options.values */
	const ht_id *values_of;  /* heap_scan_options.values_of */
	size_t n_values_of;
	bool values_seen;   /* heap_scan_report.values_seen */
	uint32_t *value_field; /* an event's value fields as entries */
	size_t cap_value_field;
	heap_dump_fn fn;
	void *ctx;
	const char *path;   /* for messages */

	struct arena names;
	struct registry classes, threads, methods, fields;
	ht_id last_class;   /* the class of the last object, for a short cut */
	uint32_t last_class_entry;
	ht_id last_field;   /* the same for the last field of a reference */
	uint32_t last_field_entry;
	uint32_t *field_at; /* entry + 1 of field ids below DIRECT_FIELDS
			       (recorders number fields densely from 1), 0
			       until seen; NULL until a reference names one */
	size_t n_bounds, cap_bounds;
	struct ht_generation_range *bounds;

	bool collecting;    /* inside a selected dump */
	bool pending;       /* raw and meta hold a finished dump, not built */
	uint64_t closer_at; /* index + 1 of the last C_END or gc_finished */
	struct raw_dump raw;
	struct dump_meta meta;

	bool failed;        /* err says why */
	struct ht_error err;
	bool fn_stopped;
	int fn_rc;
};

#define SCAN_STOP (-1)

static int scan_fail(struct scan *s, enum ht_error_code code,
		     const char *fmt, ...) HT_PRINTF(3, 4);

static int scan_fail(struct scan *s, enum ht_error_code code,
		     const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	err_plain(&s->err, code, s->path, "%s", what);
	s->failed = true;
	return SCAN_STOP;
}

static int out_of_memory(struct scan *s)
{
	if (mem_budget_exceeded())
		return scan_fail(s, HT_E_NOMEM, MEM_BUDGET_MESSAGE,
				 mem_budget_limit());
	return scan_fail(s, HT_E_NOMEM, "out of memory building dump %" PRIu64,
			 s->meta.dump);
}

static int deliver(struct scan *s)
{
	uint64_t dump = s->meta.dump;
	struct heap *h = NULL;
	bool keep = false;
	int rc = heap_build_graph(&s->raw, &s->meta, &h);

	if (rc == BUILD_LIMIT)
		return scan_fail(s, HT_E_LIMIT, "dump %" PRIu64 ": an object "
				 "with more than %" PRIu32 " references",
				 dump, UINT32_MAX);
	if (rc < 0)
		return scan_fail(s, HT_E_NOMEM, "out of memory building dump %"
				 PRIu64, dump);
	rc = s->fn ? s->fn(s->ctx, h, &keep) : 0;
	if (!keep)
		heap_free(h);
	if (rc) {
		s->fn_stopped = true;
		s->fn_rc = rc;
	}
	return rc;
}

static bool selected(const struct scan *s, int64_t dump)
{
	return s->select == HEAP_LAST_DUMP || s->select == HEAP_ALL_DUMPS ||
	       s->select == dump;
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	struct scan *s = ctx;

	if (!selected(s, st->dump))
		return 0;
	/* the dump collected before was not the last one */
	heap_meta_free(&s->meta);
	raw_clear(&s->raw);
	s->pending = false;
	s->collecting = true;
	s->meta.dump = (uint64_t)st->dump;
	s->meta.gc_dump = st->gc_dump;
	s->meta.gc = st->gc;
	return 0;
}

static int snapshot_meta(struct scan *s)
{
	struct dump_meta *m = &s->meta;

	if (heap_snapshot_classes(&s->classes, &s->names, m) < 0 ||
	    heap_snapshot_names(&s->threads, &s->names, &m->threads,
			   &m->n_threads) < 0 ||
	    heap_snapshot_names(&s->methods, &s->names, &m->methods,
			   &m->n_methods) < 0 ||
	    heap_snapshot_fields(&s->fields, &s->names, m) < 0)
		return -1;
	m->bounds = malloc((s->n_bounds ? s->n_bounds : 1) *
			   sizeof(*m->bounds));
	if (!m->bounds)
		return -1;
	if (s->n_bounds)
		memcpy(m->bounds, s->bounds, s->n_bounds * sizeof(*m->bounds));
	m->n_bounds = s->n_bounds;
	return 0;
}

/* The last dump is known only at the end of the trace: until then the
 * finished dump waits, and the next one that begins replaces it. */
static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	struct scan *s = ctx;

	if (!s->collecting)
		return 0;
	s->collecting = false;
	s->meta.aborted = st->dump_aborted;
	s->meta.complete = s->closer_at == st->event_index + 1;
	if (snapshot_meta(s) < 0)
		return out_of_memory(s);
	if (s->select == HEAP_LAST_DUMP) {
		s->pending = true;
		return 0;
	}
	return deliver(s);
}

static uint32_t class_entry_of_object(struct scan *s, ht_id class_id)
{
	uint32_t entry;

	if (class_id == 0)
		return NO_ENTRY;
	if (s->classes.n && class_id == s->last_class)
		entry = s->last_class_entry;
	else
		entry = heap_registry_entry(&s->classes, class_id);
	if (entry == NO_ENTRY)
		return NO_ENTRY;
	s->last_class = class_id;
	s->last_class_entry = entry;
	s->classes.e[entry].used_in = (int64_t)s->meta.dump;
	return entry;
}

/* Field ids looked up by index instead of by hash: a table of 256 KiB,
 * made when a reference first names a field. */
#define DIRECT_FIELDS (1u << 16)

/* A field id as the raw dump keeps it: its registry entry + 1, 0 for
 * none; an id no event has declared yet gets an entry too, which stays
 * nameless if none ever does. UINT32_MAX when out of memory. */
static uint32_t field_entry(struct scan *s, ht_id field)
{
	uint32_t entry;

	if (field == 0)
		return HEAP_NO_FIELD;
	if (s->fields.n && field == s->last_field)
		return s->last_field_entry + 1;
	if (field < DIRECT_FIELDS && s->field_at && s->field_at[field])
		return s->field_at[field];
	entry = heap_registry_entry(&s->fields, field);
	if (entry == NO_ENTRY)
		return UINT32_MAX;
	s->last_field = field;
	s->last_field_entry = entry;
	if (field < DIRECT_FIELDS && !s->field_at)
		s->field_at = calloc(DIRECT_FIELDS, sizeof(*s->field_at));
	if (field < DIRECT_FIELDS && s->field_at)
		s->field_at[field] = entry + 1;
	return entry + 1;
}

/* The fields of e's refs, after the refs already kept (0 when e names
 * none, as an event of an older recorder would). */
static int add_ref_fields(struct scan *s,
			  const struct ht_ev_object_references *e)
{
	uint32_t *out = s->raw.ref_field + s->raw.n_refs;

	for (size_t i = 0; i < e->count; i++) {
		out[i] = e->ref_fields ? field_entry(s, e->ref_fields[i]) : 0;
		if (out[i] == UINT32_MAX)
			return -1;
	}
	return 0;
}

/* Whether id is among ids[0..n), which ascend. */
static bool id_listed(const ht_id *ids, size_t n, ht_id id)
{
	size_t lo = LOWER_BOUND(0, n, mid, ids[mid] < id);

	return lo < n && ids[lo] == id;
}

/* e's values and array as a record of the raw dump's arena; *at its
 * offset + 1, 0 when e has none. */
static int add_values(struct scan *s, const struct ht_ev_object_references *e,
		      uint32_t *at)
{
	struct raw_dump *raw = &s->raw;
	int rc;

	*at = 0;
	if (e->n_values || e->array)
		s->values_seen = true;
	if (!s->keep_values || (!e->n_values && !e->array) ||
	    (s->values_of && !id_listed(s->values_of, s->n_values_of, e->id)))
		return 0;
	if (!raw->val && raw_start_values(raw) < 0)
		return out_of_memory(s);
	if (ALLOC_GROW(s->value_field, e->n_values + 1, s->cap_value_field) < 0)
		return out_of_memory(s);
	for (size_t i = 0; i < e->n_values; i++) {
		uint32_t entry = field_entry(s, e->value_fields[i]);

		if (entry == UINT32_MAX)
			return out_of_memory(s);
		/* a value of field 0 is a bad value (check says so) */
		s->value_field[i] = entry ? entry - 1 : UINT32_MAX;
	}
	rc = value_arena_add(&raw->values, s->value_field, e->values,
			     e->n_values, e->array, at);
	if (rc == -2)
		return scan_fail(s, HT_E_LIMIT, "dump %" PRIu64 ": its "
				 "values take more than %" PRIu64 " GiB",
				 s->meta.dump, VALUE_ARENA_MAX >> 30);
	if (rc < 0)
		return out_of_memory(s);
	(*at)++;
	return 0;
}

/* Part p's size, listed in raw->big past 4 bytes. */
static int add_size(struct raw_dump *raw, size_t p, uint64_t size)
{
	if (size < HEAP_BIG_SIZE) {
		raw->size[p] = (uint32_t)size;
		return 0;
	}
	if (BUDGET_GROW(raw->big, raw->n_big + 1, raw->cap_big,
			raw->charged) < 0)
		return -1;
	raw->big[raw->n_big++] = (struct heap_big_size){
		.object = (uint32_t)p, .size = size};
	raw->size[p] = HEAP_BIG_SIZE;
	return 0;
}

static int add_part(struct scan *s, const struct ht_ev_object_references *e,
		    bool continued)
{
	struct raw_dump *raw = &s->raw;
	size_t p = raw->n_parts;
	uint8_t gen = generation_byte(e);
	uint32_t values_at;

	if (p >= HEAP_MAX_OBJECTS)
		return scan_fail(s, HT_E_LIMIT, "dump %" PRIu64 " reports more "
				 "than %" PRIu32 " objects", s->meta.dump,
				 (uint32_t)HEAP_MAX_OBJECTS);
	/* checked before anything adds sizes up: a total that wrapped would
	 * be a wrong answer, not a crash */
	if (!continued && e->size >= HEAP_MAX_BYTES - raw->bytes)
		return scan_fail(s, HT_E_LIMIT, "dump %" PRIu64 ": the sizes "
				 "of its objects add up to 2^63 bytes or more "
				 "(object 0x%" PRIx64 " has %" PRIu64 " bytes)",
				 s->meta.dump, e->id, e->size);
	if (!continued)
		raw->bytes += e->size;
	if (p == raw->cap_parts && raw_grow_parts(raw) < 0)
		return out_of_memory(s);
	if (raw_reserve_refs(raw, e->count) < 0)
		return out_of_memory(s);
	if (gen != HEAP_NO_GENERATION && !raw->gen &&
	    raw_start_generations(raw) < 0)
		return out_of_memory(s);
	if (e->ref_fields && e->count && !raw->ref_field &&
	    raw_start_ref_fields(raw, e->count) < 0)
		return out_of_memory(s);
	raw->cls[p] = class_entry_of_object(s, e->class_id);
	if (e->class_id && raw->cls[p] == NO_ENTRY)
		return out_of_memory(s);
	raw->id[p] = e->id;
	if (continued)
		raw->size[p] = 0;
	else if (add_size(raw, p, e->size) < 0)
		return out_of_memory(s);
	if (e->count)
		memcpy(raw->ref + raw->n_refs, e->refs,
		       e->count * sizeof(*e->refs));
	if (raw->ref_field && add_ref_fields(s, e) < 0)
		return out_of_memory(s);
	raw->n_refs += e->count;
	raw->ref_end[p] = raw->n_refs;
	if (continued)
		raw->continued[p / 64] |= 1ULL << (p % 64);
	if (raw->gen)
		raw->gen[p] = gen;
	if (add_values(s, e, &values_at) < 0)
		return SCAN_STOP;
	if (raw->val)
		raw->val[p] = values_at;
	raw->n_parts++;
	return 0;
}

static int on_object(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	struct scan *s = ctx;

	if (!s->collecting)
		return 0;
	return add_part(s, &ev->u.object_references, st->continuation);
}

static struct heap_root root_of(const struct ht_ev_root_references *e,
				size_t i, const struct ht_replay_state *st)
{
	struct heap_root r = {
		.object = HEAP_NONE,
		.ref = e->refs[i],
		.flags = e->flags ? e->flags[i] : 0,
		.kind = e->kinds ? e->kinds[i] : HEAP_NO_KIND,
		.root_flags = e->root_flags ? e->root_flags[i] : 0,
		.root_id = e->root_ids ? e->root_ids[i] : 0,
	};

	/* a GC dump's roots are in no container but the CLR recorder's
	 * threads and frames */
	r.container = (uint8_t)st->container;
	r.id1 = st->container_id1;
	r.id2 = st->container_id2;
	/* the replay knows the thread of a frame begun again */
	if (st->container_has_thread) {
		r.has_thread = true;
		r.thread = st->container_thread;
	}
	return r;
}

static int on_roots(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	const struct ht_ev_root_references *e = &ev->u.root_references;
	struct scan *s = ctx;
	struct raw_dump *raw = &s->raw;

	if (!s->collecting || e->count == 0)
		return 0;
	if (e->count > SIZE_MAX - raw->n_roots ||
	    BUDGET_GROW(raw->roots, raw->n_roots + e->count, raw->cap_roots,
			raw->charged) < 0)
		return out_of_memory(s);
	for (size_t i = 0; i < e->count; i++) {
		struct heap_root r = root_of(e, i, st);

		if (e->root_fields) {
			r.field = field_entry(s, e->root_fields[i]);
			if (r.field == UINT32_MAX)
				return out_of_memory(s);
		}
		raw->roots[raw->n_roots++] = r;
	}
	return 0;
}

/* A later name for an id replaces the earlier one. */
static int name_entry(struct scan *s, struct registry *reg, ht_id id,
		      const char *name, struct name_entry **out)
{
	uint32_t entry = heap_registry_entry(reg, id);
	uint64_t at;

	if (entry == NO_ENTRY)
		return -1;
	at = heap_arena_add(&s->names, name);
	if (at == UINT64_MAX)
		return -1;
	*out = &reg->e[entry];
	(*out)->name = at;
	(*out)->declared = true;
	return 0;
}

static int on_class(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	const struct ht_ev_class *e = &ev->u.class_;
	struct scan *s = ctx;
	struct name_entry *entry;

	(void)st;
	if (name_entry(s, &s->classes, e->id, e->name, &entry) < 0)
		return out_of_memory(s);
	if (e->has_size) {
		entry->has_size = true;
		entry->size = e->size;
	}
	return 0;
}

static int on_thread(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	struct scan *s = ctx;
	struct name_entry *entry;

	(void)st;
	if (name_entry(s, &s->threads, ev->u.thread.id, ev->u.thread.name,
		       &entry) < 0)
		return out_of_memory(s);
	return 0;
}

static int on_method(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	const struct ht_ev_method *m = &ev->u.method;
	struct scan *s = ctx;
	struct name_entry *entry;
	char *place = NULL;
	int rc;

	(void)st;
	/* a frame's place (version 4) reads as a stack trace has it */
	if (m->name && (m->file || m->line)) {
		place = alloc_frame_name(m->name, m->id, m->file, m->line);
		if (!place)
			return out_of_memory(s);
	}
	rc = name_entry(s, &s->methods, m->id, place ? place : m->name,
			&entry);
	free(place);
	if (rc < 0)
		return out_of_memory(s);
	return 0;
}

/* A field declared again says the same (check reports it if not): the
 * last declaration wins, as with class names. */
static int on_fields(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	const struct ht_ev_fields *e = &ev->u.fields;
	struct scan *s = ctx;

	(void)st;
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_field *f = &e->fields[i];
		struct name_entry *entry;

		if (f->id == 0)
			continue;
		if (name_entry(s, &s->fields, f->id, f->name, &entry) < 0)
			return out_of_memory(s);
		entry->owner = f->class_id;
		entry->kind = f->kind;
		entry->type = f->type;
	}
	return 0;
}

static int on_bounds(void *ctx, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	const struct ht_ev_generation_bounds *e = &ev->u.generation_bounds;
	struct scan *s = ctx;

	(void)st;
	if (e->count > s->cap_bounds) {
		if (RESIZE_ARRAY(s->bounds, e->count) < 0)
			return out_of_memory(s);
		s->cap_bounds = e->count;
	}
	if (e->count)
		memcpy(s->bounds, e->ranges, e->count * sizeof(*s->bounds));
	s->n_bounds = e->count;
	return 0;
}

/* A thread or frame container begun, with the thread the replay gives a
 * frame (doc/design.md section 3). */
static int add_stack_entry(struct scan *s, const struct ht_replay_state *st)
{
	struct raw_dump *raw = &s->raw;

	if (BUDGET_GROW(raw->stack, raw->n_stack + 1, raw->cap_stack,
			raw->charged) < 0)
		return out_of_memory(s);
	raw->stack[raw->n_stack++] = (struct heap_stack_entry){
		.type = (uint8_t)st->container,
		.has_thread = st->container_has_thread,
		.id1 = st->container_id1,
		.id2 = st->container_id2,
		.thread = st->container_thread,
	};
	return 0;
}

/* Remembers the event that closes a dump, so that its end can tell a
 * dump closed by its own closer from one cut short. */
static int on_container(void *ctx, const struct ht_event *ev,
			const struct ht_replay_state *st)
{
	struct scan *s = ctx;
	enum ht_container_type type = ev->u.begin_container.type;

	if (type == HT_C_END)
		s->closer_at = st->event_index + 1;
	if (s->collecting &&
	    (type == HT_C_RT_THREAD || ht_container_is_frame(type)))
		return add_stack_entry(s, st);
	return 0;
}

static int on_gc_finished(void *ctx, const struct ht_event *ev,
			  const struct ht_replay_state *st)
{
	struct scan *s = ctx;

	(void)ev;
	s->closer_at = st->event_index + 1;
	return 0;
}

static void scan_free(struct scan *s)
{
	free(s->names.buf);
	heap_registry_free(&s->classes);
	heap_registry_free(&s->threads);
	heap_registry_free(&s->methods);
	heap_registry_free(&s->fields);
	free(s->field_at);
	free(s->value_field);
	free(s->bounds);
	heap_raw_free(&s->raw);
	heap_meta_free(&s->meta);
	free(s);
}

static void fill_report(struct heap_scan_report *report,
			const struct ht_replay_summary *sum)
{
	if (!report)
		return;
	report->events = sum->events;
	report->dumps = sum->dumps;
	report->gcs = sum->gcs;
	report->violations = sum->violations;
	report->read_error = sum->read_error;
}

/* After the replay: the last dump, when it is the one asked for. A read
 * error stays the result unless fn stops the scan. */
static int finish_scan(struct scan *s, int rc, struct ht_error *err)
{
	if (!s->failed && !s->fn_stopped && s->pending &&
	    (rc == 0 || rc == -1)) {
		s->pending = false;
		deliver(s);
	}
	if (s->failed) {
		*err = s->err;
		return -1;
	}
	if (s->fn_stopped)
		return s->fn_rc;
	return rc;
}

int heap_scan(struct ht_reader *r, int64_t select, heap_dump_fn fn, void *ctx,
	      struct heap_scan_report *report, struct ht_error *err)
{
	return heap_scan_with(r, select, NULL, fn, ctx, report, err);
}

int heap_scan_with(struct ht_reader *r, int64_t select,
		   const struct heap_scan_options *options, heap_dump_fn fn,
		   void *ctx, struct heap_scan_report *report,
		   struct ht_error *err)
{
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
	};
	struct ht_replay_summary sum = {0};
	struct ht_error local;
	struct scan *s;
	int rc;

	if (!err)
		err = &local;
	err_clear(err);
	if (report)
		memset(report, 0, sizeof(*report));
	if (select < HEAP_ALL_DUMPS) {
		err_plain(err, HT_E_INVALID, NULL, "no dump %" PRId64, select);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err_plain(err, HT_E_NOMEM, NULL, "out of memory");
		return -1;
	}
	s->select = select;
	s->keep_values = options && options->values;
	if (s->keep_values) {
		s->values_of = options->values_of;
		s->n_values_of = options->n_values_of;
	}
	s->fn = fn;
	s->ctx = ctx;
	s->path = ht_reader_path(r);
	cb.on_event[HT_EV_CLASS] = on_class;
	cb.on_event[HT_EV_THREAD] = on_thread;
	cb.on_event[HT_EV_METHOD] = on_method;
	cb.on_event[HT_EV_FIELDS] = on_fields;
	cb.on_event[HT_EV_GENERATION_BOUNDS] = on_bounds;
	cb.on_event[HT_EV_BEGIN_CONTAINER] = on_container;
	cb.on_event[HT_EV_GC_FINISHED] = on_gc_finished;
	cb.on_event[HT_EV_ROOT_REFERENCES] = on_roots;
	cb.on_event[HT_EV_OBJECT_REFERENCES] = on_object;
	rc = ht_replay(r, &cb, s, &sum, err);
	rc = finish_scan(s, rc, err);
	fill_report(report, &sum);
	if (report)
		report->values_seen = s->values_seen;
	/* the error returned is the scan's own (out of memory), not the
	 * damage that the replay stopped at */
	if (report && s->failed)
		report->read_error = false;
	scan_free(s);
	return rc;
}
