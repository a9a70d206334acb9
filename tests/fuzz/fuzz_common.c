/*
 * fuzz_common.c - readers over memory and event digests for the fuzz
 * targets (fuzz.h).
 *
 * The bytes are served through a stdio cookie stream, with or without a
 * seek function, so the same input reaches the binary source both ways a
 * real one does: as a file (the index is read first through the trailer)
 * and as a pipe (the index is met at the end). The sniffing front of
 * reader.c is reached through a memfd and its /proc path.
 */
#include "fuzz.h"

#include "lib/read/source.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz: CHECK FAILED: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void fuzz_check_error(const struct ht_error *err, const char *where)
{
	size_t n = strnlen(err->message, sizeof(err->message));

	FUZZ_CHECK(err->code != HT_OK, "%s: failed with code HT_OK", where);
	FUZZ_CHECK(n > 0 && n < sizeof(err->message),
		   "%s: error without a message", where);
}

/* ---- byte streams -------------------------------------------------------- */

struct memory {
	uint8_t *data;
	size_t size;
	size_t at;
};

static ssize_t memory_read(void *cookie, char *buf, size_t n)
{
	struct memory *m = cookie;
	size_t left = m->size - m->at;

	if (n > left)
		n = left;
	memcpy(buf, m->data + m->at, n);
	m->at += n;
	return (ssize_t)n;
}

static int memory_seek(void *cookie, off64_t *offset, int whence)
{
	struct memory *m = cookie;
	off64_t base = whence == SEEK_SET ? 0 :
		       whence == SEEK_CUR ? (off64_t)m->at : (off64_t)m->size;

	if (*offset < -base || base + *offset > (off64_t)m->size) {
		errno = EINVAL;
		return -1;
	}
	m->at = (size_t)(base + *offset);
	*offset = (off64_t)m->at;
	return 0;
}

static int memory_close(void *cookie)
{
	struct memory *m = cookie;

	free(m->data);
	free(m);
	return 0;
}

static FILE *memory_stream(const uint8_t *data, size_t size,
			   enum fuzz_stream how)
{
	cookie_io_functions_t io = {
		.read = memory_read,
		.close = memory_close,
		.seek = how == FUZZ_SEEKABLE ? memory_seek : NULL,
	};
	struct memory *m = calloc(1, sizeof(*m));
	FILE *f;

	if (!m)
		return NULL;
	/* a copy of its own size, so that a read past the input is caught */
	m->data = malloc(size ? size : 1);
	if (!m->data) {
		free(m);
		return NULL;
	}
	if (size)
		memcpy(m->data, data, size);
	m->size = size;
	f = fopencookie(m, "r", io);
	if (!f)
		memory_close(m);
	return f;
}

/* ---- readers ------------------------------------------------------------- */

/* Through reader.c itself: sniffing, the pushed-back byte, the empty
 * file. The memfd is closed at once; the reader has its own open file. */
static struct ht_reader *reader_through_front(const uint8_t *data,
					      size_t size,
					      struct ht_error *err)
{
	struct ht_reader *r;
	char path[64];
	int fd = memfd_create("fuzz", 0);

	if (fd < 0)
		fuzz_fail("memfd_create: %s", strerror(errno));
	if (size && write(fd, data, size) != (ssize_t)size)
		fuzz_fail("write to memfd: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = ht_reader_open(path, err);
	close(fd);
	return r;
}

/* With values the HPROF source reads every byte it reads without them,
 * and the field values and array contents besides. */
static int hprof_with_values(struct ht_reader *r, FILE *f,
			     struct ht_error *err)
{
	r->options.values = true;
	return hprof_source_open(r, f, r->path, err);
}

struct ht_reader *fuzz_reader(const uint8_t *data, size_t size,
			      enum fuzz_form form, enum fuzz_stream how,
			      struct ht_error *err)
{
	struct ht_reader *r;
	FILE *f;
	int rc, c;

