/*
 * test_replay.c - the replayer (src/lib/read/replay.c): the order of its
 * callbacks, how it numbers dumps and GCs, the container and thread it
 * passes along, objects continued across events, aborted dumps, the
 * positions and details of violations, and ht_replay over a reader.
 */
#include <criterion/criterion.h>

#include "lib/read/replay.h"
#include "lib/read/source.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Events, tersely ---------------------------------------------------- */

static const ht_id two_refs[] = {0x1000, 0};
static const uint32_t two_flags[] = {0, 0};
static const struct ht_moved_block one_move[] = {
	{.old_id = 0x1000, .new_id = 0x800, .length = 0x10},
};

static struct ht_event container(enum ht_container_type type, ht_id id1,
				 ht_id id2)
{
	return (struct ht_event){
		.type = HT_EV_BEGIN_CONTAINER,
		.u.begin_container = {.type = type, .id1 = id1, .id2 = id2},
	};
}

static struct ht_event c(enum ht_container_type type)
{
	return container(type, 0, 0);
}

static struct ht_event thread_container(ht_id thread)
{
	return container(HT_C_RT_THREAD, thread, 0);
}

static struct ht_event roots_with(enum ht_result result)
{
	return (struct ht_event){
		.type = HT_EV_ROOT_REFERENCES,
		.u.root_references = {.count = 2, .refs = two_refs,
				      .flags = two_flags, .result = result},
	};
}

static struct ht_event roots(void)
{
	return roots_with(HT_RESULT_OK);
}

static struct ht_event object_of(ht_id id, ht_id class_id, uint64_t size,
				 uint32_t flags)
{
	return (struct ht_event){
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = {.id = id, .class_id = class_id,
					.size = size, .flags = flags,
					.count = 2, .refs = two_refs},
	};
}

/* A whole object, or one part of an object reported in parts: its class
 * is 0xc0 and its size 32 unless a test says otherwise. */
static struct ht_event object(ht_id id)
{
	return object_of(id, 0xc0, 32, 0);
}

static struct ht_event first_part(ht_id id)
{
	return object_of(id, 0xc0, 32, HT_OBJ_MORE_REFERENCES);
}

#define middle_part first_part
#define last_part object

static struct ht_event object_aborting(ht_id id)
{
	struct ht_event ev = object(id);

	ev.u.object_references.result = HT_RESULT_ABORT;
	return ev;
}

static struct ht_event plain(enum ht_event_type type)
{
	return (struct ht_event){.type = type};
}

static struct ht_event gc_started(void)
{
	return (struct ht_event){
		.type = HT_EV_GC_STARTED,
		.u.gc_started = {.generations = 0x1, .reason = HT_GC_OTHER},
	};
}

static struct ht_event gc_finished(void)
{
	return plain(HT_EV_GC_FINISHED);
}

static struct ht_event moved(void)
{
	return (struct ht_event){
		.type = HT_EV_MOVED_REFERENCES,
		.u.moved_references = {.count = 1, .blocks = one_move},
	};
}

/* ---- A replay that writes down what it is told -------------------------- */

#define MAX_EVENTS 256
#define MAX_VIOLATIONS 8192

/*
 * The log reads as the calls came: dump callbacks as "begin:N" and "end:N"
 * (N the dump number), violations as "v:NAME", events by their name, or
 * by their container type for begin_container.
 */
struct record {
	char log[4096];
	struct ht_replay_state at[MAX_EVENTS];  /* state at each on_event */
	size_t n_events;
	struct ht_replay_state at_begin[16], at_end[16];
	size_t n_begins, n_ends;
	struct ht_violation violations[MAX_VIOLATIONS];
	size_t n_violations;
	struct ht_replay_summary summary;
	int stop_on_type;           /* on_event returns 42 for this type */
	int stop_on_begin;          /* on_dump_begin returns 7 */
};

static struct record rec;

static void note(const char *word)
{
	size_t len = strlen(rec.log);

	snprintf(rec.log + len, sizeof(rec.log) - len, "%s%s",
		 len ? " " : "", word);
}

static int on_event(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	cr_assert_eq(ctx, &rec);
	if (ev->type == HT_EV_BEGIN_CONTAINER)
		note(ht_container_name(ev->u.begin_container.type));
	else
		note(ht_event_name(ev->type));
	if (rec.n_events < MAX_EVENTS)
		rec.at[rec.n_events++] = *st;
	return (int)ev->type == rec.stop_on_type ? 42 : 0;
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	char word[32];

	(void)ctx;
	snprintf(word, sizeof(word), "begin:%lld", (long long)st->dump);
	note(word);
	rec.at_begin[rec.n_begins++ % 16] = *st;
	return rec.stop_on_begin ? 7 : 0;
}

static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	char word[32];

	(void)ctx;
	snprintf(word, sizeof(word), "end:%lld", (long long)st->dump);
	note(word);
	rec.at_end[rec.n_ends++ % 16] = *st;
	return 0;
}

static void on_violation(void *ctx, const struct ht_violation *v)
{
	char word[64];

	(void)ctx;
	snprintf(word, sizeof(word), "v:%s", ht_violation_name(v->code));
	note(word);
	cr_assert_lt(rec.n_violations, MAX_VIOLATIONS);
	rec.violations[rec.n_violations++] = *v;
}

