/*
 * builtin-paths.c - `heaptrace paths --to ID`: how an object is reached:
 * the shortest chains of references from roots to it, each from its own
 * root, with the root's container, thread and method and the field that
 * each step goes through.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"
#include "util/membudget.h"

#include "analysis/labels.h"
#include "analysis/levels.h"
#include "analysis/paths.h"
#include "analysis/reach.h"

#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "paths",
	.text = "usage: heaptrace paths --to ID [-n N] [--retained LEVEL] [--dump N]\n"
		"                       [--sites] [--format text|yaml|json] [FILE]\n"
		"\n"
		"Shows the shortest paths from roots to the object ID (decimal or 0x\n"
		"hex): the shortest first, then others that start at other roots, by\n"
		"length, then a static before other roots before locals, then root;\n"
		"only the roots and references that count at the level (default\n"
		"strong). Strings are labelled with their text, collections with their\n"
		"size. Exits 1 when the dump has no object ID.\n",
};

struct paths_report {
	const char *path;
	int format;
	int64_t select;
	bool has_target;
	ht_id target_id;
	uint64_t max_paths;
	bool exclude_weak;       /* the old spelling of --retained strong */
	enum heap_level level;
	/* where no path counts at the level: the strongest level that
	 * reaches the target, HEAP_LEVEL_UNREACHABLE if none does */
	enum heap_level reach_level;
	const struct heap *h;
	uint32_t target;
	struct heap_path *paths;
	size_t n_paths;
	/* --sites: the frame that allocated each object of the paths
	 * (allocated_by, parallel to shown[0 .. n_shown)), into the tables
	 * of alloc */
	bool sites;
	struct sites alloc;
	uint32_t *shown;
	struct site_frame *allocated_by;
	size_t n_shown;
};

/* The frame that allocated x, with --sites; NULL when none is known. A
 * few paths of a few objects: looked up in turn. */
static const struct site_frame *allocated_by(const struct paths_report *r,
					     uint32_t x)
{
	for (size_t i = 0; r->sites && i < r->n_shown; i++)
		if (r->shown[i] == x)
			return r->allocated_by[i].method ||
					       r->allocated_by[i].id
				       ? &r->allocated_by[i] : NULL;
	return NULL;
}

/* ---- text ---------------------------------------------------------------- */

struct widths {
	int field, id, size;
};

/* The step into objects[i] (i > 0): the field of objects[i - 1] it goes
 * through. */
static const char *path_step(const struct heap *h, const struct heap_path *p,
			     size_t i, char *buf)
{
	uint32_t from = p->objects[i - 1];

	return step_text(h, from, heap_ref_start(h, from) + p->fields[i - 1], buf);
}

static struct widths path_widths(const struct heap *h,
				 const struct heap_path *p)
{
	struct widths w = {0, 0, 0};
	char buf[NAME_TEXT];

	for (size_t i = 0; i < p->length; i++) {
		widen_id(&w.id, heap_id(h, p->objects[i]));
		widen_size(&w.size, heap_size(h, p->objects[i]));
		if (i > 0)
			widen(&w.field, (int)strlen(esc_name(path_step(h, p, i,
								       buf))));
	}
	return w;
}

/* The object's label after its class, spaced by `spaces` (1 or 2), or
 * nothing; escaped for text. buf holds LABEL_BOUND + 2 bytes. */
static const char *label_text(const struct heap *h, uint32_t x, int spaces,
			      char *buf)
{
	const char *l = object_label(h, x, buf + spaces);

	if (!l)
		return "";
	memset(buf, ' ', (size_t)spaces);
	return esc_text(buf);
}

/* One object of a path: "[F] 0x1100  24 B  [LOrder;", where [F] is the
 * field of the object above that refers to this one ("Order.next" when
 * the trace names fields), and the object's label (a string's text, a
 * collection's size). */
static void print_step(const struct paths_report *r,
		       const struct heap_path *p, size_t i,
		       const struct widths *w)
{
	const struct heap *h = r->h;
	uint32_t x = p->objects[i];
	char field[NAME_TEXT] = "", id[24], size[SIZE_TEXT], cls[NAME_TEXT];
	char label[LABEL_BOUND + 2], by[ALLOCATED_BY_TEXT];

	if (i > 0)
		path_step(h, p, i, field);
	/* positions line up on the right, names read from the left */
	printf(heap_has_fields(h) ? "  %-*s  %-*s  %*s  %s%s%s\n" :
		"  %*s %-*s  %*s  %s%s%s\n", w->field, esc_name(field), w->id,
	       hex_id(heap_id(h, x), id), w->size, human_size(heap_size(h, x), size),
	       esc_name(object_class_text(h, x, cls)),
	       label_text(h, x, 2, label),
	       allocated_by_text(allocated_by(r, x), by));
}

