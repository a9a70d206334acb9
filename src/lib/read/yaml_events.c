/*
 * yaml_events.c - the events of the YAML source (yaml_read.c): the table
 * of each event's fields, the checks made once an event's fields are
 * read (lists as long as each other, what each format version can hold),
 * and one item of the events list read into its struct ht_event.
 */
#include "lib/read/yaml_read_internal.h"

/* ---- Event tables --------------------------------------------------------- */

#define EV(member) offsetof(struct ht_event, u.member)

static const struct field class_fields[] = {
	{"id", K_U64, REQUIRED, EV(class_.id), 0},
	{"name", K_NAME, REQUIRED, EV(class_.name), 0},
	{"size", K_U64, OPTIONAL, EV(class_.size), EV(class_.has_size)},
};

static const struct field thread_fields[] = {
	{"id", K_U64, REQUIRED, EV(thread.id), 0},
	{"name", K_NAME, REQUIRED, EV(thread.name), 0},
};

enum { ME_ID, ME_NAME, ME_FILE, ME_LINE };
static const struct field method_fields[] = {
	[ME_ID] = {"id", K_U64, REQUIRED, EV(method.id), 0},
	[ME_NAME] = {"name", K_NAME, REQUIRED, EV(method.name), 0},
	[ME_FILE] = {"file", K_FILE, OPTIONAL, EV(method.file), 0},
	[ME_LINE] = {"line", K_U32, OPTIONAL, EV(method.line), 0},
};

enum { OA_ID, OA_CLASS, OA_SIZE, OA_STACK };
static const struct field object_allocated_fields[] = {
	[OA_ID] = {"id", K_U64, REQUIRED, EV(object_allocated.id), 0},
	[OA_CLASS] = {"class", K_U64, REQUIRED, EV(object_allocated.class_id), 0},
	[OA_SIZE] = {"size", K_U64, REQUIRED, EV(object_allocated.size), 0},
	[OA_STACK] = {"stack", K_U64, OPTIONAL, EV(object_allocated.stack), 0},
};

enum { ST_ID, ST_FRAMES };
static const struct field stack_fields[] = {
	[ST_ID] = {"id", K_U64, REQUIRED, EV(stack.id), 0},
	[ST_FRAMES] = {"frames", K_U64_LIST, REQUIRED, B_REFS, 0},
};

/* The time of the events that have one (version 3), the last field. */
#define TIME_FIELD                                                      \
	{"time", K_U64, OPTIONAL, offsetof(struct ht_event, time),      \
	 offsetof(struct ht_event, has_time)}

enum { GS_GC, GS_GENERATIONS, GS_REASON, GS_TIME };
static const struct field gc_started_fields[] = {
	{"gc", K_U64, OPTIONAL, EV(gc_started.gc), EV(gc_started.has_gc)},
	{"generations", K_GENERATIONS, REQUIRED, EV(gc_started.generations), 0},
	{"reason", K_REASON, OPTIONAL, EV(gc_started.reason), 0},
	TIME_FIELD,
};

enum { GF_TIME };
static const struct field gc_finished_fields[] = {
	TIME_FIELD,
};

enum { BC_TYPE, BC_ID1, BC_ID2, BC_TIME };
static const struct field begin_container_fields[] = {
	{"type", K_CONTAINER, REQUIRED, EV(begin_container.type), 0},
	{"id1", K_U64, OPTIONAL, EV(begin_container.id1), 0},
	{"id2", K_U64, OPTIONAL, EV(begin_container.id2), 0},
	TIME_FIELD,
};

enum { RR_REFS, RR_FLAGS, RR_KINDS, RR_ROOT_FLAGS, RR_ROOT_IDS, RR_RESULT,
       RR_ROOT_FIELDS };
