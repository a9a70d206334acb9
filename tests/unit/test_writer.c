/*
 * test_writer.c - the recording shim (writer.c): what it writes, byte for
 * byte where the format fixes it; chunk boundaries at the end of each dump
 * and GC; splitting of events larger than a buffer; the index; violations;
 * refused arguments; write errors; many threads at once; and a crash in the
 * middle of a recording (tests/crash/crash_record.c, killed with SIGKILL).
 *
 * The files are read back by a small decoder below, built on format.h and
 * the codec only, so that these tests check the writer against the format
 * rather than against the reader.
 */
#include <criterion/criterion.h>

#include "htbuild.h"
#include "testutil.h"
#include "../crash/crash_dump.h"

#include <heaptrace/record.h>

#include "lib/common/codec.h"
#include "lib/common/format.h"
#include "lib/common/varint.h"
#include "util/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ---- reading a .ht file back ---------------------------------------------- */

struct rd_chunk {
	uint64_t offset;
	struct ht_chunk_header h;
};

struct rd_entry {
	uint8_t kind;
	uint64_t event;
	uint64_t offset;
};

struct rd_index {
	bool present;
	uint64_t chunk_offset;
	size_t n;
	struct rd_entry *e;
	uint64_t events, dumps, gcs, chunks, dropped;
	uint64_t violations[HT_V_COUNT_];
};

struct rd_trace {
	struct ht_header header;
	void *header_store;
	struct ht_event *ev;
	size_t *ev_chunk; /* chunk of each event */
	size_t n_ev, cap_ev;
	struct rd_chunk *chunks;
	size_t n_chunks;
	bool damaged;
	uint64_t damage_offset;
	const char *why;
	struct rd_index index;
	size_t file_size;
};

static void *dup_array(const void *p, size_t n, size_t size)
{
	void *q;

	if (!p)
		return NULL;
	q = malloc(n * size + 1);
	cr_assert(q);
	memcpy(q, p, n * size);
	return q;
}

/* Copies the arrays of an event, which the decoder reuses. */
static void deep_copy(struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_CLASS:
		ev->u.class_.name = ev->u.class_.name ?
			strdup(ev->u.class_.name) : NULL;
		break;
	case HT_EV_THREAD:
	case HT_EV_METHOD:
		ev->u.thread.name = ev->u.thread.name ?
			strdup(ev->u.thread.name) : NULL;
		break;
	case HT_EV_GENERATION_BOUNDS: {
		struct ht_ev_generation_bounds *g = &ev->u.generation_bounds;

		g->ranges = dup_array(g->ranges, g->count, sizeof(*g->ranges));
		break;
	}
	case HT_EV_MOVED_REFERENCES: {
		struct ht_ev_moved_references *m = &ev->u.moved_references;

		m->blocks = dup_array(m->blocks, m->count, sizeof(*m->blocks));
		break;
	}
	case HT_EV_SURVIVING_REFERENCES: {
		struct ht_ev_surviving_references *s =
			&ev->u.surviving_references;

		s->blocks = dup_array(s->blocks, s->count, sizeof(*s->blocks));
		break;
	}
	case HT_EV_ROOT_REFERENCES: {
		struct ht_ev_root_references *r = &ev->u.root_references;

		r->refs = dup_array(r->refs, r->count, sizeof(*r->refs));
		r->flags = dup_array(r->flags, r->count, sizeof(*r->flags));
		r->kinds = dup_array(r->kinds, r->count, 1);
		r->root_flags = dup_array(r->root_flags, r->count, 1);
		r->root_ids = dup_array(r->root_ids, r->count,
					sizeof(*r->root_ids));
		r->root_fields = dup_array(r->root_fields, r->count,
					   sizeof(*r->root_fields));
		break;
	}
	case HT_EV_OBJECT_REFERENCES: {
		struct ht_ev_object_references *o = &ev->u.object_references;

		o->refs = dup_array(o->refs, o->count, sizeof(*o->refs));
		o->ref_flags = dup_array(o->ref_flags, o->count,
					 sizeof(*o->ref_flags));
		o->ref_fields = dup_array(o->ref_fields, o->count,
					  sizeof(*o->ref_fields));
		o->value_fields = dup_array(o->value_fields, o->n_values,
					    sizeof(*o->value_fields));
		o->values = dup_array(o->values, o->n_values,
				      sizeof(*o->values));
		if (o->array) {
			struct ht_array_values *a =
				dup_array(o->array, 1, sizeof(*a));

			cr_assert(a);
			a->data = dup_array(a->data, a->stored,
					    ht_value_type_width(a->type));
			o->array = a;
		}
		break;
	}
	case HT_EV_FIELDS: {
		struct ht_field *f = dup_array(ev->u.fields.fields,
					       ev->u.fields.count, sizeof(*f));

		for (size_t i = 0; f && i < ev->u.fields.count; i++)
			f[i].name = f[i].name ? strdup(f[i].name) : NULL;
		ev->u.fields.fields = f;
		break;
	}
	default:
		break;
	}
}

static void free_copy(struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_CLASS:
		free((void *)ev->u.class_.name);
		break;
	case HT_EV_THREAD:
	case HT_EV_METHOD:
		free((void *)ev->u.thread.name);
		break;
	case HT_EV_GENERATION_BOUNDS:
		free((void *)ev->u.generation_bounds.ranges);
		break;
	case HT_EV_MOVED_REFERENCES:
		free((void *)ev->u.moved_references.blocks);
		break;
	case HT_EV_SURVIVING_REFERENCES:
		free((void *)ev->u.surviving_references.blocks);
		break;
	case HT_EV_ROOT_REFERENCES:
		free((void *)ev->u.root_references.refs);
		free((void *)ev->u.root_references.flags);
		free((void *)ev->u.root_references.kinds);
		free((void *)ev->u.root_references.root_flags);
		free((void *)ev->u.root_references.root_ids);
		free((void *)ev->u.root_references.root_fields);
		break;
	case HT_EV_OBJECT_REFERENCES:
		free((void *)ev->u.object_references.refs);
		free((void *)ev->u.object_references.ref_flags);
		free((void *)ev->u.object_references.ref_fields);
		free((void *)ev->u.object_references.value_fields);
		free((void *)ev->u.object_references.values);
		if (ev->u.object_references.array)
			free((void *)ev->u.object_references.array->data);
		free((void *)ev->u.object_references.array);
		break;
	case HT_EV_FIELDS:
		for (size_t i = 0; i < ev->u.fields.count; i++)
			free((void *)ev->u.fields.fields[i].name);
		free((void *)ev->u.fields.fields);
		break;
	default:
		break;
	}
}

static void rd_damage(struct rd_trace *t, uint64_t offset, const char *why)
{
	t->damaged = true;
	t->damage_offset = offset;
	t->why = why;
}

static void rd_add_event(struct rd_trace *t, const struct ht_event *ev)
{
	if (t->n_ev == t->cap_ev) {
		t->cap_ev = t->cap_ev ? 2 * t->cap_ev : 1024;
		t->ev = realloc(t->ev, t->cap_ev * sizeof(*t->ev));
		t->ev_chunk = realloc(t->ev_chunk,
				      t->cap_ev * sizeof(*t->ev_chunk));
		cr_assert(t->ev && t->ev_chunk);
	}
	t->ev[t->n_ev] = *ev;
	deep_copy(&t->ev[t->n_ev]);
	t->ev_chunk[t->n_ev] = t->n_chunks - 1;
	t->n_ev++;
}

static uint64_t rd_varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;

	cr_assert_eq(varint_get(p, end, &v), 0, "bad varint in the index");
	return v;
}

static void rd_index_payload(struct rd_trace *t, const uint8_t *p,
			     size_t len, uint64_t offset)
{
	const uint8_t *end = p + len;
	struct rd_index *x = &t->index;
	uint64_t event = 0, off = 0, n_v;

	x->present = true;
	x->chunk_offset = offset;
	x->n = rd_varint(&p, end);
	x->e = calloc(x->n + 1, sizeof(*x->e));
	for (size_t i = 0; i < x->n; i++) {
		x->e[i].kind = (uint8_t)rd_varint(&p, end);
		event += rd_varint(&p, end);
		off += rd_varint(&p, end);
		x->e[i].event = event;
		x->e[i].offset = off;
	}
	x->events = rd_varint(&p, end);
	x->dumps = rd_varint(&p, end);
	x->gcs = rd_varint(&p, end);
	x->chunks = rd_varint(&p, end);
	n_v = rd_varint(&p, end);
	for (uint64_t i = 0; i < n_v; i++) {
		uint64_t code = rd_varint(&p, end);

		cr_assert_lt(code, HT_V_COUNT_);
		x->violations[code] = rd_varint(&p, end);
	}
	x->dropped = rd_varint(&p, end);
	cr_assert_eq(p, end, "bytes after the index");
}

/* One chunk at *pos: false when the file ends or is damaged there. */
static bool rd_chunk(struct rd_trace *t, const uint8_t *buf, size_t len,
		     size_t *pos, struct codec_dec *d)
{
	struct ht_chunk_header h;
	const char *why;
	uint8_t *raw;
	uLongf raw_len;
	size_t p = *pos;
	struct ht_event ev;
	uint32_t n = 0;
	int rc;

	if (len - p < HT_CHUNK_HEADER_SIZE) {
		rd_damage(t, p, "truncated chunk header");
		return false;
	}
	if (chunk_header_get(buf + p, &h, &why) < 0) {
		rd_damage(t, p, why);
		return false;
	}
	if (len - p - HT_CHUNK_HEADER_SIZE < h.stored_length) {
		rd_damage(t, p, "truncated chunk payload");
		return false;
	}
	if (crc32(0, buf + p + HT_CHUNK_HEADER_SIZE, h.stored_length) !=
	    h.payload_crc) {
		rd_damage(t, p, "payload CRC mismatch");
		return false;
	}
	raw = malloc(h.raw_length + 1);
	raw_len = h.raw_length;
	cr_assert(raw);
	cr_assert_eq(uncompress(raw, &raw_len, buf + p + HT_CHUNK_HEADER_SIZE,
				h.stored_length), Z_OK);
	cr_assert_eq(raw_len, h.raw_length);
	t->chunks = realloc(t->chunks, (t->n_chunks + 1) * sizeof(*t->chunks));
	t->chunks[t->n_chunks].offset = p;
	t->chunks[t->n_chunks].h = h;
	t->n_chunks++;
	if (h.kind == HT_CHUNK_INDEX) {
		cr_assert_eq(h.events, 0);
		cr_assert_eq(h.first_event, t->n_ev);
		rd_index_payload(t, raw, raw_len, p);
	} else {
		cr_assert_eq(h.first_event, t->n_ev,
			     "chunk at %zu: first event %llu, expected %zu", p,
			     (unsigned long long)h.first_event, t->n_ev);
		codec_dec_reset(d, raw, raw_len);
		while ((rc = codec_get_event(d, &ev, &why)) == 1) {
			rd_add_event(t, &ev);
			n++;
		}
		cr_assert_eq(rc, 0, "chunk at %zu: %s", p, why);
		cr_assert_eq(n, h.events);
	}
	free(raw);
	*pos = p + HT_CHUNK_HEADER_SIZE + h.stored_length;
	return true;
}

