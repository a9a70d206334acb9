/*
 * codec.c - events to chunk payload bytes and back (layout in heaptrace(5),
 * "Event coding"), and the file header's payload.
 *
 * Each event starts with its type byte. Object ids, class ids and root refs
 * are zigzag deltas against the previous id of their stream; an object's
 * refs are deltas chained from the object's own id, because a heap walk
 * reports objects whose fields mostly point close by. Everything else is a
 * plain varint. A time (version 3) follows the type byte of the events
 * that have one, as a zigzag delta from the chunk's previous time.
 */
#include "lib/common/codec.h"

#include "lib/common/error.h"
#include "lib/common/format.h"
#include "lib/common/varint.h"
#include "util/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Option bits of the events that have them. */
#define OPT_CLASS_SIZE 0x1u
#define OPT_GC_NUMBER 0x1u
#define OPT_GC_INDUCED 0x2u
#define OPT_ROOT_KINDS 0x1u
#define OPT_ROOT_FLAGS 0x2u
#define OPT_ROOT_IDS 0x4u
#define OPT_ROOT_RESULT_SHIFT 3
#define OPT_ROOT_FIELDS (1u << (OPT_ROOT_RESULT_SHIFT + 2)) /* version 2 */
#define OPT_OBJ_REF_FLAGS 0x1u
#define OPT_OBJ_GENERATION 0x2u
#define OPT_OBJ_RESULT_SHIFT 2
#define OPT_OBJ_REF_FIELDS (1u << (OPT_OBJ_RESULT_SHIFT + 2)) /* version 2 */
/* the first reference is the object's class, not written (version 3) */
#define OPT_OBJ_CLASS_REF (1u << (OPT_OBJ_RESULT_SHIFT + 3))
/* values: primitive field values, a primitive array's contents (version 3) */
#define OPT_OBJ_VALUES (1u << (OPT_OBJ_RESULT_SHIFT + 4))
#define OPT_OBJ_ARRAY (1u << (OPT_OBJ_RESULT_SHIFT + 5))
#define OPT_OBJ_LAST_BIT (OPT_OBJ_RESULT_SHIFT + 5)
/* Version 4, after an extended type byte (CODEC_EXTENDED). */
#define OPT_ALLOC_STACK 0x1u
#define OPT_METHOD_FILE 0x1u
#define OPT_METHOD_LINE 0x2u
/* A field's kind and whether it has an offset share one varint; a
 * primitive field's type follows when bit 9 says so (version 3). */
#define FIELD_HAS_OFFSET 0x1u
#define FIELD_KIND_SHIFT 1
#define FIELD_HAS_TYPE (1u << (FIELD_KIND_SHIFT + 8))

/* An object's ref: 0 is null, 1 escapes to an absolute id (for a delta
 * whose zigzag code would not leave room), k >= 2 is zigzag(delta) + 2. */
#define REF_NULL 0u
#define REF_ABSOLUTE 1u
#define REF_DELTA_BIAS 2u

/* ---- encoding ------------------------------------------------------------ */

void codec_enc_init(struct codec_enc *e, uint8_t *buf, size_t size)
{
	e->start = buf;
	e->p = buf;
	e->end = buf + size;
	memset(&e->base, 0, sizeof(e->base));
	e->class_refs = false;
}

static inline void put_u(struct codec_enc *e, uint64_t v)
{
	e->p = varint_put(e->p, v);
}

static inline void put_delta(struct codec_enc *e, ht_id *base, ht_id id)
{
	put_u(e, zigzag_encode((int64_t)(id - *base)));
	*base = id;
}

static void put_string(struct codec_enc *e, const char *s)
{
	size_t n;

	if (!s) {
		put_u(e, 0);
		return;
	}
	n = strnlen(s, CODEC_MAX_STRING);
	/* a cut string must not end inside a UTF-8 sequence */
	if (n == CODEC_MAX_STRING)
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	put_u(e, (uint64_t)n + 1);
	memcpy(e->p, s, n);
	e->p += n;
}

static size_t string_bound(const char *s)
{
	return VARINT_MAX + (s ? strnlen(s, CODEC_MAX_STRING) : 0);
}

size_t codec_element_bound(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_GENERATION_BOUNDS:
		return 4 * VARINT_MAX;
	case HT_EV_MOVED_REFERENCES:
		return CODEC_MOVED_BOUND;
	case HT_EV_SURVIVING_REFERENCES:
		return CODEC_SURVIVING_BOUND;
	case HT_EV_ROOT_REFERENCES:
		/* ref, flags, kind, root flag, root id, root field */
		return 4 * VARINT_MAX + 2;
	case HT_EV_OBJECT_REFERENCES:
		/* ref, flags, field */
		return 3 * VARINT_MAX + 5;
	case HT_EV_FIELDS: {
		/* the longest field: id, class, options, offset, type and
		 * name; each may be that long */
		size_t most = 0;

		for (size_t i = 0; i < ev->u.fields.count; i++) {
			size_t n = string_bound(ev->u.fields.fields[i].name);

			if (n > most)
				most = n;
		}
		return 5 * VARINT_MAX + most;
	}
	default:
		return 0;
	}
}

size_t codec_event_count(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_GENERATION_BOUNDS:
		return ev->u.generation_bounds.count;
	case HT_EV_MOVED_REFERENCES:
		return ev->u.moved_references.count;
	case HT_EV_SURVIVING_REFERENCES:
		return ev->u.surviving_references.count;
	case HT_EV_ROOT_REFERENCES:
		return ev->u.root_references.count;
	case HT_EV_OBJECT_REFERENCES:
		return ev->u.object_references.count;
	case HT_EV_FIELDS:
		return ev->u.fields.count;
	default:
		return 0;
	}
}

size_t codec_values_bound(const struct ht_event *ev)
{
	const struct ht_ev_object_references *o = &ev->u.object_references;
	size_t n = 0;

	if (ev->type != HT_EV_OBJECT_REFERENCES)
		return 0;
	if (o->n_values)
		n += VARINT_MAX + o->n_values * 2 * VARINT_MAX;
	if (o->array)
		n += 4 * VARINT_MAX + 8 +
		     o->array->stored * ht_value_type_width(o->array->type);
	return n;
}

