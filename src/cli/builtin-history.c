/*
 * builtin-history.c - `heaptrace history`: the lives of the objects that
 * have had an id: allocation or first sighting, each GC (moved, survived
 * in place, kept, promoted), the dumps that report it, and its death or
 * loss, by the relocation rules of doc/design.md section 3 (relocation.h).
 *
 * The lookup is analysis/history.h's (two replays of an input that can be
 * read twice: a pipe is first copied, analysis/session.c); this file
 * parses the options, says the lookup's findings in heaptrace(1)'s words
 * and exit statuses, and renders the lives, each step at its time when
 * the trace has times.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/history.h"
#include "util/humanize.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "history",
	.text = "usage: heaptrace history [--dump N] [--format text|yaml|json]\n"
		"                         [FILE] ID\n"
		"\n"
		"The life of every object that has had the id ID (decimal or 0x hex)\n"
		"at any point of the trace: its allocation or first sighting, each GC\n"
		"(moved from -> to, survived in place, kept, promoted), the dumps\n"
		"that report it, and its death where it is proven, or its loss.\n"
		"Exits 1 when no object had ID.\n",
};

/* This struct is not an API; it may change from one release to the next. */
struct history_command {
	const char *path;
	struct input input;
	struct ht_reader_options reader_options;
	int format;
	int64_t select;          /* a dump number, or -1: every holder */
	ht_id target;
	struct history found;
};

/* ---- names --------------------------------------------------------------- */

/* The last name the trace gave the class, NULL if none. */
static const char *class_name(const struct history *h, ht_id id)
{
	return class_names_find(&h->classes, id);
}

/* "System.String", "?0x100", or "?" when the class is not known; buf
 * holds CLASS_TEXT_SIZE bytes. */
static const char *class_text(const struct history *h, ht_id id,
			      char *buf)
{
	return class_names_text(&h->classes, id, buf);
}

/* ---- what an object is --------------------------------------------------- */

static const char *fate_name(const struct reloc_step *last)
{
	if (last->kind == RELOC_DIED)
		return "died";
	if (last->kind == RELOC_LOST)
		return "lost";
	return "alive";
}

static const char *event_name(const struct reloc_step *s)
{
	switch (s->kind) {
	case RELOC_ALLOCATED:
		return "allocated";
	case RELOC_SEEN:
		return "seen_in_dump";
	case RELOC_MOVED:
		return "moved";
	case RELOC_SURVIVED:
		return "survived";
	case RELOC_KEPT:
		return "kept";
	case RELOC_UNTOUCHED:
		return "untouched";
	case RELOC_PROMOTED:
		return "promoted";
	case RELOC_DIED:
		return "died";
	case RELOC_LOST:
		return "lost";
	default:
		return "end";
	}
}

static const char *cause_name(enum reloc_cause c)
{
	switch (c) {
	case RELOC_DIED_BOUNDS:
		return "bounds";
	case RELOC_DIED_FULL_GC:
		return "full_gc";
	case RELOC_DIED_ABSENT:
		return "absent_from_dump";
	case RELOC_LOST_BLOCK:
		return "block";
	case RELOC_LOST_ALLOCATION:
		return "allocation";
	case RELOC_LOST_DUMP:
		return "dump";
	default:
		return NULL;
	}
}

/* ---- text ---------------------------------------------------------------- */

/* ", generation 1" when known, or "". */
static const char *generation_suffix(unsigned g, char *buf, size_t len)
{
	char name[16];

	if (g == RELOC_NO_GENERATION) {
		buf[0] = '\0';
		return buf;
	}
	snprintf(buf, len, ", generation %s", generation_name(g, name));
	return buf;
}

static const char *when_text(const struct reloc_step *s, char *buf)
{
	if (s->kind == RELOC_END)
		return "end";
	if (s->dump >= 0)
		snprintf(buf, 32, "dump %lld", (long long)s->dump);
	else if (s->gc >= 0)
		snprintf(buf, 32, "gc %lld", (long long)s->gc);
	else
		snprintf(buf, 32, "event %llu",
			 (unsigned long long)s->event_index);
	return buf;
}