static struct ht_replay_callbacks recording_callbacks(void)
{
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
		.on_violation = on_violation,
	};

	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_event;
	return cb;
}

static struct replayer *recording_replayer(void)
{
	struct ht_replay_callbacks cb = recording_callbacks();
	struct replayer *r = replayer_new(&cb, &rec);

	cr_assert_not_null(r);
	return r;
}

/* Replays evs from start to finish into rec; returns the first non-zero
 * return of feed or finish. */
static int replay_array(const struct ht_event *evs, size_t n)
{
	struct replayer *r = recording_replayer();
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = replayer_feed(r, &evs[i], NULL);
	if (rc == 0)
		rc = replayer_finish(r, NULL);
	replayer_summary(r, &rec.summary);
	replayer_free(r);
	return rc;
}

#define EVENTS(...) ((const struct ht_event[]){__VA_ARGS__})
#define REPLAY(...)                                                       \
	replay_array(EVENTS(__VA_ARGS__),                                 \
		     sizeof(EVENTS(__VA_ARGS__)) / sizeof(struct ht_event))

static void assert_log(const char *expected)
{
	cr_assert_str_eq(rec.log, expected);
}

/* ---- Order of callbacks -------------------------------------------------- */

Test(order, a_clean_dump)
{
	cr_assert_eq(REPLAY(c(HT_C_BEGIN), thread_container(7), roots(),
			    c(HT_C_HEAP), object(0x10), c(HT_C_END)), 0);
	assert_log("begin:0 C_BEGIN C_RT_THREAD root_references C_HEAP "
		   "object_references C_END end:0");
	cr_assert_eq(rec.n_violations, 0);
}

Test(order, violations_come_before_the_event)
{
	REPLAY(c(HT_C_BEGIN), container(HT_C_RT_JIT, 0x10, 0x99), c(HT_C_END));
	assert_log("begin:0 C_BEGIN v:frame-no-thread C_RT_JIT C_END end:0");
}

Test(order, a_violation_that_begins_a_dump)
{
	REPLAY(gc_started(), moved(), plain(HT_EV_GENERATION_BOUNDS),
	       object(0x10), gc_finished());
	assert_log("gc_started moved_references generation_bounds "
		   "v:bounds-in-gc begin:0 object_references gc_finished "
		   "end:0");
}

Test(order, a_nested_c_begin_ends_the_open_dump_first)
{
	REPLAY(c(HT_C_BEGIN), thread_container(7), c(HT_C_BEGIN), c(HT_C_END));
	assert_log("begin:0 C_BEGIN C_RT_THREAD v:dump-nested end:0 begin:1 "
		   "C_BEGIN C_END end:1");
}

Test(order, a_gc_dump)
{
	REPLAY(gc_started(), moved(), object(0x10), roots(), gc_finished());
	assert_log("gc_started moved_references begin:0 object_references "
		   "root_references gc_finished end:0");
}

Test(order, a_gc_without_references_has_no_dump)
{
	REPLAY(gc_started(), moved(), gc_finished());
	assert_log("gc_started moved_references gc_finished");
	cr_assert_eq(rec.summary.gcs, 1);
	cr_assert_eq(rec.summary.dumps, 0);
}

Test(order, a_nested_gc_ends_the_open_gc_dump_first)
{
	REPLAY(gc_started(), object(0x10), gc_started(), gc_finished());
	assert_log("gc_started begin:0 object_references v:gc-nested end:0 "
		   "gc_started gc_finished");
}

Test(order, c_begin_inside_a_gc_dump)
{
	REPLAY(gc_started(), object(0x10), c(HT_C_BEGIN), c(HT_C_END),
	       gc_finished());
	assert_log("gc_started begin:0 object_references v:dump-in-gc end:0 "
		   "begin:1 C_BEGIN C_END end:1 gc_finished");
}

Test(order, the_end_of_a_trace_inside_a_dump)
{
	REPLAY(c(HT_C_BEGIN), thread_container(7));
	assert_log("begin:0 C_BEGIN C_RT_THREAD v:dump-unfinished end:0");
}

Test(order, the_end_of_a_trace_inside_a_gc_dump)
{
	REPLAY(gc_started(), object(0x10));
	assert_log("gc_started begin:0 object_references v:gc-unfinished end:0");
}

Test(order, the_end_of_a_trace_inside_both)
{
	REPLAY(gc_started(), c(HT_C_BEGIN));
	assert_log("gc_started v:dump-in-gc begin:0 C_BEGIN "
		   "v:dump-unfinished v:gc-unfinished end:0");
}

Test(order, an_event_callback_stops_the_replay)
{
	struct replayer *r = recording_replayer();
	struct ht_event a = c(HT_C_BEGIN), b = roots();

	rec.stop_on_type = HT_EV_ROOT_REFERENCES;
	cr_assert_eq(replayer_feed(r, &a, NULL), 0);
	cr_assert_eq(replayer_feed(r, &b, NULL), 42);
	replayer_free(r);
}

Test(order, a_dump_callback_stops_before_the_event)
{
	struct replayer *r = recording_replayer();
	struct ht_event a = c(HT_C_BEGIN);

	rec.stop_on_begin = 1;
	cr_assert_eq(replayer_feed(r, &a, NULL), 7);
	assert_log("begin:0");
	replayer_free(r);
}

