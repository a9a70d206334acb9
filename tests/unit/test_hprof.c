/*
 * test_hprof.c - Java heap dumps (HPROF) through ht_reader, on dumps
 * built byte by byte here: every record and root kind and where each one
 * lands in the event model, 4- and 8-byte ids, dumps of one record and of
 * segments, roots after objects and classes after their instances as
 * HotSpot may write them, thread names chased through the heap, the
 * reference fields declared and named by each reference, the
 * object layout (against sizes jcmd GC.class_histogram reported on JDK
 * 17) and how the reader picks it, and damage: a cut at every byte, bad
 * tags, lengths that do not add up, hostile lengths, the limits, and
 * reads that fail; gzipped dumps (jcmd GC.heap_dump -gz) read as their
 * bytes do, whole, piped, cut or damaged. Every message is checked word for word, with its
 * place: these are the words heaptrace(1), DIAGNOSTICS, catalogs.
 */
#include <criterion/criterion.h>

#include "lib/read/hprof_layout.h"
#include "lib/read/source.h"
#include "testutil.h"
#include "util/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* ---- Building dumps ---------------------------------------------------- */

struct hp {
	uint8_t *buf;
	size_t len, cap;
	unsigned id;        /* id size */
	size_t rec_at;      /* header of the record being written */
	size_t bounds[256]; /* where records start, and where the last ends */
	size_t n_bounds;
	/* zero bytes the file holds at hole_at that buf does not: a dump
	 * bigger than a test should build in memory, written sparse */
	size_t hole_at;
	uint64_t hole;
};

static void put(struct hp *h, const void *p, size_t n)
{
	if (!n)
		return;
	if (h->len + n > h->cap) {
		h->cap = (h->len + n) * 2;
		h->buf = realloc(h->buf, h->cap);
		cr_assert_not_null(h->buf);
	}
	memcpy(h->buf + h->len, p, n);
	h->len += n;
}

static void u1(struct hp *h, uint32_t v)
{
	uint8_t b = (uint8_t)v;

	put(h, &b, 1);
}

static void u2(struct hp *h, uint32_t v)
{
	u1(h, v >> 8);
	u1(h, v);
}

static void u4(struct hp *h, uint32_t v)
{
	u2(h, v >> 16);
	u2(h, v);
}

static void u8(struct hp *h, uint64_t v)
{
	u4(h, (uint32_t)(v >> 32));
	u4(h, (uint32_t)v);
}

static void id(struct hp *h, uint64_t v)
{
	if (h->id == 8)
		u8(h, v);
	else
		u4(h, (uint32_t)v);
}

static void start(struct hp *h, const char *version, unsigned id_size)
{
	memset(h, 0, sizeof(*h));
	h->id = id_size;
	put(h, "JAVA PROFILE ", 13);
	put(h, version, strlen(version) + 1);
	u4(h, id_size);
	u8(h, 1700000000123ull); /* 2023-11-14T22:13:20.123Z */
}

static void begin(struct hp *h, unsigned tag)
{
	h->rec_at = h->len;
	h->bounds[h->n_bounds++] = h->len;
	u1(h, tag);
	u4(h, 0);
	u4(h, 0); /* patched by end() */
}

static void end(struct hp *h)
{
	uint32_t n = (uint32_t)(h->len - h->rec_at - 9 +
				(h->hole_at > h->rec_at ? h->hole : 0));

	h->buf[h->rec_at + 5] = (uint8_t)(n >> 24);
	h->buf[h->rec_at + 6] = (uint8_t)(n >> 16);
	h->buf[h->rec_at + 7] = (uint8_t)(n >> 8);
	h->buf[h->rec_at + 8] = (uint8_t)n;
	h->bounds[h->n_bounds] = h->len;
}

/* n zero bytes of the file, here, that take no memory (one a file). */
static void hole(struct hp *h, uint64_t n)
{
	cr_assert_eq(h->hole, 0, "one hole a file");
	h->hole_at = h->len;
	h->hole = n;
}

static uint64_t file_size(const struct hp *h)
{
	return h->len + h->hole;
}

static void utf8(struct hp *h, uint64_t sid, const char *s)
{
	begin(h, 0x01);
	id(h, sid);
	put(h, s, strlen(s));
	end(h);
}

static void load_class(struct hp *h, uint32_t serial, uint64_t cls,
		       uint64_t name)
{
	begin(h, 0x02);
	u4(h, serial);
	id(h, cls);
	u4(h, 0);
	id(h, name);
	end(h);
}

static void frame(struct hp *h, uint64_t fid, uint64_t method, uint64_t sig,
		  uint64_t file, uint32_t class_serial, int32_t line)
{
	begin(h, 0x04);
	id(h, fid);
	id(h, method);
	id(h, sig);
	id(h, file);
	u4(h, class_serial);
	u4(h, (uint32_t)line);
	end(h);
}

static void trace(struct hp *h, uint32_t serial, uint32_t thread,
		  uint32_t n, const uint64_t *frames)
{
	begin(h, 0x05);
	u4(h, serial);
	u4(h, thread);
	u4(h, n);
	for (uint32_t i = 0; i < n; i++)
		id(h, frames[i]);
	end(h);
}

static void start_thread(struct hp *h, uint32_t serial, uint64_t obj,
			 uint32_t trace_serial, uint64_t name)
{
	begin(h, 0x0a);
	u4(h, serial);
	id(h, obj);
	u4(h, trace_serial);
	id(h, name);
	id(h, 0);
	id(h, 0);
	end(h);
}

/* Sub-records, inside a HEAP_DUMP or HEAP_DUMP_SEGMENT. */

static void root(struct hp *h, unsigned tag, uint64_t obj, uint32_t a,
		 uint32_t b)
{
	u1(h, tag);
	id(h, obj);
	switch (tag) {
	case 0x01:
		id(h, a);
		break;
	case 0x02:
	case 0x03:
	case 0x08:
		u4(h, a);
		u4(h, b);
		break;
	case 0x04:
	case 0x06:
		u4(h, a);
		break;
	default:
		break;
	}
}

struct field {
	uint64_t name;
	uint8_t type;
	uint64_t value; /* statics */
};

static unsigned width(const struct hp *h, uint8_t type)
{
	return hprof_type_width(type, h->id);
}

static void value(struct hp *h, uint8_t type, uint64_t v)
{
	switch (width(h, type)) {
	case 1: u1(h, (uint32_t)v); break;
	case 2: u2(h, (uint32_t)v); break;
	case 4: u4(h, (uint32_t)v); break;
	default: u8(h, v); break;
	}
}

static void class_dump(struct hp *h, uint64_t cls, uint64_t super,
		       uint64_t loader, size_t n_statics,
		       const struct field *statics, size_t n_fields,
		       const struct field *fields)
{
	u1(h, 0x20);
	id(h, cls);
	u4(h, 0);
	id(h, super);
	id(h, loader);
	id(h, 0);
	id(h, 0);
	id(h, 0);
	id(h, 0);
	u4(h, 0);
	u2(h, 1); /* one constant pool entry, skipped */
	u2(h, 7);
	u1(h, 10);
	u4(h, 42);
	u2(h, (uint32_t)n_statics);
	for (size_t i = 0; i < n_statics; i++) {
		id(h, statics[i].name);
		u1(h, statics[i].type);
		value(h, statics[i].type, statics[i].value);
	}
	u2(h, (uint32_t)n_fields);
	for (size_t i = 0; i < n_fields; i++) {
		id(h, fields[i].name);
		u1(h, fields[i].type);
	}
}

/* An instance whose field values (bytes in the dump's order) follow. */
static void instance(struct hp *h, uint64_t obj, uint64_t cls, uint32_t n)
{
	u1(h, 0x21);
	id(h, obj);
	u4(h, 0);
	id(h, cls);
	u4(h, n);
}

static void obj_array(struct hp *h, uint64_t obj, uint64_t cls, uint32_t n,
		      const uint64_t *refs)
{
	u1(h, 0x22);
	id(h, obj);
	u4(h, 0);
	u4(h, n);
	id(h, cls);
	for (uint32_t i = 0; i < n; i++)
		id(h, refs[i]);
}

static void prim_array(struct hp *h, uint64_t obj, uint8_t type, uint32_t n,
		       const void *data)
{
	u1(h, 0x23);
	id(h, obj);
	u4(h, 0);
	u4(h, n);
	u1(h, type);
	put(h, data, (size_t)n * width(h, type));
}

/* ---- Reading ----------------------------------------------------------- */

/* An event, copied out of the reader's buffers. */
struct ev {
	enum ht_event_type type;
	uint64_t a, b, c;   /* class: id, size, has_size; container: type,
			       id1, id2; object: id, class, size */
	uint32_t flags;
	char name[128];
	size_t n;
	uint64_t refs[16];
	bool has_ref_fields;
	uint64_t ref_fields[16];
	uint64_t offset;
	uint64_t index;     /* in the trace, fields events included */
	bool has_time;      /* container: its time (format version 3) */
	uint64_t time;
	/* an object's values and array contents (format version 3) */
	size_t n_values;
	uint64_t value_fields[16], values[16];
	bool has_array;
	struct ht_array_values array; /* data: into array_data */
	uint8_t array_data[HT_VALUES_WHOLE_MAX];
};

/* A field the fields events declared, its name copied. */
struct declared {
	struct ht_field f;
	char name[64];
	uint64_t event_index; /* in the trace, fields events included */
};

struct run {
	struct ht_reader *r;
	struct ev *ev;
	size_t n;
	int rc;
	struct ht_error err;
	struct ht_header header;
	char meta[8][2][128];
	/* the fields events, kept apart from ev so that tests of the other
	 * events count them as they always came */
	struct declared fields[64];
	size_t n_fields;
	uint64_t events;    /* of every type */
};

static void copy_event(struct ev *e, const struct ht_event *ev,
		       struct ht_position pos)
{
	memset(e, 0, sizeof(*e));
	e->type = ev->type;
	e->offset = pos.offset;
	switch (ev->type) {
	case HT_EV_CLASS:
		e->a = ev->u.class_.id;
		e->b = ev->u.class_.size;
		e->c = ev->u.class_.has_size;
		snprintf(e->name, sizeof(e->name), "%s", ev->u.class_.name);
		break;
	case HT_EV_THREAD:
	case HT_EV_METHOD:
		e->a = ev->u.thread.id;
		snprintf(e->name, sizeof(e->name), "%s", ev->u.thread.name);
		break;
	case HT_EV_BEGIN_CONTAINER:
		e->a = ev->u.begin_container.type;
		e->b = ev->u.begin_container.id1;
		e->c = ev->u.begin_container.id2;
		e->has_time = ev->has_time;
		e->time = ev->time;
		break;
	case HT_EV_ROOT_REFERENCES:
		e->n = ev->u.root_references.count;
		for (size_t i = 0; i < e->n && i < 16; i++) {
			e->refs[i] = ev->u.root_references.refs[i];
			cr_assert_eq(ev->u.root_references.flags[i], 0);
		}
		break;
	case HT_EV_OBJECT_REFERENCES:
		e->a = ev->u.object_references.id;
		e->b = ev->u.object_references.class_id;
		e->c = ev->u.object_references.size;
		e->flags = ev->u.object_references.flags;
		e->n = ev->u.object_references.count;
		for (size_t i = 0; i < e->n && i < 16; i++)
			e->refs[i] = ev->u.object_references.refs[i];
		e->has_ref_fields = ev->u.object_references.ref_fields != NULL;
		for (size_t i = 0; e->has_ref_fields && i < e->n && i < 16; i++)
			e->ref_fields[i] = ev->u.object_references.ref_fields[i];
		e->n_values = ev->u.object_references.n_values;
		cr_assert_leq(e->n_values, 16, "more values than a test makes");
		for (size_t i = 0; i < e->n_values; i++) {
			e->value_fields[i] =
				ev->u.object_references.value_fields[i];
			e->values[i] = ev->u.object_references.values[i];
		}
		e->has_array = ev->u.object_references.array != NULL;
		if (e->has_array) {
			const struct ht_array_values *a =
				ev->u.object_references.array;
			size_t bytes = a->stored * ht_value_type_width(a->type);

			cr_assert_leq(bytes, sizeof(e->array_data));
			e->array = *a;
			memcpy(e->array_data, a->data, bytes);
			e->array.data = e->array_data;
		}
		break;
	default:
		cr_assert_fail("unexpected event type %d", ev->type);
	}
}

static void keep_fields(struct run *run, const struct ht_ev_fields *e)
{
	for (size_t i = 0; i < e->count; i++) {
		struct declared *d = &run->fields[run->n_fields];

		cr_assert_lt(run->n_fields, 64, "more fields than a test makes");
		d->f = e->fields[i];
		cr_assert_not_null(e->fields[i].name);
		snprintf(d->name, sizeof(d->name), "%s", e->fields[i].name);
		d->f.name = d->name;
		d->event_index = run->events - 1;
		run->n_fields++;
	}
}

/* Reads every event of the open run->r; run->rc is the last result. */
static void read_events(struct run *run)
{
	struct ht_event ev;
	size_t cap = 0;

	cr_assert_str_eq(ht_reader_format(run->r), "hprof");
	run->header = *ht_reader_header(run->r);
	for (size_t i = 0; i < run->header.n_metadata && i < 8; i++) {
		snprintf(run->meta[i][0], 128, "%s",
			 run->header.metadata[i].key);
		snprintf(run->meta[i][1], 128, "%s",
			 run->header.metadata[i].value);
	}
	while ((run->rc = ht_reader_next(run->r, &ev, &run->err)) == 1) {
		run->events++;
		if (ev.type == HT_EV_FIELDS) {
			keep_fields(run, &ev.u.fields);
			continue;
		}
		if (run->n == cap) {
			cap = cap ? cap * 2 : 64;
			run->ev = realloc(run->ev, cap * sizeof(*run->ev));
			cr_assert_not_null(run->ev);
		}
		copy_event(&run->ev[run->n], &ev, ht_reader_position(run->r));
		run->ev[run->n++].index = run->events - 1;
	}
}

