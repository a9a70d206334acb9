/*
 * htbuild.c - the test-only .ht builder (see htbuild.h). The layout is
 * written here from format.h on purpose, not borrowed from writer.c: two
 * implementations that agree are the check that the layout is what
 * format.h says.
 */
#include "htbuild.h"

#include <criterion/criterion.h>

#include "lib/common/codec.h"
#include "lib/common/format.h"
#include "lib/read/source.h"
#include "lib/common/varint.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define GROW(arr, n, cap)                                                \
	do {                                                             \
		if ((n) == (cap)) {                                      \
			(cap) = (cap) ? 2 * (cap) : 16;                  \
			(arr) = realloc((arr), (cap) * sizeof(*(arr)));  \
			if (!(arr))                                      \
				abort();                                 \
		}                                                        \
	} while (0)

void htb_append(struct htb *b, const void *bytes, size_t n)
{
	if (b->len + n > b->cap) {
		while (b->len + n > b->cap)
			b->cap = b->cap ? 2 * b->cap : 4096;
		b->data = realloc(b->data, b->cap);
		if (!b->data)
			abort();
	}
	memcpy(b->data + b->len, bytes, n);
	b->len += n;
}

static void append_le32(struct htb *b, uint32_t v)
{
	uint8_t p[4];

	put_le32(p, v);
	htb_append(b, p, 4);
}

void htb_start_version(struct htb *b, const struct ht_header *h,
		       uint32_t version)
{
	size_t len;
	uint8_t *payload = codec_put_header(h, &len);

	if (!payload)
		abort();
	memset(b, 0, sizeof(*b));
	htb_append(b, HT_MAGIC, HT_MAGIC_LEN);
	append_le32(b, version);
	append_le32(b, (uint32_t)len);
	htb_append(b, payload, len);
	/* the CRC covers every byte before it */
	append_le32(b, (uint32_t)crc32(0, b->data, (uInt)b->len));
	b->header_end = b->len;
	free(payload);
}

void htb_start(struct htb *b, const struct ht_header *h)
{
	htb_start_version(b, h, HT_FORMAT_VERSION);
}

uint8_t *htb_compress(const void *raw, size_t len, size_t *stored_len)
{
	uLongf n = compressBound((uLong)len);
	uint8_t *stored = malloc(n);

	if (!stored || compress2(stored, &n, raw, (uLong)len,
				 Z_BEST_COMPRESSION) != Z_OK)
		abort();
	*stored_len = n;
	return stored;
}

void htb_chunk_as_is(struct htb *b, const struct ht_chunk_header *h,
		     const void *stored, size_t stored_len)
{
	uint8_t header[HT_CHUNK_HEADER_SIZE];

	chunk_header_put(header, h);
	htb_append(b, header, sizeof(header));
	htb_append(b, stored, stored_len);
}

static void append_chunk(struct htb *b, uint8_t kind, const uint8_t *raw,
			 size_t raw_len, uint64_t first_event, uint32_t events)
{
	struct ht_chunk_header h;
	size_t stored_len;
	uint8_t *stored = htb_compress(raw, raw_len, &stored_len);

	memset(&h, 0, sizeof(h));
	h.kind = kind;
	h.compression = HT_COMPRESS_ZLIB;
	h.stored_length = (uint32_t)stored_len;
	h.raw_length = (uint32_t)raw_len;
	h.first_event = first_event;
	h.events = events;
	h.payload_crc = (uint32_t)crc32(0, stored, (uInt)stored_len);
	htb_chunk_as_is(b, &h, stored, stored_len);
	free(stored);
}

void htb_raw_chunk(struct htb *b, uint8_t kind, const void *payload,
		   size_t len, uint64_t first_event, uint32_t events)
{
	append_chunk(b, kind, payload, len, first_event, events);
}

static void add_entry(struct htb *b, unsigned kind, uint64_t event,
		      uint64_t offset)
{
	GROW(b->entries, b->n_entries, b->entries_cap);
	b->entries[b->n_entries++] = (struct htb_entry){ kind, event, offset };
	if (kind == HT_INDEX_DUMP)
		b->dumps++;
	else
		b->gcs++;
}

