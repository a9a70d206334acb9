/*
 * hprof_index.c - the index pass of the HPROF reader (hprof_source.c says
 * why there are two): every record's framing checked, the names, frames,
 * traces, threads and classes kept, and of each dump where its segments
 * lie, its roots and where its CLASS_DUMPs are. The objects are walked
 * but not kept: only the evidence of the object layout (hprof_model.c)
 * and what names threads (hprof_threads.c) are taken from them.
 *
 * Damage stops the pass and is noted (damage): the event pass delivers
 * every event of the records before it, then the error.
 */
#include "lib/read/hprof_internal.h"

#include "util/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- Damage ------------------------------------------------------------ */

int hprof_damage(struct hprof_source *s, enum ht_error_code code,
		  uint64_t offset, const char *fmt, ...)
{
	char cause[300];
	uint64_t lost = s->in.size > offset ? s->in.size - offset : 0;
	va_list ap;

	if (s->damaged)
		return -1;
	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	err_at_offset(&s->damage, code, s->path, offset,
		      "%s; %llu %s from here to the end not read", cause,
		      (unsigned long long)lost, lost == 1 ? "byte" : "bytes");
	s->damaged = true;
	s->damage_offset = offset;
	return -1;
}

int hprof_io_damage(struct hprof_source *s, uint64_t offset)
{
	char cause[128];
	enum ht_error_code code = hprof_read_failure(&s->in, cause, sizeof(cause));

	hprof_damage(s, code, offset, "%s", cause);
	if (code == HT_E_IO)
		s->damage.sys_errno = s->in.io_errno ? s->in.io_errno : EIO;
	return -1;
}

int hprof_nomem_damage(struct hprof_source *s, uint64_t offset)
{
	return hprof_damage(s, HT_E_NOMEM, offset, "%s", hprof_nomem_cause());
}

/* ---- Records ----------------------------------------------------------- */

static struct thread *thread_entry(struct hprof_source *s, uint32_t serial)
{
	uint32_t i;

	if (idmap_get(&s->thread_by_serial, serial, &i))
		return &s->threads[i];
	if (HPROF_GROW(s->threads, s->n_threads + 1, s->cap_threads) < 0 ||
	    idmap_add(&s->thread_by_serial, serial, (uint32_t)s->n_threads) < 0)
		return NULL;
	s->threads[s->n_threads] = (struct thread){.serial = serial};
	return &s->threads[s->n_threads++];
}

static int index_utf8(struct hprof_source *s, uint64_t at, uint32_t len)
{
	const uint8_t *p;
	const char *text;
	uint32_t n = len - s->id_size;

	if (n > MAX_UTF8)
		return hprof_damage(s, HT_E_LIMIT, at,
			      "UTF8 record of %u bytes: %u bytes of text, over "
			      "the %u MiB limit", len, n, MAX_UTF8 >> 20);
	p = in_at(&s->in, at + RECORD_HEADER_LEN, len);
	if (!p)
		return hprof_io_damage(s, at);
	if (utf8_valid((const char *)p + s->id_size, n) &&
	    !memchr(p + s->id_size, 0, n)) {
		text = hprof_text_copy(&s->text, p + s->id_size, n);
	} else {
		char *t = hprof_text_alloc(&s->text, UTF8_REPAIR_BOUND(n) + 1);

		if (t)
			t[utf8_from_modified(t, (const char *)p + s->id_size,
					     n)] = '\0';
		text = t;
	}
	if (!text || HPROF_GROW(s->utf8_text, s->n_utf8 + 1, s->cap_utf8) < 0 ||
	    idmap_add(&s->utf8, get_id(s, p), (uint32_t)s->n_utf8) < 0)
		return hprof_nomem_damage(s, at);
	s->utf8_text[s->n_utf8++] = text;
	return 0;
}

/* The classes of java.lang.ref whose instances hold a referent less than
 * strongly, by their name in the package. */
static void note_reference_class(struct hprof_source *s, const char *name,
				 uint64_t class_id)
{
	static const char *const strengths[] = {
		"SoftReference", "WeakReference", "FinalReference",
		"PhantomReference",
	};

	if (strcmp(name, "Reference") == 0)
		s->reference_class = class_id;
	for (size_t i = 0; i < 4; i++)
		if (strcmp(name, strengths[i]) == 0)
			s->strength_class[i] = class_id;
}

