/*
 * builtin-diff.c - `heaptrace diff`: what grew between two dumps of one
 * trace, or the last dumps of two traces: per class, the retainers that
 * grew most, the new objects that old ones retain; budgets (--fail-if)
 * that make it exit 1; text, yaml, json, or markdown for a pull request.
 *
 * One trace is read once for both graphs (a window keeps the last dumps
 * until the trace ends) and once more through the relocation tracker,
 * which matches the objects of the two dumps through their moves. Two
 * traces are loaded one after the other and matched by path (diff.h).
 *
 * This command still computes, an exception said here: the window of
 * dumps kept while the trace is read, and which two of them it compares
 * (choose_dumps), are in this file, since the dump session (session.h)
 * loads one dump and has no window of several yet. The figures, the
 * matching and the budgets' test are analysis's (diff.h) and budget.c's.
 */
#include "cli/budget.h"
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/diff.h"
#include "analysis/dominators.h"
#include "analysis/levels.h"
#include "util/alloc.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "diff",
	.text = "usage: heaptrace diff [--dump N [--dump M]] [-n N] [--fail-if EXPR]...\n"
		"                      [--format text|yaml|json|markdown] [A [B]]\n"
		"\n"
		"What grew from a dump A to a dump B: per class, count, self and\n"
		"retained bytes before and after; the retainers whose retained size\n"
		"grew most; the new objects that objects of A still in B retain.\n"
		"With one trace (default heaptrace.ht), the last two dumps or those\n"
		"given by --dump, objects matched through their moves; with two, the\n"
		"last dump of each, objects matched by their path from the roots.\n"
		"Exits 1 when a budget is broken.\n",
};

/* --format markdown is diff's own, beside output.h's formats. */
#define FORMAT_MARKDOWN (FORMAT_JSON + 1)
#define DEFAULT_LIMIT 10

struct side {
	const char *path;
	int64_t select;            /* HEAP_LAST_DUMP when not given */
	struct heap *heap;
	struct heap_dominators dom;
	bool has_dom;
};

struct check {
	struct budget budget;
	struct diff_value v;
	bool broken;
};

struct diff_cmd {
	struct ht_reader_options reader_options;
	int format;
	uint64_t limit;
	enum heap_level level;      /* of the dominators and root paths */
	size_t n_paths;
	size_t n_selects;
	struct side side[2];       /* A, B; B's heap may be A's */
	struct check *checks;
	size_t n_checks;
	bool damaged;
	uint32_t *a_of_b;
	struct diff d;
	/* only when a budget names a waste: figure (the dumps are then read
	 * with their values) */
	bool wants_waste;
	struct waste_totals waste[2];
	/* --sites, or a budget that names a site: figure: each side's sites
	 * (found by one more replay of its input, kept for it) and their
	 * changes */
	bool wants_sites;
	struct input input[2];      /* one trace: input[0] only */
	bool has_input[2];
	struct loaded_dump ld[2];   /* two traces, loaded keeping the input */
	bool has_ld[2];
	struct sites sites[2];
	struct site_change *changes;
	size_t n_changes;
};

/* ---- loading one trace -------------------------------------------------- */

/*
 * The dumps a scan of one trace keeps: the ones asked for by number, and
 * when the after dump is the last, the last three (the last may be
 * incomplete, and then the two before it are compared).
 */
struct window {
	int64_t want[2];
	struct heap *chosen[2];
	struct heap *last[3];
	size_t n_last;
	bool need_last;
};

static bool in_use(const struct window *w, const struct heap *h)
{
	if (w->chosen[0] == h || w->chosen[1] == h)
		return true;
	for (size_t i = 0; i < w->n_last; i++)
		if (w->last[i] == h)
			return true;
	return false;
}

#define SCAN_DONE 2 /* stops heap_scan: every dump asked for was seen */

static int keep_dumps(void *ctx, struct heap *h, bool *keep)
{
	struct window *w = ctx;
	bool wanted = false;

	for (int i = 0; i < 2; i++) {
		if (w->want[i] >= 0 && (uint64_t)w->want[i] == h->dump) {
			w->chosen[i] = h;
			wanted = true;
		}
	}
	if (w->need_last) {
		struct heap *out = w->n_last == 3 ? w->last[0] : NULL;

		if (out) {
			memmove(w->last, w->last + 1, 2 * sizeof(*w->last));
			w->n_last--;
		}
		w->last[w->n_last++] = h;
		wanted = true;
		if (out && !in_use(w, out))
			heap_free(out);
	}
	*keep = wanted;
	if (!w->need_last && (w->want[0] < 0 || w->chosen[0]) && w->chosen[1])
		return SCAN_DONE;
	return 0;
}

/* Frees what the window kept but the diff does not use. */
static void window_free(struct window *w, const struct diff_cmd *c)
{
	struct heap *all[5] = {w->chosen[0], w->chosen[1]};
	size_t n = 2;

	for (size_t i = 0; i < w->n_last; i++)
		all[n++] = w->last[i];
	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t k = 0; k < i; k++)
			seen |= all[k] == all[i];
		if (all[i] && !seen && all[i] != c->side[0].heap &&
		    all[i] != c->side[1].heap)
			heap_free(all[i]);
	}
}

/* The after dump by default: the last, or the one before it when the
 * trace ends inside the last and that one is complete. */
static struct heap *default_after(const struct window *w, const char *path,
				  size_t *at)
{
	struct heap *last = w->last[w->n_last - 1];

	*at = w->n_last - 1;
	if (!last->complete && w->n_last >= 2 &&
	    w->last[w->n_last - 2]->complete &&
	    (w->want[0] >= 0 || w->n_last == 3)) {
		warning_msg("%s: dump %" PRIu64 " is incomplete (the trace ends "
			    "inside it): analyzing dump %" PRIu64 ", the last "
			    "complete one", path, last->dump,
			    w->last[w->n_last - 2]->dump);
		(*at)--;
		return w->last[*at];
	}
	return last;
}