/* Reads every event of the file at path, opened with opts (NULL for the
 * defaults); rc -2 when it is not opened. */
static struct run read_path_with(const char *path,
				 const struct ht_reader_options *opts)
{
	struct run run = {0};

	run.r = ht_reader_open_with(path, opts, &run.err);
	if (!run.r) {
		run.rc = -2;
		return run;
	}
	read_events(&run);
	return run;
}

static struct run read_path(const char *path)
{
	return read_path_with(path, NULL);
}

/* Opens f as ht_reader_open does once it has seen the 'J': a test that
 * hands the HPROF source its FILE holds the descriptor read. NULL, and
 * *err filled, when the source refuses it. */
static struct ht_reader *open_hprof(FILE *f, const char *path,
				    struct ht_error *err)
{
	struct ht_reader *r = calloc(1, sizeof(*r));

	cr_assert(r && (r->path = strdup(path)));
	if (hprof_source_open(r, f, r->path, err) == 0)
		return r;
	free(r->path);
	free(r);
	return NULL;
}

/* Writes the dump to a fresh file, its hole as a hole; returns the path. */
static const char *write_hp(const struct hp *h, const char *name)
{
	const char *path;
	size_t rest = h->len - h->hole_at;
	FILE *f;

	if (!h->hole)
		return tmp_file_with(name, h->buf, h->len);
	path = tmp_path(name);
	f = fopen(path, "wb");
	cr_assert(f && fwrite(h->buf, 1, h->hole_at, f) == h->hole_at &&
		  fseeko(f, (off_t)h->hole, SEEK_CUR) == 0 &&
		  fwrite(h->buf + h->hole_at, 1, rest, f) == rest &&
		  fclose(f) == 0);
	return path;
}

static struct run read_hp(const struct hp *h, const char *name)
{
	return read_path(write_hp(h, name));
}

static void done(struct run *run)
{
	if (run->r)
		ht_reader_close(run->r);
	free(run->ev);
}

static const char *meta(const struct run *run, const char *key)
{
	for (size_t i = 0; i < run->header.n_metadata && i < 8; i++)
		if (strcmp(run->meta[i][0], key) == 0)
			return run->meta[i][1];
	return NULL;
}

/* The index of the first event at or after `from` of type t (and for
 * containers, of container type ct); -1 if none. */
static long find(const struct run *run, size_t from, enum ht_event_type t,
		 uint64_t key)
{
	for (size_t i = from; i < run->n; i++)
		if (run->ev[i].type == t &&
		    (t == HT_EV_ROOT_REFERENCES || run->ev[i].a == key))
			return (long)i;
	return -1;
}

static const struct ev *object(const struct run *run, uint64_t obj)
{
	long i = find(run, 0, HT_EV_OBJECT_REFERENCES, obj);

	cr_assert_geq(i, 0, "no object 0x%llx", (unsigned long long)obj);
	return &run->ev[i];
}

static const struct ev *class_ev(const struct run *run, uint64_t cls)
{
	long i = find(run, 0, HT_EV_CLASS, cls);

	cr_assert_geq(i, 0, "no class 0x%llx", (unsigned long long)cls);
	return &run->ev[i];
}

static void assert_refs(const struct ev *e, size_t n, const uint64_t *want)
{
	cr_assert_eq(e->n, n, "0x%llx: %zu refs, not %zu",
		     (unsigned long long)e->a, e->n, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(e->refs[i], want[i], "0x%llx ref %zu: 0x%llx",
			     (unsigned long long)e->a, i,
			     (unsigned long long)e->refs[i]);
}

/* The container event at i, and the roots that follow it. */
static void assert_container(const struct run *run, size_t i, unsigned type,
			     uint64_t id1, uint64_t id2, size_t n_roots,
			     const uint64_t *roots)
{
	cr_assert_lt(i + (n_roots ? 1 : 0), run->n);
	cr_assert_eq(run->ev[i].type, HT_EV_BEGIN_CONTAINER, "event %zu", i);
	cr_assert_eq(run->ev[i].a, type, "event %zu: container %llu, not %u",
		     i, (unsigned long long)run->ev[i].a, type);
	cr_assert_eq(run->ev[i].b, id1, "event %zu: id1 0x%llx", i,
		     (unsigned long long)run->ev[i].b);
	cr_assert_eq(run->ev[i].c, id2, "event %zu: id2 0x%llx", i,
		     (unsigned long long)run->ev[i].c);
	if (!n_roots)
		return;
	cr_assert_eq(run->ev[i + 1].type, HT_EV_ROOT_REFERENCES);
	assert_refs(&run->ev[i + 1], n_roots, roots);
}

/* ---- The standard dump ------------------------------------------------- */

enum {
	S_OBJECT = 1, S_CLASS, S_FOO, S_INTS, S_FOOS, S_A, S_B, S_C, S_S,
	S_X, S_MAIN, S_SIG, S_WORKER, S_SLEEP, S_RESOLVED, S_FILE,
};

#define OBJECT 0x100
#define CLASS 0x200
#define FOO 0x300
#define INTS 0x400
#define FOOS 0x500
#define LOADER 0x900

static void names(struct hp *h)
{
	utf8(h, S_OBJECT, "java/lang/Object");
	utf8(h, S_CLASS, "java/lang/Class");
	utf8(h, S_FOO, "pkg/Foo$Bar");
	utf8(h, S_INTS, "[I");
	utf8(h, S_FOOS, "[Lpkg/Foo$Bar;");
	utf8(h, S_A, "a");
	utf8(h, S_B, "b");
	utf8(h, S_C, "c");
	utf8(h, S_S, "s");
	utf8(h, S_X, "x");
	utf8(h, S_MAIN, "main");
	utf8(h, S_SIG, "([Ljava/lang/String;)V");
	utf8(h, S_WORKER, "worker");
	utf8(h, S_SLEEP, "sleep");
	utf8(h, S_FILE, "Foo.java");
	utf8(h, S_RESOLVED, "<resolved_references>");
	load_class(h, 1, OBJECT, S_OBJECT);
	load_class(h, 2, CLASS, S_CLASS);
	load_class(h, 3, FOO, S_FOO);
	load_class(h, 4, INTS, S_INTS);
	load_class(h, 5, FOOS, S_FOOS);
}

static void stacks(struct hp *h)
{
	static const uint64_t frames[] = {0x52, 0x50};

	frame(h, 0x50, S_MAIN, S_SIG, S_FILE, 3, 7);
	frame(h, 0x51, S_MAIN, S_SIG, S_FILE, 3, 9);   /* another line */
	frame(h, 0x52, S_SLEEP, S_SIG, S_FILE, 3, -3); /* native */
	frame(h, 0x53, S_MAIN, S_SIG, S_FILE, 3, 7);   /* 0x50's place */
	frame(h, 0x54, S_MAIN, S_SIG, S_FILE, 3, 0);   /* no line known */
	frame(h, 0x55, S_MAIN, S_SIG, 0, 3, 7);        /* nor its file */
	trace(h, 10, 1, 2, frames);
	start_thread(h, 1, 0x1000, 10, S_WORKER);
}

static void classes(struct hp *h)
{
	static const struct field foo_statics[] = {
		{S_S, 2, 0x2000},
		{S_X, 10, 5},
		{S_RESOLVED, 2, 0x2200}, /* HotSpot's: no room in the mirror */
	};
	/* in the dump's order, which HotSpot writes reversed */
	static const struct field foo_fields[] = {
		{S_A, 10, 0},
		{S_B, 2, 0},
		{S_C, 11, 0},
	};

	class_dump(h, OBJECT, 0, 0, 0, NULL, 0, NULL);
	class_dump(h, CLASS, OBJECT, 0, 0, NULL, 0, NULL);
	class_dump(h, FOO, OBJECT, LOADER, 3, foo_statics, 3, foo_fields);
	class_dump(h, INTS, OBJECT, 0, 0, NULL, 0, NULL);
	class_dump(h, FOOS, OBJECT, 0, 0, NULL, 0, NULL);
}

static void foo(struct hp *h, uint64_t obj, uint32_t a, uint64_t b,
		uint64_t c)
{
	instance(h, obj, FOO, 4 + h->id + 8);
	u4(h, a);
	id(h, b);
	u8(h, c);
}

static void objects(struct hp *h)
{
	static const uint64_t refs[] = {0x2000, 0, 0x2100};
	static const uint8_t ints[12] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3};

	foo(h, 0x2000, 1, 0x2100, 3);
	foo(h, 0x2100, 2, 0, 4);
	obj_array(h, 0x2200, FOOS, 3, refs);
	prim_array(h, 0x2300, 10, 3, ints);
	instance(h, 0x1000, OBJECT, 0);
}

/* Every root kind, after the objects as HotSpot writes them. */
static void roots(struct hp *h)
{
	root(h, 0x08, 0x1000, 1, 10);     /* THREAD_OBJECT */
	root(h, 0x03, 0x2000, 1, 1);      /* JAVA_FRAME, depth 1 */
	root(h, 0x02, 0x2100, 1, 0);      /* JNI_LOCAL, depth 0 */
	root(h, 0x04, 0x2200, 1, 0);      /* NATIVE_STACK */
	root(h, 0x06, 0x2300, 1, 0);      /* THREAD_BLOCK */
	root(h, 0x01, 0x2200, 0x77, 0);   /* JNI_GLOBAL */
	root(h, 0x05, FOO, 0, 0);         /* STICKY_CLASS */
	root(h, 0x07, 0x2100, 0, 0);      /* MONITOR_USED */
	root(h, 0xff, 0x2000, 0, 0);      /* UNKNOWN */
}

/* One dump in two segments, classes first, roots last, as HotSpot does. */
static void standard(struct hp *h, unsigned id_size)
{
	start(h, "1.0.2", id_size);
	names(h);
	stacks(h);
	begin(h, 0x1c);
	classes(h);
	end(h);
	begin(h, 0x1c);
	objects(h);
	roots(h);
	end(h);
	begin(h, 0x2c);
	end(h);
}

/* Sizes the standard dump's objects have, by hand from HotSpot's rules:
 * index 0 for 8-byte ids (compressed oops), 1 for 4-byte ids (32-bit). */
struct sizes {
	uint64_t object, foo, mirror, foo_mirror, ints3, foos3;
};

static const struct sizes sizes[] = {
	/* Foo: int a at 12, long c at 16, ref b at 24, end 28; Class: its
	 * injected fields end at 48; Foo's mirror adds a ref and an int */
	{16, 32, 48, 56, 32, 32},
	/* 8-byte header, 4-byte words; arrays from 12 */
	{8, 24, 40, 48, 24, 24},
};

static void check_standard(const struct run *run, const struct sizes *z)
{
	static const uint64_t thread_roots[] = {0x1000, 0x2200, 0x2300};
	static const uint64_t native_roots[] = {0x2100};
	static const uint64_t frame_roots[] = {0x2000};
	static const uint64_t class_roots[] = {FOO};
	static const uint64_t global_roots[] = {0x2200};
	static const uint64_t monitor_roots[] = {0x2100};
	static const uint64_t unknown_roots[] = {0x2000};
	static const uint64_t foo_class_refs[] = {0x2000, 0x2200, OBJECT,
						  LOADER, 0, 0};
	static const uint64_t object_class_refs[] = {0, 0, 0, 0};
	/* each object's link to its class first (doc/design.md section 1) */
	static const uint64_t foo_refs[] = {FOO, 0x2100};
	static const uint64_t null_ref[] = {FOO, 0};
	static const uint64_t array_refs[] = {FOOS, 0x2000, 0, 0x2100};
	static const uint64_t ints_refs[] = {INTS};
	long i;

	cr_assert_eq(run->rc, 0, "%s", run->err.message);
	cr_assert_str_eq(run->header.runtime, "jvm");
	cr_assert_eq(run->header.reports_survivors, false);
	cr_assert_str_eq(meta(run, "hprof_time"), "2023-11-14T22:13:20.123Z");

	cr_assert_str_eq(class_ev(run, OBJECT)->name, "java.lang.Object");
	cr_assert_eq(class_ev(run, OBJECT)->b, z->object);
	cr_assert_str_eq(class_ev(run, FOO)->name, "pkg.Foo$Bar");
	cr_assert_eq(class_ev(run, FOO)->b, z->foo);
	cr_assert_str_eq(class_ev(run, INTS)->name, "int[]");
	cr_assert_eq(class_ev(run, INTS)->c, false, "arrays have no one size");
	cr_assert_str_eq(class_ev(run, FOOS)->name, "pkg.Foo$Bar[]");
	cr_assert_eq(class_ev(run, CLASS)->c, false, "nor have mirrors");

	i = find(run, 0, HT_EV_THREAD, 0x1000);
	cr_assert_geq(i, 0);
	cr_assert_str_eq(run->ev[i].name, "worker");
	i = find(run, 0, HT_EV_METHOD, 0x50);
	cr_assert_geq(i, 0);
	cr_assert_str_eq(run->ev[i].name, "pkg.Foo$Bar.main(Foo.java:7)");
	cr_assert_lt(find(run, 0, HT_EV_METHOD, 0x53), 0,
		     "frame 0x53 is at 0x50's place");
	i = find(run, 0, HT_EV_METHOD, 0x51);
	cr_assert_geq(i, 0, "frame 0x51 is at a place of its own");
	cr_assert_str_eq(run->ev[i].name, "pkg.Foo$Bar.main(Foo.java:9)");
	i = find(run, 0, HT_EV_METHOD, 0x52);
	cr_assert_str_eq(run->ev[i].name, "pkg.Foo$Bar.sleep(native)");
	i = find(run, 0, HT_EV_METHOD, 0x54);
	cr_assert_str_eq(run->ev[i].name, "pkg.Foo$Bar.main(Foo.java)");
	i = find(run, 0, HT_EV_METHOD, 0x55);
	cr_assert_str_eq(run->ev[i].name, "pkg.Foo$Bar.main");

	/* the roots, before the heap, each in its container */
	i = find(run, 0, HT_EV_BEGIN_CONTAINER, HT_C_BEGIN);
	cr_assert_geq(i, 0);
	assert_container(run, (size_t)i + 1, HT_C_RT_THREAD, 0x1000, 0, 3,
			 thread_roots);
	assert_container(run, (size_t)i + 3, HT_C_RT_NATIVE, 0x52, 0x52, 1,
			 native_roots);
	assert_container(run, (size_t)i + 5, HT_C_RT_INTERPRETED, 0x50, 0x50,
			 1, frame_roots);
	assert_container(run, (size_t)i + 7, HT_C_RT_CLASS, FOO, 0, 1,
			 class_roots);
	assert_container(run, (size_t)i + 9, HT_C_RT_STRONGPTR, 0, 0, 1,
			 global_roots);
	assert_container(run, (size_t)i + 11, HT_C_RT_INTERNALVM, 0, 0, 1,
			 monitor_roots);
	assert_container(run, (size_t)i + 13, HT_C_RT_ROOTTABLE, 0, 0, 1,
			 unknown_roots);
	assert_container(run, (size_t)i + 15, HT_C_HEAP, 0, 0, 0, NULL);

	/* class objects: statics, then super, loader, signers, domain */
	cr_assert_eq(object(run, OBJECT)->b, CLASS);
	cr_assert_eq(object(run, OBJECT)->c, z->mirror);
	assert_refs(object(run, OBJECT), 4, object_class_refs);
	cr_assert_eq(object(run, FOO)->c, z->foo_mirror);
	assert_refs(object(run, FOO), 6, foo_class_refs);
	/* instances: references in field order, nulls kept */
	cr_assert_eq(object(run, 0x2000)->b, FOO);
	cr_assert_eq(object(run, 0x2000)->c, z->foo);
	assert_refs(object(run, 0x2000), 2, foo_refs);
	assert_refs(object(run, 0x2100), 2, null_ref);
	cr_assert_eq(object(run, 0x2200)->b, FOOS);
	cr_assert_eq(object(run, 0x2200)->c, z->foos3);
	assert_refs(object(run, 0x2200), 4, array_refs);
	cr_assert_eq(object(run, 0x2300)->b, INTS);
	cr_assert_eq(object(run, 0x2300)->c, z->ints3);
	assert_refs(object(run, 0x2300), 1, ints_refs);
	cr_assert_eq(object(run, 0x1000)->c, z->object);
	cr_assert_eq(run->ev[run->n - 1].type, HT_EV_BEGIN_CONTAINER);
	cr_assert_eq(run->ev[run->n - 1].a, HT_C_END);
}