static int index_load_class(struct hprof_source *s, uint64_t at,
			    const uint8_t *p)
{
	unsigned id = s->id_size;
	struct loaded_class l = {
		.serial = be32(p),
		.class_id = get_id(s, p + 4),
		.name_id = get_id(s, p + 8 + id),
		.offset = at,
	};
	const char *name = hprof_utf8_of(s, l.name_id);

	if (HPROF_GROW(s->loaded, s->n_loaded + 1, s->cap_loaded) < 0 ||
	    idmap_add(&s->loaded_by_serial, l.serial,
		      (uint32_t)s->n_loaded) < 0 ||
	    idmap_add(&s->loaded_by_id, l.class_id,
		      (uint32_t)s->n_loaded) < 0)
		return hprof_nomem_damage(s, at);
	s->loaded[s->n_loaded++] = l;
	if (!name)
		return 0;
	/* what the names of threads are chased through, and what class
	 * objects and primitive arrays are instances of */
	if (strcmp(name, "java/lang/Thread") == 0)
		s->thread_class = l.class_id;
	else if (strcmp(name, "java/lang/String") == 0)
		s->string_class = l.class_id;
	else if (strcmp(name, "java/lang/Class") == 0)
		s->class_class = l.class_id;
	else if (strncmp(name, "java/lang/ref/", 14) == 0)
		note_reference_class(s, name + 14, l.class_id);
	else if (name[0] == '[' && name[1] && !name[2]) {
		static const char codes[] = "????ZCFDBSIJ";
		const char *c = strchr(codes + 4, name[1]);

		if (c)
			s->prim_array_class[c - codes] = l.class_id;
	}
	return 0;
}

/* Whether two frames are of one method at one line of one source file. */
static bool same_place(const struct frame *a, const struct frame *b)
{
	return a->class_serial == b->class_serial && a->method == b->method &&
	       a->signature == b->signature &&
	       a->source_file == b->source_file && a->line == b->line;
}

/* HPROF has frames but no methods: the frames of one method at one line
 * (class, name, signature, source file and line) take the id of the first
 * of them as the method's, which is named with its file and line. */
static int method_of(struct hprof_source *s, struct frame *fr)
{
	uint64_t key = fr->class_serial * 0x9e3779b97f4a7c15ULL ^
		       fr->method * 0xc2b2ae3d27d4eb4fULL ^
		       fr->signature * 0x165667b19e3779f9ULL ^
		       fr->source_file * 0x27d4eb2f165667c5ULL ^
		       (uint64_t)(uint32_t)fr->line * 0x94d049bb133111ebULL;
	uint32_t i;

	fr->method_id = fr->id;
	key |= 1; /* 0 is an id of its own */
	if (idmap_get(&s->method_by_key, key, &i)) {
		const struct frame *first = &s->frames[i];

		/* a key shared by another method keeps the frame's own id */
		if (same_place(first, fr))
			fr->method_id = first->id;
		return 0;
	}
	return idmap_add(&s->method_by_key, key, (uint32_t)s->n_frames);
}

static int index_frame(struct hprof_source *s, uint64_t at, const uint8_t *p)
{
	unsigned id = s->id_size;
	struct frame fr = {
		.id = get_id(s, p),
		.method = get_id(s, p + id),
		.signature = get_id(s, p + 2 * id),
		.source_file = get_id(s, p + 3 * id),
		.class_serial = be32(p + 4 * id),
		.line = (int32_t)be32(p + 4 * id + 4),
	};

	if (HPROF_GROW(s->frames, s->n_frames + 1, s->cap_frames) < 0 ||
	    idmap_add(&s->frame_by_id, fr.id, (uint32_t)s->n_frames) < 0 ||
	    method_of(s, &fr) < 0)
		return hprof_nomem_damage(s, at);
	s->frames[s->n_frames++] = fr;
	return 0;
}