static void rd_trailer(struct rd_trace *t, const uint8_t *p)
{
	cr_assert(t->index.present, "a trailer without an index chunk");
	cr_assert_eq(get_le32(p + 8), (uint32_t)crc32(0, p, 8));
	cr_assert_eq(get_le64(p), t->index.chunk_offset);
}

static void rd_load(const char *path, struct rd_trace *t)
{
	size_t len, plen, pos;
	uint8_t *buf = read_whole_file(path, &len);
	struct codec_dec d;
	const char *why;

	memset(t, 0, sizeof(*t));
	cr_assert(buf, "cannot read %s", path);
	t->file_size = len;
	cr_assert_geq(len, HT_FILE_HEADER_FIXED + 4);
	cr_assert_eq(memcmp(buf, HT_MAGIC, HT_MAGIC_LEN), 0);
	/* the recorder writes the version its header asks for */
	cr_assert(get_le32(buf + 8) >= 1 &&
		  get_le32(buf + 8) <= HT_FORMAT_VERSION);
	plen = get_le32(buf + 12);
	cr_assert_geq(len, HT_FILE_HEADER_FIXED + plen + 4);
	cr_assert_eq(get_le32(buf + HT_FILE_HEADER_FIXED + plen),
		     (uint32_t)crc32(0, buf, HT_FILE_HEADER_FIXED + plen));
	cr_assert_eq(codec_get_header(buf + HT_FILE_HEADER_FIXED, plen,
				      &t->header, &t->header_store, &why), 0,
		     "%s", why);
	pos = HT_FILE_HEADER_FIXED + plen + 4;
	codec_dec_init(&d);
	while (pos < len) {
		if (len - pos == HT_TRAILER_SIZE &&
		    memcmp(buf + pos + 12, HT_TRAILER_MAGIC, 4) == 0) {
			rd_trailer(t, buf + pos);
			pos += HT_TRAILER_SIZE;
			break;
		}
		cr_assert(!t->index.present, "chunks after the index");
		if (!rd_chunk(t, buf, len, &pos, &d))
			break;
	}
	codec_dec_free(&d);
	free(buf);
}

static void rd_free(struct rd_trace *t)
{
	for (size_t i = 0; i < t->n_ev; i++)
		free_copy(&t->ev[i]);
	free(t->ev);
	free(t->ev_chunk);
	free(t->chunks);
	free(t->index.e);
	free(t->header_store);
}

/* True when event i is the last of its chunk. */
static bool ends_chunk(const struct rd_trace *t, size_t i)
{
	return i + 1 == t->n_ev || t->ev_chunk[i + 1] != t->ev_chunk[i];
}

/* ---- comparing events ------------------------------------------------------ */

/* Arrays of n elements; with n == 0 there is nothing to tell apart. */
static bool mem_eq(const void *a, const void *b, size_t n)
{
	if (n == 0)
		return true;
	if (!a || !b)
		return a == b;
	return memcmp(a, b, n) == 0;
}

/* Field by field: the struct has padding a memcmp would compare. */
static bool range_eq(const struct ht_generation_range *a,
		     const struct ht_generation_range *b)
{
	return a->generation == b->generation && a->start == b->start &&
	       a->length == b->length && a->reserved == b->reserved;
}

/* ---- recording helpers --------------------------------------------------- */

static const struct ht_header test_header = {
	.version = HT_FORMAT_VERSION,
	.runtime = "clr",
	.runtime_version = "8.0.1",
	.pointer_size = 8,
	.reports_survivors = true,
};

static struct ht_recorder *open_or_die(const char *path,
				       const struct ht_record_options *o)
{
	struct ht_error err;
	struct ht_recorder *rec = ht_recorder_open(path, &test_header, o, &err);

	cr_assert(rec, "open %s: %s", path, err.message);
	return rec;
}

static void close_ok(struct ht_recorder *rec)
{
	struct ht_error err;

	cr_assert_eq(ht_recorder_close(rec, &err), HT_OK, "close: %s",
		     err.message);
}

static struct ht_event container(enum ht_container_type type, ht_id id1,
				 ht_id id2)
{
	struct ht_event ev = { .type = HT_EV_BEGIN_CONTAINER };

	ev.u.begin_container.type = type;
	ev.u.begin_container.id1 = id1;
	ev.u.begin_container.id2 = id2;
	return ev;
}

static struct ht_event allocated(ht_id id, ht_id class_id, uint64_t size)
{
	struct ht_event ev = { .type = HT_EV_OBJECT_ALLOCATED };

	ev.u.object_allocated.id = id;
	ev.u.object_allocated.class_id = class_id;
	ev.u.object_allocated.size = size;
	return ev;
}

/* ---- the file header ----------------------------------------------------- */

Test(writer, header_bytes)
{
	static const struct ht_metadata meta[] = {
		{ "host", "build-7" }, { "pid", "4242" },
	};
	struct ht_header h = test_header;
	const char *path = tmp_path("header.ht");
	struct ht_recorder *rec;
	struct ht_error err;
	struct rd_trace t;
	size_t len, plen;
	uint8_t *buf;

	h.command_line = "dotnet app.dll --serve";
	h.has_start_time = true;
	h.start_time = 1700000000;
	h.n_metadata = 2;
	h.metadata = meta;
	rec = ht_recorder_open(path, &h, NULL, &err);
	cr_assert(rec, "%s", err.message);
	close_ok(rec);

	buf = read_whole_file(path, &len);
	cr_assert(buf);
	cr_assert_eq(memcmp(buf, "\x89HTRACE\n", 8), 0);
	cr_assert_eq(get_le32(buf + 8), HT_FORMAT_VERSION);
	plen = get_le32(buf + 12);
	cr_assert_eq(get_le32(buf + 16 + plen),
		     (uint32_t)crc32(0, buf, (uInt)(16 + plen)));
	/* no event: the index chunk and the trailer follow the header */
	cr_assert_eq(memcmp(buf + 16 + plen + 4, "HTCK", 4), 0);
	cr_assert_eq(memcmp(buf + len - 4, "HTIX", 4), 0);
	free(buf);

	rd_load(path, &t);
	cr_assert_str_eq(t.header.runtime, "clr");
	cr_assert_str_eq(t.header.runtime_version, "8.0.1");
	cr_assert_eq(t.header.pointer_size, 8);
	cr_assert(t.header.reports_survivors);
	cr_assert_str_eq(t.header.command_line, "dotnet app.dll --serve");
	cr_assert(t.header.has_start_time);
	cr_assert_eq(t.header.start_time, 1700000000);
	cr_assert_eq(t.header.n_metadata, 2);
	cr_assert_str_eq(t.header.metadata[1].key, "pid");
	cr_assert_str_eq(t.header.metadata[1].value, "4242");
	cr_assert_eq(t.n_ev, 0);
	cr_assert(t.index.present);
	cr_assert_eq(t.index.events, 0);
	cr_assert_not(t.damaged);
	rd_free(&t);
}

/* ---- each event ---------------------------------------------------------- */