static const struct field root_references_fields[] = {
	[RR_REFS] = {"refs", K_U64_LIST, REQUIRED, B_REFS, 0},
	[RR_FLAGS] = {"flags", K_U32_LIST, REQUIRED, B_FLAGS, 0},
	[RR_KINDS] = {"kinds", K_KIND_LIST, OPTIONAL, B_KINDS, 0},
	[RR_ROOT_FLAGS] = {"root_flags", K_U8_LIST, OPTIONAL, B_ROOT_FLAGS, 0},
	[RR_ROOT_IDS] = {"root_ids", K_U64_LIST, OPTIONAL, B_ROOT_IDS, 0},
	[RR_RESULT] = {"result", K_RESULT, OPTIONAL, EV(root_references.result), 0},
	[RR_ROOT_FIELDS] = {"root_fields", K_U64_LIST, OPTIONAL, B_FIELD_REFS, 0},
};

enum { OR_ID, OR_CLASS, OR_SIZE, OR_REFS, OR_FLAGS, OR_REF_FLAGS,
       OR_GENERATION, OR_RESULT, OR_REF_FIELDS, OR_VALUE_FIELDS, OR_VALUES,
       OR_ARRAY };
static const struct field object_references_fields[] = {
	[OR_ID] = {"id", K_U64, REQUIRED, EV(object_references.id), 0},
	[OR_CLASS] = {"class", K_U64, REQUIRED, EV(object_references.class_id), 0},
	[OR_SIZE] = {"size", K_U64, REQUIRED, EV(object_references.size), 0},
	[OR_REFS] = {"refs", K_U64_LIST, REQUIRED, B_REFS, 0},
	[OR_FLAGS] = {"flags", K_U32, OPTIONAL, EV(object_references.flags), 0},
	[OR_REF_FLAGS] = {"ref_flags", K_U32_LIST, OPTIONAL, B_FLAGS, 0},
	[OR_GENERATION] = {"generation", K_U32, OPTIONAL,
			   EV(object_references.generation),
			   EV(object_references.has_generation)},
	[OR_RESULT] = {"result", K_RESULT, OPTIONAL,
		       EV(object_references.result), 0},
	[OR_REF_FIELDS] = {"ref_fields", K_U64_LIST, OPTIONAL, B_FIELD_REFS, 0},
	[OR_VALUE_FIELDS] = {"value_fields", K_U64_LIST, OPTIONAL,
			     B_VALUE_FIELDS, 0},
	[OR_VALUES] = {"values", K_VALUE_LIST, OPTIONAL, B_VALUES, 0},
	[OR_ARRAY] = {"array", K_ARRAY, OPTIONAL, 0, 0},
};

enum { FD_ID, FD_CLASS, FD_NAME, FD_KIND, FD_OFFSET, FD_TYPE };
static const struct field field_fields[] = {
	[FD_ID] = {"id", K_U64, REQUIRED, offsetof(struct ht_field, id), 0},
	[FD_CLASS] = {"class", K_U64, REQUIRED,
		      offsetof(struct ht_field, class_id), 0},
	[FD_NAME] = {"name", K_NAME, REQUIRED, offsetof(struct ht_field, name), 0},
	[FD_KIND] = {"kind", K_FIELD_KIND, OPTIONAL,
		     offsetof(struct ht_field, kind), 0},
	[FD_OFFSET] = {"offset", K_U64, OPTIONAL,
		       offsetof(struct ht_field, offset),
		       offsetof(struct ht_field, has_offset)},
	[FD_TYPE] = {"type", K_VALUE_TYPE, OPTIONAL,
		     offsetof(struct ht_field, type), 0},
};

enum { GB_GENERATION, GB_START, GB_LENGTH, GB_RESERVED };
static const struct field range_fields[] = {
	[GB_GENERATION] = {"generation", K_U32, REQUIRED,
			   offsetof(struct ht_generation_range, generation), 0},
	[GB_START] = {"start", K_U64, REQUIRED,
		      offsetof(struct ht_generation_range, start), 0},
	[GB_LENGTH] = {"length", K_U64, REQUIRED,
		       offsetof(struct ht_generation_range, length), 0},
	[GB_RESERVED] = {"reserved", K_U64, OPTIONAL,
			 offsetof(struct ht_generation_range, reserved), 0},
};