Test(hprof, standard_8_byte_ids)
{
	struct hp h;
	struct run run;

	standard(&h, 8);
	run = read_hp(&h, "std8.hprof");
	check_standard(&run, &sizes[0]);
	cr_assert_eq(run.header.pointer_size, 8);
	cr_assert_str_eq(meta(&run, "hprof_version"), "1.0.2");
	cr_assert_str_eq(meta(&run, "hprof_id_size"), "8");
	done(&run);
	free(h.buf);
}

/* The field declared as (class, name, kind), which must be there once. */
static const struct declared *declared(const struct run *run, uint64_t cls,
				       const char *name, uint8_t kind)
{
	const struct declared *found = NULL;

	for (size_t i = 0; i < run->n_fields; i++) {
		const struct declared *d = &run->fields[i];

		if (d->f.class_id != cls || strcmp(d->name, name) != 0 ||
		    d->f.kind != kind)
			continue;
		cr_assert_null(found, "field %s of 0x%llx declared twice", name,
			       (unsigned long long)cls);
		found = d;
	}
	cr_assert_not_null(found, "no field %s of 0x%llx", name,
			   (unsigned long long)cls);
	return found;
}

static void assert_ref_fields(const struct ev *e, size_t n,
			      const uint64_t *want)
{
	cr_assert(e->has_ref_fields, "0x%llx has no ref_fields",
		  (unsigned long long)e->a);
	cr_assert_eq(e->n, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(e->ref_fields[i], want[i],
			     "0x%llx ref %zu: field %llu, not %llu",
			     (unsigned long long)e->a, i,
			     (unsigned long long)e->ref_fields[i],
			     (unsigned long long)want[i]);
}

/* The id of the link named name: a field of class 0. */
static uint64_t link_id(const struct run *run, const char *name)
{
	for (size_t i = 0; i < run->n_fields; i++)
		if (run->fields[i].f.class_id == 0 &&
		    strcmp(run->fields[i].name, name) == 0)
			return run->fields[i].f.id;
	cr_assert_fail("no link %s", name);
	return 0;
}

/* Foo's instance field b (a reference after the int a), its statics s and
 * HotSpot's <resolved_references>: declared before the dump, each with its
 * own nonzero id, and named by the references read from them; an array's
 * elements are no field. An object's class (first) and a class object's
 * super, loader, signers and domain (last) are links, fields of class 0. */
Test(hprof, reference_fields)
{
	struct hp h;
	struct run run;
	const struct declared *b, *s, *resolved;
	uint64_t cls, super, loader, signers, domain;
	long first_dump;

	standard(&h, 8);
	run = read_hp(&h, "fields.hprof");
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	cr_assert_eq(run.n_fields, 8,
		     "five links and Foo's three reference fields, no other");
	cls = link_id(&run, HT_LINK_CLASS);
	super = link_id(&run, HT_LINK_SUPER);
	loader = link_id(&run, HT_LINK_LOADER);
	signers = link_id(&run, HT_LINK_SIGNERS);
	domain = link_id(&run, HT_LINK_DOMAIN);
	b = declared(&run, FOO, "b", HT_FIELD_INSTANCE);
	s = declared(&run, FOO, "s", HT_FIELD_STATIC);
	resolved = declared(&run, FOO, "<resolved_references>",
			    HT_FIELD_STATIC);
	cr_assert(b->f.has_offset);
	cr_assert_eq(b->f.offset, 4, "b follows the 4-byte int a");
	cr_assert(!s->f.has_offset && !resolved->f.has_offset);
	cr_assert(b->f.id && s->f.id && resolved->f.id);
	cr_assert(b->f.id != s->f.id && s->f.id != resolved->f.id &&
		  b->f.id != resolved->f.id);
	first_dump = find(&run, 0, HT_EV_BEGIN_CONTAINER, HT_C_BEGIN);
	cr_assert_geq(first_dump, 0);
	for (size_t i = 0; i < run.n_fields; i++)
		cr_assert_lt(run.fields[i].event_index,
			     run.ev[first_dump].index, "declared before the dump");

	assert_ref_fields(object(&run, 0x2000), 2,
			  (uint64_t[]){cls, b->f.id});
	assert_ref_fields(object(&run, 0x2100), 2,
			  (uint64_t[]){cls, b->f.id});
	assert_ref_fields(object(&run, FOO), 6,
			  (uint64_t[]){s->f.id, resolved->f.id, super, loader,
				       signers, domain});
	assert_ref_fields(object(&run, OBJECT), 4,
			  (uint64_t[]){super, loader, signers, domain});
	assert_ref_fields(object(&run, 0x2200), 4,
			  (uint64_t[]){cls, 0, 0, 0});
	assert_ref_fields(object(&run, 0x2300), 1, (uint64_t[]){cls});
	assert_ref_fields(object(&run, 0x1000), 1, (uint64_t[]){cls});
	done(&run);
	free(h.buf);
}

/* An instance's references come its own class's first, then its super
 * class's, each named by the class that declares it; the offset of a field
 * is where its value lies among its class's own values (first, in an
 * instance of that class). */
Test(hprof, inherited_reference_fields)
{
	enum { N_BASE = 1, N_SUB, N_X, N_A, N_C };
	static const struct field base_fields[] = {{N_X, 2, 0}};
	static const struct field sub_fields[] = {{N_C, 10, 0}, {N_A, 2, 0}};
	const struct declared *x, *a;
	struct hp h;
	struct run run;

	start(&h, "1.0.2", 8);
	utf8(&h, N_BASE, "Base");
	utf8(&h, N_SUB, "Sub");
	utf8(&h, N_X, "x");
	utf8(&h, N_A, "a");
	utf8(&h, N_C, "c");
	load_class(&h, 1, 0x100, N_BASE);
	load_class(&h, 2, 0x200, N_SUB);
	begin(&h, 0x1c);
	class_dump(&h, 0x100, 0, 0, 0, NULL, 1, base_fields);
	class_dump(&h, 0x200, 0x100, 0, 0, NULL, 2, sub_fields);
	instance(&h, 0x1000, 0x200, 4 + 8 + 8);
	u4(&h, 7);      /* Sub.c */
	id(&h, 0x1100); /* Sub.a */
	id(&h, 0x1200); /* Base.x */
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	run = read_hp(&h, "inherited.hprof");
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	x = declared(&run, 0x100, "x", HT_FIELD_INSTANCE);
	a = declared(&run, 0x200, "a", HT_FIELD_INSTANCE);
	cr_assert_eq(x->f.offset, 0);
	cr_assert_eq(a->f.offset, 4);
	assert_refs(object(&run, 0x1000), 3,
		    (uint64_t[]){0x200, 0x1100, 0x1200});
	assert_ref_fields(object(&run, 0x1000), 3,
			  (uint64_t[]){link_id(&run, HT_LINK_CLASS), a->f.id,
					x->f.id});
	done(&run);
	free(h.buf);
}

Test(hprof, standard_4_byte_ids)
{
	struct hp h;
	struct run run;

	standard(&h, 4);
	run = read_hp(&h, "std4.hprof");
	check_standard(&run, &sizes[1]);
	cr_assert_eq(run.header.pointer_size, 4);
	cr_assert_str_eq(meta(&run, "object_layout"), "32-bit");
	done(&run);
	free(h.buf);
}

/* HPROF 1.0.1: whole HEAP_DUMP records, each a dump of its own. */
Test(hprof, heap_dump_records_are_dumps)
{
	struct hp h;
	struct run run;
	size_t begins = 0, ends = 0;

	start(&h, "1.0.1", 8);
	names(&h);
	stacks(&h);
	for (int d = 0; d < 2; d++) {
		begin(&h, 0x0c);
		classes(&h);
		objects(&h);
		roots(&h);
		end(&h);
	}
	run = read_hp(&h, "two.hprof");
	check_standard(&run, &sizes[0]);
	for (size_t i = 0; i < run.n; i++) {
		if (run.ev[i].type != HT_EV_BEGIN_CONTAINER)
			continue;
		begins += run.ev[i].a == HT_C_BEGIN;
		ends += run.ev[i].a == HT_C_END;
	}
	cr_assert_eq(begins, 2);
	cr_assert_eq(ends, 2);
	cr_assert_str_eq(meta(&run, "hprof_version"), "1.0.1");
	done(&run);
	free(h.buf);
}

/* A thread's whole stack: every frame of its trace is begun, from the
 * top, those whose locals hold nothing with no roots. */
Test(hprof, every_frame_of_a_stack_is_begun)
{
	static const uint64_t frames[] = {0x52, 0x51, 0x54, 0x50};
	static const uint64_t thread_roots[] = {0x1000};
	static const uint64_t frame_roots[] = {0x2000};
	struct hp h;
	struct run run;
	long i;

	start(&h, "1.0.2", 8);
	names(&h);
	stacks(&h);
	trace(&h, 11, 2, 4, frames);
	start_thread(&h, 2, 0x1000, 11, S_MAIN);
	begin(&h, 0x0c);
	classes(&h);
	objects(&h);
	root(&h, 0x08, 0x1000, 2, 11);    /* THREAD_OBJECT */
	root(&h, 0x03, 0x2000, 2, 2);     /* JAVA_FRAME, depth 2 */
	end(&h);
	run = read_hp(&h, "stack.hprof");
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	i = find(&run, 0, HT_EV_BEGIN_CONTAINER, HT_C_BEGIN);
	cr_assert_geq(i, 0);
	assert_container(&run, (size_t)i + 1, HT_C_RT_THREAD, 0x1000, 0, 1,
			 thread_roots);
	assert_container(&run, (size_t)i + 3, HT_C_RT_NATIVE, 0x52, 0x52, 0,
			 NULL);
	assert_container(&run, (size_t)i + 4, HT_C_RT_INTERPRETED, 0x51, 0x51,
			 0, NULL);
	assert_container(&run, (size_t)i + 5, HT_C_RT_INTERPRETED, 0x54, 0x54,
			 1, frame_roots);
	assert_container(&run, (size_t)i + 7, HT_C_RT_INTERPRETED, 0x50, 0x50,
			 0, NULL);
	assert_container(&run, (size_t)i + 8, HT_C_HEAP, 0, 0, 0, NULL);
	done(&run);
	free(h.buf);
}

/* Many small dumps that name one long trace spread it out only so many
 * times its frames (MAX_SPREAD_PER_FRAME, 64): then only the frames of
 * roots are begun, and a hostile file makes no millions of events a
 * byte. */
Test(hprof, a_trace_is_spread_out_a_bounded_number_of_times)
{
	enum { FRAMES = 100, DUMPS = 70 };
	uint64_t frames[FRAMES];
	size_t per_dump[DUMPS] = {0}, dump = 0;
	struct hp h;
	struct run run;

	start(&h, "1.0.2", 8);
	names(&h);
	for (uint32_t f = 0; f < FRAMES; f++) {
		frames[f] = 0x10000 + f;
		frame(&h, frames[f], S_MAIN, S_SIG, S_FILE, 3, (int32_t)f + 1);
	}
	trace(&h, 11, 2, FRAMES, frames);
	start_thread(&h, 2, 0x1000, 11, S_MAIN);
	for (int d = 0; d < DUMPS; d++) {
		begin(&h, 0x0c);
		classes(&h);
		instance(&h, 0x1000, OBJECT, 0);
		root(&h, 0x08, 0x1000, 2, 11);
		end(&h);
	}
	run = read_hp(&h, "spread.hprof");
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	for (size_t i = 0; i < run.n; i++) {
		if (run.ev[i].type != HT_EV_BEGIN_CONTAINER)
			continue;
		if (run.ev[i].a == HT_C_END)
			dump++;
		else if (ht_container_is_frame((enum ht_container_type)
						       run.ev[i].a))
			per_dump[dump]++;
	}
	cr_assert_eq(dump, DUMPS);
	for (size_t d = 0; d < DUMPS; d++)
		cr_assert_eq(per_dump[d], d < 64 ? FRAMES : 0,
			     "dump %zu begins %zu frames", d, per_dump[d]);
	done(&run);
	free(h.buf);
}

/* The time a record header carries (microseconds since the header's
 * timestamp) at the record that begins a dump and the one that ends it. */
static void record_time(struct hp *h, size_t record_at, uint32_t us)
{
	for (int i = 0; i < 4; i++)
		h->buf[record_at + 1 + (size_t)i] = (uint8_t)(us >> (24 - 8 * i));
}

/* A dump's C_BEGIN and C_END carry its records' times, in nanoseconds;
 * a dump whose records all say 0 (as HotSpot writes them) has none. */
Test(hprof, dump_times_from_the_record_headers)
{
	struct hp h;
	struct run run;
	uint64_t want[] = {1500000, 2250000};
	size_t k = 0, untimed = 0;

	start(&h, "1.0.2", 8);
	names(&h);
	stacks(&h);
	begin(&h, 0x1c);
	record_time(&h, h.rec_at, 1500);
	classes(&h);
	objects(&h);
	roots(&h);
	end(&h);
	begin(&h, 0x2c);
	record_time(&h, h.rec_at, 2250);
	end(&h);
	begin(&h, 0x0c);
	classes(&h);
	objects(&h);
	roots(&h);
	end(&h);
	run = read_hp(&h, "times.hprof");
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	for (size_t i = 0; i < run.n; i++) {
		const struct ev *e = &run.ev[i];

		if (e->type != HT_EV_BEGIN_CONTAINER ||
		    (e->a != HT_C_BEGIN && e->a != HT_C_END))
			continue;
		if (k < 2) {
			cr_assert(e->has_time, "container %zu has no time", k);
			cr_assert_eq(e->time, want[k], "container %zu", k);
		} else {
			untimed += !e->has_time;
		}
		k++;
	}
	cr_assert_eq(k, 4);
	cr_assert_eq(untimed, 2, "the dump of times 0 has none");
	done(&run);
	free(h.buf);
}

/* Records of no use to heaptrace are skipped, by their lengths. */
Test(hprof, other_records_are_skipped)
{
	struct hp h;
	struct run run;

	start(&h, "1.0.2", 8);
	names(&h);
	stacks(&h);
	begin(&h, 0x03); /* UNLOAD_CLASS */
	u4(&h, 9);
	end(&h);
	begin(&h, 0x0b); /* END_THREAD */
	u4(&h, 2);
	end(&h);
	begin(&h, 0x06); /* ALLOC_SITES, no sites */
	u2(&h, 0);
	u4(&h, 0);
	u4(&h, 0);
	u4(&h, 0);
	u8(&h, 0);
	u8(&h, 0);
	u4(&h, 0);
	end(&h);
	begin(&h, 0x07); /* HEAP_SUMMARY */
	u4(&h, 1);
	u4(&h, 2);
	u8(&h, 3);
	u8(&h, 4);
	end(&h);
	begin(&h, 0x0d); /* CPU_SAMPLES */
	u4(&h, 1);
	u4(&h, 1);
	u4(&h, 1);
	u4(&h, 10);
	end(&h);
	begin(&h, 0x0e); /* CONTROL_SETTINGS */
	u4(&h, 0);
	u2(&h, 4);
	end(&h);
	begin(&h, 0x1c);
	classes(&h);
	objects(&h);
	roots(&h);
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	run = read_hp(&h, "other.hprof");
	check_standard(&run, &sizes[0]);
	done(&run);
	free(h.buf);
}

/* Classes described after their instances, roots first, one segment. */
Test(hprof, any_order_of_sub_records)
{
	struct hp h;
	struct run run;

	start(&h, "1.0.2", 8);
	names(&h);
	stacks(&h);
	begin(&h, 0x1c);
	roots(&h);
	objects(&h);
	classes(&h);
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	run = read_hp(&h, "order.hprof");
	check_standard(&run, &sizes[0]);
	done(&run);
	free(h.buf);
}

/* A pipe is copied aside and read like a file. */
Test(hprof, standard_input_pipe)
{
	struct hp h;
	struct run run;
	int fds[2];
	pid_t pid;

	standard(&h, 8);
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (write(fds[1], h.buf, h.len) != (ssize_t)h.len)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_geq(dup2(fds[0], STDIN_FILENO), 0);
	close(fds[0]);
	run = read_path("-");
	waitpid(pid, NULL, 0);
	check_standard(&run, &sizes[0]);
	done(&run);
	free(h.buf);
}

/* An object array of more references than one event carries goes out
 * in parts joined by HT_OBJ_MORE_REFERENCES. */
Test(hprof, big_object_array_in_parts)
{
	uint32_t n = 65536 * 2 + 5;
	uint64_t *refs = calloc(n, sizeof(*refs));
	struct hp h;
	struct run run;
	long i;

	refs[n - 1] = 0x2000;
	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	classes(&h);
	obj_array(&h, 0x3000, FOOS, n, refs);
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	run = read_hp(&h, "big.hprof");
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	i = find(&run, 0, HT_EV_OBJECT_REFERENCES, 0x3000);
	cr_assert_eq(run.ev[i].flags, HT_OBJ_MORE_REFERENCES);
	cr_assert_eq(run.ev[i].n, 65536 + 1, "its class, then elements");
	cr_assert_eq(run.ev[i].refs[0], FOOS);
	cr_assert_eq(run.ev[i + 1].a, 0x3000);
	cr_assert_eq(run.ev[i + 1].flags, HT_OBJ_MORE_REFERENCES);
	cr_assert_eq(run.ev[i + 2].a, 0x3000);
	cr_assert_eq(run.ev[i + 2].flags, 0);
	cr_assert_eq(run.ev[i + 2].n, 5);
	cr_assert_eq(run.ev[i + 2].refs[4], 0x2000);
	cr_assert_eq(run.ev[i].c, (16 + 4ull * n + 7) / 8 * 8);
	done(&run);
	free(h.buf);
	free(refs);
}

/* ---- Names of threads -------------------------------------------------- */

enum {
	S_THREAD = 100, S_STRING, S_BYTES, S_CHARS, S_NAME, S_VALUE, S_CODER,
};

#define THREAD 0x600
#define STRING 0x700
#define BYTES 0x800
#define CHARS 0x880

/* java.lang.Thread with a name, whose String and array lie in `order`:
 * 'a' array, 's' string, 't' thread; the roots come last. */
static void thread_dump(struct hp *h, const char *order, uint8_t coder,
			const void *text, uint32_t n, uint8_t type)
{
	static const struct field thread_fields[] = {{S_NAME, 2, 0}};
	static const struct field string_fields[] = {{S_VALUE, 2, 0},
						     {S_CODER, 8, 0}};

	start(h, "1.0.2", 8);
	utf8(h, S_OBJECT, "java/lang/Object");
	utf8(h, S_THREAD, "java/lang/Thread");
	utf8(h, S_STRING, "java/lang/String");
	utf8(h, S_BYTES, "[B");
	utf8(h, S_CHARS, "[C");
	utf8(h, S_NAME, "name");
	utf8(h, S_VALUE, "value");
	utf8(h, S_CODER, "coder");
	load_class(h, 1, OBJECT, S_OBJECT);
	load_class(h, 2, THREAD, S_THREAD);
	load_class(h, 3, STRING, S_STRING);
	load_class(h, 4, BYTES, S_BYTES);
	load_class(h, 5, CHARS, S_CHARS);
	begin(h, 0x1c);
	class_dump(h, OBJECT, 0, 0, 0, NULL, 0, NULL);
	class_dump(h, THREAD, OBJECT, 0, 0, NULL, 1, thread_fields);
	class_dump(h, STRING, OBJECT, 0, 0, NULL, 2, string_fields);
	for (const char *c = order; *c; c++) {
		if (*c == 'a') {
			prim_array(h, 0x5000, type, n, text);
		} else if (*c == 's') {
			instance(h, 0x4000, STRING, 9);
			id(h, 0x5000);
			u1(h, coder);
		} else {
			instance(h, 0x3000, THREAD, 8);
			id(h, 0x4000);
		}
	}
	root(h, 0x08, 0x3000, 7, 0);
	end(h);
	begin(h, 0x2c);
	end(h);
}

static void check_thread_name(const char *order, uint8_t coder,
			      const void *text, uint32_t n, uint8_t type,
			      const char *want)
{
	struct hp h;
	struct run run;
	long i;

	thread_dump(&h, order, coder, text, n, type);
	run = read_hp(&h, "thread.hprof");
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	i = find(&run, 0, HT_EV_THREAD, 0x3000);
	cr_assert_geq(i, 0, "order %s: the thread is not named", order);
	cr_assert_str_eq(run.ev[i].name, want, "order %s", order);
	i = find(&run, 0, HT_EV_BEGIN_CONTAINER, HT_C_RT_THREAD);
	cr_assert_eq(run.ev[i].b, 0x3000);
	done(&run);
	free(h.buf);
}

Test(hprof, thread_names_in_any_order)
{
	static const char *orders[] = {"tsa", "tas", "sta", "sat", "ats",
				       "ast"};

	for (size_t i = 0; i < ARRAY_SIZE(orders); i++)
		check_thread_name(orders[i], 0, "main", 4, 8, "main");
}

Test(hprof, thread_names_utf16)
{
	/* "é€" as UTF-16LE in a byte[] (coder 1), and as a char[] */
	static const uint8_t le[] = {0xe9, 0x00, 0xac, 0x20};
	static const uint8_t be[] = {0x00, 0xe9, 0x20, 0xac};

	check_thread_name("ast", 1, le, 4, 8, "\xc3\xa9\xe2\x82\xac");
	check_thread_name("ast", 0, be, 2, 5, "\xc3\xa9\xe2\x82\xac");
}

/* ---- The object layout ------------------------------------------------- */

static uint64_t size_of(enum jvm_model m, const char *name, uint32_t n,
			const uint8_t *types, const char *const *names)
{
	struct class_fields object = {.name = "java/lang/Object"};
	struct class_fields c = {.name = name, .n = n, .types = types,
				 .names = names};
	struct field_layout lo, l;
	uint64_t size;

	cr_assert_eq(layout_class(&jvm_layouts[m], &object, NULL, &lo), 0);
	cr_assert_eq(layout_class(&jvm_layouts[m], &c, &lo, &l), 0);
	size = layout_instance_size(&jvm_layouts[m], &l);
	layout_free(&l);
	layout_free(&lo);
	return size;
}

#define COUNTER_CELL "java/util/concurrent/ConcurrentHashMap$CounterCell"
#define EXCHANGER_NODE "java/util/concurrent/Exchanger$Node"

/* Sizes jcmd GC.class_histogram reported on JDK 17 with compressed oops,
 * without (-XX:-UseCompressedOops), and without compressed class pointers
 * either. */
Test(hprof, layout_matches_hotspot)
{
	static const uint8_t node[] = {HPROF_LONG, HPROF_OBJECT};
	static const uint8_t tree[] = {HPROF_OBJECT, HPROF_OBJECT,
				       HPROF_OBJECT};
	static const uint8_t leaf[] = {HPROF_INT};
	static const uint8_t cell[] = {HPROF_LONG};
	static const uint8_t exchanger[] = {
		HPROF_OBJECT, HPROF_OBJECT, HPROF_OBJECT, HPROF_INT,
		HPROF_INT, HPROF_INT, HPROF_INT,
	};
	static const uint64_t want[][5] = {
		/* node, tree, leaf, CounterCell, Exchanger$Node */
		{24, 24, 16, 280, 296},
		{32, 40, 16, 280, 312},
		{32, 40, 24, 280, 312},
	};

	for (int m = 0; m < 3; m++) {
		cr_assert_eq(size_of(m, "KnownHeap$Node", 2, node, NULL),
			     want[m][0], "model %d", m);
		cr_assert_eq(size_of(m, "KnownHeap$TreeNode", 3, tree, NULL),
			     want[m][1], "model %d", m);
		cr_assert_eq(size_of(m, "KnownHeap$Leaf", 1, leaf, NULL),
			     want[m][2], "model %d", m);
		cr_assert_eq(size_of(m, COUNTER_CELL, 1, cell, NULL),
			     want[m][3], "model %d", m);
		cr_assert_eq(size_of(m, EXCHANGER_NODE, 7, exchanger, NULL),
			     want[m][4], "model %d", m);
	}
	/* KnownHeap$Leaf[16] */
	cr_assert_eq(layout_array_size(&jvm_layouts[JVM_COMPRESSED],
				       HPROF_OBJECT, 16), 80);
	cr_assert_eq(layout_array_size(&jvm_layouts[JVM_WIDE_OOPS],
				       HPROF_OBJECT, 16), 144);
	cr_assert_eq(layout_array_size(&jvm_layouts[JVM_WIDE],
				       HPROF_OBJECT, 16), 152);
	cr_assert_eq(layout_array_size(&jvm_layouts[JVM_COMPRESSED],
				       HPROF_BYTE, 0), 16);
	cr_assert_eq(layout_array_size(&jvm_layouts[JVM_32BIT],
				       HPROF_LONG, 1), 24);
}

/* A Thread's @Contended("tlr") fields, padded by 128 bytes each side:
 * JDK 17's Thread is 368 bytes, its subclass with a boolean 376. */
Test(hprof, layout_contended_groups)
{
	struct class_fields object = {.name = "java/lang/Object"};
	/* 96 bytes of other fields: 21 references */
	uint8_t types[24];
	const char *field_names[24] = {0};
	struct class_fields thread = {.name = "java/lang/Thread", .n = 24,
				      .types = types, .names = field_names};
	static const uint8_t flag[] = {HPROF_BOOLEAN};
	struct class_fields sub = {.name = "Sub", .n = 1, .types = flag};
	const struct jvm_layout *m = &jvm_layouts[JVM_COMPRESSED];
	struct field_layout lo, lt, ls;

	for (int i = 0; i < 21; i++)
		types[i] = HPROF_OBJECT;
	types[21] = HPROF_LONG;
	field_names[21] = "threadLocalRandomSeed";
	types[22] = HPROF_INT;
	field_names[22] = "threadLocalRandomProbe";
	types[23] = HPROF_INT;
	field_names[23] = "threadLocalRandomSecondarySeed";
	cr_assert_eq(layout_class(m, &object, NULL, &lo), 0);
	cr_assert_eq(layout_class(m, &thread, &lo, &lt), 0);
	cr_assert_eq(layout_instance_size(m, &lt), 368);
	cr_assert_eq(layout_class(m, &sub, &lt, &ls), 0);
	cr_assert_eq(layout_instance_size(m, &ls), 376);
	layout_free(&lo);
	layout_free(&lt);
	layout_free(&ls);
}

/* A mirror: java.lang.Class (112 bytes on JDK 17), then the statics,
 * references first. */
Test(hprof, layout_mirror)
{
	struct static_counts none = {0}, s = {.refs = 1};
	const struct jvm_layout *m = &jvm_layouts[JVM_COMPRESSED];

	cr_assert_eq(layout_mirror_size(m, 112, &none), 112);
	cr_assert_eq(layout_mirror_size(m, 112, &s), 120);
	s.by_width[8] = 1; /* the long waits for 8-byte alignment */
	cr_assert_eq(layout_mirror_size(m, 112, &s), 128);
	s.by_width[4] = 1; /* statics only append: no gap is filled */
	cr_assert_eq(layout_mirror_size(m, 112, &s), 136);
}

/* Objects two references wide (24 bytes compressed, 32 otherwise) and one
 * int wide (16 bytes unless the class pointer is wide) placed where only
 * 8-byte references with a compressed class pointer fit them. */
static void spaced(struct hp *h)
{
	static const struct field pair[] = {{S_A, 2, 0}, {S_B, 2, 0}};
	static const struct field single[] = {{S_C, 10, 0}};
	uint64_t at = 0x10000;

	start(h, "1.0.2", 8);
	names(h);
	begin(h, 0x1c);
	class_dump(h, OBJECT, 0, 0, 0, NULL, 0, NULL);
	class_dump(h, FOO, OBJECT, 0, 0, NULL, 2, pair);
	class_dump(h, INTS, OBJECT, 0, 0, NULL, 1, single);
	for (int i = 0; i < 50; i++) {
		instance(h, at, FOO, 16);
		id(h, 0);
		id(h, 0);
		at += 32;
		instance(h, at, INTS, 4);
		u4(h, 0);
		at += 16;
	}
	end(h);
	begin(h, 0x2c);
	end(h);
}

Test(hprof, layout_from_addresses)
{
	struct hp h;
	struct run run;

	spaced(&h);
	run = read_hp(&h, "spaced.hprof");
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	cr_assert_str_eq(meta(&run, "object_layout"), "wide-oops");
	cr_assert_eq(object(&run, 0x10000)->c, 32);
	done(&run);
	free(h.buf);
	standard(&h, 8);
	run = read_hp(&h, "std.hprof");
	cr_assert_str_eq(meta(&run, "object_layout"), "compressed-oops");
	done(&run);
	free(h.buf);
}

Test(hprof, layout_from_the_option)
{
	struct ht_reader_options yes = {HT_COMPRESSED_OOPS_YES};
	struct ht_reader_options no = {HT_COMPRESSED_OOPS_NO};
	struct hp h;
	struct run run;

	spaced(&h);
	run = read_path_with(write_hp(&h, "yes.hprof"), &yes);
	cr_assert_str_eq(meta(&run, "object_layout"), "compressed-oops");
	cr_assert_str_eq(meta(&run, "object_layout_from"),
			 "given: compressed oops yes");
	cr_assert_eq(object(&run, 0x10000)->c, 24);
	/* the addresses, still looked at, contradict it: 99 pairs, all
	 * adjacent as wide-oops; as compressed-oops only an int holder
	 * (16 bytes either way) ends where the next begins, 49 of them */
	cr_assert_str_eq(meta(&run, "object_layout_contradicted"),
			 "they fit wide-oops: 99 of 99 adjacent objects end "
			 "where the next begins (as compressed-oops: 49, and "
			 "0 reach past it)");
	done(&run);
	run = read_path_with(write_hp(&h, "no.hprof"), &no);
	cr_assert_str_eq(meta(&run, "object_layout"), "wide-oops");
	cr_assert_null(meta(&run, "object_layout_contradicted"),
		       "the addresses agree");
	done(&run);
	free(h.buf);
	/* the standard dump has no adjacent objects to tell by: nothing
	 * contradicts a layout given */
	standard(&h, 8);
	run = read_path_with(write_hp(&h, "std-no.hprof"), &no);
	cr_assert_null(meta(&run, "object_layout_contradicted"));
	done(&run);
	free(h.buf);
}

Test(hprof, option_that_is_not_yes_no_or_auto)
{
	struct ht_reader_options maybe = {(enum ht_compressed_oops)7};
	struct hp h;
	const char *path;
	struct run run;
	char want[512];

	spaced(&h);
	path = write_hp(&h, "maybe.hprof");
	run = read_path_with(path, &maybe);
	cr_assert_eq(run.rc, -2);
	cr_assert_eq(run.err.code, HT_E_INVALID);
	snprintf(want, sizeof(want), "%s: reader option compressed_oops is 7, "
		 "not HT_COMPRESSED_OOPS_AUTO, _YES or _NO", path);
	cr_assert_str_eq(run.err.message, want);
	free(h.buf);
}

/* ---- Damage ------------------------------------------------------------ */

static bool is_bound(const struct hp *h, size_t at)
{
	for (size_t i = 0; i <= h->n_bounds; i++)
		if (h->bounds[i] == at)
			return true;
	return false;
}

/* Whether a is b, or for roots the first of b's: a cut may leave a
 * container only the roots before it, a class without the CLASS_DUMP
 * that gives its size, and a mirror without java.lang.Class's. */
static bool same_or_prefix(const struct ev *a, const struct ev *b)
{
	if (a->type == HT_EV_CLASS && b->type == a->type && !a->c)
		return a->a == b->a && strcmp(a->name, b->name) == 0;
	/* a mirror's size needs java.lang.Class's CLASS_DUMP */
	if (a->type == HT_EV_OBJECT_REFERENCES && b->type == a->type &&
	    a->b == CLASS)
		return a->a == b->a && a->b == b->b && a->n == b->n &&
		       memcmp(a->refs, b->refs, sizeof(a->refs)) == 0;
	if (a->type == HT_EV_ROOT_REFERENCES && b->type == a->type)
		return a->n <= b->n &&
		       memcmp(a->refs, b->refs, a->n * sizeof(a->refs[0])) == 0;
	return memcmp(a, b, offsetof(struct ev, offset)) == 0;
}

/* Every cut of the standard dump: no crash, no event that is not the
 * whole file's, and an error saying where, unless the cut falls between
 * two records outside the dump (HPROF cannot tell that from a whole
 * file). */
static void cut_everywhere(unsigned id_size)
{
	struct hp h;
	struct run whole;
	const char *path = tmp_path("cut.hprof");
	size_t first_dump;

	standard(&h, id_size);
	/* the two segments and HEAP_DUMP_END are the last three records */
	first_dump = h.bounds[h.n_bounds - 3];
	whole = read_hp(&h, "whole.hprof");
	cr_assert_eq(whole.rc, 0);
	for (size_t len = 0; len < h.len; len++) {
		FILE *f = fopen(path, "wb");
		struct run run;

		cr_assert(f && fwrite(h.buf, 1, len, f) == len &&
			  fclose(f) == 0);
		run = read_path(path);
		if (run.rc == -2) {
			cr_assert(len < 31, "cut at %zu: %s", len,
				  run.err.message);
			done(&run);
			continue;
		}
		if (run.rc == 0) {
			cr_assert(is_bound(&h, len) && len <= first_dump,
				  "cut at %zu read cleanly", len);
		} else {
			char want[64];

			cr_assert_eq(run.rc, -1);
			snprintf(want, sizeof(want), "%s: byte ", path);
			cr_assert(strncmp(run.err.message, want,
					  strlen(want)) == 0,
				  "cut at %zu: %s", len, run.err.message);
			cr_assert(run.err.offset <= len, "cut at %zu: %s", len,
				  run.err.message);
			cr_assert(ht_reader_loss(run.r)->lost);
		}
		/* the events are a subset of the whole file's, in its order
		 * within the heap; names and roots all come first */
		for (size_t i = 0; i < run.n; i++) {
			bool seen = false;

			for (size_t j = 0; j < whole.n && !seen; j++)
				seen = same_or_prefix(&run.ev[i], &whole.ev[j]);
			cr_assert(seen, "cut at %zu: event %zu (type %d, "
				  "0x%llx 0x%llx 0x%llx, %zu refs) is not the "
				  "whole file's", len, i, run.ev[i].type,
				  (unsigned long long)run.ev[i].a,
				  (unsigned long long)run.ev[i].b,
				  (unsigned long long)run.ev[i].c,
				  run.ev[i].n);
		}
		done(&run);
	}
	done(&whole);
	free(h.buf);
}

Test(hprof, cut_at_every_byte_8)
{
	cut_everywhere(8);
}

Test(hprof, cut_at_every_byte_4)
{
	cut_everywhere(4);
}

/* Damage is told in one form: where, why, and how much was not read. */
static void assert_damage(const struct run *run, const char *path,
			  uint64_t offset, uint64_t size, const char *cause)
{
	uint64_t lost = size - offset;
	char want[512];

	cr_assert_eq(run->rc, -1, "%s: %s", path,
		     run->rc == 0 ? "read cleanly" : run->err.message);
	snprintf(want, sizeof(want),
		 "%s: byte %llu: %s; %llu %s from here to the end not read",
		 path, (unsigned long long)offset, cause,
		 (unsigned long long)lost, lost == 1 ? "byte" : "bytes");
	cr_assert_str_eq(run->err.message, want);
	cr_assert_eq(run->err.offset, offset);
	cr_assert(ht_reader_loss(run->r)->lost);
}

static void expect_damage(const struct hp *h, const char *name,
			  uint64_t offset, const char *cause)
{
	const char *path = write_hp(h, name);
	struct run run = read_path(path);

	assert_damage(&run, path, offset, file_size(h), cause);
	done(&run);
}

Test(hprof, bad_record_tag)
{
	struct hp h;
	size_t at;

	start(&h, "1.0.2", 8);
	names(&h);
	at = h.len;
	begin(&h, 0x42);
	end(&h);
	expect_damage(&h, "tag.hprof", at, "unknown record tag 0x42");
	free(h.buf);
}

Test(hprof, bad_sub_record_tag)
{
	struct hp h;
	size_t at;

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	classes(&h);
	at = h.len;
	u1(&h, 0x99);
	end(&h);
	expect_damage(&h, "subtag.hprof", at,
		      "unknown heap dump sub-record tag 0x99");
	free(h.buf);
}

Test(hprof, record_lengths_that_do_not_add_up)
{
	struct hp h;
	size_t at;

	start(&h, "1.0.2", 8);
	names(&h);
	at = h.len;
	begin(&h, 0x02);
	u4(&h, 9);
	end(&h);
	expect_damage(&h, "loadclass.hprof", at,
		      "LOAD_CLASS record of 4 bytes (it must have 24)");
	free(h.buf);

	start(&h, "1.0.2", 8);
	at = h.len;
	begin(&h, 0x05);
	u4(&h, 1);
	u4(&h, 1);
	u4(&h, 1000); /* frames, but no room for them */
	end(&h);
	expect_damage(&h, "trace.hprof", at,
		      "TRACE record of 12 bytes holds 1000 frames");
	free(h.buf);

	/* a sub-record running past the end of its segment */
	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	classes(&h);
	at = h.len;
	instance(&h, 0x2000, FOO, 1000);
	end(&h);
	expect_damage(&h, "overrun.hprof", at,
		      "INSTANCE_DUMP sub-record of 1025 bytes runs past the "
		      "end of its HEAP_DUMP_SEGMENT record (25 bytes left)");
	free(h.buf);

	/* a CLASS_DUMP's size is known only once it is read whole */
	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	at = h.len;
	u1(&h, 0x20);
	id(&h, FOO);
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	expect_damage(&h, "classover.hprof", at,
		      "CLASS_DUMP sub-record runs past the end of its "
		      "HEAP_DUMP_SEGMENT record");
	free(h.buf);
}

Test(hprof, records_shorter_than_their_header)
{
	struct hp h;
	size_t at;

	start(&h, "1.0.2", 8);
	at = h.len;
	begin(&h, 0x01);
	u4(&h, 1); /* half an id */
	end(&h);
	expect_damage(&h, "shortutf8.hprof", at,
		      "UTF8 record of 4 bytes, shorter than an id");
	free(h.buf);

	start(&h, "1.0.2", 8);
	at = h.len;
	begin(&h, 0x05);
	u4(&h, 1);
	u4(&h, 1); /* no frame count */
	end(&h);
	expect_damage(&h, "shorttrace.hprof", at,
		      "TRACE record of 8 bytes, shorter than its header");
	free(h.buf);
}

/* HPROF 1.0.1's whole HEAP_DUMP cannot stand inside 1.0.2's segments. */
Test(hprof, heap_dump_record_among_segments)
{
	struct hp h;
	size_t at;

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	classes(&h);
	end(&h);
	at = h.len;
	begin(&h, 0x0c);
	end(&h);
	expect_damage(&h, "mixed.hprof", at,
		      "HEAP_DUMP record inside a heap dump of segments (no "
		      "HEAP_DUMP_END before it)");
	free(h.buf);
}

Test(hprof, instance_that_does_not_fit_its_class)
{
	struct hp h;
	size_t at;

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	classes(&h);
	at = h.len;
	instance(&h, 0x2000, FOO, 4);
	u4(&h, 0);
	instance(&h, 0x2100, 0x999, 0);
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	expect_damage(&h, "fit.hprof", at,
		      "INSTANCE_DUMP of 0x2000 holds 4 bytes of fields; those "
		      "of its class 0x300 take 20");
	free(h.buf);

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	classes(&h);
	at = h.len;
	instance(&h, 0x2100, 0x999, 0);
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	expect_damage(&h, "noclass.hprof", at,
		      "INSTANCE_DUMP of 0x2100: its class 0x999 has no "
		      "CLASS_DUMP");
	free(h.buf);
}

/* An instance's fields are its class's and every super class's. */
Test(hprof, super_class_without_class_dump)
{
	struct hp h;
	size_t at;

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	class_dump(&h, FOO, 0x999, 0, 0, NULL, 0, NULL);
	at = h.len;
	instance(&h, 0x2000, FOO, 0);
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	expect_damage(&h, "nosuper.hprof", at,
		      "INSTANCE_DUMP of 0x2000: super class 0x999 of its class "
		      "0x300 has no CLASS_DUMP");
	free(h.buf);
}

/* Where a CLASS_DUMP's lists start, from its tag: its constant pool (of
 * the one entry class_dump writes), then its statics. */
static size_t pool_at(const struct hp *h)
{
	return 1 + 7 * h->id + 8 + 2;
}

static size_t statics_at(const struct hp *h)
{
	return pool_at(h) + 2 + 1 + 4 + 2;
}

Test(hprof, bad_types)
{
	struct hp h;
	size_t at;
	static const struct field bad[] = {{S_A, 3, 0}};
	static const struct field bad_static[] = {{S_X, 10, 5}, {S_A, 3, 0}};

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	at = h.len;
	class_dump(&h, FOO, 0, 0, 0, NULL, 1, bad);
	end(&h);
	expect_damage(&h, "ftype.hprof", at,
		      "CLASS_DUMP of class 0x300: instance field 0 has type 3, "
		      "not an HPROF type");
	free(h.buf);

	/* a static or constant is pointed at, as its class may be long */
	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	at = h.len;
	class_dump(&h, FOO, 0, 0, 2, bad_static, 0, NULL);
	end(&h);
	expect_damage(&h, "stype.hprof", at + statics_at(&h) + 8 + 1 + 4,
		      "CLASS_DUMP of class 0x300: static field 1 has type 3, "
		      "not an HPROF type");
	free(h.buf);

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	at = h.len;
	class_dump(&h, FOO, 0, 0, 0, NULL, 0, NULL);
	h.buf[at + pool_at(&h) + 2] = 3;
	end(&h);
	expect_damage(&h, "ptype.hprof", at + pool_at(&h),
		      "CLASS_DUMP of class 0x300: constant pool entry 0 has "
		      "type 3, not an HPROF type");
	free(h.buf);

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	at = h.len;
	prim_array(&h, 0x2300, 2, 0, NULL);
	end(&h);
	expect_damage(&h, "atype.hprof", at,
		      "PRIM_ARRAY_DUMP of 0x2300: element type 2, not a "
		      "primitive HPROF type");
	free(h.buf);
}

/* Lengths that claim far more than the file holds are refused before
 * anything is allocated for them. */
Test(hprof, hostile_lengths)
{
	struct hp h;
	size_t at;
	char cause[128];

	start(&h, "1.0.2", 8);
	at = h.len;
	u1(&h, 0x01);
	u4(&h, 0);
	u4(&h, 0xffffffff);
	id(&h, 1);
	expect_damage(&h, "utf8.hprof", at,
		      "file ends inside a UTF8 record (8 of 4294967295 bytes)");
	free(h.buf);

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	classes(&h);
	at = h.len;
	u1(&h, 0x22);
	id(&h, 0x2200);
	u4(&h, 0);
	u4(&h, 0xfffffff0); /* elements */
	id(&h, FOOS);
	end(&h);
	expect_damage(&h, "array.hprof", at,
		      "OBJ_ARRAY_DUMP sub-record of 34359738265 bytes runs past "
		      "the end of its HEAP_DUMP_SEGMENT record (25 bytes left)");
	free(h.buf);

	start(&h, "1.0.2", 8);
	names(&h);
	at = h.len;
	u1(&h, 0x1c);
	u4(&h, 0);
	u4(&h, 0xfffffff0); /* a segment of 4 GiB, cut short */
	classes(&h);
	snprintf(cause, sizeof(cause), "file ends inside the HEAP_DUMP_SEGMENT "
		 "record at byte %zu (%zu of its 4294967280 bytes)", at,
		 h.len - at - 9);
	expect_damage(&h, "segment.hprof", h.len, cause);
	free(h.buf);
}

/* A cut says what it cut into, and how much of it is there. */
Test(hprof, files_cut_short)
{
	struct hp h;
	size_t at;

	start(&h, "1.0.2", 8);
	names(&h);
	at = h.len;
	u1(&h, 0x01);
	u4(&h, 0);
	expect_damage(&h, "header.hprof", at,
		      "file ends inside a record header (5 of 9 bytes)");
	free(h.buf);

	start(&h, "1.0.2", 8);
	at = h.len;
	begin(&h, 0x03);
	u4(&h, 9);
	end(&h);
	h.len -= 2;
	expect_damage(&h, "unload.hprof", at,
		      "file ends inside an UNLOAD_CLASS record (2 of 4 bytes)");
	free(h.buf);

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	classes(&h);
	at = h.len;
	foo(&h, 0x2000, 1, 0, 3);
	end(&h);
	h.len -= 3;
	expect_damage(&h, "instance.hprof", at,
		      "file ends inside an INSTANCE_DUMP sub-record (42 of 45 "
		      "bytes)");
	free(h.buf);

	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	at = h.len;
	class_dump(&h, OBJECT, 0, 0, 0, NULL, 0, NULL);
	end(&h);
	h.len -= 1;
	expect_damage(&h, "class.hprof", at,
		      "file ends inside a CLASS_DUMP sub-record");
	free(h.buf);
}

/* A header that HPROF readers cannot take is refused at open, the file
 * named and, past the magic, the byte. */
static void expect_refused(const void *data, size_t len, const char *words)
{
	const char *path = tmp_file_with("refused.hprof", data, len);
	struct ht_error err;
	struct ht_reader *r = ht_reader_open(path, &err);
	char want[512];

	cr_assert_null(r, "%s: opened", words);
	snprintf(want, sizeof(want), "%s: %s", path, words);
	cr_assert_str_eq(err.message, want);
}

Test(hprof, headers_refused)
{
	struct hp h;
	struct run run;

	start(&h, "1.0.3", 8);
	expect_refused(h.buf, h.len, "byte 13: HPROF version \"1.0.3\" is not "
		       "supported (1.0.1 and 1.0.2 are)");
	free(h.buf);
	expect_refused("Junk: 1\n", 8, "not a trace: neither a .ht file, its "
		       "YAML form, nor an HPROF heap dump (\"JAVA PROFILE "
		       "1.0.2\", gzipped or not)");
	expect_refused("JAVA PROF", 9, "byte 0: file ends inside the HPROF "
		       "header (9 of 31 bytes)");
	start(&h, "1.0.2", 8);
	expect_refused(h.buf, h.len - 1, "byte 0: file ends inside the HPROF "
		       "header (30 of 31 bytes)");
	run = read_hp(&h, "alone.hprof");
	cr_assert_eq(run.rc, 0, "a header alone is an HPROF of no dump: %s",
		     run.err.message);
	done(&run);
	free(h.buf);
	start(&h, "1.0.2", 5);
	expect_refused(h.buf, h.len, "byte 19: identifier size 5 (HPROF ids "
		       "of 4 or 8 bytes are supported)");
	free(h.buf);
}

/* A dump whose segments never end: what was read is delivered, and the
 * missing HEAP_DUMP_END is the damage, at the end of the file. */
Test(hprof, no_heap_dump_end)
{
	struct hp h;
	const char *path;
	struct run run;

	standard(&h, 8);
	h.len -= 9;
	path = write_hp(&h, "noend.hprof");
	run = read_path(path);
	assert_damage(&run, path, h.len, h.len, "file ends inside a heap dump "
		      "(no HEAP_DUMP_END after its segments)");
	cr_assert_geq(find(&run, 0, HT_EV_OBJECT_REFERENCES, 0x1000), 0);
	cr_assert_lt(find(&run, 0, HT_EV_BEGIN_CONTAINER, HT_C_END), 0);
	done(&run);
	free(h.buf);
}

/* ---- Limits ------------------------------------------------------------ */

static void long_name(struct hp *h, uint64_t sid, size_t n)
{
	char *text = malloc(n + 1);

	cr_assert_not_null(text);
	memset(text, 'x', n);
	text[n] = '\0';
	utf8(h, sid, text);
	free(text);
}

Test(hprof, utf8_limit)
{
	struct hp h;
	struct run run;

	start(&h, "1.0.2", 8);
	long_name(&h, 1, 1u << 20);
	run = read_hp(&h, "mib.hprof");
	cr_assert_eq(run.rc, 0, "1 MiB of text is in the limit: %s",
		     run.err.message);
	done(&run);
	free(h.buf);

	start(&h, "1.0.2", 8);
	long_name(&h, 1, (1u << 20) + 1);
	expect_damage(&h, "overmib.hprof", 31, "UTF8 record of 1048585 bytes: "
		      "1048577 bytes of text, over the 1 MiB limit");
	free(h.buf);
}

static void long_trace(struct hp *h, uint32_t n)
{
	begin(h, 0x05);
	u4(h, 1);
	u4(h, 1);
	u4(h, n);
	for (uint32_t i = 0; i < n; i++)
		id(h, 0x50);
	end(h);
}

Test(hprof, trace_limit)
{
	struct hp h;
	struct run run;

	start(&h, "1.0.2", 4);
	long_trace(&h, 1u << 20);
	run = read_hp(&h, "frames.hprof");
	cr_assert_eq(run.rc, 0, "1048576 frames are in the limit: %s",
		     run.err.message);
	done(&run);
	free(h.buf);

	start(&h, "1.0.2", 4);
	long_trace(&h, (1u << 20) + 1);
	expect_damage(&h, "overframes.hprof", 31, "TRACE record of 4194320 "
		      "bytes: more than 1048576 frames");
	free(h.buf);
}

/* An instance of java.lang.Object with n bytes of fields, in a hole. */
static size_t big_instance(struct hp *h, uint32_t n)
{
	size_t at;

	start(h, "1.0.2", 8);
	names(h);
	begin(h, 0x1c);
	class_dump(h, OBJECT, 0, 0, 0, NULL, 0, NULL);
	at = h->len;
	instance(h, 0x2000, OBJECT, n);
	hole(h, n);
	end(h);
	begin(h, 0x2c);
	end(h);
	return at;
}

Test(hprof, instance_fields_limit)
{
	struct hp h;
	size_t at;

	/* in the limit, and only then held against its class */
	at = big_instance(&h, 64u << 20);
	expect_damage(&h, "fields.hprof", at, "INSTANCE_DUMP of 0x2000 holds "
		      "67108864 bytes of fields; those of its class 0x100 "
		      "take 0");
	free(h.buf);

	at = big_instance(&h, (64u << 20) + 1);
	expect_damage(&h, "overfields.hprof", at, "INSTANCE_DUMP of 0x2000: "
		      "67108865 bytes of fields, over the 64 MiB limit");
	free(h.buf);
}

/* Class 0x10000, with `supers` super classes above it, and an instance. */
static size_t class_chain(struct hp *h, unsigned supers)
{
	size_t at;

	start(h, "1.0.2", 8);
	begin(h, 0x1c);
	for (unsigned i = 0; i <= supers; i++)
		class_dump(h, 0x10000 + i, i < supers ? 0x10000 + i + 1 : 0, 0,
			   0, NULL, 0, NULL);
	at = h->len;
	instance(h, 0x2000, 0x10000, 0);
	end(h);
	begin(h, 0x2c);
	end(h);
	return at;
}

Test(hprof, super_class_limit)
{
	struct hp h;
	struct run run;
	size_t at;

	class_chain(&h, 1024);
	run = read_hp(&h, "deep.hprof");
	cr_assert_eq(run.rc, 0, "1024 super classes are in the limit: %s",
		     run.err.message);
	cr_assert_geq(find(&run, 0, HT_EV_OBJECT_REFERENCES, 0x2000), 0);
	done(&run);
	free(h.buf);

	at = class_chain(&h, 1025);
	expect_damage(&h, "deeper.hprof", at, "INSTANCE_DUMP of 0x2000: its "
		      "class 0x10000 has more than 1024 super classes, or they "
		      "loop");
	free(h.buf);

	/* a loop never ends, and is told the same */
	start(&h, "1.0.2", 8);
	names(&h);
	begin(&h, 0x1c);
	class_dump(&h, FOO, OBJECT, 0, 0, NULL, 0, NULL);
	class_dump(&h, OBJECT, FOO, 0, 0, NULL, 0, NULL);
	at = h.len;
	instance(&h, 0x2000, FOO, 0);
	end(&h);
	begin(&h, 0x2c);
	end(&h);
	expect_damage(&h, "loop.hprof", at, "INSTANCE_DUMP of 0x2000: its "
		      "class 0x300 has more than 1024 super classes, or they "
		      "loop");
	free(h.buf);
}

/* ---- Reading that fails ------------------------------------------------ */

/*
 * The standard dump, then a name longer than the reader's buffer: the
 * first pass leaves the buffer past the dump, so the second reads the
 * dump from the file again. Returns where the first segment's body
 * starts, the first byte the second pass reads.
 */
static size_t dump_then_long_name(struct hp *h)
{
	size_t body;

	standard(h, 8);
	body = h->bounds[h->n_bounds - 3] + 9;
	long_name(h, 999, 300u << 10);
	return body;
}

/* Between the passes a file can shrink, or its bytes change: what the
 * first pass found is no longer there. */
Test(hprof, file_that_changes_between_the_passes)
{
	static const uint8_t junk = 0x99;
	struct hp h;
	size_t body = dump_then_long_name(&h);
	const char *path = write_hp(&h, "shrinks.hprof");
	struct run run = {0};
	int fd;

	run.r = ht_reader_open(path, &run.err);
	cr_assert_not_null(run.r, "%s", run.err.message);
	cr_assert_eq(truncate(path, (off_t)body), 0);
	read_events(&run);
	assert_damage(&run, path, body, h.len,
		      "the file changed while it was read");
	done(&run);

	path = write_hp(&h, "rewritten.hprof");
	memset(&run, 0, sizeof(run));
	run.r = ht_reader_open(path, &run.err);
	cr_assert_not_null(run.r, "%s", run.err.message);
	fd = open(path, O_WRONLY);
	cr_assert(fd >= 0 && pwrite(fd, &junk, 1, (off_t)body) == 1 &&
		  close(fd) == 0);
	read_events(&run);
	assert_damage(&run, path, body, h.len,
		      "the file changed while it was read");
	done(&run);
	free(h.buf);
}

/* A read that fails after the first pass, as a failing disk's would: the
 * descriptor the reader holds is swapped for one that cannot be read. */
Test(hprof, read_failure_after_opening)
{
	struct hp h;
	size_t body = dump_then_long_name(&h);
	const char *path = write_hp(&h, "unreadable.hprof");
	FILE *f = fopen(path, "rb");
	struct run run = {0};
	char cause[128];
	int fd;

	cr_assert_not_null(f);
	run.r = open_hprof(f, path, &run.err);
	cr_assert_not_null(run.r, "%s", run.err.message);
	fd = open(path, O_WRONLY);
	cr_assert(fd >= 0 && dup2(fd, fileno(f)) == fileno(f) &&
		  close(fd) == 0);
	read_events(&run);
	snprintf(cause, sizeof(cause), "cannot read: %s", strerror(EBADF));
	assert_damage(&run, path, body, h.len, cause);
	cr_assert_eq(run.err.code, HT_E_IO);
	cr_assert_eq(run.err.sys_errno, EBADF);
	done(&run);
	free(h.buf);
}

/* The header cannot be read from a file, nor a pipe copied, when the
 * descriptor is open for writing only. */
Test(hprof, inputs_that_cannot_be_read_at_all)
{
	struct hp h;
	const char *path;
	struct ht_error err;
	char want[512];
	int fds[2];
	FILE *f;

	standard(&h, 8);
	path = write_hp(&h, "writeonly.hprof");
	f = fdopen(open(path, O_WRONLY), "w");
	cr_assert_not_null(f);
	cr_assert_null(open_hprof(f, path, &err));
	snprintf(want, sizeof(want), "%s: cannot read: %s", path,
		 strerror(EBADF));
	cr_assert_str_eq(err.message, want);

	cr_assert_eq(pipe(fds), 0);
	f = fdopen(fds[1], "w");
	cr_assert_not_null(f);
	cr_assert_null(open_hprof(f, "-", &err));
	snprintf(want, sizeof(want), "-: cannot read: %s", strerror(EBADF));
	cr_assert_str_eq(err.message, want);
	close(fds[0]);
	free(h.buf);
}

/* A pipe is copied to a temporary file, which needs a descriptor: here
 * every one the process may have is taken. */
Test(hprof, pipe_without_room_for_its_copy)
{
	struct hp h;
	struct ht_error err;
	struct rlimit old, none;
	struct ht_reader *r;
	char want[512];
	int fds[2], lowest;
	FILE *f;

	standard(&h, 8);
	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(write(fds[1], h.buf, h.len), (ssize_t)h.len);
	close(fds[1]);
	f = fdopen(fds[0], "r");
	cr_assert_not_null(f);
	lowest = dup(fds[0]); /* every descriptor below it is open */
	cr_assert_geq(lowest, 0);
	close(lowest);
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	none = old;
	none.rlim_cur = (rlim_t)lowest;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &none), 0);
	r = open_hprof(f, "-", &err);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	cr_assert_null(r);
	snprintf(want, sizeof(want), "-: cannot make a temporary copy: %s",
		 strerror(EMFILE));
	cr_assert_str_eq(err.message, want);
	free(h.buf);
}

