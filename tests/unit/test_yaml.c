/*
 * test_yaml.c - the YAML text form: what `heaptrace cat` writes, byte for
 * byte; that what it writes reads back to the same events and the same
 * bytes; what the reader accepts; and that every mistake in a hand-written
 * trace is reported with its line, column and a message naming it.
 */
#include <criterion/criterion.h>

#include "lib/read/source.h"
#include "lib/read/textform.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- Helpers -------------------------------------------------------------- */

/* Opens YAML text as a source, as reader.c would; messages name the input
 * "trace.yaml". The text must outlive the source. */
static int open_text(struct ht_reader *r, const char *text,
		     struct ht_error *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	cr_assert(f);
	memset(r, 0, sizeof(*r));
	memset(err, 0, sizeof(*err));
	return yaml_source_open(r, f, "trace.yaml", err);
}

static void open_ok(struct ht_reader *r, const char *text)
{
	struct ht_error err;

	cr_assert_eq(open_text(r, text, &err), 0, "%s", err.message);
}

static int next(struct ht_reader *r, struct ht_event *ev)
{
	struct ht_error err;
	int rc = r->ops->next(r->self, ev, &err);

	cr_assert_geq(rc, 0, "%s", err.message);
	return rc;
}

static void close_source(struct ht_reader *r)
{
	r->ops->close(r->self);
}

/* The first error reading text gives, at open or at some event. */
static struct ht_error first_error(const char *text)
{
	struct ht_reader r;
	struct ht_error err;
	struct ht_event ev;
	int rc;

	if (open_text(&r, text, &err) < 0)
		return err;
	while ((rc = r.ops->next(r.self, &ev, &err)) > 0)
		;
	cr_assert_eq(rc, -1, "no error reading:\n%s", text);
	close_source(&r);
	return err;
}

/* Writes the header and events of a source as canonical YAML. */
static char *write_source(struct ht_reader *r)
{
	struct yaml_writer *w;
	struct ht_error err;
	struct ht_event ev;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	cr_assert(f);
	w = yaml_writer_open(f, "out.yaml", r->header, &err);
	cr_assert(w, "%s", err.message);
	while (next(r, &ev) > 0)
		cr_assert_eq(yaml_writer_event(w, &ev, &err), 0, "%s",
			     err.message);
	cr_assert_eq(yaml_writer_close(w, &err), 0, "%s", err.message);
	cr_assert_eq(fclose(f), 0);
	return out;
}

/* What `heaptrace cat` prints for a trace given as YAML text. */
static char *canonical(const char *text)
{
	struct ht_reader r;
	char *out;

	open_ok(&r, text);
	out = write_source(&r);
	close_source(&r);
	return out;
}

static bool same_string(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Optional arrays: both absent, or both there with the same n elements. */
static bool same_array(const void *a, const void *b, size_t n, size_t size)
{
	if (!a || !b)
		return !a && !b;
	return n == 0 || memcmp(a, b, n * size) == 0;
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
		    x->has_offset != y->has_offset || x->offset != y->offset)
			return false;
	}
	return true;
}

static bool same_event(const struct ht_event *a, const struct ht_event *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case HT_EV_CLASS:
		return a->u.class_.id == b->u.class_.id &&
		       same_string(a->u.class_.name, b->u.class_.name) &&
		       a->u.class_.has_size == b->u.class_.has_size &&
		       a->u.class_.size == b->u.class_.size;
	case HT_EV_THREAD:
		return a->u.thread.id == b->u.thread.id &&
		       same_string(a->u.thread.name, b->u.thread.name);
	case HT_EV_METHOD:
		return a->u.method.id == b->u.method.id &&
		       same_string(a->u.method.name, b->u.method.name) &&
		       same_string(a->u.method.file, b->u.method.file) &&
		       a->u.method.line == b->u.method.line;
	case HT_EV_STACK:
		return a->u.stack.id == b->u.stack.id &&
		       a->u.stack.count == b->u.stack.count &&
		       same_array(a->u.stack.frames, b->u.stack.frames,
				  a->u.stack.count, sizeof(ht_id));
	case HT_EV_OBJECT_ALLOCATED:
		return memcmp(&a->u.object_allocated, &b->u.object_allocated,
			      sizeof(a->u.object_allocated)) == 0;
	case HT_EV_GC_STARTED:
		return a->u.gc_started.has_gc == b->u.gc_started.has_gc &&
		       a->u.gc_started.gc == b->u.gc_started.gc &&
		       a->u.gc_started.generations ==
			       b->u.gc_started.generations &&
		       a->u.gc_started.reason == b->u.gc_started.reason;
	case HT_EV_GENERATION_BOUNDS:
		return a->u.generation_bounds.count ==
			       b->u.generation_bounds.count &&
		       same_array(a->u.generation_bounds.ranges,
				  b->u.generation_bounds.ranges,
				  a->u.generation_bounds.count,
				  sizeof(struct ht_generation_range));
	case HT_EV_MOVED_REFERENCES:
		return a->u.moved_references.count ==
			       b->u.moved_references.count &&
		       same_array(a->u.moved_references.blocks,
				  b->u.moved_references.blocks,
				  a->u.moved_references.count,
				  sizeof(struct ht_moved_block));
	case HT_EV_SURVIVING_REFERENCES:
		return a->u.surviving_references.count ==
			       b->u.surviving_references.count &&
		       same_array(a->u.surviving_references.blocks,
				  b->u.surviving_references.blocks,
				  a->u.surviving_references.count,
				  sizeof(struct ht_surviving_block));
	case HT_EV_GC_FINISHED:
		return true;
	case HT_EV_BEGIN_CONTAINER:
		return memcmp(&a->u.begin_container, &b->u.begin_container,
			      sizeof(a->u.begin_container)) == 0;
	case HT_EV_ROOT_REFERENCES: {
		const struct ht_ev_root_references *x = &a->u.root_references;
		const struct ht_ev_root_references *y = &b->u.root_references;
		size_t n = x->count;

		return n == y->count && x->result == y->result &&
		       same_array(x->refs, y->refs, n, sizeof(ht_id)) &&
		       same_array(x->flags, y->flags, n, sizeof(uint32_t)) &&
		       same_array(x->kinds, y->kinds, n, 1) &&
		       same_array(x->root_flags, y->root_flags, n, 1) &&
		       same_array(x->root_ids, y->root_ids, n, sizeof(ht_id)) &&
		       same_array(x->root_fields, y->root_fields, n,
				  sizeof(ht_id));
	}
	case HT_EV_OBJECT_REFERENCES: {
		const struct ht_ev_object_references *x =
			&a->u.object_references;
		const struct ht_ev_object_references *y =
			&b->u.object_references;
		size_t n = x->count;

		return x->id == y->id && x->class_id == y->class_id &&
		       x->size == y->size && x->flags == y->flags &&
		       n == y->count && x->result == y->result &&
		       x->has_generation == y->has_generation &&
		       x->generation == y->generation &&
		       same_array(x->refs, y->refs, n, sizeof(ht_id)) &&
		       same_array(x->ref_flags, y->ref_flags, n,
				  sizeof(uint32_t)) &&
		       same_array(x->ref_fields, y->ref_fields, n,
				  sizeof(ht_id));
	}
	case HT_EV_FIELDS:
		return same_fields(&a->u.fields, &b->u.fields);
	}
	return false;
}

static void assert_same_header(const struct ht_header *a,
			       const struct ht_header *b)
{
	cr_assert_eq(a->version, b->version);
	cr_assert(same_string(a->runtime, b->runtime));
	cr_assert(same_string(a->runtime_version, b->runtime_version));
	cr_assert_eq(a->pointer_size, b->pointer_size);
	cr_assert_eq(a->reports_survivors, b->reports_survivors);
	cr_assert(same_string(a->command_line, b->command_line));
	cr_assert_eq(a->has_start_time, b->has_start_time);
	cr_assert_eq(a->start_time, b->start_time);
	cr_assert_eq(a->n_metadata, b->n_metadata);
	for (size_t i = 0; i < a->n_metadata; i++) {
		cr_assert_str_eq(a->metadata[i].key, b->metadata[i].key);
		cr_assert_str_eq(a->metadata[i].value, b->metadata[i].value);
	}
}

