/*
 * builtin-top.c - `heaptrace top`: the biggest retainers of a dump, as
 * objects ordered by retained or self size, or as classes ordered by
 * retained size, self bytes or count; with --class, one class's instances
 * (a Java developer's "list objects" of a class). The ranking is
 * analysis's (top.h, and class_table in stats.h); this file chooses and
 * renders.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/dominators.h"
#include "analysis/labels.h"
#include "analysis/levels.h"
#include "analysis/sites.h"
#include "analysis/stats.h"
#include "analysis/top.h"
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "top",
	.text = "usage: heaptrace top [-n N] [--by retained|self|count] [--classes]\n"
		"                     [--class NAME] [--sites] [--dump N]\n"
		"                     [--format text|yaml|json] [FILE]\n"
		"\n"
		"Lists the objects of a dump that retain the most memory (what would\n"
		"be freed if they were), or with --classes the classes, or with\n"
		"--class NAME the instances of one class. Ties are broken by id\n"
		"(objects) or name (classes). A string is labelled with its text, a\n"
		"collection with its size of its capacity.\n",
};

enum top_key {
	KEY_RETAINED,
	KEY_SELF,
	KEY_COUNT,
};

static const char *const key_names[] = {
	[KEY_RETAINED] = "retained",
	[KEY_SELF] = "self",
	[KEY_COUNT] = "count",
};

struct top {
	const char *path;
	struct ht_reader_options reader_options;
	int format;
	int64_t select;
	uint64_t limit;
	enum top_key by;
	bool classes;
	const char *class_name;   /* --class: only its instances */
	bool *in_class;           /* per class slot, with --class */
	uint64_t n_instances;
	enum heap_level level;
	const struct heap *h;
	/* the retained sizes of the objects listed, in order: the graph
	 * their labels are read from has no dominators */
	uint64_t *shown_retained;
	/* --sites: the allocating frame of each object listed, into the
	 * tables of alloc */
	bool sites;
	struct sites alloc;
	struct site_frame *allocated_by;
};

/* The frame that allocated the i-th object listed, with --sites; NULL
 * when not known. */
static const struct site_frame *allocated_by(const struct top *t, size_t i)
{
	const struct site_frame *f = &t->allocated_by[i];

	return f->method || f->id ? f : NULL;
}

/* ---- objects ------------------------------------------------------------- */

static size_t shown_count(const struct top *t, size_t available)
{
	return limit_shown(t->limit, available);
}

static void print_objects_text(const struct top *t, const uint32_t *best,
			       size_t k)
{
	char a[SIZE_TEXT], b[SIZE_TEXT], id[24], cls[NAME_TEXT];
	char label[LABEL_BOUND], by[ALLOCATED_BY_TEXT];
	int w_ret = (int)strlen("RETAINED"), w_self = (int)strlen("SELF");
	int w_id = (int)strlen("ID");

	for (size_t i = 0; i < k; i++) {
		widen_size(&w_ret, t->shown_retained[i]);
		widen_size(&w_self, heap_size(t->h, best[i]));
		widen_id(&w_id, heap_id(t->h, best[i]));
	}
	printf("%*s  %*s  %-*s  %s\n", w_ret, "RETAINED", w_self, "SELF",
	       w_id, "ID", "CLASS");
	for (size_t i = 0; i < k; i++) {
		uint32_t o = best[i];
		const char *l = object_label(t->h, o, label);

		/* the label follows the class: what this one holds */
		printf("%*s  %*s  %-*s  %s%s%s",
		       w_ret, human_size(t->shown_retained[i], a),
		       w_self, human_size(heap_size(t->h, o), b),
		       w_id, hex_id(heap_id(t->h, o), id),
		       esc_name(object_class_text(t->h, o, cls)),
		       l ? "  " : "", l ? esc_text(l) : "");
		if (t->sites)
			fputs(allocated_by_text(allocated_by(t, i), by),
			      stdout);
		putchar('\n');
	}
}

static void out_objects(struct out *o, const struct top *t,
			const uint32_t *best, size_t k)
{
	char cls[NAME_TEXT], label[LABEL_BOUND];

	out_begin_array(o, "objects");
	for (size_t i = 0; i < k; i++) {
		uint32_t x = best[i];
		const char *l = object_label(t->h, x, label);

		out_begin_object(o, NULL);
		out_id(o, "id", heap_id(t->h, x));
		out_string(o, "class", object_class_text(t->h, x, cls));
		if (l)
			out_string(o, "label", l);
		out_u64(o, "size", heap_size(t->h, x));
		out_u64(o, "retained", t->shown_retained[i]);
		if (t->sites)
			out_allocated_by(o, allocated_by(t, i));
		out_end_object(o);
	}
	out_end_array(o);
}

/* ---- classes ------------------------------------------------------------- */