size_t codec_event_bound(const struct ht_event *ev)
{
	size_t n = CODEC_EVENT_OVERHEAD + codec_values_bound(ev);

	switch (ev->type) {
	case HT_EV_CLASS:
		n += string_bound(ev->u.class_.name);
		break;
	case HT_EV_THREAD:
		n += string_bound(ev->u.thread.name);
		break;
	case HT_EV_METHOD:
		n += string_bound(ev->u.method.name) +
		     string_bound(ev->u.method.file);
		break;
	case HT_EV_STACK:
		/* never split (HT_STACK_MAX_FRAMES keeps it small) */
		n += ev->u.stack.count * VARINT_MAX;
		break;
	case HT_EV_FIELDS:
		for (size_t i = 0; i < ev->u.fields.count; i++)
			n += 5 * VARINT_MAX +
			     string_bound(ev->u.fields.fields[i].name);
		break;
	default:
		n += codec_event_count(ev) * codec_element_bound(ev);
		break;
	}
	return n;
}

static void put_named(struct codec_enc *e, const struct ht_ev_named *n)
{
	put_u(e, n->id);
	put_string(e, n->name);
}

static void put_class(struct codec_enc *e, const struct ht_ev_class *c)
{
	put_u(e, c->has_size ? OPT_CLASS_SIZE : 0);
	put_delta(e, &e->base.class_, c->id);
	put_string(e, c->name);
	if (c->has_size)
		put_u(e, c->size);
}

/* The options an extended event's type byte announces (CODEC_EXTENDED):
 * 0 when it has nothing of version 4, and then it is coded as before. */
static unsigned extended_options(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_OBJECT_ALLOCATED:
		return ev->u.object_allocated.stack ? OPT_ALLOC_STACK : 0;
	case HT_EV_METHOD:
		return (ev->u.method.file ? OPT_METHOD_FILE : 0) |
		       (ev->u.method.line ? OPT_METHOD_LINE : 0);
	default:
		return 0;
	}
}

static void put_object_allocated(struct codec_enc *e,
				 const struct ht_ev_object_allocated *a)
{
	put_delta(e, &e->base.object, a->id);
	put_delta(e, &e->base.class_, a->class_id);
	put_u(e, a->size);
	if (a->stack)
		put_u(e, a->stack);
}

static void put_method(struct codec_enc *e, const struct ht_ev_method *m)
{
	put_u(e, m->id);
	put_string(e, m->name);
	if (m->file)
		put_string(e, m->file);
	if (m->line)
		put_u(e, m->line);
}

static void put_stack(struct codec_enc *e, const struct ht_ev_stack *k)
{
	put_u(e, k->id);
	put_u(e, k->count);
	for (size_t i = 0; i < k->count; i++)
		put_u(e, k->frames[i]);
}

static void put_gc_started(struct codec_enc *e, const struct ht_ev_gc_started *g)
{
	unsigned opts = 0;

	if (g->has_gc)
		opts |= OPT_GC_NUMBER;
	if (g->reason == HT_GC_INDUCED)
		opts |= OPT_GC_INDUCED;
	put_u(e, opts);
	if (g->has_gc)
		put_u(e, g->gc);
	put_u(e, g->generations);
}

static void put_generation_bounds(struct codec_enc *e,
				  const struct ht_ev_generation_bounds *b)
{
	ht_id prev = 0;

	put_u(e, b->count);
	for (size_t i = 0; i < b->count; i++) {
		const struct ht_generation_range *r = &b->ranges[i];

		put_u(e, r->generation);
		put_delta(e, &prev, r->start);
		put_u(e, r->length);
		put_u(e, r->reserved);
	}
}

/* A compacting GC slides blocks by a shift that changes slowly from one
 * block to the next, so the shift is coded against the previous one. */
static void put_moved_block(struct codec_enc *e, ht_id old_id, ht_id new_id,
			    uint64_t length, int64_t *prev_shift)
{
	int64_t shift = (int64_t)(new_id - old_id);

	put_delta(e, &e->base.object, old_id);
	put_u(e, zigzag_encode((int64_t)((uint64_t)shift - (uint64_t)*prev_shift)));
	put_u(e, length);
	*prev_shift = shift;
}

void codec_put_moved(struct codec_enc *e, size_t count, const ht_id *old_starts,
		     const ht_id *new_starts, const uint64_t *lengths)
{
	int64_t shift = 0;

	*e->p++ = HT_EV_MOVED_REFERENCES;
	put_u(e, count);
	for (size_t i = 0; i < count; i++)
		put_moved_block(e, old_starts[i], new_starts[i], lengths[i], &shift);
}

void codec_put_surviving(struct codec_enc *e, size_t count, const ht_id *starts,
			 const uint64_t *lengths)
{
	*e->p++ = HT_EV_SURVIVING_REFERENCES;
	put_u(e, count);
	for (size_t i = 0; i < count; i++) {
		put_delta(e, &e->base.object, starts[i]);
		put_u(e, lengths[i]);
	}
}

/* Field ids of references: 0 is no field, k >= 1 is zigzag(delta) + 1
 * against the previous nonzero field id of the chunk. An object's fields
 * are mostly declared one after the other, so the deltas are small, and
 * the next object of the same class starts close to where the last one
 * ended. */
static void put_field_refs(struct codec_enc *e, size_t count,
			   const ht_id *fields)
{
	for (size_t i = 0; i < count; i++) {
		uint64_t code;

		if (fields[i] == 0) {
			put_u(e, 0);
			continue;
		}
		code = zigzag_encode((int64_t)(fields[i] - e->base.field));
		/* a delta too wide for the bias is coded as 1, then the id */
		if (code > UINT64_MAX - 2) {
			put_u(e, 1);
			put_u(e, fields[i]);
		} else {
			put_u(e, code + 2);
		}
		e->base.field = fields[i];
	}
}

static void put_fields(struct codec_enc *e, const struct ht_ev_fields *f)
{
	put_u(e, f->count);
	for (size_t i = 0; i < f->count; i++) {
		const struct ht_field *x = &f->fields[i];
		uint64_t opts = (uint64_t)x->kind << FIELD_KIND_SHIFT;

		if (x->has_offset)
			opts |= FIELD_HAS_OFFSET;
		if (x->type)
			opts |= FIELD_HAS_TYPE;
		put_delta(e, &e->base.field, x->id);
		put_delta(e, &e->base.class_, x->class_id);
		put_string(e, x->name);
		put_u(e, opts);
		if (x->has_offset)
			put_u(e, x->offset);
		if (x->type)
			put_u(e, x->type);
	}
}

