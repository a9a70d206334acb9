/*
 * builtin-check.c - `heaptrace check`: is this trace sound? Replays it
 * through the protocol state machine and reports every violation with its
 * event index and place, the damage the reader met, what the recorder
 * itself counted, and whether the index agrees with the events. The
 * relocation tracker rides along and proves that the dumps show what its
 * rules predict (doc/design.md section 3, the relocation proof).
 *
 * This command computes, the exception among the commands, by what it
 * is: its answer is the list of what the replay met, collected here as
 * the reader's protocol checks (lib/read) and the tracker's proof
 * (analysis/relocation.h) report it, held back where the end of the
 * trace decides (an open GC or dump), and the index compared with the
 * counts the replay made. No other answer needs that list.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/class_names.h"
#include "analysis/relocation.h"
#include "util/alloc.h"
#include "util/membudget.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "check",
	.text = "usage: heaptrace check [--format text|yaml|json] [--max N]\n"
		"                       [--no-relocation] [--max-memory SIZE] [FILE]\n"
		"\n"
		"Validates the file's format and the protocol of its events\n"
		"(heaptrace(5)), and proves that its dumps show the objects where\n"
		"the relocation rules put them. Exits 0 when the trace is clean, 1\n"
		"when it found a problem, 3 when FILE cannot be read at all.\n",
};

/* This struct is not an API; it may change from one release to the next. */
struct found {
	uint64_t event;
	uint64_t offset, chunk_offset;
	unsigned line, column;
	enum ht_violation_code code;
	char detail[256];
};

/* This struct is not an API; it may change from one release to the next. */
struct check {
	const char *path;
	uint64_t max;
	uint64_t counts[HT_V_COUNT_];
	uint64_t total;
	struct found *found;
	size_t n_found, cap_found;
	bool proving;                /* not --no-relocation */
	struct reloc *tracker;       /* NULL: not proving, or nothing to
					prove (the index counts no GC) */
	uint64_t n_inconsistent;
	struct reloc_inconsistency *incons;
	size_t n_incons, cap_incons;
	struct class_names classes;  /* to name what the proof finds */
	struct progress *progress;
	struct ht_reader *reader;
	uint64_t events;
	bool out_of_memory;
	/* A GC or dump open at the end of the trace: a violation, unless the
	 * trace was cut off (cut_off_only) */
	struct ht_violation unfinished[2];
	size_t n_unfinished;
	bool cut_off;
	bool torn;  /* its last write torn (ht_loss.torn_tail) */
};

/* The violations of an open GC or dump at the end: held back until the
 * end of the trace says whether they are violations (cut_off_only). */
static bool holds_back(struct check *c, const struct ht_violation *v)
{
	if (v->code != HT_V_GC_UNFINISHED && v->code != HT_V_DUMP_UNFINISHED)
		return false;
	if (c->n_unfinished < ARRAY_SIZE(c->unfinished))
		c->unfinished[c->n_unfinished++] = *v;
	return true;
}

static void add_violation(struct check *c, const struct ht_violation *v)
{
	struct found *f;

	c->counts[v->code]++;
	c->total++;
	if (c->n_found >= c->max)
		return;
	if (ALLOC_GROW(c->found, c->n_found + 1, c->cap_found) < 0) {
		/* a list that lacks some would be a report that lies: the
		 * check fails instead */
		c->out_of_memory = true;
		return;
	}
	f = &c->found[c->n_found++];
	f->event = v->where.event_index;
	f->offset = v->where.offset;
	f->chunk_offset = v->where.chunk_offset;
	f->line = v->where.line;
	f->column = v->where.column;
	f->code = v->code;
	memcpy(f->detail, v->detail, sizeof(f->detail));
}

static void on_violation(void *ctx, const struct ht_violation *v)
{
	struct check *c = ctx;

	if (!holds_back(c, v))
		add_violation(c, v);
}

/*
 * Is the trace cut off: never closed (no index: its process was killed or
 * crashed), read up to where its writing stopped (ht_reader_cut_off), and
 * its only problem a GC or dump still open at that end, or a last write
 * torn by the process's end? The process ended there, which no recorder
 * can help: not a protocol violation. Otherwise the open GC or dump is
 * one, counted with the others.
 */