Test(order, no_callbacks_at_all)
{
	struct replayer *r = replayer_new(NULL, NULL);
	struct ht_event a = c(HT_C_BEGIN), b = c(HT_C_RT_JIT);

	cr_assert_eq(replayer_feed(r, &a, NULL), 0);
	cr_assert_eq(replayer_feed(r, &b, NULL), 0);
	cr_assert_eq(replayer_finish(r, NULL), 0);
	replayer_summary(r, &rec.summary);
	cr_assert_eq(rec.summary.violations, 2);
	replayer_free(r);
}

/* ---- Numbering of dumps and GCs ------------------------------------------ */

Test(numbering, before_anything)
{
	REPLAY(plain(HT_EV_CLASS));
	cr_assert_eq(rec.at[0].dump, -1);
	cr_assert_eq(rec.at[0].gc, -1);
	cr_assert_not(rec.at[0].in_dump);
	cr_assert_not(rec.at[0].in_gc);
	cr_assert_eq(rec.at[0].container, 0);
}

Test(numbering, dumps_of_both_kinds_and_gcs_count_from_zero)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_END),                     /* dump 0 */
	       gc_started(), moved(), gc_finished(),           /* GC 0 */
	       gc_started(), object(0x10), gc_finished(),      /* GC 1, dump 1 */
	       c(HT_C_BEGIN), c(HT_C_END),                     /* dump 2 */
	       plain(HT_EV_CLASS));
	static const struct {
		int64_t dump, gc;
	} at[] = {
		{0, -1}, {0, -1}, {0, 0}, {0, 0}, {0, 0},
		{0, 1}, {1, 1}, {1, 1}, {2, 1}, {2, 1}, {2, 1},
	};
	for (size_t i = 0; i < ARRAY_SIZE(at); i++) {
		cr_assert_eq(rec.at[i].event_index, i);
		cr_assert_eq(rec.at[i].dump, at[i].dump, "event %zu", i);
		cr_assert_eq(rec.at[i].gc, at[i].gc, "event %zu", i);
	}
	cr_assert_eq(rec.summary.events, 11);
	cr_assert_eq(rec.summary.dumps, 3);
	cr_assert_eq(rec.summary.gcs, 2);
	cr_assert_eq(rec.summary.violations, 0);
	cr_assert_eq(rec.at_end[1].dump, 1);
	cr_assert_eq(rec.at_end[1].gc, 1);
}

Test(numbering, a_closing_event_still_shows_its_bracket_open)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_END), plain(HT_EV_CLASS),
	       gc_started(), object(0x10), gc_finished(), plain(HT_EV_CLASS));
	cr_assert(rec.at[1].in_dump);                   /* C_END */
	cr_assert(rec.at_end[0].in_dump);
	cr_assert_not(rec.at[2].in_dump);
	cr_assert(rec.at[3].in_gc);                     /* gc_started */
	cr_assert_not(rec.at[3].in_dump);
	cr_assert(rec.at[4].in_dump);                   /* a GC dump is a dump */
	cr_assert(rec.at[4].in_gc);
	cr_assert(rec.at[5].in_gc);                     /* gc_finished */
	cr_assert(rec.at[5].in_dump);
	cr_assert(rec.at_end[1].in_gc);
	cr_assert_not(rec.at[6].in_gc);
	cr_assert_not(rec.at[6].in_dump);
	cr_assert_eq(rec.at[6].dump, 1, "the last dump stays named");
}

Test(numbering, a_heap_dump_inside_a_gc_keeps_the_gc_open)
{
	REPLAY(gc_started(), c(HT_C_BEGIN), c(HT_C_END), moved(),
	       gc_finished());
	cr_assert(rec.at[1].in_dump && rec.at[1].in_gc);
	cr_assert_not(rec.at[3].in_dump);
	cr_assert(rec.at[3].in_gc);
	cr_assert_eq(rec.at[3].gc, 0);
}

/* ---- Container and thread ------------------------------------------------ */

Test(tracking, the_container_and_thread_begun_last)
{
	REPLAY(c(HT_C_BEGIN),                                   /* 0 */
	       thread_container(7),
	       container(HT_C_RT_JIT, 0x10, 0x99), roots(),
	       thread_container(8),
	       container(HT_C_RT_NATIVE, 0x20, 0x98), roots(),  /* 6 */
	       container(HT_C_RT_CLASS, 0x30, 0), roots(),
	       c(HT_C_END),                                     /* 9 */
	       c(HT_C_BEGIN), container(HT_C_RT_CLASS, 0x31, 0), roots(),
	       c(HT_C_END), plain(HT_EV_CLASS));                /* 14 */
	cr_assert_eq(rec.n_violations, 0);
	cr_assert_eq(rec.at[0].container, HT_C_BEGIN);
	cr_assert_not(rec.at[0].has_thread);
	cr_assert_eq(rec.at[3].container, HT_C_RT_JIT);
	cr_assert_eq(rec.at[3].container_id1, 0x10);
	cr_assert_eq(rec.at[3].container_id2, 0x99);
	cr_assert(rec.at[3].has_thread);
	cr_assert_eq(rec.at[3].thread_id, 7);
	cr_assert_eq(rec.at[6].container, HT_C_RT_NATIVE);
	cr_assert_eq(rec.at[6].thread_id, 8);
	cr_assert_eq(rec.at[8].container, HT_C_RT_CLASS);
	cr_assert_eq(rec.at[8].container_id1, 0x30);
	cr_assert_eq(rec.at[8].thread_id, 8, "the thread begun last");
	cr_assert_eq(rec.at[9].container, HT_C_END);
	cr_assert_eq(rec.at_end[0].thread_id, 8);
	/* A new dump forgets the thread of the last. */
	cr_assert_not(rec.at[12].has_thread);
	cr_assert_eq(rec.at[12].thread_id, 0);
	cr_assert_eq(rec.at[12].container_id1, 0x31);
	cr_assert_eq(rec.at[14].container, 0);
}