/* Reads both texts side by side: same header, same events. */
static void assert_same_events(const char *text_a, const char *text_b)
{
	struct ht_reader a, b;
	struct ht_event ea, eb;
	int ra, rb;
	uint64_t i = 0;

	open_ok(&a, text_a);
	open_ok(&b, text_b);
	assert_same_header(a.header, b.header);
	do {
		ra = next(&a, &ea);
		rb = next(&b, &eb);
		cr_assert_eq(ra, rb, "event %llu: one input ended first",
			     (unsigned long long)i);
		if (ra)
			cr_assert(same_event(&ea, &eb),
				  "event %llu differs after a round trip",
				  (unsigned long long)i);
		i++;
	} while (ra);
	close_source(&a);
	close_source(&b);
}

/* Parse, write, parse again: the same events, and writing them again
 * gives the same bytes. */
static void assert_round_trip(const char *text)
{
	char *once = canonical(text);
	char *twice = canonical(once);

	cr_assert_str_eq(twice, once);
	assert_same_events(text, once);
	free(once);
	free(twice);
}

#define MINIMAL_HEADER "heaptrace: 1\nevents:\n"
#define CANONICAL_MINIMAL_HEADER \
	"heaptrace: 1\npointer_size: 8\nreports_survivors: false\nevents:\n"

/* One event, as input, and the line `cat` prints for it. */
static void assert_event_written_as(const char *item, const char *line)
{
	char text[4096], expected[4096];
	char *out;

	snprintf(text, sizeof(text), MINIMAL_HEADER "  - %s\n", item);
	snprintf(expected, sizeof(expected), CANONICAL_MINIMAL_HEADER "%s",
		 line);
	out = canonical(text);
	cr_assert_str_eq(out, expected);
	free(out);
	assert_round_trip(text);
}

/* The only event of a trace given as its list item, in ev (valid until
 * the source is closed). */
static void read_single(struct ht_reader *r, const char *item,
			struct ht_event *ev)
{
	char text[4096];

	snprintf(text, sizeof(text), MINIMAL_HEADER "  - %s\n", item);
	open_ok(r, text);
	cr_assert_eq(next(r, ev), 1);
}

static void assert_error(const char *text, unsigned line, unsigned column,
			 const char *needle)
{
	struct ht_error err = first_error(text);
	char prefix[64];

	cr_assert_eq(err.code, HT_E_SYNTAX, "code %d: %s", err.code,
		     err.message);
	cr_expect_eq(err.line, line, "line %u, not %u: %s", err.line, line,
		     err.message);
	cr_expect_eq(err.column, column, "column %u, not %u: %s", err.column,
		     column, err.message);
	snprintf(prefix, sizeof(prefix), "trace.yaml:%u:%u: ", line, column);
	cr_expect(strncmp(err.message, prefix, strlen(prefix)) == 0,
		  "'%s' does not start with '%s'", err.message, prefix);
	cr_expect(strstr(err.message, needle), "'%s' does not say '%s'",
		  err.message, needle);
}

/* An error in the event given as the first list item (line 3). */
static void assert_event_error(const char *item, unsigned column,
			       const char *needle)
{
	char text[4096];

	snprintf(text, sizeof(text), MINIMAL_HEADER "  - %s\n", item);
	assert_error(text, 3, column, needle);
}

/* ---- The canonical form ----------------------------------------------------- */

static const char canonical_example[] =
	"heaptrace: 4\n"
	"runtime: clr\n"
	"runtime_version: \"4.8\"\n"
	"pointer_size: 8\n"
	"reports_survivors: true\n"
	"command_line: \"dotnet app.dll\"\n"
	"start_time: 1700000000\n"
	"metadata:\n"
	"  key: value\n"
	"events:\n"
	"  - class: {id: 0x100, name: Foo, size: 24}\n"
	"  - fields:\n"
	"      - {id: 1, class: 0x100, name: next, kind: instance, offset: 16}\n"
	"      - {id: 2, class: 0x100, name: ROOT, kind: static}\n"
	"  - thread: {id: 0x7, name: main}\n"
	"  - method: {id: 0x40, name: \"Foo.bar()\"}\n"
	"  - method: {id: 0x41, name: Foo.baz, file: Foo.cs, line: 12}\n"
	"  - stack: {id: 1, frames: [0x41, 0x40]}\n"
	"  - object_allocated: {id: 0x1000, class: 0x100, size: 24}\n"
	"  - object_allocated: {id: 0x1018, class: 0x100, size: 24, stack: 1}\n"
	"  - gc_started: {gc: 3, generations: [0, 1], reason: induced, "
	"time: 1500000}\n"
	"  - generation_bounds:\n"
	"      - {generation: 0, start: 0x7f0000, length: 4096, reserved: 65536}\n"
	"  - moved_references:\n"
	"      - {old: 0x8, new: 0x7, length: 1}\n"
	"  - surviving_references:\n"
	"      - {start: 0x20, length: 16}\n"
	"  - gc_finished: {time: 2750000}\n"
	"  - begin_container: {type: C_BEGIN, time: 3000000}\n"
	"  - begin_container: {type: C_RT_JIT, id1: 0x10, id2: 0x40}\n"
	"  - root_references: {refs: [0x7], flags: [0], kinds: [stack], "
	"root_flags: [0x2], root_ids: [0x99], root_fields: [2], result: abort}\n"
	"  - object_references: {id: 0x7, class: 0x100, size: 24, "
	"refs: [0x8, 0], flags: 0x10000, ref_flags: [0, 0x1], ref_fields: [1, 0], "
	"generation: 0, result: postpone}\n";

/* The events of canonical_example, built in C. */
static void write_example_events(struct yaml_writer *w)
{
	static const struct ht_generation_range range = {0, 0x7f0000, 4096,
							 65536};
	static const struct ht_moved_block moved = {0x8, 0x7, 1};
	static const struct ht_surviving_block surviving = {0x20, 16};
	static const ht_id root_refs[] = {0x7}, root_ids[] = {0x99};
	static const uint32_t root_ref_flags[] = {0};
	static const uint8_t kinds[] = {HT_ROOT_STACK};
	static const uint8_t root_flags[] = {HT_ROOT_WEAK};
	static const ht_id obj_refs[] = {0x8, 0};
	static const uint32_t obj_ref_flags[] = {0, HT_OBJ_ALREADY_REPORTED};
	static const struct ht_field fields[] = {
		{1, 0x100, "next", HT_FIELD_INSTANCE, true, 16},
		{2, 0x100, "ROOT", HT_FIELD_STATIC, false, 0},
	};
	static const ht_id root_fields[] = {2}, obj_ref_fields[] = {1, 0};
	static const ht_id frames[] = {0x41, 0x40};
	struct ht_event evs[18];
	struct ht_error err;
	int n = 0;

	memset(evs, 0, sizeof(evs));
	evs[n].type = HT_EV_CLASS;
	evs[n].u.class_ = (struct ht_ev_class){0x100, "Foo", true, 24};
	evs[++n].type = HT_EV_FIELDS;
	evs[n].u.fields = (struct ht_ev_fields){2, fields};
	evs[++n].type = HT_EV_THREAD;
	evs[n].u.thread = (struct ht_ev_named){0x7, "main"};
	evs[++n].type = HT_EV_METHOD;
	evs[n].u.method = (struct ht_ev_method){0x40, "Foo.bar()", NULL, 0};
	evs[++n].type = HT_EV_METHOD;
	evs[n].u.method = (struct ht_ev_method){0x41, "Foo.baz", "Foo.cs", 12};
	evs[++n].type = HT_EV_STACK;
	evs[n].u.stack = (struct ht_ev_stack){1, 2, frames};
	evs[++n].type = HT_EV_OBJECT_ALLOCATED;
	evs[n].u.object_allocated =
		(struct ht_ev_object_allocated){0x1000, 0x100, 24, 0};
	evs[++n].type = HT_EV_OBJECT_ALLOCATED;
	evs[n].u.object_allocated =
		(struct ht_ev_object_allocated){0x1018, 0x100, 24, 1};
	evs[++n].type = HT_EV_GC_STARTED;
	evs[n].u.gc_started =
		(struct ht_ev_gc_started){true, 3, 0x3, HT_GC_INDUCED};
	evs[n].has_time = true;
	evs[n].time = 1500000;
	evs[++n].type = HT_EV_GENERATION_BOUNDS;
	evs[n].u.generation_bounds.count = 1;
	evs[n].u.generation_bounds.ranges = &range;
	evs[++n].type = HT_EV_MOVED_REFERENCES;
	evs[n].u.moved_references.count = 1;
	evs[n].u.moved_references.blocks = &moved;
	evs[++n].type = HT_EV_SURVIVING_REFERENCES;
	evs[n].u.surviving_references.count = 1;
	evs[n].u.surviving_references.blocks = &surviving;
	evs[++n].type = HT_EV_GC_FINISHED;
	evs[n].has_time = true;
	evs[n].time = 2750000;
	evs[++n].type = HT_EV_BEGIN_CONTAINER;
	evs[n].u.begin_container.type = HT_C_BEGIN;
	evs[n].has_time = true;
	evs[n].time = 3000000;
	evs[++n].type = HT_EV_BEGIN_CONTAINER;
	evs[n].u.begin_container =
		(struct ht_ev_begin_container){HT_C_RT_JIT, 0x10, 0x40};
	evs[++n].type = HT_EV_ROOT_REFERENCES;
	evs[n].u.root_references = (struct ht_ev_root_references){
		1, root_refs, root_ref_flags, kinds, root_flags, root_ids,
		HT_RESULT_ABORT, root_fields};
	evs[++n].type = HT_EV_OBJECT_REFERENCES;
	evs[n].u.object_references = (struct ht_ev_object_references){
		0x7, 0x100, 24, HT_OBJ_MORE_REFERENCES, 2, obj_refs,
		obj_ref_flags, true, 0, HT_RESULT_POSTPONE, obj_ref_fields};
	for (int i = 0; i <= n; i++)
		cr_assert_eq(yaml_writer_event(w, &evs[i], &err), 0, "%s",
			     err.message);
}