static int index_trace(struct hprof_source *s, uint64_t at, uint32_t len)
{
	const uint8_t *p;
	struct trace t;

	if (len - 12 > (uint64_t)MAX_TRACE_FRAMES * s->id_size)
		return hprof_damage(s, HT_E_LIMIT, at,
			      "TRACE record of %u bytes: more than %u frames",
			      len, MAX_TRACE_FRAMES);
	p = in_at(&s->in, at + RECORD_HEADER_LEN, len);
	if (!p)
		return hprof_io_damage(s, at);
	t.serial = be32(p);
	t.thread_serial = be32(p + 4);
	t.n_frames = be32(p + 8);
	t.first = s->n_frame_ids;
	if ((uint64_t)t.n_frames * s->id_size != len - 12)
		return hprof_damage(s, HT_E_CORRUPT, at,
			      "TRACE record of %u bytes holds %u frames", len,
			      t.n_frames);
	if (HPROF_GROW(s->frame_ids,
		       s->n_frame_ids + t.n_frames, s->cap_frame_ids) < 0 ||
	    HPROF_GROW(s->traces, s->n_traces + 1, s->cap_traces) < 0 ||
	    idmap_add(&s->trace_by_serial, t.serial,
		      (uint32_t)s->n_traces) < 0 ||
	    idmap_add(&s->trace_by_thread, t.thread_serial,
		      (uint32_t)s->n_traces) < 0)
		return hprof_nomem_damage(s, at);
	for (uint32_t i = 0; i < t.n_frames; i++)
		s->frame_ids[s->n_frame_ids++] =
			get_id(s, p + 12 + i * s->id_size);
	s->traces[s->n_traces++] = t;
	return 0;
}

static int index_start_thread(struct hprof_source *s, uint64_t at,
			      const uint8_t *p)
{
	unsigned id = s->id_size;
	struct thread *t = thread_entry(s, be32(p));

	if (!t)
		return hprof_nomem_damage(s, at);
	if (!t->object)
		t->object = get_id(s, p + 4);
	if (!t->has_trace) {
		t->has_trace = true;
		t->trace_serial = be32(p + 4 + id);
	}
	t->name_id = get_id(s, p + 8 + id);
	return 0;
}

/* ---- Heap dump bodies -------------------------------------------------- */

/* A sub-record of `need` bytes from `at` (0: of a size not known yet)
 * does not fit in its body. */
int hprof_overrun(struct hprof_source *s, const struct body *b, uint64_t at,
		   unsigned sub, uint64_t need)
{
	const char *what = hprof_sub_name(sub);

	if (!need && b->end < b->claimed_end)
		return hprof_damage(s, HT_E_TRUNCATED, at,
			      "file ends inside %s %s sub-record",
			      hprof_article(what), what);
	if (!need)
		return hprof_damage(s, HT_E_CORRUPT, at,
			      "%s sub-record runs past the end of its %s "
			      "record", what, hprof_record_name(b->tag));
	if (b->end < b->claimed_end)
		return hprof_damage(s, HT_E_TRUNCATED, at,
			      "file ends inside %s %s sub-record (%llu of %llu "
			      "bytes)", hprof_article(what), what,
			      (unsigned long long)(b->end - at),
			      (unsigned long long)need);
	return hprof_damage(s, HT_E_CORRUPT, at,
		      "%s sub-record of %llu bytes runs past the end of its "
		      "%s record (%llu bytes left)", what,
		      (unsigned long long)need, hprof_record_name(b->tag),
		      (unsigned long long)(b->end - at));
}

static int add_root(struct hprof_source *s, struct dump *d, uint64_t at,
		    unsigned tag, const uint8_t *p)
{
	unsigned id = s->id_size;
	struct root r = {.tag = (uint8_t)tag, .object = get_id(s, p),
			 .depth = -1, .offset = at};

	switch (tag) {
	case S_ROOT_JNI_LOCAL:
	case S_ROOT_JAVA_FRAME:
		r.thread_serial = be32(p + id);
		r.depth = (int32_t)be32(p + id + 4);
		break;
	case S_ROOT_NATIVE_STACK:
	case S_ROOT_THREAD_BLOCK:
		r.thread_serial = be32(p + id);
		break;
	case S_ROOT_THREAD_OBJECT: {
		struct thread *t;

		r.thread_serial = be32(p + id);
		t = thread_entry(s, r.thread_serial);
		if (!t)
			return hprof_nomem_damage(s, at);
		if (r.object)
			t->object = r.object;
		if (!t->has_trace) {
			t->has_trace = true;
			t->trace_serial = be32(p + id + 4);
		}
		break;
	}
	default:
		break;
	}
	if (HPROF_GROW(d->roots, d->n_roots + 1, d->cap_roots) < 0)
		return hprof_nomem_damage(s, at);
	d->roots[d->n_roots++] = r;
	return 0;
}

/* ---- One heap dump body ------------------------------------------------ */