Test(tracking, a_frame_belongs_to_the_thread_it_was_first_begun_under)
{
	REPLAY(c(HT_C_BEGIN),                                   /* 0 */
	       thread_container(7),
	       container(HT_C_RT_JIT, 0x10, 0x99), roots(),      /* 3 */
	       thread_container(8),
	       container(HT_C_RT_JIT, 0x20, 0x98), roots(),      /* 6 */
	       container(HT_C_RT_JIT, 0x10, 0x99), roots(),      /* 8: again */
	       container(HT_C_RT_CLASS, 0x30, 0), roots(),       /* 10 */
	       c(HT_C_END),
	       c(HT_C_BEGIN), thread_container(9),
	       container(HT_C_RT_JIT, 0x10, 0x99), roots(),      /* 15 */
	       c(HT_C_END));
	cr_assert_eq(rec.n_violations, 0);
	cr_assert(rec.at[3].container_has_thread);
	cr_assert_eq(rec.at[3].container_thread, 7);
	cr_assert_eq(rec.at[6].container_thread, 8);
	cr_assert_eq(rec.at[8].thread_id, 8, "the thread begun last");
	cr_assert_eq(rec.at[8].container_thread, 7,
		     "but the frame is still thread 7's");
	cr_assert_not(rec.at[10].container_has_thread,
		      "class statics belong to no thread");
	cr_assert_eq(rec.at[15].container_thread, 9,
		     "a new dump forgets the frames of the last");
}

Test(tracking, a_container_outside_a_dump_is_not_taken)
{
	REPLAY(gc_started(), object(0x10), container(HT_C_RT_CLASS, 5, 0),
	       roots(), gc_finished());
	assert_log("gc_started begin:0 object_references v:dump-not-open "
		   "C_RT_CLASS root_references gc_finished end:0");
	cr_assert_eq(rec.at[2].container, 0);
	cr_assert_eq(rec.at[3].container, 0);
}

Test(tracking, a_gc_dump_takes_threads_and_frames)
{
	REPLAY(gc_started(), roots(),                           /* 1 */
	       thread_container(7),
	       container(HT_C_RT_JIT, 0x10, 0x99), roots(),      /* 4 */
	       gc_finished(),
	       gc_started(), roots(), gc_finished());            /* 7 */
	cr_assert_eq(rec.n_violations, 0);
	cr_assert_eq(rec.at[1].container, 0);
	cr_assert_eq(rec.at[4].container, HT_C_RT_JIT);
	cr_assert_eq(rec.at[4].container_id2, 0x99);
	cr_assert(rec.at[4].container_has_thread);
	cr_assert_eq(rec.at[4].container_thread, 7);
	cr_assert_eq(rec.at[7].container, 0, "the next GC dump forgets it");
	cr_assert_not(rec.at[7].has_thread);
}

Test(tracking, a_container_of_unknown_type_is_not_taken)
{
	REPLAY(c(HT_C_BEGIN), container(HT_C_RT_CLASS, 5, 0), c(40), roots(),
	       c(HT_C_END));
	cr_assert_eq(rec.n_violations, 1);
	cr_assert_eq(rec.violations[0].code, HT_V_BAD_VALUE);
	cr_assert_str_eq(rec.violations[0].detail,
			 "begin_container of type 40: container type 40 out "
			 "of range");
	cr_assert_eq(rec.at[3].container, HT_C_RT_CLASS);
}

/* ---- Aborted dumps -------------------------------------------------------- */

Test(abort, marks_the_dump_to_its_end)
{
	REPLAY(c(HT_C_BEGIN), thread_container(7), roots(),
	       roots_with(HT_RESULT_ABORT), c(HT_C_END),
	       c(HT_C_BEGIN), c(HT_C_END));
	cr_assert_eq(rec.n_violations, 0);
	cr_assert_not(rec.at[2].dump_aborted);
	cr_assert(rec.at[3].dump_aborted, "the aborting event itself");
	cr_assert(rec.at[4].dump_aborted);
	cr_assert(rec.at_end[0].dump_aborted);
	cr_assert_not(rec.at[5].dump_aborted);
	cr_assert_not(rec.at_end[1].dump_aborted);
}