static void put_root_references(struct codec_enc *e,
				const struct ht_ev_root_references *r)
{
	unsigned opts = (unsigned)r->result << OPT_ROOT_RESULT_SHIFT;
	ht_id prev_root_id = 0;

	if (r->kinds)
		opts |= OPT_ROOT_KINDS;
	if (r->root_flags)
		opts |= OPT_ROOT_FLAGS;
	if (r->root_ids)
		opts |= OPT_ROOT_IDS;
	if (r->root_fields)
		opts |= OPT_ROOT_FIELDS;
	put_u(e, opts);
	put_u(e, r->count);
	for (size_t i = 0; i < r->count; i++)
		put_delta(e, &e->base.root, r->refs[i]);
	for (size_t i = 0; i < r->count; i++)
		put_u(e, r->flags ? r->flags[i] : 0);
	if (r->kinds)
		for (size_t i = 0; i < r->count; i++)
			*e->p++ = r->kinds[i];
	if (r->root_flags)
		for (size_t i = 0; i < r->count; i++)
			*e->p++ = r->root_flags[i];
	if (r->root_ids)
		for (size_t i = 0; i < r->count; i++)
			put_delta(e, &prev_root_id, r->root_ids[i]);
	if (r->root_fields)
		put_field_refs(e, r->count, r->root_fields);
}

static void put_ref(struct codec_enc *e, ht_id *prev, ht_id ref)
{
	uint64_t code;

	if (ref == 0) {
		put_u(e, REF_NULL);
		return;
	}
	code = zigzag_encode((int64_t)(ref - *prev));
	if (code > UINT64_MAX - REF_DELTA_BIAS) {
		put_u(e, REF_ABSOLUTE);
		put_u(e, ref);
	} else {
		put_u(e, code + REF_DELTA_BIAS);
	}
	*prev = ref;
}

/* Values name their fields as references do; each is a zigzag varint. */
static void put_values(struct codec_enc *e,
		       const struct ht_ev_object_references *o)
{
	put_u(e, o->n_values);
	put_field_refs(e, o->n_values, o->value_fields);
	for (size_t i = 0; i < o->n_values; i++)
		put_u(e, zigzag_encode((int64_t)o->values[i]));
}

static void put_array(struct codec_enc *e, const struct ht_array_values *a)
{
	size_t bytes = (size_t)a->stored * ht_value_type_width(a->type);

	put_u(e, a->type);
	put_u(e, a->length);
	put_u(e, a->stored);
	if (bytes) /* an empty array's data may be NULL */
		memcpy(e->p, a->data, bytes);
	e->p += bytes;
	if (a->stored < a->length) {
		put_le64(e->p, a->hash);
		e->p += 8;
	}
}

static void put_object_references(struct codec_enc *e,
				  const struct ht_ev_object_references *o)
{
	unsigned opts = (unsigned)o->result << OPT_OBJ_RESULT_SHIFT;
	bool class_ref = e->class_refs && o->count && o->class_id &&
			 o->refs[0] == o->class_id;
	ht_id prev;

	if (o->ref_flags)
		opts |= OPT_OBJ_REF_FLAGS;
	if (o->has_generation)
		opts |= OPT_OBJ_GENERATION;
	if (o->ref_fields)
		opts |= OPT_OBJ_REF_FIELDS;
	if (class_ref)
		opts |= OPT_OBJ_CLASS_REF;
	if (o->n_values)
		opts |= OPT_OBJ_VALUES;
	if (o->array)
		opts |= OPT_OBJ_ARRAY;
	put_u(e, opts);
	put_delta(e, &e->base.object, o->id);
	put_delta(e, &e->base.class_, o->class_id);
	put_u(e, o->size);
	put_u(e, o->flags);
	if (o->has_generation)
		put_u(e, o->generation);
	put_u(e, o->count);
	prev = o->id;
	for (size_t i = class_ref ? 1 : 0; i < o->count; i++)
		put_ref(e, &prev, o->refs[i]);
	if (o->ref_flags)
		for (size_t i = 0; i < o->count; i++)
			put_u(e, o->ref_flags[i]);
	if (o->ref_fields)
		put_field_refs(e, o->count, o->ref_fields);
	if (o->n_values)
		put_values(e, o);
	if (o->array)
		put_array(e, o->array);
}

void codec_put_event(struct codec_enc *e, const struct ht_event *ev)
{
	unsigned extended;

	switch (ev->type) {
	case HT_EV_MOVED_REFERENCES: {
		const struct ht_ev_moved_references *m = &ev->u.moved_references;
		int64_t shift = 0;

		*e->p++ = HT_EV_MOVED_REFERENCES;
		put_u(e, m->count);
		for (size_t i = 0; i < m->count; i++)
			put_moved_block(e, m->blocks[i].old_id, m->blocks[i].new_id,
					m->blocks[i].length, &shift);
		return;
	}
	case HT_EV_SURVIVING_REFERENCES: {
		const struct ht_ev_surviving_references *s =
			&ev->u.surviving_references;

		*e->p++ = HT_EV_SURVIVING_REFERENCES;
		put_u(e, s->count);
		for (size_t i = 0; i < s->count; i++) {
			put_delta(e, &e->base.object, s->blocks[i].start);
			put_u(e, s->blocks[i].length);
		}
		return;
	}
	default:
		break;
	}

	extended = extended_options(ev);
	if (ev->has_time && ht_event_timed_type(ev->type)) {
		*e->p++ = (uint8_t)(ev->type | CODEC_TIMED);
		put_u(e, zigzag_encode((int64_t)(ev->time - e->base.time)));
		e->base.time = ev->time;
	} else {
		*e->p++ = (uint8_t)(ev->type | (extended ? CODEC_EXTENDED : 0));
	}
	if (extended)
		put_u(e, extended);
	switch (ev->type) {
	case HT_EV_CLASS:
		put_class(e, &ev->u.class_);
		break;
	case HT_EV_THREAD:
		put_named(e, &ev->u.thread);
		break;
	case HT_EV_METHOD:
		put_method(e, &ev->u.method);
		break;
	case HT_EV_OBJECT_ALLOCATED:
		put_object_allocated(e, &ev->u.object_allocated);
		break;
	case HT_EV_GC_STARTED:
		put_gc_started(e, &ev->u.gc_started);
		break;
	case HT_EV_GENERATION_BOUNDS:
		put_generation_bounds(e, &ev->u.generation_bounds);
		break;
	case HT_EV_GC_FINISHED:
		break;
	case HT_EV_BEGIN_CONTAINER:
		put_u(e, (uint64_t)ev->u.begin_container.type);
		put_u(e, ev->u.begin_container.id1);
		put_u(e, ev->u.begin_container.id2);
		break;
	case HT_EV_ROOT_REFERENCES:
		put_root_references(e, &ev->u.root_references);
		break;
	case HT_EV_OBJECT_REFERENCES:
		put_object_references(e, &ev->u.object_references);
		break;
	case HT_EV_STACK:
		put_stack(e, &ev->u.stack);
		break;
	case HT_EV_FIELDS:
		put_fields(e, &ev->u.fields);
		break;
	default:
		break;
	}
}