/* The private writable memory of this process (what RLIMIT_DATA bounds,
 * the heap and every arena malloc has mapped), in bytes; 0 if untold. */
static uint64_t data_memory(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kib = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmData: %lu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kib << 10;
}

/*
 * Reads path with `room` bytes of memory to map beyond what the process
 * has mapped when it opens it, and writes the message it ends with to fd.
 * Memory malloc holds free could serve the reader too: when it and the
 * room add up to `need`, the test would mean nothing, and says so (3).
 */
static int read_in_room(const char *path, uint64_t room, uint64_t need,
			int fd)
{
	FILE *f = fopen(path, "rb");
	struct ht_reader *r = calloc(1, sizeof(*r));
	struct ht_error err = {0};
	struct ht_event ev;
	struct rlimit old, tight;
	uint64_t now = data_memory();
	size_t len;

	if (!f || !r || !(r->path = strdup(path)) || !now ||
	    getrlimit(RLIMIT_DATA, &old) != 0)
		return 2;
	if (mallinfo2().fordblks + room >= need)
		return 3;
	tight = old;
	tight.rlim_cur = (rlim_t)(now + room);
	if (setrlimit(RLIMIT_DATA, &tight) != 0)
		return 2;
	if (hprof_source_open(r, f, r->path, &err) == 0)
		while (ht_reader_next(r, &ev, &err) == 1)
			;
	if (setrlimit(RLIMIT_DATA, &old) != 0)
		return 2;
	len = strlen(err.message);
	return write(fd, err.message, len) == (ssize_t)len ? 0 : 2;
}