	if (form == FUZZ_SNIFF && how == FUZZ_SEEKABLE)
		return reader_through_front(data, size, err);
	f = memory_stream(data, size, how);
	r = calloc(1, sizeof(*r));
	if (!f || !r || !(r->path = strdup("fuzz-input")))
		fuzz_fail("out of memory setting up a reader");
	if (form == FUZZ_SNIFF) {
		c = getc(f);
		if (c != EOF)
			ungetc(c, f);
		form = c == 0x89 ? FUZZ_HT : c == 'J' ? FUZZ_HPROF : FUZZ_YAML;
	}
	if (form == FUZZ_HT)
		rc = binary_source_open(r, f, r->path, err);
	else if (form == FUZZ_HPROF)
		rc = hprof_with_values(r, f, err);
	else
		rc = yaml_source_open(r, f, r->path, err);
	if (rc < 0) {
		fuzz_check_error(err, "open");
		free(r->path);
		free(r);
		return NULL;
	}
	FUZZ_CHECK(r->ops && r->header, "open succeeded without a source");
	return r;
}

/* ---- digests ------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t mix_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = mix(h, b[i]);
	return h;
}

/* A string must end within reach: strlen runs over it to the NUL. */
static uint64_t mix_string(uint64_t h, const char *s)
{
	if (!s)
		return mix(h, 0x5a5a);
	return mix_bytes(h, s, strlen(s) + 1);
}

static uint64_t digest_roots(uint64_t h, const struct ht_ev_root_references *e)
{
	FUZZ_CHECK(e->count == 0 || (e->refs && e->flags),
		   "root_references without its arrays");
	h = mix(h, e->count);
	h = mix(h, e->result);
	h = mix_bytes(h, e->refs, e->count * sizeof(*e->refs));
	h = mix_bytes(h, e->flags, e->count * sizeof(*e->flags));
	if (e->kinds)
		h = mix_bytes(h, e->kinds, e->count);
	if (e->root_flags)
		h = mix_bytes(h, e->root_flags, e->count);
	if (e->root_ids)
		h = mix_bytes(h, e->root_ids, e->count * sizeof(*e->root_ids));
	if (e->root_fields)
		h = mix_bytes(h, e->root_fields,
			      e->count * sizeof(*e->root_fields));
	return mix(h, (e->kinds != NULL) | (e->root_flags != NULL) << 1 |
		      (e->root_ids != NULL) << 2 |
		      (e->root_fields != NULL) << 3);
}

/* Values and array contents (format version 3): a prefix no longer than
 * its array, a hash only with a prefix. */
static uint64_t digest_values(uint64_t h,
			      const struct ht_ev_object_references *e)
{
	const struct ht_array_values *a = e->array;

	FUZZ_CHECK(e->n_values == 0 || (e->value_fields && e->values),
		   "values without their arrays");
	h = mix(h, e->n_values);
	h = mix_bytes(h, e->value_fields,
		      e->n_values * sizeof(*e->value_fields));
	h = mix_bytes(h, e->values, e->n_values * sizeof(*e->values));
	if (!a)
		return h;
	FUZZ_CHECK(ht_value_type_width(a->type) > 0,
		   "array contents of type %u", a->type);
	FUZZ_CHECK(a->stored <= a->length && (a->stored == 0 || a->data),
		   "array prefix of %llu of %llu elements",
		   (unsigned long long)a->stored,
		   (unsigned long long)a->length);
	h = mix(h, a->type);
	h = mix(h, a->length);
	h = mix(h, a->hash);
	return mix_bytes(h, a->data, a->stored * ht_value_type_width(a->type));
}

static uint64_t digest_object(uint64_t h,
			      const struct ht_ev_object_references *e)
{
	FUZZ_CHECK(e->count == 0 || e->refs, "object_references without refs");
	h = mix(h, e->id);
	h = mix(h, e->class_id);
	h = mix(h, e->size);
	h = mix(h, e->flags);
	h = mix(h, e->result);
	h = mix(h, e->has_generation ? e->generation + 1u : 0);
	h = mix(h, e->count);
	h = mix_bytes(h, e->refs, e->count * sizeof(*e->refs));
	if (e->ref_flags)
		h = mix_bytes(h, e->ref_flags,
			      e->count * sizeof(*e->ref_flags));
	if (e->ref_fields)
		h = mix_bytes(h, e->ref_fields,
			      e->count * sizeof(*e->ref_fields));
	h = digest_values(h, e);
	return mix(h, (e->ref_flags != NULL) | (e->ref_fields != NULL) << 1);
}

static uint64_t digest_fields(uint64_t h, const struct ht_ev_fields *e)
{
	FUZZ_CHECK(e->count == 0 || e->fields, "fields without fields");
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_field *f = &e->fields[i];

		h = mix(h, f->id);
		h = mix(h, f->class_id);
		h = mix_string(h, f->name);
		h = mix(h, f->kind);
		h = mix(h, f->has_offset ? f->offset : ~0ULL);
		h = mix(h, f->type);
	}
	return mix(h, e->count);
}