Test(writer, typed_functions_read_back_equal)
{
	static const struct ht_generation_range ranges[] = {
		{ 0, 0x1000, 0x200, 0x1000 }, { 1, 0x800, 0x100, 0x800 },
		{ 2, 0x100000, 0x9000, 0x20000 }, { 3, 0x7f0000, 0, 0x10000 },
	};
	static const ht_id old_starts[] = { 0x1008, 0x1010, 0x1015 };
	static const ht_id new_starts[] = { 0x1007, 0x1008, 0x1011 };
	static const uint64_t lengths[] = { 1, 3, 4 };
	static const struct ht_moved_block moved[] = {
		{ 0x1008, 0x1007, 1 }, { 0x1010, 0x1008, 3 },
		{ 0x1015, 0x1011, 4 },
	};
	static const struct ht_surviving_block surviving[] = {
		{ 0x1008, 1 }, { 0x1010, 3 },
	};
	static const ht_id roots[] = { 0x1007, 0, 0x2000 };
	static const uint32_t root_jvm_flags[] = { 0, 1, 0 };
	static const uint8_t kinds[] = { HT_ROOT_STACK, HT_ROOT_HANDLE,
					 HT_ROOT_OTHER };
	static const uint8_t root_flags[] = { HT_ROOT_PINNING, HT_ROOT_WEAK, 0 };
	static const ht_id root_ids[] = { 77, 78, 0 };
	static const ht_id refs[] = { 0x1008, 0, 0xfffffffffffffff0u, 0x1000 };
	static const uint32_t ref_flags[] = { 0, 2, 0, 1 };
	const char *path = tmp_path("typed.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct ht_event want[20] = { 0 };
	size_t n = 0;
	struct rd_trace t;

	cr_assert_eq(ht_class(rec, 0x100, "System.String", true, 24), HT_OK);
	want[n].type = HT_EV_CLASS;
	want[n++].u.class_ = (struct ht_ev_class){ 0x100, "System.String",
						   true, 24 };
	cr_assert_eq(ht_class(rec, 0x101, NULL, false, 99), HT_OK);
	want[n].type = HT_EV_CLASS;
	want[n++].u.class_ = (struct ht_ev_class){ 0x101, NULL, false, 0 };
	cr_assert_eq(ht_thread(rec, 7, "main"), HT_OK);
	want[n].type = HT_EV_THREAD;
	want[n++].u.thread = (struct ht_ev_named){ 7, "main" };
	cr_assert_eq(ht_method(rec, 0x5000, "Program.Main"), HT_OK);
	want[n].type = HT_EV_METHOD;
	want[n++].u.method = (struct ht_ev_method){ 0x5000, "Program.Main",
						    NULL, 0 };
	cr_assert_eq(ht_object_allocated(rec, 0x1008, 0x100, 48), HT_OK);
	want[n++] = allocated(0x1008, 0x100, 48);
	cr_assert_eq(ht_generation_bounds(rec, 4, ranges), HT_OK);
	want[n].type = HT_EV_GENERATION_BOUNDS;
	want[n++].u.generation_bounds =
		(struct ht_ev_generation_bounds){ 4, ranges };
	cr_assert_eq(ht_gc_started(rec, 12, 0x3, HT_GC_INDUCED), HT_OK);
	want[n].type = HT_EV_GC_STARTED;
	want[n++].u.gc_started = (struct ht_ev_gc_started){ true, 12, 0x3,
							    HT_GC_INDUCED };
	cr_assert_eq(ht_moved_references(rec, 3, old_starts, new_starts,
					 lengths), HT_OK);
	want[n].type = HT_EV_MOVED_REFERENCES;
	want[n++].u.moved_references = (struct ht_ev_moved_references){ 3,
									moved };
	cr_assert_eq(ht_surviving_references(rec, 2, old_starts, lengths),
		     HT_OK);
	want[n].type = HT_EV_SURVIVING_REFERENCES;
	want[n++].u.surviving_references =
		(struct ht_ev_surviving_references){ 2, surviving };
	cr_assert_eq(ht_root_references(rec, 3, roots, root_jvm_flags, kinds,
					root_flags, root_ids, HT_RESULT_OK),
		     HT_OK);
	want[n].type = HT_EV_ROOT_REFERENCES;
	want[n++].u.root_references = (struct ht_ev_root_references){
		3, roots, root_jvm_flags, kinds, root_flags, root_ids,
		HT_RESULT_OK
	};
	cr_assert_eq(ht_object_references(rec, 0x1007, 0x100, 48, 0, 4, refs,
					  ref_flags, 2, HT_RESULT_POSTPONE),
		     HT_OK);
	want[n].type = HT_EV_OBJECT_REFERENCES;
	want[n++].u.object_references = (struct ht_ev_object_references){
		0x1007, 0x100, 48, 0, 4, refs, ref_flags, true, 2,
		HT_RESULT_POSTPONE
	};
	cr_assert_eq(ht_gc_finished(rec), HT_OK);
	want[n++].type = HT_EV_GC_FINISHED;
	cr_assert_eq(ht_gc_started(rec, -1, 0x1, HT_GC_OTHER), HT_OK);
	want[n].type = HT_EV_GC_STARTED;
	want[n++].u.gc_started = (struct ht_ev_gc_started){ false, 0, 0x1,
							    HT_GC_OTHER };
	cr_assert_eq(ht_gc_finished(rec), HT_OK);
	want[n++].type = HT_EV_GC_FINISHED;
	cr_assert_eq(ht_begin_container(rec, HT_C_BEGIN, 0, 0), HT_OK);
	want[n++] = container(HT_C_BEGIN, 0, 0);
	cr_assert_eq(ht_begin_container(rec, HT_C_RT_JIT, 0x7fff0010, 0x5000),
		     HT_OK);
	want[n++] = container(HT_C_RT_JIT, 0x7fff0010, 0x5000);
	cr_assert_eq(ht_root_references(rec, 2, roots, root_jvm_flags, NULL,
					NULL, NULL, HT_RESULT_ABORT), HT_OK);
	want[n].type = HT_EV_ROOT_REFERENCES;
	want[n++].u.root_references = (struct ht_ev_root_references){
		2, roots, root_jvm_flags, NULL, NULL, NULL, HT_RESULT_ABORT
	};
	cr_assert_eq(ht_object_references(rec, 0x2000, 0x101, 16,
					  HT_OBJ_ALREADY_REPORTED, 0, NULL,
					  NULL, -1, HT_RESULT_OK), HT_OK);
	want[n].type = HT_EV_OBJECT_REFERENCES;
	want[n++].u.object_references = (struct ht_ev_object_references){
		0x2000, 0x101, 16, HT_OBJ_ALREADY_REPORTED, 0, NULL, NULL,
		false, 0, HT_RESULT_OK
	};
	cr_assert_eq(ht_begin_container(rec, HT_C_END, 0, 0), HT_OK);
	want[n++] = container(HT_C_END, 0, 0);
	close_ok(rec);

	rd_load(path, &t);
	cr_assert_not(t.damaged, "%s", t.why);
	cr_assert_eq(t.n_ev, n);
	for (size_t i = 0; i < n; i++)
		cr_assert(htb_event_equal(&t.ev[i], &want[i]), "event %zu (%s) differs",
			  i, ht_event_name(want[i].type));
	rd_free(&t);
}

Test(writer, record_event_takes_every_type)
{
	static const struct ht_moved_block moved[] = { { 0x10, 0x8, 3 } };
	static const struct ht_surviving_block surviving[] = { { 0x40, 8 } };
	const char *path = tmp_path("record-event.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct ht_event evs[4] = { { .type = HT_EV_GC_STARTED } };
	struct rd_trace t;

	evs[0].u.gc_started.generations = 1;
	evs[1].type = HT_EV_MOVED_REFERENCES;
	evs[1].u.moved_references.count = 1;
	evs[1].u.moved_references.blocks = moved;
	evs[2].type = HT_EV_SURVIVING_REFERENCES;
	evs[2].u.surviving_references.count = 1;
	evs[2].u.surviving_references.blocks = surviving;
	evs[3].type = HT_EV_GC_FINISHED;
	for (int i = 0; i < 4; i++)
		cr_assert_eq(ht_record_event(rec, &evs[i]), HT_OK);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 4);
	for (int i = 0; i < 4; i++)
		cr_assert(htb_event_equal(&t.ev[i], &evs[i]), "event %d", i);
	/* barriers through ht_record_event too: a chunk each */
	cr_assert_eq(t.n_chunks, 2 + 1);
	cr_assert_eq(t.index.gcs, 1);
	rd_free(&t);
}

/* ---- times (version 3) --------------------------------------------------- */

/* With times on, the shim stamps a GC's start and finish and a dump's
 * begin and end, in order, and no other event; a time given is kept. */
Test(writer, times_stamp_gcs_and_dump_brackets)
{
	const struct ht_record_options o = { .times = true };
	const char *path = tmp_path("times.ht");
	struct ht_recorder *rec = open_or_die(path, &o);
	struct ht_event given = { .type = HT_EV_GC_FINISHED, .has_time = true,
				  .time = 42 };
	struct rd_trace t;

	cr_assert_eq(ht_gc_started(rec, 1, 1, HT_GC_OTHER), HT_OK);
	cr_assert_eq(ht_gc_finished(rec), HT_OK);
	cr_assert_eq(ht_begin_container(rec, HT_C_BEGIN, 0, 0), HT_OK);
	cr_assert_eq(ht_begin_container(rec, HT_C_RT_THREAD, 7, 0), HT_OK);
	cr_assert_eq(ht_begin_container(rec, HT_C_END, 0, 0), HT_OK);
	cr_assert_eq(ht_gc_started(rec, 2, 1, HT_GC_OTHER), HT_OK);
	cr_assert_eq(ht_record_event(rec, &given), HT_OK);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 7);
	for (size_t i = 0; i < 6; i++) {
		bool thread = i == 3;

		cr_assert_eq(t.ev[i].has_time, !thread, "event %zu", i);
		if (i > 0 && !thread)
			cr_assert_geq(t.ev[i].time, t.ev[i - 1 - (i == 4)].time,
				      "event %zu goes back in time", i);
	}
	cr_assert(t.ev[6].has_time);
	cr_assert_eq(t.ev[6].time, 42);
	rd_free(&t);
}

/* Off by default: a trace recorded twice is the same bytes. */
Test(writer, no_times_unless_asked)
{
	const char *path = tmp_path("no-times.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct rd_trace t;

	cr_assert_eq(ht_gc_started(rec, 1, 1, HT_GC_OTHER), HT_OK);
	cr_assert_eq(ht_gc_finished(rec), HT_OK);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 2);
	cr_assert_not(t.ev[0].has_time);
	cr_assert_not(t.ev[1].has_time);
	rd_free(&t);
}

/* A version 2 trace holds no times, and no event but the three has one. */
Test(writer, a_time_where_the_format_has_none_is_refused)
{
	struct ht_header h = test_header;
	struct ht_error err;
	struct ht_recorder *rec;
	struct ht_event timed = { .type = HT_EV_GC_FINISHED, .has_time = true,
				  .time = 1 };
	struct ht_event alloc = allocated(0x10, 0x100, 24);

	h.version = 2;
	rec = ht_recorder_open(tmp_path("v2.ht"), &h, NULL, &err);
	cr_assert(rec, "%s", err.message);
	cr_assert_eq(ht_record_event(rec, &timed), HT_E_INVALID);
	close_ok(rec);
	rec = open_or_die(tmp_path("v3.ht"), NULL);
	alloc.has_time = true;
	cr_assert_eq(ht_record_event(rec, &alloc), HT_E_INVALID);
	cr_assert_eq(ht_record_event(rec, &timed), HT_OK);
	close_ok(rec);
}

/* ---- chunk boundaries ---------------------------------------------------- */

