/*
 * builtin-object.c - `heaptrace object`: one object of a dump: its class,
 * sizes, generation, immediate dominator, the roots that hold it, the
 * objects that refer to it and those it refers to. What holds it is
 * analysis's (referrers.h); this file finds the object and renders.
 */
#include "analysis/dominators.h"
#include "analysis/levels.h"
#include "analysis/reach.h"
#include "analysis/referrers.h"
#include "analysis/root_order.h"
#include "analysis/sites.h"
#include "analysis/values.h"
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"
#include "util/utf8.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "object",
	.text = "usage: heaptrace object [--dump N] [--max-refs N]\n"
		"                        [--format text|yaml|json] [FILE] ID\n"
		"\n"
		"Describes the object ID (decimal or 0x hex) of a dump: class, size,\n"
		"retained size, generation, immediate dominator, the roots that hold\n"
		"it, its referrers and its references; its values, a string's text\n"
		"and an array's first elements when the trace has them. Exits 1\n"
		"when the dump has no object ID.\n",
};

struct object_report {
	const char *path;
	int format;
	int64_t select;
	uint64_t max_refs;
	ht_id target_id;
	enum heap_level level;      /* what the dominators are computed at */
	/* the strongest level that reaches the target, where the dump has
	 * referents; HEAP_LEVELS + 1 when it has none */
	int reach_level;
	const struct heap *h;
	const struct heap_dominators *d;
	uint32_t target;
	struct referrer *referrers; /* the first max_refs, by referrer id */
	size_t n_referrers;         /* all of them */
	size_t n_roots;             /* roots that hold the target directly */
	size_t *ranked;             /* h->roots' indexes in rank order */
	/* the stack that allocated it, when the trace recorded one
	 * (record --sites): frames.n_frames 0 otherwise */
	struct sites allocation;
};

static size_t listed_count(const struct object_report *r, size_t n)
{
	return limit_shown(r->max_refs, n);
}

static uint64_t reference_count(const struct object_report *r)
{
	return heap_ref_start(r->h, r->target + 1) - heap_ref_start(r->h, r->target);
}

static uint32_t reference_at(const struct object_report *r, uint64_t field)
{
	return r->h->ref[heap_ref_start(r->h, r->target) + field];
}

/* The field a referrer refers to the target through. */
static const char *referrer_step(const struct object_report *r, size_t i,
				 char *buf)
{
	uint32_t o = r->referrers[i].object;

	return step_text(r->h, o, heap_ref_start(r->h, o) + r->referrers[i].field,
			 buf);
}

/* The field the target's reference f is read from: "[f]" when none is
 * known. */
static const char *reference_step(const struct object_report *r, uint64_t f,
				  char *buf)
{
	return step_text(r->h, r->target, heap_ref_start(r->h, r->target) + f, buf);
}

/* The class the target is the class object of (when the trace carries
 * fields, as describe.h names things then), else NULL. */
static const char *class_object_of(const struct object_report *r)
{
	return heap_has_fields(r->h) ?
		heap_class_object_name(r->h, r->target) : NULL;
}

static bool is_reachable(const struct object_report *r)
{
	return r->d->idom[r->target] != HEAP_NONE;
}

/* ---- values --------------------------------------------------------------- */

/* Characters of a string's text shown, elements of an array's. */
#define TEXT_SHOWN 200
#define ELEMENTS_SHOWN 16

/* The field a value names: its name and type, "?" for one no event
 * declared. */
static const struct heap_field *value_field(const struct heap *h,
					    uint32_t field)
{
	return field < h->n_fields ? &h->fields[field] : NULL;
}

/* A static's name says so, as a static reference's step does. */
static const char *field_name(const struct heap_field *f, char *buf)
{
	const char *name = f && f->name ? f->name : "?";

	if (!f || f->kind != HT_FIELD_STATIC)
		return name;
	snprintf(buf, NAME_TEXT, "static %s", name);
	return buf;
}

static unsigned field_type(const struct heap_field *f)
{
	return f ? f->type : 0;
}

static const char *type_name(unsigned type)
{
	return ht_value_type_name(type) ? ht_value_type_name(type) : "?";
}

/* ---- text ---------------------------------------------------------------- */

static void print_field(const char *label, const char *value)
{
	printf("  %-11s %s\n", label, value);
}

