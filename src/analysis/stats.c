/*
 * stats.c - the figures of dumps and GCs (stats.h): per class, per dump
 * from its graph, and per GC from one replay that runs the relocation
 * tracker alongside.
 *
 * heap_scan replays a trace without showing its GC events, so the GCs
 * come from a replay of their own: a caller reads the trace twice, the
 * GCs first, then the dumps one at a time.
 */
#include "analysis/dominators.h"
#include "analysis/levels.h"
#include "analysis/reach.h"
#include "analysis/stats.h"

#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/membudget.h"
#include "util/saturating.h"

#include <stdlib.h>
#include <string.h>

/* ---- the class table ----------------------------------------------------- */

/* Names are copied: stats keeps the table after the graph is gone. */
static int name_row(const struct heap *h, struct class_row *row,
		    uint32_t object)
{
	char buf[64];

	row->cls = h->cls[object];
	row->id = row->cls < h->n_classes ? h->classes[row->cls].id : 0;
	row->name = strdup(heap_class_name(h, object, buf));
	return row->name ? 0 : -1;
}

/* Each slot's retained size, one class slot being one class here. */
static int add_class_retained(const struct heap *h,
			      const struct heap_dominators *d,
			      struct class_row *slots, size_t n_slots)
{
	uint64_t *retained = calloc(n_slots, sizeof(*retained));

	if (!retained ||
	    heap_retained_by_class(h, d, NULL, n_slots, retained) < 0) {
		free(retained);
		return -1;
	}
	for (size_t s = 0; s < n_slots; s++)
		slots[s].retained = retained[s];
	free(retained);
	return 0;
}

/* qsort takes no context: the order of the sort in progress */
static enum class_order sort_order;

static uint64_t order_key(const struct class_row *r)
{
	switch (sort_order) {
	case CLASS_BY_RETAINED:
		return r->retained;
	case CLASS_BY_COUNT:
		return r->count;
	case CLASS_BY_BYTES:
		break;
	}
	return r->bytes;
}