static int choose_dumps(struct diff_cmd *c, struct window *w,
			const struct heap_scan_report *rep)
{
	const char *path = c->side[0].path;
	size_t at;
	char buf[48];

	for (int i = 0; i < 2; i++)
		if (w->want[i] >= 0 && !w->chosen[i])
			return no_such_dump(path, w->want[i], rep->dumps,
					    c->damaged);
	if (!w->need_last) {
		c->side[0].heap = w->chosen[0];
		c->side[1].heap = w->chosen[1];
		return EXIT_DONE;
	}
	if (w->n_last == 0)
		return no_such_dump(path, HEAP_LAST_DUMP, rep->dumps,
				    c->damaged);
	c->side[1].heap = default_after(w, path, &at);
	if (w->want[0] >= 0) {
		c->side[0].heap = w->chosen[0];
	} else if (at == 0) {
		error_msg("%s has %s%s: diff compares two (give --dump twice, "
			  "or two traces)", path,
			  count_of(rep->dumps, "dump", "dumps", buf),
			  c->damaged ? " before the damage" : "");
		return c->damaged ? EXIT_UNREADABLE : EXIT_USAGE;
	} else {
		c->side[0].heap = w->last[at - 1];
	}
	return EXIT_DONE;
}

static int scan_trace(struct diff_cmd *c, struct input *in,
		      struct window *w, struct heap_scan_report *rep)
{
	struct ht_reader *r = input_open(in);
	struct ht_error err;
	int rc;

	if (!r)
		return EXIT_UNREADABLE;
	rc = heap_scan_with(r, HEAP_ALL_DUMPS, &(struct heap_scan_options){
				    .values = c->wants_waste},
			    keep_dumps, w, rep, &err);
	ht_reader_close(r);
	if (input_end_pass(in) < 0)
		return EXIT_UNREADABLE;
	if (rc != 0 && rc != SCAN_DONE && !rep->read_error) {
		error_msg("%s", err.message);
		return EXIT_UNREADABLE;
	}
	/* the damage can end the last dump asked for, whose delivery then
	 * stops the scan (SCAN_DONE): it is damage all the same */
	if (rep->read_error) {
		c->damaged = true;
		warn_damage(&err);
	}
	return EXIT_DONE;
}

static int match_by_identity(struct diff_cmd *c, struct input *in,
			     uint64_t events)
{
	struct ht_reader *r = input_open(in);
	struct ht_error err;
	int rc;

	if (!r)
		return EXIT_UNREADABLE;
	rc = diff_match_by_relocation(r, c->side[0].heap, c->side[1].heap,
				      events, &c->a_of_b, &err);
	ht_reader_close(r);
	if (input_end_pass(in) < 0)
		return EXIT_UNREADABLE;
	if (rc < 0) {
		error_msg("%s", err.message);
		return EXIT_UNREADABLE;
	}
	return EXIT_DONE;
}

static int load_one_trace(struct diff_cmd *c)
{
	struct window w = {
		.want = {c->side[0].select, c->side[1].select},
		.need_last = c->side[1].select == HEAP_LAST_DUMP,
	};
	struct heap_scan_report rep;
	struct input in;
	int status;

	if (input_prepare(&in, c->side[0].path, &c->reader_options) < 0)
		return EXIT_UNREADABLE;
	status = scan_trace(c, &in, &w, &rep);
	if (status == EXIT_DONE)
		status = choose_dumps(c, &w, &rep);
	if (status != EXIT_DONE)
		c->side[0].heap = c->side[1].heap = NULL;
	window_free(&w, c);
	if (status != EXIT_DONE) {
		input_release(&in);
		return status;
	}
	warn_dump_quality(c->side[0].path, c->side[0].heap);
	if (c->side[1].heap != c->side[0].heap)
		warn_dump_quality(c->side[0].path, c->side[1].heap);
	else
		warning_msg("%s: comparing dump %" PRIu64 " with itself",
			    c->side[0].path, c->side[0].heap->dump);
	status = match_by_identity(c, &in, rep.events);
	if (c->wants_sites) {
		c->input[0] = in;
		c->has_input[0] = true;
		return status;
	}
	input_release(&in);
	return status;
}

/* ---- loading two traces ------------------------------------------------- */

static int load_two_traces(struct diff_cmd *c)
{
	for (int i = 0; i < 2; i++) {
		struct loaded_dump ld;
		int status = c->wants_sites
			? load_dump_to_label(c->side[i].path,
					     &c->reader_options,
					     c->side[i].select, &ld)
			: load_dump(c->side[i].path, &c->reader_options,
				    c->side[i].select, &ld);

		if (status != EXIT_DONE)
			return status;
		c->side[i].heap = ld.heap;
		c->damaged |= ld.damaged;
		if (c->wants_sites) {
			/* the dump's graph is the side's, freed with it */
			c->ld[i] = ld;
			c->has_ld[i] = true;
		}
	}
	return EXIT_DONE;
}

static int dominators(struct diff_cmd *c)
{
	struct ht_error err;

	for (int i = 0; i < 2; i++) {
		struct side *s = &c->side[i];

		if (i == 1 && s->heap == c->side[0].heap)
			break; /* one dump against itself */
		if (heap_dominators_at(s->heap, c->level, &s->dom,
				       &err) < 0) {
			analysis_failed(s->path, &err);
			return EXIT_UNREADABLE;
		}
		s->has_dom = true;
	}
	return EXIT_DONE;
}

static const struct heap_dominators *dom_of(const struct diff_cmd *c, int i)
{
	return i == 1 && c->side[1].heap == c->side[0].heap ? &c->side[0].dom
							     : &c->side[i].dom;
}

/* ---- budgets ------------------------------------------------------------ */

/* The waste: figures of both dumps, when a budget names one: a dump
 * without values has none to give, and the budget cannot be checked. */
static int compute_waste(struct diff_cmd *c)
{
	for (int i = 0; c->wants_waste && i < 2; i++) {
		const struct side *s = &c->side[i];
		struct ht_error err;
		struct waste w;

		if (waste_compute(s->heap, &w, &err) < 0) {
			analysis_failed(s->path, &err);
			return EXIT_UNREADABLE;
		}
		if (!w.has_values) {
			error_msg("%s: dump %" PRIu64 " has no values (primitive "
				  "fields and array contents) to compare",
				  s->path, s->heap->dump);
			return EXIT_UNREADABLE;
		}
		waste_totals_of(&w, &c->waste[i]);
		waste_free(&w);
	}
	return EXIT_DONE;
}