Test(yaml_write, prints_the_documented_canonical_form)
{
	static const struct ht_metadata meta[] = {{"key", "value"}};
	struct ht_header h = {
		.version = HT_FORMAT_VERSION,
		.runtime = "clr",
		.runtime_version = "4.8",
		.pointer_size = 8,
		.reports_survivors = true,
		.command_line = "dotnet app.dll",
		.has_start_time = true,
		.start_time = 1700000000,
		.n_metadata = 1,
		.metadata = meta,
	};
	struct yaml_writer *w;
	struct ht_error err;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	w = yaml_writer_open(f, "out.yaml", &h, &err);
	cr_assert(w, "%s", err.message);
	write_example_events(w);
	cr_assert_eq(yaml_writer_close(w, &err), 0, "%s", err.message);
	fclose(f);
	cr_assert_str_eq(out, canonical_example);
	free(out);
}

Test(yaml_write, canonical_form_reads_back_to_itself)
{
	char *out = canonical(canonical_example);

	cr_assert_str_eq(out, canonical_example);
	free(out);
	assert_round_trip(canonical_example);
}

Test(yaml_write, empty_event_list_is_an_empty_flow_list)
{
	struct ht_header h = {.version = 1, .pointer_size = 4};
	struct yaml_writer *w;
	struct ht_error err;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	w = yaml_writer_open(f, "out.yaml", &h, &err);
	cr_assert(w);
	cr_assert_eq(yaml_writer_close(w, &err), 0);
	fclose(f);
	cr_assert_str_eq(out, "heaptrace: 1\npointer_size: 4\n"
			      "reports_survivors: false\nevents: []\n");
	free(out);
}

Test(yaml_write, write_errors_are_reported)
{
	struct ht_header h = {.version = 1, .pointer_size = 8};
	struct ht_event ev = {.type = HT_EV_GC_FINISHED};
	struct yaml_writer *w;
	struct ht_error err;
	FILE *f = fopen("/dev/full", "w");

	cr_assert(f);
	w = yaml_writer_open(f, "full.yaml", &h, &err);
	cr_assert(w, "%s", err.message);
	for (int i = 0; i < 100000; i++)
		if (yaml_writer_event(w, &ev, &err) < 0)
			break;
	if (yaml_writer_close(w, &err) == 0)
		cr_assert_fail("writing to /dev/full succeeded");
	cr_assert_eq(err.code, HT_E_IO);
	cr_assert(strstr(err.message, "full.yaml: cannot write YAML"), "%s",
		  err.message);
	fclose(f);
}

Test(yaml_write, refuses_an_event_without_its_arrays)
{
	struct ht_header h = {.version = 1, .pointer_size = 8};
	struct ht_event ev = {.type = HT_EV_OBJECT_REFERENCES};
	struct yaml_writer *w;
	struct ht_error err;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ev.u.object_references.count = 3;
	w = yaml_writer_open(f, "out.yaml", &h, &err);
	cr_assert_eq(yaml_writer_event(w, &ev, &err), -1);
	cr_assert_eq(err.code, HT_E_INVALID);
	cr_assert(strstr(err.message, "object_references: refs is NULL"), "%s",
		  err.message);
	yaml_writer_close(w, &err);
	fclose(f);
	free(out);
}

Test(yaml_write, values_without_a_name_are_written_as_numbers)
{
	assert_event_written_as("begin_container: {type: 17}",
				"  - begin_container: {type: 17}\n");
	assert_event_written_as(
		"root_references: {refs: [1], flags: [0], kinds: [9], result: 7}",
		"  - root_references: {refs: [0x1], flags: [0], kinds: [9], "
		"result: 7}\n");
	assert_event_written_as(
		"gc_started: {generations: [], reason: 5}",
		"  - gc_started: {generations: [], reason: 5}\n");
}

/* ---- Each event type ---------------------------------------------------- */

Test(yaml_events, class)
{
	assert_event_written_as("class: {id: 256, name: Foo, size: 24}",
				"  - class: {id: 0x100, name: Foo, size: 24}\n");
	assert_event_written_as("class: {name: Bar, id: 0}",
				"  - class: {id: 0, name: Bar}\n");
}

Test(yaml_events, thread_and_method)
{
	assert_event_written_as("thread: {id: 7, name: main}",
				"  - thread: {id: 0x7, name: main}\n");
	assert_event_written_as("method: {id: 0x40, name: 'Foo.bar()'}",
				"  - method: {id: 0x40, name: \"Foo.bar()\"}\n");
}

Test(yaml_events, object_allocated)
{
	assert_event_written_as(
		"object_allocated: {size: 24, class: 0x100, id: 0x1000}",
		"  - object_allocated: {id: 0x1000, class: 0x100, size: 24}\n");
}

Test(yaml_events, gc_started)
{
	assert_event_written_as(
		"gc_started: {gc: 3, generations: [1, 0], reason: induced}",
		"  - gc_started: {gc: 3, generations: [0, 1], reason: induced}\n");
	assert_event_written_as(
		"gc_started: {generations: [31, 2]}",
		"  - gc_started: {generations: [2, 31], reason: other}\n");
	assert_event_written_as(
		"gc_started: {generations: []}",
		"  - gc_started: {generations: [], reason: other}\n");
}

Test(yaml_events, generation_bounds)
{
	assert_event_written_as(
		"generation_bounds:\n"
		"      - generation: 0\n"
		"        start: 0x7f0000\n"
		"        length: 0x1000\n"
		"        reserved: 65536\n"
		"      - {generation: 3, start: 0x9000000, length: 100}",
		"  - generation_bounds:\n"
		"      - {generation: 0, start: 0x7f0000, length: 4096, reserved: 65536}\n"
		"      - {generation: 3, start: 0x9000000, length: 100, reserved: 100}\n");
	assert_event_written_as("generation_bounds: []",
				"  - generation_bounds: []\n");
}

Test(yaml_events, moved_references)
{
	assert_event_written_as(
		"moved_references: [{old: 8, new: 7, length: 1}, "
		"{old: 0x10, new: 0x8, length: 3}]",
		"  - moved_references:\n"
		"      - {old: 0x8, new: 0x7, length: 1}\n"
		"      - {old: 0x10, new: 0x8, length: 3}\n");
	assert_event_written_as("moved_references:",
				"  - moved_references: []\n");
}

Test(yaml_events, surviving_references)
{
	assert_event_written_as(
		"surviving_references:\n      - {start: 32, length: 16}",
		"  - surviving_references:\n"
		"      - {start: 0x20, length: 16}\n");
	assert_event_written_as("surviving_references: []",
				"  - surviving_references: []\n");
}

Test(yaml_events, gc_finished)
{
	assert_event_written_as("gc_finished: {}", "  - gc_finished: {}\n");
	assert_event_written_as("gc_finished:", "  - gc_finished: {}\n");
}