static int compare_rows(const void *a, const void *b)
{
	const struct class_row *x = a, *y = b;
	uint64_t kx = order_key(x), ky = order_key(y);
	int c;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

int class_table(const struct heap *h, const struct heap_dominators *d,
		enum class_order order, struct class_row **rows, size_t *n)
{
	size_t n_slots = h->n_classes + 1, used = 0;
	struct class_row *slots = calloc(n_slots, sizeof(*slots));

	*rows = NULL;
	*n = 0;
	if (!slots)
		return -1;
	for (uint32_t i = 0; i < h->n; i++) {
		struct class_row *row = &slots[heap_class_slot(h, i)];

		if (row->count++ == 0 && name_row(h, row, i) < 0)
			goto fail;
		row->bytes += heap_size(h, i);
	}
	if (d && add_class_retained(h, d, slots, n_slots) < 0)
		goto fail;
	for (size_t s = 0; s < n_slots; s++)
		if (slots[s].count)
			slots[used++] = slots[s];
	sort_order = order;
	qsort(slots, used, sizeof(*slots), compare_rows);
	*rows = slots;
	*n = used;
	return 0;
fail:
	class_table_free(slots, n_slots);
	return -1;
}

void class_table_free(struct class_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		free(rows[i].name);
	free(rows);
}

/* ---- dumps --------------------------------------------------------------- */

static size_t root_slot(const struct heap_root *r)
{
	if (r->container)
		return r->container <= HT_C_LAST ? r->container : 0;
	if (r->kind <= HT_ROOT_KIND_LAST)
		return STATS_KIND_SLOT(r->kind);
	return STATS_NO_KIND_SLOT;
}

static void count_roots(struct dump_stats *ds, const struct heap *h)
{
	for (size_t i = 0; i < h->n_roots; i++) {
		const struct heap_root *r = &h->roots[i];
		size_t slot = root_slot(r);
		bool weak = heap_root_is_weak(r);

		if (r->ref == 0) {
			ds->null_roots++; /* counted apart: it holds nothing */
			continue;
		}
		ds->roots++;
		ds->weak_roots += weak;
		ds->root_count[slot]++;
		ds->root_weak[slot] += weak;
	}
}

static void count_generations(struct dump_stats *ds, const struct heap *h)
{
	for (uint32_t i = 0; i < h->n; i++) {
		unsigned gen = heap_generation(h, i);
		size_t slot = gen <= HT_GEN_MAX ? gen : STATS_UNKNOWN_GEN_SLOT;

		ds->has_generations |= slot != STATS_UNKNOWN_GEN_SLOT;
		ds->gen_count[slot]++;
		ds->gen_bytes[slot] += heap_size(h, i);
	}
}

static void count_graph(struct dump_stats *ds, const struct heap *h)
{
	ds->index = h->dump;
	ds->gc_dump = h->gc_dump;
	ds->gc = h->gc;
	ds->aborted = h->aborted;
	ds->complete = h->complete;
	ds->objects = h->n;
	ds->bytes = h->total_bytes;
	ds->references = h->n_references;
	ds->dangling = h->n_dangling;
	ds->dangling_roots = h->n_dangling_roots;
	ds->duplicates = h->n_duplicates;
}

/* The unreachable objects that are class objects. */
static void count_unreachable_classes(struct dump_stats *ds,
				      const struct heap *h,
				      const struct heap_dominators *d)
{
	if (!heap_has_fields(h))
		return;
	for (uint32_t i = 0; i < h->n; i++) {
		if (d->idom[i] != HEAP_NONE || !heap_class_object_name(h, i))
			continue;
		ds->unreachable_classes++;
		ds->unreachable_class_bytes += heap_size(h, i);
	}
}

/* Objects and bytes by the strongest level that reaches them, where
 * levels can differ. */
static int count_levels(struct dump_stats *ds, const struct heap *h,
			struct ht_error *err)
{
	uint8_t *levels;
	uint64_t charged = 0;

	ds->has_levels = heap_has_levels(h);
	if (!ds->has_levels)
		return 0;
	if (heap_reach_levels(h, &levels, &charged, err) < 0)
		return -1;
	for (uint32_t i = 0; i < h->n; i++) {
		ds->level_count[levels[i]]++;
		ds->level_bytes[levels[i]] += heap_size(h, i);
	}
	budget_array_free(levels, h->n, 1, &charged);
	return 0;
}

int dump_stats_compute(struct dump_stats *ds, const struct heap *h,
		       bool retained_by_class, enum heap_level level,
		       struct ht_error *err)
{
	struct heap_dominators d;

	memset(ds, 0, sizeof(*ds));
	count_graph(ds, h);
	count_roots(ds, h);
	ds->named_roots = heap_has_fields(h);
	ds->level = level;
	count_generations(ds, h);
	if (count_levels(ds, h, err) < 0 ||
	    heap_dominators_at(h, level, &d, err) < 0)
		return -1;
	ds->unreachable = d.unreachable;
	ds->unreachable_bytes = d.unreachable_bytes;
	ds->weakly_reachable = d.weakly_reachable;
	count_unreachable_classes(ds, h, &d);
	if (class_table(h, retained_by_class ? &d : NULL, CLASS_BY_BYTES,
			&ds->classes, &ds->n_classes) < 0) {
		err_plain(err, HT_E_NOMEM, NULL, "out of memory");
		heap_dominators_free(&d);
		return -1;
	}
	heap_dominators_free(&d);
	return 0;
}

void dump_stats_free(struct dump_stats *ds)
{
	class_table_free(ds->classes, ds->n_classes);
	ds->classes = NULL;
	ds->n_classes = 0;
}

/* ---- objects across GCs -------------------------------------------------- */

/* The scan in progress: the figures, and the tracker that feeds them. */
struct gc_scan {
	struct trace_stats *ts;
	struct reloc *tracker;
	bool tracker_failed;   /* out of memory keeping its summaries */
	stats_event_fn on_event;
	void *ctx;
};

static void gc_tracked(void *ctx, const struct reloc_gc_summary *sum)
{
	struct trace_stats *s = ((struct gc_scan *)ctx)->ts;

	for (size_t i = s->n_gcs; i-- > 0;) {
		if (s->gcs[i].index == (uint64_t)sum->gc) {
			s->gcs[i].tracked = true;
			s->gcs[i].objects = *sum;
			return;
		}
	}
}

static void dump_tracked(void *ctx, const struct reloc_dump_summary *sum)
{
	struct gc_scan *scan = ctx;
	struct trace_stats *s = scan->ts;
	struct dump_tracking *d;
	size_t at = (size_t)sum->dump;

	if (sum->dump < 0)
		return;
	if (at >= s->n_tracking) {
		size_t old = s->n_tracking;

		if (ALLOC_GROW(s->tracking, at + 1, s->n_tracking) < 0) {
			scan->tracker_failed = true;
			return;
		}
		memset(s->tracking + old, 0,
		       (s->n_tracking - old) * sizeof(*s->tracking));
	}
	d = &s->tracking[at];
	d->sum = *sum;
	d->sum.ages = NULL;
	if (sum->n_ages) {
		struct reloc_age *ages = malloc(sum->n_ages * sizeof(*ages));

		if (!ages) {
			scan->tracker_failed = true;
			return;
		}
		memcpy(ages, sum->ages, sum->n_ages * sizeof(*ages));
		d->sum.ages = ages;
	}
	d->tracked = true;
}

const struct dump_tracking *trace_stats_tracking(const struct trace_stats *ts,
						 uint64_t dump)
{
	if (dump >= ts->n_tracking || !ts->tracking[dump].tracked)
		return NULL;
	return &ts->tracking[dump];
}

void trace_stats_free(struct trace_stats *ts)
{
	for (size_t i = 0; i < ts->n_tracking; i++)
		free((void *)ts->tracking[i].sum.ages);
	free(ts->tracking);
	free(ts->dump_times);
	free(ts->gcs);
	memset(ts, 0, sizeof(*ts));
}

/* ---- GCs ----------------------------------------------------------------- */

/* The GC the event belongs to; NULL outside a GC. */
static struct gc_stats *current_gc(struct trace_stats *s,
				   const struct ht_replay_state *st)
{
	struct gc_stats *g = s->n_gcs ? &s->gcs[s->n_gcs - 1] : NULL;

	if (!st->in_gc || !g || st->gc < 0 || g->index != (uint64_t)st->gc)
		return NULL;
	return g;
}

static int gc_started(struct trace_stats *s, const struct ht_ev_gc_started *ev,
		      const struct ht_replay_state *st)
{
	struct gc_stats *g;

	if (ALLOC_GROW(s->gcs, s->n_gcs + 1, s->cap_gcs) < 0)
		return 1;
	g = &s->gcs[s->n_gcs++];
	memset(g, 0, sizeof(*g));
	g->index = (uint64_t)st->gc;
	g->has_gc = ev->has_gc;
	g->gc = ev->gc;
	g->generations = ev->generations;
	g->reason = ev->reason;
	g->dump = -1;
	return 0;
}

/* What a GC's own events say: its blocks, and its end. */
static void count_gc_event(struct gc_stats *g, const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_MOVED_REFERENCES:
		g->moved_blocks += ev->u.moved_references.count;
		for (size_t i = 0; i < ev->u.moved_references.count; i++)
			add_saturating(&g->moved_bytes,
				       ev->u.moved_references.blocks[i].length);
		break;
	case HT_EV_SURVIVING_REFERENCES:
		g->surviving_blocks += ev->u.surviving_references.count;
		for (size_t i = 0; i < ev->u.surviving_references.count; i++)
			add_saturating(&g->surviving_bytes,
				       ev->u.surviving_references.blocks[i].length);
		break;
	case HT_EV_GC_FINISHED:
		g->finished = true;
		break;
	default:
		break;
	}
}