static void print_path_text(const struct paths_report *r, size_t k)
{
	const struct heap_path *p = &r->paths[k];
	struct widths w = path_widths(r->h, p);
	char root[512];

	printf("\npath %zu, %zu %s, from %s\n", k + 1, p->length,
	       p->length == 1 ? "object" : "objects",
	       describe_root(r->h, &r->h->roots[p->root], root, sizeof(root)));
	for (size_t i = 0; i < p->length; i++)
		print_step(r, p, i, &w);
}

/* "no strong root reaches it", and which level would. */
static void print_no_path(const struct paths_report *r)
{
	/* where levels cannot differ, roots are roots */
	if (!heap_has_levels(r->h))
		printf("no root reaches it");
	else if (r->level == HEAP_LEVEL_DEFAULT)
		printf("no strong root reaches it");
	else
		printf("no root reaches it at level %s",
		       heap_level_name(r->level));
	if (r->reach_level > r->level && r->reach_level < HEAP_LEVELS)
		printf(" (the strongest level that does: --retained %s)",
		       heap_level_name(r->reach_level));
	putchar('\n');
}

static int report_text(const struct paths_report *r)
{
	char id[24], cls[NAME_TEXT], size[SIZE_TEXT], buf[48];
	char label[LABEL_BOUND + 2];

	printf("object %s (%s%s, %s) in dump %llu of %s: ",
	       hex_id(r->target_id, id),
	       esc_name(object_class_text(r->h, r->target, cls)),
	       label_text(r->h, r->target, 1, label),
	       human_size(heap_size(r->h, r->target), size),
	       (unsigned long long)r->h->dump, esc_text(r->path));
	if (r->n_paths == 0)
		print_no_path(r);
	else if (heap_has_fields(r->h))
		printf("%s\neach step names the field of the object above that "
		       "refers to the object\n",
		       count_of(r->n_paths, "path", "paths", buf));
	else
		printf("%s\n[N]: the field of the object above that refers to "
		       "the object\n", count_of(r->n_paths, "path", "paths", buf));
	for (size_t k = 0; k < r->n_paths; k++)
		print_path_text(r, k);
	return fflush(stdout) == 0 ? 0 : -1;
}

/* ---- yaml, json ---------------------------------------------------------- */

static void out_path(struct out *o, const struct paths_report *r,
		     const struct heap_path *p)
{
	const struct heap *h = r->h;
	char cls[NAME_TEXT], step[NAME_TEXT], label[LABEL_BOUND];

	out_begin_object(o, NULL);
	out_root(o, "root", h, &h->roots[p->root]);
	out_begin_array(o, "objects");
	for (size_t i = 0; i < p->length; i++) {
		uint32_t x = p->objects[i];
		const char *l = object_label(h, x, label);

		out_begin_object(o, NULL);
		out_id(o, "id", heap_id(h, x));
		out_string(o, "class", object_class_text(h, x, cls));
		if (l)
			out_string(o, "label", l);
		out_u64(o, "size", heap_size(h, x));
		if (i > 0)
			out_u64(o, "field", p->fields[i - 1]);
		else
			out_null(o, "field");
		if (heap_has_fields(h))
			out_string(o, "step", i > 0 ? path_step(h, p, i, step)
						    : NULL);
		if (r->sites)
			out_allocated_by(o, allocated_by(r, x));
		out_end_object(o);
	}
	out_end_array(o);
	out_end_object(o);
}

static int report_structured(const struct paths_report *r)
{
	struct out *o = out_new(stdout, (enum output_format)r->format);
	char cls[NAME_TEXT], label[LABEL_BOUND];
	const char *l = object_label(r->h, r->target, label);

	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_u64(o, "dump", r->h->dump);
	out_id(o, "to", r->target_id);
	out_string(o, "class", object_class_text(r->h, r->target, cls));
	if (l)
		out_string(o, "label", l);
	out_u64(o, "size", heap_size(r->h, r->target));
	out_bool(o, "exclude_weak", r->level < HEAP_LEVEL_WEAK);
	out_string(o, "level", heap_level_name(r->level));
	out_begin_array(o, "paths");
	for (size_t k = 0; k < r->n_paths; k++)
		out_path(o, r, &r->paths[k]);
	out_end_array(o);
	out_end_object(o);
	return out_finish(o);
}

/* ---- the command --------------------------------------------------------- */

/* Where no path counts at the level, the level that would give one. */
static int strongest_level(struct paths_report *r, struct ht_error *err)
{
	uint8_t *levels;
	uint64_t charged = 0;

	r->reach_level = HEAP_LEVEL_UNREACHABLE;
	if (!heap_has_levels(r->h))
		return 0;
	if (heap_reach_levels(r->h, &levels, &charged, err) < 0)
		return -1;
	r->reach_level = (enum heap_level)levels[r->target];
	budget_array_free(levels, r->h->n, 1, &charged);
	return 0;
}

/* The objects the report labels, each path's and the target, into
 * *objects: their count, or -1 when out of memory. */
