/*
 * builtin-history.c - `heaptrace history`: the lives of the objects that
 * have had an id: allocation or first sighting, each GC (moved, survived
 * in place, kept, promoted), the dumps that report it, and its death or
 * loss, by the relocation rules of doc/design.md section 3 (relocation.h).
 *
 * Ids are reused after compaction, so an id names no object by itself:
 * a first replay through the tracker finds the objects that held it at
 * some point (or held it in dump N), by their serial numbers; a second
 * replay watches those from their first event and collects every step of
 * their lives. A pipe is first copied to a temporary file
 * (analysis/session.c) so that it can be read twice. When the trace has
 * times (format version 3), the second replay also notes when each GC
 * started and each dump began, and a step a GC or dump caused is shown at
 * that time.
 *
 * This command still computes, the exception among the analysis
 * commands: the two replays, the holders and the time tables are here,
 * since their callbacks also drive the terminal's progress and say the
 * CLI's messages. Moving them to analysis (a history lookup beside
 * relocation.h, with the progress as a hook) is issue 27's work left.
 */
#include "cli/builtin.h"
#include "analysis/class_names.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/relocation.h"
#include "util/alloc.h"
#include "util/humanize.h"
#include "util/membudget.h"

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

struct history {
	const char *path;
	struct input input;
	struct ht_reader_options reader_options;
	int format;
	int64_t select;          /* a dump number, or -1: every holder */
	ht_id target;
	bool damaged;
	uint64_t dumps_in_trace;

	struct reloc *tracker;
	struct progress *progress;
	struct ht_reader *reader;
	bool collect;            /* the second replay: steps and names */

	uint32_t *holders;       /* serials of the objects asked for */
	size_t n_holders, cap_holders;
	struct reloc_step *steps;
	size_t n_steps, cap_steps;
	struct class_names classes;
	bool out_of_memory;

	/* the times of the second replay, NO_TIME where none was given */
	bool timed;              /* the trace has times */
	uint64_t *gc_times;      /* by GC number: its start */
	size_t n_gc_times, cap_gc_times;
	uint64_t *dump_times;    /* by dump number: its begin (a GC's
				    references: the GC's start) */
	size_t n_dump_times, cap_dump_times;
	/* the last GC as the tracker closed it, and the one the trace is cut
	 * off inside (never closed, its process ended there), -1 if none */
	struct reloc_gc_summary last_gc;
	bool any_gc;
	int64_t cut_off_gc;
};

#define NO_TIME UINT64_MAX

/* ---- times --------------------------------------------------------------- */

/* Sets times[at] (growing the table, NO_TIME between); -1 when out of
 * memory. */
static int set_time(uint64_t **times, size_t *n, size_t *cap, int64_t at,
		    uint64_t t)
{
	size_t i = (size_t)at;

	if (at < 0)
		return 0;
	if (i >= *n) {
		if (i >= SIZE_MAX / sizeof(**times) - 1 ||
		    ALLOC_GROW(*times, i + 1, *cap) < 0)
			return -1;
		while (*n <= i)
			(*times)[(*n)++] = NO_TIME;
	}
	(*times)[i] = t;
	return 0;
}

static uint64_t time_at(const uint64_t *times, size_t n, int64_t at)
{
	return at >= 0 && (size_t)at < n ? times[at] : NO_TIME;
}

/* The second replay's note of a GC's start or a dump's begin. */
static int note_time(struct history *h, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	if (!ev->has_time)
		return 0;
	h->timed = true;
	if (ev->type == HT_EV_GC_STARTED)
		return set_time(&h->gc_times, &h->n_gc_times, &h->cap_gc_times,
				st->gc, ev->time);
	if (ev->type == HT_EV_BEGIN_CONTAINER &&
	    ev->u.begin_container.type == HT_C_BEGIN)
		return set_time(&h->dump_times, &h->n_dump_times,
				&h->cap_dump_times, st->dump, ev->time);
	return 0;
}