Test(writer, every_dump_and_gc_ends_a_chunk)
{
	const char *path = tmp_path("boundaries.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct rd_trace t;
	ht_id ref = 0x2000;
	uint64_t length = 16;
	uint32_t flag = 0;

	for (int round = 0; round < 3; round++) {
		for (ht_id id = 0x1000; id < 0x1100; id += 16)
			ht_object_allocated(rec, id, 0x10, 16);
		ht_begin_container(rec, HT_C_BEGIN, 0, 0);
		ht_begin_container(rec, HT_C_RT_THREAD, 1, 0);
		ht_root_references(rec, 1, &ref, &flag, NULL, NULL, NULL,
				   HT_RESULT_OK);
		ht_begin_container(rec, HT_C_HEAP, 0, 0);
		ht_object_references(rec, 0x2000, 0x10, 16, 0, 1, &ref, NULL,
				     -1, HT_RESULT_OK);
		ht_begin_container(rec, HT_C_END, 0, 0);
		ht_object_allocated(rec, 0x3000, 0x10, 16);
		ht_gc_started(rec, round, 1, HT_GC_OTHER);
		ht_surviving_references(rec, 1, &ref, &length);
		ht_gc_finished(rec);
	}
	ht_object_allocated(rec, 0x4000, 0x10, 16);
	close_ok(rec);

	rd_load(path, &t);
	cr_assert_not(t.damaged);
	cr_assert_eq(t.n_ev, 3 * (16 + 6 + 1 + 3) + 1);
	for (size_t i = 0; i < t.n_ev; i++) {
		const struct ht_event *ev = &t.ev[i];
		bool group = ev->type == HT_EV_GC_STARTED ||
			     ev->type == HT_EV_GC_FINISHED ||
			     (ev->type == HT_EV_BEGIN_CONTAINER &&
			      (ev->u.begin_container.type == HT_C_BEGIN ||
			       ev->u.begin_container.type == HT_C_END));

		if (group)
			cr_assert(ends_chunk(&t, i), "event %zu (%s) does not "
				  "end its chunk", i, ht_event_name(ev->type));
		else if (i + 1 < t.n_ev)
			cr_assert_not(ends_chunk(&t, i),
				      "event %zu ends a chunk", i);
	}
	/* per round: ..C_BEGIN | ..C_END | ..gc_started | ..gc_finished */
	cr_assert_eq(t.index.chunks, 3 * 4 + 1);
	cr_assert_eq(t.n_chunks, t.index.chunks + 1);
	rd_free(&t);
}

/* ---- splitting ----------------------------------------------------------- */

#define BIG_REFS (2u << 20)

Test(writer, huge_object_splits_into_continuations)
{
	const struct ht_record_options small = { .buffer_size = 128 << 10,
						 .buffers = 4 };
	const char *path = tmp_path("split.ht");
	ht_id *refs = malloc(BIG_REFS * sizeof(*refs));
	uint32_t *ref_flags = malloc(BIG_REFS * sizeof(*ref_flags));
	struct ht_recorder *rec = open_or_die(path, &small);
	struct rd_trace t;
	size_t at = 0, pieces = 0, first;
	uint32_t flags = HT_OBJ_ALREADY_VISITED;

	cr_assert(refs && ref_flags);
	for (size_t i = 0; i < BIG_REFS; i++) {
		refs[i] = i % 7 == 0 ? 0 :
			  i % 11 == 0 ? 0x7f0000000000u + i * 8 :
				      0x10000000u + i * 24;
		ref_flags[i] = (uint32_t)(i % 3);
	}
	ht_begin_container(rec, HT_C_BEGIN, 0, 0);
	ht_begin_container(rec, HT_C_HEAP, 0, 0);
	ht_object_allocated(rec, 0x1, 0x2, 3); /* something before it */
	cr_assert_eq(ht_object_references(rec, 0x10000000u, 0x300, 16u << 20,
					  flags, BIG_REFS, refs, ref_flags, 2,
					  HT_RESULT_OK), HT_OK);
	ht_begin_container(rec, HT_C_END, 0, 0);
	close_ok(rec);

	rd_load(path, &t);
	cr_assert_not(t.damaged);
	first = 3;
	for (size_t i = first; t.ev[i].type == HT_EV_OBJECT_REFERENCES; i++) {
		const struct ht_ev_object_references *o =
			&t.ev[i].u.object_references;
		bool last = at + o->count == BIG_REFS;

		cr_assert_eq(o->id, 0x10000000u);
		cr_assert_eq(o->class_id, 0x300);
		cr_assert_eq(o->size, 16u << 20);
		cr_assert(o->has_generation && o->generation == 2);
		cr_assert_eq(o->flags, last ? flags :
			     (flags | HT_OBJ_MORE_REFERENCES));
		cr_assert_gt(o->count, 0);
		cr_assert_leq(at + o->count, BIG_REFS);
		cr_assert_eq(memcmp(o->refs, refs + at,
				    o->count * sizeof(*refs)), 0,
			     "piece %zu", pieces);
		cr_assert_eq(memcmp(o->ref_flags, ref_flags + at,
				    o->count * sizeof(*ref_flags)), 0);
		at += o->count;
		pieces++;
		if (last)
			break;
	}
	cr_assert_eq(at, BIG_REFS, "the pieces hold %zu refs", at);
	cr_assert_gt(pieces, 16);
	cr_assert_eq(t.ev[first + pieces].type, HT_EV_BEGIN_CONTAINER);
	rd_free(&t);
	free(refs);
	free(ref_flags);
}

Test(writer, huge_arrays_split_into_events_of_their_type)
{
	const struct ht_record_options small = { .buffer_size = 128 << 10 };
	enum { N = 50000 };
	const char *path = tmp_path("split-arrays.ht");
	struct ht_recorder *rec = open_or_die(path, &small);
	ht_id *a = malloc(N * sizeof(*a)), *b = malloc(N * sizeof(*b));
	uint64_t *len = malloc(N * sizeof(*len));
	uint32_t *fl = calloc(N, sizeof(*fl));
	uint8_t *kinds = malloc(N);
	struct ht_generation_range *ranges = malloc(N * sizeof(*ranges));
	size_t got[HT_EV_LAST + 1] = { 0 }, pieces[HT_EV_LAST + 1] = { 0 };
	struct rd_trace t;

	for (size_t i = 0; i < N; i++) {
		a[i] = 0x100000 + i * 64;
		b[i] = 0x100000 + i * 48;
		len[i] = 40 + i % 5;
		kinds[i] = (uint8_t)(i % 4);
		ranges[i] = (struct ht_generation_range){ (uint32_t)(i % 5),
							  a[i], len[i], 64 };
	}
	ht_generation_bounds(rec, N, ranges);
	ht_gc_started(rec, 1, 7, HT_GC_OTHER);
	cr_assert_eq(ht_moved_references(rec, N, a, b, len), HT_OK);
	cr_assert_eq(ht_surviving_references(rec, N, b, len), HT_OK);
	cr_assert_eq(ht_root_references(rec, N, a, fl, kinds, NULL, b,
					HT_RESULT_OK), HT_OK);
	ht_gc_finished(rec);
	close_ok(rec);

	rd_load(path, &t);
	for (size_t i = 0; i < t.n_ev; i++) {
		const struct ht_event *ev = &t.ev[i];
		size_t k = got[ev->type];

		switch (ev->type) {
		case HT_EV_GENERATION_BOUNDS:
			for (size_t j = 0; j < ev->u.generation_bounds.count; j++)
				cr_assert(range_eq(&ev->u.generation_bounds.ranges[j],
						   &ranges[k + j]));
			got[ev->type] += ev->u.generation_bounds.count;
			break;
		case HT_EV_MOVED_REFERENCES:
			for (size_t j = 0; j < ev->u.moved_references.count; j++) {
				const struct ht_moved_block *m =
					&ev->u.moved_references.blocks[j];

				cr_assert(m->old_id == a[k + j] &&
					  m->new_id == b[k + j] &&
					  m->length == len[k + j]);
			}
			got[ev->type] += ev->u.moved_references.count;
			break;
		case HT_EV_SURVIVING_REFERENCES:
			for (size_t j = 0; j < ev->u.surviving_references.count; j++)
				cr_assert(ev->u.surviving_references.blocks[j].start ==
						  b[k + j] &&
					  ev->u.surviving_references.blocks[j].length ==
						  len[k + j]);
			got[ev->type] += ev->u.surviving_references.count;
			break;
		case HT_EV_ROOT_REFERENCES: {
			const struct ht_ev_root_references *r =
				&ev->u.root_references;

			cr_assert(mem_eq(r->refs, a + k, r->count * 8));
			cr_assert(mem_eq(r->kinds, kinds + k, r->count));
			cr_assert(mem_eq(r->root_ids, b + k, r->count * 8));
			cr_assert_null(r->root_flags);
			got[ev->type] += r->count;
			break;
		}
		default:
			break;
		}
		pieces[ev->type]++;
	}
	cr_assert_eq(got[HT_EV_GENERATION_BOUNDS], N);
	cr_assert_eq(got[HT_EV_MOVED_REFERENCES], N);
	cr_assert_eq(got[HT_EV_SURVIVING_REFERENCES], N);
	cr_assert_eq(got[HT_EV_ROOT_REFERENCES], N);
	cr_assert_gt(pieces[HT_EV_GENERATION_BOUNDS], 1);
	cr_assert_gt(pieces[HT_EV_MOVED_REFERENCES], 1);
	cr_assert_gt(pieces[HT_EV_SURVIVING_REFERENCES], 1);
	cr_assert_gt(pieces[HT_EV_ROOT_REFERENCES], 1);
	rd_free(&t);
	free(a);
	free(b);
	free(len);
	free(fl);
	free(kinds);
	free(ranges);
}

Test(writer, longest_string_fits_smallest_buffer)
{
	const struct ht_record_options tiny = { .buffer_size = 1 };
	const char *path = tmp_path("string.ht");
	struct ht_recorder *rec = open_or_die(path, &tiny);
	char *name = malloc(70000);
	struct rd_trace t;

	memset(name, 'x', 69999);
	name[69999] = '\0';
	for (int i = 0; i < 5; i++)
		cr_assert_eq(ht_class(rec, (ht_id)i, name, false, 0), HT_OK);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 5);
	cr_assert_eq(strlen(t.ev[4].u.class_.name), CODEC_MAX_STRING);
	rd_free(&t);
	free(name);
}

/* ---- index and trailer --------------------------------------------------- */

Test(writer, index_points_at_dumps_and_gcs)
{
	const struct ht_record_options small = { .buffer_size = 128 << 10 };
	const char *path = tmp_path("index.ht");
	struct ht_recorder *rec = open_or_die(path, &small);
	struct ht_record_stats st;
	struct rd_trace t;
	size_t dumps = 0, gcs = 0;

	for (int round = 0; round < 4; round++) {
		ht_gc_started(rec, round, 1, HT_GC_OTHER);
		ht_gc_finished(rec);
		ht_begin_container(rec, HT_C_BEGIN, 0, 0);
		ht_begin_container(rec, HT_C_HEAP, 0, 0);
		/* enough objects to span chunks */
		for (ht_id id = 0; id < 30000; id++) {
			ht_id ref = (id + 1) * 8;

			ht_object_references(rec, id * 8 + 8, 0x10, 8, 0, 1,
					     &ref, NULL, -1, HT_RESULT_OK);
		}
		ht_begin_container(rec, HT_C_END, 0, 0);
	}
	ht_recorder_stats(rec, &st);
	cr_assert_eq(st.dumps, 4);
	cr_assert_eq(st.gcs, 4);
	cr_assert_eq(st.events, 4 * (30000 + 5));
	close_ok(rec);

	rd_load(path, &t);
	cr_assert(t.index.present);
	cr_assert_eq(t.index.n, 8);
	cr_assert_eq(t.index.events, t.n_ev);
	cr_assert_eq(t.index.dumps, 4);
	cr_assert_eq(t.index.gcs, 4);
	cr_assert_eq(t.index.chunks, t.n_chunks - 1);
	cr_assert_eq(t.index.dropped, 0);
	for (size_t i = 0; i < HT_V_COUNT_; i++)
		cr_assert_eq(t.index.violations[i], 0, "violation %zu", i);
	for (size_t i = 0; i < t.index.n; i++) {
		const struct rd_entry *e = &t.index.e[i];
		const struct ht_event *ev;

		cr_assert_lt(e->event, t.n_ev);
		ev = &t.ev[e->event];
		if (e->kind == HT_INDEX_DUMP) {
			cr_assert(ev->type == HT_EV_BEGIN_CONTAINER &&
				  ev->u.begin_container.type == HT_C_BEGIN);
			dumps++;
		} else {
			cr_assert_eq(e->kind, HT_INDEX_GC);
			cr_assert_eq(ev->type, HT_EV_GC_STARTED);
			gcs++;
		}
		cr_assert_eq(t.chunks[t.ev_chunk[e->event]].offset, e->offset);
	}
	cr_assert_eq(dumps, 4);
	cr_assert_eq(gcs, 4);
	/* the trailer is the last 16 bytes and points at the index chunk */
	cr_assert_eq(t.chunks[t.n_chunks - 1].h.kind, HT_CHUNK_INDEX);
	cr_assert_eq(t.index.chunk_offset, t.chunks[t.n_chunks - 1].offset);
	cr_assert_eq(t.file_size, t.chunks[t.n_chunks - 1].offset +
		     HT_CHUNK_HEADER_SIZE +
		     t.chunks[t.n_chunks - 1].h.stored_length + HT_TRAILER_SIZE);
	rd_free(&t);
}