static void print_died(const struct reloc_step *s)
{
	char id[24], g[16];

	switch (s->cause) {
	case RELOC_DIED_BOUNDS:
		printf("died at %s: in the bounds of collected generation %s "
		       "at the GC's start, and in no block\n",
		       hex_id(s->from, id), generation_name(s->generation, g));
		break;
	case RELOC_DIED_FULL_GC:
		printf("died at %s: in no block of a GC that collected every "
		       "generation\n", hex_id(s->from, id));
		break;
	default:
		printf("died at %s: absent from this complete dump",
		       hex_id(s->from, id));
		if (s->alive_gc >= 0)
			printf("; last known alive after gc %lld\n",
			       (long long)s->alive_gc);
		else
			printf("; last known alive before any GC\n");
		break;
	}
}

static void print_lost(const struct history *h, const struct reloc_step *s)
{
	char id[24], cls[CLASS_TEXT_SIZE], size[SIZE_TEXT];

	hex_id(s->from, id);
	switch (s->cause) {
	case RELOC_LOST_ALLOCATION:
		printf("lost: object %u was allocated at %s; its fate is "
		       "unknown\n", s->other, id);
		break;
	case RELOC_LOST_DUMP:
		printf("lost: the dump shows another object at %s (%s, %s), "
		       "object %u; its fate is unknown\n", id,
		       esc_name(class_text(h, s->other_class, cls)),
		       human_size(s->other_size, size), s->other);
		break;
	default:
		printf("lost: object %u is at %s after this GC; its fate is "
		       "unknown\n", s->other, id);
		break;
	}
}

/* Under an allocation that carries its stack (--sites), its frames. */
static void print_allocation_stack(const struct history *h, ht_id stack)
{
	const struct alloc_stack *k = stack ? alloc_stacks_stack(&h->stacks,
							       stack) : NULL;
	char text[FRAME_TEXT];

	if (stack && !k)
		printf("%*sby stack %llu, which the trace never declared\n",
		       h->timed ? 28 : 16, "", (unsigned long long)stack);
	for (size_t f = 0; k && f < k->count; f++) {
		ht_id id = h->stacks.frames[k->first + f];
		const struct alloc_method *m = alloc_stacks_method(&h->stacks,
								   id);

		printf("%*s%s %s\n", h->timed ? 28 : 16, "", f ? "  " : "by",
		       m ? frame_text(m->name, id, m->file, m->line, text)
			 : frame_text(NULL, id, NULL, 0, text));
	}
}

static void print_step(const struct history *h, const struct reloc_step *s)
{
	char when[32], a[24], b[24], g[48], g2[16], g3[16], t[DURATION_TEXT];
	uint64_t at = history_step_time(h, s);

	printf("  %-10s ", when_text(s, when));
	if (h->timed)
		printf("%-11s ", at == HISTORY_NO_TIME ? "" : human_duration(at, t));
	generation_suffix(s->generation, g, sizeof(g));
	switch (s->kind) {
	case RELOC_ALLOCATED:
		printf("allocated at %s%s\n", hex_id(s->to, a), g);
		print_allocation_stack(h, s->stack);
		break;
	case RELOC_SEEN:
		printf("%s at %s%s\n", s->first ? "first seen" : "seen",
		       hex_id(s->to, a), g);
		break;
	case RELOC_MOVED:
		printf("moved %s -> %s\n", hex_id(s->from, a),
		       hex_id(s->to, b));
		break;
	case RELOC_SURVIVED:
		printf("survived in place at %s\n", hex_id(s->to, a));
		break;
	case RELOC_KEPT:
		printf("in no block: keeps %s, its death not proven\n",
		       hex_id(s->to, a));
		break;
	case RELOC_UNTOUCHED:
		printf("generation %s not collected: stays at %s\n",
		       generation_name(s->generation, g2), hex_id(s->to, a));
		break;
	case RELOC_PROMOTED:
		printf("promoted from generation %s to %s\n",
		       generation_name(s->old_generation, g2),
		       generation_name(s->generation, g3));
		break;
	case RELOC_DIED:
		print_died(s);
		break;
	case RELOC_LOST:
		print_lost(h, s);
		break;
	case RELOC_END:
		printf("still tracked at %s%s\n",
		       hex_id(s->to, a), g);
		break;
	}
}