/* When a step happened: its dump's begin, else its GC's start. */
static uint64_t step_time(const struct history *h, const struct reloc_step *s)
{
	if (s->kind == RELOC_END)
		return NO_TIME;
	if (s->dump >= 0)
		return time_at(h->dump_times, h->n_dump_times, s->dump);
	return time_at(h->gc_times, h->n_gc_times, s->gc);
}

/* ---- the replays --------------------------------------------------------- */

/* First replay: an object that holds the id (in dump N, with --dump). */
static void note_holder(void *ctx, const struct reloc_step *s)
{
	struct history *h = ctx;

	if (h->select >= 0 && !(s->kind == RELOC_SEEN && s->dump == h->select &&
				s->to == h->target))
		return;
	if (h->n_holders && h->holders[h->n_holders - 1] == s->object)
		return;
	if (ALLOC_GROW(h->holders, h->n_holders + 1, h->cap_holders) < 0) {
		h->out_of_memory = true;
		return;
	}
	h->holders[h->n_holders++] = s->object;
}

/* Second replay: every step of the watched objects. */
static void note_step(void *ctx, const struct reloc_step *s)
{
	struct history *h = ctx;

	if (ALLOC_GROW(h->steps, h->n_steps + 1, h->cap_steps) < 0) {
		h->out_of_memory = true;
		return;
	}
	h->steps[h->n_steps++] = *s;
}

static int on_event(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	struct history *h = ctx;

	progress_update(h->progress, st->event_index + 1,
			ht_reader_position(h->reader).offset);
	if (h->collect && ev->type == HT_EV_CLASS &&
	    class_names_add(&h->classes, &ev->u.class_) < 0) {
		h->out_of_memory = true;
		return 1;
	}
	if (h->collect && note_time(h, ev, st) < 0) {
		h->out_of_memory = true;
		return 1;
	}
	if (h->out_of_memory)
		return 1;
	return reloc_on_event(h->tracker, ev, st);
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	struct history *h = ctx;
	uint64_t t = time_at(h->gc_times, h->n_gc_times, st->gc);

	/* a GC's references happened in that GC */
	if (h->collect && st->gc_dump && t != NO_TIME &&
	    set_time(&h->dump_times, &h->n_dump_times, &h->cap_dump_times,
		     st->dump, t) < 0) {
		h->out_of_memory = true;
		return 1;
	}
	return reloc_on_dump_begin(h->tracker, st);
}

static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	return reloc_on_dump_end(((struct history *)ctx)->tracker, st);
}

static void note_gc(void *ctx, const struct reloc_gc_summary *g)
{
	struct history *h = ctx;

	h->last_gc = *g;
	h->any_gc = true;
}

/* The tracker of one replay: watching the id (first) or the holders. */
static struct reloc *new_tracker(struct history *h, bool reports_survivors)
{
	struct reloc_hooks hooks = {
		.ctx = h,
		.step = h->collect ? note_step : note_holder,
		.gc_done = note_gc,
	};
	struct reloc *t = reloc_new(reports_survivors, &hooks);

	if (!t)
		return NULL;
	if (!h->collect) {
		reloc_watch_id(t, h->target);
		return t;
	}
	for (size_t i = 0; i < h->n_holders; i++) {
		if (reloc_watch_object(t, h->holders[i]) < 0) {
			reloc_free(t);
			return NULL;
		}
	}
	return t;
}