/* The dump a C_BEGIN or C_END dates, grown into the table. NULL when
 * out of memory. */
static struct dump_times *dump_times_at(struct trace_stats *s, uint64_t dump)
{
	size_t old = s->n_dump_times;

	if (dump < s->n_dump_times)
		return &s->dump_times[dump];
	if (dump >= SIZE_MAX / sizeof(*s->dump_times) ||
	    ALLOC_GROW(s->dump_times, (size_t)dump + 1, s->cap_dump_times) < 0)
		return NULL;
	s->n_dump_times = (size_t)dump + 1;
	memset(&s->dump_times[old], 0,
	       (s->n_dump_times - old) * sizeof(*s->dump_times));
	return &s->dump_times[dump];
}

/* Where a timed event's time goes: its GC's start or finish, its dump's
 * begin or end, and the end of the run. 1 when out of memory. */
static int note_time(struct trace_stats *s, const struct ht_event *ev,
		     const struct ht_replay_state *st)
{
	struct gc_stats *g = current_gc(s, st);
	struct dump_times *d;

	if (!ev->has_time)
		return 0;
	if (!s->has_times || ev->time > s->last_time)
		s->last_time = ev->time;
	s->has_times = true;
	if (ev->type == HT_EV_GC_STARTED && g) {
		g->has_start_time = true;
		g->start_time = ev->time;
	} else if (ev->type == HT_EV_GC_FINISHED && g) {
		g->has_finish_time = true;
		g->finish_time = ev->time;
	} else if (ev->type == HT_EV_BEGIN_CONTAINER && st->dump >= 0 &&
		   !st->gc_dump &&
		   (ev->u.begin_container.type == HT_C_BEGIN ||
		    ev->u.begin_container.type == HT_C_END)) {
		d = dump_times_at(s, (uint64_t)st->dump);
		if (!d)
			return 1;
		if (ev->u.begin_container.type == HT_C_BEGIN) {
			d->has_begin = true;
			d->begin = ev->time;
		} else {
			d->has_end = true;
			d->end = ev->time;
		}
	}
	return 0;
}