/* The sites of both dumps, each by its allocating method (depth 1), and
 * their changes: when asked for (--sites) or a budget names a site. */
static int compute_sites(struct diff_cmd *c)
{
	for (int i = 0; c->wants_sites && i < 2; i++) {
		struct input *in = c->has_ld[i] ? &c->ld[i].in : &c->input[0];
		enum sites_result r;

		c->sites[i].depth = 1;
		r = sites_find(&c->sites[i], in, c->side[i].heap, dom_of(c, i));
		if (r == SITES_FAILED)
			return EXIT_UNREADABLE;
		c->damaged |= c->sites[i].damaged;
		if (r == SITES_NONE)
			return no_allocation_stacks(c->side[i].path,
						    c->damaged);
	}
	if (c->wants_sites && sites_compare(&c->sites[0], &c->sites[1],
					    &c->changes, &c->n_changes) < 0) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	return EXIT_DONE;
}

static void check_budgets(struct diff_cmd *c)
{
	for (size_t i = 0; i < c->n_checks; i++) {
		struct check *k = &c->checks[i];

		if (budget_needs_waste(&k->budget))
			budget_waste_figures(&k->budget, &c->waste[0],
					     &c->waste[1], &k->v);
		else if (budget_needs_sites(&k->budget)) {
			if (!budget_site_figures(&k->budget, c->changes,
						 c->n_changes, &k->v))
				warning_msg("budget '%s': neither dump has a "
					    "site allocating in '%s'",
					    k->budget.text, k->budget.name);
		} else if (!budget_figures(&k->budget, &c->d, &k->v))
			warning_msg("budget '%s': neither dump has a class "
				    "named '%s'", k->budget.text,
				    k->budget.name);
		k->broken = budget_broken(&k->budget, k->v);
	}
}

static size_t broken_count(const struct diff_cmd *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_checks; i++)
		n += c->checks[i].broken;
	return n;
}

static void say_broken(const struct diff_cmd *c)
{
	for (size_t i = 0; i < c->n_checks; i++) {
		const struct check *k = &c->checks[i];
		char figures[BUDGET_FIGURES_TEXT];

		if (k->broken)
			error_msg("budget broken: %s: %s", k->budget.text,
				  budget_figures_text(&k->budget, k->v,
						      figures));
	}
}

/* ---- words and numbers -------------------------------------------------- */

static bool is_changed(const struct diff_class *k)
{
	return diff_change(k->count) || diff_change(k->bytes) ||
	       diff_change(k->retained);
}

static size_t changed_classes(const struct diff *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n_classes; i++)
		n += is_changed(&d->classes[i]);
	return n;
}

static size_t shown(const struct diff_cmd *c, size_t available)
{
	return limit_shown(c->limit, available);
}

static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static const char *sign_of(int64_t v)
{
	return v > 0 ? "+" : v < 0 ? "-" : "";
}

/* "+3", "-3", "0" into buf (24). */
static const char *signed_count(int64_t v, char *buf)
{
	snprintf(buf, 24, "%s%" PRIu64, sign_of(v), magnitude(v));
	return buf;
}

/* The longest percentage, "+922337203685477580800.0%": a change is below
 * 2^63 (struct diff_value) and a figure that changed from is at least 1,
 * so |change| * 100 / before is at most 2^63 * 100 < 10^21, 21 digits;
 * then the sign, ".0%" and the NUL. (A fall is at most -100.0%.) */
#define PERCENT_TEXT (1 + 21 + 3 + 1)

/* "+25.0%", "new" (from 0), "" (no change) into buf (PERCENT_TEXT). */
static const char *percent(struct diff_value v, char *buf)
{
	if (v.before == v.after)
		buf[0] = '\0';
	else if (v.before)
		snprintf(buf, PERCENT_TEXT, "%+.1f%%", (double)diff_change(v) * 100.0 /
			 (double)v.before);
	else
		snprintf(buf, PERCENT_TEXT, "new");
	return buf;
}

static const char *id_text(const struct heap *h, uint32_t x, char *buf)
{
	return x == HEAP_NONE ? "new" : hex_id(heap_id(h, x), buf);
}

/* ---- text --------------------------------------------------------------- */

static void text_heading(const struct diff_cmd *c)
{
	const struct side *a = &c->side[0], *b = &c->side[1];

	if (c->n_paths == 2)
		printf("dump %" PRIu64 " of %s -> dump %" PRIu64 " of %s; "
		       "objects matched by their path from the roots\n",
		       a->heap->dump, esc_text(a->path), b->heap->dump,
		       esc_text(b->path));
	else
		printf("dump %" PRIu64 " -> dump %" PRIu64 " of %s; objects "
		       "matched through the relocation history\n",
		       a->heap->dump, b->heap->dump, esc_text(a->path));
	if (c->level != HEAP_LEVEL_DEFAULT)
		printf("retained sizes and paths at level %s\n",
		       heap_level_name(c->level));
}

/* The texts of total i (objects, bytes, retained): before, after, change;
 * each buffer SIZE_TEXT + 1 bytes. */
static void total_texts(int i, struct diff_value v, char *before, char *after,
			char *change)
{
	if (i == 0) {
		snprintf(before, SIZE_TEXT + 1, "%" PRIu64, v.before);
		snprintf(after, SIZE_TEXT + 1, "%" PRIu64, v.after);
		signed_count(diff_change(v), change);
	} else {
		human_size(v.before, before);
		human_size(v.after, after);
		signed_size(diff_change(v), change);
	}
}