/* ---- violations ---------------------------------------------------------- */

Test(writer, violations_are_counted_and_data_kept)
{
	const char *path = tmp_path("violations.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct ht_record_stats st;
	struct rd_trace t;
	ht_id ref = 0x10;
	uint32_t flag = 0;
	uint8_t bad_kind = 9;

	cr_assert_eq(ht_begin_container(rec, HT_C_END, 0, 0), HT_OK);
	cr_assert_eq(ht_gc_finished(rec), HT_OK);
	cr_assert_eq(ht_root_references(rec, 1, &ref, &flag, NULL, NULL, NULL,
					HT_RESULT_OK), HT_OK);
	cr_assert_eq(ht_begin_container(rec, HT_C_BEGIN, 0, 0), HT_OK);
	cr_assert_eq(ht_root_references(rec, 1, &ref, &flag, &bad_kind, NULL,
					NULL, HT_RESULT_OK), HT_OK);
	/* the dump stays open at close */
	ht_recorder_stats(rec, &st);
	cr_assert_eq(st.violations[HT_V_DUMP_NOT_OPEN], 1);
	cr_assert_eq(st.violations[HT_V_GC_NOT_OPEN], 1);
	cr_assert_eq(st.violations[HT_V_REFS_OUTSIDE], 1);
	cr_assert_eq(st.violations[HT_V_BAD_VALUE], 1);
	cr_assert_eq(st.dumps, 1);
	close_ok(rec);

	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 5, "every event is kept");
	cr_assert_eq(t.ev[4].u.root_references.kinds[0], 9);
	cr_assert_eq(t.index.violations[HT_V_DUMP_NOT_OPEN], 1);
	cr_assert_eq(t.index.violations[HT_V_GC_NOT_OPEN], 1);
	cr_assert_eq(t.index.violations[HT_V_REFS_OUTSIDE], 1);
	cr_assert_eq(t.index.violations[HT_V_BAD_VALUE], 1);
	cr_assert_eq(t.index.violations[HT_V_DUMP_UNFINISHED], 1);
	cr_assert_eq(t.index.violations[HT_V_NONE], 0);
	rd_free(&t);
}

/* ---- refused arguments --------------------------------------------------- */

Test(writer, invalid_arguments_are_refused)
{
	const char *path = tmp_path("invalid.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct ht_header bad_header = test_header;
	struct ht_record_options bad_options = { .compression_level = 10 };
	struct ht_event ev = { .type = (enum ht_event_type)0 };
	struct ht_error err;
	ht_id ref = 8;
	uint32_t flag = 0;
	uint64_t len = 1;
	struct rd_trace t;

	cr_assert_eq(ht_object_references(rec, 1, 2, 3, 0, 2, NULL, NULL, -1,
					  HT_RESULT_OK), HT_E_INVALID);
	cr_assert_eq(ht_object_references(rec, 1, 2, 3, 0, 1, &ref, NULL, -1,
					  (enum ht_result)3), HT_E_INVALID);
	cr_assert_eq(ht_root_references(rec, 1, NULL, &flag, NULL, NULL, NULL,
					HT_RESULT_OK), HT_E_INVALID);
	cr_assert_eq(ht_root_references(rec, 1, &ref, NULL, NULL, NULL, NULL,
					HT_RESULT_OK), HT_E_INVALID);
	cr_assert_eq(ht_root_references(rec, 1, &ref, &flag, NULL, NULL, NULL,
					(enum ht_result)7), HT_E_INVALID);
	cr_assert_eq(ht_begin_container(rec, (enum ht_container_type)0, 0, 0),
		     HT_E_INVALID);
	cr_assert_eq(ht_begin_container(rec, (enum ht_container_type)17, 0, 0),
		     HT_E_INVALID);
	cr_assert_eq(ht_moved_references(rec, 1, &ref, NULL, &len),
		     HT_E_INVALID);
	cr_assert_eq(ht_surviving_references(rec, 1, &ref, NULL), HT_E_INVALID);
	cr_assert_eq(ht_generation_bounds(rec, 2, NULL), HT_E_INVALID);
	cr_assert_eq(ht_gc_started(rec, 1, 1, (enum ht_gc_reason)2),
		     HT_E_INVALID);
	cr_assert_eq(ht_record_event(rec, &ev), HT_E_INVALID);
	ev.type = (enum ht_event_type)99;
	cr_assert_eq(ht_record_event(rec, &ev), HT_E_INVALID);
	cr_assert_eq(ht_record_event(rec, NULL), HT_E_INVALID);
	ev.type = HT_EV_MOVED_REFERENCES;
	ev.u.moved_references.count = 3;
	cr_assert_eq(ht_record_event(rec, &ev), HT_E_INVALID);
	cr_assert_eq(ht_object_allocated(NULL, 1, 2, 3), HT_E_INVALID);
	cr_assert_eq(ht_gc_finished(NULL), HT_E_INVALID);
	/* an empty array may come without a pointer */
	cr_assert_eq(ht_root_references(rec, 0, NULL, NULL, NULL, NULL, NULL,
					HT_RESULT_OK), HT_OK);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 1, "refused calls record nothing");
	rd_free(&t);

	bad_header.pointer_size = 3;
	cr_assert_null(ht_recorder_open(tmp_path("bad1.ht"), &bad_header, NULL,
					&err));
	cr_assert_eq(err.code, HT_E_INVALID);
	cr_assert(strstr(err.message, "pointer size"), "%s", err.message);
	cr_assert_null(ht_recorder_open(tmp_path("bad2.ht"), NULL, NULL, &err));
	cr_assert_eq(err.code, HT_E_INVALID);
	cr_assert_null(ht_recorder_open(tmp_path("bad3.ht"), &test_header,
					&bad_options, &err));
	cr_assert_eq(err.code, HT_E_INVALID);
	bad_options = (struct ht_record_options){ .buffer_size = 1u << 30 };
	cr_assert_null(ht_recorder_open(tmp_path("bad4.ht"), &test_header,
					&bad_options, &err));
	cr_assert_eq(err.code, HT_E_INVALID);
	/* refused before the file is created */
	cr_assert_eq(access(tmp_path("bad4.ht"), F_OK), -1);
	cr_assert_eq(ht_recorder_close(NULL, &err), HT_E_INVALID);
}

/* ---- write errors -------------------------------------------------------- */

Test(writer, unwritable_path_fails_at_open)
{
	struct ht_error err;
	const char *path = "/nonexistent-heaptrace-dir/trace.ht";

	cr_assert_null(ht_recorder_open(path, &test_header, NULL, &err));
	cr_assert_eq(err.code, HT_E_IO);
	cr_assert_eq(err.sys_errno, ENOENT);
	cr_assert(strstr(err.message, path), "%s", err.message);
}

Test(writer, closed_fd_reports_ebadf)
{
	const char *path = tmp_path("ebadf.ht");
	int low = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct ht_recorder *rec;
	struct ht_error err;
	enum ht_error_code rc;
	int fd;

	/* A number far above the lowest free one: once closed, no other
	 * open (Criterion's own threads open sockets) takes it over. */
	cr_assert_geq(low, 0);
	fd = fcntl(low, F_DUPFD, 900);
	close(low);
	cr_assert_geq(fd, 900);
	rec = ht_recorder_open_fd(fd, path, &test_header, NULL, &err);
	cr_assert(rec, "%s", err.message);
	close(fd); /* behind its back */
	cr_assert_eq(ht_gc_started(rec, 1, 1, HT_GC_OTHER), HT_OK);
	/* the writer may have failed on gc_started's chunk already */
	rc = ht_gc_finished(rec);
	cr_assert(rc == HT_OK || rc == HT_E_STATE, "gc_finished: %d", rc);
	cr_assert_eq(ht_recorder_sync(rec), HT_E_IO);
	cr_assert_eq(ht_recorder_error(rec, &err), HT_E_IO);
	cr_assert_eq(err.sys_errno, EBADF);
	cr_assert(strstr(err.message, path), "%s", err.message);
	cr_assert(strstr(err.message, "byte "), "%s", err.message);
	/* stopped: later calls are refused, cheaply */
	cr_assert_eq(ht_object_allocated(rec, 1, 2, 3), HT_E_STATE);
	cr_assert_eq(ht_gc_finished(rec), HT_E_STATE);
	cr_assert_eq(ht_recorder_close(rec, &err), HT_E_IO);
	cr_assert_eq(err.sys_errno, EBADF);
}

/* The child exits with the line of the first check that failed. */
#define CHILD_CHECK(cond)                   \
	do {                                \
		if (!(cond))                \
			_exit(__LINE__ % 250 + 1); \
	} while (0)