static void settle_unfinished(struct check *c, const struct ht_reader *r)
{
	c->torn = ht_reader_loss(r)->torn_tail;
	c->cut_off = (c->n_unfinished > 0 || c->torn) &&
		     ht_reader_cut_off(r) && c->total == 0 &&
		     c->n_inconsistent == 0;
	if (c->cut_off)
		return;
	for (size_t i = 0; i < c->n_unfinished; i++)
		add_violation(c, &c->unfinished[i]);
}

/* The tracker's word that the dumps contradict its rules. */
static void on_inconsistency(void *ctx, const struct reloc_inconsistency *x)
{
	struct check *c = ctx;

	c->n_inconsistent++;
	if (c->n_incons >= c->max)
		return;
	if (ALLOC_GROW(c->incons, c->n_incons + 1, c->cap_incons) < 0) {
		c->out_of_memory = true;
		return;
	}
	c->incons[c->n_incons++] = *x;
}

static int on_any_event(void *ctx, const struct ht_event *ev,
			const struct ht_replay_state *st)
{
	struct check *c = ctx;

	c->events = st->event_index + 1;
	progress_update(c->progress, c->events,
			ht_reader_position(c->reader).offset);
	if (!c->tracker)
		return 0;
	if (ev->type == HT_EV_CLASS &&
	    class_names_add(&c->classes, &ev->u.class_) < 0) {
		c->out_of_memory = true;
		return 1;
	}
	return reloc_on_event(c->tracker, ev, st);
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	struct check *c = ctx;

	return c->tracker ? reloc_on_dump_begin(c->tracker, st) : 0;
}

static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	struct check *c = ctx;

	return c->tracker ? reloc_on_dump_end(c->tracker, st) : 0;
}

/* ---- relocation inconsistencies ------------------------------------------ */

static const char *inconsistency_name(enum reloc_inconsistency_kind k)
{
	switch (k) {
	case RELOC_INCONSISTENT_DISPLACED:
		return "relocation-displaced";
	case RELOC_INCONSISTENT_MISSING:
		return "relocation-missing";
	default:
		return "relocation-dead-present";
	}
}

static const char *inconsistency_text(enum reloc_inconsistency_kind k)
{
	switch (k) {
	case RELOC_INCONSISTENT_DISPLACED:
		return "the dump shows another class or size where the "
		       "relocation rules put a live object";
	case RELOC_INCONSISTENT_MISSING:
		return "a complete dump lacks an object the relocation rules "
		       "prove alive";
	default:
		return "the GC's own dump shows an object where the GC proved "
		       "one dead and no moved block lands";
	}
}

/* "GC 3", or "no GC" (proven before any GC), into buf of 32 bytes. */
static const char *gc_text(int64_t gc, char *buf)
{
	if (gc < 0)
		return "no GC";
	snprintf(buf, 32, "GC %lld", (long long)gc);
	return buf;
}

/* One line: where, the rule, then what the rules said and the dump showed:
 * "F: event 40: relocation-displaced: ...: GC 1, dump 2: 0x10 -> 0x08,
 * App.Node (0x200), 16 bytes; found App.Leaf (0x300), 16 bytes". */
static void print_inconsistency(const struct check *c,
				const struct reloc_inconsistency *x)
{
	char g[32], a[24], b[24], k[24], name[CLASS_TEXT_SIZE];

	printf("%s: event %llu: %s: %s: %s, dump %lld: %s -> %s, %s (%s), "
	       "%llu bytes", esc_text(c->path),
	       (unsigned long long)x->event_index, inconsistency_name(x->kind),
	       inconsistency_text(x->kind), gc_text(x->gc, g),
	       (long long)x->dump, hex_id(x->old_id, a),
	       hex_id(x->predicted_id, b),
	       esc_text(class_names_text(&c->classes, x->class_id, name)),
	       hex_id(x->class_id, k), (unsigned long long)x->size);
	if (x->kind == RELOC_INCONSISTENT_MISSING) {
		printf("; not in the dump\n");
		return;
	}
	printf("; found %s (%s), %llu bytes\n",
	       esc_text(class_names_text(&c->classes, x->found_class, name)),
	       hex_id(x->found_class, k), (unsigned long long)x->found_size);
}