static void text_totals(const struct diff *d)
{
	static const char *const names[] = {"objects", "bytes", "retained"};
	const struct diff_value v[] = {d->objects, d->bytes, d->retained};
	char x[SIZE_TEXT + 1], y[SIZE_TEXT + 1], z[SIZE_TEXT + 1];
	char p[PERCENT_TEXT];
	int w[3] = {6, 5, 6};

	for (int i = 0; i < 3; i++) {
		total_texts(i, v[i], x, y, z);
		widen(&w[0], (int)strlen(x));
		widen(&w[1], (int)strlen(y));
		widen(&w[2], (int)strlen(z));
	}
	printf("\n%-8s  %*s  %*s  %*s\n", "", w[0], "BEFORE", w[1], "AFTER",
	       w[2], "CHANGE");
	for (int i = 0; i < 3; i++) {
		total_texts(i, v[i], x, y, z);
		percent(v[i], p);
		printf("%-8s  %*s  %*s  %*s%s%s%s\n", names[i], w[0], x,
		       w[1], y, w[2], z, *p ? "  (" : "", p, *p ? ")" : "");
	}
}

static void text_classes(const struct diff_cmd *c)
{
	const struct diff *d = &c->d;
	size_t n = changed_classes(d), k = shown(c, n), row = 0;
	int w[6] = {5, 6, 5, 6, 8, 6};
	char a[SIZE_TEXT + 1], b[SIZE_TEXT + 1], e[SIZE_TEXT + 1];

	printf("\nclasses that changed, by bytes grown: %zu of %zu%s\n", k, n,
	       k ? " (figures after, and their change)" : "");
	if (!k)
		return;
	for (size_t i = 0; i < d->n_classes && row < k; i++) {
		const struct diff_class *x = &d->classes[i];

		if (!is_changed(x))
			continue;
		row++;
		signed_count(diff_change(x->count), a);
		signed_size(diff_change(x->bytes), b);
		signed_size(diff_change(x->retained), e);
		widen_number(&w[0], x->count.after);
		widen(&w[1], (int)strlen(a));
		widen_size(&w[2], x->bytes.after);
		widen(&w[3], (int)strlen(b));
		widen_size(&w[4], x->retained.after);
		widen(&w[5], (int)strlen(e));
	}
	printf("%*s  %*s  %*s  %*s  %*s  %*s  %s\n", w[0], "COUNT", w[1],
	       "CHANGE", w[2], "BYTES", w[3], "CHANGE", w[4], "RETAINED",
	       w[5], "CHANGE", "CLASS");
	row = 0;
	for (size_t i = 0; i < d->n_classes && row < k; i++) {
		const struct diff_class *x = &d->classes[i];
		char s1[SIZE_TEXT], s2[SIZE_TEXT];

		if (!is_changed(x))
			continue;
		row++;
		printf("%*" PRIu64 "  %*s  %*s  %*s  %*s  %*s  %s\n",
		       w[0], x->count.after,
		       w[1], signed_count(diff_change(x->count), a),
		       w[2], human_size(x->bytes.after, s1),
		       w[3], signed_size(diff_change(x->bytes), b),
		       w[4], human_size(x->retained.after, s2),
		       w[5], signed_size(diff_change(x->retained), e),
		       esc_name(x->name));
	}
}

/* "3" or "2 -> 3": objects of a path before and after. */
static const char *objects_text(struct diff_value v, char *buf)
{
	if (v.before == v.after)
		snprintf(buf, 48, "%" PRIu64, v.after);
	else
		snprintf(buf, 48, "%" PRIu64 " -> %" PRIu64, v.before, v.after);
	return buf;
}

static int text_retainers(const struct diff_cmd *c)
{
	const struct diff *d = &c->d;
	bool by_id = d->matching == DIFF_BY_ID;
	size_t k = shown(c, d->n_retainers);
	int w[4] = {8, 6, by_id ? 2 : 7, 6};
	char a[SIZE_TEXT + 1], b[48], e[24];

	printf("\nretainers that grew most: %zu of %zu\n", k, d->n_retainers);
	if (!k)
		return 0;
	for (size_t i = 0; i < k; i++) {
		const struct diff_retainer *r = &d->retainers[i];

		widen_size(&w[0], r->retained.after);
		signed_size(diff_change(r->retained), a);
		widen(&w[1], (int)strlen(a));
		widen(&w[2], (int)strlen(by_id ? hex_id(heap_id(d->b, r->after), b)
					 : objects_text(r->objects, b)));
		if (by_id)
			widen(&w[3], (int)strlen(id_text(d->a, r->before, e)));
	}
	if (by_id)
		printf("%*s  %*s  %-*s  %-*s  %s\n", w[0], "RETAINED", w[1],
		       "CHANGE", w[2], "ID", w[3], "BEFORE", "PATH");
	else
		printf("%*s  %*s  %*s  %s\n", w[0], "RETAINED", w[1], "CHANGE",
		       w[2], "OBJECTS", "PATH");
	for (size_t i = 0; i < k; i++) {
		const struct diff_retainer *r = &d->retainers[i];
		char s[SIZE_TEXT], *path = diff_path(d, true, r->after);

		if (!path)
			return -1;
		printf("%*s  %*s  ", w[0], human_size(r->retained.after, s),
		       w[1], signed_size(diff_change(r->retained), a));
		if (by_id)
			printf("%-*s  %-*s  ", w[2],
			       hex_id(heap_id(d->b, r->after), b), w[3],
			       id_text(d->a, r->before, e));
		else
			printf("%*s  ", w[2], objects_text(r->objects, b));
		printf("%s\n", esc_name(path));
		free(path);
	}
	return 0;
}

static int text_holders(const struct diff_cmd *c)
{
	const struct diff *d = &c->d;
	size_t k = shown(c, d->n_holders);
	int w[3] = {3, 9, 2};
	char s[SIZE_TEXT], t[SIZE_TEXT], id[24];

	printf("\nnew objects: %" PRIu64 ", %s (under no object of the dump "
	       "before: %" PRIu64 ", %s)\n", d->new_objects,
	       human_size(d->new_bytes, s), d->unheld_objects,
	       human_size(d->unheld_bytes, t));
	printf("objects of the dump before that retain new ones: %zu of %zu\n",
	       k, d->n_holders);
	if (!k)
		return 0;
	for (size_t i = 0; i < k; i++) {
		widen_number(&w[0], d->holders[i].new_objects);
		widen_size(&w[1], d->holders[i].new_bytes);
		widen_id(&w[2], heap_id(d->b, d->holders[i].after));
	}
	printf("%*s  %*s  %-*s  %s\n", w[0], "NEW", w[1], "NEW BYTES", w[2],
	       "ID", "PATH");
	for (size_t i = 0; i < k; i++) {
		const struct diff_holder *x = &d->holders[i];
		char *path = diff_path(d, true, x->after);

		if (!path)
			return -1;
		printf("%*" PRIu64 "  %*s  %-*s  %s\n", w[0], x->new_objects,
		       w[1], human_size(x->new_bytes, s), w[2],
		       hex_id(heap_id(d->b, x->after), id), esc_name(path));
		free(path);
	}
	return 0;
}