Test(yaml_events, begin_container)
{
	assert_event_written_as("begin_container: {type: C_BEGIN}",
				"  - begin_container: {type: C_BEGIN}\n");
	assert_event_written_as(
		"begin_container: {type: 3, id1: 16, id2: 0x40}",
		"  - begin_container: {type: C_RT_JIT, id1: 0x10, id2: 0x40}\n");
	assert_event_written_as(
		"begin_container: {type: C_RT_THREAD, id1: 0, id2: 5}",
		"  - begin_container: {type: C_RT_THREAD, id2: 0x5}\n");
}

Test(yaml_events, root_references)
{
	assert_event_written_as(
		"root_references: {refs: [0x7], flags: [0], kinds: [stack], "
		"root_flags: [2], root_ids: [0x99], result: abort}",
		"  - root_references: {refs: [0x7], flags: [0], kinds: [stack], "
		"root_flags: [0x2], root_ids: [0x99], result: abort}\n");
	assert_event_written_as(
		"root_references:\n"
		"      refs: [1, 0, 3]\n"
		"      flags: [0, 1, 65536]\n"
		"      result: ok",
		"  - root_references: {refs: [0x1, 0, 0x3], "
		"flags: [0, 0x1, 0x10000]}\n");
	/* present but empty stays present */
	assert_event_written_as(
		"root_references: {refs: [], flags: [], kinds: [], root_ids: []}",
		"  - root_references: {refs: [], flags: [], kinds: [], "
		"root_ids: []}\n");
}

Test(yaml_events, object_references)
{
	assert_event_written_as(
		"object_references: {id: 0x7, class: 0x100, size: 24, "
		"refs: [0x8, 0], flags: 0x10000, ref_flags: [0, 1], "
		"generation: 0, result: postpone}",
		"  - object_references: {id: 0x7, class: 0x100, size: 24, "
		"refs: [0x8, 0], flags: 0x10000, ref_flags: [0, 0x1], "
		"generation: 0, result: postpone}\n");
	assert_event_written_as(
		"object_references: {id: 1, class: 2, size: 3, refs: []}",
		"  - object_references: {id: 0x1, class: 0x2, size: 3, "
		"refs: [], flags: 0}\n");
}

Test(yaml_events, defaults_of_optional_fields)
{
	struct ht_reader r;
	struct ht_event ev;

	read_single(&r, "object_references: {id: 1, class: 2, size: 3, refs: [4]}",
		    &ev);
	cr_assert_eq(ev.u.object_references.flags, 0);
	cr_assert_null(ev.u.object_references.ref_flags);
	cr_assert_not(ev.u.object_references.has_generation);
	cr_assert_eq(ev.u.object_references.result, HT_RESULT_OK);
	close_source(&r);

	read_single(&r, "root_references: {refs: [4], flags: [0]}", &ev);
	cr_assert_null(ev.u.root_references.kinds);
	cr_assert_null(ev.u.root_references.root_flags);
	cr_assert_null(ev.u.root_references.root_ids);
	cr_assert_eq(ev.u.root_references.result, HT_RESULT_OK);
	close_source(&r);

	read_single(&r, "gc_started: {generations: [2]}", &ev);
	cr_assert_not(ev.u.gc_started.has_gc);
	cr_assert_eq(ev.u.gc_started.reason, HT_GC_OTHER);
	close_source(&r);

	read_single(&r, "class: {id: 1, name: X, size: ~}", &ev);
	cr_assert_not(ev.u.class_.has_size);
	close_source(&r);

	read_single(&r, "begin_container: {type: C_HEAP}", &ev);
	cr_assert_eq(ev.u.begin_container.id1, 0);
	cr_assert_eq(ev.u.begin_container.id2, 0);
	close_source(&r);
}

/* ---- Reading ------------------------------------------------------------ */

static const char design_example[] =
	"heaptrace: 1\n"
	"runtime: clr\n"
	"pointer_size: 8\n"
	"reports_survivors: true\n"
	"events:\n"
	"  - gc_started: {generations: [0, 1, 2], reason: induced}\n"
	"  - moved_references:\n"
	"      - {old: 0x08, new: 0x07, length: 1}\n"
	"      - {old: 0x10, new: 0x08, length: 3}\n"
	"      - {old: 0x15, new: 0x11, length: 4}\n"
	"  - gc_finished: {}\n"
	"  - begin_container: {type: C_BEGIN}\n"
	"  - begin_container: {type: C_RT_THREAD, id1: 7}\n"
	"  - root_references: {refs: [0x07], flags: [0]}\n"
	"  - begin_container: {type: C_HEAP}\n"
	"  - object_references: {id: 0x07, class: 0x100, size: 1, "
	"refs: [0x08, 0], flags: 0}\n"
	"  - begin_container: {type: C_END}\n";

Test(yaml_read, design_example_reads_as_documented)
{
	struct ht_reader r;
	struct ht_event ev;
	const struct ht_moved_block *b;

	open_ok(&r, design_example);
	cr_assert_str_eq(ht_event_name(HT_EV_CLASS), "class");
	cr_assert_str_eq(r.header->runtime, "clr");
	cr_assert_eq(r.header->version, 1);
	cr_assert_eq(r.header->pointer_size, 8);
	cr_assert(r.header->reports_survivors);
	cr_assert_null(r.header->runtime_version);
	cr_assert_null(r.header->command_line);
	cr_assert_not(r.header->has_start_time);
	cr_assert_eq(r.header->n_metadata, 0);
	cr_assert_str_eq(r.ops->format, "yaml");
	cr_assert_null(r.ops->loss);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.type, HT_EV_GC_STARTED);
	cr_assert_eq(ev.u.gc_started.generations, 0x7);
	cr_assert_eq(ev.u.gc_started.reason, HT_GC_INDUCED);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.type, HT_EV_MOVED_REFERENCES);
	cr_assert_eq(ev.u.moved_references.count, 3);
	b = ev.u.moved_references.blocks;
	cr_assert(b[0].old_id == 0x8 && b[0].new_id == 0x7 && b[0].length == 1);
	cr_assert(b[1].old_id == 0x10 && b[1].new_id == 0x8 && b[1].length == 3);
	cr_assert(b[2].old_id == 0x15 && b[2].new_id == 0x11 && b[2].length == 4);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.type, HT_EV_GC_FINISHED);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.type, HT_EV_BEGIN_CONTAINER);
	cr_assert_eq(ev.u.begin_container.type, HT_C_BEGIN);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.u.begin_container.type, HT_C_RT_THREAD);
	cr_assert_eq(ev.u.begin_container.id1, 7);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.type, HT_EV_ROOT_REFERENCES);
	cr_assert_eq(ev.u.root_references.count, 1);
	cr_assert_eq(ev.u.root_references.refs[0], 0x7);
	cr_assert_eq(ev.u.root_references.flags[0], 0);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.u.begin_container.type, HT_C_HEAP);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.type, HT_EV_OBJECT_REFERENCES);
	cr_assert_eq(ev.u.object_references.id, 0x7);
	cr_assert_eq(ev.u.object_references.class_id, 0x100);
	cr_assert_eq(ev.u.object_references.size, 1);
	cr_assert_eq(ev.u.object_references.count, 2);
	cr_assert_eq(ev.u.object_references.refs[0], 0x8);
	cr_assert_eq(ev.u.object_references.refs[1], 0);

	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(ev.u.begin_container.type, HT_C_END);

	cr_assert_eq(next(&r, &ev), 0);
	cr_assert_eq(next(&r, &ev), 0, "the end stays the end");
	close_source(&r);
	assert_round_trip(design_example);
}

Test(yaml_read, numbers_are_decimal_or_hex)
{
	struct ht_reader r;
	struct ht_event ev;

	read_single(&r, "object_references: {id: 0XABCdef, class: 18446744073709551615, "
		    "size: 0xffffffffffffffff, refs: [0x0, 0, 10, 0x0010], "
		    "flags: 4294967295, generation: 0xFFFFFFFF}",
		    &ev);
	cr_assert_eq(ev.u.object_references.id, 0xabcdef);
	cr_assert_eq(ev.u.object_references.class_id, UINT64_MAX);
	cr_assert_eq(ev.u.object_references.size, UINT64_MAX);
	cr_assert_eq(ev.u.object_references.refs[0], 0);
	cr_assert_eq(ev.u.object_references.refs[1], 0);
	cr_assert_eq(ev.u.object_references.refs[2], 10);
	cr_assert_eq(ev.u.object_references.refs[3], 16);
	cr_assert_eq(ev.u.object_references.flags, UINT32_MAX);
	cr_assert_eq(ev.u.object_references.generation, UINT32_MAX);
	close_source(&r);
}

