/*
 * builtin-waste.c - `heaptrace waste`: what a dump's values say it
 * wastes: strings of equal text and primitive arrays of equal contents
 * kept more than once, with the bytes that keeping one of each would
 * save and the fields that hold the copies; collections empty or under
 * half full, per class (analysis/waste.h).
 *
 * It needs values: a dump without them is said to have none (exit 1)
 * rather than reported as wasting nothing.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/names.h"
#include "analysis/values.h"
#include "analysis/waste.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "waste",
	.text = "usage: heaptrace waste [-n N] [--dump N]\n"
		"                       [--format text|yaml|json] [FILE]\n"
		"\n"
		"Lists the strings of equal text and the primitive arrays of equal\n"
		"contents that a dump keeps more than once, most bytes wasted first:\n"
		"how many copies, the bytes one copy each would save, and the fields\n"
		"that hold them; then, per class, the collections that are empty or\n"
		"under half full. Needs the dump's values (an HPROF dump has them).\n",
};

/* Characters of a string's text in text output and in yaml and json;
 * elements of an array's. */
#define TEXT_SHOWN 60
#define TEXT_KEPT 200
#define ELEMENTS_SHOWN 8
#define ELEMENTS_KEPT 16
/* Holders listed per group. */
#define HOLDERS_SHOWN 3

struct waste_cmd {
	const char *path;
	struct ht_reader_options reader_options;
	int format;
	int64_t select;
	uint64_t limit;
	const struct heap *h;
	struct waste w;
};

static size_t shown(const struct waste_cmd *c, const struct waste_duplicates *d)
{
	return limit_shown(c->limit, d->n_groups);
}

/* The name of a holder: the field ("demo.Session.name", "static
 * demo.Cache.EMPTY"), or the class whose object holds the copy when no
 * field names it (an array's element, a trace without fields). */
static const char *holder_text(const struct heap *h,
			       const struct waste_holder *k, char *buf)
{
	if (k->field != HEAP_NO_FIELD)
		return step_text(h, k->from, k->edge, buf);
	return object_class_text(h, k->from, buf);
}

/* A class slot's name: "?" for the slot of unknown classes. */
static const char *slot_name(const struct heap *h, uint32_t slot, char *buf)
{
	if (slot < h->n_classes && h->classes[slot].name)
		return h->classes[slot].name;
	snprintf(buf, NAME_TEXT, "?");
	return buf;
}

/* A string's text as string_line gives it, "?" when it has none. */
static const char *quoted_text(const struct heap *h, uint32_t s, char *line)
{
	return string_line(h, s, TEXT_SHOWN, line) ? line : "?";
}

/* "int[100] -500 999503 1999506 ...": an array's type, length and first
 * elements. */
static const char *array_line(const struct heap *h, uint32_t a, char *line,
			      size_t len)
{
	struct value_record r;
	const struct ht_array_values *v = &r.array;
	const char *type;
	size_t at;

	if (!heap_object_values(h, a, &r) || !r.has_array) {
		snprintf(line, len, "?");
		return line;
	}
	type = ht_value_type_name(v->type) ? ht_value_type_name(v->type) : "?";
	at = (size_t)snprintf(line, len, "%s[%" PRIu64 "]", type, v->length);
	for (uint64_t i = 0; i < v->stored && i < ELEMENTS_SHOWN && at < len;
	     i++) {
		char buf[VALUE_TEXT];
		unsigned width = ht_value_type_width(v->type);

		at += (size_t)snprintf(line + at, len - at, " %s", esc_text(
			value_text(v->type, ht_value_load(v->type,
							  v->data + i * width),
				   buf)));
	}
	if (at < len && v->length > ELEMENTS_SHOWN)
		snprintf(line + at, len - at, " ...");
	return line;
}

/* ---- text ---------------------------------------------------------------- */

static void print_holders_text(const struct heap *h,
			       const struct waste_group *g, int indent)
{
	char buf[NAME_TEXT];

	if (!g->n_holders)
		return;
	printf("%*sheld by: ", indent, "");
	for (size_t i = 0; i < g->n_holders; i++)
		printf("%s%s (%" PRIu64 ")", i ? ", " : "",
		       esc_name(holder_text(h, &g->holders[i], buf)),
		       g->holders[i].count);
	putchar('\n');
}