static void out_inconsistency(struct out *o, const struct check *c,
			      const struct reloc_inconsistency *x)
{
	char name[CLASS_TEXT_SIZE];

	out_begin_object(o, NULL);
	out_string(o, "rule", inconsistency_name(x->kind));
	out_string(o, "message", inconsistency_text(x->kind));
	out_u64(o, "event", x->event_index);
	if (x->gc < 0)
		out_null(o, "gc");
	else
		out_i64(o, "gc", x->gc);
	out_i64(o, "dump", x->dump);
	out_u64(o, "object", x->object);
	out_id(o, "old_id", x->old_id);
	out_id(o, "predicted_id", x->predicted_id);
	out_string(o, "class", class_names_text(&c->classes, x->class_id,
						 name));
	out_id(o, "class_id", x->class_id);
	out_u64(o, "size", x->size);
	if (x->kind == RELOC_INCONSISTENT_MISSING) {
		out_null(o, "found_class");
		out_null(o, "found_class_id");
		out_null(o, "found_size");
	} else {
		out_string(o, "found_class",
			   class_names_text(&c->classes, x->found_class, name));
		out_id(o, "found_class_id", x->found_class);
		out_u64(o, "found_size", x->found_size);
	}
	out_end_object(o);
}

/* "FILE:LINE:COL: event N" for text input, "FILE: event N at byte C+K"
 * for a .ht (K bytes into the uncompressed payload of the chunk at C). */
static void print_place(FILE *f, const char *path, const struct found *v)
{
	path = esc_text(path);
	if (v->line)
		fprintf(f, "%s:%u:%u: event %llu", path, v->line, v->column,
			(unsigned long long)v->event);
	else
		fprintf(f, "%s: event %llu at byte %llu+%llu", path,
			(unsigned long long)v->event,
			(unsigned long long)v->offset,
			(unsigned long long)v->chunk_offset);
}

/* This struct is not an API; it may change from one release to the next. */
struct index_mismatch {
	bool any;
	char text[3][160];
	int n;
};

static void compare_index(const struct ht_index_info *ix,
			  const struct ht_replay_summary *s,
			  struct index_mismatch *m)
{
	memset(m, 0, sizeof(*m));
	if (!ix || !ix->present)
		return;
	if (ix->events != s->events)
		snprintf(m->text[m->n++], sizeof(m->text[0]),
			 "the index counts %llu events, the trace has %llu",
			 (unsigned long long)ix->events,
			 (unsigned long long)s->events);
	if (ix->gcs != s->gcs)
		snprintf(m->text[m->n++], sizeof(m->text[0]),
			 "the index counts %llu GCs, the trace has %llu",
			 (unsigned long long)ix->gcs, (unsigned long long)s->gcs);
	m->any = m->n > 0;
}

static uint64_t recorder_violations(const struct ht_index_info *ix)
{
	uint64_t n = 0;

	if (!ix || !ix->present)
		return 0;
	for (int i = 0; i < HT_V_COUNT_; i++)
		n += ix->recorder_violations[i];
	return n;
}

static void report_text(const struct check *c, const struct ht_replay_summary *s,
			const struct ht_index_info *ix,
			const struct index_mismatch *m, const char *damage,
			bool clean)
{
	char buf[4][48];

	for (size_t i = 0; i < c->n_found; i++) {
		const struct found *v = &c->found[i];

		print_place(stdout, c->path, v);
		printf(": %s: %s", ht_violation_name(v->code),
		       ht_violation_text(v->code));
		if (v->detail[0])
			printf(": %s", esc_text(v->detail));
		putchar('\n');
	}
	if (c->total > c->n_found)
		printf("%s: ... and %llu more violations not listed (--max)\n",
		       esc_text(c->path), (unsigned long long)(c->total - c->n_found));
	for (size_t i = 0; i < c->n_incons; i++)
		print_inconsistency(c, &c->incons[i]);
	if (c->n_inconsistent > c->n_incons)
		printf("%s: ... and %llu more relocation inconsistencies not "
		       "listed (--max)\n", esc_text(c->path),
		       (unsigned long long)(c->n_inconsistent - c->n_incons));
	if (damage)
		printf("%s\n", esc_text(damage));
	for (int i = 0; i < m->n; i++)
		printf("%s: %s\n", esc_text(c->path), m->text[i]);
	if (ix && ix->present && ix->dropped_events)
		printf("%s: the recorder dropped %s (no thread slot free)\n",
		       esc_text(c->path), count_of(ix->dropped_events, "event", "events",
					 buf[0]));
	if (ix && ix->present)
		for (int i = 1; i < HT_V_COUNT_; i++)
			if (ix->recorder_violations[i])
				printf("%s: the recorder counted %s of %s\n",
				       esc_text(c->path),
				       count_of(ix->recorder_violations[i],
						"violation", "violations",
						buf[0]),
				       ht_violation_name((enum ht_violation_code)i));
	if (ix && !ix->present)
		printf("%s: no index: the recorder did not close this trace "
		       "(it was killed or crashed); every event %s read by "
		       "scanning\n", esc_text(c->path),
		       damage ? "before the damage was" : "was");
	if (c->cut_off && c->torn)
		printf("%s: cut off: its last write is torn: the process "
		       "ended while the recorder wrote it\n",
		       esc_text(c->path));
	for (size_t i = 0; c->cut_off && i < c->n_unfinished; i++)
		printf("%s: cut off: %s: the process ended inside it, before "
		       "the recorder closed the trace\n", esc_text(c->path),
		       esc_text(c->unfinished[i].detail));
	printf("%s: %s: %s, %s, %s, %s", esc_text(c->path),
	       !clean ? "NOT clean" : c->cut_off ? "cut off" : "clean",
	       count_of(s->events, "event", "events", buf[0]),
	       count_of(s->dumps, "dump", "dumps", buf[1]),
	       count_of(s->gcs, "GC", "GCs", buf[2]),
	       count_of(c->total, "violation", "violations", buf[3]));
	if (c->proving)
		printf(", relocation inconsistencies: %llu",
		       (unsigned long long)c->n_inconsistent);
	putchar('\n');
}