Test(abort, anything_but_c_end_after_it)
{
	REPLAY(c(HT_C_BEGIN), thread_container(7), roots_with(HT_RESULT_ABORT),
	       container(HT_C_RT_CLASS, 5, 0), object(0x10),
	       plain(HT_EV_CLASS), c(HT_C_END));
	assert_log("begin:0 C_BEGIN C_RT_THREAD root_references "
		   "v:after-abort C_RT_CLASS v:after-abort object_references "
		   "class C_END end:0");
	cr_assert_str_eq(rec.violations[0].detail,
			 "C_RT_CLASS (id1 0x5) after dump 0 was aborted");
}

Test(abort, a_gc_dump)
{
	REPLAY(gc_started(), object_aborting(0x10), object(0x20),
	       gc_finished());
	assert_log("gc_started begin:0 object_references v:after-abort "
		   "object_references gc_finished end:0");
	cr_assert(rec.at_end[0].dump_aborted);
}

/* ---- Objects continued across events --------------------------------------- */

Test(continuation, joined_across_other_objects)
{
	REPLAY(gc_started(),
	       first_part(0xa0), first_part(0xb0), object(0xc0),
	       last_part(0xb0), middle_part(0xa0), last_part(0xa0),
	       gc_finished());
	static const bool continues[] = {
		false, false, false, false, true, true, true, false,
	};
	cr_assert_eq(rec.n_violations, 0);
	for (size_t i = 0; i < ARRAY_SIZE(continues); i++)
		cr_assert_eq(rec.at[i].continuation, continues[i],
			     "event %zu", i);
}

Test(continuation, an_object_reported_again_whole_is_no_continuation)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_HEAP), object(0x10), object(0x10),
	       c(HT_C_END));
	cr_assert_not(rec.at[3].continuation);
	cr_assert_eq(rec.n_violations, 0);
}

Test(continuation, with_another_class)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_HEAP),
	       object_of(0x10, 0xc0, 32, HT_OBJ_MORE_REFERENCES),
	       object_of(0x10, 0xc1, 32, 0), c(HT_C_END));
	assert_log("begin:0 C_BEGIN C_HEAP object_references "
		   "v:continuation-mismatch object_references C_END end:0");
	cr_assert(rec.at[3].continuation);
	cr_assert_eq(rec.violations[0].where.event_index, 3);
	cr_assert_str_eq(rec.violations[0].detail,
			 "object 0x10 continued with class 0xc1 and size 32; "
			 "at event 2 it had class 0xc0 and size 32");
}

Test(continuation, with_another_size)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_HEAP),
	       object_of(0x10, 0xc0, 32, HT_OBJ_MORE_REFERENCES),
	       object_of(0x10, 0xc0, 40, HT_OBJ_MORE_REFERENCES),
	       object_of(0x10, 0xc0, 32, 0), c(HT_C_END));
	cr_assert_eq(rec.n_violations, 1);
	cr_assert_eq(rec.violations[0].code, HT_V_CONTINUATION_MISMATCH);
	cr_assert_eq(rec.violations[0].where.event_index, 3);
}

Test(continuation, missing_at_the_end_of_a_dump)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_HEAP), first_part(0x10), object(0x20),
	       c(HT_C_END));
	assert_log("begin:0 C_BEGIN C_HEAP object_references "
		   "object_references v:continuation-missing C_END end:0");
	cr_assert_eq(rec.violations[0].where.event_index, 4);
	cr_assert_str_eq(rec.violations[0].detail,
			 "object 0x10 (class 0xc0) announced more references "
			 "at event 2; dump 0 ended without them");
}

Test(continuation, missing_at_the_end_of_a_gc_dump)
{
	REPLAY(gc_started(), first_part(0x10), gc_finished());
	assert_log("gc_started begin:0 object_references "
		   "v:continuation-missing gc_finished end:0");
}

Test(continuation, missing_when_a_nested_c_begin_ends_the_dump)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_HEAP), first_part(0x10), c(HT_C_BEGIN),
	       object(0x10), c(HT_C_END));
	assert_log("begin:0 C_BEGIN C_HEAP object_references v:dump-nested "
		   "v:continuation-missing end:0 begin:1 C_BEGIN "
		   "object_references C_END end:1");
	cr_assert_not(rec.at[4].continuation, "dumps do not share objects");
}

Test(continuation, missing_at_the_end_of_the_trace)
{
	struct replayer *r = recording_replayer();
	struct ht_event evs[] = {c(HT_C_BEGIN), c(HT_C_HEAP), first_part(0x10)};
	struct ht_position end = {.event_index = 77, .offset = 5000};

	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(replayer_feed(r, &evs[i], NULL), 0);
	cr_assert_eq(replayer_finish(r, &end), 0);
	assert_log("begin:0 C_BEGIN C_HEAP object_references "
		   "v:dump-unfinished v:continuation-missing end:0");
	cr_assert_eq(rec.violations[0].where.event_index, 3,
		     "one past the last event");
	cr_assert_eq(rec.violations[0].where.offset, 5000);
	cr_assert_eq(rec.violations[1].where.event_index, 3);
	replayer_free(r);
}

Test(continuation, missing_in_ascending_id_order)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_HEAP), first_part(0x50), first_part(0x10),
	       first_part(0x40), first_part(0x20), first_part(0x30),
	       c(HT_C_END));
	cr_assert_eq(rec.n_violations, 5);
	for (size_t i = 0; i < 5; i++) {
		char expected[16];

		snprintf(expected, sizeof(expected), "object 0x%zx ",
			 (i + 1) * 0x10);
		cr_assert(strncmp(rec.violations[i].detail, expected,
				  strlen(expected)) == 0,
			  "%zu: %s", i, rec.violations[i].detail);
	}
}