static void record_until_efbig(const char *path)
{
	const struct ht_record_options small = { .buffer_size = 128 << 10,
						 .buffers = 2 };
	struct rlimit lim = { 300 << 10, 300 << 10 };
	struct ht_recorder *rec;
	struct ht_error err;
	enum ht_error_code rc = HT_OK;
	int dumps = 0;

	alarm(60); /* never hang: a blocked recorder fails the test */
	signal(SIGXFSZ, SIG_IGN);
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	rec = ht_recorder_open(path, &test_header, &small, &err);
	CHILD_CHECK(rec);
	for (; dumps < 1000 && rc == HT_OK; dumps++) {
		rc = ht_begin_container(rec, HT_C_BEGIN, 0, 0);
		for (ht_id id = 1; id <= 5000 && rc == HT_OK; id++) {
			ht_id refs[2] = { id * 16 + 16, (id * 7919) << 4 };

			rc = ht_object_references(rec, id * 16, 0x40, 16, 0, 2,
						  refs, NULL, -1, HT_RESULT_OK);
		}
		if (rc == HT_OK)
			rc = ht_begin_container(rec, HT_C_END, 0, 0);
		if (rc == HT_OK)
			rc = ht_recorder_sync(rec);
	}
	CHILD_CHECK(rc == HT_E_STATE || rc == HT_E_IO);
	CHILD_CHECK(dumps < 1000);
	CHILD_CHECK(ht_recorder_error(rec, &err) == HT_E_IO);
	CHILD_CHECK(err.sys_errno == EFBIG);
	CHILD_CHECK(strstr(err.message, path) && strstr(err.message, "byte "));
	CHILD_CHECK(ht_object_allocated(rec, 1, 2, 3) == HT_E_STATE);
	CHILD_CHECK(ht_recorder_close(rec, &err) == HT_E_IO);
	CHILD_CHECK(err.sys_errno == EFBIG);
	_exit(0);
}

Test(writer, file_size_limit_stops_cleanly)
{
	const char *path = tmp_path("efbig.ht");
	struct rd_trace t;
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0)
		record_until_efbig(path);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child killed by signal %d",
		  WTERMSIG(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "child check at line ~%d failed",
		     WEXITSTATUS(status) - 1);

	/* the chunks before the limit read back; the cut one is lost */
	rd_load(path, &t);
	cr_assert_leq(t.file_size, 300 << 10);
	cr_assert_gt(t.n_chunks, 1);
	cr_assert_not(t.index.present);
	for (size_t i = 0; i < t.n_ev; i++)
		if (t.ev[i].type == HT_EV_OBJECT_REFERENCES)
			cr_assert_eq(t.ev[i].u.object_references.class_id, 0x40);
	rd_free(&t);
}

/* ---- threads ------------------------------------------------------------- */

#define N_THREADS 8
#define ALLOCS 20000
#define GC_OBJECTS 5000

struct worker {
	struct ht_recorder *rec;
	pthread_barrier_t *barrier;
	unsigned index;
};

static ht_id worker_id(unsigned thread, unsigned phase, unsigned seq)
{
	return (ht_id)(thread + 1) << 40 | (ht_id)phase << 32 | (ht_id)seq << 4;
}

static void worker_allocate(struct worker *w, unsigned phase)
{
	for (unsigned i = 0; i < ALLOCS; i++)
		cr_assert_eq(ht_object_allocated(w->rec,
						 worker_id(w->index, phase, i),
						 w->index, 16), HT_OK);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	worker_allocate(w, 0);
	pthread_barrier_wait(w->barrier); /* main: gc_started */
	pthread_barrier_wait(w->barrier);
	for (unsigned i = 0; i < GC_OBJECTS; i++) {
		ht_id id = worker_id(w->index, 1, i), ref = id + 16;

		cr_assert_eq(ht_object_references(w->rec, id, w->index, 16, 0,
						  1, &ref, NULL, 0,
						  HT_RESULT_OK), HT_OK);
	}
	pthread_barrier_wait(w->barrier); /* main: gc_finished */
	pthread_barrier_wait(w->barrier);
	worker_allocate(w, 2);
	return NULL;
}

/* The thread, phase and sequence number of a worker's event, or false. */
static bool worker_event(const struct ht_event *ev, unsigned *thread,
			 unsigned *phase, unsigned *seq)
{
	ht_id id;

	if (ev->type == HT_EV_OBJECT_ALLOCATED)
		id = ev->u.object_allocated.id;
	else if (ev->type == HT_EV_OBJECT_REFERENCES)
		id = ev->u.object_references.id;
	else
		return false;
	*thread = (unsigned)(id >> 40) - 1;
	*phase = (unsigned)(id >> 32) & 0xff;
	*seq = (unsigned)(id >> 4) & 0xfffffff;
	return true;
}

static void check_threads_trace(const char *path)
{
	unsigned next[N_THREADS][3] = { { 0 } };
	size_t gc_start = SIZE_MAX, gc_end = SIZE_MAX;
	struct rd_trace t;

	rd_load(path, &t);
	cr_assert_not(t.damaged);
	cr_assert_eq(t.n_ev, N_THREADS * (2 * ALLOCS + GC_OBJECTS) + 2);
	for (size_t i = 0; i < t.n_ev; i++) {
		unsigned th, phase, seq;

		if (t.ev[i].type == HT_EV_GC_STARTED) {
			gc_start = i;
			continue;
		}
		if (t.ev[i].type == HT_EV_GC_FINISHED) {
			gc_end = i;
			continue;
		}
		cr_assert(worker_event(&t.ev[i], &th, &phase, &seq));
		cr_assert_lt(th, N_THREADS);
		cr_assert_lt(phase, 3);
		/* each thread's events in its own order, each exactly once */
		cr_assert_eq(seq, next[th][phase], "thread %u phase %u: "
			     "event %u where %u was due", th, phase, seq,
			     next[th][phase]);
		next[th][phase]++;
		if (phase == 0)
			cr_assert_eq(gc_start, SIZE_MAX, "allocation after "
				     "gc_started");
		if (phase == 1)
			cr_assert(gc_start != SIZE_MAX && gc_end == SIZE_MAX,
				  "GC reference outside the GC");
		if (phase == 2)
			cr_assert_neq(gc_end, SIZE_MAX, "allocation before "
				      "gc_finished");
	}
	for (unsigned th = 0; th < N_THREADS; th++) {
		cr_assert_eq(next[th][0], ALLOCS);
		cr_assert_eq(next[th][1], GC_OBJECTS);
		cr_assert_eq(next[th][2], ALLOCS);
	}
	rd_free(&t);
}