static void print_dominator_text(const struct object_report *r)
{
	uint32_t dom = r->d->idom[r->target];
	char id[24], cls[NAME_TEXT], line[NAME_TEXT + 32];

	if (dom == HEAP_NONE) {
		print_field("dominator", "none (unreachable)");
	} else if (dom == HEAP_VIRTUAL_ROOT) {
		print_field("dominator", "a root");
	} else {
		snprintf(line, sizeof(line), "%s %s", hex_id(heap_id(r->h, dom), id),
			 esc_name(object_class_text(r->h, dom, cls)));
		print_field("dominator", line);
	}
}

static void print_summary_text(const struct object_report *r)
{
	const struct heap *h = r->h;
	unsigned gen = heap_generation(h, r->target);
	char buf[SIZE_TEXT], id[24], cls[NAME_TEXT], line[NAME_TEXT + 32];
	char genbuf[16];
	uint32_t c = h->cls[r->target];

	printf("object %s in dump %llu of %s\n", hex_id(r->target_id, id),
	       (unsigned long long)h->dump, esc_text(r->path));
	/* an unnamed class is already called by its id */
	if (c != HEAP_NO_CLASS && c < h->n_classes && h->classes[c].name)
		snprintf(line, sizeof(line), "%s (%s)",
			 esc_name(heap_class_name(h, r->target, cls)),
			 hex_id(h->classes[c].id, id));
	else
		snprintf(line, sizeof(line), "%s",
			 esc_name(heap_class_name(h, r->target, cls)));
	print_field("class", line);
	if (class_object_of(r))
		print_field("stands for", esc_name(object_class_text(
				    h, r->target, cls)));
	print_field("size", exact_size(heap_size(h, r->target), buf));
	print_field("retained", exact_size(r->d->retained[r->target], buf));
	if (gen != HEAP_NO_GENERATION)
		print_field("generation", generation_name(gen, genbuf));
	print_dominator_text(r);
	if (is_reachable(r))
		print_field("reachable", "yes");
	else if (r->level == HEAP_LEVEL_DEFAULT)
		print_field("reachable", "no: no strong root reaches it");
	else {
		snprintf(line, sizeof(line), "no: no root reaches it at "
			 "level %s", heap_level_name(r->level));
		print_field("reachable", line);
	}
	if (r->level != HEAP_LEVEL_DEFAULT)
		print_field("computed at", heap_level_name(r->level));
	/* said where it is news: the object is reachable, but not strongly */
	if (r->reach_level > HEAP_LEVEL_STRONG &&
	    r->reach_level < HEAP_LEVEL_UNREACHABLE) {
		enum heap_level l = (enum heap_level)r->reach_level;

		snprintf(line, sizeof(line), "%s: --retained %s reaches it",
			 heap_level_reachable(l), heap_level_name(l));
		print_field("strength", line);
	}
}

/* Its allocation's stack, the allocating method first. */
static void print_allocation_text(const struct object_report *r)
{
	const struct sites *s = &r->allocation;
	char text[FRAME_TEXT];

	for (size_t f = 0; f < s->n_frames; f++)
		printf("  %-11s %s\n", f ? "" : "allocated",
		       frame_text(s->frames[f].method, s->frames[f].id,
				  s->frames[f].file, s->frames[f].line, text));
}

static void print_more(const struct object_report *r, size_t n)
{
	size_t shown = listed_count(r, n);

	if (shown < n)
		printf("  ... and %zu more (--max-refs)\n", n - shown);
}

static void print_roots_text(const struct object_report *r)
{
	char line[512];

	printf("roots holding it (%zu)\n", r->n_roots);
	for (size_t k = 0; k < r->h->n_roots; k++) {
		const struct heap_root *root = &r->h->roots[r->ranked[k]];

		if (root->object == r->target)
			printf("  %s\n", describe_root(r->h, root, line,
						       sizeof(line)));
	}
}