/* What reading path says when an allocation of `need` bytes cannot be
 * had: in a child, as a limit on memory holds for the whole process. */
static void message_in_room(const char *path, uint64_t room, uint64_t need,
			    char *msg, size_t size)
{
	size_t got = 0;
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(read_in_room(path, room, need, fds[1]));
	}
	close(fds[1]);
	while (got < size - 1 &&
	       (n = read(fds[0], msg + got, size - 1 - got)) > 0)
		got += (size_t)n;
	msg[got] = '\0';
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the reader crashed");
	cr_assert_neq(WEXITSTATUS(status), 3, "malloc holds too much free "
		      "memory for a limit to make %llu bytes fail",
		      (unsigned long long)need);
	cr_assert_eq(WEXITSTATUS(status), 0, "the child could not set its "
		     "limit");
}

/*
 * A name of 1 MiB, the most there may be: with no room for the reader's
 * buffer (256 KiB), the dump is refused; with room for that but not for
 * the name, the name is damage. The file is written piece by piece, so
 * that this process holds no big free block the reader could take.
 */
Test(hprof, out_of_memory, .disabled = SANITIZED)
{
	const char *path = tmp_path("bigname.hprof");
	FILE *f = fopen(path, "wb");
	struct hp h;
	char block[4096], msg[512], want[512];

	cr_assert_not_null(f);
	memset(block, 'x', sizeof(block));
	start(&h, "1.0.2", 8);
	u1(&h, 0x01);
	u4(&h, 0);
	u4(&h, 8 + (1u << 20));
	id(&h, 1);
	cr_assert_eq(fwrite(h.buf, 1, h.len, f), h.len);
	for (size_t i = 0; i < (1u << 20) / sizeof(block); i++)
		cr_assert_eq(fwrite(block, 1, sizeof(block), f),
			     sizeof(block));
	cr_assert_eq(fclose(f), 0);
	free(h.buf);

	message_in_room(path, 0, 256u << 10, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: out of memory", path);
	cr_assert_str_eq(msg, want);

	message_in_room(path, 512u << 10, 1u << 20, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: byte 31: out of memory; %u bytes "
		 "from here to the end not read", path, 9 + 8 + (1u << 20));
	cr_assert_str_eq(msg, want);
}

/* ---- Gzipped dumps ------------------------------------------------------ */

/* Gzips len bytes of data into a fresh file, in `members` gzip members of
 * (about) equal parts, as HotSpot writes one member per block. */
static const char *write_gz(const void *data, size_t len, unsigned members,
			    const char *name)
{
	const char *path = tmp_path(name);
	const uint8_t *p = data;
	size_t part = len / members + 1;

	size_t at = 0;

	unlink(path);
	do { /* an empty input is one empty member */
		size_t n = len - at < part ? len - at : part;
		gzFile gz = gzopen(path, "ab");

		cr_assert_not_null(gz);
		cr_assert_eq(gzwrite(gz, p + at, (unsigned)n), (int)n);
		cr_assert_eq(gzclose(gz), Z_OK);
		at += n;
	} while (at < len);
	return path;
}

/* The compressed bytes of the file at path, *len of them. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long size;

	cr_assert(f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0);
	buf = malloc((size_t)size);
	rewind(f);
	cr_assert(buf && fread(buf, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	*len = (size_t)size;
	return buf;
}

Test(hprof, gzipped_reads_as_its_bytes)
{
	struct hp h;
	struct run run;

	standard(&h, 8);
	for (unsigned members = 1; members <= 3; members += 2) {
		run = read_path(write_gz(h.buf, h.len, members, "std.hprof.gz"));
		cr_assert_eq(run.rc, 0, "%u members: %s", members,
			     run.err.message);
		check_standard(&run, &sizes[0]);
		done(&run);
	}
	free(h.buf);
}

Test(hprof, gzipped_through_a_pipe)
{
	struct hp h;
	struct run run;
	uint8_t *gz;
	size_t len;
	int fds[2];
	pid_t pid;

	standard(&h, 4);
	gz = slurp(write_gz(h.buf, h.len, 1, "pipe.hprof.gz"), &len);
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(write(fds[1], gz, len) == (ssize_t)len ? 0 : 1);
	}
	close(fds[1]);
	cr_assert_geq(dup2(fds[0], STDIN_FILENO), 0);
	close(fds[0]);
	run = read_path("-");
	waitpid(pid, NULL, 0);
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	check_standard(&run, &sizes[1]);
	done(&run);
	free(gz);
	free(h.buf);
}

/* A gzip cut short is the dump cut where its bytes end: the same events,
 * the same damage at the same (uncompressed) offset as the plain cut. */
Test(hprof, gzipped_and_cut)
{
	struct hp h;
	struct run plain, gzipped;
	uint8_t *gz;
	size_t len, got = 0;
	z_stream zs = {0};
	uint8_t out[1 << 16];
	const char *cut;

	standard(&h, 8);
	gz = slurp(write_gz(h.buf, h.len, 1, "whole.hprof.gz"), &len);
	cut = tmp_file_with("cut.hprof.gz", gz, len * 2 / 3);
	/* the bytes that the first two thirds of the gzip give */
	cr_assert_eq(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = gz;
	zs.avail_in = (unsigned)(len * 2 / 3);
	do {
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		inflate(&zs, Z_NO_FLUSH);
		got += sizeof(out) - zs.avail_out;
	} while (zs.avail_out == 0);
	inflateEnd(&zs);
	cr_assert(got > 31 && got < h.len, "%zu of %zu", got, h.len);

	gzipped = read_path(cut);
	plain = read_path(tmp_file_with("cut.hprof", h.buf, got));
	cr_assert_lt(gzipped.rc, 0);
	cr_assert_eq(gzipped.err.code, HT_E_TRUNCATED, "%s",
		     gzipped.err.message);
	cr_assert_eq(gzipped.n, plain.n);
	cr_assert_str_eq(strchr(gzipped.err.message, ':'),
			 strchr(plain.err.message, ':'));
	done(&gzipped);
	done(&plain);
	free(gz);
	free(h.buf);
}

/* Damaged compressed data, or a gzip that holds no dump, is refused at
 * open, in words of its own. */
Test(hprof, gzipped_refused)
{
	struct hp h;
	uint8_t *gz;
	size_t len;
	const char *path;
	struct ht_error err;
	char want[512];

	standard(&h, 8);
	gz = slurp(write_gz(h.buf, h.len, 1, "good.hprof.gz"), &len);
	gz[len - 6] ^= 0xff; /* in the trailer's CRC-32 */
	path = tmp_file_with("bad-crc.hprof.gz", gz, len);
	cr_assert_null(ht_reader_open(path, &err));
	cr_assert_eq(err.code, HT_E_CORRUPT);
	/* found at the member's end, after bytes not counted as read */
	snprintf(want, sizeof(want), "%s: byte ", path);
	cr_assert(strncmp(err.message, want, strlen(want)) == 0, "%s",
		  err.message);
	cr_assert(strstr(err.message, ": damaged gzip data (incorrect data "
			 "check)"), "%s", err.message);
	free(gz);

	path = write_gz("heaptrace: 1\n", 13, 1, "trace.yaml.gz");
	cr_assert_null(ht_reader_open(path, &err));
	snprintf(want, sizeof(want), "%s: gzipped, but not an HPROF heap "
		 "dump: only a Java heap dump is read gzipped", path);
	cr_assert_str_eq(err.message, want);

	path = write_gz("", 0, 1, "empty.gz");
	cr_assert_null(ht_reader_open(path, &err));
	snprintf(want, sizeof(want), "%s: a gzipped empty file: not a "
		 "trace", path);
	cr_assert_str_eq(err.message, want);

	gz = slurp(write_gz(h.buf, h.len, 1, "head.hprof.gz"), &len);
	path = tmp_file_with("head-only.gz", gz, 8);
	cr_assert_null(ht_reader_open(path, &err));
	cr_assert_eq(err.code, HT_E_TRUNCATED);
	snprintf(want, sizeof(want), "%s: byte 0: the gzip data ends before "
		 "the first byte of what it holds", path);
	cr_assert_str_eq(err.message, want);
	free(gz);
	free(h.buf);
}

/* ---- Values (format version 3) ------------------------------------------ */

enum {
	V_OBJECT = 1, V_BASE, V_SUB, V_STRING, V_BYTES, V_CHARS, V_INTS,
	V_TOTAL, V_ON, V_COUNT, V_RATIO, V_LETTER, V_SMALL, V_TINY, V_WIDE,
	V_NEXT, V_VALUE, V_CODER, V_HASH, V_LIMIT, V_DEBUG,
};
#define VCLS(n) (0x100u * (n))

/* Sub extends Base: a value of every primitive type, its own fields'
 * first in the dump as HotSpot writes them; a Latin-1 String (byte[],
 * coder 0), a UTF-16 one (byte[] of little-endian units, coder 1), a
 * char[] (big-endian in the dump) and an int[] longer than the trace
 * keeps whole. */
static void values_dump(struct hp *h, const int32_t *ints, uint32_t n_ints)
{
	static const struct field base_fields[] = {
		{V_TOTAL, 11, 0}, {V_ON, 4, 0}};
	static const struct field sub_fields[] = {
		{V_COUNT, 10, 0}, {V_RATIO, 6, 0}, {V_LETTER, 5, 0},
		{V_SMALL, 9, 0}, {V_TINY, 8, 0}, {V_WIDE, 7, 0},
		{V_NEXT, 2, 0}};
	static const struct field string_fields[] = {
		{V_VALUE, 2, 0}, {V_HASH, 10, 0}, {V_CODER, 8, 0}};
	static const char *const names[] = {
		[V_OBJECT] = "java/lang/Object", [V_BASE] = "Base",
		[V_SUB] = "Sub", [V_STRING] = "java/lang/String",
		[V_BYTES] = "[B", [V_CHARS] = "[C", [V_INTS] = "[I",
		[V_TOTAL] = "total", [V_ON] = "on", [V_COUNT] = "count",
		[V_RATIO] = "ratio", [V_LETTER] = "letter",
		[V_SMALL] = "small", [V_TINY] = "tiny", [V_WIDE] = "wide",
		[V_NEXT] = "next", [V_VALUE] = "value", [V_CODER] = "coder",
		[V_HASH] = "hash", [V_LIMIT] = "LIMIT", [V_DEBUG] = "DEBUG",
	};
	static const struct field sub_statics[] = {
		{V_LIMIT, 10, (uint32_t)-40}, {V_NEXT, 2, 0x2000},
		{V_DEBUG, 4, 1}};
	static const uint8_t latin1[] = {'h', 0xe9, 'l', 'l', 'o'};
	static const uint8_t utf16le[] = {0xe9, 0x00, 0xac, 0x20};
	static const uint8_t chars_be[] = {0x00, 'h', 0x20, 0xac};

	start(h, "1.0.2", 8);
	for (unsigned i = V_OBJECT; i <= V_DEBUG; i++)
		utf8(h, i, names[i]);
	for (unsigned i = V_OBJECT; i <= V_INTS; i++)
		load_class(h, i, VCLS(i), i);
	begin(h, 0x1c);
	class_dump(h, VCLS(V_OBJECT), 0, 0, 0, NULL, 0, NULL);
	class_dump(h, VCLS(V_BASE), VCLS(V_OBJECT), 0, 0, NULL, 2,
		   base_fields);
	class_dump(h, VCLS(V_SUB), VCLS(V_BASE), 0, 3, sub_statics, 7,
		   sub_fields);
	class_dump(h, VCLS(V_STRING), VCLS(V_OBJECT), 0, 0, NULL, 3,
		   string_fields);
	instance(h, 0x1000, VCLS(V_SUB), 4 + 4 + 2 + 2 + 1 + 8 + 8 + 8 + 1);
	u4(h, (uint32_t)-7);          /* count */
	u4(h, 0x3fc00000);            /* ratio: 1.5f */
	u2(h, 0xe9);                  /* letter */
	u2(h, 0x8000);                /* small: -32768 */
	u1(h, 0x80);                  /* tiny: -128 */
	u8(h, 0x400921fb54442d18u);   /* wide: pi */
	id(h, 0x2000);                /* next */
	u8(h, (uint64_t)INT64_MIN);   /* Base.total */
	u1(h, 1);                     /* Base.on */
	instance(h, 0x2000, VCLS(V_STRING), 8 + 4 + 1);
	id(h, 0x3000);
	u4(h, 0);
	u1(h, 0);
	prim_array(h, 0x3000, 8, sizeof(latin1), latin1);
	instance(h, 0x2100, VCLS(V_STRING), 8 + 4 + 1);
	id(h, 0x3100);
	u4(h, 0x12345678);
	u1(h, 1);
	prim_array(h, 0x3100, 8, sizeof(utf16le), utf16le);
	prim_array(h, 0x3200, 5, 2, chars_be);
	u1(h, 0x23);
	id(h, 0x3300);
	u4(h, 0);
	u4(h, n_ints);
	u1(h, 10);
	for (uint32_t i = 0; i < n_ints; i++)
		u4(h, (uint32_t)ints[i]);
	root(h, 0x05, 0x1000, 0, 0);
	end(h);
	begin(h, 0x2c);
	end(h);
}

static uint64_t value_of(const struct run *run, const struct ev *e,
			 uint64_t cls, const char *name, uint8_t type)
{
	const struct declared *d = declared(run, cls, name, HT_FIELD_INSTANCE);

	cr_assert_eq(d->f.type, type, "%s: type %u", name, d->f.type);
	for (size_t i = 0; i < e->n_values; i++)
		if (e->value_fields[i] == d->f.id)
			return e->values[i];
	cr_assert_fail("0x%llx has no value of %s", (unsigned long long)e->a,
		       name);
	return 0;
}

static void assert_array(const struct ev *e, uint8_t type, uint64_t length,
			 const void *le, size_t bytes)
{
	cr_assert(e->has_array, "0x%llx has no contents",
		  (unsigned long long)e->a);
	cr_assert_eq(e->array.type, type);
	cr_assert_eq(e->array.length, length);
	cr_assert_eq(e->array.stored * ht_value_type_width(type), bytes);
	cr_assert_eq(memcmp(e->array.data, le, bytes), 0,
		     "0x%llx: other contents", (unsigned long long)e->a);
}

/* With the values option, each primitive field is declared with its type
 * and its class's own offset, each instance carries its values and its
 * supers', sign-extended by type, and each primitive array its contents
 * little-endian: whole, or a 64-byte prefix and the FNV-1a hash of all. */
Test(hprof, values_of_fields_strings_and_arrays)
{
	const struct ht_reader_options with = {.values = true};
	int32_t ints[100];
	uint8_t ints_le[sizeof(ints)];
	const struct ev *sub, *s;
	struct hp h;
	struct run run;

	for (size_t i = 0; i < 100; i++) {
		ints[i] = (int32_t)(i * 1000003u) - 500;
		for (unsigned b = 0; b < 4; b++)
			ints_le[4 * i + b] = (uint8_t)((uint32_t)ints[i] >> (8 * b));
	}
	values_dump(&h, ints, 100);
	run = read_path_with(write_hp(&h, "values.hprof"), &with);
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	sub = object(&run, 0x1000);
	cr_assert_eq(sub->n_values, 8);
	cr_assert_eq(value_of(&run, sub, VCLS(V_SUB), "count", HT_TYPE_INT),
		     (uint64_t)-7);
	cr_assert_eq(value_of(&run, sub, VCLS(V_SUB), "ratio", HT_TYPE_FLOAT),
		     0x3fc00000);
	cr_assert_eq(value_of(&run, sub, VCLS(V_SUB), "letter", HT_TYPE_CHAR),
		     0xe9);
	cr_assert_eq(value_of(&run, sub, VCLS(V_SUB), "small", HT_TYPE_SHORT),
		     (uint64_t)-32768);
	cr_assert_eq(value_of(&run, sub, VCLS(V_SUB), "tiny", HT_TYPE_BYTE),
		     (uint64_t)-128);
	cr_assert_eq(value_of(&run, sub, VCLS(V_SUB), "wide", HT_TYPE_DOUBLE),
		     0x400921fb54442d18u);
	cr_assert_eq(value_of(&run, sub, VCLS(V_BASE), "total", HT_TYPE_LONG),
		     (uint64_t)INT64_MIN);
	cr_assert_eq(value_of(&run, sub, VCLS(V_BASE), "on", HT_TYPE_BOOLEAN),
		     1);
	cr_assert_eq(declared(&run, VCLS(V_SUB), "wide", 0)->f.offset, 13);
	/* a class object carries its primitive statics' values */
	s = object(&run, VCLS(V_SUB));
	cr_assert_eq(s->n_values, 2);
	cr_assert_eq(s->value_fields[0],
		     declared(&run, VCLS(V_SUB), "LIMIT", HT_FIELD_STATIC)->f.id);
	cr_assert_eq(s->values[0], (uint64_t)-40);
	cr_assert_eq(declared(&run, VCLS(V_SUB), "DEBUG",
			      HT_FIELD_STATIC)->f.type, HT_TYPE_BOOLEAN);
	cr_assert_eq(s->values[1], 1);
	cr_assert_eq(declared(&run, VCLS(V_SUB), "next", 0)->f.type, 0);
	s = object(&run, 0x2000);
	cr_assert_eq(value_of(&run, s, VCLS(V_STRING), "coder", HT_TYPE_BYTE),
		     0);
	assert_array(object(&run, 0x3000), HT_TYPE_BYTE, 5, "h\xe9llo", 5);
	s = object(&run, 0x2100);
	cr_assert_eq(value_of(&run, s, VCLS(V_STRING), "coder", HT_TYPE_BYTE),
		     1);
	cr_assert_eq(value_of(&run, s, VCLS(V_STRING), "hash", HT_TYPE_INT),
		     0x12345678);
	assert_array(object(&run, 0x3100), HT_TYPE_BYTE, 4,
		     (const uint8_t[]){0xe9, 0x00, 0xac, 0x20}, 4);
	assert_array(object(&run, 0x3200), HT_TYPE_CHAR, 2,
		     (const uint8_t[]){'h', 0x00, 0xac, 0x20}, 4);
	assert_array(object(&run, 0x3300), HT_TYPE_INT, 100, ints_le,
		     HT_VALUES_PREFIX);
	cr_assert_eq(object(&run, 0x3300)->array.hash,
		     ht_values_hash(ints_le, sizeof(ints_le)));
	done(&run);
	free(h.buf);
}

/* An array of exactly HT_VALUES_WHOLE_MAX bytes is kept whole. */
Test(hprof, values_whole_up_to_the_threshold)
{
	const struct ht_reader_options with = {.values = true};
	int32_t ints[HT_VALUES_WHOLE_MAX / 4];
	struct hp h;
	struct run run;

	for (size_t i = 0; i < sizeof(ints) / 4; i++)
		ints[i] = (int32_t)i;
	values_dump(&h, ints, sizeof(ints) / 4);
	run = read_path_with(write_hp(&h, "whole.hprof"), &with);
	cr_assert_eq(run.rc, 0, "%s", run.err.message);
	assert_array(object(&run, 0x3300), HT_TYPE_INT, sizeof(ints) / 4,
		     ints, sizeof(ints));
	cr_assert_eq(object(&run, 0x3300)->array.hash, 0);
	done(&run);
	free(h.buf);
}

/* Without the option the reader is what it was before values: no
 * primitive field declared, no values, no contents; the references are
 * those it gives with values (whose fields, numbered among the primitive
 * ones, have other ids). */
Test(hprof, no_values_unless_asked)
{
	const struct ht_reader_options with = {.values = true};
	int32_t ints[4] = {1, 2, 3, 4};
	struct hp h;
	struct run plain, valued;

	values_dump(&h, ints, 4);
	plain = read_path(write_hp(&h, "plain.hprof"));
	valued = read_path_with(write_hp(&h, "valued.hprof"), &with);
	cr_assert_eq(plain.rc, 0, "%s", plain.err.message);
	cr_assert_eq(valued.rc, 0, "%s", valued.err.message);
	for (size_t i = 0; i < plain.n_fields; i++)
		cr_assert_eq(plain.fields[i].f.type, 0, "%s",
			     plain.fields[i].name);
	cr_assert_eq(valued.n_fields, plain.n_fields + 12,
		     "the 12 primitive fields are declared with values only");
	cr_assert_eq(plain.n, valued.n);
	for (size_t i = 0; i < plain.n; i++) {
		cr_assert_eq(plain.ev[i].type, valued.ev[i].type);
		cr_assert_eq(plain.ev[i].n, valued.ev[i].n);
		cr_assert_eq(memcmp(plain.ev[i].refs, valued.ev[i].refs,
				    sizeof(plain.ev[i].refs)), 0);
		cr_assert_eq(plain.ev[i].n_values, 0);
		cr_assert_not(plain.ev[i].has_array);
	}
	done(&plain);
	done(&valued);
	free(h.buf);
}