static const struct field moved_fields[] = {
	{"old", K_U64, REQUIRED, offsetof(struct ht_moved_block, old_id), 0},
	{"new", K_U64, REQUIRED, offsetof(struct ht_moved_block, new_id), 0},
	{"length", K_U64, REQUIRED, offsetof(struct ht_moved_block, length), 0},
};

static const struct field surviving_fields[] = {
	{"start", K_U64, REQUIRED, offsetof(struct ht_surviving_block, start), 0},
	{"length", K_U64, REQUIRED,
	 offsetof(struct ht_surviving_block, length), 0},
};


_Static_assert(ARRAY_SIZE(object_references_fields) <= MAX_FIELDS &&
	       ARRAY_SIZE(root_references_fields) <= MAX_FIELDS,
	       "struct fields_read has a mark per field");

/* How an event's body reads: a mapping of fields, or a list of blocks
 * each of which is one. */
struct event_spec {
	const struct field *fields;
	size_t n_fields;
	size_t block_size; /* 0: the body is a mapping of fields */
	int (*finish)(struct yaml_src *s, struct ht_event *ev,
		      const struct fields_read *got);
};

/* What a version 1 trace cannot hold: it has no fields. */
static int check_version_2(struct yaml_src *s, const char *ctx,
			   const struct fields_read *got, int field,
			   const char *name)
{
	if (!(got->present & (UINT32_C(1) << field)) || s->header.version >= 2)
		return 0;
	return fail_at(s, got->mark[field], "%s: '%s' needs format version 2 "
		       "(heaptrace: 2)", ctx, name);
}

/* What a version 1 or 2 trace cannot hold: it has no times. */
static int check_version_3(struct yaml_src *s, const struct ht_event *ev,
			   const struct fields_read *got, int field)
{
	if (!(got->present & (UINT32_C(1) << field)) || s->header.version >= 3)
		return 0;
	return fail_at(s, got->mark[field], "%s: 'time' needs format version "
		       "3 (heaptrace: 3)", ht_event_name(ev->type));
}

static const void *list(const struct yaml_src *s, enum buffer_slot slot);

/* What a version 1 to 3 trace cannot hold: allocation sites. A 0 where
 * a stack, a line or an id is given is refused as the .ht form would be,
 * which has no way to write it. */
static int check_version_4(struct yaml_src *s, const struct ht_event *ev,
			   const struct fields_read *got, int field,
			   const char *name)
{
	if (!(got->present & (UINT32_C(1) << field)) || s->header.version >= 4)
		return 0;
	return fail_at(s, got->mark[field], "%s: '%s' needs format version "
		       "4 (heaptrace: 4)", ht_event_name(ev->type), name);
}

static int finish_method(struct yaml_src *s, struct ht_event *ev,
			 const struct fields_read *got)
{
	if (check_version_4(s, ev, got, ME_FILE, "file") ||
	    check_version_4(s, ev, got, ME_LINE, "line"))
		return -1;
	if ((got->present & (UINT32_C(1) << ME_LINE)) && !ev->u.method.line)
		return fail_at(s, got->mark[ME_LINE], "method: 'line' is 0 "
			       "(leave it out when the line is not known)");
	return 0;
}

static int finish_object_allocated(struct yaml_src *s, struct ht_event *ev,
				   const struct fields_read *got)
{
	if (check_version_4(s, ev, got, OA_STACK, "stack"))
		return -1;
	if ((got->present & (UINT32_C(1) << OA_STACK)) &&
	    !ev->u.object_allocated.stack)
		return fail_at(s, got->mark[OA_STACK], "object_allocated: "
			       "'stack' is 0 (leave it out when there is "
			       "none)");
	return 0;
}