static void print_classes_text(const struct class_row *rows, size_t k)
{
	char a[SIZE_TEXT];
	int w_count = (int)strlen("COUNT"), w_self = (int)strlen("SELF");
	int w_ret = (int)strlen("RETAINED");

	for (size_t i = 0; i < k; i++) {
		widen_number(&w_count, rows[i].count);
		widen_size(&w_self, rows[i].bytes);
		widen_size(&w_ret, rows[i].retained);
	}
	printf("%*s  %*s  %*s  %s\n", w_count, "COUNT", w_self, "SELF",
	       w_ret, "RETAINED", "CLASS");
	for (size_t i = 0; i < k; i++) {
		char b[SIZE_TEXT];

		printf("%*llu  %*s  %*s  %s\n",
		       w_count, (unsigned long long)rows[i].count,
		       w_self, human_size(rows[i].bytes, a),
		       w_ret, human_size(rows[i].retained, b),
		       esc_name(rows[i].name));
	}
}

static void out_classes(struct out *o, const struct class_row *rows, size_t k)
{
	out_begin_array(o, "classes");
	for (size_t i = 0; i < k; i++) {
		out_begin_object(o, NULL);
		out_string(o, "name", rows[i].name);
		if (rows[i].cls == HEAP_NO_CLASS)
			out_null(o, "class_id");
		else
			out_id(o, "class_id", rows[i].id);
		out_u64(o, "count", rows[i].count);
		out_u64(o, "bytes", rows[i].bytes);
		out_u64(o, "retained", rows[i].retained);
		out_end_object(o);
	}
	out_end_array(o);
}

/* ---- the report ---------------------------------------------------------- */

static const char *key_text(enum top_key by)
{
	switch (by) {
	case KEY_SELF:
		return "self size";
	case KEY_COUNT:
		return "count";
	case KEY_RETAINED:
		break;
	}
	return "retained size";
}

/* "dump 0 of FILE: 5 objects, 112 B[, 3 classes]; top 3 by retained size" */
static void print_heading(const struct top *t, size_t shown, size_t n_classes)
{
	char total[SIZE_TEXT], objects[48], classes[48];

	printf("dump %llu of %s: %s, %s", (unsigned long long)t->h->dump,
	       esc_text(t->path), count_of(t->h->n, "object", "objects", objects),
	       human_size(t->h->total_bytes, total));
	if (t->classes)
		printf(", %s", count_of(n_classes, "class", "classes", classes));
	if (t->class_name)
		printf(", %s of %s",
		       count_of(t->n_instances, "instance", "instances",
				classes),
		       esc_text(t->class_name));
	printf("; top %zu by %s", shown, key_text(t->by));
	if (t->level != HEAP_LEVEL_DEFAULT)
		printf(" at level %s", heap_level_name(t->level));
	putchar('\n');
}

static int report(const struct top *t, const uint32_t *best, size_t k,
		  const struct class_row *rows, size_t n_rows)
{
	struct out *o;

	if (t->format == FORMAT_TEXT) {
		if (t->classes) {
			print_heading(t, k, n_rows);
			print_classes_text(rows, k);
		} else {
			print_heading(t, k, 0);
			print_objects_text(t, best, k);
		}
		return fflush(stdout) == 0 ? 0 : -1;
	}
	o = out_new(stdout, (enum output_format)t->format);
	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_u64(o, "dump", t->h->dump);
	out_string(o, "by", key_names[t->by]);
	if (t->class_name) {
		out_string(o, "class", t->class_name);
		out_u64(o, "instances", t->n_instances);
	}
	if (t->level != HEAP_LEVEL_DEFAULT)
		out_string(o, "level", heap_level_name(t->level));
	if (t->classes)
		out_classes(o, rows, k);
	else
		out_objects(o, t, best, k);
	out_end_object(o);
	return out_finish(o);
}

static enum class_order class_order_of(enum top_key by)
{
	switch (by) {
	case KEY_SELF:
		return CLASS_BY_BYTES;
	case KEY_COUNT:
		return CLASS_BY_COUNT;
	case KEY_RETAINED:
		break;
	}
	return CLASS_BY_RETAINED;
}

/*
 * The objects listed keep their retained sizes; the graph's dominators go,
 * and the labels' values are read (reload_for_labels). EXIT_DONE, or the
 * exit status once said why not.
 */
static int read_labels(struct top *t, struct loaded_dump *ld,
		       struct heap_dominators *d, const uint32_t *best,
		       size_t k)
{
	int status;

	t->shown_retained = malloc((k ? k : 1) * sizeof(*t->shown_retained));
	if (t->shown_retained)
		for (size_t i = 0; i < k; i++)
			t->shown_retained[i] = d->retained[best[i]];
	heap_dominators_free(d);
	if (!t->shown_retained) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	status = reload_for_labels(ld, best, k);
	t->h = ld->heap;
	if (status == EXIT_DONE && t->sites)
		status = read_allocating_frames(ld, t->path, best, k, &t->alloc,
						&t->allocated_by);
	return status;
}