Test(yaml_read, header_fields)
{
	struct ht_reader r;

	open_ok(&r, "heaptrace: 1\n"
		    "runtime: mono\n"
		    "runtime_version: 6.12.0\n"
		    "pointer_size: 4\n"
		    "reports_survivors: false\n"
		    "command_line: 'mono app.exe --x'\n"
		    "start_time: -86400\n"
		    "metadata: {host: build-7, \"two words\": \"a: b\"}\n"
		    "events: []\n");
	cr_assert_str_eq(r.header->runtime, "mono");
	cr_assert_str_eq(r.header->runtime_version, "6.12.0");
	cr_assert_eq(r.header->pointer_size, 4);
	cr_assert_not(r.header->reports_survivors);
	cr_assert_str_eq(r.header->command_line, "mono app.exe --x");
	cr_assert(r.header->has_start_time);
	cr_assert_eq(r.header->start_time, -86400);
	cr_assert_eq(r.header->n_metadata, 2);
	cr_assert_str_eq(r.header->metadata[0].key, "host");
	cr_assert_str_eq(r.header->metadata[0].value, "build-7");
	cr_assert_str_eq(r.header->metadata[1].key, "two words");
	cr_assert_str_eq(r.header->metadata[1].value, "a: b");
	close_source(&r);
}

Test(yaml_read, header_round_trips)
{
	const char *text = "heaptrace: 1\n"
			   "runtime: \"jvm 1.1\"\n"
			   "pointer_size: 4\n"
			   "reports_survivors: true\n"
			   "start_time: -9223372036854775808\n"
			   "metadata:\n"
			   "  \"true\": \"\"\n"
			   "  z: \"\\x01\"\n"
			   "events: []\n";
	char *out = canonical(text);

	cr_assert_str_eq(out, "heaptrace: 1\n"
			      "runtime: \"jvm 1.1\"\n"
			      "pointer_size: 4\n"
			      "reports_survivors: true\n"
			      "start_time: -9223372036854775808\n"
			      "metadata:\n"
			      "  \"true\": \"\"\n"
			      "  z: \"\\x01\"\n"
			      "events: []\n");
	free(out);
	assert_round_trip(text);
}

Test(yaml_read, header_defaults)
{
	struct ht_reader r;

	open_ok(&r, "heaptrace: 1\nevents: []\n");
	cr_assert_eq(r.header->version, 1);
	cr_assert_eq(r.header->pointer_size, 8);
	cr_assert_not(r.header->reports_survivors);
	cr_assert_null(r.header->runtime);
	cr_assert_null(r.header->metadata);
	close_source(&r);
}

Test(yaml_read, null_events_is_an_empty_trace)
{
	struct ht_reader r;
	struct ht_event ev;

	open_ok(&r, "heaptrace: 1\nevents:\n");
	cr_assert_eq(next(&r, &ev), 0);
	close_source(&r);
	open_ok(&r, "heaptrace: 1\nevents: ~\n...\n");
	cr_assert_eq(next(&r, &ev), 0);
	close_source(&r);
}

Test(yaml_read, block_and_flow_styles_are_the_same)
{
	const char *block = "heaptrace: 1\n"
			    "events:\n"
			    "- object_references:\n"
			    "    id: 0x7\n"
			    "    class: 0x100\n"
			    "    size: 24\n"
			    "    refs:\n"
			    "    - 0x8\n"
			    "    - 0\n"
			    "- gc_started:\n"
			    "    generations:\n"
			    "    - 0\n";
	const char *flow = "{heaptrace: 1, events: [\n"
			   "{object_references: {id: 7, class: 256, size: 24, refs: [8, 0]}},\n"
			   "{gc_started: {generations: [0]}}]}\n";

	assert_same_events(block, flow);
	assert_round_trip(block);
}

Test(yaml_read, position_of_each_event)
{
	struct ht_reader r;
	struct ht_event ev;
	struct ht_position p;

	open_ok(&r, "heaptrace: 1\n"
		    "events:\n"
		    "  - gc_finished: {}\n"
		    "  # a comment\n"
		    "  -   begin_container: {type: C_BEGIN}\n");
	cr_assert_eq(next(&r, &ev), 1);
	p = r.ops->position(r.self);
	cr_assert_eq(p.event_index, 0);
	cr_assert_eq(p.line, 3);
	cr_assert_eq(p.column, 5);
	cr_assert_eq(p.offset, 25);
	cr_assert_eq(next(&r, &ev), 1);
	p = r.ops->position(r.self);
	cr_assert_eq(p.event_index, 1);
	cr_assert_eq(p.line, 5);
	cr_assert_eq(p.column, 7);
	cr_assert_eq(p.offset, 61);
	close_source(&r);
}

Test(yaml_read, enumerations_by_name_or_number)
{
	struct ht_reader r;
	struct ht_event ev;

	read_single(&r, "begin_container: {type: 16}", &ev);
	cr_assert_eq(ev.u.begin_container.type, HT_C_END);
	close_source(&r);
	/* out of range: read, for the protocol check to report */
	read_single(&r, "begin_container: {type: 17}", &ev);
	cr_assert_eq((int)ev.u.begin_container.type, 17);
	close_source(&r);
	read_single(&r, "root_references: {refs: [1, 2, 3, 4], flags: [0, 0, 0, 0], "
		    "kinds: [other, stack, finalizer, handle], result: postpone}",
		    &ev);
	cr_assert_eq(ev.u.root_references.kinds[0], HT_ROOT_OTHER);
	cr_assert_eq(ev.u.root_references.kinds[1], HT_ROOT_STACK);
	cr_assert_eq(ev.u.root_references.kinds[2], HT_ROOT_FINALIZER);
	cr_assert_eq(ev.u.root_references.kinds[3], HT_ROOT_HANDLE);
	cr_assert_eq(ev.u.root_references.result, HT_RESULT_POSTPONE);
	close_source(&r);
}

Test(yaml_read, through_the_generic_reader)
{
	const char *path = tmp_file_with("generic.yaml", design_example,
					 strlen(design_example));
	struct ht_reader *r;
	struct ht_error err;
	struct ht_event ev;
	int n = 0, rc;

	r = ht_reader_open(path, &err);
	cr_assert(r, "%s", err.message);
	cr_assert_str_eq(ht_reader_format(r), "yaml");
	while ((rc = ht_reader_next(r, &ev, &err)) > 0)
		n++;
	cr_assert_eq(rc, 0, "%s", err.message);
	cr_assert_eq(n, 9);
	ht_reader_close(r);
}

/* ---- Strings -------------------------------------------------------------- */

/* A class named name is written with the name as `written` and reads back
 * with the name `read` (the same, unless name is not UTF-8). */
static void assert_name(const char *name, const char *written,
			const char *read)
{
	struct ht_header h = {.version = 1, .pointer_size = 8};
	struct ht_event ev = {.type = HT_EV_CLASS};
	struct yaml_writer *w;
	struct ht_reader r;
	struct ht_error err;
	char *out = NULL, expected[512];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ev.u.class_.id = 1;
	ev.u.class_.name = name;
	w = yaml_writer_open(f, "out.yaml", &h, &err);
	cr_assert_eq(yaml_writer_event(w, &ev, &err), 0);
	cr_assert_eq(yaml_writer_close(w, &err), 0);
	fclose(f);
	snprintf(expected, sizeof(expected),
		 CANONICAL_MINIMAL_HEADER "  - class: {id: 0x1, name: %s}\n",
		 written);
	cr_assert_str_eq(out, expected);

	open_ok(&r, out);
	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_str_eq(ev.u.class_.name, read);
	close_source(&r);
	free(out);
}

Test(yaml_strings, plain_when_unambiguous)
{
	assert_name("Foo", "Foo", "Foo");
	assert_name("java.lang.String", "java.lang.String", "java.lang.String");
	assert_name("java/lang/Object", "java/lang/Object", "java/lang/Object");
	assert_name("$Proxy12", "$Proxy12", "$Proxy12");
	assert_name("_x-1", "_x-1", "_x-1");
	assert_name("nulls", "nulls", "nulls");
}

