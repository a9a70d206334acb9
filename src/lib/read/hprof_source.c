/*
 * hprof_source.c - Java heap dumps in HPROF form (1.0.1 and 1.0.2, 4- and
 * 8-byte ids, as jcmd GC.heap_dump, jmap and
 * -XX:+HeapDumpOnOutOfMemoryError
 * write them) as a source (source.h): each heap dump becomes one
 * C_BEGIN ... C_END container dump, with its roots in containers of the
 * matching types and its classes, instances and arrays as objects whose
 * sizes are HotSpot's (hprof_layout.c). heaptrace(1), INPUT FORMATS, gives
 * the mapping.
 *
 * HotSpot writes a dump's roots after its objects, but the event model
 * wants them first, so the file is read twice: an index pass (at open)
 * checks the framing of every record, keeps the names, frames, threads,
 * class descriptions and roots, which are few, and notes where each dump's
 * segments lie; the event pass then streams the objects of each dump,
 * after its roots. A pipe is first copied to a temporary file. Memory is
 * bounded by the names and classes, not by the objects.
 *
 * A gzipped dump (jcmd GC.heap_dump -gz=N) is inflated once through zlib
 * into a temporary file, which the passes then read as a plain dump (they
 * jump back, which a gzip stream can do only by inflating again from its
 * start). Offsets in messages are the uncompressed HPROF's. A pipe's
 * compressed bytes are first copied to a temporary file as well.
 *
 * Names come in Java's modified UTF-8 (a character past U+FFFF as two
 * 3-byte surrogates, U+0000 as C0 80) and leave as standard UTF-8
 * (utf8_from_modified), so that every output of them is valid.
 *
 * Damage found by the index pass (a truncated record, a bad tag, a length
 * that does not add up) is delivered as an error after every event of the
 * records before it. Every length is checked against the bytes the file
 * holds before anything is allocated for it.
 *
 * The reader's files, and what each holds, are listed in
 * hprof_internal.h; this one holds the source as a whole: opening, the
 * phases of the event pass, failing, the memory it keeps, closing.
 */
#include "lib/read/source.h"

#include "lib/read/hprof_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- Memory ------------------------------------------------------------ */

/* Why an allocation failed: the budget's refusal, or memory ran out. */
const char *hprof_nomem_cause(void)
{
	static char msg[96];

	if (!mem_budget_exceeded())
		return "out of memory";
	snprintf(msg, sizeof(msg), MEM_BUDGET_MESSAGE, mem_budget_limit());
	return msg;
}

/* malloc for what s keeps until it is closed, charged to the budget. */
void *hprof_alloc(struct hprof_source *s, size_t size)
{
	void *p;

	if (mem_budget_charge(size) < 0)
		return NULL;
	p = malloc(size);
	if (p)
		s->charged += size;
	else
		mem_budget_release(size);
	return p;
}

/* ---- Text that never moves --------------------------------------------- */

#define TEXT_BLOCK (256u << 10)

char *hprof_text_alloc(struct text_store *t, size_t n)
{
	char *p;

	if (t->n_blocks == 0 || t->size - t->used < n) {
		size_t size = n > TEXT_BLOCK ? n : TEXT_BLOCK;

		if (BUDGET_GROW(t->blocks, t->n_blocks + 1, t->cap_blocks,
				t->charged) < 0 ||
		    mem_budget_charge(size) < 0)
			return NULL;
		t->blocks[t->n_blocks] = malloc(size);
		if (!t->blocks[t->n_blocks]) {
			mem_budget_release(size);
			return NULL;
		}
		t->charged += size;
		t->n_blocks++;
		t->used = 0;
		t->size = size;
	}
	p = t->blocks[t->n_blocks - 1] + t->used;
	t->used += n;
	return p;
}

char *hprof_text_copy(struct text_store *t, const void *s, size_t len)
{
	char *p = hprof_text_alloc(t, len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static void text_free(struct text_store *t)
{
	for (size_t i = 0; i < t->n_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	mem_budget_release(t->charged);
	memset(t, 0, sizeof(*t));
}

/* ---- The trace's header ------------------------------------------------ */

static void fill_header(struct hprof_source *s, const char *why)
{
	time_t secs = (time_t)(s->timestamp_ms / 1000);
	struct tm tm;
	size_t n = 0;

	snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%s",
		 s->version);
	s->metadata[n].key = "hprof_version";
	n++;
	snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%u",
		 s->id_size);
	s->metadata[n].key = "hprof_id_size";
	n++;
	if (gmtime_r(&secs, &tm)) {
		snprintf(s->meta_values[n], sizeof(s->meta_values[n]),
			 "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (unsigned)(s->timestamp_ms % 1000));
		s->metadata[n].key = "hprof_time";
		n++;
	}
	snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%s",
		 jvm_layouts[s->model].name);
	s->metadata[n].key = "object_layout";
	n++;
	snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%s", why);
	s->metadata[n].key = "object_layout_from";
	n++;
	if (s->contradiction[0]) {
		snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%s",
			 s->contradiction);
		s->metadata[n].key = "object_layout_contradicted";
		n++;
	}
	for (size_t i = 0; i < n; i++)
		s->metadata[i].value = s->meta_values[i];
	s->header = (struct ht_header){
		.version = HT_FORMAT_VERSION,
		.runtime = "jvm",
		.pointer_size = s->id_size,
		.reports_survivors = false,
		.n_metadata = n,
		.metadata = s->metadata,
	};
}

