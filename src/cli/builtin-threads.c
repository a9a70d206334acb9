/*
 * builtin-threads.c - `heaptrace threads`: each thread of a dump with its
 * object, its stack frame by frame from the top and the objects each
 * frame's locals hold, threads ordered by what they retain, as a Java
 * developer's thread overview shows an OOM dump. The grouping and the
 * sizes are analysis/threads.h's; this file only presents them.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/dominators.h"
#include "analysis/levels.h"
#include "analysis/threads.h"

#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "threads",
	.text = "usage: heaptrace threads [-n N] [--dump N] [--format text|yaml|json]\n"
		"                         [FILE]\n"
		"\n"
		"Lists the threads of a dump, those that retain the most first: each\n"
		"with its thread object, its stack from the top and, under each frame,\n"
		"the objects its locals hold with their retained sizes.\n",
};

struct threads_cmd {
	const char *path;
	struct ht_reader_options reader_options;
	int format;
	int64_t select;
	uint64_t limit;
	enum heap_level level;
	const struct heap *h;
	const struct heap_dominators *d;
	const struct heap_threads *t;
};

static size_t shown_threads(const struct threads_cmd *c)
{
	return limit_shown(c->limit, c->t->n_threads);
}

/* ---- text ---------------------------------------------------------------- */

/* "thread \"main\"", or "thread 0x1" when the trace never named it. */
static void print_thread_name(const struct threads_cmd *c,
			      const struct thread_view *v)
{
	const char *name = heap_thread_name(c->h, v->id);
	char id[24];

	if (name)
		printf("thread \"%s\"", esc_text(name));
	else
		printf("thread %s", hex_id(v->id, id));
}

/* "  at java.lang.Thread.sleep(Thread.java:-2)", or the method's id when
 * the trace never named it. */
static void print_frame(const struct threads_cmd *c,
			const struct thread_frame *f)
{
	const char *method = heap_method_name(c->h, f->method);
	char id[24];

	if (method)
		printf("    at %s\n", esc_text(method));
	else
		printf("    at method %s\n", hex_id(f->method, id));
}

/* One root: "java.lang.Object[] 0x2100  136 B retained". */
static void print_local(const struct threads_cmd *c, size_t root)
{
	const struct heap_root *r = &c->h->roots[root];
	char cls[NAME_TEXT], id[24], size[SIZE_TEXT];

	if (r->object == HEAP_NONE) {
		if (r->ref)
			printf("        %s (not in the dump)\n",
			       hex_id(r->ref, id));
		else
			printf("        null\n");
		return;
	}
	printf("        %s %s, %s retained\n",
	       esc_name(object_class_text(c->h, r->object, cls)),
	       hex_id(r->ref, id), human_size(c->d->retained[r->object], size));
}

static void print_locals(const struct threads_cmd *c, size_t first, size_t n)
{
	for (size_t i = 0; i < n; i++)
		print_local(c, c->t->roots[first + i]);
}

/*
 * thread "main" (java.lang.Thread 0x2000): 176 B retained (object 40 B,
 * locals 136 B)
 */
static void print_thread(const struct threads_cmd *c,
			 const struct thread_view *v)
{
	char a[SIZE_TEXT], b[SIZE_TEXT], d[SIZE_TEXT], cls[NAME_TEXT], id[24];

	print_thread_name(c, v);
	if (v->object != HEAP_NONE)
		printf(" (%s %s)",
		       esc_name(object_class_text(c->h, v->object, cls)),
		       hex_id(v->id, id));
	else
		printf(" (no thread object)");
	if (v->object != HEAP_NONE)
		printf(": %s retained (thread object %s, locals %s)\n",
		       human_size(v->retained, a),
		       human_size(v->object_retained, b),
		       human_size(v->locals_retained, d));
	else
		printf(": %s retained (locals)\n", human_size(v->retained, a));
	for (size_t i = 0; i < v->n_frames; i++) {
		const struct thread_frame *f =
			&c->t->frames[v->first_frame + i];

		print_frame(c, f);
		print_locals(c, f->first, f->n);
	}
	if (v->n_own) {
		printf("    outside Java frames\n");
		print_locals(c, v->first_own, v->n_own);
	}
}

static void print_text(const struct threads_cmd *c)
{
	char threads[48], frames[48];
	size_t shown = shown_threads(c);

	printf("dump %llu of %s: %s, %s", (unsigned long long)c->h->dump,
	       esc_text(c->path),
	       count_of(c->t->n_threads, "thread", "threads", threads),
	       count_of(c->t->n_frames, "frame", "frames", frames));
	if (c->t->n_threads == 0) {
		printf(" (the dump names no thread)\n");
		return;
	}
	printf("; top %zu by retained size", shown);
	if (c->level != HEAP_LEVEL_DEFAULT)
		printf(" at level %s", heap_level_name(c->level));
	putchar('\n');
	for (size_t i = 0; i < shown; i++)
		print_thread(c, &c->t->threads[i]);
}