Test(yaml_strings, quoted_when_yaml_would_misread_them)
{
	assert_name("[Ljava.lang.String;", "\"[Ljava.lang.String;\"",
		    "[Ljava.lang.String;");
	assert_name("true", "\"true\"", "true");
	assert_name("False", "\"False\"", "False");
	assert_name("NO", "\"NO\"", "NO");
	assert_name("y", "\"y\"", "y");
	assert_name("Off", "\"Off\"", "Off");
	assert_name("null", "\"null\"", "null");
	assert_name("~", "\"~\"", "~");
	assert_name("", "\"\"", "");
	assert_name("0x10", "\"0x10\"", "0x10");
	assert_name("12", "\"12\"", "12");
	assert_name("-x", "\"-x\"", "-x");
	assert_name(".x", "\".x\"", ".x");
	assert_name("Foo.bar()", "\"Foo.bar()\"", "Foo.bar()");
	assert_name("a: b", "\"a: b\"", "a: b");
	assert_name("a, b", "\"a, b\"", "a, b");
	assert_name("#x", "\"#x\"", "#x");
	assert_name("x #y", "\"x #y\"", "x #y");
	assert_name("{x}", "\"{x}\"", "{x}");
	assert_name("*x", "\"*x\"", "*x");
	assert_name("&x", "\"&x\"", "&x");
	assert_name("!x", "\"!x\"", "!x");
	assert_name("'x'", "\"'x'\"", "'x'");
	assert_name("@x", "\"@x\"", "@x");
	assert_name("List`1", "\"List`1\"", "List`1");
	assert_name("hello world", "\"hello world\"", "hello world");
	assert_name(" lead", "\" lead\"", " lead");
	assert_name("trail ", "\"trail \"", "trail ");
}

Test(yaml_strings, escapes)
{
	assert_name("a\"b", "\"a\\\"b\"", "a\"b");
	assert_name("back\\slash", "\"back\\\\slash\"", "back\\slash");
	assert_name("t\tn\nr\r", "\"t\\tn\\nr\\r\"", "t\tn\nr\r");
	assert_name("\x01\x1f\x7f", "\"\\x01\\x1f\\x7f\"", "\x01\x1f\x7f");
}

Test(yaml_strings, utf8_passes_through)
{
	assert_name("Ünïcödé", "\"Ünïcödé\"", "Ünïcödé");
	assert_name("名前 😀", "\"名前 😀\"", "名前 😀");
	/* what libyaml would refuse or fold as a line break is escaped */
	assert_name("a\xc2\x85" "b", "\"a\\x85b\"", "a\xc2\x85" "b");
	assert_name("\xc2\x9f", "\"\\x9f\"", "\xc2\x9f");
	assert_name("\xe2\x80\xa8\xe2\x80\xa9", "\"\\u2028\\u2029\"",
		    "\xe2\x80\xa8\xe2\x80\xa9");
	assert_name("\xef\xbb\xbf\xef\xbf\xbe", "\"\\ufeff\\ufffe\"",
		    "\xef\xbb\xbf\xef\xbf\xbe");
}