/* ---- sites (--sites) ----------------------------------------------------- */

static struct diff_value site_value(uint64_t before, uint64_t after)
{
	return (struct diff_value){before, after};
}

static bool site_changed(const struct site_change *x)
{
	return x->live_before != x->live_after ||
	       x->retained_before != x->retained_after ||
	       x->allocated_before != x->allocated_after;
}

static size_t changed_sites(const struct diff_cmd *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_changes; i++)
		n += site_changed(&c->changes[i]);
	return n;
}

/* A site by its allocating method, "Demo.Keep(Demo.cs)". */
static const char *site_name(const struct site_change *x, char *buf)
{
	if (x->unknown_stack)
		return "(a stack never declared)";
	if (!x->n_frames)
		return "(a stack of no frames)";
	return frame_text(x->frames[0].method, x->frames[0].id,
			  x->frames[0].file, x->frames[0].line, buf);
}

static bool sites_sampled(const struct diff_cmd *c)
{
	return c->sites[0].sampled || c->sites[1].sampled;
}

static void text_sites(const struct diff_cmd *c)
{
	size_t n = changed_sites(c), k = shown(c, n), row = 0;
	char a[SIZE_TEXT + 1], b[SIZE_TEXT + 1], e[SIZE_TEXT + 1];
	char name[FRAME_TEXT];
	int w[6] = {4, 6, 8, 6, 9, 6};

	if (!c->wants_sites)
		return;
	printf("\nallocation sites that changed, by live bytes grown: %zu of "
	       "%zu%s\n", k, n, sites_sampled(c) ? " (estimates: the stacks "
	       "were sampled)" : "");
	if (!k)
		return;
	for (size_t i = 0; i < c->n_changes && row < k; i++) {
		const struct site_change *x = &c->changes[i];

		if (!site_changed(x))
			continue;
		row++;
		widen_size(&w[0], x->live_after);
		widen(&w[1], (int)strlen(signed_size(
			diff_change(site_value(x->live_before, x->live_after)),
			a)));
		widen_size(&w[2], x->retained_after);
		widen(&w[3], (int)strlen(signed_size(diff_change(site_value(
			x->retained_before, x->retained_after)), b)));
		widen_size(&w[4], x->allocated_after);
		widen(&w[5], (int)strlen(signed_size(diff_change(site_value(
			x->allocated_before, x->allocated_after)), e)));
	}
	printf("%*s  %*s  %*s  %*s  %*s  %*s  %s\n", w[0], "LIVE", w[1],
	       "CHANGE", w[2], "RETAINED", w[3], "CHANGE", w[4], "ALLOCATED",
	       w[5], "CHANGE", "ALLOCATED BY");
	row = 0;
	for (size_t i = 0; i < c->n_changes && row < k; i++) {
		const struct site_change *x = &c->changes[i];
		char s1[SIZE_TEXT], s2[SIZE_TEXT], s3[SIZE_TEXT];

		if (!site_changed(x))
			continue;
		row++;
		printf("%*s  %*s  %*s  %*s  %*s  %*s  %s\n",
		       w[0], human_size(x->live_after, s1),
		       w[1], signed_size(diff_change(site_value(
			       x->live_before, x->live_after)), a),
		       w[2], human_size(x->retained_after, s2),
		       w[3], signed_size(diff_change(site_value(
			       x->retained_before, x->retained_after)), b),
		       w[4], human_size(x->allocated_after, s3),
		       w[5], signed_size(diff_change(site_value(
			       x->allocated_before, x->allocated_after)), e),
		       site_name(x, name));
	}
}

static int report_text(const struct diff_cmd *c)
{
	text_heading(c);
	text_totals(&c->d);
	text_classes(c);
	if (text_retainers(c) < 0 || text_holders(c) < 0)
		return -1;
	text_sites(c);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
}

/* ---- yaml and json ------------------------------------------------------ */

static void out_value(struct out *o, const char *key, struct diff_value v)
{
	out_begin_object(o, key);
	out_u64(o, "before", v.before);
	out_u64(o, "after", v.after);
	out_i64(o, "change", diff_change(v));
	out_end_object(o);
}

static void out_side(struct out *o, const char *key, const struct side *s)
{
	out_begin_object(o, key);
	out_string(o, "file", s->path);
	out_u64(o, "dump", s->heap->dump);
	out_end_object(o);
}

static void out_classes(struct out *o, const struct diff_cmd *c)
{
	size_t k = shown(c, changed_classes(&c->d)), row = 0;

	out_begin_array(o, "classes");
	for (size_t i = 0; i < c->d.n_classes && row < k; i++) {
		const struct diff_class *x = &c->d.classes[i];

		if (!is_changed(x))
			continue;
		row++;
		out_begin_object(o, NULL);
		out_string(o, "name", x->name);
		out_value(o, "count", x->count);
		out_value(o, "bytes", x->bytes);
		out_value(o, "retained", x->retained);
		out_end_object(o);
	}
	out_end_array(o);
}

static void out_before_id(struct out *o, const struct diff *d, uint32_t x)
{
	if (x == HEAP_NONE || d->matching != DIFF_BY_ID)
		out_null(o, "id_before");
	else
		out_id(o, "id_before", heap_id(d->a, x));
}