/* ---- decoding ------------------------------------------------------------ */

void codec_dec_init(struct codec_dec *d)
{
	memset(d, 0, sizeof(*d));
}

void codec_dec_reset(struct codec_dec *d, const uint8_t *buf, size_t size)
{
	d->start = buf;
	d->p = buf;
	d->end = buf + size;
	memset(&d->base, 0, sizeof(d->base));
	d->what = "chunk";
}

void codec_dec_free(struct codec_dec *d)
{
	free(d->ids);
	free(d->ids2);
	free(d->ids3);
	free(d->fields);
	free(d->names);
	free(d->u32);
	free(d->u32b);
	free(d->u8a);
	free(d->u8b);
	free(d->u64);
	free(d->blocks);
	free(d->str);
	free(d->str2);
	if (d->release)
		d->release(d->charged);
	codec_dec_init(d);
}

/*
 * Makes room for `need` elements of elem bytes in the scratch array *p of
 * capacity *cap (util/alloc.h), charging what it grows by to d->charge
 * first when the reader set one (its memory budget): one chunk of a few
 * hundred KB can hold 134 million roots. 0, or -1 when refused or out of
 * memory, the array untouched.
 */
static int reserve(struct codec_dec *d, void **p, size_t *cap, size_t need,
		   size_t elem)
{
	size_t c;
	uint64_t more;

	if (need <= *cap)
		return 0;
	c = grown_capacity(*cap, need, elem);
	if (!c)
		return -1;
	more = (uint64_t)(c - *cap) * elem;
	if (d->charge && d->charge(more) < 0)
		return -1;
	if (grow_array(p, cap, need, elem) < 0) {
		if (d->release)
			d->release(more);
		return -1;
	}
	d->charged += more;
	return 0;
}

/* Grows the scratch array d->field to n elements. */
#define RESERVE(d, field, n)                                              \
	__extension__({                                                   \
		void *reserved_ = (d)->field;                             \
		int reserve_rc_ = reserve((d), &reserved_,                \
					  &(d)->field##_cap, (n),         \
					  sizeof(*(d)->field));           \
		if (reserve_rc_ == 0)                                     \
			(d)->field = reserved_;                           \
		reserve_rc_;                                              \
	})

/* Decoding fails through these: a bad input sets *why and returns -1; out of
 * memory returns -2. */
#define GET_U(d, out, what)                                           \
	do {                                                          \
		if (varint_get(&(d)->p, (d)->end, (out)) < 0) {       \
			*why = "bad or truncated " what;              \
			return -1;                                    \
		}                                                     \
	} while (0)

static int get_delta(struct codec_dec *d, ht_id *base, ht_id *out,
		     const char **why)
{
	uint64_t v;

	GET_U(d, &v, "id");
	*out = *base + (uint64_t)zigzag_decode(v);
	*base = *out;
	return 0;
}

/* A timed event's time: a delta from the chunk's previous time. */
static int get_time(struct codec_dec *d, struct ht_event *ev,
		   const char **why)
{
	uint64_t v;

	GET_U(d, &v, "time");
	ev->has_time = true;
	ev->time = d->base.time + (uint64_t)zigzag_decode(v);
	d->base.time = ev->time;
	return 0;
}

static int get_u32(struct codec_dec *d, uint32_t *out, const char *what,
		   const char **why)
{
	uint64_t v;

	if (varint_get(&d->p, d->end, &v) < 0) {
		*why = what;
		return -1;
	}
	if (v > UINT32_MAX) {
		*why = what;
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* Messages that name the numbers of hostile input, which a static string
 * cannot: one buffer per thread, as readers may run on several. */
static _Thread_local char why_buffer[128];

static const char *why_printf(const char *fmt, ...) HT_PRINTF(1, 2);

static const char *why_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buffer, sizeof(why_buffer), fmt, ap);
	va_end(ap);
	return why_buffer;
}

/* A count of elements each at least min_bytes long: checked against what
 * is left of the payload before anything is allocated for it, so that a
 * hostile count (2^60 references) costs nothing. */
/* A count of elements of at least min_bytes each, but for `unwritten` of
 * them, which take none (an object's link to its class). */
static int get_count_unwritten(struct codec_dec *d, size_t min_bytes,
			       uint64_t unwritten, const char *what,
			       size_t *out, const char **why)
{
	uint64_t v, left;

	GET_U(d, &v, "count");
	left = (uint64_t)(d->end - d->p);
	if (v < unwritten) {
		*why = why_printf("count of %llu %s, fewer than the %llu its "
				  "options say", (unsigned long long)v, what,
				  (unsigned long long)unwritten);
		return -1;
	}
	if (v - unwritten > left / min_bytes) {
		*why = why_printf("count of %llu %s, more than the %llu "
				  "bytes left in the %s can hold",
				  (unsigned long long)v, what,
				  (unsigned long long)left, d->what);
		return -1;
	}
	*out = (size_t)v;
	return 0;
}

static int get_count(struct codec_dec *d, size_t min_bytes, const char *what,
		     size_t *out, const char **why)
{
	return get_count_unwritten(d, min_bytes, 0, what, out, why);
}