/* The instance part of a body walk. Returns the sub-record's size, or -1
 * once the damage is noted. */
static int64_t walk_instance(struct hprof_source *s, const struct body *b,
			     uint64_t at, const struct walk *w)
{
	unsigned id = s->id_size;
	unsigned head = 1 + 2 * id + 8;
	const uint8_t *p;
	struct hclass *c;
	uint64_t obj, class_id;
	uint32_t n;

	if (b->end - at < head)
		return hprof_overrun(s, b, at, S_INSTANCE_DUMP, head);
	p = in_at(&s->in, at, head);
	if (!p)
		return hprof_io_damage(s, at);
	obj = get_id(s, p + 1);
	class_id = get_id(s, p + 5 + id);
	n = be32(p + 5 + 2 * id);
	if (b->end - at - head < n)
		return hprof_overrun(s, b, at, S_INSTANCE_DUMP, (uint64_t)head + n);
	c = class_of(s, class_id);
	if (!w->chase_only && collecting_evidence(s))
		hprof_observe_instance(s, obj, c);
	if (!c || !chain_known(s, c) || n != c->data_bytes ||
	    n > MAX_INSTANCE_DATA)
		return (int64_t)head + n;
	if (c->thread_name_at >= 0 && !w->chase_only) {
		p = in_at(&s->in, at + head, n);
		if (!p)
			return hprof_io_damage(s, at);
		if (hprof_chase_thread(s, at, obj, c, p) < 0)
			return hprof_nomem_damage(s, at);
	} else if (class_id == s->string_class && s->n_strings_wanted) {
		if (s->string_value_at == STRING_FIELDS_UNKNOWN)
			hprof_find_string_fields(s);
		p = in_at(&s->in, at + head, n);
		if (!p)
			return hprof_io_damage(s, at);
		if (hprof_chase_string(s, at, obj, p, n, w->chase_only) < 0)
			return hprof_nomem_damage(s, at);
	}
	return (int64_t)head + n;
}

static int64_t walk_array(struct hprof_source *s, const struct body *b,
			  uint64_t at, unsigned tag, const struct walk *w)
{
	unsigned id = s->id_size;
	unsigned head = tag == S_OBJ_ARRAY_DUMP ? 1 + 2 * id + 8 : 1 + id + 9;
	const uint8_t *p;
	uint64_t obj, bytes;
	uint32_t count;
	unsigned type, width;

	if (b->end - at < head)
		return hprof_overrun(s, b, at, tag, head);
	p = in_at(&s->in, at, head);
	if (!p)
		return hprof_io_damage(s, at);
	obj = get_id(s, p + 1);
	count = be32(p + 5 + id);
	type = tag == S_OBJ_ARRAY_DUMP ? HPROF_OBJECT : p[9 + id];
	width = hprof_type_width(type, id);
	if (!width || (tag == S_PRIM_ARRAY_DUMP && hprof_type_is_ref(type)))
		return hprof_damage(s, HT_E_CORRUPT, at,
			      "PRIM_ARRAY_DUMP of 0x%llx: element type %u, not "
			      "a primitive HPROF type",
			      (unsigned long long)obj, type);
	bytes = (uint64_t)count * width;
	if (b->end - at - head < bytes)
		return hprof_overrun(s, b, at, tag, head + bytes);
	if (!w->chase_only && collecting_evidence(s))
		hprof_observe_array(s, obj, type, count);
	if (tag == S_PRIM_ARRAY_DUMP && s->n_arrays_wanted &&
	    hprof_chase_array(s, at, obj, type, count) < 0)
		return s->in.io_errno ? hprof_io_damage(s, at) : hprof_nomem_damage(s, at);
	return (int64_t)(head + bytes);
}

/* Where the CLASS_DUMP at `at`, of `size` bytes, lies: the event pass
 * delivers class objects in the order of their ids, not the file's. */
static int64_t note_class_dump(struct hprof_source *s, struct dump *d,
			       const struct body *b, uint64_t at, int size)
{
	const uint8_t *p;

	if (size <= 0)
		return size;
	p = in_at(&s->in, at + 1, s->id_size);
	if (!p)
		return hprof_io_damage(s, at);
	if (HPROF_GROW(d->classes, d->n_classes + 1, d->cap_classes) < 0)
		return hprof_nomem_damage(s, at);
	d->classes[d->n_classes++] = (struct class_ref){
		.id = get_id(s, p),
		.offset = at,
		.size = (uint64_t)size,
		.end = b->end,
	};
	return size;
}

