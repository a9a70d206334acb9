/*
 * test_history.c - the history lookup (src/analysis/history.c) on a
 * small trace written by hand: an id held by two objects in turn (the
 * first dies in a GC, the second moves onto its id), found by a replay of
 * a file read twice; a dump chosen, a dump past the last, an id no
 * object had; the last name a class was given; each replay's progress
 * shown through the voice.
 */
#include <criterion/criterion.h>

#include "htbuild.h"
#include "testutil.h"
#include "analysis/history.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the trace ----------------------------------------------------------- */

#define FOO 0x10
#define A 0x100   /* object 0: dies in the GC */
#define B 0x200   /* object 1: moves onto A's id */

/* Foo's class, renamed; A and B allocated; a GC of generation 0 whose
 * bounds hold both and whose one block moves B onto 0x100; then a dump
 * that shows B at 0x100. */
static const char *write_trace(void)
{
	struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "clr",
		.pointer_size = 8,
		.reports_survivors = true,
	};
	struct htb_events evs = {0};
	struct htb b = {0};
	const char *path;

	htb_ev_class(&evs, FOO, "Foo");
	htb_ev_class(&evs, FOO, "Bar");
	htb_ev_allocated(&evs, A, FOO, 16);
	htb_ev_allocated(&evs, B, FOO, 16);
	htb_ev_gc_started(&evs, 1u << 0);
	htb_ev_bounds(&evs, HTB_ARRAY(struct ht_generation_range,
				      {0, A, 0x200, 0x1000}));
	htb_ev_moved(&evs, HTB_ARRAY(struct ht_moved_block, {B, A, 16}));
	htb_ev_gc_finished(&evs);
	htb_ev_container(&evs, HT_C_BEGIN, 0, 0);
	htb_ev_container(&evs, HT_C_HEAP, 0, 0);
	htb_ev_object(&evs, A, FOO, 16, NULL, 0);
	htb_ev_container(&evs, HT_C_END, 0, 0);
	htb_start(&b, &header);
	htb_chunk(&b, evs.ev, evs.n);
	htb_finish(&b);
	path = tmp_file_with("history.ht", b.data, b.len);
	htb_free(&b);
	htb_ev_free(&evs);
	return path;
}

/* ---- the voice ----------------------------------------------------------- */

static char said[256];
static int progress_started, progress_ended;
static uint64_t progress_events;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(said, sizeof(said), fmt, ap);
	va_end(ap);
}

static struct ht_reader *open_it(const char *path,
				 const struct ht_reader_options *opts)
{
	struct ht_error err;
	struct ht_reader *r = ht_reader_open_with(path, opts, &err);

	if (!r)
		say("%s", err.message);
	return r;
}

static void *start(const char *what, const char *path)
{
	(void)path;
	cr_assert_str_eq(what, "history");
	progress_started++;
	return &progress_events;
}

static void update(void *p, uint64_t events, uint64_t offset)
{
	(void)offset;
	cr_assert_eq(p, &progress_events);
	progress_events = events;
}

static void end(void *p)
{
	cr_assert_eq(p, &progress_events);
	progress_ended++;
}

static const uint64_t no_limit;
static const struct session_voice voice = {
	.error = say,
	.warning = say,
	.open = open_it,
	.max_memory = &no_limit,
	.progress_start = start,
	.progress_update = update,
	.progress_end = end,
};

static struct ht_reader_options options;
static struct input in;
static struct history h;

static enum history_result find(ht_id target, int64_t select)
{
	said[0] = '\0';
	progress_started = progress_ended = 0;
	cr_assert_eq(session_input_prepare(&in, write_trace(), &options,
					   &voice), 0);
	return history_find(&h, &in, target, select);
}

static void done(void)
{
	history_free(&h);
	input_release(&in);
}

TestSuite(history, .fini = done);

/* ---- what it finds ------------------------------------------------------- */

/* Both objects held 0x100: A from its allocation, B after the GC. */
Test(history, every_holder_of_a_reused_id)
{
	cr_assert_eq(find(A, -1), HISTORY_FOUND, "%s", said);
	cr_assert_eq(h.n_holders, 2);
	cr_assert_eq(h.holders[0], 0);
	cr_assert_eq(h.holders[1], 1);
	cr_assert_not(h.damaged);
	cr_assert_eq(h.dumps_in_trace, 1);
	cr_assert_eq(h.cut_off_gc, -1);
	cr_assert_str_eq(said, "");
}

/* Each life is its steps in the trace's order; the last says its fate. */
Test(history, lives_end_in_their_fates)
{
	struct history_life *l;
	size_t n;

	cr_assert_eq(find(A, -1), HISTORY_FOUND, "%s", said);
	cr_assert_eq(h.steps[0].kind, RELOC_ALLOCATED);
	cr_assert_eq(h.steps[0].object, 0);
	cr_assert_eq(h.steps[0].to, A);
	l = history_lives(&h, &n);
	cr_assert_not_null(l);
	cr_assert_eq(n, 2);
	cr_assert_eq(l[0].object, 0);
	cr_assert_eq(l[0].last->kind, RELOC_DIED);
	cr_assert_eq(l[0].last->cause, RELOC_DIED_BOUNDS);
	cr_assert_eq(l[1].object, 1);
	cr_assert_eq(l[1].last->kind, RELOC_END);
	cr_assert_eq(l[1].last->to, A);
	free(l);
}

/* In dump 0 only B had the id. */
Test(history, the_holder_in_one_dump)
{
	cr_assert_eq(find(A, 0), HISTORY_FOUND, "%s", said);
	cr_assert_eq(h.n_holders, 1);
	cr_assert_eq(h.holders[0], 1);
}

/* A dump past the last, and an id no object had, are findings the
 * caller words: nothing is said. */
Test(history, no_such_dump_and_no_object)
{
	cr_assert_eq(find(A, 1), HISTORY_NO_SUCH_DUMP);
	cr_assert_eq(h.dumps_in_trace, 1);
	cr_assert_str_eq(said, "");
	done();
	cr_assert_eq(find(0x999, -1), HISTORY_NOT_FOUND);
	cr_assert_eq(h.n_holders, 0);
	cr_assert_str_eq(said, "");
}

/* The class is named by the last name the trace gave it. */
Test(history, the_last_class_name)
{
	char buf[CLASS_TEXT_SIZE];

	cr_assert_eq(find(A, -1), HISTORY_FOUND, "%s", said);
	cr_assert_str_eq(class_names_find(&h.classes, FOO), "Bar");
	cr_assert_null(class_names_find(&h.classes, 0x11));
	cr_assert_str_eq(class_names_text(&h.classes, 0x11, buf), "?0x11");
	cr_assert_str_eq(class_names_text(&h.classes, 0, buf), "?");
}

/* A trace without times has no time tables: every step is untimed. */
Test(history, untimed_trace)
{
	cr_assert_eq(find(A, -1), HISTORY_FOUND, "%s", said);
	cr_assert_not(h.timed);
	for (size_t k = 0; k < h.n_steps; k++)
		cr_assert_eq(history_step_time(&h, &h.steps[k]),
			     HISTORY_NO_TIME);
}

/* Each of the two replays shows its progress, begun and ended. */
Test(history, progress_of_each_replay)
{
	cr_assert_eq(find(A, -1), HISTORY_FOUND, "%s", said);
	cr_assert_eq(progress_started, 2);
	cr_assert_eq(progress_ended, 2);
	cr_assert_gt(progress_events, 0);
}