static int finish_stack(struct yaml_src *s, struct ht_event *ev,
			const struct fields_read *got)
{
	if (s->header.version < 4)
		return fail_at(s, got->mark[ST_ID], "stack needs format "
			       "version 4 (heaptrace: 4)");
	if (!ev->u.stack.id)
		return fail_at(s, got->mark[ST_ID], "stack: 'id' is 0 (stack "
			       "ids start at 1)");
	if (s->buf[B_REFS].count > HT_STACK_MAX_FRAMES)
		return fail_at(s, got->mark[ST_FRAMES], "stack: %zu frames, "
			       "more than the %u a stack may have",
			       s->buf[B_REFS].count, HT_STACK_MAX_FRAMES);
	ev->u.stack.count = s->buf[B_REFS].count;
	ev->u.stack.frames = list(s, B_REFS);
	return 0;
}

static int finish_gc_started(struct yaml_src *s, struct ht_event *ev,
			     const struct fields_read *got)
{
	return check_version_3(s, ev, got, GS_TIME);
}

static int finish_gc_finished(struct yaml_src *s, struct ht_event *ev,
			      const struct fields_read *got)
{
	return check_version_3(s, ev, got, GF_TIME);
}

static int finish_begin_container(struct yaml_src *s, struct ht_event *ev,
				  const struct fields_read *got)
{
	return check_version_3(s, ev, got, BC_TIME);
}

static int check_parallel(struct yaml_src *s, const char *ctx,
			  const struct fields_read *got, int field,
			  const char *name, enum buffer_slot slot,
			  size_t count)
{
	if (!(got->present & (UINT32_C(1) << field)))
		return 0;
	if (s->buf[slot].count != count)
		return fail_at(s, got->mark[field],
			       "%s: '%s' has %zu items but 'refs' has %zu", ctx,
			       name, s->buf[slot].count, count);
	return 0;
}

/* A list that was read; never NULL, even when empty and never grown, since
 * for an optional list NULL means absent. */
static const void *list(const struct yaml_src *s, enum buffer_slot slot)
{
	static const uint64_t no_elements[1];

	return s->buf[slot].data ? s->buf[slot].data : no_elements;
}

static const void *list_if(const struct yaml_src *s,
			   const struct fields_read *got, int field,
			   enum buffer_slot slot)
{
	return got->present & (UINT32_C(1) << field) ? list(s, slot) : NULL;
}

static int finish_root_references(struct yaml_src *s, struct ht_event *ev,
				  const struct fields_read *got)
{
	struct ht_ev_root_references *e = &ev->u.root_references;
	const char *ctx = "root_references";

	e->count = s->buf[B_REFS].count;
	if (check_parallel(s, ctx, got, RR_FLAGS, "flags", B_FLAGS, e->count) ||
	    check_parallel(s, ctx, got, RR_KINDS, "kinds", B_KINDS, e->count) ||
	    check_parallel(s, ctx, got, RR_ROOT_FLAGS, "root_flags",
			   B_ROOT_FLAGS, e->count) ||
	    check_parallel(s, ctx, got, RR_ROOT_IDS, "root_ids", B_ROOT_IDS,
			   e->count) ||
	    check_parallel(s, ctx, got, RR_ROOT_FIELDS, "root_fields",
			   B_FIELD_REFS, e->count) ||
	    check_version_2(s, ctx, got, RR_ROOT_FIELDS, "root_fields"))
		return -1;
	e->refs = list(s, B_REFS);
	e->flags = list(s, B_FLAGS);
	e->root_fields = list_if(s, got, RR_ROOT_FIELDS, B_FIELD_REFS);
	e->kinds = list_if(s, got, RR_KINDS, B_KINDS);
	e->root_flags = list_if(s, got, RR_ROOT_FLAGS, B_ROOT_FLAGS);
	e->root_ids = list_if(s, got, RR_ROOT_IDS, B_ROOT_IDS);
	return 0;
}

static bool given(const struct fields_read *got, int field)
{
	return got->present & (UINT32_C(1) << field);
}