static void print_object_text(const struct history *h, const struct history_life *l)
{
	char cls[CLASS_TEXT_SIZE], size[SIZE_TEXT], cid[24];
	const struct reloc_step *last = l->last;

	printf("\nobject %u: ", l->object);
	if (last && class_name(h, last->class_id))
		printf("%s (%s)", esc_name(class_text(h, last->class_id, cls)),
		       hex_id(last->class_id, cid));
	else
		printf("class %s",
		       last ? esc_name(class_text(h, last->class_id, cls))
			    : "?");
	if (last && last->size)
		printf(", %s", exact_size(last->size, size));
	printf("\n");
	for (size_t k = 0; k < h->n_steps; k++)
		if (h->steps[k].object == l->object)
			print_step(h, &h->steps[k]);
}

static int report_text(const struct history *h, const struct history_life *l,
		       size_t n)
{
	char id[24], count[48];

	printf("%s: %s had id %s", esc_text(h->input->name),
	       count_of(n, "object", "objects", count), hex_id(h->target, id));
	if (h->select >= 0)
		printf(" in dump %lld", (long long)h->select);
	printf("\n");
	if (h->cut_off_gc >= 0)
		printf("%s: cut off inside gc %lld: the process ended there; "
		       "the ends below are as of then, and that GC proves no "
		       "death\n", esc_text(h->input->name), (long long)h->cut_off_gc);
	for (size_t i = 0; i < n; i++)
		print_object_text(h, &l[i]);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
}

/* ---- yaml, json ---------------------------------------------------------- */

static void out_id_or_null(struct out *o, const char *key, ht_id id)
{
	if (id)
		out_id(o, key, id);
	else
		out_null(o, key);
}

static void out_number_or_null(struct out *o, const char *key, int64_t n)
{
	if (n >= 0)
		out_i64(o, key, n);
	else
		out_null(o, key);
}

static void out_generation(struct out *o, const char *key, unsigned g)
{
	if (g == RELOC_NO_GENERATION)
		out_null(o, key);
	else
		out_u64(o, key, g);
}

static void out_object(struct out *o, const struct history *h,
		       const struct history_life *l)
{
	const struct reloc_step *last = l->last;
	char cls[CLASS_TEXT_SIZE];

	out_begin_object(o, NULL);
	out_u64(o, "object", l->object);
	out_string(o, "class", last ? class_text(h, last->class_id, cls) : "?");
	out_id_or_null(o, "class_id", last ? last->class_id : 0);
	out_u64(o, "size", last ? last->size : 0);
	out_string(o, "fate", last ? fate_name(last) : "alive");
	if (last && last->kind == RELOC_END) {
		out_id(o, "id", last->to);
		out_generation(o, "generation", last->generation);
	} else {
		out_null(o, "id");
		out_null(o, "generation");
	}
	out_end_object(o);
}

/* An allocation's "stack": its frames, null when it has none. */
static void out_allocation_stack(struct out *o, const struct history *h,
				 ht_id stack)
{
	const struct alloc_stack *k = stack ? alloc_stacks_stack(&h->stacks,
							       stack) : NULL;

	if (!k) {
		out_null(o, "stack");
		return;
	}
	out_begin_array(o, "stack");
	for (size_t f = 0; f < k->count; f++) {
		ht_id id = h->stacks.frames[k->first + f];
		const struct alloc_method *m = alloc_stacks_method(&h->stacks,
								   id);

		out_stack_frame(o, m ? m->name : NULL, id, m ? m->file : NULL,
			  m ? m->line : 0);
	}
	out_end_array(o);
}

static void out_step(struct out *o, const struct history *h,
		     const struct reloc_step *s)
{
	uint64_t at = history_step_time(h, s);

	out_begin_object(o, NULL);
	out_u64(o, "object", s->object);
	out_string(o, "event", event_name(s));
	out_u64(o, "event_index", s->event_index);
	out_number_or_null(o, "gc", s->gc);
	out_number_or_null(o, "dump", s->dump);
	if (h->timed && at != HISTORY_NO_TIME)
		out_u64(o, "time", at);
	else if (h->timed)
		out_null(o, "time");
	out_id_or_null(o, "from", s->from);
	out_id_or_null(o, "to", s->to);
	out_generation(o, "generation", s->generation);
	if (s->kind == RELOC_SEEN)
		out_bool(o, "first", s->first);
	if (s->kind == RELOC_PROMOTED)
		out_generation(o, "from_generation", s->old_generation);
	if (s->kind == RELOC_DIED || s->kind == RELOC_LOST)
		out_string(o, "cause", cause_name(s->cause));
	if (s->cause == RELOC_DIED_ABSENT)
		out_number_or_null(o, "alive_after_gc", s->alive_gc);
	if (s->kind == RELOC_LOST)
		out_u64(o, "by", s->other);
	if (s->kind == RELOC_ALLOCATED)
		out_allocation_stack(o, h, s->stack);
	out_end_object(o);
}