static int get_string(struct codec_dec *d, const char **out, const char **why)
{
	uint64_t v, left;
	size_t n;

	GET_U(d, &v, "string length");
	if (v == 0) {
		*out = NULL;
		return 0;
	}
	left = (uint64_t)(d->end - d->p);
	if (v - 1 > CODEC_MAX_STRING) {
		*why = why_printf("string of %llu bytes, over the %u-byte "
				  "limit", (unsigned long long)(v - 1),
				  CODEC_MAX_STRING);
		return -1;
	}
	n = (size_t)(v - 1);
	if (n > left) {
		*why = why_printf("string of %zu bytes, longer than the %llu "
				  "bytes left in the %s", n,
				  (unsigned long long)left, d->what);
		return -1;
	}
	if (memchr(d->p, 0, n)) {
		*why = "string contains a NUL byte";
		return -1;
	}
	if (RESERVE(d, str, n + 1) < 0)
		return -2;
	memcpy(d->str, d->p, n);
	d->str[n] = '\0';
	d->p += n;
	*out = d->str;
	return 0;
}

#define TRY(call)                        \
	do {                             \
		int rc_ = (call);        \
		if (rc_ < 0)             \
			return rc_;      \
	} while (0)

static int get_named(struct codec_dec *d, struct ht_ev_named *n,
		     const char **why)
{
	GET_U(d, &n->id, "id");
	return get_string(d, &n->name, why);
}

static int get_class(struct codec_dec *d, struct ht_ev_class *c,
		     const char **why)
{
	uint64_t opts;

	GET_U(d, &opts, "options");
	if (opts & ~(uint64_t)OPT_CLASS_SIZE) {
		*why = "unknown class options";
		return -1;
	}
	TRY(get_delta(d, &d->base.class_, &c->id, why));
	TRY(get_string(d, &c->name, why));
	c->has_size = opts & OPT_CLASS_SIZE;
	c->size = 0;
	if (c->has_size)
		GET_U(d, &c->size, "size");
	return 0;
}

static int get_object_allocated(struct codec_dec *d,
				struct ht_ev_object_allocated *a,
				uint64_t opts, const char **why)
{
	if (opts & ~(uint64_t)OPT_ALLOC_STACK) {
		*why = "unknown object_allocated options";
		return -1;
	}
	TRY(get_delta(d, &d->base.object, &a->id, why));
	TRY(get_delta(d, &d->base.class_, &a->class_id, why));
	GET_U(d, &a->size, "size");
	a->stack = 0;
	if (opts & OPT_ALLOC_STACK) {
		GET_U(d, &a->stack, "stack");
		if (!a->stack) {
			*why = "stack 0 where the options say one follows";
			return -1;
		}
	}
	return 0;
}

/* A method's file goes to its own buffer: its name holds d->str. */
static int get_method(struct codec_dec *d, struct ht_ev_method *m,
		      uint64_t opts, const char **why)
{
	const char *file = NULL;

	if (opts & ~(uint64_t)(OPT_METHOD_FILE | OPT_METHOD_LINE)) {
		*why = "unknown method options";
		return -1;
	}
	GET_U(d, &m->id, "id");
	m->file = NULL;
	m->line = 0;
	if (opts & OPT_METHOD_FILE) {
		TRY(get_string(d, &m->name, why));
		if (m->name) {
			size_t n = strlen(m->name) + 1;

			if (RESERVE(d, str2, n) < 0)
				return -2;
			memcpy(d->str2, m->name, n);
			m->name = d->str2;
		}
		TRY(get_string(d, &file, why));
		if (!file) {
			*why = "no file where the options say one follows";
			return -1;
		}
		m->file = file;
	} else {
		TRY(get_string(d, &m->name, why));
	}
	if (opts & OPT_METHOD_LINE) {
		TRY(get_u32(d, &m->line, "line", why));
		if (!m->line) {
			*why = "line 0 where the options say one follows";
			return -1;
		}
	}
	return 0;
}

/* Frames are method ids, each at least a byte. */
static int get_stack(struct codec_dec *d, struct ht_ev_stack *k,
		     const char **why)
{
	size_t n;

	GET_U(d, &k->id, "id");
	if (!k->id) {
		*why = "stack id 0";
		return -1;
	}
	TRY(get_count(d, 1, "frames", &n, why));
	if (RESERVE(d, ids, n ? n : 1) < 0)
		return -2;
	for (size_t i = 0; i < n; i++)
		GET_U(d, &d->ids[i], "frame");
	k->count = n;
	k->frames = d->ids;
	return 0;
}

static int get_gc_started(struct codec_dec *d, struct ht_ev_gc_started *g,
			  const char **why)
{
	uint64_t opts;

	GET_U(d, &opts, "options");
	if (opts & ~(uint64_t)(OPT_GC_NUMBER | OPT_GC_INDUCED)) {
		*why = "unknown gc_started options";
		return -1;
	}
	g->has_gc = opts & OPT_GC_NUMBER;
	g->gc = 0;
	if (g->has_gc)
		GET_U(d, &g->gc, "GC number");
	TRY(get_u32(d, &g->generations, "bad generation set", why));
	g->reason = (opts & OPT_GC_INDUCED) ? HT_GC_INDUCED : HT_GC_OTHER;
	return 0;
}

static int get_generation_bounds(struct codec_dec *d,
				 struct ht_ev_generation_bounds *b,
				 const char **why)
{
	struct ht_generation_range *r;
	ht_id prev = 0;

	TRY(get_count(d, 4, "generation ranges", &b->count, why));
	if (reserve(d, &d->blocks, &d->blocks_cap,
		       b->count * sizeof(*r) + 1, 1) < 0)
		return -2;
	r = d->blocks;
	for (size_t i = 0; i < b->count; i++) {
		TRY(get_u32(d, &r[i].generation, "bad generation", why));
		TRY(get_delta(d, &prev, &r[i].start, why));
		GET_U(d, &r[i].length, "length");
		GET_U(d, &r[i].reserved, "reserved length");
	}
	b->ranges = r;
	return 0;
}

static int get_moved(struct codec_dec *d, struct ht_ev_moved_references *m,
		     const char **why)
{
	struct ht_moved_block *b;
	int64_t shift = 0;

	TRY(get_count(d, 3, "moved blocks", &m->count, why));
	if (reserve(d, &d->blocks, &d->blocks_cap,
		       m->count * sizeof(*b) + 1, 1) < 0)
		return -2;
	b = d->blocks;
	for (size_t i = 0; i < m->count; i++) {
		uint64_t dshift;

		TRY(get_delta(d, &d->base.object, &b[i].old_id, why));
		GET_U(d, &dshift, "block shift");
		shift = (int64_t)((uint64_t)shift + (uint64_t)zigzag_decode(dshift));
		b[i].new_id = b[i].old_id + (uint64_t)shift;
		GET_U(d, &b[i].length, "block length");
	}
	m->blocks = b;
	return 0;
}