static int on_gc_event(void *ctx, const struct ht_event *ev,
		       const struct ht_replay_state *st)
{
	struct gc_scan *scan = ctx;
	struct gc_stats *g;
	int rc;

	if (scan->on_event)
		scan->on_event(scan->ctx, st);
	if (ev->type == HT_EV_GC_STARTED &&
	    gc_started(scan->ts, &ev->u.gc_started, st))
		return 1;
	rc = scan->tracker ? reloc_on_event(scan->tracker, ev, st) : 0;
	if (rc || scan->tracker_failed)
		return 1;
	if (note_time(scan->ts, ev, st))
		return 1;
	if (ev->type == HT_EV_GC_STARTED)
		return 0;
	g = current_gc(scan->ts, st);
	if (g)
		count_gc_event(g, ev);
	return 0;
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	struct gc_scan *scan = ctx;
	struct gc_stats *g = current_gc(scan->ts, st);

	if (g && st->gc_dump)
		g->dump = st->dump;
	return scan->tracker ? reloc_on_dump_begin(scan->tracker, st) : 0;
}

static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	struct gc_scan *scan = ctx;

	if (scan->tracker && (reloc_on_dump_end(scan->tracker, st) ||
			      scan->tracker_failed))
		return 1;
	return 0;
}

/* The last GC is cut off when the trace ends inside it and was cut off
 * there (ht_reader_cut_off: check says the same of such a trace). */
static void mark_cut_off(struct ht_reader *r, bool read_whole_or_torn,
			 struct trace_stats *ts)
{
	struct gc_stats *last = ts->n_gcs ? &ts->gcs[ts->n_gcs - 1] : NULL;

