/*
 * builtin-stats.c - `heaptrace stats`: the figures of a trace. Per dump:
 * objects, bytes, references, roots by container or kind, unreachable and
 * dangling, per class and per generation, and the ages (GCs survived) of
 * its objects. Per GC: what it collected, the blocks it moved or left in
 * place, and what that did to the objects tracked across GCs: moved,
 * survived in place, died, promoted, lost (relocation.h); when the trace
 * has times (format version 3), when each GC and dump happened, each
 * GC's pause, and a summary of the pauses.
 *
 * The figures are computed in analysis/stats.c; this drives and renders.
 * The input is read twice (a pipe is first copied to a temporary file,
 * analysis/session.c): stats_scan_gcs first gathers the GCs, counts the dumps and
 * runs the relocation tracker, then heap_scan builds the dumps' graphs one
 * at a time, and each dump's figures are written as soon as they are
 * known, so that a trace of thousands of dumps is not held in memory.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/levels.h"
#include "analysis/stats.h"
#include "util/humanize.h"
#include "util/membudget.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "stats",
	.text = "usage: heaptrace stats [--dump N] [--retained-by-class]\n"
		"                       [--format text|yaml|json] [FILE]\n"
		"\n"
		"Counts what each dump holds (objects, bytes, references, roots,\n"
		"unreachable objects, dangling references; per class, per generation;\n"
		"the GCs its objects survived) and what each GC did (generations,\n"
		"moved and surviving blocks; objects moved, survived in place, died,\n"
		"promoted, lost; its pause, when the trace has times).\n",
};

/* -n not given; the class rows text lists then */
#define LIMIT_UNSET UINT64_MAX
#define TEXT_CLASS_ROWS 20

struct stats {
	const char *path;
	struct input input;
	struct ht_reader_options reader_options;
	int format;
	int64_t select;        /* HEAP_ALL_DUMPS or --dump's */
	bool retained_by_class;
	enum heap_level level; /* of the unreachable and retained figures */
	uint64_t limit;        /* class rows per dump; 0: all */

	struct trace_stats trace; /* the GCs, the dumps' tracking */
	struct pause_summary pauses; /* when the trace has times */
	uint64_t dumps_written;
	bool damaged;
	struct ht_error err;   /* why collecting a dump failed */
	struct out *out;       /* yaml, json: the report being written */

	struct progress *progress;
	struct ht_reader *reader;
};

/* ---- dumps --------------------------------------------------------------- */

static void write_dump(struct stats *s, const struct dump_stats *ds);

/* heap_scan's callback: the figures of one dump, written at once; the
 * graph is let go. */
static int collect_dump(void *ctx, struct heap *h, bool *keep)
{
	struct stats *s = ctx;
	struct dump_stats ds;

	*keep = false;
	if (dump_stats_compute(&ds, h, s->retained_by_class, s->level,
			       &s->err) < 0)
		return 1;
	warn_dump_quality(s->path, h);
	write_dump(s, &ds);
	dump_stats_free(&ds);
	s->dumps_written++;
	return 0;
}

/* The second pass. EXIT_DONE, or the exit status once said why not. */
static int scan_dumps(struct stats *s)
{
	struct heap_scan_report report;
	struct ht_error err;
	struct ht_reader *r = input_open(&s->input);
	int rc;

	if (!r)
		return EXIT_UNREADABLE;
	rc = heap_scan(r, s->select, collect_dump, s, &report, &err);
	ht_reader_close(r);
	if (input_end_pass(&s->input) < 0)
		return EXIT_UNREADABLE;
	if (rc > 0 && s->err.code == HT_E_NOMEM && mem_budget_exceeded()) {
		analysis_failed(s->path, &s->err);
		return EXIT_UNREADABLE;
	}
	if (rc > 0) {
		error_msg("%s: dump %llu: %s", s->path,
			  (unsigned long long)s->dumps_written, s->err.message);
		return EXIT_UNREADABLE;
	}
	if (rc < 0 && !report.read_error) {
		error_msg("%s", err.message);
		return EXIT_UNREADABLE;
	}
	/* the first pass warned about damage, unless the file changed since */
	if (rc < 0 && !s->damaged) {
		s->damaged = true;
		warn_damage(&err);
	}
	return EXIT_DONE;
}

/* ---- GCs ----------------------------------------------------------------- */

static void show_progress(void *ctx, const struct ht_replay_state *st)
{
	struct stats *s = ctx;

	progress_update(s->progress, st->event_index + 1,
			ht_reader_position(s->reader).offset);
}

/*
 * Whether the first pass need not run the relocation tracker: the text
 * report shows what it learns only of a trace with GCs, and this one has
 * none, as its index says (or it is a heap dump). The tracker is the
 * pass's cost: on a dump of 10 million objects 800 MB and half its time.
 */