/* ---- The event pass: failing ------------------------------------------- */

int hprof_fail_with(struct hprof_source *s, const struct ht_error *e,
		     struct ht_error *err)
{
	s->failure = *e;
	s->loss = (struct ht_loss){.lost = true, .offset = e->offset};
	if (s->in.size > e->offset)
		s->loss.bytes_lost = s->in.size - e->offset;
	s->phase = PH_FAILED;
	if (err)
		*err = s->failure;
	return -1;
}

int hprof_fail(struct hprof_source *s, struct ht_error *err,
		enum ht_error_code code, uint64_t offset, const char *fmt, ...)
{
	char cause[300];
	uint64_t lost = s->in.size > offset ? s->in.size - offset : 0;
	struct ht_error e;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	err_at_offset(&e, code, s->path, offset,
		      "%s; %llu %s from here to the end not read", cause,
		      (unsigned long long)lost, lost == 1 ? "byte" : "bytes");
	if (code == HT_E_IO)
		e.sys_errno = s->in.io_errno;
	return hprof_fail_with(s, &e, err);
}

int hprof_fail_read(struct hprof_source *s, struct ht_error *err,
		     uint64_t offset)
{
	char cause[128];
	enum ht_error_code code = hprof_read_failure(&s->in, cause, sizeof(cause));

	return hprof_fail(s, err, code, offset, "%s", cause);
}

/* ---- The event pass ---------------------------------------------------- */

/* A dump's begin or end at its record's time, in nanoseconds since the
 * header's timestamp (the trace's start), when the dump has times. */
static void dump_time(const struct dump *d, uint32_t us, struct ht_event *ev)
{
	if (!d->begin_us && !d->end_us)
		return;
	ev->has_time = true;
	ev->time = (uint64_t)us * 1000u;
}

static int begin_dump(struct hprof_source *s, struct ht_event *ev,
		      struct ht_error *err)
{
	const struct dump *d = &s->dumps[s->dump];

	if (hprof_build_plan(s, d) < 0 || hprof_sort_class_objects(s, d) < 0)
		return hprof_fail(s, err, HT_E_NOMEM, d->offset, "%s", hprof_nomem_cause());
	hprof_container_event(s, ev, HT_C_BEGIN, 0, 0, d->offset);
	dump_time(d, d->begin_us, ev);
	s->phase = PH_ROOTS;
	return 1;
}

static int next_root_step(struct hprof_source *s, struct ht_event *ev,
			  struct ht_error *err)
{
	const struct dump *d = &s->dumps[s->dump];

	if (s->plan_at < s->n_plan) {
		const struct step *st = &s->plan[s->plan_at++];

		if (hprof_step_event(s, st, ev) < 0)
			return hprof_fail(s, err, HT_E_NOMEM, st->offset,
				    "%s", hprof_nomem_cause());
		return 1;
	}
	hprof_container_event(s, ev, HT_C_HEAP, 0, 0,
			d->n_segs ? d->segs[0].offset : d->offset);
	s->seg = 0;
	s->at = d->n_segs ? d->segs[0].offset : 0;
	s->phase = PH_OBJECTS;
	return 1;
}

static int end_dump(struct hprof_source *s, struct ht_event *ev,
		    struct ht_error *err)
{
	const struct dump *d = &s->dumps[s->dump];

	if (!d->closed)
		return hprof_fail_with(s, &s->damage, err);
	hprof_container_event(s, ev, HT_C_END, 0, 0, d->end_offset);
	dump_time(d, d->end_us, ev);
	s->dump++;
	s->phase = PH_DUMP;
	return 1;
}