/* ---- yaml and json ------------------------------------------------------- */

static void out_local(struct out *o, const struct threads_cmd *c, size_t root)
{
	const struct heap_root *r = &c->h->roots[root];
	char cls[NAME_TEXT];

	out_begin_object(o, NULL);
	if (r->ref)
		out_id(o, "id", r->ref);
	else
		out_null(o, "id");
	if (r->object == HEAP_NONE) {
		out_null(o, "class");
		out_null(o, "size");
		out_null(o, "retained");
	} else {
		out_string(o, "class",
			   object_class_text(c->h, r->object, cls));
		out_u64(o, "size", heap_size(c->h, r->object));
		out_u64(o, "retained", c->d->retained[r->object]);
	}
	out_end_object(o);
}

static void out_locals(struct out *o, const struct threads_cmd *c,
		       const char *key, size_t first, size_t n)
{
	out_begin_array(o, key);
	for (size_t i = 0; i < n; i++)
		out_local(o, c, c->t->roots[first + i]);
	out_end_array(o);
}

static void out_frame(struct out *o, const struct threads_cmd *c,
		      const struct thread_frame *f)
{
	out_begin_object(o, NULL);
	out_string(o, "method", heap_method_name(c->h, f->method));
	out_id(o, "method_id", f->method);
	out_string(o, "container",
		   ht_container_name((enum ht_container_type)f->type));
	out_id(o, "frame_id", f->id);
	out_locals(o, c, "locals", f->first, f->n);
	out_end_object(o);
}

static void out_thread(struct out *o, const struct threads_cmd *c,
		       const struct thread_view *v)
{
	char cls[NAME_TEXT];

	out_begin_object(o, NULL);
	out_id(o, "id", v->id);
	out_string(o, "name", heap_thread_name(c->h, v->id));
	if (v->object != HEAP_NONE)
		out_string(o, "class",
			   object_class_text(c->h, v->object, cls));
	else
		out_null(o, "class");
	out_u64(o, "retained", v->retained);
	out_u64(o, "object_retained", v->object_retained);
	out_u64(o, "locals_retained", v->locals_retained);
	out_begin_array(o, "frames");
	for (size_t i = 0; i < v->n_frames; i++)
		out_frame(o, c, &c->t->frames[v->first_frame + i]);
	out_end_array(o);
	out_locals(o, c, "outside_frames", v->first_own, v->n_own);
	out_end_object(o);
}

static int report(const struct threads_cmd *c)
{
	size_t shown = shown_threads(c);
	struct out *o;

	if (c->format == FORMAT_TEXT) {
		print_text(c);
		return fflush(stdout) == 0 ? 0 : -1;
	}
	o = out_new(stdout, (enum output_format)c->format);
	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_u64(o, "dump", c->h->dump);
	if (c->level != HEAP_LEVEL_DEFAULT)
		out_string(o, "level", heap_level_name(c->level));
	out_u64(o, "thread_count", c->t->n_threads);
	out_begin_array(o, "threads");
	for (size_t i = 0; i < shown; i++)
		out_thread(o, c, &c->t->threads[i]);
	out_end_array(o);
	out_end_object(o);
	return out_finish(o);
}

static int run_threads(struct threads_cmd *c)
{
	struct loaded_dump ld;
	struct heap_dominators d;
	struct heap_threads t;
	struct ht_error err;
	int status;

	status = load_dump(c->path, &c->reader_options, c->select, &ld);
	if (status != EXIT_DONE)
		return status;
	if (heap_dominators_at(ld.heap, c->level, &d, &err) < 0) {
		analysis_failed(c->path, &err);
		unload_dump(&ld);
		return EXIT_UNREADABLE;
	}
	if (heap_threads(ld.heap, &d, &t, &err) < 0) {
		analysis_failed(c->path, &err);
		heap_dominators_free(&d);
		unload_dump(&ld);
		return EXIT_UNREADABLE;
	}
	c->h = ld.heap;
	c->d = &d;
	c->t = &t;
	status = analysis_status(ld.damaged);
	if (report(c) < 0) {
		error_msg("cannot write the report: %m");
		status = EXIT_UNREADABLE;
	}
	heap_threads_free(&t);
	heap_dominators_free(&d);
	unload_dump(&ld);
	return status;
}

int cmd_threads(int argc, char **argv)
{
	struct threads_cmd c = {.select = HEAP_LAST_DUMP};
	const struct cli_option options[] = {
		OPT_NUMBER(&c.limit, "list N threads (default 0: all)"),
		OPT_RETAINED(&c.level),
		OPT_DUMP(&c.select, "the dump to analyze (default: the last)"),
		OPT_FORMAT(&c.format),
		OPT_FULL_NAMES(),
		OPT_HELP(),
		OPT_MAX_MEMORY(),
		OPT_HPROF_OOPS(&c.reader_options),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	status = trace_operand("threads", argc, argv, &c.path);
	if (status != EXIT_DONE)
		return status;
	return run_threads(&c);
}