static int report_structured(const struct check *c,
			     const struct ht_replay_summary *s,
			     const struct ht_index_info *ix,
			     const struct index_mismatch *m, const char *damage,
			     bool clean, enum output_format format)
{
	struct out *o = out_new(stdout, format);

	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_string(o, "file", c->path);
	out_bool(o, "clean", clean && !c->cut_off);
	out_bool(o, "cut_off", c->cut_off);
	out_u64(o, "events", s->events);
	out_u64(o, "dumps", s->dumps);
	out_u64(o, "gcs", s->gcs);
	out_u64(o, "violation_count", c->total);
	out_bool(o, "relocation_checked", c->proving);
	out_u64(o, "relocation_inconsistency_count", c->n_inconsistent);
	out_begin_array(o, "violations");
	for (size_t i = 0; i < c->n_found; i++) {
		const struct found *v = &c->found[i];

		out_begin_object(o, NULL);
		out_u64(o, "event", v->event);
		if (v->line) {
			out_u64(o, "line", v->line);
			out_u64(o, "column", v->column);
		} else {
			out_u64(o, "offset", v->offset);
			out_u64(o, "chunk_offset", v->chunk_offset);
		}
		out_string(o, "rule", ht_violation_name(v->code));
		out_string(o, "message", ht_violation_text(v->code));
		out_string(o, "detail", v->detail);
		out_end_object(o);
	}
	out_end_array(o);
	out_begin_array(o, "relocation_inconsistencies");
	for (size_t i = 0; i < c->n_incons; i++)
		out_inconsistency(o, c, &c->incons[i]);
	out_end_array(o);
	out_begin_array(o, "cut_off_inside");
	for (size_t i = 0; c->cut_off && i < c->n_unfinished; i++)
		out_string(o, NULL, c->unfinished[i].detail);
	if (c->cut_off && c->torn)
		out_string(o, NULL, "its last write, torn by the process's end");
	out_end_array(o);
	out_string(o, "damage", damage);
	out_begin_array(o, "index_mismatches");
	for (int i = 0; i < m->n; i++)
		out_string(o, NULL, m->text[i]);
	out_end_array(o);
	if (ix) {
		out_bool(o, "indexed", ix->present);
		out_u64(o, "recorder_violations", recorder_violations(ix));
		out_u64(o, "dropped_events", ix->present ? ix->dropped_events : 0);
	}
	out_end_object(o);
	return out_finish(o);
}

static int parse_max(const char *cmd, const char *arg, void *max)
{
	if (parse_u64(arg, max) < 0)
		return usage_error(cmd, "--max takes a number");
	return EXIT_DONE;
}

/* The tracker, proving; 0, or -1 when out of memory. */
static int start_proof(struct check *c)
{
	const struct reloc_hooks hooks = {
		.ctx = c,
		.inconsistent = on_inconsistency,
	};
	c->proving = true;
	/* a trace that records no GC has nothing the proof can claim: no
	 * tracker, and no cost */
	if (index_counts_no_gc(c->reader))
		return 0;
	c->tracker = reloc_new(ht_reader_header(c->reader)->reports_survivors,
			       &hooks);
	if (!c->tracker)
		return -1;
	reloc_prove(c->tracker);
	return 0;
}