static long labelled_objects(const struct paths_report *r,
			     uint32_t **objects)
{
	size_t n = 1;

	for (size_t i = 0; i < r->n_paths; i++)
		n += r->paths[i].length;
	*objects = malloc(n * sizeof(**objects));
	if (!*objects)
		return -1;
	n = 0;
	(*objects)[n++] = r->target;
	for (size_t i = 0; i < r->n_paths; i++)
		for (size_t j = 0; j < r->paths[i].length; j++)
			(*objects)[n++] = r->paths[i].objects[j];
	return (long)n;
}

/* The paths found on a graph without values, the labels' values are
 * read (reload_for_labels): the report is made of the graph read again,
 * whose objects, roots and references are the first's. */
static int read_labels(struct paths_report *r, struct loaded_dump *ld)
{
	uint32_t *objects;
	long n = labelled_objects(r, &objects);
	int status;

	if (n < 0) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	status = reload_for_labels(ld, objects, (size_t)n);
	r->h = ld->heap;
	if (status == EXIT_DONE && r->sites) {
		r->shown = objects;
		r->n_shown = (size_t)n;
		return read_allocating_frames(ld, r->path, objects, (size_t)n,
					      &r->alloc, &r->allocated_by);
	}
	free(objects);
	return status;
}

static int find_paths(struct paths_report *r, struct loaded_dump *ld)
{
	const struct heap *h = ld->heap;
	bool damaged = ld->damaged;
	struct ht_error err;
	char id[24];
	long n;
	int rc;

	r->h = h;
	r->target = heap_find(h, r->target_id);
	if (r->target == HEAP_NONE) {
		error_msg("%s: dump %llu has no object %s", r->path,
			  (unsigned long long)h->dump, hex_id(r->target_id, id));
		/* in a damaged trace the damage is the news, as with history */
		return damaged ? EXIT_UNREADABLE : EXIT_FINDING;
	}
	n = heap_paths(h, r->target, (size_t)r->max_paths, r->level,
		       &r->paths, &err);
	if (n == 0 && strongest_level(r, &err) < 0)
		n = -1;
	if (n < 0) {
		analysis_failed(r->path, &err);
		return EXIT_UNREADABLE;
	}
	r->n_paths = (size_t)n;
	rc = read_labels(r, ld);
	if (rc != EXIT_DONE)
		return rc;
	rc = r->format == FORMAT_TEXT ? report_text(r) : report_structured(r);
	if (rc < 0)
		error_msg("cannot write the report: %m");
	return rc < 0 ? EXIT_UNREADABLE : analysis_status(damaged);
}

static int parse_target(const char *cmd, const char *arg, void *report)
{
	struct paths_report *r = report;

	if (parse_u64(arg, &r->target_id) < 0)
		return usage_error(cmd, "'%s' is not an object id (decimal or "
				   "0x hex)", arg);
	r->has_target = true;
	return EXIT_DONE;
}

static int parse_max_paths(const char *cmd, const char *arg, void *max)
{
	if (parse_u64(arg, max) < 0 || *(uint64_t *)max == 0)
		return usage_error(cmd, "-n takes a number of paths, 1 or more");
	return EXIT_DONE;
}

int cmd_paths(int argc, char **argv)
{
	struct paths_report r = {.select = HEAP_LAST_DUMP, .max_paths = 3};
	/* objects are labelled with what they hold: the values the labels
	 * need are read once the paths are found (read_labels) */
	struct ht_reader_options reader_options = {0};
	struct loaded_dump ld;
	const struct cli_option options[] = {
		OPT_CALLBACK('t', "to", "ID", &r, parse_target,
			     "the object to reach (required)"),
		OPT_CALLBACK('n', "number", "N", &r.max_paths, parse_max_paths,
			     "show at most N paths (default 3)"),
		OPT_BOOL(0, "sites", &r.sites,
			 "after each object, the code that allocated it\n"
			 "(a trace recorded with --sites)"),
		OPT_RETAINED(&r.level),
		OPT_BOOL('w', "exclude-weak", &r.exclude_weak,
			 "the same as --retained strong (the default)"),
		OPT_DUMP(&r.select, "the dump to look in (default: the last)"),
		OPT_FORMAT(&r.format),
		OPT_FULL_NAMES(),
		OPT_HELP(),
		OPT_MAX_MEMORY(),
		OPT_HPROF_OOPS(&reader_options),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	if (!r.has_target)
		return usage_error("paths", "which object? Give --to ID");
	if (r.exclude_weak)
		r.level = HEAP_LEVEL_STRONG;
	status = trace_operand("paths", argc, argv, &r.path);
	if (status != EXIT_DONE)
		return status;
	status = load_dump_to_label(r.path, &reader_options, r.select, &ld);
	if (status != EXIT_DONE)
		return status;
	status = find_paths(&r, &ld);
	heap_paths_free(r.paths, r.n_paths);
	free(r.shown);
	free(r.allocated_by);
	sites_free(&r.alloc);
	unload_dump(&ld);
	return status;
}