Test(continuation, not_missing_in_an_aborted_dump)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_HEAP), first_part(0x10),
	       object_aborting(0x20), c(HT_C_END));
	cr_assert_eq(rec.n_violations, 0);
	cr_assert(rec.at_end[0].dump_aborted);
}

/* ---- Many objects: the pending table grows, shifts and sorts ---------------- */

/* A trace built in memory, with what the replay must say of it. */
struct built {
	struct ht_event *evs;
	bool *continues;        /* per event: st.continuation expected */
	size_t n, cap;
	ht_id *missing;         /* CONTINUATION_MISSING ids, in report order */
	size_t n_missing, cap_missing;
	size_t wrong;           /* events whose continuation flag was wrong */
};

static void add(struct built *b, struct ht_event ev, bool continues)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->evs = realloc(b->evs, b->cap * sizeof(*b->evs));
		b->continues = realloc(b->continues,
				       b->cap * sizeof(*b->continues));
		cr_assert(b->evs && b->continues);
	}
	b->evs[b->n] = ev;
	b->continues[b->n++] = continues;
}

static void expect_missing(struct built *b, ht_id id)
{
	if (b->n_missing == b->cap_missing) {
		b->cap_missing = b->cap_missing ? b->cap_missing * 2 : 256;
		b->missing = realloc(b->missing,
				     b->cap_missing * sizeof(*b->missing));
		cr_assert_not_null(b->missing);
	}
	b->missing[b->n_missing++] = id;
}

static uint64_t random_state = 12345;

static size_t random_below(size_t n)
{
	random_state = random_state * 6364136223846793005ULL +
		       1442695040888963407ULL;
	return (size_t)(random_state >> 33) % n;
}

/*
 * One GC dump of n objects (8-byte aligned ids from base), each reported
 * in `parts` parts, the parts of all objects shuffled together (each
 * object's parts stay in order, as one thread reports them). Every odd
 * object loses its last part, so it is missing at gc_finished; ascending
 * ids there, since the objects were numbered in id order.
 */