static void print_referrers_text(const struct object_report *r)
{
	size_t shown = listed_count(r, r->n_referrers);
	char id[24], cls[NAME_TEXT];
	int w_id = 2;

	for (size_t i = 0; i < shown; i++)
		widen_id(&w_id, heap_id(r->h, r->referrers[i].object));
	printf("referrers (%zu)\n", r->n_referrers);
	for (size_t i = 0; i < shown; i++) {
		uint32_t o = r->referrers[i].object;
		char step[NAME_TEXT];

		if (heap_has_fields(r->h))
			printf("  %-*s  %s  via %s\n", w_id,
			       hex_id(heap_id(r->h, o), id),
			       esc_name(object_class_text(r->h, o, cls)),
			       esc_name(referrer_step(r, i, step)));
		else
			printf("  %-*s  field %-3u  %s\n", w_id,
			       hex_id(heap_id(r->h, o), id), r->referrers[i].field,
			       esc_name(object_class_text(r->h, o, cls)));
	}
	print_more(r, r->n_referrers);
}

/* The widths of the columns "[F]", id and size of the listed references. */
static void reference_widths(const struct object_report *r, size_t shown,
			     int *w_field, int *w_id, int *w_size)
{
	char buf[NAME_TEXT];

	*w_field = *w_id = *w_size = 0;
	for (size_t f = 0; f < shown; f++) {
		uint32_t x = reference_at(r, f);

		widen(w_field, (int)strlen(esc_name(reference_step(r, f, buf))));
		if (x == HEAP_NULL_REF || x == HEAP_DANGLING_REF)
			continue;
		widen_id(w_id, heap_id(r->h, x));
		widen_size(w_size, heap_size(r->h, x));
	}
}

static void print_references_text(const struct object_report *r)
{
	uint64_t n = reference_count(r);
	size_t shown = listed_count(r, n);
	char field[NAME_TEXT], id[24], cls[NAME_TEXT], size[SIZE_TEXT];
	/* named fields are set apart by two spaces, as the other columns */
	const char *sep = heap_has_fields(r->h) ? "  " : " ";
	int w_field, w_id, w_size;

	reference_widths(r, shown, &w_field, &w_id, &w_size);
	printf("references (%llu)\n", (unsigned long long)n);
	for (size_t f = 0; f < shown; f++) {
		uint32_t x = reference_at(r, f);
		const char *step = esc_name(reference_step(r, f, field));

		if (x == HEAP_NULL_REF)
			printf("  %-*s%snull\n", w_field, step, sep);
		else if (x == HEAP_DANGLING_REF)
			printf("  %-*s%sdangling: an object the dump never "
			       "reported\n", w_field, step, sep);
		else
			printf("  %-*s%s%-*s  %*s  %s\n", w_field, step, sep,
			       w_id, hex_id(heap_id(r->h, x), id), w_size,
			       human_size(heap_size(r->h, x), size),
			       esc_name(object_class_text(r->h, x, cls)));
	}
	print_more(r, n);
}

/* A string's text, quoted, and how much of it there is when cut. */
static void print_text_text(const struct object_report *r)
{
	char line[STRING_LINE];

	if (string_line(r->h, r->target, TEXT_SHOWN, line))
		print_field("text", line);
}

static void print_values_text(const struct object_report *r)
{
	struct value_record v;
	uint32_t field;
	uint64_t bits;
	char buf[VALUE_TEXT], name[NAME_TEXT];
	int w_name = 0, w_type = 0;

	if (!heap_object_values(r->h, r->target, &v) || !v.left)
		return;
	printf("values (%zu)\n", v.left);
	while (value_record_next(&v, &field, &bits)) {
		const struct heap_field *f = value_field(r->h, field);

		widen(&w_name, (int)strlen(esc_text(field_name(f, name))));
		widen(&w_type, (int)strlen(type_name(field_type(f))));
	}
	heap_object_values(r->h, r->target, &v);
	while (value_record_next(&v, &field, &bits)) {
		const struct heap_field *f = value_field(r->h, field);

		printf("  %-*s  %-*s  %s\n", w_name,
		       esc_text(field_name(f, name)),
		       w_type, type_name(field_type(f)),
		       esc_text(value_text(field_type(f), bits, buf)));
	}
}