/* "duplicate strings: 168 B wasted by 7 copies in 3 groups (10 of 40
 * strings)": what keeping one of each would save. */
static void print_summary_text(const char *what, const char *one,
			       const char *many,
			       const struct waste_duplicates *d)
{
	char a[48], b[48], e[48], size[SIZE_TEXT];

	if (!d->n_groups) {
		printf("duplicate %s: none among %s\n", what,
		       count_of(d->examined, one, many, a));
		return;
	}
	printf("duplicate %s: %s wasted by %s in %s (%" PRIu64 " of %s)\n",
	       what, human_size(d->wasted, size),
	       count_of(d->copies, "copy", "copies", a),
	       count_of(d->n_groups, "group", "groups", b), d->objects,
	       count_of(d->examined, one, many, e));
}

static void print_groups_text(const struct waste_cmd *c,
			      const struct waste_duplicates *d, bool strings)
{
	size_t k = shown(c, d);
	int w_wasted = (int)strlen("WASTED"), w_count = (int)strlen("COUNT");
	char size[SIZE_TEXT], line[STRING_LINE + NAME_TEXT];

	if (!k)
		return;
	for (size_t i = 0; i < k; i++) {
		widen_size(&w_wasted, d->groups[i].wasted);
		widen_number(&w_count, d->groups[i].count);
	}
	printf("%*s  %*s  %s\n", w_wasted, "WASTED", w_count, "COUNT",
	       strings ? "TEXT" : "ARRAY");
	for (size_t i = 0; i < k; i++) {
		const struct waste_group *g = &d->groups[i];

		printf("%*s  %*" PRIu64 "  %s\n", w_wasted,
		       human_size(g->wasted, size), w_count, g->count,
		       strings ? quoted_text(c->h, g->first, line)
			       : array_line(c->h, g->first, line, sizeof(line)));
		print_holders_text(c->h, g, w_wasted + w_count + 4);
	}
	if (k < d->n_groups)
		printf("... and %zu more %s (-n)\n", d->n_groups - k,
		       d->n_groups - k == 1 ? "group" : "groups");
}

/* "collections: 1,234 empty (45.6 KiB with their arrays), 56 sparse,
 * under half full (7.8 KiB of empty slots), of 9,999 collections[, 12 of
 * unknown size]" */
static void print_collections_summary(const struct waste_collection_row *a)
{
	char e[SIZE_TEXT], s[SIZE_TEXT], n[48];

	if (!a->count) {
		printf("collections: none\n");
		return;
	}
	printf("collections: %" PRIu64 " empty (%s with their arrays), %"
	       PRIu64 " sparse, under half full (%s of empty slots), of %s",
	       a->empty, human_size(a->empty_bytes, e), a->sparse,
	       human_size(a->sparse_bytes, s),
	       count_of(a->count, "collection", "collections", n));
	if (a->unknown)
		printf(", %" PRIu64 " of unknown size", a->unknown);
	putchar('\n');
}

static size_t rows_shown(const struct waste_cmd *c)
{
	return limit_shown(c->limit, c->w.collections.n_rows);
}

static void print_collections_text(const struct waste_cmd *c)
{
	const struct waste_collections *wc = &c->w.collections;
	size_t k = rows_shown(c);
	int w_count = (int)strlen("COUNT"), w_empty = (int)strlen("EMPTY");
	int w_eb = (int)strlen("BYTES"), w_sparse = (int)strlen("SPARSE");
	int w_sb = (int)strlen("SLOTS");
	char a[SIZE_TEXT], b[SIZE_TEXT], name[NAME_TEXT];

	print_collections_summary(&wc->all);
	if (!k)
		return;
	for (size_t i = 0; i < k; i++) {
		widen_number(&w_count, wc->rows[i].count);
		widen_number(&w_empty, wc->rows[i].empty);
		widen_size(&w_eb, wc->rows[i].empty_bytes);
		widen_number(&w_sparse, wc->rows[i].sparse);
		widen_size(&w_sb, wc->rows[i].sparse_bytes);
	}
	printf("%*s  %*s  %*s  %*s  %*s  %s\n", w_count, "COUNT", w_empty,
	       "EMPTY", w_eb, "BYTES", w_sparse, "SPARSE", w_sb, "SLOTS",
	       "CLASS");
	for (size_t i = 0; i < k; i++) {
		const struct waste_collection_row *r = &wc->rows[i];

		printf("%*" PRIu64 "  %*" PRIu64 "  %*s  %*" PRIu64 "  %*s  %s\n",
		       w_count, r->count, w_empty, r->empty, w_eb,
		       human_size(r->empty_bytes, a), w_sparse, r->sparse,
		       w_sb, human_size(r->sparse_bytes, b),
		       esc_name(slot_name(c->h, r->slot, name)));
	}
	if (k < wc->n_rows)
		printf("... and %zu more %s (-n)\n", wc->n_rows - k,
		       wc->n_rows - k == 1 ? "class" : "classes");
}