static int64_t walk_sub_record(struct hprof_source *s, struct dump *d,
			       const struct body *b, uint64_t at,
			       const struct walk *w)
{
	const uint8_t *p = in_at(&s->in, at, 1);
	unsigned tag, size;

	if (!p)
		return hprof_io_damage(s, at);
	tag = p[0];
	switch (tag) {
	case S_CLASS_DUMP:
		/* a class object is no neighbour of the instances */
		hprof_observe(&s->evidence, 0, NULL);
		return note_class_dump(s, d, b, at, hprof_index_class_dump(s, b, at));
	case S_INSTANCE_DUMP:
		return walk_instance(s, b, at, w);
	case S_OBJ_ARRAY_DUMP:
	case S_PRIM_ARRAY_DUMP:
		return walk_array(s, b, at, tag, w);
	default:
		size = hprof_root_body_size(tag, s->id_size);
		if (!size)
			return hprof_damage(s, HT_E_CORRUPT, at,
				      "unknown heap dump sub-record tag 0x%02x",
				      tag);
		if (b->end - at < 1 + size)
			return hprof_overrun(s, b, at, tag, 1 + size);
		if (w->chase_only)
			return 1 + size;
		p = in_at(&s->in, at, 1 + size);
		if (!p)
			return hprof_io_damage(s, at);
		if (add_root(s, d, at, tag, p + 1) < 0)
			return -1;
		return 1 + size;
	}
}

/* Walks the sub-records of one body. The first pass clips the segment to
 * what is intact; a chasing walk stops at w->limit. */
int hprof_walk_body(struct hprof_source *s, struct dump *d, struct body *b,
		     const struct walk *w)
{
	uint64_t at = b->record_at + RECORD_HEADER_LEN, body;

	while (at < b->end && (!w->chase_only || at < w->limit)) {
		int64_t n;
		const uint8_t *p = in_at(&s->in, at, 1);

		if (w->chase_only && p && p[0] == S_CLASS_DUMP)
			n = hprof_class_dump_size(s, b, at);
		else
			n = walk_sub_record(s, d, b, at, w);
		if (n < 0) {
			b->end = at;
			return -1;
		}
		at += (uint64_t)n;
	}
	body = b->record_at + RECORD_HEADER_LEN;
	if (!w->chase_only && b->end < b->claimed_end)
		return hprof_damage(s, HT_E_TRUNCATED, b->end,
			      "file ends inside the %s record at byte %llu "
			      "(%llu of its %llu bytes)", hprof_record_name(b->tag),
			      (unsigned long long)b->record_at,
			      (unsigned long long)(b->end - body),
			      (unsigned long long)(b->claimed_end - body));
	return 0;
}

/* ---- The record sequence ----------------------------------------------- */

static struct dump *open_dump(struct hprof_source *s, uint64_t at)
{
	if (HPROF_GROW(s->dumps, s->n_dumps + 1, s->cap_dumps) < 0)
		return NULL;
	memset(&s->dumps[s->n_dumps], 0, sizeof(s->dumps[0]));
	s->dumps[s->n_dumps].offset = at;
	return &s->dumps[s->n_dumps++];
}

static int index_heap_record(struct hprof_source *s, uint64_t at,
			     unsigned tag, uint32_t len)
{
	struct walk w = {0};
	struct dump *d;
	struct body b = {
		.record_at = at,
		.tag = tag,
		.claimed_end = at + RECORD_HEADER_LEN + len,
	};
	int rc;

	b.end = b.claimed_end < s->in.size ? b.claimed_end : s->in.size;
	if (tag == R_HEAP_DUMP || !s->in_segments) {
		if (tag == R_HEAP_DUMP && s->in_segments)
			return hprof_damage(s, HT_E_CORRUPT, at,
				      "HEAP_DUMP record inside a heap dump of "
				      "segments (no HEAP_DUMP_END before it)");
		d = open_dump(s, at);
		if (!d)
			return hprof_nomem_damage(s, at);
		d->begin_us = s->record_us;
		s->in_segments = tag == R_HEAP_DUMP_SEGMENT;
	}
	d = &s->dumps[s->n_dumps - 1];
	rc = hprof_walk_body(s, d, &b, &w);
	if (b.end > at + RECORD_HEADER_LEN) {
		if (HPROF_GROW(d->segs, d->n_segs + 1, d->cap_segs) < 0)
			return hprof_nomem_damage(s, at);
		d->segs[d->n_segs++] = (struct segment){
			.offset = at + RECORD_HEADER_LEN,
			.length = b.end - at - RECORD_HEADER_LEN,
		};
	}
	if (rc == 0 && tag == R_HEAP_DUMP) {
		d->closed = true;
		d->end_offset = at;
		d->end_us = s->record_us;
	}
	return rc;
}