/* An array's first elements, and what the trace kept of the rest. */
static void print_elements_text(const struct object_report *r)
{
	struct value_record v;
	const struct ht_array_values *a = &v.array;
	unsigned width;
	char buf[VALUE_TEXT];

	if (!heap_object_values(r->h, r->target, &v) || !v.has_array)
		return;
	width = ht_value_type_width(a->type);
	printf("elements (%" PRIu64 " %s)\n ", a->length, type_name(a->type));
	for (uint64_t i = 0; i < a->stored && i < ELEMENTS_SHOWN; i++)
		printf(" %s", esc_text(value_text(
			a->type, ht_value_load(a->type, a->data + i * width),
			buf)));
	if (a->length > ELEMENTS_SHOWN || a->stored < a->length)
		printf(" ...");
	printf("\n");
	if (a->stored < a->length)
		printf("  the trace keeps the first %" PRIu64 " and a hash "
		       "of all: 0x%016" PRIx64 "\n", a->stored, a->hash);
}

static int report_text(const struct object_report *r)
{
	print_summary_text(r);
	print_allocation_text(r);
	print_text_text(r);
	print_values_text(r);
	print_elements_text(r);
	print_roots_text(r);
	print_referrers_text(r);
	print_references_text(r);
	return fflush(stdout) == 0 ? 0 : -1;
}

/* ---- yaml, json ---------------------------------------------------------- */

static void out_dominator(struct out *o, const struct object_report *r)
{
	uint32_t dom = r->d->idom[r->target];
	char cls[NAME_TEXT];

	if (dom == HEAP_NONE || dom == HEAP_VIRTUAL_ROOT) {
		out_null(o, "dominator");
		return;
	}
	out_begin_object(o, "dominator");
	out_id(o, "id", heap_id(r->h, dom));
	out_string(o, "class", object_class_text(r->h, dom, cls));
	out_end_object(o);
}

static void out_referrers(struct out *o, const struct object_report *r)
{
	size_t shown = listed_count(r, r->n_referrers);
	char cls[NAME_TEXT];

	out_u64(o, "referrer_count", r->n_referrers);
	out_begin_array(o, "referrers");
	for (size_t i = 0; i < shown; i++) {
		uint32_t x = r->referrers[i].object;
		char step[NAME_TEXT];

		out_begin_object(o, NULL);
		out_id(o, "id", heap_id(r->h, x));
		out_string(o, "class", object_class_text(r->h, x, cls));
		out_u64(o, "field", r->referrers[i].field);
		if (heap_has_fields(r->h))
			out_string(o, "step", referrer_step(r, i, step));
		out_end_object(o);
	}
	out_end_array(o);
}

static void out_references(struct out *o, const struct object_report *r)
{
	uint64_t n = reference_count(r);
	size_t shown = listed_count(r, n);
	char cls[NAME_TEXT];

	out_u64(o, "reference_count", n);
	out_begin_array(o, "references");
	for (size_t f = 0; f < shown; f++) {
		uint32_t x = reference_at(r, f);
		bool real = x != HEAP_NULL_REF && x != HEAP_DANGLING_REF;
		char step[NAME_TEXT];

		out_begin_object(o, NULL);
		out_u64(o, "field", f);
		if (heap_has_fields(r->h))
			out_string(o, "step", reference_step(r, f, step));
		if (real) {
			out_id(o, "id", heap_id(r->h, x));
			out_string(o, "class", object_class_text(r->h, x, cls));
			out_u64(o, "size", heap_size(r->h, x));
		} else {
			out_null(o, "id");
			out_null(o, "class");
			out_null(o, "size");
		}
		out_bool(o, "dangling", x == HEAP_DANGLING_REF);
		out_end_object(o);
	}
	out_end_array(o);
}

/* A value in the structured forms: a number for the integer types, a
 * boolean, a char as a string, a float or double as the string of its
 * digits (which keeps NaN and the infinities, that JSON has no number
 * for, and every digit). */
static void out_value(struct out *o, const char *key, unsigned type,
		      uint64_t bits)
{
	char buf[VALUE_TEXT];

	switch (type) {
	case HT_TYPE_BOOLEAN:
		out_bool(o, key, bits != 0);
		return;
	case HT_TYPE_CHAR:
	case HT_TYPE_FLOAT:
	case HT_TYPE_DOUBLE:
		out_string(o, key, value_text(type, bits, buf));
		return;
	default:
		out_i64(o, key, (int64_t)bits);
		return;
	}
}

