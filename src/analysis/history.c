/*
 * history.c - the history lookup of history.h: two replays through the
 * relocation tracker, the first to find the objects that held the id,
 * the second to collect every step of theirs, the class names and the
 * times. Each replay's callbacks only note what they are given; a table
 * that cannot grow stops the replay (out_of_memory), said once at its
 * end.
 */
#include "analysis/history.h"

#include "util/alloc.h"
#include "util/membudget.h"
#include "util/search.h"

#include <stdlib.h>
#include <string.h>

/* ---- times --------------------------------------------------------------- */

/* Sets times[at] (growing the table, HISTORY_NO_TIME between); -1 when
 * out of memory. */
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
			(*times)[(*n)++] = HISTORY_NO_TIME;
	}
	(*times)[i] = t;
	return 0;
}

static uint64_t time_at(const uint64_t *times, size_t n, int64_t at)
{
	return at >= 0 && (size_t)at < n ? times[at] : HISTORY_NO_TIME;
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

uint64_t history_step_time(const struct history *h,
			   const struct reloc_step *s)
{
	if (s->kind == RELOC_END)
		return HISTORY_NO_TIME;
	if (s->dump >= 0)
		return time_at(h->dump_times, h->n_dump_times, s->dump);
	return time_at(h->gc_times, h->n_gc_times, s->gc);
}

/* ---- the replays --------------------------------------------------------- */

/* First replay: an object that holds the id (in dump N, with select). */
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
	const struct session_voice *voice = h->input->voice;

	if (voice->progress_update)
		voice->progress_update(h->progress, st->event_index + 1,
				       ht_reader_position(h->reader).offset);
	if (h->collect && ev->type == HT_EV_CLASS &&
	    class_names_add(&h->classes, &ev->u.class_) < 0) {
		h->out_of_memory = true;
		return 1;
	}
	if (h->collect && alloc_stacks_note(&h->stacks, ev) < 0) {
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
	if (h->collect && st->gc_dump && t != HISTORY_NO_TIME &&
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

static void *progress_start(const struct session_voice *voice,
			    const char *path)
{
	return voice->progress_start ? voice->progress_start("history", path)
				     : NULL;
}

static void progress_end(const struct session_voice *voice, void *p)
{
	if (voice->progress_end)
		voice->progress_end(p);
}

/* One replay. 0, or -1 once said why not. */
static int replay(struct history *h)
{
	const struct session_voice *voice = h->input->voice;
	const char *path = h->input->name;
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
	};
	const struct ht_header *header;
	struct ht_replay_summary summary;
	struct ht_error err;
	int rc;

	h->reader = input_open(h->input);
	if (!h->reader)
		return -1;
	header = ht_reader_header(h->reader);
	h->tracker = new_tracker(h, header->reports_survivors);
	if (!h->tracker) {
		ht_reader_close(h->reader);
		voice->error("out of memory");
		return -1;
	}
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_event;
	h->progress = progress_start(voice, path);
	rc = ht_replay(h->reader, &cb, h, &summary, &err);
	if (rc == 0 || (rc < 0 && summary.read_error))
		rc = reloc_finish(h->tracker) ? 1 : rc;
	progress_end(voice, h->progress);
	h->progress = NULL;
	h->cut_off_gc = (rc == 0 || (rc < 0 && summary.read_error)) &&
			h->any_gc && !h->last_gc.finished &&
			ht_reader_cut_off(h->reader) ? h->last_gc.gc : -1;
	ht_reader_close(h->reader);
	h->reader = NULL;
	h->dumps_in_trace = summary.dumps;
	rc = session_tracked_replay_end(h->input, rc, &summary, &err,
					h->tracker, h->out_of_memory,
					&h->damaged);
	reloc_free(h->tracker);
	h->tracker = NULL;
	return rc;
}

static int compare_serials(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The first replay notes an object each time it holds the id. */
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

enum history_result history_find(struct history *h, struct input *in,
				 ht_id target, int64_t select)
{
	memset(h, 0, sizeof(*h));
	h->input = in;
	h->target = target;
	h->select = select;
	h->cut_off_gc = -1;
	if (replay(h) < 0)
		return HISTORY_FAILED;
	if (select >= 0 && (uint64_t)select >= h->dumps_in_trace)
		return HISTORY_NO_SUCH_DUMP;
	unique_holders(h);
	if (!h->n_holders)
		return HISTORY_NOT_FOUND;
	h->collect = true;
	if (replay(h) < 0)
		return HISTORY_FAILED;
	class_names_sort(&h->classes);
	alloc_stacks_finish(&h->stacks);
	return HISTORY_FOUND;
}

void history_free(struct history *h)
{
	class_names_free(&h->classes);
	alloc_stacks_free(&h->stacks);
	free(h->holders);
	free(h->steps);
	free(h->gc_times);
	free(h->dump_times);
	memset(h, 0, sizeof(*h));
}

struct history_life *history_lives(const struct history *h, size_t *n)
{
	struct history_life *l = calloc(h->n_holders ? h->n_holders : 1,
					sizeof(*l));

	if (!l)
		return NULL;
	for (size_t i = 0; i < h->n_holders; i++)
		l[i].object = h->holders[i];
	for (size_t k = 0; k < h->n_steps; k++) {
		const struct reloc_step *s = &h->steps[k];
		size_t at = LOWER_BOUND(0, h->n_holders, i,
					h->holders[i] < s->object);

		if (at < h->n_holders && h->holders[at] == s->object)
			l[at].last = s;
	}
	*n = h->n_holders;
	return l;
}