/* Values and array (version 3): value_fields and values come together,
 * as long as each other, and not empty (the .ht form has no empty
 * values). */
static int finish_values(struct yaml_src *s,
			 struct ht_ev_object_references *e,
			 const struct fields_read *got)
{
	const char *ctx = "object_references";
	size_t n = s->buf[B_VALUES].count;

	e->n_values = 0;
	e->value_fields = NULL;
	e->values = NULL;
	e->array = NULL;
	for (int f = OR_VALUE_FIELDS; f <= OR_ARRAY; f++)
		if (given(got, f) && s->header.version < 3)
			return fail_at(s, got->mark[f], "%s: '%s' needs format "
				       "version 3 (heaptrace: 3)", ctx,
				       object_references_fields[f].name);
	if (given(got, OR_VALUE_FIELDS) != given(got, OR_VALUES))
		return fail_at(s, got->mark[given(got, OR_VALUES) ? OR_VALUES :
					    OR_VALUE_FIELDS],
			       "%s: 'value_fields' and 'values' come together",
			       ctx);
	if (given(got, OR_VALUES)) {
		if (s->buf[B_VALUE_FIELDS].count != n)
			return fail_at(s, got->mark[OR_VALUES], "%s: 'values' "
				       "has %zu items but 'value_fields' has "
				       "%zu", ctx, n,
				       s->buf[B_VALUE_FIELDS].count);
		if (n == 0)
			return fail_at(s, got->mark[OR_VALUES],
				       "%s: 'values' is empty", ctx);
		e->n_values = n;
		e->value_fields = list(s, B_VALUE_FIELDS);
		e->values = list(s, B_VALUES);
	}
	if (given(got, OR_ARRAY)) {
		s->array.data = list(s, B_ARRAY_DATA);
		e->array = &s->array;
	}
	return 0;
}

static int finish_object_references(struct yaml_src *s, struct ht_event *ev,
				    const struct fields_read *got)
{
	struct ht_ev_object_references *e = &ev->u.object_references;

	e->count = s->buf[B_REFS].count;
	if (check_parallel(s, "object_references", got, OR_REF_FLAGS,
			   "ref_flags", B_FLAGS, e->count) ||
	    check_parallel(s, "object_references", got, OR_REF_FIELDS,
			   "ref_fields", B_FIELD_REFS, e->count) ||
	    check_version_2(s, "object_references", got, OR_REF_FIELDS,
			    "ref_fields"))
		return -1;
	e->refs = list(s, B_REFS);
	e->ref_flags = list_if(s, got, OR_REF_FLAGS, B_FLAGS);
	e->ref_fields = list_if(s, got, OR_REF_FIELDS, B_FIELD_REFS);
	return finish_values(s, e, got);
}

static int finish_generation_bounds(struct yaml_src *s, struct ht_event *ev,
				    const struct fields_read *got)
{
	(void)got;
	ev->u.generation_bounds.count = s->buf[B_BLOCKS].count;
	ev->u.generation_bounds.ranges = list(s, B_BLOCKS);
	return 0;
}

static int finish_moved_references(struct yaml_src *s, struct ht_event *ev,
				   const struct fields_read *got)
{
	(void)got;
	ev->u.moved_references.count = s->buf[B_BLOCKS].count;
	ev->u.moved_references.blocks = list(s, B_BLOCKS);
	return 0;
}

static int finish_surviving_references(struct yaml_src *s,
				       struct ht_event *ev,
				       const struct fields_read *got)
{
	(void)got;
	ev->u.surviving_references.count = s->buf[B_BLOCKS].count;
	ev->u.surviving_references.blocks = list(s, B_BLOCKS);
	return 0;
}

/* read_block left each field's name as its offset in B_NAMES plus one,
 * as that buffer may have moved since: now that it is whole, they point. */