static int get_surviving(struct codec_dec *d,
			 struct ht_ev_surviving_references *s, const char **why)
{
	struct ht_surviving_block *b;

	TRY(get_count(d, 2, "surviving blocks", &s->count, why));
	if (reserve(d, &d->blocks, &d->blocks_cap,
		       s->count * sizeof(*b) + 1, 1) < 0)
		return -2;
	b = d->blocks;
	for (size_t i = 0; i < s->count; i++) {
		TRY(get_delta(d, &d->base.object, &b[i].start, why));
		GET_U(d, &b[i].length, "block length");
	}
	s->blocks = b;
	return 0;
}

static int get_bytes(struct codec_dec *d, uint8_t *out, size_t n,
		     const char **why)
{
	if ((size_t)(d->end - d->p) < n) {
		*why = "truncated byte array";
		return -1;
	}
	memcpy(out, d->p, n);
	d->p += n;
	return 0;
}

static int get_field_refs(struct codec_dec *d, size_t n, ht_id *out,
			  const char **why)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t code;

		GET_U(d, &code, "field reference");
		if (code == 0) {
			out[i] = 0;
			continue;
		}
		if (code == 1)
			GET_U(d, &out[i], "field reference");
		else
			out[i] = d->base.field +
				 (uint64_t)zigzag_decode(code - 2);
		d->base.field = out[i];
	}
	return 0;
}

static int get_root_references(struct codec_dec *d,
			       struct ht_ev_root_references *r,
			       const char **why)
{
	uint64_t opts;
	size_t n;
	ht_id prev_root_id = 0;

	GET_U(d, &opts, "options");
	if (opts >> (OPT_ROOT_RESULT_SHIFT + 3) ||
	    ((opts >> OPT_ROOT_RESULT_SHIFT) & 3) > HT_RESULT_ABORT) {
		*why = "unknown root_references options";
		return -1;
	}
	r->result = (enum ht_result)((opts >> OPT_ROOT_RESULT_SHIFT) & 3);
	TRY(get_count(d, 2, "root references", &n, why));
	r->count = n;
	if (RESERVE(d, ids, n + 1) < 0 || RESERVE(d, u32, n + 1) < 0)
		return -2;
	for (size_t i = 0; i < n; i++)
		TRY(get_delta(d, &d->base.root, &d->ids[i], why));
	for (size_t i = 0; i < n; i++)
		TRY(get_u32(d, &d->u32[i], "bad root flags", why));
	r->refs = d->ids;
	r->flags = d->u32;
	r->kinds = NULL;
	r->root_flags = NULL;
	r->root_ids = NULL;
	r->root_fields = NULL;
	if (opts & OPT_ROOT_KINDS) {
		if (RESERVE(d, u8a, n + 1) < 0)
			return -2;
		TRY(get_bytes(d, d->u8a, n, why));
		r->kinds = d->u8a;
	}
	if (opts & OPT_ROOT_FLAGS) {
		if (RESERVE(d, u8b, n + 1) < 0)
			return -2;
		TRY(get_bytes(d, d->u8b, n, why));
		r->root_flags = d->u8b;
	}
	if (opts & OPT_ROOT_IDS) {
		if (RESERVE(d, ids2, n + 1) < 0)
			return -2;
		for (size_t i = 0; i < n; i++)
			TRY(get_delta(d, &prev_root_id, &d->ids2[i], why));
		r->root_ids = d->ids2;
	}
	if (opts & OPT_ROOT_FIELDS) {
		if (RESERVE(d, ids3, n + 1) < 0)
			return -2;
		TRY(get_field_refs(d, n, d->ids3, why));
		r->root_fields = d->ids3;
	}
	return 0;
}

static int get_ref(struct codec_dec *d, ht_id *prev, ht_id *out,
		   const char **why)
{
	uint64_t code;

	GET_U(d, &code, "reference");
	if (code == REF_NULL) {
		*out = 0;
		return 0;
	}
	if (code == REF_ABSOLUTE)
		GET_U(d, out, "reference");
	else
		*out = *prev + (uint64_t)zigzag_decode(code - REF_DELTA_BIAS);
	*prev = *out;
	return 0;
}

/* A value is at least a byte of field and one of value. */
static int get_values(struct codec_dec *d, struct ht_ev_object_references *o,
		      const char **why)
{
	size_t n;

	TRY(get_count(d, 2, "values", &n, why));
	if (n == 0) {
		*why = "values option with no values";
		return -1;
	}
	if (RESERVE(d, ids3, n + 1) < 0 || RESERVE(d, u64, n + 1) < 0)
		return -2;
	TRY(get_field_refs(d, n, d->ids3, why));
	for (size_t i = 0; i < n; i++) {
		uint64_t code;

		GET_U(d, &code, "value");
		d->u64[i] = (uint64_t)zigzag_decode(code);
	}
	o->n_values = n;
	o->value_fields = d->ids3;
	o->values = d->u64;
	return 0;
}

/* The stored bytes stay in the payload, which outlives the event. */
static int get_array(struct codec_dec *d, struct ht_array_values *a,
		     const char **why)
{
	uint64_t type, bytes;
	unsigned width;

	GET_U(d, &type, "array type");
	width = ht_value_type_width((unsigned)type);
	if (type > HT_TYPE_LAST || width == 0) {
		*why = "array of no primitive type";
		return -1;
	}
	a->type = (uint8_t)type;
	GET_U(d, &a->length, "array length");
	GET_U(d, &a->stored, "array prefix");
	if (a->stored > a->length) {
		*why = "array prefix longer than the array";
		return -1;
	}
	if (a->stored > (uint64_t)(d->end - d->p) / width) {
		*why = "array prefix longer than the chunk";
		return -1;
	}
	bytes = a->stored * width;
	a->data = d->p;
	d->p += bytes;
	a->hash = 0;
	if (a->stored < a->length) {
		if (d->end - d->p < 8) {
			*why = "array hash cut off";
			return -1;
		}
		a->hash = get_le64(d->p);
		d->p += 8;
	}
	return 0;
}