/* text, values and array: only for an object that has them. */
static void out_values(struct out *o, const struct object_report *r)
{
	char text[VALUES_TEXT_BOUND(TEXT_SHOWN)];
	struct value_record v;
	uint64_t length, bits, shown;
	uint32_t field;

	if (values_string_text(r->h, r->target, text, TEXT_SHOWN, &shown,
			       &length)) {
		out_string(o, "text", text);
		out_u64(o, "text_length", length);
	}
	if (!heap_object_values(r->h, r->target, &v))
		return;
	if (v.left) {
		out_begin_array(o, "values");
		while (value_record_next(&v, &field, &bits)) {
			const struct heap_field *f = value_field(r->h, field);

			out_begin_object(o, NULL);
			out_string(o, "field", f ? f->name : NULL);
			out_bool(o, "static", f && f->kind == HT_FIELD_STATIC);
			out_string(o, "type", ht_value_type_name(field_type(f)));
			out_value(o, "value", field_type(f), bits);
			out_end_object(o);
		}
		out_end_array(o);
	}
	if (v.has_array) {
		const struct ht_array_values *a = &v.array;
		unsigned width = ht_value_type_width(a->type);

		out_begin_object(o, "array");
		out_string(o, "type", ht_value_type_name(a->type));
		out_u64(o, "length", a->length);
		out_begin_array(o, "elements");
		for (uint64_t i = 0; i < a->stored; i++)
			out_value(o, NULL, a->type,
				  ht_value_load(a->type, a->data + i * width));
		out_end_array(o);
		if (a->stored < a->length)
			out_id(o, "hash", a->hash);
		else
			out_null(o, "hash");
		out_end_object(o);
	}
}

/* "allocation": its stack's frames, null when the trace has none. */
static void out_allocation(struct out *o, const struct object_report *r)
{
	const struct sites *s = &r->allocation;

	if (!s->n_frames) {
		out_null(o, "allocation");
		return;
	}
	out_begin_array(o, "allocation");
	for (size_t f = 0; f < s->n_frames; f++)
		out_stack_frame(o, s->frames[f].method, s->frames[f].id,
				s->frames[f].file, s->frames[f].line);
	out_end_array(o);
}

static int report_structured(const struct object_report *r)
{
	const struct heap *h = r->h;
	struct out *o = out_new(stdout, (enum output_format)r->format);
	unsigned gen = heap_generation(h, r->target);
	uint32_t c = h->cls[r->target];
	char cls[NAME_TEXT];

	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_u64(o, "dump", h->dump);
	out_id(o, "id", r->target_id);
	out_string(o, "class", heap_class_name(h, r->target, cls));
	if (heap_has_fields(h))
		out_string(o, "class_object_of", class_object_of(r));
	if (c != HEAP_NO_CLASS && c < h->n_classes)
		out_id(o, "class_id", h->classes[c].id);
	else
		out_null(o, "class_id");
	out_u64(o, "size", heap_size(h, r->target));
	out_u64(o, "retained", r->d->retained[r->target]);
	if (gen != HEAP_NO_GENERATION)
		out_u64(o, "generation", gen);
	else
		out_null(o, "generation");
	out_dominator(o, r);
	out_bool(o, "unreachable", !is_reachable(r));
	if (r->level != HEAP_LEVEL_DEFAULT)
		out_string(o, "level", heap_level_name(r->level));
	if (r->reach_level <= HEAP_LEVEL_UNREACHABLE)
		out_string(o, "strongest", heap_level_name(
				   (enum heap_level)r->reach_level));
	out_begin_array(o, "roots");
	for (size_t k = 0; k < h->n_roots; k++)
		if (h->roots[r->ranked[k]].object == r->target)
			out_root(o, NULL, h, &h->roots[r->ranked[k]]);
	out_end_array(o);
	out_referrers(o, r);
	out_references(o, r);
	out_values(o, r);
	out_allocation(o, r);
	out_end_object(o);
	return out_finish(o);
}

/* ---- the command --------------------------------------------------------- */