static void add_shuffled_gc_dump(struct built *b, size_t n, unsigned parts,
				 ht_id base)
{
	size_t *order = calloc(n * parts, sizeof(*order));
	unsigned *sent = calloc(n, sizeof(*sent));

	cr_assert(order && sent);
	for (size_t i = 0; i < n * parts; i++)
		order[i] = i / parts;
	for (size_t i = n * parts - 1; i > 0; i--) {
		size_t j = random_below(i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	add(b, gc_started(), false);
	for (size_t i = 0; i < n * parts; i++) {
		size_t obj = order[i];
		ht_id id = base + obj * 8;
		bool continues = sent[obj] > 0;
		bool last = ++sent[obj] == parts;

		if (!last)
			add(b, middle_part(id), continues);
		else if (obj % 2 == 0)
			add(b, last_part(id), continues);
	}
	add(b, gc_finished(), false);
	for (size_t obj = 1; obj < n; obj += 2)
		expect_missing(b, base + obj * 8);
	free(order);
	free(sent);
}

static int check_continuation(void *ctx, const struct ht_event *ev,
			      const struct ht_replay_state *st)
{
	struct built *b = ctx;

	(void)ev;
	if (st->continuation != b->continues[st->event_index])
		b->wrong++;
	return 0;
}

static void replay_built(struct built *b)
{
	struct ht_replay_callbacks cb = {.on_violation = on_violation};
	struct replayer *r;

	cb.on_event[HT_EV_OBJECT_REFERENCES] = check_continuation;
	r = replayer_new(&cb, b);
	cr_assert_not_null(r);
	for (size_t i = 0; i < b->n; i++)
		cr_assert_eq(replayer_feed(r, &b->evs[i], NULL), 0);
	cr_assert_eq(replayer_finish(r, NULL), 0);
	replayer_free(r);

	cr_assert_eq(b->wrong, 0, "%zu wrong continuation flags", b->wrong);
	cr_assert_eq(rec.n_violations, b->n_missing);
	for (size_t i = 0; i < b->n_missing; i++) {
		char expected[48];

		cr_assert_eq(rec.violations[i].code,
			     HT_V_CONTINUATION_MISSING);
		snprintf(expected, sizeof(expected), "object 0x%llx ",
			 (unsigned long long)b->missing[i]);
		cr_assert(strncmp(rec.violations[i].detail, expected,
				  strlen(expected)) == 0,
			  "%zu: \"%s\", expected \"%s...\"", i,
			  rec.violations[i].detail, expected);
	}
	free(b->evs);
	free(b->continues);
	free(b->missing);
}

Test(pending, thousands_of_objects_in_shuffled_parts)
{
	struct built b = {0};

	add_shuffled_gc_dump(&b, 12000, 3, 0x7f0000000000ULL);
	replay_built(&b);
}

Test(pending, the_table_is_emptied_and_reused_dump_after_dump)
{
	struct built b = {0};

	add_shuffled_gc_dump(&b, 2000, 2, 0x10000);
	add_shuffled_gc_dump(&b, 300, 5, 0x10000);
	add_shuffled_gc_dump(&b, 3000, 2, 0x20000);
	replay_built(&b);
}

/* A small table, nearly half full, dump after dump: runs of entries often
 * wrap round its end, where removal must not move an entry before its
 * home slot. */
Test(pending, runs_that_wrap_round_a_small_table)
{
	struct built b = {0};

	for (ht_id dump = 0; dump < 300; dump++)
		add_shuffled_gc_dump(&b, 31, 3, 0x100000 * (dump + 1));
	replay_built(&b);
}

/* The order of the reports is the order of the ids, not of arrival. */
Test(pending, missing_reports_do_not_depend_on_arrival_order)
{
	char first[64][32];
	size_t n_first = 0;

	for (int run = 0; run < 2; run++) {
		struct built b = {0};

		memset(&rec, 0, sizeof(rec));
		random_state = 99 + (uint64_t)run; /* another shuffle */
		add_shuffled_gc_dump(&b, 100, 3, 0x5000);
		replay_built(&b);
		cr_assert_eq(rec.n_violations, 50);
		for (size_t i = 0; i < rec.n_violations; i++) {
			/* "object 0x... (class ...": the id part. */
			const char *d = rec.violations[i].detail;
			int len = (int)(strchr(d, '(') - d);

			if (run == 0)
				snprintf(first[n_first++], sizeof(first[0]),
					 "%.*s", len, d);
			else
				cr_assert(strncmp(first[i], d, (size_t)len) == 0);
		}
	}
}

/* ---- Where and what: positions and details of violations ----------------- */

Test(violations, carry_the_reader_position_and_the_replay_index)
{
	struct replayer *r = recording_replayer();
	struct ht_event a = c(HT_C_BEGIN);
	struct ht_event b = container(HT_C_RT_JIT, 0x10, 0x99);
	struct ht_position pa = {.event_index = 1000, .offset = 4096};
	struct ht_position pb = {.event_index = 1001, .offset = 4096,
				 .chunk_offset = 12, .line = 3, .column = 5};

	cr_assert_eq(replayer_feed(r, &a, &pa), 0);
	cr_assert_eq(replayer_feed(r, &b, &pb), 0);
	cr_assert_eq(rec.n_violations, 1);
	cr_assert_eq(rec.violations[0].code, HT_V_FRAME_NO_THREAD);
	cr_assert_eq(rec.violations[0].where.event_index, 1);
	cr_assert_eq(rec.violations[0].where.offset, 4096);
	cr_assert_eq(rec.violations[0].where.chunk_offset, 12);
	cr_assert_eq(rec.violations[0].where.line, 3);
	cr_assert_eq(rec.violations[0].where.column, 5);
	cr_assert_str_eq(rec.violations[0].detail,
			 "C_RT_JIT (id1 0x10) with no thread container in "
			 "dump 0");
	replayer_free(r);
}

Test(violations, name_the_dumps_and_gcs_involved)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_END),
	       c(HT_C_BEGIN), c(HT_C_BEGIN),             /* dump 1, then 2 */
	       gc_started(),                             /* in dump 2 */
	       c(HT_C_END), gc_started(),                /* GC 0, then 1 */
	       c(HT_C_BEGIN),                            /* in GC 1 */
	       c(HT_C_END), gc_finished(), gc_finished(),
	       roots(), c(HT_C_HEAP), moved());
	static const char *const details[] = {
		"C_BEGIN inside dump 1, which had no C_END: dump 2 begins",
		"gc_started inside dump 2",
		"gc_started inside GC 0, which had no gc_finished: GC 1 begins",
		"C_BEGIN inside GC 1",
		"gc_finished outside a GC",
		"root_references (2 refs) outside any heap dump or GC",
		"C_HEAP outside a heap dump",
		"moved_references outside a GC",
	};
	cr_assert_eq(rec.n_violations, ARRAY_SIZE(details));
	for (size_t i = 0; i < rec.n_violations; i++)
		cr_assert_str_eq(rec.violations[i].detail, details[i]);
}

Test(violations, name_the_container_or_field)
{
	static const uint8_t bad_kinds[] = {HT_ROOT_STACK, 7};
	struct ht_event bad_roots = roots();

	bad_roots.u.root_references.kinds = bad_kinds;
	REPLAY(c(HT_C_BEGIN), roots(), thread_container(7), bad_roots,
	       c(HT_C_HEAP), roots(), container(HT_C_RT_CLASS, 0x30, 0),
	       c(HT_C_END));
	static const char *const details[] = {
		"root_references (2 refs) in dump 0 before any container",
		"root_references (2 refs): root kind 7 at index 1 out of range",
		"root_references (2 refs) in C_HEAP of dump 0",
		"C_RT_CLASS (id1 0x30) after C_HEAP in dump 0",
	};
	cr_assert_eq(rec.n_violations, ARRAY_SIZE(details));
	for (size_t i = 0; i < rec.n_violations; i++)
		cr_assert_str_eq(rec.violations[i].detail, details[i]);
}