static void run_threads(const char *path, const struct ht_record_options *o)
{
	struct ht_recorder *rec = open_or_die(path, o);
	struct worker w[N_THREADS];
	pthread_t th[N_THREADS];
	pthread_barrier_t barrier;
	struct ht_record_stats st;

	pthread_barrier_init(&barrier, NULL, N_THREADS + 1);
	for (unsigned i = 0; i < N_THREADS; i++) {
		w[i] = (struct worker){ rec, &barrier, i };
		cr_assert_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	pthread_barrier_wait(&barrier);
	cr_assert_eq(ht_gc_started(rec, 0, 1, HT_GC_OTHER), HT_OK);
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	cr_assert_eq(ht_gc_finished(rec), HT_OK);
	pthread_barrier_wait(&barrier);
	for (unsigned i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
	ht_recorder_stats(rec, &st);
	cr_assert_eq(st.events, N_THREADS * (2 * ALLOCS + GC_OBJECTS) + 2);
	cr_assert_eq(st.dropped_events, 0);
	close_ok(rec);
	check_threads_trace(path);
}

Test(writer, threads_record_concurrently)
{
	run_threads(tmp_path("threads.ht"), NULL);
}

/* Fewer buffers than threads: buffers half full in idle threads' slots
 * must not starve the others. */
Test(writer, threads_outnumber_buffers)
{
	const struct ht_record_options few = { .buffer_size = 128 << 10,
					       .buffers = 3 };

	run_threads(tmp_path("few-buffers.ht"), &few);
}

static void *record_a_few(void *arg)
{
	struct ht_recorder *rec = arg;

	for (int i = 0; i < 100; i++)
		if (ht_object_allocated(rec, 16 * (ht_id)i + 16, 1, 16) != HT_OK)
			return (void *)1;
	return NULL;
}

/* Slots of exited threads are reused; without a slot an event is dropped
 * and counted. */
Test(writer, slots_are_reused_and_drops_counted)
{
	const struct ht_record_options two = { .max_threads = 2 };
	const char *path = tmp_path("slots.ht");
	struct ht_recorder *rec = open_or_die(path, &two);
	struct ht_record_stats st;
	struct rd_trace t;
	pthread_t th;
	void *ret;

	for (int i = 0; i < 10; i++) {
		cr_assert_eq(pthread_create(&th, NULL, record_a_few, rec), 0);
		pthread_join(th, &ret);
		cr_assert_null(ret, "thread %d found no slot", i);
	}
	ht_object_allocated(rec, 8, 1, 8); /* this thread takes a slot */
	ht_recorder_stats(rec, &st);
	cr_assert_eq(st.events, 1001);
	cr_assert_eq(st.dropped_events, 0);
	close_ok(rec);

	rec = open_or_die(path, &(struct ht_record_options){ .max_threads = 1 });
	cr_assert_eq(ht_object_allocated(rec, 8, 1, 8), HT_OK);
	cr_assert_eq(pthread_create(&th, NULL, record_a_few, rec), 0);
	pthread_join(th, &ret);
	cr_assert_not_null(ret);
	ht_recorder_stats(rec, &st);
	cr_assert_eq(st.dropped_events, 1);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 1);
	cr_assert_eq(t.index.dropped, 1);
	rd_free(&t);
}

/* A thread that records into one recorder, then another, then the first
 * again keeps one slot in each. */
Test(writer, recorders_in_sequence_and_side_by_side)
{
	const struct ht_record_options one = { .max_threads = 1 };
	const char *pa = tmp_path("a.ht"), *pb = tmp_path("b.ht");
	struct rd_trace t;

	for (int round = 0; round < 3; round++) {
		struct ht_recorder *a = open_or_die(pa, &one);
		struct ht_recorder *b = open_or_die(pb, &one);

		for (int i = 0; i < 10; i++) {
			cr_assert_eq(ht_object_allocated(a, 16, 1, 16), HT_OK);
			cr_assert_eq(ht_object_allocated(b, 32, 1, 16), HT_OK);
		}
		close_ok(a);
		close_ok(b);
	}
	rd_load(pa, &t);
	cr_assert_eq(t.n_ev, 10);
	rd_free(&t);
}

Test(writer, sync_writes_what_was_handed_off)
{
	const char *path = tmp_path("sync.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct ht_record_stats st;
	struct rd_trace t;

	ht_begin_container(rec, HT_C_BEGIN, 0, 0);
	ht_begin_container(rec, HT_C_END, 0, 0);
	cr_assert_eq(ht_recorder_sync(rec), HT_OK);
	ht_recorder_stats(rec, &st);
	cr_assert_eq(st.chunks_written, 2);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 2, "both chunks are in the file before close");
	cr_assert_not(t.damaged);
	cr_assert_eq(st.bytes_written, t.file_size);
	rd_free(&t);
	close_ok(rec);
}

/* ---- crash safety -------------------------------------------------------- */

/* Matches the trace against crash_record's dumps: returns how many dumps
 * read back whole; any event of a dump that differs fails the test. The
 * dump in flight when the process died may be cut short. */
static uint64_t crash_whole_dumps(const struct rd_trace *t)
{
	uint64_t d = 0;
	size_t i = 0;

	for (;;) {
		size_t n = crash_objects(d), k = 0, total = n + 5;
		ht_id roots[CRASH_ROOTS], refs[CRASH_REFS];
		uint32_t flags[CRASH_ROOTS] = { 0 };
		struct ht_event want;

		for (size_t r = 0; r < CRASH_ROOTS; r++)
			roots[r] = crash_object_id(d, r);
		for (; i < t->n_ev && k < total; i++) {
			const struct ht_event *ev = &t->ev[i];

			if (ev->type == HT_EV_OBJECT_ALLOCATED ||
			    ev->type == HT_EV_GC_STARTED ||
			    ev->type == HT_EV_MOVED_REFERENCES ||
			    ev->type == HT_EV_GC_FINISHED)
				continue;
			if (k == 0)
				want = container(HT_C_BEGIN, 0, 0);
			else if (k == 1)
				want = container(HT_C_RT_THREAD, d + 1, 0);
			else if (k == 2)
				want = (struct ht_event){
					.type = HT_EV_ROOT_REFERENCES,
					.u.root_references = { CRASH_ROOTS,
							       roots, flags }
				};
			else if (k == 3)
				want = container(HT_C_HEAP, 0, 0);
			else if (k < total - 1) {
				crash_refs(d, k - 4, refs);
				want = (struct ht_event){
					.type = HT_EV_OBJECT_REFERENCES,
					.u.object_references = {
						crash_object_id(d, k - 4),
						crash_class_id(k - 4), 24, 0,
						CRASH_REFS, refs }
				};
			} else
				want = container(HT_C_END, 0, 0);
			cr_assert(htb_event_equal(ev, &want),
				  "dump %llu: event %zu of it differs",
				  (unsigned long long)d, k);
			k++;
		}
		if (k < total)
			return d;
		d++;
	}
}

/* Kills crash_record once it has printed dump kill_after: delay_us later,
 * or, with paused, while it stalls right after printing it. */
static void crash_once(uint64_t kill_after, unsigned delay_us, bool paused)
{
	const char *exe = getenv("HT_CRASH_RECORD");
	char name[64];
	const char *path;
	char stall[32];
	int fds[2], status;
	char line[64];
	uint64_t last = UINT64_MAX;
	struct rd_trace t;
	pid_t pid;
	FILE *out;

	cr_assert(exe, "HT_CRASH_RECORD is not set (run through meson test)");
	snprintf(name, sizeof(name), "crash-%llu-%u%s.ht",
		 (unsigned long long)kill_after, delay_us, paused ? "-p" : "");
	path = tmp_path(name);
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		snprintf(stall, sizeof(stall), "%llu",
			 (unsigned long long)kill_after);
		if (paused)
			execl(exe, exe, path, "100000", stall, (char *)NULL);
		else
			execl(exe, exe, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	while (last != kill_after && fgets(line, sizeof(line), out))
		last = strtoull(line, NULL, 10);
	if (delay_us) {
		struct timespec ts = { 0, (long)delay_us * 1000 };

		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fclose(out);
	cr_assert_eq(last, kill_after, "crash_record stopped early");
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "crash_record was not killed (status %d)", status);

	rd_load(path, &t);
	cr_assert_not(t.index.present, "a killed recorder wrote an index");
	cr_assert_geq(crash_whole_dumps(&t), kill_after + 1,
		      "killed after dump %llu (+%u us): only %llu whole dumps; "
		      "%s at byte %llu", (unsigned long long)kill_after,
		      delay_us, (unsigned long long)crash_whole_dumps(&t),
		      t.damaged ? t.why : "no damage",
		      (unsigned long long)t.damage_offset);
	rd_free(&t);
}

Test(writer, crash_keeps_every_finished_dump)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();

	crash_once(0, 0, true);
	crash_once(1, 0, true);
	crash_once(4, 0, true);
	crash_once(0, 0, false);
	crash_once(5, 0, false);
	crash_once(3, 500, false);
	srand(seed);
	for (int i = 0; i < 6; i++) {
		uint64_t k = (uint64_t)(rand() % 30);
		unsigned delay = (unsigned)(rand() % 5000);

		cr_log_info("seed %u: kill after dump %llu + %u us", seed,
			    (unsigned long long)k, delay);
		crash_once(k, delay, false);
	}
}

/* ---- fields (format version 2) ------------------------------------------- */

/* ht_fields and the _fields forms of the reference functions record what
 * they are given, and the trace reads back the same: the declarations,
 * ref_fields (0 for no field) and root_fields. The old functions record no
 * fields. A split object keeps each reference's field with it. */
Test(writer, fields_round_trip)
{
	static const struct ht_field fields[] = {
		{ 1, 0x100, "next", HT_FIELD_INSTANCE, true, 16 },
		{ 2, 0x100, "value", HT_FIELD_INSTANCE, true, 24 },
		{ 3, 0x100, "INSTANCE", HT_FIELD_STATIC, false, 0 },
	};
	static const ht_id refs[] = { 0x1010, 0, 0x2000 };
	static const ht_id ref_fields[] = { 1, 2, 0 };
	static const ht_id roots[] = { 0x1000 };
	static const uint32_t root_flags[] = { 0 };
	static const ht_id root_fields[] = { 3 };
	const char *path = tmp_path("fields.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct ht_event want[8];
	size_t n = 0;
	struct rd_trace t;

	memset(want, 0, sizeof(want));
	cr_assert_eq(ht_fields(rec, 3, fields), HT_OK);
	want[n].type = HT_EV_FIELDS;
	want[n++].u.fields = (struct ht_ev_fields){ 3, fields };
	cr_assert_eq(ht_begin_container(rec, HT_C_BEGIN, 0, 0), HT_OK);
	want[n++] = container(HT_C_BEGIN, 0, 0);
	cr_assert_eq(ht_begin_container(rec, HT_C_RT_CLASS, 0x100, 0), HT_OK);
	want[n++] = container(HT_C_RT_CLASS, 0x100, 0);
	cr_assert_eq(ht_root_references_fields(rec, 1, roots, root_flags, NULL,
					       NULL, NULL, root_fields,
					       HT_RESULT_OK), HT_OK);
	want[n].type = HT_EV_ROOT_REFERENCES;
	want[n].u.root_references = (struct ht_ev_root_references){
		.count = 1, .refs = roots, .flags = root_flags,
		.root_fields = root_fields };
	n++;
	cr_assert_eq(ht_object_references_fields(rec, 0x1000, 0x100, 32, 0, 3,
						 refs, NULL, ref_fields, -1,
						 HT_RESULT_OK), HT_OK);
	want[n].type = HT_EV_OBJECT_REFERENCES;
	want[n].u.object_references = (struct ht_ev_object_references){
		.id = 0x1000, .class_id = 0x100, .size = 32, .count = 3,
		.refs = refs, .ref_fields = ref_fields };
	n++;
	cr_assert_eq(ht_object_references(rec, 0x1010, 0x100, 32, 0, 3, refs,
					  NULL, -1, HT_RESULT_OK), HT_OK);
	want[n].type = HT_EV_OBJECT_REFERENCES;
	want[n].u.object_references = (struct ht_ev_object_references){
		.id = 0x1010, .class_id = 0x100, .size = 32, .count = 3,
		.refs = refs };
	n++;
	cr_assert_eq(ht_begin_container(rec, HT_C_END, 0, 0), HT_OK);
	want[n++] = container(HT_C_END, 0, 0);
	close_ok(rec);

	rd_load(path, &t);
	cr_assert_not(t.damaged, "%s", t.why);
	cr_assert_eq(t.n_ev, n);
	for (size_t i = 0; i < n; i++)
		cr_assert(htb_event_equal(&t.ev[i], &want[i]),
			  "event %zu (%s) differs", i,
			  ht_event_name(want[i].type));
	rd_free(&t);
}

/* A field needs a nonzero id and a kind that exists; a version 1 trace
 * holds no fields at all. Refused calls record nothing. */
Test(writer, fields_refused)
{
	static const struct ht_field no_id[] = {
		{ 0, 0x100, "next", HT_FIELD_INSTANCE, false, 0 },
	};
	static const struct ht_field bad_kind[] = {
		{ 1, 0x100, "next", HT_FIELD_KIND_LAST + 1, false, 0 },
	};
	static const struct ht_field ok[] = {
		{ 1, 0x100, "next", HT_FIELD_INSTANCE, false, 0 },
	};
	static const ht_id refs[] = { 0x10 }, ref_fields[] = { 1 };
	static const uint32_t flags[] = { 0 };
	struct ht_header v1 = test_header;
	struct ht_error err;
	uint8_t *buf;
	size_t len;
	const char *path = tmp_path("fields-refused.ht");
	struct ht_recorder *rec = open_or_die(path, NULL);
	struct rd_trace t;

	cr_assert_eq(ht_fields(rec, 1, no_id), HT_E_INVALID);
	cr_assert_eq(ht_fields(rec, 1, bad_kind), HT_E_INVALID);
	cr_assert_eq(ht_fields(rec, 1, NULL), HT_E_INVALID);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 0);
	rd_free(&t);

	v1.version = 1;
	path = tmp_path("fields-v1.ht");
	rec = ht_recorder_open(path, &v1, NULL, &err);
	cr_assert(rec, "%s", err.message);
	cr_assert_eq(ht_fields(rec, 1, ok), HT_E_INVALID);
	cr_assert_eq(ht_object_references_fields(rec, 0x10, 0x100, 16, 0, 1,
						 refs, NULL, ref_fields, -1,
						 HT_RESULT_OK), HT_E_INVALID);
	cr_assert_eq(ht_root_references_fields(rec, 1, refs, flags, NULL, NULL,
					       NULL, ref_fields, HT_RESULT_OK),
		     HT_E_INVALID);
	cr_assert_eq(ht_object_references(rec, 0x10, 0x100, 16, 0, 1, refs,
					  NULL, -1, HT_RESULT_OK), HT_OK);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 1, "only the event without fields");
	rd_free(&t);
	buf = read_whole_file(path, &len);
	cr_assert(buf && len > 12);
	cr_assert_eq(get_le32(buf + 8), 1, "a version 1 trace stays one");
	free(buf);
	rec = open_or_die(tmp_path("fields-v2.ht"), NULL);
	cr_assert_eq(ht_fields(rec, 1, ok), HT_OK, "version 2 takes them");
	close_ok(rec);
}