/* One replay. EXIT_DONE, or the exit status once said why not. */
static int replay(struct history *h)
{
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
	};
	const struct ht_header *header;
	struct ht_replay_summary summary;
	struct ht_error err;
	int rc;

	h->reader = input_open(&h->input);
	if (!h->reader)
		return EXIT_UNREADABLE;
	header = ht_reader_header(h->reader);
	h->tracker = new_tracker(h, header->reports_survivors);
	if (!h->tracker) {
		ht_reader_close(h->reader);
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_event;
	h->progress = progress_start("history", h->path);
	rc = ht_replay(h->reader, &cb, h, &summary, &err);
	if (rc == 0 || (rc < 0 && summary.read_error))
		rc = reloc_finish(h->tracker) ? 1 : rc;
	progress_end(h->progress);
	h->cut_off_gc = (rc == 0 || (rc < 0 && summary.read_error)) &&
			h->any_gc && !h->last_gc.finished &&
			ht_reader_cut_off(h->reader) ? h->last_gc.gc : -1;
	ht_reader_close(h->reader);
	h->reader = NULL;
	h->dumps_in_trace = summary.dumps;
	if (input_end_pass(&h->input) < 0) {
		rc = EXIT_UNREADABLE;
	} else if (rc > 0 && mem_budget_exceeded()) {
		error_msg("%s: %s", h->path, reloc_error(h->tracker));
		rc = EXIT_UNREADABLE;
	} else if (rc > 0 || h->out_of_memory) {
		error_msg("%s", h->out_of_memory ? "out of memory"
						 : reloc_error(h->tracker));
		rc = EXIT_UNREADABLE;
	} else if (rc < 0 && !summary.read_error) {
		error_msg("%s", err.message);
		rc = EXIT_UNREADABLE;
	} else {
		if (rc < 0 && !h->damaged) {
			h->damaged = true;
			warn_damage(&err);
		}
		rc = EXIT_DONE;
	}
	reloc_free(h->tracker);
	h->tracker = NULL;
	return rc;
}

static int compare_serials(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void unique_holders(struct history *h)
{
	size_t n = 0;

	if (!h->n_holders)
		return;
	qsort(h->holders, h->n_holders, sizeof(*h->holders), compare_serials);
	for (size_t i = 0; i < h->n_holders; i++)
		if (!n || h->holders[i] != h->holders[n - 1])
			h->holders[n++] = h->holders[i];
	h->n_holders = n;
}

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

/* One object's steps are steps[first..] with its serial; its last step
 * says what became of it and the most the trace told of it. */
struct life {
	uint32_t object;
	const struct reloc_step *last;
};

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

/* The objects asked for, in serial order, with their last steps. */
static struct life *lives_of(const struct history *h, size_t *n)
{
	struct life *l = calloc(h->n_holders ? h->n_holders : 1, sizeof(*l));

	if (!l)
		return NULL;
	for (size_t i = 0; i < h->n_holders; i++)
		l[i].object = h->holders[i];
	for (size_t k = 0; k < h->n_steps; k++) {
		const struct reloc_step *s = &h->steps[k];
		uint32_t *at = bsearch(&s->object, h->holders, h->n_holders,
				       sizeof(*h->holders), compare_serials);

		if (at)
			l[at - h->holders].last = s;
	}
	*n = h->n_holders;
	return l;
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
		       esc_text(class_text(h, s->other_class, cls)),
		       human_size(s->other_size, size), s->other);
		break;
	default:
		printf("lost: object %u is at %s after this GC; its fate is "
		       "unknown\n", s->other, id);
		break;
	}
}