Test(violations, at_the_end_of_the_trace)
{
	REPLAY(c(HT_C_BEGIN), c(HT_C_END), gc_started(), c(HT_C_BEGIN));
	cr_assert_eq(rec.n_violations, 3);
	cr_assert_str_eq(rec.violations[1].detail, "dump 1 has no C_END");
	cr_assert_str_eq(rec.violations[2].detail, "GC 0 has no gc_finished");
	cr_assert_eq(rec.violations[2].where.event_index, 4);
}

/* doc/design.md section 5: the seed's relocation example, then a dump. */
Test(violations, none_in_the_design_example)
{
	static const ht_id refs_of_7[] = {0x08, 0};
	struct ht_event obj = object_of(0x07, 0x100, 1, 0);

	obj.u.object_references.refs = refs_of_7;
	cr_assert_eq(REPLAY(gc_started(), moved(), gc_finished(),
			    c(HT_C_BEGIN), thread_container(7), roots(),
			    c(HT_C_HEAP), obj, c(HT_C_END)), 0);
	cr_assert_eq(rec.n_violations, 0);
	assert_log("gc_started moved_references gc_finished begin:0 C_BEGIN "
		   "C_RT_THREAD root_references C_HEAP object_references "
		   "C_END end:0");
	cr_assert_eq(rec.summary.events, 9);
	cr_assert_eq(rec.summary.dumps, 1);
	cr_assert_eq(rec.summary.gcs, 1);
	cr_assert_eq(rec.at[5].thread_id, 7);
}

/* ---- ht_replay over a reader ---------------------------------------------- */

/* A source that yields an array of events, then the end or an error. */
struct fake_source {
	const struct ht_event *evs;
	size_t n, next;
	bool fail_at_end;
};

static int fake_next(void *self, struct ht_event *ev, struct ht_error *err)
{
	struct fake_source *f = self;

	if (f->next == f->n) {
		if (!f->fail_at_end)
			return 0;
		err->code = HT_E_CORRUPT;
		err->offset = 9999;
		snprintf(err->message, sizeof(err->message),
			 "fake: byte 9999: chunk CRC mismatch");
		return -1;
	}
	*ev = f->evs[f->next++];
	return 1;
}

static struct ht_position fake_position(const void *self)
{
	const struct fake_source *f = self;

	return (struct ht_position){
		.event_index = f->next ? f->next - 1 : 0,
		.offset = 100 * f->next,
	};
}

static const struct ht_source_ops fake_ops = {
	.format = "fake",
	.next = fake_next,
	.position = fake_position,
};

static int replay_reader(const struct ht_event *evs, size_t n, bool fail,
			 struct ht_error *err)
{
	struct fake_source f = {.evs = evs, .n = n, .fail_at_end = fail};
	struct ht_reader reader = {.ops = &fake_ops, .self = &f};
	struct ht_replay_callbacks cb = recording_callbacks();

	return ht_replay(&reader, &cb, &rec, &rec.summary, err);
}

Test(ht_replay, replays_a_whole_reader)
{
	const struct ht_event evs[] = {
		c(HT_C_BEGIN), thread_container(7),
		container(HT_C_RT_JIT, 0x10, 0x99), roots(), c(HT_C_END),
		c(HT_C_RT_CLASS),
	};
	struct ht_error err;

	cr_assert_eq(replay_reader(evs, 6, false, &err), 0);
	assert_log("begin:0 C_BEGIN C_RT_THREAD C_RT_JIT root_references "
		   "C_END end:0 v:dump-not-open C_RT_CLASS");
	cr_assert_eq(rec.violations[0].where.offset, 600);
	cr_assert_eq(rec.violations[0].where.event_index, 5);
	cr_assert_eq(rec.summary.events, 6);
	cr_assert_eq(rec.summary.dumps, 1);
	cr_assert_eq(rec.summary.gcs, 0);
	cr_assert_eq(rec.summary.violations, 1);
	cr_assert_not(rec.summary.read_error);
	cr_assert_eq(err.code, HT_OK);
}

Test(ht_replay, a_read_error_still_ends_what_was_read)
{
	const struct ht_event evs[] = {c(HT_C_BEGIN), thread_container(7)};
	struct ht_error err;

	cr_assert_eq(replay_reader(evs, 2, true, &err), -1);
	cr_assert_eq(err.code, HT_E_CORRUPT);
	cr_assert(rec.summary.read_error);
	cr_assert_eq(rec.summary.events, 2);
	assert_log("begin:0 C_BEGIN C_RT_THREAD v:dump-unfinished end:0");
}

Test(ht_replay, returns_what_a_callback_stopped_with)
{
	const struct ht_event evs[] = {
		c(HT_C_BEGIN), roots(), c(HT_C_END),
	};
	struct ht_error err;

	rec.stop_on_type = HT_EV_ROOT_REFERENCES;
	cr_assert_eq(replay_reader(evs, 3, false, &err), 42);
	/* Stopped: no finish, no end of the dump. */
	assert_log("begin:0 C_BEGIN v:roots-no-container root_references");
	cr_assert_eq(rec.summary.events, 2);
}

Test(ht_replay, an_empty_trace)
{
	cr_assert_eq(replay_reader(NULL, 0, false, NULL), 0);
	assert_log("");
	cr_assert_eq(rec.summary.events, 0);
	cr_assert_eq(rec.summary.dumps, 0);
}