static bool tracking_unseen(const struct stats *s, struct ht_reader *r)
{
	return s->format == FORMAT_TEXT &&
	       (index_counts_no_gc(r) || reads_heap_dump(r));
}

/* One first pass, with the tracker unless may_skip and tracking_unseen
 * (*tracked says which). 0, 1 (damaged) or -1 as stats_scan_gcs; -2 when
 * the input did not open (said). */
static int scan_gcs_once(struct stats *s, bool may_skip, bool *tracked,
			 struct ht_error *err)
{
	int rc;

	s->reader = input_open(&s->input);
	if (!s->reader)
		return -2;
	*tracked = !(may_skip && tracking_unseen(s, s->reader));
	s->progress = progress_start("stats", s->path);
	rc = stats_scan_gcs(s->reader, &s->trace, *tracked, show_progress, s,
			    err);
	progress_end(s->progress);
	ht_reader_close(s->reader);
	s->reader = NULL;
	return rc;
}

/* The first pass: the GCs, and how many dumps there are. EXIT_DONE, or
 * the exit status once said why not. */
static int scan_gcs(struct stats *s)
{
	struct ht_error err;
	bool tracked;
	int rc;

	rc = scan_gcs_once(s, true, &tracked, &err);
	if (rc == -2)
		return EXIT_UNREADABLE;
	if (rc >= 0 && !tracked && s->trace.n_gcs) {
		/* the index said no GC, wrongly: again, with the tracker */
		if (input_end_pass(&s->input) < 0)
			return EXIT_UNREADABLE;
		trace_stats_free(&s->trace);
		rc = scan_gcs_once(s, false, &tracked, &err);
		if (rc == -2)
			return EXIT_UNREADABLE;
	}
	if (input_end_pass(&s->input) < 0)
		return EXIT_UNREADABLE;
	if (rc < 0) {
		error_msg("%s", err.message);
		return EXIT_UNREADABLE;
	}
	if (rc > 0) {
		s->damaged = true;
		warn_damage(&err);
	}
	return EXIT_DONE;
}

static const struct dump_tracking *tracking_of(const struct stats *s,
					       uint64_t dump)
{
	return trace_stats_tracking(&s->trace, dump);
}

/* ---- text ---------------------------------------------------------------- */