static int get_object_references(struct codec_dec *d,
				 struct ht_ev_object_references *o,
				 const char **why)
{
	uint64_t opts;
	size_t n;
	ht_id prev;

	GET_U(d, &opts, "options");
	if (opts >> (OPT_OBJ_LAST_BIT + 1) ||
	    ((opts >> OPT_OBJ_RESULT_SHIFT) & 3) > HT_RESULT_ABORT) {
		*why = "unknown object_references options";
		return -1;
	}
	o->result = (enum ht_result)((opts >> OPT_OBJ_RESULT_SHIFT) & 3);
	TRY(get_delta(d, &d->base.object, &o->id, why));
	TRY(get_delta(d, &d->base.class_, &o->class_id, why));
	GET_U(d, &o->size, "size");
	TRY(get_u32(d, &o->flags, "bad object flags", why));
	o->has_generation = opts & OPT_OBJ_GENERATION;
	o->generation = 0;
	if (o->has_generation)
		TRY(get_u32(d, &o->generation, "bad generation", why));
	TRY(get_count_unwritten(d, 1, opts & OPT_OBJ_CLASS_REF ? 1 : 0,
				"references", &n, why));
	o->count = n;
	if (RESERVE(d, ids, n + 1) < 0)
		return -2;
	prev = o->id;
	if (opts & OPT_OBJ_CLASS_REF)
		d->ids[0] = o->class_id;
	for (size_t i = opts & OPT_OBJ_CLASS_REF ? 1 : 0; i < n; i++)
		TRY(get_ref(d, &prev, &d->ids[i], why));
	o->refs = d->ids;
	o->ref_flags = NULL;
	if (opts & OPT_OBJ_REF_FLAGS) {
		if (RESERVE(d, u32, n + 1) < 0)
			return -2;
		for (size_t i = 0; i < n; i++)
			TRY(get_u32(d, &d->u32[i], "bad reference flags", why));
		o->ref_flags = d->u32;
	}
	o->ref_fields = NULL;
	if (opts & OPT_OBJ_REF_FIELDS) {
		if (RESERVE(d, ids2, n + 1) < 0)
			return -2;
		TRY(get_field_refs(d, n, d->ids2, why));
		o->ref_fields = d->ids2;
	}
	o->n_values = 0;
	o->value_fields = NULL;
	o->values = NULL;
	if (opts & OPT_OBJ_VALUES)
		TRY(get_values(d, o, why));
	o->array = NULL;
	if (opts & OPT_OBJ_ARRAY) {
		TRY(get_array(d, &d->array, why));
		o->array = &d->array;
	}
	return 0;
}

/* Names are gathered in d->names and pointed at once all are in, as the
 * buffer may move while it grows. */
static int get_fields(struct codec_dec *d, struct ht_ev_fields *f,
		      const char **why)
{
	size_t n, used = 0;

	TRY(get_count(d, 4, "fields", &n, why));
	if (RESERVE(d, fields, n + 1) < 0)
		return -2;
	for (size_t i = 0; i < n; i++) {
		struct ht_field *x = &d->fields[i];
		const char *name;
		uint64_t opts;
		size_t len;

		TRY(get_delta(d, &d->base.field, &x->id, why));
		TRY(get_delta(d, &d->base.class_, &x->class_id, why));
		TRY(get_string(d, &name, why));
		GET_U(d, &opts, "field options");
		if (opts >> (FIELD_KIND_SHIFT + 9)) {
			*why = "unknown field options";
			return -1;
		}
		/* out-of-range kinds are kept: the state machine reports them */
		x->kind = (uint8_t)(opts >> FIELD_KIND_SHIFT);
		x->has_offset = opts & FIELD_HAS_OFFSET;
		x->offset = 0;
		if (x->has_offset)
			GET_U(d, &x->offset, "field offset");
		x->type = 0;
		if (opts & FIELD_HAS_TYPE) {
			uint64_t type;

			GET_U(d, &type, "field type");
			/* a number that is no type is kept for the state
			 * machine to report, as a kind is */
			x->type = type > UINT8_MAX ? UINT8_MAX : (uint8_t)type;
		}
		/* the name's offset in d->names, plus one (0: no name) */
		x->name = NULL;
		if (!name)
			continue;
		len = strlen(name) + 1;
		if (RESERVE(d, names, used + len) < 0)
			return -2;
		memcpy(d->names + used, name, len);
		x->name = (const char *)(uintptr_t)(used + 1);
		used += len;
	}
	for (size_t i = 0; i < n; i++)
		if (d->fields[i].name)
			d->fields[i].name =
				d->names + ((uintptr_t)d->fields[i].name - 1);
	f->count = n;
	f->fields = d->fields;
	return 0;
}

static int get_begin_container(struct codec_dec *d,
			       struct ht_ev_begin_container *c,
			       const char **why)
{
	uint64_t type;

	GET_U(d, &type, "container type");
	if (type > UINT32_MAX) {
		*why = "bad container type";
		return -1;
	}
	/* Out-of-range types are kept: the state machine reports them. */
	c->type = (enum ht_container_type)type;
	GET_U(d, &c->id1, "container id1");
	GET_U(d, &c->id2, "container id2");
	return 0;
}