static int out_retainers(struct out *o, const struct diff_cmd *c)
{
	const struct diff *d = &c->d;
	char cls[NAME_TEXT];

	out_begin_array(o, "retainers");
	for (size_t i = 0; i < shown(c, d->n_retainers); i++) {
		const struct diff_retainer *r = &d->retainers[i];
		char *path = diff_path(d, true, r->after);

		if (!path)
			return -1;
		out_begin_object(o, NULL);
		out_string(o, "path", path);
		out_string(o, "class", object_class_text(d->b, r->after, cls));
		out_id(o, "id", heap_id(d->b, r->after));
		out_before_id(o, d, r->before);
		out_value(o, "objects", r->objects);
		out_value(o, "retained", r->retained);
		out_end_object(o);
		free(path);
	}
	out_end_array(o);
	return 0;
}

static int out_holders(struct out *o, const struct diff_cmd *c)
{
	const struct diff *d = &c->d;
	char cls[NAME_TEXT];

	out_u64(o, "new_objects", d->new_objects);
	out_u64(o, "new_bytes", d->new_bytes);
	out_u64(o, "new_unheld_objects", d->unheld_objects);
	out_u64(o, "new_unheld_bytes", d->unheld_bytes);
	out_begin_array(o, "long_lived");
	for (size_t i = 0; i < shown(c, d->n_holders); i++) {
		const struct diff_holder *x = &d->holders[i];
		char *path = diff_path(d, true, x->after);

		if (!path)
			return -1;
		out_begin_object(o, NULL);
		out_id(o, "id", heap_id(d->b, x->after));
		out_before_id(o, d, x->before);
		out_string(o, "class", object_class_text(d->b, x->after, cls));
		out_string(o, "path", path);
		out_u64(o, "new_objects", x->new_objects);
		out_u64(o, "new_bytes", x->new_bytes);
		out_end_object(o);
		free(path);
	}
	out_end_array(o);
	return 0;
}

static void out_budgets(struct out *o, const struct diff_cmd *c)
{
	out_begin_array(o, "budgets");
	for (size_t i = 0; i < c->n_checks; i++) {
		const struct check *k = &c->checks[i];

		out_begin_object(o, NULL);
		out_string(o, "expression", k->budget.text);
		out_string(o, "metric", budget_metric_name(k->budget.metric));
		out_u64(o, "before", k->v.before);
		out_u64(o, "after", k->v.after);
		out_i64(o, "change", diff_change(k->v));
		out_bool(o, "broken", k->broken);
		out_end_object(o);
	}
	out_end_array(o);
}

static void out_sites(struct out *o, const struct diff_cmd *c)
{
	size_t k = shown(c, changed_sites(c)), row = 0;

	if (!c->wants_sites)
		return;
	out_bool(o, "sites_estimated", sites_sampled(c));
	out_begin_array(o, "sites");
	for (size_t i = 0; i < c->n_changes && row < k; i++) {
		const struct site_change *x = &c->changes[i];

		if (!site_changed(x))
			continue;
		row++;
		out_begin_object(o, NULL);
		out_begin_array(o, "frames");
		for (size_t f = 0; f < x->n_frames; f++)
			out_stack_frame(o, x->frames[f].method, x->frames[f].id,
					x->frames[f].file, x->frames[f].line);
		out_end_array(o);
		out_value(o, "live", site_value(x->live_before, x->live_after));
		out_value(o, "live_objects", site_value(x->live_objects_before,
							x->live_objects_after));
		out_value(o, "retained", site_value(x->retained_before,
						    x->retained_after));
		out_value(o, "allocated", site_value(x->allocated_before,
						     x->allocated_after));
		out_end_object(o);
	}
	out_end_array(o);
}

static int report_structured(const struct diff_cmd *c)
{
	struct out *o = out_new(stdout, (enum output_format)c->format);
	int rc = 0;

	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_side(o, "before", &c->side[0]);
	out_side(o, "after", &c->side[1]);
	out_string(o, "matched_by",
		   c->d.matching == DIFF_BY_ID ? "id" : "path");
	if (c->level != HEAP_LEVEL_DEFAULT)
		out_string(o, "level", heap_level_name(c->level));
	out_begin_object(o, "total");
	out_value(o, "objects", c->d.objects);
	out_value(o, "bytes", c->d.bytes);
	out_value(o, "retained", c->d.retained);
	out_end_object(o);
	out_classes(o, c);
	if (out_retainers(o, c) < 0 || out_holders(o, c) < 0)
		rc = -1;
	out_sites(o, c);
	out_budgets(o, c);
	out_end_object(o);
	return out_finish(o) < 0 ? -1 : rc;
}

/* ---- markdown ----------------------------------------------------------- */

/* Text as code, in a GitHub-flavoured markdown table cell (escape.h),
 * class names folded for reading as in the text form. */
static void md_code(const char *s)
{
	esc_markdown_code(stdout, fold_name(s), true);
}

/* The same outside a table: a heading, a list item. */
static void md_code_inline(const char *s)
{
	esc_markdown_code(stdout, fold_name(s), false);
}

/* "358 B → 758 B (+400 B)", or one figure when it did not change. */
static void md_figure(struct diff_value v, bool bytes)
{
	char a[SIZE_TEXT + 1], b[SIZE_TEXT + 1], e[SIZE_TEXT + 1];

	if (bytes) {
		human_size(v.before, a);
		human_size(v.after, b);
		signed_size(diff_change(v), e);
	} else {
		snprintf(a, sizeof(a), "%" PRIu64, v.before);
		snprintf(b, sizeof(b), "%" PRIu64, v.after);
		signed_count(diff_change(v), e);
	}
	if (v.before == v.after)
		printf("%s", b);
	else
		printf("%s \xe2\x86\x92 %s (%s)", a, b, e);
}

static void md_heading(const struct diff_cmd *c)
{
	const struct side *a = &c->side[0], *b = &c->side[1];

	printf("### heaptrace diff\n\n");
	printf("Dump %" PRIu64 " of ", a->heap->dump);
	md_code_inline(a->path);
	printf(" \xe2\x86\x92 dump %" PRIu64 " of ", b->heap->dump);
	md_code_inline(b->path);
	printf(c->n_paths == 2 ? "; objects matched by their path from the "
				 "roots.\n"
			       : "; objects matched through the relocation "
				 "history.\n");
	if (c->level != HEAP_LEVEL_DEFAULT)
		printf("Retained sizes and paths at level %s.\n",
		       heap_level_name(c->level));
}