Test(yaml_strings, bytes_that_are_not_utf8_become_replacement_characters)
{
	assert_name("a\xff" "b", "\"a\xef\xbf\xbd" "b\"", "a\xef\xbf\xbd" "b");
	assert_name("\xc3", "\"\xef\xbf\xbd\"", "\xef\xbf\xbd");
	assert_name("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

Test(yaml_strings, names_read_from_any_scalar_style)
{
	struct ht_reader r;
	struct ht_event ev;

	read_single(&r, "thread: {id: 1, name: 'it''s'}", &ev);
	cr_assert_str_eq(ev.u.thread.name, "it's");
	close_source(&r);
	read_single(&r, "thread: {id: 1, name: \"\\u00e9\\t\"}", &ev);
	cr_assert_str_eq(ev.u.thread.name, "\xc3\xa9\t");
	close_source(&r);
	read_single(&r, "thread:\n      id: 1\n      name: |\n        two\n        lines", &ev);
	cr_assert_str_eq(ev.u.thread.name, "two\nlines\n");
	close_source(&r);
}

/* ---- Errors ----------------------------------------------------------------- */

Test(yaml_errors, unknown_field)
{
	assert_error("heaptrace: 1\n"
		     "events:\n"
		     "  - gc_finished: {}\n"
		     "  - object_references: {id: 1, class: 2, sise: 3, refs: []}\n",
		     4, 42, "object_references: unknown field 'sise'");
}

Test(yaml_errors, unknown_field_in_a_block)
{
	assert_event_error("moved_references: [{old: 1, neu: 2, length: 1}]",
			   33, "moved_references: unknown field 'neu'");
}

Test(yaml_errors, duplicate_field)
{
	assert_event_error("class: {id: 1, name: A, id: 2}", 29,
			   "class: duplicate field 'id'");
}

Test(yaml_errors, missing_field)
{
	assert_event_error("object_allocated: {id: 1, class: 2}", 23,
			   "object_allocated: missing field 'size'");
	assert_event_error("generation_bounds: [{generation: 0, start: 0}]", 25,
			   "generation_bounds: missing field 'length'");
	assert_event_error("begin_container:", 21,
			   "begin_container: missing field 'type'");
}

Test(yaml_errors, missing_field_in_block_style)
{
	assert_error("heaptrace: 1\n"
		     "events:\n"
		     "  - thread:\n"
		     "      id: 7\n",
		     4, 7, "thread: missing field 'name'");
}

Test(yaml_errors, null_for_a_required_field)
{
	assert_event_error("class: {id: ~, name: A}", 17,
			   "class: 'id' must not be null");
	assert_event_error("class: {id: 1, name: null}", 26,
			   "class: 'name' must not be null");
	assert_event_error("object_references: {id: 1, class: 1, size: 1, refs: }",
			   57, "object_references: 'refs' must not be null");
}

Test(yaml_errors, unknown_event)
{
	assert_event_error("object_allocate: {id: 1}", 5,
			   "unknown event 'object_allocate'");
}

Test(yaml_errors, event_item_not_a_mapping)
{
	assert_event_error("gc_finished", 5,
			   "an event must be a mapping {name: fields}, not a scalar");
	assert_event_error("{}", 5, "an event must name its type");
}

Test(yaml_errors, two_events_in_one_item)
{
	assert_error("heaptrace: 1\n"
		     "events:\n"
		     "  - gc_finished: {}\n"
		     "    gc_started: {generations: [0]}\n",
		     4, 5, "gc_finished: one event per list item");
}

Test(yaml_errors, wrong_types)
{
	assert_event_error("class: {id: [1], name: A}", 17,
			   "class: 'id' must be a number, not a sequence");
	assert_event_error("class: {id: \"1\", name: A}", 17,
			   "class: 'id' must be a number, not a string");
	assert_event_error("class: {id: 1, name: {a: b}}", 26,
			   "class: 'name' must be a string, not a mapping");
	assert_event_error("root_references: {refs: 1, flags: [0]}", 29,
			   "root_references: 'refs' must be a list, not a scalar");
	assert_event_error("moved_references: {old: 1, new: 2, length: 3}", 23,
			   "moved_references: expected a list of blocks, not a mapping");
	assert_event_error("surviving_references: [[1, 2]]", 28,
			   "surviving_references: each block must be a mapping, not a sequence");
	assert_event_error("gc_finished: []", 18,
			   "gc_finished: expected a mapping of fields, not a sequence");
	assert_event_error("class: {[id]: 1, name: A}", 13,
			   "class: a key must be a name, not a sequence");
}

Test(yaml_errors, invalid_numbers)
{
	assert_event_error("thread: {id: 0x, name: A}", 18,
			   "thread: 'id': invalid number '0x'");
	assert_event_error("thread: {id: -1, name: A}", 18,
			   "thread: 'id': invalid number '-1'");
	assert_event_error("thread: {id: +1, name: A}", 18,
			   "thread: 'id': invalid number '+1'");
	assert_event_error("thread: {id: 1.5, name: A}", 18,
			   "thread: 'id': invalid number '1.5'");
	assert_event_error("thread: {id: 0x1g, name: A}", 18,
			   "thread: 'id': invalid number '0x1g'");
	assert_event_error("thread: {id: 010, name: A}", 18,
			   "thread: 'id': invalid number '010'");
	assert_event_error("thread: {id: 1_000, name: A}", 18,
			   "thread: 'id': invalid number '1_000'");
}

Test(yaml_errors, numbers_out_of_range)
{
	assert_event_error("thread: {id: 18446744073709551616, name: A}", 18,
			   "thread: 'id': 18446744073709551616 is out of range");
	assert_event_error("thread: {id: 0x10000000000000000, name: A}", 18,
			   "thread: 'id': 0x10000000000000000 is out of range");
	assert_event_error("object_references: {id: 1, class: 1, size: 1, refs: [], "
			   "flags: 0x100000000}",
			   68, "object_references: 'flags': 0x100000000 is out of range "
			   "(at most 4294967295)");
	assert_event_error("root_references: {refs: [1], flags: [4294967296]}", 42,
			   "root_references: 'flags': 4294967296 is out of range");
	assert_event_error("root_references: {refs: [1], flags: [0], root_flags: [256]}",
			   59, "root_references: 'root_flags': 256 is out of range");
	assert_event_error("gc_started: {generations: [32]}", 32,
			   "gc_started: 'generations': 32 is out of range (at most 31)");
	assert_event_error("generation_bounds: [{generation: 4294967296, start: 0, length: 0}]",
			   38, "generation_bounds: 'generation': 4294967296 is out of range");
}

Test(yaml_errors, unknown_names)
{
	assert_event_error("begin_container: {type: C_FOO}", 29,
			   "begin_container: 'type': unknown container type 'C_FOO'");
	assert_event_error("object_references: {id: 1, class: 1, size: 1, refs: [], "
			   "result: fail}",
			   69, "object_references: 'result': unknown result 'fail'");
	assert_event_error("gc_started: {generations: [0], reason: oom}", 44,
			   "gc_started: 'reason': unknown reason 'oom'");
	assert_event_error("root_references: {refs: [1], flags: [0], kinds: [heap]}",
			   54, "root_references: 'kinds': unknown root kind 'heap'");
	assert_event_error("begin_container: {type: \"C_END\\0\"}", 29,
			   "unknown container type");
}

Test(yaml_errors, generation_listed_twice)
{
	assert_event_error("gc_started: {generations: [0, 1, 0]}", 38,
			   "gc_started: 'generations': generation 0 listed twice");
}

Test(yaml_errors, parallel_lists_of_other_lengths)
{
	assert_event_error("root_references: {refs: [1, 2], flags: [0]}", 44,
			   "root_references: 'flags' has 1 items but 'refs' has 2");
	assert_event_error("root_references: {refs: [1], flags: [0], root_ids: []}",
			   56, "root_references: 'root_ids' has 0 items but 'refs' has 1");
	assert_event_error("object_references: {id: 1, class: 1, size: 1, refs: [1], "
			   "ref_flags: [0, 0]}",
			   73, "object_references: 'ref_flags' has 2 items but 'refs' has 1");
}

Test(yaml_errors, nul_in_a_name)
{
	assert_event_error("class: {id: 1, name: \"a\\0b\"}", 26,
			   "class: 'name' contains a NUL character");
}

Test(yaml_errors, aliases)
{
	assert_error("heaptrace: 1\n"
		     "events:\n"
		     "  - &e gc_finished: {}\n"
		     "  - *e\n",
		     4, 5, "aliases (*e) are not supported");
}

Test(yaml_errors, header_version)
{
	struct ht_error err = first_error("heaptrace: 5\nevents: []\n");

	cr_assert_eq(err.code, HT_E_FORMAT);
	cr_assert_eq(err.line, 1);
	cr_assert_eq(err.column, 12);
	cr_assert(strstr(err.message, "unsupported heaptrace version 5"), "%s",
		  err.message);
	assert_error("runtime: clr\nevents: []\n", 2, 1,
		     "the header lacks 'heaptrace: 1' before 'events'");
	assert_error("heaptrace: one\nevents: []\n", 1, 12,
		     "header: 'heaptrace': invalid number 'one'");
}

Test(yaml_errors, header_values)
{
	assert_error("heaptrace: 1\npointer_size: 2\nevents: []\n", 2, 15,
		     "header: 'pointer_size' must be 4 or 8, not 2");
	assert_error("heaptrace: 1\nreports_survivors: yes\nevents: []\n", 2, 20,
		     "header: 'reports_survivors' must be true or false");
	assert_error("heaptrace: 1\nstart_time: -0x\nevents: []\n", 2, 13,
		     "header: 'start_time': invalid number '-0x'");
	assert_error("heaptrace: 1\nstart_time: -9223372036854775809\nevents: []\n",
		     2, 13, "header: 'start_time': -9223372036854775809 is out of range");
	assert_error("heaptrace: 1\nruntime: [clr]\nevents: []\n", 2, 10,
		     "header: 'runtime' must be a string, not a sequence");
	assert_error("heaptrace: 1\nmetadata: [a]\nevents: []\n", 2, 11,
		     "header: 'metadata' must be a mapping, not a sequence");
	assert_error("heaptrace: 1\nmetadata: {a: {b: c}}\nevents: []\n", 2, 15,
		     "metadata: the value of 'a' must be a string, not a mapping");
	assert_error("heaptrace: 1\nmetadata: {a: ~}\nevents: []\n", 2, 15,
		     "metadata: the value of 'a' must be a string, not null");
}

Test(yaml_errors, header_keys)
{
	assert_error("heaptrace: 1\nruntime: clr\nruntme: x\nevents: []\n", 3, 1,
		     "unknown header key 'runtme'");
	assert_error("heaptrace: 1\nruntime: clr\nruntime: x\nevents: []\n", 3, 1,
		     "duplicate header key 'runtime'");
	assert_error("heaptrace: 1\nmetadata:\n  a: 1\n  b: 2\n  a: 3\n  b: 4\n"
		     "events: []\n", 5, 3, "metadata: duplicate key 'a'");
}

Test(yaml_errors, events_must_be_the_last_key)
{
	assert_error("heaptrace: 1\nevents: []\nruntime: clr\n", 3, 1,
		     "'runtime' after 'events': 'events' must be the last key");
	assert_error("heaptrace: 1\nevents:\nruntime: clr\n", 3, 1,
		     "'runtime' after 'events'");
	assert_error("heaptrace: 1\n"
		     "events:\n"
		     "  - gc_finished: {}\n"
		     "pointer_size: 8\n",
		     4, 1, "'pointer_size' after 'events'");
}

Test(yaml_errors, document_shape)
{
	assert_error("heaptrace: 1\nruntime: clr\n", 3, 1,
		     "the trace has no 'events' list");
	assert_error("heaptrace: 1\nevents: {}\n", 2, 9,
		     "'events' must be a list, not a mapping");
	assert_error("- heaptrace: 1\n", 1, 1,
		     "a trace must be a mapping");
	assert_error("", 1, 1, "empty input");
	assert_error("# only a comment\n", 2, 1, "empty input");
	assert_error("heaptrace: 1\nevents: []\n---\nheaptrace: 1\nevents: []\n",
		     3, 1, "a trace is one YAML document");
}

Test(yaml_errors, libyaml_syntax_errors)
{
	assert_error("heaptrace: 1\n"
		     "events:\n"
		     "  - class: {id: 1, name: A\n"
		     "  - gc_finished: {}\n",
		     4, 16, "did not find expected ',' or '}' (while parsing a "
			   "flow mapping at line 3, column 12)");
	assert_error("heaptrace: 1\n"
		     "events:\n"
		     "  - class: {id: 1, name: \"A}\n",
		     4, 1, "found unexpected end of stream (while scanning a "
			   "quoted scalar at line 3, column 26)");
	assert_error("heaptrace: 1\n\tevents: []\n", 2, 1,
		     "found a tab character that violates indentation");
}

Test(yaml_errors, invalid_utf8_is_reported_at_its_byte)
{
	struct ht_error err = first_error("heaptrace: 1\n"
					  "events:\n"
					  "  - class: {id: 1, name: \"\xff\"}\n");

	cr_assert_eq(err.code, HT_E_SYNTAX);
	cr_assert_eq(err.offset, 47);
	cr_assert(strstr(err.message, "trace.yaml: byte 47: invalid leading UTF-8 octet (0xff)"),
		  "%s", err.message);
}

/* n thread events, the name of event i "x" * (i % 7) then "é€😀" (2, 3
 * and 4 bytes of UTF-8: the padding moves them across every place a read
 * can end), then tail. Returns malloc'ed text. */
static char *threads_text(size_t n, const char *tail)
{
	size_t cap = 64 + n * 64 + strlen(tail), used;
	char *text = malloc(cap);

	cr_assert(text);
	used = (size_t)sprintf(text, "heaptrace: 1\nevents:\n");
	for (size_t i = 0; i < n; i++)
		used += (size_t)sprintf(text + used,
					"  - thread: {id: %zu, name: \"%.*s"
					"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}\n",
					i + 1, (int)(i % 7), "xxxxxxx");
	strcpy(text + used, tail);
	return text;
}

static void assert_threads(struct ht_reader *r, size_t n)
{
	struct ht_event ev;
	char want[32];

	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(next(r, &ev), 1, "event %zu", i);
		cr_assert_eq(ev.type, HT_EV_THREAD);
		cr_assert_eq(ev.u.thread.id, i + 1);
		snprintf(want, sizeof(want), "%.*s\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
			 (int)(i % 7), "xxxxxxx");
		cr_assert_str_eq(ev.u.thread.name, want, "event %zu", i);
	}
}

Test(yaml_utf8, characters_across_reads_are_whole)
{
	char *text = threads_text(5000, "");
	struct ht_reader r;
	struct ht_event ev;

	open_ok(&r, text);
	assert_threads(&r, 5000);
	cr_assert_eq(next(&r, &ev), 0);
	close_source(&r);
	free(text);
}

/* libyaml decodes 16 KiB ahead of its parser: the bad byte used to fail
 * the file hundreds of events early (4,575 of 5,000 read). */
Test(yaml_utf8, every_event_before_a_bad_byte_is_read)
{
	char *text = threads_text(5000, "  - thread: {id: 5001, name: \"\xc3(\"}\n");
	struct ht_reader r;
	struct ht_event ev;
	struct ht_error err;
	char want[96];

	open_ok(&r, text);
	assert_threads(&r, 5000);
	cr_assert_eq(r.ops->next(r.self, &ev, &err), -1);
	/* the '(' after the lead byte 0xc3 */
	cr_assert_eq(err.offset, strlen(text) - 4, "%s (of %zu)", err.message,
		     strlen(text));
	snprintf(want, sizeof(want), "trace.yaml: byte %zu: invalid trailing "
		 "UTF-8 octet (0x28)", strlen(text) - 4);
	cr_assert_str_eq(err.message, want);
	cr_assert_eq(r.ops->next(r.self, &ev, &err), -1, "the error repeats");
	cr_assert_str_eq(err.message, want);
	close_source(&r);
	free(text);
}

/* A bad byte in the header: nothing is read, the byte is the error. */
Test(yaml_utf8, a_bad_byte_in_the_header_fails_the_open)
{
	struct ht_error err = first_error("heaptrace: 1\nruntime: \x01\nevents: []\n");

	cr_assert_eq(err.offset, 22);
	cr_assert_str_eq(err.message, "trace.yaml: byte 22: control characters "
			 "are not allowed (0x1)");
}

Test(yaml_errors, an_error_is_repeated_and_earlier_events_kept)
{
	struct ht_reader r;
	struct ht_event ev;
	struct ht_error err;

	open_ok(&r, "heaptrace: 1\n"
		    "events:\n"
		    "  - gc_finished: {}\n"
		    "  - gc_finished: 1\n");
	cr_assert_eq(next(&r, &ev), 1);
	cr_assert_eq(r.ops->next(r.self, &ev, &err), -1);
	cr_assert_eq(err.line, 4);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(r.ops->next(r.self, &ev, &err), -1);
	cr_assert_eq(err.line, 4);
	cr_assert(strstr(err.message, "gc_finished: expected a mapping of fields, "
				      "not a scalar"), "%s", err.message);
	cr_assert_eq(r.ops->next(r.self, &ev, NULL), -1);
	close_source(&r);
}

/* Inputs cut short anywhere must fail cleanly, never crash or succeed with
 * a partial event. */
Test(yaml_errors, every_truncation_of_a_trace_fails_cleanly)
{
	size_t n = strlen(canonical_example);
	char *text = malloc(n + 1);

	for (size_t cut = 0; cut < n; cut++) {
		struct ht_reader r;
		struct ht_error err;
		struct ht_event ev;
		int rc;

		memcpy(text, canonical_example, cut);
		text[cut] = '\0';
		if (open_text(&r, text, &err) < 0)
			continue;
		while ((rc = r.ops->next(r.self, &ev, &err)) > 0)
			;
		close_source(&r);
		if (rc == -1)
			cr_assert_eq(err.code, HT_E_SYNTAX, "%s", err.message);
	}
	free(text);
}

/* ---- Volume ------------------------------------------------------------- */

Test(yaml_volume, many_events_stream_in_bounded_memory, .timeout = 120)
{
	enum { N = 100000 };
	const char *path = tmp_path("many.yaml");
	FILE *f = fopen(path, "w");
	struct ht_header h = {.version = 1, .pointer_size = 8};
	struct ht_event ev = {.type = HT_EV_OBJECT_REFERENCES};
	ht_id refs[4];
	const ht_id *first_refs = NULL;
	struct yaml_writer *w;
	struct ht_reader r;
	struct ht_error err;
	uint64_t n = 0;
	int rc;

	cr_assert(f);
	w = yaml_writer_open(f, path, &h, &err);
	cr_assert(w);
	ev.u.object_references.refs = refs;
	ev.u.object_references.count = 4;
	ev.u.object_references.class_id = 0x7ff8100;
	ev.u.object_references.size = 32;
	for (uint64_t i = 0; i < N; i++) {
		ev.u.object_references.id = 0x20000000 + 32 * i;
		for (int k = 0; k < 4; k++)
			refs[k] = k == 3 ? 0 : 0x20000000 + 32 * ((i + 1 + k) % N);
		cr_assert_eq(yaml_writer_event(w, &ev, &err), 0);
	}
	cr_assert_eq(yaml_writer_close(w, &err), 0);
	cr_assert_eq(fclose(f), 0);

	memset(&r, 0, sizeof(r));
	f = fopen(path, "rb");
	cr_assert_eq(yaml_source_open(&r, f, path, &err), 0, "%s", err.message);
	while ((rc = r.ops->next(r.self, &ev, &err)) > 0) {
		cr_assert_eq(ev.u.object_references.id, 0x20000000 + 32 * n);
		cr_assert_eq(ev.u.object_references.count, 4);
		/* one buffer, reused: memory does not grow with the trace */
		if (!first_refs)
			first_refs = ev.u.object_references.refs;
		cr_assert_eq(ev.u.object_references.refs, first_refs);
		n++;
	}
	cr_assert_eq(rc, 0, "%s", err.message);
	cr_assert_eq(n, N);
	cr_assert_eq(r.ops->position(r.self).event_index, N - 1);
	cr_assert_eq(r.ops->position(r.self).line, N + 4);
	close_source(&r);
}

/* A time is version 3's: an older trace naming one is refused at it. */
Test(yaml_errors, time_needs_version_3)
{
	assert_event_error("gc_started: {generations: [0], time: 5}", 42,
			   "gc_started: 'time' needs format version 3");
	assert_event_error("gc_finished: {time: 5}", 25,
			   "gc_finished: 'time' needs format version 3");
	assert_event_error("begin_container: {type: C_BEGIN, time: 5}", 44,
			   "begin_container: 'time' needs format version 3");
	assert_error("heaptrace: 2\nevents:\n  - gc_finished: {time: 5}\n", 3,
		     25, "'time' needs format version 3 (heaptrace: 3)");
}

/* A time reads back as the event's, on the three events that have one. */
Test(yaml_read, times_of_a_version_3_trace)
{
	struct ht_reader r;
	struct ht_error err;
	struct ht_event ev;

	open_ok(&r, "heaptrace: 3\nevents:\n"
		    "  - gc_started: {generations: [0], time: 1000}\n"
		    "  - gc_finished: {time: 1500}\n"
		    "  - begin_container: {type: C_BEGIN}\n");
	cr_assert_eq(r.ops->next(r.self, &ev, &err), 1, "%s", err.message);
	cr_assert(ev.has_time);
	cr_assert_eq(ev.time, 1000);
	cr_assert_eq(r.ops->next(r.self, &ev, &err), 1, "%s", err.message);
	cr_assert(ev.has_time);
	cr_assert_eq(ev.time, 1500);
	cr_assert_eq(r.ops->next(r.self, &ev, &err), 1, "%s", err.message);
	cr_assert_not(ev.has_time, "a time where none was written");
	close_source(&r);
}