static int finish_fields(struct yaml_src *s, struct ht_event *ev,
			 const struct fields_read *got)
{
	struct ht_field *f = s->buf[B_BLOCKS].data;
	size_t n = s->buf[B_BLOCKS].count;

	(void)got;
	for (size_t i = 0; i < n; i++)
		f[i].name = (const char *)s->buf[B_NAMES].data +
			    ((uintptr_t)f[i].name - 1);
	ev->u.fields.count = n;
	ev->u.fields.fields = list(s, B_BLOCKS);
	return 0;
}

#define FIELDS(t) t, ARRAY_SIZE(t)

static const struct event_spec event_specs[HT_EV_LAST + 1] = {
	[HT_EV_CLASS] = {FIELDS(class_fields), 0, NULL},
	[HT_EV_THREAD] = {FIELDS(thread_fields), 0, NULL},
	[HT_EV_METHOD] = {FIELDS(method_fields), 0, finish_method},
	[HT_EV_OBJECT_ALLOCATED] = {FIELDS(object_allocated_fields), 0,
				    finish_object_allocated},
	[HT_EV_STACK] = {FIELDS(stack_fields), 0, finish_stack},
	[HT_EV_GC_STARTED] = {FIELDS(gc_started_fields), 0, finish_gc_started},
	[HT_EV_GENERATION_BOUNDS] = {FIELDS(range_fields),
				     sizeof(struct ht_generation_range),
				     finish_generation_bounds},
	[HT_EV_MOVED_REFERENCES] = {FIELDS(moved_fields),
				    sizeof(struct ht_moved_block),
				    finish_moved_references},
	[HT_EV_SURVIVING_REFERENCES] = {FIELDS(surviving_fields),
					sizeof(struct ht_surviving_block),
					finish_surviving_references},
	[HT_EV_GC_FINISHED] = {FIELDS(gc_finished_fields), 0,
			       finish_gc_finished},
	[HT_EV_BEGIN_CONTAINER] = {FIELDS(begin_container_fields), 0,
				   finish_begin_container},
	[HT_EV_ROOT_REFERENCES] = {FIELDS(root_references_fields), 0,
				   finish_root_references},
	[HT_EV_OBJECT_REFERENCES] = {FIELDS(object_references_fields), 0,
				     finish_object_references},
	[HT_EV_FIELDS] = {FIELDS(field_fields), sizeof(struct ht_field),
			  finish_fields},
};

/* ---- Events --------------------------------------------------------------- */

/* The name of a field, which read_name left in the buffer every name
 * shares, goes after the others of its event; the field keeps its offset
 * there plus one until finish_fields. */
static int keep_field_name(struct yaml_src *s, struct ht_field *f)
{
	struct buffer *names = &s->buf[B_NAMES];
	size_t at = names->count, len = strlen(f->name) + 1;

	if (reserve(s, names, at + len) < 0)
		return -1;
	memcpy((char *)names->data + at, f->name, len);
	names->count = at + len;
	f->name = (const char *)(uintptr_t)(at + 1);
	return 0;
}

/* One block of a block event: read into a zeroed element on its own, then
 * appended, so that a failure leaves no half-read element behind. */
static int read_block(struct yaml_src *s, const char *ctx,
		      const struct event_spec *spec, enum ht_event_type type)
{
	union {
		struct ht_generation_range range;
		struct ht_moved_block moved;
		struct ht_surviving_block surviving;
		struct ht_field field;
	} block;
	struct fields_read got;
	void *p;

	memset(&block, 0, sizeof(block));
	if (s->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: each block must be a mapping, not %s", ctx,
			       node_kind(&s->ev));
	if (yaml_read_fields(s, ctx, spec->fields, spec->n_fields, &block,
			     &got) < 0)
		return -1;
	if (type == HT_EV_GENERATION_BOUNDS &&
	    !(got.present & (UINT32_C(1) << GB_RESERVED)))
		block.range.reserved = block.range.length;
	if (type == HT_EV_FIELDS && keep_field_name(s, &block.field) < 0)
		return -1;
	p = push(s, &s->buf[B_BLOCKS], spec->block_size);
	if (!p)
		return -1;
	memcpy(p, &block, spec->block_size);
	return 0;
}