static int describe_object(struct object_report *r, const struct heap *h,
			   bool damaged)
{
	struct heap_dominators d;
	struct ht_error err;
	char id[24];
	int rc;

	r->h = h;
	r->target = heap_find(h, r->target_id);
	if (r->target == HEAP_NONE) {
		error_msg("%s: dump %llu has no object %s", r->path,
			  (unsigned long long)h->dump, hex_id(r->target_id, id));
		/* in a damaged trace the damage is the news, as with history */
		return damaged ? EXIT_UNREADABLE : EXIT_FINDING;
	}
	if (referrers_reach_level(h, r->target, &r->reach_level, &err) < 0 ||
	    heap_dominators_at(h, r->level, &d, &err) < 0) {
		analysis_failed(r->path, &err);
		return EXIT_UNREADABLE;
	}
	r->d = &d;
	r->n_roots = referrers_roots(h, r->target);
	r->ranked = heap_roots_ranked(h);
	if (!r->ranked || referrers_find(h, r->target, r->max_refs,
					 &r->referrers, &r->n_referrers) < 0) {
		error_msg("out of memory");
		free(r->ranked);
		heap_dominators_free(&d);
		return EXIT_UNREADABLE;
	}
	rc = r->format == FORMAT_TEXT ? report_text(r) : report_structured(r);
	if (rc < 0)
		error_msg("cannot write the report: %m");
	free(r->ranked);
	r->ranked = NULL;
	heap_dominators_free(&d);
	return rc < 0 ? EXIT_UNREADABLE : analysis_status(damaged);
}

/*
 * The object's values, and those its text reads, from a second read of
 * the dump (reload_for_values) when the input has values the first left
 * out: values for every object would cost a third more memory on a dump
 * where each has its own (doc/design.md, labels). An object the dump
 * lacks is said so by describe_object, from the first graph.
 */
static int read_values(const struct object_report *r, struct loaded_dump *ld)
{
	uint32_t target = heap_find(ld->heap, r->target_id);

	if (target == HEAP_NONE)
		return EXIT_DONE;
	return reload_for_values(ld, target);
}

/* The stack that allocated the object, when the trace recorded it: one
 * more replay, only for a trace whose header says it has stacks. 0, or
 * -1 once said why not. */
static int find_allocation(struct object_report *r, struct loaded_dump *ld)
{
	if (heap_find(ld->heap, r->target_id) == HEAP_NONE)
		return 0;
	return sites_allocation_of(&r->allocation, &ld->in, ld->heap->dump,
				   r->target_id) == SITES_FAILED ? -1 : 0;
}

/* "[FILE] ID": the last operand is the id. */
static int operands(int argc, char **argv, struct object_report *r)
{
	int n = argc - optind;

	if (n < 1)
		return usage_error("object", "which object? Give its ID after FILE");
	if (n > 2)
		return usage_error("object", "FILE and ID, no more");
	if (parse_u64(argv[argc - 1], &r->target_id) < 0)
		return usage_error("object", "'%s' is not an object id "
				   "(decimal or 0x hex); the ID comes last",
				   argv[argc - 1]);
	r->path = n == 2 ? argv[optind] : DEFAULT_TRACE;
	return EXIT_DONE;
}

static int parse_max_refs(const char *cmd, const char *arg, void *max)
{
	if (parse_u64(arg, max) < 0)
		return usage_error(cmd, "--max-refs takes a number");
	return EXIT_DONE;
}

int cmd_object(int argc, char **argv)
{
	struct object_report r = {.select = HEAP_LAST_DUMP, .max_refs = 100};
	/* the graph is built without values; the object's own are read
	 * in a second read (read_values) */
	struct ht_reader_options reader_options = {0};
	struct loaded_dump ld;
	const struct cli_option options[] = {
		OPT_DUMP(&r.select, "the dump to look in (default: the last)"),
		OPT_RETAINED(&r.level),
		OPT_CALLBACK('m', "max-refs", "N", &r.max_refs, parse_max_refs,
			     "list at most N referrers and N references\n"
			     "(default 100; 0: all); all are counted"),
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
	status = operands(argc, argv, &r);
	if (status != EXIT_DONE)
		return status;
	status = load_dump_to_label(r.path, &reader_options, r.select, &ld);
	if (status == EXIT_DONE)
		status = read_values(&r, &ld);
	if (status != EXIT_DONE) {
		unload_dump(&ld);
		return status;
	}
	if (find_allocation(&r, &ld) < 0)
		status = EXIT_UNREADABLE;
	else
		status = describe_object(&r, ld.heap, ld.damaged);
	sites_free(&r.allocation);
	free(r.referrers);
	unload_dump(&ld);
	return status;
}