static int report_text(const struct waste_cmd *c)
{
	char objects[48], total[SIZE_TEXT];

	printf("dump %" PRIu64 " of %s: %s, %s\n", c->h->dump,
	       esc_text(c->path), count_of(c->h->n, "object", "objects", objects),
	       human_size(c->h->total_bytes, total));
	print_summary_text("strings", "string", "strings", &c->w.strings);
	print_groups_text(c, &c->w.strings, true);
	print_summary_text("primitive arrays", "array", "arrays",
			   &c->w.arrays);
	print_groups_text(c, &c->w.arrays, false);
	print_collections_text(c);
	return fflush(stdout) == 0 ? 0 : -1;
}

/* ---- yaml, json ---------------------------------------------------------- */

static void out_holders(struct out *o, const struct heap *h,
			const struct waste_group *g)
{
	char buf[NAME_TEXT];

	out_begin_array(o, "holders");
	for (size_t i = 0; i < g->n_holders; i++) {
		const struct waste_holder *k = &g->holders[i];

		out_begin_object(o, NULL);
		out_string(o, "holder", holder_text(h, k, buf));
		out_u64(o, "count", k->count);
		out_end_object(o);
	}
	out_end_array(o);
}

static void out_text(struct out *o, const struct heap *h, uint32_t s)
{
	char text[VALUES_TEXT_BOUND(TEXT_KEPT)];
	uint64_t length, shown;

	if (values_string_text(h, s, text, TEXT_KEPT, &shown, &length)) {
		out_string(o, "text", text);
		out_u64(o, "text_length", length);
	} else {
		out_null(o, "text");
		out_null(o, "text_length");
	}
}

/* An array's type, length, first elements (as object writes them: a
 * number, a boolean, or a string for a char, float or double) and hash
 * when the trace kept a prefix. */
static void out_array(struct out *o, const struct heap *h, uint32_t a)
{
	struct value_record r;
	const struct ht_array_values *v = &r.array;
	unsigned width;

	if (!heap_object_values(h, a, &r) || !r.has_array)
		return;
	width = ht_value_type_width(v->type);
	out_string(o, "type", ht_value_type_name(v->type));
	out_u64(o, "length", v->length);
	out_begin_array(o, "elements");
	for (uint64_t i = 0; i < v->stored && i < ELEMENTS_KEPT; i++) {
		uint64_t bits = ht_value_load(v->type, v->data + i * width);
		char buf[VALUE_TEXT];

		if (v->type == HT_TYPE_BOOLEAN)
			out_bool(o, NULL, bits != 0);
		else if (v->type == HT_TYPE_CHAR || v->type == HT_TYPE_FLOAT ||
			 v->type == HT_TYPE_DOUBLE)
			out_string(o, NULL, value_text(v->type, bits, buf));
		else
			out_i64(o, NULL, (int64_t)bits);
	}
	out_end_array(o);
	if (v->stored < v->length)
		out_id(o, "hash", v->hash);
	else
		out_null(o, "hash");
}

static void out_duplicates(struct out *o, const struct waste_cmd *c,
			   const char *key, const struct waste_duplicates *d,
			   bool strings)
{
	size_t k = shown(c, d);
	char cls[NAME_TEXT];

	out_begin_object(o, key);
	out_u64(o, "examined", d->examined);
	out_u64(o, "group_count", d->n_groups);
	out_u64(o, "objects", d->objects);
	out_u64(o, "copies", d->copies);
	out_u64(o, "wasted", d->wasted);
	out_begin_array(o, "groups");
	for (size_t i = 0; i < k; i++) {
		const struct waste_group *g = &d->groups[i];

		out_begin_object(o, NULL);
		out_id(o, "first", heap_id(c->h, g->first));
		out_string(o, "class", object_class_text(c->h, g->first, cls));
		if (strings)
			out_text(o, c->h, g->first);
		else
			out_array(o, c->h, g->first);
		out_u64(o, "count", g->count);
		if (strings)
			out_u64(o, "arrays", g->arrays);
		out_u64(o, "bytes", g->bytes);
		out_u64(o, "wasted", g->wasted);
		out_holders(o, c->h, g);
		out_end_object(o);
	}
	out_end_array(o);
	out_end_object(o);
}