uint64_t fuzz_digest_event(uint64_t h, const struct ht_event *ev)
{
	const struct ht_ev_generation_bounds *b = &ev->u.generation_bounds;
	const struct ht_ev_moved_references *m = &ev->u.moved_references;
	const struct ht_ev_surviving_references *s =
		&ev->u.surviving_references;

	h = mix(h, ev->type);
	switch (ev->type) {
	case HT_EV_CLASS:
		h = mix(h, ev->u.class_.id);
		h = mix(h, ev->u.class_.has_size ? ev->u.class_.size : ~0ULL);
		return mix_string(h, ev->u.class_.name);
	case HT_EV_THREAD:
		h = mix(h, ev->u.thread.id);
		return mix_string(h, ev->u.thread.name);
	case HT_EV_METHOD:
		h = mix(h, ev->u.method.id);
		h = mix_string(h, ev->u.method.name);
		h = mix_string(h, ev->u.method.file);
		return mix(h, ev->u.method.line);
	case HT_EV_OBJECT_ALLOCATED:
		h = mix(h, ev->u.object_allocated.id);
		h = mix(h, ev->u.object_allocated.class_id);
		h = mix(h, ev->u.object_allocated.stack);
		return mix(h, ev->u.object_allocated.size);
	case HT_EV_STACK:
		FUZZ_CHECK(ev->u.stack.count == 0 || ev->u.stack.frames,
			   "stack without frames");
		FUZZ_CHECK(ev->u.stack.count <= HT_STACK_MAX_FRAMES,
			   "stack of more frames than a stack may have");
		h = mix(h, ev->u.stack.id);
		for (size_t i = 0; i < ev->u.stack.count; i++)
			h = mix(h, ev->u.stack.frames[i]);
		return mix(h, ev->u.stack.count);
	case HT_EV_GC_STARTED:
		h = mix(h, ev->u.gc_started.has_gc ? ev->u.gc_started.gc : ~0ULL);
		h = mix(h, ev->u.gc_started.generations);
		return mix(h, ev->u.gc_started.reason);
	case HT_EV_GENERATION_BOUNDS:
		FUZZ_CHECK(b->count == 0 || b->ranges, "bounds without ranges");
		for (size_t i = 0; i < b->count; i++) {
			h = mix(h, b->ranges[i].generation);
			h = mix(h, b->ranges[i].start);
			h = mix(h, b->ranges[i].length);
			h = mix(h, b->ranges[i].reserved);
		}
		return mix(h, b->count);
	case HT_EV_MOVED_REFERENCES:
		FUZZ_CHECK(m->count == 0 || m->blocks, "moves without blocks");
		for (size_t i = 0; i < m->count; i++) {
			h = mix(h, m->blocks[i].old_id);
			h = mix(h, m->blocks[i].new_id);
			h = mix(h, m->blocks[i].length);
		}
		return mix(h, m->count);
	case HT_EV_SURVIVING_REFERENCES:
		FUZZ_CHECK(s->count == 0 || s->blocks,
			   "survivals without blocks");
		for (size_t i = 0; i < s->count; i++) {
			h = mix(h, s->blocks[i].start);
			h = mix(h, s->blocks[i].length);
		}
		return mix(h, s->count);
	case HT_EV_GC_FINISHED:
		return h;
	case HT_EV_BEGIN_CONTAINER:
		h = mix(h, ev->u.begin_container.type);
		h = mix(h, ev->u.begin_container.id1);
		return mix(h, ev->u.begin_container.id2);
	case HT_EV_ROOT_REFERENCES:
		return digest_roots(h, &ev->u.root_references);
	case HT_EV_OBJECT_REFERENCES:
		return digest_object(h, &ev->u.object_references);
	case HT_EV_FIELDS:
		return digest_fields(h, &ev->u.fields);
	}
	fuzz_fail("reader delivered an event of unknown type %d", ev->type);
}
