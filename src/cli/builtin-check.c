/*
 * builtin-check.c - `heaptrace check`: is this trace sound? Replays it
 * through the protocol state machine and reports every violation with its
 * event index and place, the damage the reader met, what the recorder
 * itself counted, and whether the index agrees with the events.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/escape.h"
#include "cli/output.h"
#include "cli/parse-options.h"
#include "util/alloc.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "check",
	.text = "usage: heaptrace check [--format text|yaml|json] [--max N] [FILE]\n"
		"\n"
		"Validates the file's format and the protocol of its events\n"
		"(heaptrace(5)). Exits 0 when the trace is clean, 1 when it found a\n"
		"problem, 3 when FILE cannot be read at all.\n",
};

struct found {
	uint64_t event;
	uint64_t offset, chunk_offset;
	unsigned line, column;
	enum ht_violation_code code;
	char detail[256];
};

struct check {
	const char *path;
	uint64_t max;
	uint64_t counts[HT_V_COUNT_];
	uint64_t total;
	struct found *found;
	size_t n_found, cap_found;
	struct progress *progress;
	struct ht_reader *reader;
	uint64_t events;
	bool out_of_memory;
};

static void on_violation(void *ctx, const struct ht_violation *v)
{
	struct check *c = ctx;
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

static int on_any_event(void *ctx, const struct ht_event *ev,
			const struct ht_replay_state *st)
{
	struct check *c = ctx;

	(void)ev;
	c->events = st->event_index + 1;
	progress_update(c->progress, c->events,
			ht_reader_position(c->reader).offset);
	return 0;
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
		       "(it was killed or crashed); every event was read by "
		       "scanning\n", esc_text(c->path));
	printf("%s: %s: %s, %s, %s, %s\n", esc_text(c->path),
	       clean ? "clean" : "NOT clean",
	       count_of(s->events, "event", "events", buf[0]),
	       count_of(s->dumps, "dump", "dumps", buf[1]),
	       count_of(s->gcs, "GC", "GCs", buf[2]),
	       count_of(c->total, "violation", "violations", buf[3]));
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
	out_bool(o, "clean", clean);
	out_u64(o, "events", s->events);
	out_u64(o, "dumps", s->dumps);
	out_u64(o, "gcs", s->gcs);
	out_u64(o, "violation_count", c->total);
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

int cmd_check(int argc, char **argv)
{
	struct ht_replay_callbacks cb = {.on_violation = on_violation};
	struct ht_reader_options reader_options = {0};
	struct check c = {.max = 1000};
	struct ht_replay_summary summary = {0};
	struct index_mismatch mismatch;
	const struct ht_index_info *ix;
	struct ht_error err;
	int format = FORMAT_TEXT, rc;
	bool clean;
	const struct cli_option options[] = {
		OPT_FORMAT(&format),
		OPT_CALLBACK('m', "max", "N", &c.max, parse_max,
			     "list at most N violations (default 1000; all are "
			     "counted)"),
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
	c.reader = open_trace(c.path, &reader_options);
	if (!c.reader)
		return EXIT_UNREADABLE;
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_any_event;
	c.progress = progress_start("check", c.path);
	rc = ht_replay(c.reader, &cb, &c, &summary, &err);
	progress_end(c.progress);
	if (c.out_of_memory || (rc != 0 && !summary.read_error)) {
		/* not the trace's fault: no report rather than a wrong one */
		error_msg("%s", c.out_of_memory ? "out of memory"
						 : err.message);
		free(c.found);
		ht_reader_close(c.reader);
		return EXIT_UNREADABLE;
	}
	ix = ht_reader_index(c.reader);
	compare_index(ix, &summary, &mismatch);
	clean = rc == 0 && c.total == 0 && !mismatch.any &&
		recorder_violations(ix) == 0 &&
		!(ix && ix->present && ix->dropped_events);
	if (format == FORMAT_TEXT)
		report_text(&c, &summary, ix, &mismatch,
			    rc ? err.message : NULL, clean);
	else
		report_structured(&c, &summary, ix, &mismatch,
				  rc ? err.message : NULL, clean,
				  (enum output_format)format);
	free(c.found);
	ht_reader_close(c.reader);
	return clean ? EXIT_DONE : EXIT_FINDING;
}