static void out_collection_row(struct out *o,
			       const struct waste_collection_row *r)
{
	out_u64(o, "count", r->count);
	out_u64(o, "unknown", r->unknown);
	out_u64(o, "empty", r->empty);
	out_u64(o, "empty_bytes", r->empty_bytes);
	out_u64(o, "sparse", r->sparse);
	out_u64(o, "sparse_bytes", r->sparse_bytes);
}

static void out_collections(struct out *o, const struct waste_cmd *c)
{
	const struct waste_collections *wc = &c->w.collections;
	size_t k = rows_shown(c);
	char name[NAME_TEXT];

	out_begin_object(o, "collections");
	out_collection_row(o, &wc->all);
	out_u64(o, "class_count", wc->n_rows);
	out_begin_array(o, "classes");
	for (size_t i = 0; i < k; i++) {
		out_begin_object(o, NULL);
		out_string(o, "class", slot_name(c->h, wc->rows[i].slot, name));
		out_collection_row(o, &wc->rows[i]);
		out_end_object(o);
	}
	out_end_array(o);
	out_end_object(o);
}

static int report_structured(const struct waste_cmd *c)
{
	struct out *o = out_new(stdout, (enum output_format)c->format);

	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_u64(o, "dump", c->h->dump);
	out_duplicates(o, c, "duplicate_strings", &c->w.strings, true);
	out_duplicates(o, c, "duplicate_arrays", &c->w.arrays, false);
	out_collections(o, c);
	out_end_object(o);
	return out_finish(o);
}

/* ---- the command --------------------------------------------------------- */

static int find_waste(struct waste_cmd *c)
{
	struct ht_error err;

	if (waste_compute(c->h, &c->w, &err) < 0 ||
	    waste_find_holders(c->h, &c->w, &c->w.strings, shown(c, &c->w.strings),
			       HOLDERS_SHOWN, &err) < 0 ||
	    waste_find_holders(c->h, &c->w, &c->w.arrays, shown(c, &c->w.arrays),
			       HOLDERS_SHOWN, &err) < 0) {
		analysis_failed(c->path, &err);
		return -1;
	}
	return 0;
}

static int run_waste(struct waste_cmd *c)
{
	struct loaded_dump ld;
	int status, rc;

	status = load_dump(c->path, &c->reader_options, c->select, &ld);
	if (status != EXIT_DONE)
		return status;
	c->h = ld.heap;
	if (find_waste(c) < 0) {
		unload_dump(&ld);
		return EXIT_UNREADABLE;
	}
	if (!c->w.has_values) {
		error_msg("%s: dump %" PRIu64 " has no values (primitive fields "
			  "and array contents) to compare", c->path,
			  c->h->dump);
		status = ld.damaged ? EXIT_UNREADABLE : EXIT_FINDING;
	} else {
		rc = c->format == FORMAT_TEXT ? report_text(c)
					      : report_structured(c);
		if (rc < 0)
			error_msg("cannot write the report: %m");
		status = rc < 0 ? EXIT_UNREADABLE : analysis_status(ld.damaged);
	}
	waste_free(&c->w);
	unload_dump(&ld);
	return status;
}

int cmd_waste(int argc, char **argv)
{
	/* the values are what waste compares: read and kept (load_dump) */
	struct waste_cmd c = {
		.select = HEAP_LAST_DUMP,
		.limit = 20,
		.reader_options = {.values = true},
	};
	const struct cli_option options[] = {
		OPT_NUMBER(&c.limit, "list N groups of each kind and N classes of\n"
			   "collections (default 20; 0: all)"),
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
	status = trace_operand("waste", argc, argv, &c.path);
	if (status != EXIT_DONE)
		return status;
	return run_waste(&c);
}