static int index_record(struct hprof_source *s, uint64_t at, unsigned tag,
			uint32_t len)
{
	const uint8_t *p;

	switch (tag) {
	case R_UTF8:
		if (len < s->id_size)
			return hprof_damage(s, HT_E_CORRUPT, at,
				      "UTF8 record of %u bytes, shorter than "
				      "an id", len);
		return index_utf8(s, at, len);
	case R_TRACE:
		if (len < 12)
			return hprof_damage(s, HT_E_CORRUPT, at,
				      "TRACE record of %u bytes, shorter than "
				      "its header", len);
		return index_trace(s, at, len);
	case R_HEAP_DUMP:
	case R_HEAP_DUMP_SEGMENT:
		return index_heap_record(s, at, tag, len);
	case R_HEAP_DUMP_END:
		/* an END with no dump open ends nothing: some writers end
		 * dumps of one HEAP_DUMP record with one */
		if (s->in_segments) {
			s->dumps[s->n_dumps - 1].closed = true;
			s->dumps[s->n_dumps - 1].end_offset = at;
			s->dumps[s->n_dumps - 1].end_us = s->record_us;
			s->in_segments = false;
		}
		return 0;
	case R_LOAD_CLASS:
	case R_FRAME:
	case R_START_THREAD:
		p = in_at(&s->in, at + RECORD_HEADER_LEN, len);
		if (!p)
			return hprof_io_damage(s, at);
		if (tag == R_LOAD_CLASS)
			return index_load_class(s, at, p);
		if (tag == R_FRAME)
			return index_frame(s, at, p);
		return index_start_thread(s, at, p);
	default:
		return 0; /* records of no use here: their length was checked */
	}
}

/* The first pass over every record. Damage stops it (and is noted); only
 * running out of memory for the damage itself cannot happen. */
void hprof_index_file(struct hprof_source *s)
{
	uint64_t at = FILE_HEADER_LEN;

	while (at < s->in.size) {
		const uint8_t *p;
		unsigned tag;
		uint32_t len;
		int64_t fixed;

		if (s->in.size - at < RECORD_HEADER_LEN) {
			hprof_damage(s, HT_E_TRUNCATED, at,
			       "file ends inside a record header (%llu of %d "
			       "bytes)", (unsigned long long)(s->in.size - at),
			       RECORD_HEADER_LEN);
			return;
		}
		p = in_at(&s->in, at, RECORD_HEADER_LEN);
		if (!p) {
			hprof_io_damage(s, at);
			return;
		}
		tag = p[0];
		s->record_us = be32(p + 1);
		len = be32(p + 5);
		fixed = hprof_fixed_length(tag, s->id_size);
		if (fixed < 0) {
			hprof_damage(s, HT_E_CORRUPT, at,
			       "unknown record tag 0x%02x", tag);
			return;
		}
		if (fixed > 0 && len != (uint64_t)fixed) {
			hprof_damage(s, HT_E_CORRUPT, at,
			       "%s record of %u bytes (it must have %lld)",
			       hprof_record_name(tag), len, (long long)fixed);
			return;
		}
		if (tag != R_HEAP_DUMP && tag != R_HEAP_DUMP_SEGMENT &&
		    s->in.size - at - RECORD_HEADER_LEN < len) {
			hprof_damage(s, HT_E_TRUNCATED, at,
			       "file ends inside %s %s record (%llu of %u "
			       "bytes)", hprof_article(hprof_record_name(tag)),
			       hprof_record_name(tag),
			       (unsigned long long)(s->in.size - at -
						    RECORD_HEADER_LEN), len);
			return;
		}
		if (index_record(s, at, tag, len) < 0)
			return;
		at += RECORD_HEADER_LEN + (uint64_t)len;
	}
	if (s->in_segments)
		hprof_damage(s, HT_E_TRUNCATED, at,
		       "file ends inside a heap dump (no HEAP_DUMP_END after "
		       "its segments)");
}