static void note_event(struct htb *b, const struct ht_event *ev,
		       uint64_t chunk_offset, uint64_t payload_offset)
{
	if (b->n_events == b->events_cap) {
		b->events_cap = b->events_cap ? 2 * b->events_cap : 64;
		b->events = realloc(b->events,
				    b->events_cap * sizeof(*b->events));
		b->payload_offsets = realloc(b->payload_offsets,
				b->events_cap * sizeof(*b->payload_offsets));
		if (!b->events || !b->payload_offsets)
			abort();
	}
	if (ev->type == HT_EV_BEGIN_CONTAINER &&
	    ev->u.begin_container.type == HT_C_BEGIN)
		add_entry(b, HT_INDEX_DUMP, b->n_events, chunk_offset);
	if (ev->type == HT_EV_GC_STARTED)
		add_entry(b, HT_INDEX_GC, b->n_events, chunk_offset);
	b->events[b->n_events] = *ev;
	b->payload_offsets[b->n_events] = payload_offset;
	b->n_events++;
}

void htb_chunk(struct htb *b, const struct ht_event *evs, size_t n)
{
	struct codec_enc e;
	size_t bound = 0;
	uint8_t *raw;
	uint64_t offset = b->len, first = b->n_events;

	for (size_t i = 0; i < n; i++)
		bound += codec_event_bound(&evs[i]);
	raw = malloc(bound + 1);
	if (!raw)
		abort();
	codec_enc_init(&e, raw, bound);
	for (size_t i = 0; i < n; i++) {
		note_event(b, &evs[i], offset, codec_enc_used(&e));
		codec_put_event(&e, &evs[i]);
	}
	append_chunk(b, HT_CHUNK_EVENTS, raw, codec_enc_used(&e), first,
		     (uint32_t)n);
	free(raw);
	GROW(b->chunks, b->n_chunks, b->chunks_cap);
	b->chunks[b->n_chunks++] = (struct htb_chunk){
		offset, b->len, first, (uint32_t)n };
}

static uint8_t *index_payload(const struct htb *b, size_t *len)
{
	size_t cap = (b->n_entries * 3 + 64 + 2 * 32) * VARINT_MAX;
	uint8_t *buf = malloc(cap), *p = buf;
	uint64_t prev_event = 0, prev_offset = 0;
	size_t n_violations = 0;

	if (!buf)
		abort();
	p = varint_put(p, b->n_entries);
	for (size_t i = 0; i < b->n_entries; i++) {
		const struct htb_entry *en = &b->entries[i];

		p = varint_put(p, en->kind);
		p = varint_put(p, en->event - prev_event);
		p = varint_put(p, en->offset - prev_offset);
		prev_event = en->event;
		prev_offset = en->offset;
	}
	p = varint_put(p, b->n_events);
	p = varint_put(p, b->dumps);
	p = varint_put(p, b->gcs);
	p = varint_put(p, b->n_chunks);
	for (unsigned c = 0; c < 32; c++)
		n_violations += b->violations[c] != 0;
	p = varint_put(p, n_violations);
	for (unsigned c = 0; c < 32; c++) {
		if (!b->violations[c])
			continue;
		p = varint_put(p, c);
		p = varint_put(p, b->violations[c]);
	}
	p = varint_put(p, b->dropped_events);
	*len = (size_t)(p - buf);
	return buf;
}

void htb_index_chunk(struct htb *b)
{
	size_t len;
	uint8_t *payload = index_payload(b, &len);

	b->index_offset = b->len;
	/* The index chunk's first_event is the event count: where the next
	 * event chunk would have started. It holds no events. */
	append_chunk(b, HT_CHUNK_INDEX, payload, len, b->n_events, 0);
	b->index_end = b->len;
	free(payload);
}

void htb_trailer(struct htb *b)
{
	uint8_t t[HT_TRAILER_SIZE];

	put_le64(t, b->index_offset);
	put_le32(t + 8, (uint32_t)crc32(0, t, 8));
	memcpy(t + 12, HT_TRAILER_MAGIC, 4);
	htb_append(b, t, sizeof(t));
}

void htb_finish(struct htb *b)
{
	htb_index_chunk(b);
	htb_trailer(b);
}

void htb_free(struct htb *b)
{
	free(b->data);
	free(b->events);
	free(b->payload_offsets);
	free(b->chunks);
	free(b->entries);
	memset(b, 0, sizeof(*b));
}

/* ---- comparing events ------------------------------------------------- */

static char diff_text[256];