static int hprof_next(void *self, struct ht_event *ev, struct ht_error *err)
{
	struct hprof_source *s = self;
	int rc;

	for (;;) {
		switch (s->phase) {
		case PH_CLASSES:
		case PH_FIELDS:
		case PH_THREADS:
		case PH_METHODS:
			rc = hprof_next_name(s, ev, err);
			if (rc != 0)
				return rc;
			break;
		case PH_DUMP:
			if (s->dump < s->n_dumps)
				return begin_dump(s, ev, err);
			if (s->damaged)
				return hprof_fail_with(s, &s->damage, err);
			s->phase = PH_DONE;
			break;
		case PH_ROOTS:
			return next_root_step(s, ev, err);
		case PH_OBJECTS:
			rc = hprof_next_object(s, ev, err);
			if (rc != 0)
				return rc;
			s->phase = PH_DUMP_END;
			break;
		case PH_DUMP_END:
			return end_dump(s, ev, err);
		case PH_DONE:
			return 0;
		case PH_FAILED:
			if (err)
				*err = s->failure;
			return -1;
		}
	}
}

static struct ht_position hprof_position(const void *self)
{
	const struct hprof_source *s = self;

	return s->last;
}

static const struct ht_loss *hprof_loss(const void *self)
{
	const struct hprof_source *s = self;

	return &s->loss;
}

static void free_dumps(struct hprof_source *s)
{
	for (size_t i = 0; i < s->n_dumps; i++) {
		free(s->dumps[i].segs);
		free(s->dumps[i].roots);
		free(s->dumps[i].classes);
	}
	free(s->dumps);
}

static void free_classes(struct hprof_source *s)
{
	for (size_t i = 0; i < s->n_classes; i++) {
		struct hclass *c = &s->classes[i];

		free(c->types);
		free(c->names);
		free(c->own_refs);
		free(c->static_names);
		for (int m = 0; m < JVM_MODELS_; m++)
			if (c->has_layout[m])
				layout_free(&c->layout[m]);
	}
	free(s->classes);
}

static void hprof_close(void *self)
{
	struct hprof_source *s = self;

	if (!s)
		return;
	free_classes(s);
	free_dumps(s);
	idmap_free(&s->utf8);
	idmap_free(&s->loaded_by_serial);
	idmap_free(&s->loaded_by_id);
	idmap_free(&s->class_by_id);
	idmap_free(&s->frame_by_id);
	idmap_free(&s->method_by_key);
	idmap_free(&s->trace_by_serial);
	idmap_free(&s->trace_by_thread);
	idmap_free(&s->thread_by_serial);
	idmap_free(&s->chase_by_thread);
	idmap_free(&s->string_slot);
	idmap_free(&s->array_slot);
	free(s->utf8_text);
	free(s->loaded);
	free(s->frames);
	free(s->traces);
	free(s->frame_ids);
	free(s->threads);
	free(s->chases);
	free(s->strings_wanted);
	free(s->arrays_wanted);
	free(s->plan);
	free(s->plan_refs);
	free(s->by_id);
	free(s->refs);
	free(s->ref_fields);
	free(s->value_fields);
	free(s->values);
	free(s->fields);
	free(s->zero_flags);
	free(s->name_buf);
	free(s->in.buf);
	mem_budget_release(s->in.cap);
	mem_budget_release(s->charged);
	text_free(&s->text);
	if (s->inflated)
		fclose(s->inflated);
	if (s->spool)
		fclose(s->spool);
	/* standard input stays open for whoever reads it next */
	if (s->f && s->f != stdin)
		fclose(s->f);
	free(s);
}

static const struct ht_source_ops hprof_ops = {
	.format = "hprof",
	.next = hprof_next,
	.position = hprof_position,
	.loss = hprof_loss,
	.index = NULL,
	.close = hprof_close,
};

/* ---- Opening ----------------------------------------------------------- */

static int open_source(struct ht_reader *r, FILE *f, const char *path,
		       bool gzipped, struct ht_error *err)
{
	struct hprof_source *s = calloc(1, sizeof(*s));
	char why[128];

	if (!s) {
		if (f != stdin)
			fclose(f);
		err_plain(err, HT_E_NOMEM, path, "%s", hprof_nomem_cause());
		return -1;
	}
	s->path = path;
	s->f = f;
	s->string_value_at = STRING_FIELDS_UNKNOWN;
	s->choice = r->options.compressed_oops; /* checked by reader.c */
	s->want_values = r->options.values;
	if (hprof_attach_input(s, err) < 0 ||
	    (gzipped && (hprof_attach_gzip(s, err) < 0 ||
			 hprof_check_gzipped(s, err) < 0)) ||
	    hprof_read_file_header(s, err) < 0) {
		hprof_close(s);
		return -1;
	}
	hprof_index_file(s);
	hprof_name_threads(s);
	hprof_decide_model(s, why, sizeof(why));
	fill_header(s, why);
	r->ops = &hprof_ops;
	r->self = s;
	r->header = &s->header;
	return 0;
}

int hprof_source_open(struct ht_reader *r, FILE *f, const char *path,
		      struct ht_error *err)
{
	return open_source(r, f, path, false, err);
}

int hprof_source_open_gzip(struct ht_reader *r, FILE *f, const char *path,
			   struct ht_error *err)
{
	return open_source(r, f, path, true, err);
}