static void line(const char *label, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("  %-20s ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *root_slot_name(size_t slot)
{
	if (slot == STATS_NO_KIND_SLOT)
		return "root";
	if (slot >= STATS_KIND_SLOT(0))
		return ht_root_kind_name(
			(enum ht_root_kind)(slot - STATS_KIND_SLOT(0)));
	return slot ? ht_container_name((enum ht_container_type)slot)
		    : "container";
}

/* A slot's label in text: the runtime's words for a trace with fields
 * ("Java frame", "system class", "GC handle"), else the protocol's. */
static const char *root_slot_label(const struct dump_stats *ds, size_t slot)
{
	const char *words = NULL;

	if (ds->named_roots && slot == STATS_NO_KIND_SLOT)
		words = root_kind_words(0, HEAP_NO_KIND);
	else if (ds->named_roots && slot >= STATS_KIND_SLOT(0))
		words = root_kind_words(0, (unsigned)(slot - STATS_KIND_SLOT(0)));
	else if (ds->named_roots && slot)
		words = root_kind_words((unsigned)slot, HEAP_NO_KIND);
	return words ? words : root_slot_name(slot);
}

/* Whether an earlier slot has slot's label: its roots are counted there
 * (a Java frame's, interpreted or compiled). */
static bool label_printed(const struct dump_stats *ds, size_t slot)
{
	for (size_t i = 0; i < slot; i++)
		if (ds->root_count[i] && strcmp(root_slot_label(ds, i),
						root_slot_label(ds, slot)) == 0)
			return true;
	return false;
}

static void print_roots_text(const struct dump_stats *ds)
{
	char nulls[48] = "";

	if (ds->null_roots)
		snprintf(nulls, sizeof(nulls), ", besides %llu null",
			 (unsigned long long)ds->null_roots);
	if (ds->objects && !ds->roots && !ds->null_roots) {
		line("roots", "0: no roots were read (every object is "
		     "unreachable)");
		return;
	}
	line("roots", "%llu (%llu weak, %llu dangling)%s",
	     (unsigned long long)ds->roots, (unsigned long long)ds->weak_roots,
	     (unsigned long long)ds->dangling_roots, nulls);
	for (size_t slot = 0; slot < STATS_ROOT_SLOTS; slot++) {
		const char *name = root_slot_label(ds, slot);
		uint64_t count = 0, weak = 0;
		char label[40];

		if (!ds->root_count[slot] || label_printed(ds, slot))
			continue;
		for (size_t i = slot; i < STATS_ROOT_SLOTS; i++) {
			if (strcmp(root_slot_label(ds, i), name) == 0) {
				count += ds->root_count[i];
				weak += ds->root_weak[i];
			}
		}
		snprintf(label, sizeof(label), "  %s", name);
		if (weak)
			line(label, "%llu (%llu weak)",
			     (unsigned long long)count,
			     (unsigned long long)weak);
		else
			line(label, "%llu", (unsigned long long)count);
	}
}

/* How many of the dump's classes (biggest first) are listed: -n's. */
static size_t class_rows(const struct stats *s, const struct dump_stats *ds)
{
	return limit_shown(s->limit, ds->n_classes);
}

static void print_classes_text(const struct stats *s,
			       const struct dump_stats *ds)
{
	int w_count = 5, w_bytes = 5, w_ret = 8;
	char a[SIZE_TEXT], b[SIZE_TEXT];

	for (size_t i = 0; i < class_rows(s, ds); i++) {
		widen_number(&w_count, ds->classes[i].count);
		widen_size(&w_bytes, ds->classes[i].bytes);
		widen_size(&w_ret, ds->classes[i].retained);
	}
	putchar('\n');
	if (s->retained_by_class)
		printf("  %*s  %*s  %*s  CLASS\n", w_count, "COUNT", w_bytes,
		       "BYTES", w_ret, "RETAINED");
	else
		printf("  %*s  %*s  CLASS\n", w_count, "COUNT", w_bytes,
		       "BYTES");
	for (size_t i = 0; i < class_rows(s, ds); i++) {
		const struct class_row *c = &ds->classes[i];

		printf("  %*llu  %*s  ", w_count, (unsigned long long)c->count,
		       w_bytes, human_size(c->bytes, a));
		if (s->retained_by_class)
			printf("%*s  ", w_ret, human_size(c->retained, b));
		printf("%s\n", esc_name(c->name));
	}
	if (class_rows(s, ds) < ds->n_classes)
		printf("  (%zu more %s; -n 0 lists all)\n",
		       ds->n_classes - class_rows(s, ds),
		       ds->n_classes - class_rows(s, ds) == 1 ? "class"
							       : "classes");
}

static void print_generations_text(const struct dump_stats *ds)
{
	int w_count = 5, w_bytes = 5;
	char a[SIZE_TEXT], g[16];

	if (!ds->has_generations)
		return;
	for (size_t i = 0; i < STATS_GEN_SLOTS; i++) {
		widen_number(&w_count, ds->gen_count[i]);
		widen_size(&w_bytes, ds->gen_bytes[i]);
	}
	printf("\n  %-10s  %*s  %*s\n", "GENERATION", w_count, "COUNT",
	       w_bytes, "BYTES");
	for (size_t i = 0; i < STATS_GEN_SLOTS; i++)
		if (ds->gen_count[i])
			printf("  %-10s  %*llu  %*s\n",
			       generation_name((unsigned)i, g), w_count,
			       (unsigned long long)ds->gen_count[i], w_bytes,
			       human_size(ds->gen_bytes[i], a));
}

static void print_ages_text(const struct reloc_dump_summary *t)
{
	int w_age = 9, w_count = 5, w_bytes = 5;
	char a[SIZE_TEXT];

	if (!t->n_ages)
		return;
	for (size_t i = 0; i < t->n_ages; i++) {
		widen_number(&w_age, t->ages[i].gcs);
		widen_number(&w_count, t->ages[i].count);
		widen_size(&w_bytes, t->ages[i].bytes);
	}
	printf("\n  %-*s  %*s  %*s\n", w_age, "AGE (GCS)", w_count, "COUNT",
	       w_bytes, "BYTES");
	for (size_t i = 0; i < t->n_ages; i++)
		printf("  %-*llu  %*llu  %*s\n", w_age,
		       (unsigned long long)t->ages[i].gcs, w_count,
		       (unsigned long long)t->ages[i].count, w_bytes,
		       human_size(t->ages[i].bytes, a));
}

/* What the tracker learned from the dump: shown when the trace has GCs,
 * since without them every object is simply as old as the trace. */
static void print_dump_tracking_text(const struct stats *s,
				     const struct dump_stats *ds)
{
	const struct dump_tracking *d = tracking_of(s, ds->index);
	char a[SIZE_TEXT];

	if (!d || !s->trace.n_gcs)
		return;
	if (d->sum.new_objects)
		line("first seen", "%llu (tracked from here on)",
		     (unsigned long long)d->sum.new_objects);
	if (d->sum.died_objects)
		line("died before it", "%llu, %s (absent from this complete "
		     "dump)", (unsigned long long)d->sum.died_objects,
		     exact_size(d->sum.died_bytes, a));
	if (d->sum.lost_objects)
		line("lost", "%llu (it shows another object at their id)",
		     (unsigned long long)d->sum.lost_objects);
}

/* When a dump began, and how long it took, where the trace says. */
static void print_dump_time_text(const struct dump_times *t)
{
	char a[DURATION_TEXT], b[DURATION_TEXT];

	if (!t || !t->has_begin)
		return;
	if (t->has_end && t->end >= t->begin)
		line("time", "at %s, for %s", human_duration(t->begin, a),
		     human_duration(t->end - t->begin, b));
	else
		line("time", "at %s", human_duration(t->begin, a));
}

/* Whether some object is unreachable at the level the figures are
 * computed at but reachable at a weaker one: the unreachable line is then
 * broken down by level (print_levels_text). */
static bool has_weaker_levels(const struct dump_stats *ds)
{
	for (int l = (int)ds->level + 1; l < HEAP_LEVELS; l++)
		if (ds->level_count[l])
			return true;
	return false;
}

/* Unreachable at the level the figures are computed at, said when it is
 * not the default. */
static void print_unreachable_text(const struct dump_stats *ds)
{
	char a[SIZE_TEXT], label[32];

	if (ds->level == HEAP_LEVEL_DEFAULT)
		snprintf(label, sizeof(label), "unreachable");
	else
		snprintf(label, sizeof(label), "unreachable at %s",
			 heap_level_name(ds->level));
	line(label, "%llu, %s", (unsigned long long)ds->unreachable,
	     exact_size(ds->unreachable_bytes, a));
}

/* The unreachable objects by the strongest level weaker than the
 * figures' that reaches them ("softly reachable  7, 230 B"), then those
 * no level reaches. Nothing when no weaker level reaches any: the lines
 * would repeat the unreachable one. */
static void print_levels_text(const struct dump_stats *ds)
{
	char a[SIZE_TEXT], label[32];

	if (!has_weaker_levels(ds))
		return;
	for (int l = (int)ds->level + 1; l <= HEAP_LEVEL_UNREACHABLE; l++) {
		if (!ds->level_count[l] && l != HEAP_LEVEL_UNREACHABLE)
			continue;
		snprintf(label, sizeof(label), "  %s",
			 l == HEAP_LEVEL_UNREACHABLE ? "at no level"
			 : heap_level_reachable((enum heap_level)l));
		line(label, "%llu, %s", (unsigned long long)ds->level_count[l],
		     exact_size(ds->level_bytes[l], a));
	}
}

static void print_dump_text(const struct stats *s, const struct dump_stats *ds)
{
	const struct dump_tracking *d = tracking_of(s, ds->index);

	char a[SIZE_TEXT];

	printf("\ndump %llu: ", (unsigned long long)ds->index);
	if (ds->gc_dump)
		printf("references of GC %lld", (long long)ds->gc);
	else
		printf("heap dump");
	if (!ds->complete)
		printf(", incomplete (the trace ends inside it)");
	if (ds->aborted)
		printf(", aborted by the profiler");
	putchar('\n');
	print_dump_time_text(trace_stats_dump_times(&s->trace, ds->index));
	line("objects", "%llu, %s", (unsigned long long)ds->objects,
	     exact_size(ds->bytes, a));
	line("references", "%llu (%llu dangling)",
	     (unsigned long long)ds->references,
	     (unsigned long long)ds->dangling);
	print_roots_text(ds);
	print_unreachable_text(ds);
	if (ds->unreachable_classes)
		line("  class objects", "%llu, %s",
		     (unsigned long long)ds->unreachable_classes,
		     exact_size(ds->unreachable_class_bytes, a));
	/* lines that say nothing of an input that cannot have them are left
	 * out: levels need referents or weak roots, duplicates are damage */
	print_levels_text(ds);
	if (ds->duplicates)
		line("duplicates", "%llu",
		     (unsigned long long)ds->duplicates);
	print_dump_tracking_text(s, ds);
	if (ds->n_classes)
		print_classes_text(s, ds);
	print_generations_text(ds);
	if (d && s->trace.n_gcs)
		print_ages_text(&d->sum);
}

static void print_generation_list(uint32_t generations)
{
	const char *sep = "";
	char g[16];

	for (unsigned i = 0; i <= HT_GEN_MAX; i++) {
		if (generations & (1u << i)) {
			printf("%s%s", sep, generation_name(i, g));
			sep = ", ";
		}
	}
	if (!*sep)
		printf("none");
}

static void print_blocks(const char *label, uint64_t blocks, uint64_t bytes)
{
	char a[SIZE_TEXT], n[48];

	line(label, "%s, %s", count_of(blocks, "block", "blocks", n),
	     exact_size(bytes, a));
}

static void print_objects(const char *label, uint64_t objects,
			  uint64_t bytes)
{
	char a[SIZE_TEXT];

	line(label, "%llu, %s", (unsigned long long)objects,
	     exact_size(bytes, a));
}

static const char *bounds_source_text(enum reloc_bounds_source b)
{
	switch (b) {
	case RELOC_BOUNDS_START:
		return "recorded at its start";
	case RELOC_BOUNDS_BEFORE:
		return "the last recorded before it";
	default:
		return "none";
	}
}

/* What the GC did to the objects tracked across GCs; the rarer figures
 * only when they are not zero. */
static void print_gc_objects_text(const struct gc_stats *g)
{
	const struct reloc_gc_summary *o = &g->objects;

	if (!g->tracked)
		return;
	print_objects("moved objects", o->moved_objects, o->moved_bytes);
	print_objects("survived in place", o->survived_objects,
		      o->survived_bytes);
	print_objects("died", o->died_objects, o->died_bytes);
	print_objects("promoted", o->promoted_objects, o->promoted_bytes);
	if (o->kept_objects)
		print_objects("kept, unproven", o->kept_objects,
			      o->kept_bytes);
	if (o->untouched_objects)
		print_objects("not collected", o->untouched_objects,
			      o->untouched_bytes);
	if (o->lost_objects)
		print_objects("lost", o->lost_objects, o->lost_bytes);
	line("start bounds", "%s", bounds_source_text(o->bounds));
}

/* When a GC started and how long its pause was, where the trace says. */
static void print_gc_time_text(const struct gc_stats *g)
{
	char a[DURATION_TEXT], b[DURATION_TEXT];
	uint64_t pause;

	if (gc_pause(g, &pause))
		line("time", "at %s, paused %s", human_duration(g->start_time, a),
		     human_duration(pause, b));
	else if (g->has_start_time)
		line("time", "at %s", human_duration(g->start_time, a));
	else if (g->has_finish_time)
		line("time", "finished at %s",
		     human_duration(g->finish_time, a));
}

static void print_gc_text(const struct gc_stats *g)
{
	printf("\ngc %llu", (unsigned long long)g->index);
	if (g->has_gc)
		printf(" (the runtime's GC %llu)", (unsigned long long)g->gc);
	printf(": generations ");
	print_generation_list(g->generations);
	printf(", reason %s%s\n", ht_gc_reason_name(g->reason),
	       g->finished ? "" :
	       g->cut_off ? ", cut off (the process ended inside it; no "
			    "death counted)" :
	       ", unfinished (no gc_finished)");
	print_gc_time_text(g);
	print_blocks("moved", g->moved_blocks, g->moved_bytes);
	print_blocks("surviving", g->surviving_blocks, g->surviving_bytes);
	print_gc_objects_text(g);
	if (g->dump >= 0)
		line("references", "dump %lld", (long long)g->dump);
}

static void print_heading_text(const struct stats *s)
{
	char a[48], b[48];

	/* a trace without GCs (any HPROF) gets no GC line, "0 GCs" here
	 * included */
	printf("%s: %s", esc_text(s->path),
	       count_of(s->trace.dumps, "dump", "dumps", a));
	if (s->trace.n_gcs)
		printf(", %s", count_of(s->trace.n_gcs, "GC", "GCs", b));
	putchar('\n');
}

/* ---- yaml, json ---------------------------------------------------------- */

static void out_time(struct out *o, const char *key, bool known,
		     uint64_t ns);

static void out_root_groups(struct out *o, const struct dump_stats *ds)
{
	out_begin_array(o, "root_groups");
	for (size_t slot = 0; slot < STATS_ROOT_SLOTS; slot++) {
		if (!ds->root_count[slot])
			continue;
		out_begin_object(o, NULL);
		if (slot < STATS_KIND_SLOT(0))
			out_string(o, "container", root_slot_name(slot));
		else if (slot == STATS_NO_KIND_SLOT)
			out_null(o, "kind");
		else
			out_string(o, "kind", root_slot_name(slot));
		out_u64(o, "count", ds->root_count[slot]);
		out_u64(o, "weak", ds->root_weak[slot]);
		out_end_object(o);
	}
	out_end_array(o);
}

static void out_classes(struct out *o, const struct stats *s,
			const struct dump_stats *ds)
{
	out_begin_array(o, "classes");
	for (size_t i = 0; i < class_rows(s, ds); i++) {
		const struct class_row *c = &ds->classes[i];

		out_begin_object(o, NULL);
		out_string(o, "name", c->name);
		if (c->cls == HEAP_NO_CLASS)
			out_null(o, "class_id");
		else
			out_id(o, "class_id", c->id);
		out_u64(o, "count", c->count);
		out_u64(o, "bytes", c->bytes);
		if (s->retained_by_class)
			out_u64(o, "retained", c->retained);
		out_end_object(o);
	}
	out_end_array(o);
}

static void out_generations(struct out *o, const struct dump_stats *ds)
{
	out_begin_array(o, "generations");
	for (size_t i = 0; ds->has_generations && i < STATS_GEN_SLOTS; i++) {
		if (!ds->gen_count[i])
			continue;
		out_begin_object(o, NULL);
		if (i == STATS_UNKNOWN_GEN_SLOT)
			out_null(o, "generation");
		else
			out_u64(o, "generation", i);
		out_u64(o, "count", ds->gen_count[i]);
		out_u64(o, "bytes", ds->gen_bytes[i]);
		out_end_object(o);
	}
	out_end_array(o);
}

/* The tracker's figures of a dump; zeros when it saw none (the trace
 * ends inside the dump's GC, for one). */
static void out_dump_tracking(struct out *o, const struct dump_tracking *d)
{
	const struct reloc_dump_summary none = {0};
	const struct reloc_dump_summary *t = d ? &d->sum : &none;

	out_u64(o, "new_objects", t->new_objects);
	out_u64(o, "died_objects", t->died_objects);
	out_u64(o, "died_bytes", t->died_bytes);
	out_u64(o, "lost_objects", t->lost_objects);
	out_begin_array(o, "ages");
	for (size_t i = 0; i < t->n_ages; i++) {
		out_begin_object(o, NULL);
		out_u64(o, "gcs", t->ages[i].gcs);
		out_u64(o, "count", t->ages[i].count);
		out_u64(o, "bytes", t->ages[i].bytes);
		out_end_object(o);
	}
	out_end_array(o);
}

static void out_dump_times(struct out *o, const struct dump_times *t)
{
	out_time(o, "begin_time", t && t->has_begin, t ? t->begin : 0);
	out_time(o, "end_time", t && t->has_end, t ? t->end : 0);
}

/* Objects and bytes by the strongest level that reaches them. */
static void out_levels(struct out *o, const struct dump_stats *ds)
{
	if (ds->level != HEAP_LEVEL_DEFAULT || ds->has_levels)
		out_string(o, "level", heap_level_name(ds->level));
	if (!ds->has_levels)
		return;
	out_begin_object(o, "reachability");
	for (int l = HEAP_LEVEL_STRONG; l <= HEAP_LEVEL_UNREACHABLE; l++) {
		out_begin_object(o, heap_level_name((enum heap_level)l));
		out_u64(o, "objects", ds->level_count[l]);
		out_u64(o, "bytes", ds->level_bytes[l]);
		out_end_object(o);
	}
	out_end_object(o);
}

static void out_dump(struct out *o, const struct stats *s,
		     const struct dump_stats *ds)
{
	out_begin_object(o, NULL);
	out_u64(o, "index", ds->index);
	out_bool(o, "gc_dump", ds->gc_dump);
	if (ds->gc_dump)
		out_i64(o, "gc", ds->gc);
	else
		out_null(o, "gc");
	out_bool(o, "complete", ds->complete);
	out_bool(o, "aborted", ds->aborted);
	out_u64(o, "objects", ds->objects);
	out_u64(o, "bytes", ds->bytes);
	out_u64(o, "references", ds->references);
	out_u64(o, "dangling_references", ds->dangling);
	out_u64(o, "roots", ds->roots);
	out_u64(o, "weak_roots", ds->weak_roots);
	out_u64(o, "dangling_roots", ds->dangling_roots);
	out_u64(o, "null_roots", ds->null_roots);
	out_root_groups(o, ds);
	out_u64(o, "unreachable_objects", ds->unreachable);
	out_u64(o, "unreachable_bytes", ds->unreachable_bytes);
	out_u64(o, "unreachable_class_objects", ds->unreachable_classes);
	out_u64(o, "unreachable_class_bytes", ds->unreachable_class_bytes);
	out_u64(o, "weakly_reachable", ds->weakly_reachable);
	out_levels(o, ds);
	out_u64(o, "duplicates", ds->duplicates);
	out_classes(o, s, ds);
	out_generations(o, ds);
	out_dump_tracking(o, tracking_of(s, ds->index));
	if (s->trace.has_times)
		out_dump_times(o, trace_stats_dump_times(&s->trace, ds->index));
	out_end_object(o);
}

static void out_gc_objects(struct out *o, const struct reloc_gc_summary *t)
{
	out_u64(o, "moved_objects", t->moved_objects);
	out_u64(o, "moved_object_bytes", t->moved_bytes);
	out_u64(o, "survived_objects", t->survived_objects);
	out_u64(o, "survived_object_bytes", t->survived_bytes);
	out_u64(o, "died_objects", t->died_objects);
	out_u64(o, "died_object_bytes", t->died_bytes);
	out_u64(o, "promoted_objects", t->promoted_objects);
	out_u64(o, "promoted_object_bytes", t->promoted_bytes);
	out_u64(o, "kept_objects", t->kept_objects);
	out_u64(o, "kept_object_bytes", t->kept_bytes);
	out_u64(o, "untouched_objects", t->untouched_objects);
	out_u64(o, "untouched_object_bytes", t->untouched_bytes);
	out_u64(o, "lost_objects", t->lost_objects);
	out_u64(o, "lost_object_bytes", t->lost_bytes);
	if (t->bounds == RELOC_BOUNDS_START)
		out_string(o, "start_bounds", "start");
	else if (t->bounds == RELOC_BOUNDS_BEFORE)
		out_string(o, "start_bounds", "before");
	else
		out_null(o, "start_bounds");
}

/* Nanoseconds, or null when not known. */
static void out_time(struct out *o, const char *key, bool known, uint64_t ns)
{
	if (known)
		out_u64(o, key, ns);
	else
		out_null(o, key);
}

static void out_gc_times(struct out *o, const struct gc_stats *g)
{
	uint64_t pause = 0;
	bool paused = gc_pause(g, &pause);

	out_time(o, "start_time", g->has_start_time, g->start_time);
	out_time(o, "finish_time", g->has_finish_time, g->finish_time);
	out_time(o, "pause", paused, pause);
}

/* timed: the trace has times, so each GC says its own (or null); a trace
 * without them prints as it did before there were times */
static void out_gc(struct out *o, const struct gc_stats *g, bool timed)
{
	out_begin_object(o, NULL);
	out_u64(o, "index", g->index);
	if (g->has_gc)
		out_u64(o, "gc", g->gc);
	else
		out_null(o, "gc");
	out_begin_array(o, "generations");
	for (unsigned i = 0; i <= HT_GEN_MAX; i++)
		if (g->generations & (1u << i))
			out_u64(o, NULL, i);
	out_end_array(o);
	out_string(o, "reason", ht_gc_reason_name(g->reason));
	out_bool(o, "finished", g->finished);
	out_bool(o, "cut_off", g->cut_off);
	if (g->dump >= 0)
		out_i64(o, "dump", g->dump);
	else
		out_null(o, "dump");
	out_u64(o, "moved_blocks", g->moved_blocks);
	out_u64(o, "moved_bytes", g->moved_bytes);
	out_u64(o, "surviving_blocks", g->surviving_blocks);
	out_u64(o, "surviving_bytes", g->surviving_bytes);
	out_gc_objects(o, &g->objects);
	if (timed)
		out_gc_times(o, g);
	out_end_object(o);
}

/* ---- the report ---------------------------------------------------------- */

/* Everything before the first dump. -1 when out of memory. */
static int begin_report(struct stats *s)
{
	if (s->format == FORMAT_TEXT) {
		print_heading_text(s);
		return 0;
	}
	s->out = out_new(stdout, (enum output_format)s->format);
	if (!s->out)
		return -1;
	out_begin_object(s->out, NULL);
	out_string(s->out, "file", s->path);
	out_u64(s->out, "dump_count", s->trace.dumps);
	out_u64(s->out, "gc_count", s->trace.n_gcs);
	out_begin_array(s->out, "dumps");
	return 0;
}

static void write_dump(struct stats *s, const struct dump_stats *ds)
{
	if (s->format == FORMAT_TEXT)
		print_dump_text(s, ds);
	else
		out_dump(s->out, s, ds);
}

/* The pauses of the timed GCs: only when the trace has times. */
static void print_pauses_text(const struct pause_summary *p)
{
	char a[DURATION_TEXT], b[DURATION_TEXT], c[DURATION_TEXT];

	printf("\nGC pauses\n");
	line("timed GCs", "%llu", (unsigned long long)p->count);
	line("total", "%s (%.2f%% of the run)", human_duration(p->total, a),
	     p->share);
	if (p->count) {
		line("mean", "%s", human_duration(p->mean, a));
		line("p50, p99, max", "%s, %s, %s", human_duration(p->p50, a),
		     human_duration(p->p99, b), human_duration(p->max, c));
	}
	line("run", "%s (the trace's start to its last time)",
	     human_duration(p->run, a));
}

static void out_pauses(struct out *o, const struct pause_summary *p)
{
	out_begin_object(o, "pauses");
	out_u64(o, "count", p->count);
	out_u64(o, "total", p->total);
	out_u64(o, "mean", p->mean);
	out_u64(o, "p50", p->p50);
	out_u64(o, "p99", p->p99);
	out_u64(o, "max", p->max);
	out_u64(o, "run", p->run);
	out_double(o, "share", p->share);
	out_end_object(o);
}

static void print_totals_text(const struct stats *s)
{
	printf("\nobjects tracked across GCs: %llu; %llu still tracked at the "
	       "end, %llu died, %llu lost\n",
	       (unsigned long long)s->trace.totals.objects,
	       (unsigned long long)s->trace.totals.alive,
	       (unsigned long long)s->trace.totals.died,
	       (unsigned long long)s->trace.totals.lost);
}

/* The GCs, and the end. -1 when the report could not be written. */
static int end_report(struct stats *s)
{
	int rc;

	if (s->format == FORMAT_TEXT) {
		for (size_t i = 0; i < s->trace.n_gcs; i++)
			print_gc_text(&s->trace.gcs[i]);
		if (s->trace.n_gcs)
			print_totals_text(s);
		if (s->trace.has_times)
			print_pauses_text(&s->pauses);
		return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
	}
	out_end_array(s->out);
	out_begin_array(s->out, "gcs");
	for (size_t i = 0; i < s->trace.n_gcs; i++)
		out_gc(s->out, &s->trace.gcs[i], s->trace.has_times);
	out_end_array(s->out);
	out_begin_object(s->out, "tracking");
	out_u64(s->out, "objects", s->trace.totals.objects);
	out_u64(s->out, "alive_objects", s->trace.totals.alive);
	out_u64(s->out, "died_objects", s->trace.totals.died);
	out_u64(s->out, "lost_objects", s->trace.totals.lost);
	out_end_object(s->out);
	if (s->trace.has_times)
		out_pauses(s->out, &s->pauses);
	out_end_object(s->out);
	rc = out_finish(s->out);
	s->out = NULL;
	return rc;
}

/* ---- the command --------------------------------------------------------- */

static bool dump_exists(const struct stats *s)
{
	return s->select == HEAP_ALL_DUMPS ||
	       (uint64_t)s->select < s->trace.dumps;
}

static int run_stats(struct stats *s)
{
	int status;

	if (input_prepare(&s->input, s->path, &s->reader_options) < 0)
		return EXIT_UNREADABLE;
	status = scan_gcs(s);
	if (status == EXIT_DONE && !dump_exists(s))
		status = no_such_dump(s->path, s->select, s->trace.dumps,
				      s->damaged);
	if (status == EXIT_DONE && ((s->trace.has_times &&
				     stats_pause_summary(&s->trace,
							 &s->pauses) < 0) ||
				    begin_report(s) < 0)) {
		error_msg("out of memory");
		status = EXIT_UNREADABLE;
	}
	if (status == EXIT_DONE) {
		status = scan_dumps(s);
		/* what was written is ended, even after a failure */
		if (end_report(s) < 0 && status == EXIT_DONE) {
			error_msg("cannot write the report: %m");
			status = EXIT_UNREADABLE;
		}
	}
	if (status == EXIT_DONE)
		status = analysis_status(s->damaged);
	trace_stats_free(&s->trace);
	input_release(&s->input);
	return status;
}

int cmd_stats(int argc, char **argv)
{
	struct stats s = {.select = HEAP_ALL_DUMPS, .limit = LIMIT_UNSET};
	const struct cli_option options[] = {
		OPT_DUMP(&s.select, "only dump N (GCs are still all listed)"),
		OPT_NUMBER(&s.limit, "list each dump's N biggest classes (default:\n"
			   "20 in text, all in yaml and json; 0: all)"),
		OPT_BOOL('r', "retained-by-class", &s.retained_by_class,
			 "add each class's retained size: that of its\n"
			 "objects no object of the class dominates"),
		OPT_RETAINED(&s.level),
		OPT_FORMAT(&s.format),
		OPT_FULL_NAMES(),
		OPT_HELP(),
		OPT_MAX_MEMORY(),
		OPT_HPROF_OOPS(&s.reader_options),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	status = trace_operand("stats", argc, argv, &s.path);
	if (status != EXIT_DONE)
		return status;
	/* a reader sees the biggest classes; a program gets them all */
	if (s.limit == LIMIT_UNSET)
		s.limit = s.format == FORMAT_TEXT ? TEXT_CLASS_ROWS : 0;
	/* both passes inflate the next chunks on the second core: the events,
	 * the errors and the pass log are those of a read on one thread */
	s.reader_options.read_ahead = true;
	return run_stats(&s);
}