static int report_structured(const struct history *h,
			     const struct history_life *l, size_t n, int format)
{
	struct out *o = out_new(stdout, (enum output_format)format);

	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_string(o, "file", h->input->name);
	out_id(o, "id", h->target);
	out_number_or_null(o, "dump", h->select);
	out_number_or_null(o, "cut_off_gc", h->cut_off_gc);
	out_begin_array(o, "objects");
	for (size_t i = 0; i < n; i++)
		out_object(o, h, &l[i]);
	out_end_array(o);
	out_begin_array(o, "timeline");
	for (size_t k = 0; k < h->n_steps; k++)
		if (h->steps[k].kind != RELOC_END)
			out_step(o, h, &h->steps[k]);
	out_end_array(o);
	out_end_object(o);
	return out_finish(o);
}

/* ---- the command --------------------------------------------------------- */

/* No object had the id. In a damaged trace, one may have had it in what
 * was lost: that is no finding, and the message says so. */
static int not_found(const struct history *h)
{
	const char *before = h->damaged ? " before the damage" : "";
	char id[24];

	if (h->select >= 0)
		error_msg("%s: dump %lld has no object %s%s", h->input->name,
			  (long long)h->select, hex_id(h->target, id), before);
	else
		error_msg("%s: no object has had id %s%s", h->input->name,
			  hex_id(h->target, id), before);
	return h->damaged ? EXIT_UNREADABLE : EXIT_FINDING;
}

static int report(const struct history *h, int format)
{
	struct history_life *l;
	size_t n;
	int rc;

	l = history_lives(h, &n);
	if (!l) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	rc = format == FORMAT_TEXT ? report_text(h, l, n)
				   : report_structured(h, l, n, format);
	free(l);
	if (rc < 0) {
		error_msg("cannot write the report: %m");
		return EXIT_UNREADABLE;
	}
	return analysis_status(h->damaged);
}

static int run_history(struct history_command *c)
{
	struct history *h = &c->found;

	if (input_prepare(&c->input, c->path, &c->reader_options) < 0)
		return EXIT_UNREADABLE;
	switch (history_find(h, &c->input, c->target, c->select)) {
	case HISTORY_FAILED:
		return EXIT_UNREADABLE;
	case HISTORY_NO_SUCH_DUMP:
		return no_such_dump(c->path, c->select, h->dumps_in_trace,
				    h->damaged);
	case HISTORY_NOT_FOUND:
		return not_found(h);
	default:
		return report(h, c->format);
	}
}

static void free_history(struct history_command *c)
{
	history_free(&c->found);
	input_release(&c->input);
}

/* "[FILE] ID": the last operand is the id. */
static int operands(int argc, char **argv, struct history_command *h)
{
	int n = argc - optind;

	if (n < 1)
		return usage_error("history", "which id? Give it after FILE");
	if (n > 2)
		return usage_error("history", "FILE and ID, no more");
	if (parse_u64(argv[argc - 1], &h->target) < 0)
		return usage_error("history", "'%s' is not an object id "
				   "(decimal or 0x hex); the ID comes last",
				   argv[argc - 1]);
	h->path = n == 2 ? argv[optind] : DEFAULT_TRACE;
	return EXIT_DONE;
}

int cmd_history(int argc, char **argv)
{
	struct history_command h = {.select = -1};
	const struct cli_option options[] = {
		OPT_DUMP(&h.select, "only the object that had ID in dump N"),
		OPT_FORMAT(&h.format),
		OPT_FULL_NAMES(),
		OPT_HELP(),
		OPT_MAX_MEMORY(),
		OPT_HPROF_OOPS(&h.reader_options),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	status = operands(argc, argv, &h);
	if (status != EXIT_DONE)
		return status;
	status = run_history(&h);
	free_history(&h);
	return status;
}