static void md_totals(const struct diff *d)
{
	static const char *const names[] = {"objects", "bytes", "retained"};
	const struct diff_value v[] = {d->objects, d->bytes, d->retained};
	char x[SIZE_TEXT + 1], y[SIZE_TEXT + 1], z[SIZE_TEXT + 1];
	char p[PERCENT_TEXT];

	printf("\n| | before | after | change |\n|:--|--:|--:|--:|\n");
	for (int i = 0; i < 3; i++) {
		total_texts(i, v[i], x, y, z);
		percent(v[i], p);
		printf("| %s | %s | %s | %s%s%s%s |\n", names[i], x, y, z,
		       *p ? " (" : "", p, *p ? ")" : "");
	}
}

static void md_classes(const struct diff_cmd *c)
{
	size_t n = changed_classes(&c->d), k = shown(c, n), row = 0;

	printf("\n#### Classes that changed, by bytes grown (%zu of %zu)\n",
	       k, n);
	if (!k)
		return;
	printf("\n| class | count | bytes | retained |\n|:--|--:|--:|--:|\n");
	for (size_t i = 0; i < c->d.n_classes && row < k; i++) {
		const struct diff_class *x = &c->d.classes[i];

		if (!is_changed(x))
			continue;
		row++;
		fputs("| ", stdout);
		md_code(x->name);
		fputs(" | ", stdout);
		md_figure(x->count, false);
		fputs(" | ", stdout);
		md_figure(x->bytes, true);
		fputs(" | ", stdout);
		md_figure(x->retained, true);
		fputs(" |\n", stdout);
	}
}

static int md_retainers(const struct diff_cmd *c)
{
	const struct diff *d = &c->d;
	bool by_id = d->matching == DIFF_BY_ID;
	size_t k = shown(c, d->n_retainers);
	char id[24], before[24];

	printf("\n#### Retainers that grew most (%zu of %zu)\n", k,
	       d->n_retainers);
	if (!k)
		return 0;
	printf(by_id ? "\n| retained | id | before | path |\n"
		       "|--:|:--|:--|:--|\n"
		     : "\n| retained | objects | path |\n|--:|--:|:--|\n");
	for (size_t i = 0; i < k; i++) {
		const struct diff_retainer *r = &d->retainers[i];
		char *path = diff_path(d, true, r->after);

		if (!path)
			return -1;
		fputs("| ", stdout);
		md_figure(r->retained, true);
		if (by_id)
			printf(" | %s | %s | ", hex_id(heap_id(d->b, r->after), id),
			       id_text(d->a, r->before, before));
		else {
			fputs(" | ", stdout);
			md_figure(r->objects, false);
			fputs(" | ", stdout);
		}
		md_code(path);
		fputs(" |\n", stdout);
		free(path);
	}
	return 0;
}

static int md_holders(const struct diff_cmd *c)
{
	const struct diff *d = &c->d;
	size_t k = shown(c, d->n_holders);
	char s[SIZE_TEXT], id[24];

	printf("\n#### New objects that objects of the dump before retain "
	       "(%zu of %zu)\n\n", k, d->n_holders);
	printf("%" PRIu64 " new objects, %s; %" PRIu64 " under no object of "
	       "the dump before.\n", d->new_objects,
	       human_size(d->new_bytes, s), d->unheld_objects);
	if (!k)
		return 0;
	printf("\n| new objects | new bytes | id | path |\n"
	       "|--:|--:|:--|:--|\n");
	for (size_t i = 0; i < k; i++) {
		const struct diff_holder *x = &d->holders[i];
		char *path = diff_path(d, true, x->after);

		if (!path)
			return -1;
		printf("| %" PRIu64 " | %s | %s | ", x->new_objects,
		       human_size(x->new_bytes, s),
		       hex_id(heap_id(d->b, x->after), id));
		md_code(path);
		fputs(" |\n", stdout);
		free(path);
	}
	return 0;
}

static void md_budgets(const struct diff_cmd *c)
{
	if (!c->n_checks)
		return;
	printf("\n#### Budgets: %zu of %zu broken\n\n", broken_count(c),
	       c->n_checks);
	for (size_t i = 0; i < c->n_checks; i++) {
		const struct check *k = &c->checks[i];
		char figures[BUDGET_FIGURES_TEXT];

		/* the expression as code, the figures after it as text */
		printf("- %s ", k->broken ? "**broken**" : "kept");
		md_code_inline(k->budget.text);
		printf(": %s\n", budget_figures_text(&k->budget, k->v,
						      figures));
	}
}

static void md_sites(const struct diff_cmd *c)
{
	size_t n = changed_sites(c), k = shown(c, n), row = 0;
	char name[FRAME_TEXT];

	if (!c->wants_sites)
		return;
	printf("\n#### Allocation sites that changed, by live bytes grown "
	       "(%zu of %zu)%s\n", k, n, sites_sampled(c) ?
	       ": estimates, the stacks were sampled" : "");
	if (!k)
		return;
	printf("\n| allocated by | live | retained | allocated |\n"
	       "|:--|--:|--:|--:|\n");
	for (size_t i = 0; i < c->n_changes && row < k; i++) {
		const struct site_change *x = &c->changes[i];

		if (!site_changed(x))
			continue;
		row++;
		fputs("| ", stdout);
		md_code(site_name(x, name));
		fputs(" | ", stdout);
		md_figure(site_value(x->live_before, x->live_after), true);
		fputs(" | ", stdout);
		md_figure(site_value(x->retained_before, x->retained_after),
			  true);
		fputs(" | ", stdout);
		md_figure(site_value(x->allocated_before, x->allocated_after),
			  true);
		fputs(" |\n", stdout);
	}
}

static int report_markdown(const struct diff_cmd *c)
{
	md_heading(c);
	md_totals(&c->d);
	md_classes(c);
	if (md_retainers(c) < 0 || md_holders(c) < 0)
		return -1;
	md_sites(c);
	md_budgets(c);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
}

/* ---- the command -------------------------------------------------------- */