/* A referent's strength (the kinds after static) is version 3's: a
 * version 2 recorder refuses it, as it refuses times. */
Test(writer, strengths_need_version_3)
{
	static const struct ht_field soft[] = {
		{ 1, 0x100, "referent", HT_FIELD_SOFT, false, 0 },
	};
	static const struct ht_field phantom[] = {
		{ 2, 0x100, "next", HT_FIELD_INSTANCE, false, 0 },
		{ 3, 0x110, "referent", HT_FIELD_PHANTOM, false, 0 },
	};
	struct ht_header v2 = test_header;
	struct ht_error err;
	struct ht_recorder *rec;
	struct rd_trace t;
	const char *path = tmp_path("strengths-v2.ht");

	v2.version = 2;
	rec = ht_recorder_open(path, &v2, NULL, &err);
	cr_assert(rec, "%s", err.message);
	cr_assert_eq(ht_fields(rec, 1, soft), HT_E_INVALID);
	cr_assert_eq(ht_fields(rec, 2, phantom), HT_E_INVALID);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 0);
	rd_free(&t);
	path = tmp_path("strengths-v3.ht");
	rec = open_or_die(path, NULL);
	cr_assert_eq(ht_fields(rec, 1, soft), HT_OK);
	cr_assert_eq(ht_fields(rec, 2, phantom), HT_OK);
	close_ok(rec);
	rd_load(path, &t);
	cr_assert_eq(t.n_ev, 2);
	cr_assert_eq(t.ev[1].u.fields.fields[1].kind, HT_FIELD_PHANTOM);
	rd_free(&t);
}

/* ---- values (version 3) -------------------------------------------------- */


/* An object too large for a buffer is split, and its values and array
 * contents, which are never split, come whole with its last part. */
Test(writer, values_go_whole_with_the_last_part_of_a_split_object)
{
	const struct ht_record_options small = { .buffer_size = 128 << 10,
						 .buffers = 4 };
	const char *path = tmp_path("split-values.ht");
	ht_id *refs = calloc(BIG_REFS, sizeof(*refs));
	const ht_id value_fields[] = { 1, 2 };
	const uint64_t values[] = { (uint64_t)-5, 1u << 20 };
	uint8_t prefix[HT_VALUES_PREFIX];
	const struct ht_array_values array = {
		.type = HT_TYPE_BYTE, .length = 1u << 20,
		.stored = sizeof(prefix), .data = prefix, .hash = 42 };
	struct ht_event ev = {
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = {
			.id = 0x10000000u, .class_id = 0x300, .size = 1u << 24,
			.count = BIG_REFS, .n_values = 2,
			.value_fields = value_fields, .values = values,
			.array = &array } };
	struct ht_recorder *rec = open_or_die(path, &small);
	struct rd_trace t;
	size_t at = 0, with_values = 0, i;

	cr_assert(refs);
	for (size_t k = 0; k < BIG_REFS; k++)
		refs[k] = 0x10000000u + 24 * (k + 1);
	for (size_t k = 0; k < sizeof(prefix); k++)
		prefix[k] = (uint8_t)(k * 7);
	ev.u.object_references.refs = refs;
	ht_begin_container(rec, HT_C_BEGIN, 0, 0);
	ht_begin_container(rec, HT_C_HEAP, 0, 0);
	cr_assert_eq(ht_record_event(rec, &ev), HT_OK);
	ht_begin_container(rec, HT_C_END, 0, 0);
	close_ok(rec);

	rd_load(path, &t);
	cr_assert_not(t.damaged);
	for (i = 2; t.ev[i].type == HT_EV_OBJECT_REFERENCES; i++) {
		const struct ht_ev_object_references *o =
			&t.ev[i].u.object_references;
		bool last = !(o->flags & HT_OBJ_MORE_REFERENCES);

		at += o->count;
		if (!o->n_values && !o->array)
			continue;
		with_values++;
		cr_assert(last, "values in a part that is not the last");
		cr_assert_eq(o->n_values, 2);
		cr_assert_eq(memcmp(o->value_fields, value_fields,
				    sizeof(value_fields)), 0);
		cr_assert_eq(memcmp(o->values, values, sizeof(values)), 0);
		cr_assert(o->array);
		cr_assert_eq(o->array->length, array.length);
		cr_assert_eq(o->array->stored, array.stored);
		cr_assert_eq(o->array->hash, 42);
		cr_assert_eq(memcmp(o->array->data, prefix, sizeof(prefix)), 0);
	}
	cr_assert_gt(i, 4, "the object was split");
	cr_assert_eq(at, BIG_REFS);
	cr_assert_eq(with_values, 1);
	rd_free(&t);
	free(refs);
}

/* Values are version 3's; values a buffer could not hold with room for
 * references are refused whole; a value of field 0, an array of no
 * primitive type or with a prefix longer than it, or a referent's kind
 * on a primitive field, are the caller's mistakes. */
Test(writer, values_refused)
{
	const ht_id fields_ok[] = { 1 }, field_zero[] = { 0 };
	const uint64_t one[] = { 1 };
	static const struct ht_field int_field[] = {
		{ .id = 1, .class_id = 0x100, .name = "n", .type = HT_TYPE_INT },
	};
	static const struct ht_field bad_fields[][1] = {
		{ { .id = 1, .class_id = 0x100, .name = "n", .type = 3 } },
		{ { .id = 1, .class_id = 0x100, .name = "n",
		    .kind = HT_FIELD_WEAK, .type = HT_TYPE_INT } },
	};
	const struct ht_array_values bad_arrays[] = {
		{ .type = HT_TYPE_OBJECT, .length = 1 },
		{ .type = HT_TYPE_INT, .length = 1, .stored = 2,
		  .data = (const uint8_t *)"12345678" },
		{ .type = HT_TYPE_INT, .length = 1, .stored = 1 },
	};
	const struct ht_array_values huge = {
		.type = HT_TYPE_LONG, .length = 1u << 20, .stored = 1u << 20,
		.data = calloc(1u << 20, 8) };
	struct ht_event obj = {
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = { .id = 0x1000, .class_id = 0x100,
					 .size = 16, .n_values = 1,
					 .value_fields = fields_ok,
					 .values = one } };
	struct ht_event zero = obj, with_array = obj;
	struct ht_header v2 = test_header;
	struct ht_error err;
	struct ht_recorder *rec;

	cr_assert(huge.data);
	v2.version = 2;
	rec = ht_recorder_open(tmp_path("values-v2.ht"), &v2, NULL, &err);
	cr_assert(rec, "%s", err.message);
	cr_assert_eq(ht_fields(rec, 1, int_field), HT_E_INVALID);
	cr_assert_eq(ht_record_event(rec, &obj), HT_E_INVALID);
	close_ok(rec);

	rec = open_or_die(tmp_path("values-refused.ht"), NULL);
	cr_assert_eq(ht_fields(rec, 1, int_field), HT_OK);
	cr_assert_eq(ht_record_event(rec, &obj), HT_OK);
	for (size_t i = 0; i < ARRAY_SIZE(bad_fields); i++)
		cr_assert_eq(ht_fields(rec, 1, bad_fields[i]), HT_E_INVALID,
			     "field %zu", i);
	zero.u.object_references.value_fields = field_zero;
	cr_assert_eq(ht_record_event(rec, &zero), HT_E_INVALID);
	with_array.u.object_references.n_values = 0;
	for (size_t i = 0; i < ARRAY_SIZE(bad_arrays); i++) {
		with_array.u.object_references.array = &bad_arrays[i];
		cr_assert_eq(ht_record_event(rec, &with_array), HT_E_INVALID,
			     "array %zu", i);
	}
	with_array.u.object_references.array = &huge;
	cr_assert_eq(ht_record_event(rec, &with_array), HT_E_LIMIT);
	close_ok(rec);
	free((void *)huge.data);
}

/* A thread that names beside a dump hands its names off: they are in the
 * file while the dump goes on, not only once it ends (when the dump's end
 * takes every thread's buffer). The thread lives on until then (its exit
 * would hand its buffer off too). */
struct namer {
	struct ht_recorder *rec;
	sem_t named, dump_ended;
	bool ok;
};

static void *name_and_hand_off(void *arg)
{
	struct namer *n = arg;

	n->ok = ht_class(n->rec, 0x40, "Demo.Named", false, 0) == HT_OK &&
		ht_recorder_hand_off(n->rec) == HT_OK;
	sem_post(&n->named);
	while (sem_wait(&n->dump_ended) != 0)
		;
	return NULL;
}

Test(writer, hand_off_writes_names_inside_the_dump)
{
	const char *path = tmp_path("handoff.ht");
	struct namer n = {.rec = open_or_die(path, NULL)};
	struct rd_trace t;
	pthread_t th;
	size_t classes = 0;

	cr_assert_eq(sem_init(&n.named, 0, 0), 0);
	cr_assert_eq(sem_init(&n.dump_ended, 0, 0), 0);
	cr_assert_eq(ht_recorder_hand_off(n.rec), HT_OK); /* nothing yet */
	cr_assert_eq(ht_begin_container(n.rec, HT_C_BEGIN, 0, 0), HT_OK);
	cr_assert_eq(ht_object_references(n.rec, 0x1000, 0x40, 24, 0, 0, NULL,
					  NULL, -1, HT_RESULT_OK), HT_OK);
	cr_assert_eq(pthread_create(&th, NULL, name_and_hand_off, &n), 0);
	while (sem_wait(&n.named) != 0)
		;
	cr_assert(n.ok);
	cr_assert_eq(ht_recorder_sync(n.rec), HT_OK);
	/* the dump is open: the file ends inside it */
	rd_load(path, &t);
	for (size_t i = 0; i < t.n_ev; i++)
		if (t.ev[i].type == HT_EV_CLASS &&
		    strcmp(t.ev[i].u.class_.name, "Demo.Named") == 0)
			classes++;
	rd_free(&t);
	cr_assert_eq(classes, 1);
	cr_assert_eq(ht_begin_container(n.rec, HT_C_END, 0, 0), HT_OK);
	sem_post(&n.dump_ended);
	cr_assert_eq(pthread_join(th, NULL), 0);
	close_ok(n.rec);
	sem_destroy(&n.named);
	sem_destroy(&n.dump_ended);
}