/* The end of the replay for the tracker: 0, or -1 once said why it
 * could not go on (the report would lack what it did not prove). */
static int finish_proof(struct check *c, int replay_rc,
			const struct ht_replay_summary *summary)
{
	if (!c->tracker)
		return 0;
	if ((replay_rc == 0 || (replay_rc < 0 && summary->read_error)) &&
	    reloc_finish(c->tracker) == 0)
		return 0;
	if (!*reloc_error(c->tracker))
		return 0; /* the replay stopped for a reason of its own */
	if (mem_budget_exceeded())
		error_msg("%s: %s", c->path, reloc_error(c->tracker));
	else
		error_msg("%s", reloc_error(c->tracker));
	return -1;
}

static void check_free(struct check *c)
{
	free(c->found);
	free(c->incons);
	class_names_free(&c->classes);
	reloc_free(c->tracker);
	ht_reader_close(c->reader);
}

int cmd_check(int argc, char **argv)
{
	struct ht_replay_callbacks cb = {
		.on_violation = on_violation,
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
	};
	struct ht_reader_options reader_options = {0};
	struct check c = {.max = 1000};
	struct ht_replay_summary summary = {0};
	struct index_mismatch mismatch;
	const struct ht_index_info *ix;
	struct ht_error err;
	int format = FORMAT_TEXT, rc;
	bool no_relocation = false;
	bool clean;
	const struct cli_option options[] = {
		OPT_FORMAT(&format),
		OPT_CALLBACK('m', "max", "N", &c.max, parse_max,
			     "list at most N violations and N relocation\n"
			     "inconsistencies (default 1000; all are counted)"),
		OPT_BOOL(0, "no-relocation", &no_relocation,
			 "skip the relocation proof (and the memory it\n"
			 "takes: about 100 bytes an object)"),
		OPT_MAX_MEMORY(),
		OPT_HELP(),
		OPT_HPROF_OOPS(&reader_options),
		OPT_END(),
	};

	rc = parse_options(argc, argv, &usage, options);
	if (rc != OPTIONS_PARSED)
		return rc;
	if (argc - optind > 1)
		return usage_error("check", "one FILE at most");
	c.path = optind < argc ? argv[optind] : DEFAULT_TRACE;
	set_input_budget(c.path);
	/* check only decodes: inflating on the second core halves its time */
	reader_options.read_ahead = true;
	c.reader = open_trace(c.path, &reader_options);
	if (!c.reader)
		return EXIT_UNREADABLE;
	if (!no_relocation && start_proof(&c) < 0) {
		error_msg("out of memory");
		check_free(&c);
		return EXIT_UNREADABLE;
	}
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_any_event;
	c.progress = progress_start("check", c.path);
	rc = ht_replay(c.reader, &cb, &c, &summary, &err);
	progress_end(c.progress);
	if (finish_proof(&c, rc, &summary) < 0) {
		check_free(&c);
		return EXIT_UNREADABLE;
	}
	if (c.out_of_memory || (rc != 0 && !summary.read_error)) {
		/* not the trace's fault: no report rather than a wrong one */
		error_msg("%s", c.out_of_memory ? "out of memory"
						 : err.message);
		check_free(&c);
		return EXIT_UNREADABLE;
	}
	ix = ht_reader_index(c.reader);
	settle_unfinished(&c, c.reader);
	compare_index(ix, &summary, &mismatch);
	class_names_sort(&c.classes);
	clean = (rc == 0 || c.cut_off) && c.total == 0 && c.n_inconsistent == 0 &&
		!mismatch.any &&
		recorder_violations(ix) == 0 &&
		!(ix && ix->present && ix->dropped_events);
	if (format == FORMAT_TEXT)
		report_text(&c, &summary, ix, &mismatch,
			    rc ? err.message : NULL, clean);
	else
		report_structured(&c, &summary, ix, &mismatch,
				  rc ? err.message : NULL, clean,
				  (enum output_format)format);
	check_free(&c);
	if (clean)
		return c.cut_off ? EXIT_CUT_OFF : EXIT_DONE;
	return EXIT_FINDING;
}