int codec_get_event(struct codec_dec *d, struct ht_event *ev, const char **why)
{
	uint64_t opts = 0;
	uint8_t type;

	if (d->p >= d->end)
		return 0;
	type = *d->p++;
	memset(ev, 0, sizeof(*ev));
	/* an unknown type with the time bit stays unknown (default below) */
	if ((type & CODEC_TIMED) && (type & ~CODEC_TIMED) >= HT_EV_FIRST &&
	    (type & ~CODEC_TIMED) <= HT_EV_LAST) {
		type &= (uint8_t)~CODEC_TIMED;
		if (!ht_event_timed_type((enum ht_event_type)type)) {
			d->p--;
			*why = "a time on an event that has none";
			return -1;
		}
		TRY(get_time(d, ev, why));
	}
	/* likewise an unknown type with the extended bit */
	if ((type & CODEC_EXTENDED) &&
	    ((type & ~CODEC_EXTENDED) == HT_EV_OBJECT_ALLOCATED ||
	     (type & ~CODEC_EXTENDED) == HT_EV_METHOD)) {
		type &= (uint8_t)~CODEC_EXTENDED;
		GET_U(d, &opts, "options");
	}
	ev->type = (enum ht_event_type)type;
	switch (type) {
	case HT_EV_CLASS:
		TRY(get_class(d, &ev->u.class_, why));
		return 1;
	case HT_EV_THREAD:
		TRY(get_named(d, &ev->u.thread, why));
		return 1;
	case HT_EV_METHOD:
		TRY(get_method(d, &ev->u.method, opts, why));
		return 1;
	case HT_EV_OBJECT_ALLOCATED:
		TRY(get_object_allocated(d, &ev->u.object_allocated, opts,
					 why));
		return 1;
	case HT_EV_STACK:
		TRY(get_stack(d, &ev->u.stack, why));
		return 1;
	case HT_EV_GC_STARTED:
		TRY(get_gc_started(d, &ev->u.gc_started, why));
		return 1;
	case HT_EV_GENERATION_BOUNDS:
		TRY(get_generation_bounds(d, &ev->u.generation_bounds, why));
		return 1;
	case HT_EV_MOVED_REFERENCES:
		TRY(get_moved(d, &ev->u.moved_references, why));
		return 1;
	case HT_EV_SURVIVING_REFERENCES:
		TRY(get_surviving(d, &ev->u.surviving_references, why));
		return 1;
	case HT_EV_GC_FINISHED:
		return 1;
	case HT_EV_BEGIN_CONTAINER:
		TRY(get_begin_container(d, &ev->u.begin_container, why));
		return 1;
	case HT_EV_ROOT_REFERENCES:
		TRY(get_root_references(d, &ev->u.root_references, why));
		return 1;
	case HT_EV_OBJECT_REFERENCES:
		TRY(get_object_references(d, &ev->u.object_references, why));
		return 1;
	case HT_EV_FIELDS:
		TRY(get_fields(d, &ev->u.fields, why));
		return 1;
	default:
		d->p--;
		*why = "unknown event type";
		return -1;
	}
}

/* ---- file header payload ------------------------------------------------- */

#define HDR_REPORTS_SURVIVORS 0x1u
#define HDR_START_TIME 0x2u

uint8_t *codec_put_header(const struct ht_header *h, size_t *len)
{
	struct codec_enc e;
	size_t bound = 8 * VARINT_MAX + string_bound(h->runtime) +
		       string_bound(h->runtime_version) +
		       string_bound(h->command_line);
	uint8_t *buf;
	unsigned flags = 0;

	for (size_t i = 0; i < h->n_metadata; i++)
		bound += string_bound(h->metadata[i].key) +
			 string_bound(h->metadata[i].value);
	buf = malloc(bound);
	if (!buf)
		return NULL;
	codec_enc_init(&e, buf, bound);
	if (h->reports_survivors)
		flags |= HDR_REPORTS_SURVIVORS;
	if (h->has_start_time)
		flags |= HDR_START_TIME;
	put_string(&e, h->runtime);
	put_string(&e, h->runtime_version);
	put_u(&e, h->pointer_size);
	put_u(&e, flags);
	put_string(&e, h->command_line);
	if (h->has_start_time)
		put_u(&e, zigzag_encode(h->start_time));
	put_u(&e, h->n_metadata);
	for (size_t i = 0; i < h->n_metadata; i++) {
		put_string(&e, h->metadata[i].key);
		put_string(&e, h->metadata[i].value);
	}
	*len = codec_enc_used(&e);
	return buf;
}

/* Strings of the header are copied into one arena allocated up front: its
 * size is bounded by the payload's length. */
struct arena {
	char *p;
	char *end;
};

static int arena_string(struct codec_dec *d, struct arena *a,
			const char **out, const char **why)
{
	const char *s;

	TRY(get_string(d, &s, why));
	if (!s) {
		*out = NULL;
		return 0;
	}
	size_t n = strlen(s) + 1;
	if ((size_t)(a->end - a->p) < n) {
		*why = "header strings overflow";
		return -1;
	}
	memcpy(a->p, s, n);
	*out = a->p;
	a->p += n;
	return 0;
}

static int parse_header(struct codec_dec *d, struct ht_header *h,
			struct ht_metadata *meta, struct arena *a,
			const char **why)
{
	uint64_t v, flags;
	size_t n_meta;

	TRY(arena_string(d, a, &h->runtime, why));
	TRY(arena_string(d, a, &h->runtime_version, why));
	GET_U(d, &v, "pointer size");
	if (v != 4 && v != 8) {
		*why = "pointer size is neither 4 nor 8";
		return -1;
	}
	h->pointer_size = (uint32_t)v;
	GET_U(d, &flags, "header flags");
	h->reports_survivors = flags & HDR_REPORTS_SURVIVORS;
	h->has_start_time = flags & HDR_START_TIME;
	TRY(arena_string(d, a, &h->command_line, why));
	if (h->has_start_time) {
		GET_U(d, &v, "start time");
		h->start_time = zigzag_decode(v);
	}
	TRY(get_count(d, 2, "metadata entries", &n_meta, why));
	for (size_t i = 0; i < n_meta; i++) {
		TRY(arena_string(d, a, &meta[i].key, why));
		TRY(arena_string(d, a, &meta[i].value, why));
		if (!meta[i].key || !meta[i].value) {
			*why = "metadata key or value missing";
			return -1;
		}
	}
	h->n_metadata = n_meta;
	h->metadata = meta;
	if (d->p != d->end) {
		*why = "bytes after the header fields";
		return -1;
	}
	return 0;
}

int codec_get_header(const uint8_t *buf, size_t len, struct ht_header *h,
		     void **store, const char **why)
{
	struct codec_dec d;
	struct ht_metadata *meta;
	struct arena a;
	/* at most len/2 metadata pairs; strings total at most len bytes plus
	 * a NUL each */
	size_t meta_bytes = (len / 2 + 1) * sizeof(*meta);
	char *block = malloc(meta_bytes + 2 * len + 8);
	int rc;

	memset(h, 0, sizeof(*h));
	*store = NULL;
	if (!block) {
		*why = "out of memory";
		return -2;
	}
	meta = (struct ht_metadata *)block;
	a.p = block + meta_bytes;
	a.end = a.p + 2 * len + 8;
	codec_dec_init(&d);
	codec_dec_reset(&d, buf, len);
	d.what = "file header";
	rc = parse_header(&d, h, meta, &a, why);
	codec_dec_free(&d);
	if (rc < 0) {
		if (rc == -2)
			*why = "out of memory";
		free(block);
		memset(h, 0, sizeof(*h));
		return rc;
	}
	h->version = HT_FORMAT_VERSION;
	*store = block;
	return 0;
}