/* The body of a block event: a list of blocks, or null for none. */
static int read_blocks(struct yaml_src *s, const char *ctx,
		       const struct event_spec *spec, enum ht_event_type type)
{
	if (is_null(&s->ev))
		return 0;
	if (s->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: expected a list of blocks, not %s", ctx,
			       node_kind(&s->ev));
	for (;;) {
		if (yaml_pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		if (read_block(s, ctx, spec, type) < 0)
			return -1;
	}
}

static int read_body(struct yaml_src *s, enum ht_event_type type,
		     struct ht_event *ev)
{
	const struct event_spec *spec = &event_specs[type];
	const char *ctx = ht_event_name(type);
	struct fields_read got;

	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	for (int i = 0; i < B_COUNT_; i++)
		s->buf[i].count = 0;
	if (spec->block_size) {
		if (read_blocks(s, ctx, spec, type) < 0)
			return -1;
		memset(&got, 0, sizeof(got));
	} else if (yaml_read_fields(s, ctx, spec->fields, spec->n_fields, ev,
				    &got) < 0) {
		return -1;
	}
	return spec->finish ? spec->finish(s, ev, &got) : 0;
}

static int find_event_type(const yaml_event_t *key)
{
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		if (scalar_is(key, ht_event_name((enum ht_event_type)t)))
			return t;
	return -1;
}

/* One item of the events list: a mapping of one key, the event's name, to
 * its body. The current parser event is the item's start. */
int yaml_read_event(struct yaml_src *s, struct ht_event *ev)
{
	yaml_mark_t item = s->ev.start_mark;
	int type;

	if (s->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(s, item,
			       "an event must be a mapping {name: fields}, not %s",
			       node_kind(&s->ev));
	if (yaml_pull(s) < 0)
		return -1;
	if (s->ev.type == YAML_MAPPING_END_EVENT)
		return fail_at(s, item, "an event must name its type, as in "
			       "{gc_finished: {}}");
	if (yaml_read_key(s, "event") < 0)
		return -1;
	type = find_event_type(&s->ev);
	if (type < 0)
		return fail_at(s, s->ev.start_mark, "unknown event '%.*s'",
			       NAME_SHOWN, scalar_text(&s->ev));
	if (type == HT_EV_FIELDS && s->header.version < 2)
		return fail_at(s, s->ev.start_mark, "fields: needs format "
			       "version 2 (heaptrace: 2)");
	if (yaml_pull(s) < 0 ||
	    read_body(s, (enum ht_event_type)type, ev) < 0 ||
	    yaml_pull(s) < 0)
		return -1;
	if (s->ev.type != YAML_MAPPING_END_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: one event per list item; indent its fields "
			       "under the event's name",
			       ht_event_name((enum ht_event_type)type));
	s->pos.event_index = s->events;
	s->pos.offset = item.index;
	s->pos.chunk_offset = 0;
	s->pos.line = (unsigned)item.line + 1;
	s->pos.column = (unsigned)item.column + 1;
	return 0;
}

/* After the events list: the end of the top mapping, of the document and
 * of the stream, and nothing else. */
int yaml_read_end(struct yaml_src *s)
{
	if (yaml_pull(s) < 0)
		return -1;
	if (s->ev.type == YAML_SCALAR_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "'%.*s' after 'events': 'events' must be the last key",
			       NAME_SHOWN, scalar_text(&s->ev));
	if (s->ev.type != YAML_MAPPING_END_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "expected the end of the trace after 'events', not %s",
			       node_kind(&s->ev));
	if (yaml_pull(s) < 0)
		return -1;
	/* DOCUMENT_END always follows a document's top node. */
	if (yaml_pull(s) < 0)
		return -1;
	if (s->ev.type != YAML_STREAM_END_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "a trace is one YAML document; a second one begins here");
	return 0;
}