static int run_top(struct top *t)
{
	struct loaded_dump ld;
	struct heap_dominators d;
	struct ht_error err;
	struct class_row *rows = NULL;
	uint32_t *best = NULL;
	size_t n_rows = 0, k = 0;
	bool has_d = true;
	int status, rc = 0;

	status = load_dump_to_label(t->path, &t->reader_options, t->select, &ld);
	if (status != EXIT_DONE)
		return status;
	if (heap_dominators_at(ld.heap, t->level, &d, &err) < 0) {
		analysis_failed(t->path, &err);
		unload_dump(&ld);
		return EXIT_UNREADABLE;
	}
	t->h = ld.heap;
	if (t->class_name && top_class_slots(t->h, t->class_name, &t->in_class,
					     &t->n_instances) < 0) {
		rc = -1;
	} else if (t->class_name && t->n_instances == 0) {
		error_msg("%s: dump %llu has no instance of %s", t->path,
			  (unsigned long long)t->h->dump,
			  esc_text(t->class_name));
		status = ld.damaged ? EXIT_UNREADABLE : EXIT_FINDING;
		free(t->in_class);
		heap_dominators_free(&d);
		unload_dump(&ld);
		return status;
	} else if (t->classes) {
		rc = class_table(t->h, &d, class_order_of(t->by), &rows, &n_rows);
		k = shown_count(t, n_rows);
	} else {
		k = shown_count(t, t->class_name ? (size_t)t->n_instances
						 : t->h->n);
		best = malloc((k ? k : 1) * sizeof(*best));
		if (best)
			top_objects(t->h, t->by == KEY_SELF ? NULL : d.retained,
				    t->in_class, best, k);
		else
			rc = -1;
	}
	if (rc == 0 && best) {
		has_d = false;
		status = read_labels(t, &ld, &d, best, k);
		if (status != EXIT_DONE)
			goto out;
	}
	if (rc < 0)
		error_msg("out of memory");
	else if (report(t, best, k, rows, n_rows) < 0) {
		error_msg("cannot write the report: %m");
		rc = -1;
	}
	status = rc < 0 ? EXIT_UNREADABLE : analysis_status(ld.damaged);
out:
	free(best);
	free(t->in_class);
	free(t->shown_retained);
	free(t->allocated_by);
	sites_free(&t->alloc);
	class_table_free(rows, n_rows);
	if (has_d)
		heap_dominators_free(&d);
	unload_dump(&ld);
	return status;
}

static int parse_key(const char *cmd, const char *arg, void *by)
{
	for (size_t i = 0; i < ARRAY_SIZE(key_names); i++) {
		if (strcmp(arg, key_names[i]) == 0) {
			*(enum top_key *)by = (enum top_key)i;
			return EXIT_DONE;
		}
	}
	return usage_error(cmd, "--by takes retained, self or count, not '%s'",
			   arg);
}

int cmd_top(int argc, char **argv)
{
	/* objects are labelled with what they hold: the values the labels
	 * need are read once the objects are chosen (read_labels) */
	struct top t = {.select = HEAP_LAST_DUMP, .limit = 20};
	const struct cli_option options[] = {
		OPT_NUMBER(&t.limit,
			 "list N objects or classes (default 20; 0: all)"),
		OPT_CALLBACK('b', "by", "KEY", &t.by, parse_key,
			     "retained (default), self, or count (with --classes)"),
		OPT_BOOL('c', "classes", &t.classes,
			 "aggregate by class: count, self bytes, and retained\n"
			 "bytes of the objects no object of the class dominates"),
		OPT_STRING(0, "class", "NAME", &t.class_name,
			   "only the instances of the class NAME (its name as\n"
			   "stats and top --classes print it, whole: as\n"
			   "they print a long .NET name with --full-names)"),
		OPT_BOOL(0, "sites", &t.sites,
			 "after each object, the code that allocated it\n"
			 "(a trace recorded with --sites)"),
		OPT_RETAINED(&t.level),
		OPT_DUMP(&t.select, "the dump to analyze (default: the last)"),
		OPT_FORMAT(&t.format),
		OPT_FULL_NAMES(),
		OPT_HELP(),
		OPT_MAX_MEMORY(),
		OPT_HPROF_OOPS(&t.reader_options),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	if (t.by == KEY_COUNT && !t.classes)
		return usage_error("top", "--by count needs --classes");
	if (t.sites && t.classes)
		return usage_error("top", "--sites names the code that "
				   "allocated each object: not with --classes");
	if (t.class_name && t.classes)
		return usage_error("top", "--class lists one class's objects, "
				   "--classes the classes: give one");
	status = trace_operand("top", argc, argv, &t.path);
	if (status != EXIT_DONE)
		return status;
	return run_top(&t);
}