static bool same_string(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* A required array: only its elements count (a decoder may give an empty
 * array where the original had NULL). */
static bool same_elems(const void *a, const void *b, size_t n, size_t elem)
{
	return n == 0 || memcmp(a, b, n * elem) == 0;
}

/* An optional array: both absent, or both present and equal. */
static bool same_array(const void *a, const void *b, size_t n, size_t elem)
{
	if (!a || !b)
		return a == b;
	return n == 0 || memcmp(a, b, n * elem) == 0;
}

static bool same_ranges(const struct ht_ev_generation_bounds *a,
			const struct ht_ev_generation_bounds *b)
{
	if (a->count != b->count)
		return false;
	for (size_t i = 0; i < a->count; i++) {
		const struct ht_generation_range *x = &a->ranges[i];
		const struct ht_generation_range *y = &b->ranges[i];

		if (x->generation != y->generation || x->start != y->start ||
		    x->length != y->length || x->reserved != y->reserved)
			return false;
	}
	return true;
}

static bool same_moved(const struct ht_ev_moved_references *a,
		       const struct ht_ev_moved_references *b)
{
	if (a->count != b->count)
		return false;
	for (size_t i = 0; i < a->count; i++)
		if (a->blocks[i].old_id != b->blocks[i].old_id ||
		    a->blocks[i].new_id != b->blocks[i].new_id ||
		    a->blocks[i].length != b->blocks[i].length)
			return false;
	return true;
}

static bool same_surviving(const struct ht_ev_surviving_references *a,
			   const struct ht_ev_surviving_references *b)
{
	if (a->count != b->count)
		return false;
	for (size_t i = 0; i < a->count; i++)
		if (a->blocks[i].start != b->blocks[i].start ||
		    a->blocks[i].length != b->blocks[i].length)
			return false;
	return true;
}

static bool same_roots(const struct ht_ev_root_references *a,
		       const struct ht_ev_root_references *b)
{
	size_t n = a->count;

	return a->count == b->count && a->result == b->result &&
	       same_elems(a->refs, b->refs, n, sizeof(*a->refs)) &&
	       same_elems(a->flags, b->flags, n, sizeof(*a->flags)) &&
	       same_array(a->kinds, b->kinds, n, sizeof(*a->kinds)) &&
	       same_array(a->root_flags, b->root_flags, n,
			  sizeof(*a->root_flags)) &&
	       same_array(a->root_ids, b->root_ids, n, sizeof(*a->root_ids)) &&
	       same_array(a->root_fields, b->root_fields, n,
			  sizeof(*a->root_fields));
}

/* An array's contents: type, length, the stored prefix and the hash. */
static bool same_contents(const struct ht_array_values *a,
			  const struct ht_array_values *b)
{
	if (!a || !b)
		return a == b;
	return a->type == b->type && a->length == b->length &&
	       a->stored == b->stored && a->hash == b->hash &&
	       same_elems(a->data, b->data, a->stored,
			  ht_value_type_width(a->type));
}

static bool same_object(const struct ht_ev_object_references *a,
			const struct ht_ev_object_references *b)
{
	size_t n = a->count;

	return a->id == b->id && a->class_id == b->class_id &&
	       a->size == b->size && a->flags == b->flags &&
	       a->count == b->count && a->result == b->result &&
	       a->has_generation == b->has_generation &&
	       (!a->has_generation || a->generation == b->generation) &&
	       same_elems(a->refs, b->refs, n, sizeof(*a->refs)) &&
	       same_array(a->ref_flags, b->ref_flags, n,
			  sizeof(*a->ref_flags)) &&
	       same_array(a->ref_fields, b->ref_fields, n,
			  sizeof(*a->ref_fields)) &&
	       a->n_values == b->n_values &&
	       same_elems(a->value_fields, b->value_fields, a->n_values,
			  sizeof(*a->value_fields)) &&
	       same_elems(a->values, b->values, a->n_values,
			  sizeof(*a->values)) &&
	       same_contents(a->array, b->array);
}

static bool same_fields(const struct ht_ev_fields *a,
			const struct ht_ev_fields *b)
{
	if (a->count != b->count)
		return false;
	for (size_t i = 0; i < a->count; i++) {
		const struct ht_field *x = &a->fields[i], *y = &b->fields[i];

		if (x->id != y->id || x->class_id != y->class_id ||
		    !same_string(x->name, y->name) || x->kind != y->kind ||
		    x->type != y->type ||
		    x->has_offset != y->has_offset ||
		    (x->has_offset && x->offset != y->offset))
			return false;
	}
	return true;
}

bool htb_event_equal(const struct ht_event *a, const struct ht_event *b)
{
	if (a->type != b->type || a->has_time != b->has_time ||
	    (a->has_time && a->time != b->time))
		return false;
	switch (a->type) {
	case HT_EV_CLASS:
		return a->u.class_.id == b->u.class_.id &&
		       same_string(a->u.class_.name, b->u.class_.name) &&
		       a->u.class_.has_size == b->u.class_.has_size &&
		       (!a->u.class_.has_size ||
			a->u.class_.size == b->u.class_.size);
	case HT_EV_THREAD:
		return a->u.thread.id == b->u.thread.id &&
		       same_string(a->u.thread.name, b->u.thread.name);
	case HT_EV_METHOD:
		return a->u.method.id == b->u.method.id &&
		       same_string(a->u.method.name, b->u.method.name) &&
		       same_string(a->u.method.file, b->u.method.file) &&
		       a->u.method.line == b->u.method.line;
	case HT_EV_OBJECT_ALLOCATED:
		return a->u.object_allocated.id == b->u.object_allocated.id &&
		       a->u.object_allocated.class_id ==
			       b->u.object_allocated.class_id &&
		       a->u.object_allocated.size ==
			       b->u.object_allocated.size &&
		       a->u.object_allocated.stack ==
			       b->u.object_allocated.stack;
	case HT_EV_STACK:
		return a->u.stack.id == b->u.stack.id &&
		       a->u.stack.count == b->u.stack.count &&
		       (a->u.stack.count == 0 ||
			memcmp(a->u.stack.frames, b->u.stack.frames,
			       a->u.stack.count * sizeof(ht_id)) == 0);
	case HT_EV_GC_STARTED:
		return a->u.gc_started.has_gc == b->u.gc_started.has_gc &&
		       (!a->u.gc_started.has_gc ||
			a->u.gc_started.gc == b->u.gc_started.gc) &&
		       a->u.gc_started.generations ==
			       b->u.gc_started.generations &&
		       a->u.gc_started.reason == b->u.gc_started.reason;
	case HT_EV_GENERATION_BOUNDS:
		return same_ranges(&a->u.generation_bounds,
				   &b->u.generation_bounds);
	case HT_EV_MOVED_REFERENCES:
		return same_moved(&a->u.moved_references,
				  &b->u.moved_references);
	case HT_EV_SURVIVING_REFERENCES:
		return same_surviving(&a->u.surviving_references,
				      &b->u.surviving_references);
	case HT_EV_GC_FINISHED:
		return true;
	case HT_EV_BEGIN_CONTAINER:
		return a->u.begin_container.type == b->u.begin_container.type &&
		       a->u.begin_container.id1 == b->u.begin_container.id1 &&
		       a->u.begin_container.id2 == b->u.begin_container.id2;
	case HT_EV_ROOT_REFERENCES:
		return same_roots(&a->u.root_references,
				  &b->u.root_references);
	case HT_EV_OBJECT_REFERENCES:
		return same_object(&a->u.object_references,
				   &b->u.object_references);
	case HT_EV_FIELDS:
		return same_fields(&a->u.fields, &b->u.fields);
	}
	return false;
}

const char *htb_event_diff(const struct ht_event *a, const struct ht_event *b)
{
	if (a->type != b->type)
		snprintf(diff_text, sizeof(diff_text), "types %s and %s",
			 ht_event_name(a->type) ? ht_event_name(a->type) : "?",
			 ht_event_name(b->type) ? ht_event_name(b->type) : "?");
	else if (!htb_event_equal(a, b))
		snprintf(diff_text, sizeof(diff_text), "two %s events differ",
			 ht_event_name(a->type) ? ht_event_name(a->type) : "?");
	else
		snprintf(diff_text, sizeof(diff_text), "equal");
	return diff_text;
}

/* ---- the sample trace ------------------------------------------------- */

#define EV(t, member, ...) \
	{ .type = (t), .u.member = { __VA_ARGS__ } }

static const struct ht_metadata sample_meta[] = {
	{ "host", "build-7" },
	{ "gc_mode", "server" },
};

static const struct ht_header sample_header = {
	.version = HT_FORMAT_VERSION,
	.runtime = "clr",
	.runtime_version = "8.0.1",
	.pointer_size = 8,
	.reports_survivors = true,
	.command_line = "dotnet app.dll --serve",
	.has_start_time = true,
	.start_time = 1700000000,
	.n_metadata = 2,
	.metadata = sample_meta,
};

const struct ht_header *htb_sample_header(void)
{
	return &sample_header;
}

static const struct ht_event setup[] = {
	EV(HT_EV_CLASS, class_, .id = 0x100, .name = "System.Object",
	   .has_size = true, .size = 24),
	EV(HT_EV_CLASS, class_, .id = 0x108, .name = "System.String"),
	EV(HT_EV_CLASS, class_, .id = 0x110, .name = NULL, .has_size = true,
	   .size = 0),
	EV(HT_EV_THREAD, thread, .id = 7, .name = "main"),
	EV(HT_EV_METHOD, method, .id = 0x5000, .name = "Program.Main"),
	EV(HT_EV_OBJECT_ALLOCATED, object_allocated, .id = 0x10000,
	   .class_id = 0x100, .size = 24),
	EV(HT_EV_OBJECT_ALLOCATED, object_allocated, .id = 0x10018,
	   .class_id = 0x108, .size = 40),
};

static const ht_id dump0_roots[] = { 0x10000, 0x10018 };
static const uint32_t dump0_root_flags[] = { 0, 0 };
static const ht_id dump0_frame_roots[] = { 0x10018 };
static const uint32_t dump0_frame_flags[] = { HT_OBJ_ALREADY_REPORTED };
static const ht_id obj0_refs[] = { 0x10018, 0, 0x10000 };
static const uint32_t obj0_ref_flags[] = { 0, 0, HT_OBJ_ALREADY_VISITED };

static const struct ht_event dump0[] = {
	EV(HT_EV_BEGIN_CONTAINER, begin_container, .type = HT_C_BEGIN),
	EV(HT_EV_BEGIN_CONTAINER, begin_container, .type = HT_C_RT_THREAD,
	   .id1 = 7),
	EV(HT_EV_ROOT_REFERENCES, root_references, .count = 2,
	   .refs = dump0_roots, .flags = dump0_root_flags),
	EV(HT_EV_BEGIN_CONTAINER, begin_container, .type = HT_C_RT_JIT,
	   .id1 = 0x5000, .id2 = 0x7fff0000),
	EV(HT_EV_ROOT_REFERENCES, root_references, .count = 1,
	   .refs = dump0_frame_roots, .flags = dump0_frame_flags),
	EV(HT_EV_BEGIN_CONTAINER, begin_container, .type = HT_C_HEAP),
	EV(HT_EV_OBJECT_REFERENCES, object_references, .id = 0x10000,
	   .class_id = 0x100, .size = 24, .count = 3, .refs = obj0_refs,
	   .ref_flags = obj0_ref_flags, .has_generation = true,
	   .generation = 0),
	EV(HT_EV_OBJECT_REFERENCES, object_references, .id = 0x10018,
	   .class_id = 0x108, .size = 40, .flags = HT_OBJ_MORE_REFERENCES),
	EV(HT_EV_OBJECT_REFERENCES, object_references, .id = 0x10018,
	   .class_id = 0x108, .size = 40, .result = HT_RESULT_POSTPONE),
	EV(HT_EV_BEGIN_CONTAINER, begin_container, .type = HT_C_END),
};

static const struct ht_generation_range gc0_bounds_start[] = {
	{ 0, 0x10000, 0x40, 0x10000 },
	{ 1, 0x20000, 0, 0x10000 },
	{ 2, 0x30000, 0x800, 0x100000 },
	{ HT_GEN_LOH, 0x7f0000000000, 0x100000, 0x1000000 },
};
static const struct ht_moved_block gc0_moved[] = {
	{ 0x10000, 0x20000, 0x18 },
	{ 0x10018, 0x20018, 0x28 },
	{ 0x30800, 0x30000, 0x100 }, /* moving down */
};
static const struct ht_surviving_block gc0_surviving[] = {
	{ 0x7f0000000000, 0x100000 },
};
static const ht_id gc0_roots[] = { 0x20000, 0x20018, 0 };
static const uint32_t gc0_root_flags[] = { 0, 0, 0 };
static const uint8_t gc0_kinds[] = { HT_ROOT_STACK, HT_ROOT_HANDLE,
				     HT_ROOT_FINALIZER };
static const uint8_t gc0_root_bits[] = { 0, HT_ROOT_WEAK | HT_ROOT_PINNING,
					 HT_ROOT_INTERIOR };
static const ht_id gc0_root_ids[] = { 0x7ffe0010, 0x12345678, 0 };
static const ht_id gc0_obj_refs[] = { 0x20018 };
static const struct ht_generation_range gc0_bounds_end[] = {
	{ 0, 0x10000, 0, 0x10000 },
	{ 1, 0x20000, 0x40, 0x10000 },
};

static const struct ht_event gc0[] = {
	EV(HT_EV_GC_STARTED, gc_started, .has_gc = true, .gc = 1,
	   .generations = 0x1, .reason = HT_GC_INDUCED),
	EV(HT_EV_GENERATION_BOUNDS, generation_bounds, .count = 4,
	   .ranges = gc0_bounds_start),
	EV(HT_EV_MOVED_REFERENCES, moved_references, .count = 3,
	   .blocks = gc0_moved),
	EV(HT_EV_SURVIVING_REFERENCES, surviving_references, .count = 1,
	   .blocks = gc0_surviving),
	EV(HT_EV_ROOT_REFERENCES, root_references, .count = 3,
	   .refs = gc0_roots, .flags = gc0_root_flags, .kinds = gc0_kinds,
	   .root_flags = gc0_root_bits, .root_ids = gc0_root_ids),
	EV(HT_EV_OBJECT_REFERENCES, object_references, .id = 0x20000,
	   .class_id = 0x100, .size = 24, .count = 1, .refs = gc0_obj_refs,
	   .has_generation = true, .generation = 1),
	EV(HT_EV_GENERATION_BOUNDS, generation_bounds, .count = 2,
	   .ranges = gc0_bounds_end),
	{ .type = HT_EV_GC_FINISHED },
};

#define DUMP1_OBJECTS 24
static ht_id dump1_roots[DUMP1_OBJECTS];
static uint32_t dump1_root_flags[DUMP1_OBJECTS];
static ht_id dump1_refs[DUMP1_OBJECTS][3];
static struct ht_event dump1[DUMP1_OBJECTS + 5];

/* A heap of objects each pointing at its neighbours, a null and itself. */
static size_t build_dump1(void)
{
	size_t n = 0;

	dump1[n++] = (struct ht_event)EV(HT_EV_BEGIN_CONTAINER,
			begin_container, .type = HT_C_BEGIN);
	dump1[n++] = (struct ht_event)EV(HT_EV_BEGIN_CONTAINER,
			begin_container, .type = HT_C_RT_THREAD, .id1 = 7);
	for (size_t i = 0; i < DUMP1_OBJECTS; i++)
		dump1_roots[i] = 0x20000 + 0x30 * i;
	dump1[n++] = (struct ht_event)EV(HT_EV_ROOT_REFERENCES,
			root_references, .count = DUMP1_OBJECTS / 2,
			.refs = dump1_roots, .flags = dump1_root_flags);
	dump1[n++] = (struct ht_event)EV(HT_EV_BEGIN_CONTAINER,
			begin_container, .type = HT_C_HEAP);
	for (size_t i = 0; i < DUMP1_OBJECTS; i++) {
		dump1_refs[i][0] = dump1_roots[(i + 1) % DUMP1_OBJECTS];
		dump1_refs[i][1] = 0;
		dump1_refs[i][2] = dump1_roots[i];
		dump1[n++] = (struct ht_event)EV(HT_EV_OBJECT_REFERENCES,
				object_references, .id = dump1_roots[i],
				.class_id = i % 3 ? 0x100 : 0x108,
				.size = 0x30, .count = 3, .refs = dump1_refs[i]);
	}
	dump1[n++] = (struct ht_event)EV(HT_EV_BEGIN_CONTAINER,
			begin_container, .type = HT_C_END);
	return n;
}

static const struct ht_moved_block gc1_moved[] = {
	{ 0x20000, 0x7f0000100000, 0x480 },
	{ 0xffffffffffff0000, 0x10, 0x10 }, /* a shift near the limits */
};

static const struct ht_event gc1[] = {
	EV(HT_EV_GC_STARTED, gc_started, .generations = 0x7),
	EV(HT_EV_MOVED_REFERENCES, moved_references, .count = 2,
	   .blocks = gc1_moved),
	EV(HT_EV_SURVIVING_REFERENCES, surviving_references, .count = 0),
	{ .type = HT_EV_GC_FINISHED },
};

static const ht_id dump2_roots[] = { 0x7f0000100000 };
static const uint32_t dump2_root_flags[] = { 0 };

static const struct ht_event dump2[] = {
	EV(HT_EV_BEGIN_CONTAINER, begin_container, .type = HT_C_BEGIN),
	EV(HT_EV_BEGIN_CONTAINER, begin_container, .type = HT_C_RT_THREAD,
	   .id1 = 7),
	EV(HT_EV_ROOT_REFERENCES, root_references, .count = 1,
	   .refs = dump2_roots, .flags = dump2_root_flags,
	   .result = HT_RESULT_ABORT),
	EV(HT_EV_BEGIN_CONTAINER, begin_container, .type = HT_C_END),
};

void htb_sample(struct htb *b, bool with_index)
{
	size_t n_dump1 = build_dump1();

	htb_start(b, &sample_header);
	htb_chunk(b, setup, ARRAY_SIZE(setup));
	htb_chunk(b, dump0, ARRAY_SIZE(dump0));
	htb_chunk(b, gc0, ARRAY_SIZE(gc0));
	htb_chunk(b, dump1, n_dump1);
	htb_chunk(b, gc1, ARRAY_SIZE(gc1));
	htb_chunk(b, dump2, ARRAY_SIZE(dump2));
	b->violations[HT_V_CONTINUATION_MISSING] = 2;
	b->violations[HT_V_GC_NESTED] = 1;
	b->dropped_events = 5;
	if (with_index)
		htb_finish(b);
}

/* ---- opening bytes ------------------------------------------------------ */

bool htb_read_ahead;

static struct ht_reader *open_stream(FILE *f, struct ht_error *err)
{
	struct ht_reader *r = calloc(1, sizeof(*r));

	if (!r || !(r->path = strdup("test.ht")))
		abort();
	r->options.read_ahead = htb_read_ahead;
	if (binary_source_open(r, f, r->path, err) < 0) {
		free(r->path);
		free(r);
		return NULL;
	}
	return r;
}

struct ht_reader *htb_open_memory(const void *data, size_t len,
				  struct ht_error *err)
{
	/* fmemopen may refuse an empty buffer; /dev/null is empty and seeks */
	FILE *f = len ? fmemopen((void *)(uintptr_t)data, len, "rb")
		      : fopen("/dev/null", "rb");

	if (!f)
		abort();
	return open_stream(f, err);
}

struct ht_reader *htb_open_pipe(const void *data, size_t len, pid_t *child,
				struct ht_error *err)
{
	int fds[2];
	FILE *f;

	if (pipe(fds) < 0)
		abort();
	*child = fork();
	if (*child < 0)
		abort();
	if (*child == 0) {
		const uint8_t *p = data;

		close(fds[0]);
		while (len > 0) {
			ssize_t n = write(fds[1], p, len);

			if (n <= 0)
				_exit(1);
			p += n;
			len -= (size_t)n;
		}
		_exit(0);
	}
	close(fds[1]);
	f = fdopen(fds[0], "rb");
	if (!f)
		abort();
	return open_stream(f, err);
}

struct ht_error htb_read_error(const struct htb *b)
{
	struct ht_error err;
	struct ht_event ev;
	struct ht_reader *r = htb_open_memory(b->data, b->len, &err);
	int rc;

	cr_assert_not_null(r, "%s", err.message);
	while ((rc = ht_reader_next(r, &ev, &err)) == 1)
		;
	cr_assert_eq(rc, -1, "read to its end without error");
	ht_reader_close(r);
	return err;
}

/* ---- Events written by hand --------------------------------------------- */

struct ht_event *htb_ev_add(struct htb_events *l, enum ht_event_type type)
{
	struct ht_event *ev;

	cr_assert_eq(ALLOC_GROW(l->ev, l->n + 1, l->cap), 0);
	ev = &l->ev[l->n++];
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	return ev;
}

const void *htb_ev_keep(struct htb_events *l, const void *items, size_t n,
			size_t size)
{
	void *copy = alloc_array(n ? n : 1, size);

	cr_assert_not_null(copy);
	cr_assert_eq(ALLOC_GROW(l->copies, l->n_copies + 1, l->copies_cap), 0);
	l->copies[l->n_copies++] = copy;
	if (n)
		memcpy(copy, items, n * size);
	return copy;
}

void htb_ev_reset(struct htb_events *l)
{
	l->n = 0;
}

void htb_ev_free(struct htb_events *l)
{
	for (size_t i = 0; i < l->n_copies; i++)
		free(l->copies[i]);
	free(l->copies);
	free(l->ev);
	memset(l, 0, sizeof(*l));
}

void htb_ev_class(struct htb_events *l, ht_id id, const char *name)
{
	struct ht_event *ev = htb_ev_add(l, HT_EV_CLASS);

	ev->u.class_.id = id;
	ev->u.class_.name = name;
}

void htb_ev_thread(struct htb_events *l, ht_id id, const char *name)
{
	struct ht_event *ev = htb_ev_add(l, HT_EV_THREAD);

	ev->u.thread.id = id;
	ev->u.thread.name = name;
}

void htb_ev_container(struct htb_events *l, enum ht_container_type type,
		      ht_id id1, ht_id id2)
{
	struct ht_ev_begin_container *e =
		&htb_ev_add(l, HT_EV_BEGIN_CONTAINER)->u.begin_container;

	e->type = type;
	e->id1 = id1;
	e->id2 = id2;
}

struct ht_ev_root_references *htb_ev_roots(struct htb_events *l,
					   const ht_id *refs, size_t n)
{
	struct ht_ev_root_references *e =
		&htb_ev_add(l, HT_EV_ROOT_REFERENCES)->u.root_references;

	e->count = n;
	e->refs = htb_ev_keep(l, refs, n, sizeof(*refs));
	return e;
}

struct ht_ev_object_references *htb_ev_object(struct htb_events *l, ht_id id,
					      ht_id cls, uint64_t size,
					      const ht_id *refs, size_t n)
{
	struct ht_ev_object_references *e =
		&htb_ev_add(l, HT_EV_OBJECT_REFERENCES)->u.object_references;

	e->id = id;
	e->class_id = cls;
	e->size = size;
	e->count = n;
	e->refs = n ? htb_ev_keep(l, refs, n, sizeof(*refs)) : NULL;
	return e;
}

void htb_ev_allocated(struct htb_events *l, ht_id id, ht_id cls,
		      uint64_t size)
{
	struct ht_ev_object_allocated *e =
		&htb_ev_add(l, HT_EV_OBJECT_ALLOCATED)->u.object_allocated;

	e->id = id;
	e->class_id = cls;
	e->size = size;
}

struct ht_ev_gc_started *htb_ev_gc_started(struct htb_events *l,
					   uint32_t generations)
{
	struct ht_ev_gc_started *e =
		&htb_ev_add(l, HT_EV_GC_STARTED)->u.gc_started;

	e->generations = generations;
	return e;
}

void htb_ev_gc_finished(struct htb_events *l)
{
	htb_ev_add(l, HT_EV_GC_FINISHED);
}

void htb_ev_bounds(struct htb_events *l,
		   const struct ht_generation_range *ranges, size_t n)
{
	struct ht_ev_generation_bounds *e =
		&htb_ev_add(l, HT_EV_GENERATION_BOUNDS)->u.generation_bounds;

	e->count = n;
	e->ranges = htb_ev_keep(l, ranges, n, sizeof(*ranges));
}

void htb_ev_moved(struct htb_events *l, const struct ht_moved_block *blocks,
		  size_t n)
{
	struct ht_ev_moved_references *e =
		&htb_ev_add(l, HT_EV_MOVED_REFERENCES)->u.moved_references;

	e->count = n;
	e->blocks = htb_ev_keep(l, blocks, n, sizeof(*blocks));
}

void htb_ev_surviving(struct htb_events *l,
		      const struct ht_surviving_block *blocks, size_t n)
{
	struct ht_ev_surviving_references *e =
		&htb_ev_add(l, HT_EV_SURVIVING_REFERENCES)->u.surviving_references;

	e->count = n;
	e->blocks = htb_ev_keep(l, blocks, n, sizeof(*blocks));
}