static int report(const struct diff_cmd *c)
{
	switch (c->format) {
	case FORMAT_TEXT:
		return report_text(c);
	case FORMAT_MARKDOWN:
		return report_markdown(c);
	default:
		return report_structured(c);
	}
}

static void release(struct diff_cmd *c)
{
	diff_free(&c->d);
	free(c->a_of_b);
	free(c->changes);
	for (int i = 0; i < 2; i++) {
		sites_free(&c->sites[i]);
		if (c->side[i].has_dom)
			heap_dominators_free(&c->side[i].dom);
		if (c->has_ld[i])
			unload_dump(&c->ld[i]);
		else if (c->side[i].heap && !(i == 1 && c->side[1].heap ==
					      c->side[0].heap))
			heap_free(c->side[i].heap);
		if (c->has_input[i])
			input_release(&c->input[i]);
	}
	for (size_t i = 0; i < c->n_checks; i++)
		budget_free(&c->checks[i].budget);
	free(c->checks);
}

static int run_diff(struct diff_cmd *c)
{
	struct ht_error err;
	int status;

	for (size_t i = 0; i < c->n_checks; i++) {
		c->wants_waste |= budget_needs_waste(&c->checks[i].budget);
		c->wants_sites |= budget_needs_sites(&c->checks[i].budget);
	}
	/* an HPROF dump's reader gives values only when asked */
	c->reader_options.values = c->wants_waste;
	status = c->n_paths == 2 ? load_two_traces(c) : load_one_trace(c);
	if (status == EXIT_DONE)
		status = compute_waste(c);
	if (status == EXIT_DONE)
		status = dominators(c);
	if (status == EXIT_DONE)
		status = compute_sites(c);
	if (status != EXIT_DONE)
		return status;
	if (diff_compute(&c->d, c->side[0].heap, dom_of(c, 0), c->side[1].heap,
			 dom_of(c, 1), c->n_paths == 2 ? NULL : c->a_of_b,
			 &err) < 0) {
		analysis_failed(c->side[1].path, &err);
		return EXIT_UNREADABLE;
	}
	check_budgets(c);
	if (report(c) < 0) {
		error_msg("cannot write the report: %m");
		return EXIT_UNREADABLE;
	}
	say_broken(c);
	if (c->damaged)
		return EXIT_UNREADABLE;
	return broken_count(c) ? EXIT_FINDING : EXIT_DONE;
}

static int add_budget(const char *cmd, const char *text, void *diff)
{
	struct diff_cmd *c = diff;
	struct check *k;
	char why[512];
	int rc;

	/* one more: there are a few --fail-if at most */
	if (RESIZE_ARRAY(c->checks, c->n_checks + 1) < 0) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	k = c->checks;
	memset(&k[c->n_checks], 0, sizeof(*k));
	rc = budget_parse(text, &k[c->n_checks].budget, why, sizeof(why));
	if (rc == BUDGET_NO_MEMORY) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	if (rc < 0)
		return usage_error(cmd, "--fail-if '%s': %s", text, why);
	c->n_checks++;
	return EXIT_DONE;
}

static int parse_diff_format(const char *cmd, const char *arg, void *format)
{
	if (strcmp(arg, "markdown") == 0) {
		*(int *)format = FORMAT_MARKDOWN;
		return EXIT_DONE;
	}
	return parse_format_option(cmd, arg, format);
}

/* The first --dump is the dump before, the second the dump after. */
static int add_dump(const char *cmd, const char *arg, void *diff)
{
	struct diff_cmd *c = diff;

	if (c->n_selects == 2)
		return usage_error(cmd, "--dump twice at most: the dump "
				   "before, then after");
	return parse_dump_option(cmd, arg, &c->side[c->n_selects++].select);
}

static int parse_operands(struct diff_cmd *c, int argc, char **argv)
{
	c->n_paths = (size_t)(argc - optind);
	if (c->n_paths > 2)
		return usage_error("diff", "two traces at most: A and B");
	c->side[0].path = c->n_paths ? argv[optind] : DEFAULT_TRACE;
	c->side[1].path = c->n_paths == 2 ? argv[optind + 1] : c->side[0].path;
	if (c->n_paths == 2 && strcmp(c->side[0].path, "-") == 0 &&
	    strcmp(c->side[1].path, "-") == 0)
		return usage_error("diff", "only one trace can be standard "
				   "input");
	return EXIT_DONE;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cmd c = {
		.limit = DEFAULT_LIMIT,
		.side = {
			{.select = HEAP_LAST_DUMP},
			{.select = HEAP_LAST_DUMP},
		},
	};
	const struct cli_option options[] = {
		OPT_CALLBACK('d', "dump", "N", &c, add_dump,
			     "the dump before (first --dump) and after (second;\n"
			     "default: the last); with two traces, of A then B"),
		OPT_NUMBER(&c.limit,
			 "list N classes, retainers, and objects that\n"
			 "retain new ones (default 10; 0: all)"),
		OPT_CALLBACK('F', "fail-if", "EXPR", &c, add_budget,
			     "a budget, broken when EXPR holds (repeatable):\n"
			     "SUBJECT[.METRIC] OP VALUE, such as\n"
			     "'class:Foo.count>+10%', 'retained:Cache>50MB',\n"
			     "'total.bytes>+5%',\n"
			     "'waste:duplicate-strings>+10%',\n"
			     "'site:Demo.Keep.live>+10%' (man heaptrace,\n"
			     "Budgets)"),
		OPT_BOOL(0, "sites", &c.wants_sites,
			 "compare the allocation sites too, by allocating\n"
			 "method (traces recorded with --sites)"),
		OPT_RETAINED(&c.level),
		OPT_CALLBACK('f', "format", "FMT", &c.format, parse_diff_format,
			     "text (default), yaml, json or markdown"),
		OPT_FULL_NAMES(),
		OPT_HELP(),
		OPT_MAX_MEMORY(),
		OPT_HPROF_OOPS(&c.reader_options),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status == OPTIONS_PARSED) {
		status = parse_operands(&c, argc, argv);
		if (status == EXIT_DONE)
			status = run_diff(&c);
	}
	release(&c);
	return status;
}