	if (last && !last->finished && read_whole_or_torn &&
	    ht_reader_cut_off(r))
		last->cut_off = true;
}

int stats_scan_gcs(struct ht_reader *r, struct trace_stats *ts, bool track,
		   stats_event_fn on_event, void *ctx, struct ht_error *err)
{
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
	};
	struct gc_scan scan = {.ts = ts, .on_event = on_event, .ctx = ctx};
	struct reloc_hooks hooks = {
		.ctx = &scan,
		.gc_done = gc_tracked,
		.dump_done = dump_tracked,
	};
	struct ht_replay_summary summary;
	int rc;

	memset(ts, 0, sizeof(*ts));
	ts->tracked = track;
	scan.tracker = track ? reloc_new(ht_reader_header(r)->reports_survivors,
					 &hooks) : NULL;
	if (track && !scan.tracker) {
		err_plain(err, HT_E_NOMEM, NULL, "out of memory");
		return -1;
	}
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_gc_event;
	rc = ht_replay(r, &cb, &scan, &summary, err);
	if ((rc == 0 || (rc < 0 && summary.read_error)) && scan.tracker &&
	    (reloc_finish(scan.tracker) || scan.tracker_failed))
		rc = 1;
	if (scan.tracker)
		reloc_get_totals(scan.tracker, &ts->totals);
	ts->dumps = summary.dumps;
	mark_cut_off(r, rc == 0 || (rc < 0 && summary.read_error), ts);
	if (rc > 0) {
		const char *why = scan.tracker ? reloc_error(scan.tracker) : "";

		/* the budget's refusal names the input, as the graph's does */
		err_plain(err, *why ? HT_E_LIMIT : HT_E_NOMEM,
			  mem_budget_exceeded() ? ht_reader_path(r) : NULL,
			  "%s", *why ? why : "out of memory");
		rc = -1;
	} else if (rc < 0 && summary.read_error) {
		ts->damaged = true;
		rc = 1;
	}
	reloc_free(scan.tracker);
	return rc;
}

const struct dump_times *trace_stats_dump_times(const struct trace_stats *ts,
						uint64_t dump)
{
	return dump < ts->n_dump_times ? &ts->dump_times[dump] : NULL;
}

/* ---- GC pauses ----------------------------------------------------------- */

bool gc_pause(const struct gc_stats *g, uint64_t *pause)
{
	if (!g->has_start_time || !g->has_finish_time ||
	    g->finish_time < g->start_time)
		return false;
	*pause = g->finish_time - g->start_time;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the ceil(p% of n)-th smallest, n > 0. */
static uint64_t percentile(const uint64_t *sorted, size_t n, unsigned p)
{
	size_t rank = (size_t)(((unsigned __int128)n * p + 99) / 100);

	return sorted[rank ? rank - 1 : 0];
}

void pause_summary_of(uint64_t *pauses, size_t n, uint64_t run,
		      struct pause_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->run = run;
	if (!n)
		return;
	qsort(pauses, n, sizeof(*pauses), cmp_u64);
	out->count = n;
	for (size_t i = 0; i < n; i++)
		add_saturating(&out->total, pauses[i]);
	out->mean = out->total / n;
	out->p50 = percentile(pauses, n, 50);
	out->p99 = percentile(pauses, n, 99);
	out->max = pauses[n - 1];
	if (run)
		out->share = 100.0 * (double)out->total / (double)run;
}

int stats_pause_summary(const struct trace_stats *ts,
			struct pause_summary *out)
{
	uint64_t *pauses = malloc((ts->n_gcs ? ts->n_gcs : 1) *
				  sizeof(*pauses));
	size_t n = 0;

	if (!pauses)
		return -1;
	for (size_t i = 0; i < ts->n_gcs; i++)
		if (gc_pause(&ts->gcs[i], &pauses[n]))
			n++;
	pause_summary_of(pauses, n, ts->has_times ? ts->last_time : 0, out);
	free(pauses);
	return 0;
}