static void print_step(const struct history *h, const struct reloc_step *s)
{
	char when[32], a[24], b[24], g[48], g2[16], g3[16], t[DURATION_TEXT];
	uint64_t at = step_time(h, s);

	printf("  %-10s ", when_text(s, when));
	if (h->timed)
		printf("%-11s ", at == NO_TIME ? "" : human_duration(at, t));
	generation_suffix(s->generation, g, sizeof(g));
	switch (s->kind) {
	case RELOC_ALLOCATED:
		printf("allocated at %s%s\n", hex_id(s->to, a), g);
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

static void print_object_text(const struct history *h, const struct life *l)
{
	char cls[CLASS_TEXT_SIZE], size[SIZE_TEXT], cid[24];
	const struct reloc_step *last = l->last;

	printf("\nobject %u: ", l->object);
	if (last && class_name(h, last->class_id))
		printf("%s (%s)", esc_text(class_text(h, last->class_id, cls)),
		       hex_id(last->class_id, cid));
	else
		printf("class %s",
		       last ? esc_text(class_text(h, last->class_id, cls))
			    : "?");
	if (last && last->size)
		printf(", %s", exact_size(last->size, size));
	printf("\n");
	for (size_t k = 0; k < h->n_steps; k++)
		if (h->steps[k].object == l->object)
			print_step(h, &h->steps[k]);
}

static int report_text(const struct history *h, const struct life *l,
		       size_t n)
{
	char id[24], count[48];

	printf("%s: %s had id %s", esc_text(h->path),
	       count_of(n, "object", "objects", count), hex_id(h->target, id));
	if (h->select >= 0)
		printf(" in dump %lld", (long long)h->select);
	printf("\n");
	if (h->cut_off_gc >= 0)
		printf("%s: cut off inside gc %lld: the process ended there; "
		       "the ends below are as of then, and that GC proves no "
		       "death\n", esc_text(h->path), (long long)h->cut_off_gc);
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
		       const struct life *l)
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

static void out_step(struct out *o, const struct history *h,
		     const struct reloc_step *s)
{
	uint64_t at = step_time(h, s);

	out_begin_object(o, NULL);
	out_u64(o, "object", s->object);
	out_string(o, "event", event_name(s));
	out_u64(o, "event_index", s->event_index);
	out_number_or_null(o, "gc", s->gc);
	out_number_or_null(o, "dump", s->dump);
	if (h->timed && at != NO_TIME)
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
	out_end_object(o);
}

static int report_structured(const struct history *h, const struct life *l,
			     size_t n)
{
	struct out *o = out_new(stdout, (enum output_format)h->format);

	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_string(o, "file", h->path);
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
		error_msg("%s: dump %lld has no object %s%s", h->path,
			  (long long)h->select, hex_id(h->target, id), before);
	else
		error_msg("%s: no object has had id %s%s", h->path,
			  hex_id(h->target, id), before);
	return h->damaged ? EXIT_UNREADABLE : EXIT_FINDING;
}

static int report(struct history *h)
{
	struct life *l;
	size_t n;
	int rc;

	class_names_sort(&h->classes);
	l = lives_of(h, &n);
	if (!l) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	rc = h->format == FORMAT_TEXT ? report_text(h, l, n)
				      : report_structured(h, l, n);
	free(l);
	if (rc < 0) {
		error_msg("cannot write the report: %m");
		return EXIT_UNREADABLE;
	}
	return analysis_status(h->damaged);
}

static int run_history(struct history *h)
{
	int status;

	if (input_prepare(&h->input, h->path, &h->reader_options) < 0)
		return EXIT_UNREADABLE;
	status = replay(h);
	if (status != EXIT_DONE)
		return status;
	if (h->select >= 0 && (uint64_t)h->select >= h->dumps_in_trace)
		return no_such_dump(h->path, h->select, h->dumps_in_trace,
				    h->damaged);
	unique_holders(h);
	if (!h->n_holders)
		return not_found(h);
	h->collect = true;
	status = replay(h);
	if (status != EXIT_DONE)
		return status;
	return report(h);
}

static void free_history(struct history *h)
{
	class_names_free(&h->classes);
	free(h->holders);
	free(h->steps);
	free(h->gc_times);
	free(h->dump_times);
	input_release(&h->input);
}

/* "[FILE] ID": the last operand is the id. */
static int operands(int argc, char **argv, struct history *h)
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
	struct history h = {.select = -1};
	const struct cli_option options[] = {
		OPT_DUMP(&h.select, "only the object that had ID in dump N"),
		OPT_FORMAT(&h.format),
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
