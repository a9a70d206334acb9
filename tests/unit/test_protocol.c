/*
 * test_protocol.c - the protocol state machine (src/lib/common/protocol.c), rule
 * by rule: for each rule of doc/design.md section 2, a trace that keeps it and
 * one that breaks it, with the exact violation and the bracket effects,
 * and how the state moves on after a violation.
 */
#include <criterion/criterion.h>

#include "lib/common/protocol.h"
#include "util/alloc.h"

#include <string.h>

/* ---- Events, tersely ---------------------------------------------------- */

static const ht_id two_refs[] = {0x1000, 0};
static const uint32_t two_flags[] = {0, 0};
static const struct ht_generation_range gen0_range[] = {
	{.generation = 0, .start = 0x1000, .length = 0x100, .reserved = 0x1000},
};
static const struct ht_moved_block one_move[] = {
	{.old_id = 0x1000, .new_id = 0x800, .length = 0x10},
};
static const struct ht_surviving_block one_survival[] = {
	{.start = 0x2000, .length = 0x10},
};

static struct ht_event container(enum ht_container_type type, ht_id id1)
{
	return (struct ht_event){
		.type = HT_EV_BEGIN_CONTAINER,
		.u.begin_container = {.type = type, .id1 = id1},
	};
}

static struct ht_event c(enum ht_container_type type)
{
	return container(type, 0);
}

static struct ht_event roots_with(enum ht_result result, const uint8_t *kinds)
{
	return (struct ht_event){
		.type = HT_EV_ROOT_REFERENCES,
		.u.root_references = {.count = 2, .refs = two_refs,
				      .flags = two_flags, .kinds = kinds,
				      .result = result},
	};
}

static struct ht_event roots(void)
{
	return roots_with(HT_RESULT_OK, NULL);
}

static struct ht_event object_with(enum ht_result result)
{
	return (struct ht_event){
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = {.id = 0x1000, .class_id = 0x10,
					.size = 24, .count = 2,
					.refs = two_refs, .result = result},
	};
}

static struct ht_event object(void)
{
	return object_with(HT_RESULT_OK);
}

static struct ht_event plain(enum ht_event_type type)
{
	return (struct ht_event){.type = type};
}

static struct ht_event gc_started(void)
{
	return (struct ht_event){
		.type = HT_EV_GC_STARTED,
		.u.gc_started = {.generations = 0x7, .reason = HT_GC_INDUCED},
	};
}

static struct ht_event gc_finished(void)
{
	return plain(HT_EV_GC_FINISHED);
}

static struct ht_event bounds(void)
{
	return (struct ht_event){
		.type = HT_EV_GENERATION_BOUNDS,
		.u.generation_bounds = {.count = 1, .ranges = gen0_range},
	};
}

static struct ht_event moved(void)
{
	return (struct ht_event){
		.type = HT_EV_MOVED_REFERENCES,
		.u.moved_references = {.count = 1, .blocks = one_move},
	};
}

static struct ht_event surviving(void)
{
	return (struct ht_event){
		.type = HT_EV_SURVIVING_REFERENCES,
		.u.surviving_references = {.count = 1, .blocks = one_survival},
	};
}

/* ---- Stepping with expectations ----------------------------------------- */

#define NONE 0u
#define BEGIN PROTO_DUMP_BEGIN
#define END PROTO_DUMP_END
#define GC_BEGIN PROTO_GC_BEGIN
#define GC_END PROTO_GC_END

/* Steps ev and checks the violation and the effects, naming the line. */
#define EXPECT(s, ev, code, fx) expect(__LINE__, (s), (ev), (code), (fx))
#define CLEAN(s, ev) EXPECT((s), (ev), HT_V_NONE, NONE)

static void expect(int line, struct proto_state *s, struct ht_event ev,
		   enum ht_violation_code code, unsigned fx)
{
	unsigned effects = 0xdeadu;
	enum ht_violation_code got = proto_step(s, &ev, &effects);

	cr_assert_eq(got, code, "line %d: got %s, expected %s", line,
		     ht_violation_name(got), ht_violation_name(code));
	cr_assert_eq(effects, fx, "line %d: effects 0x%x, expected 0x%x",
		     line, effects, fx);
}

static struct proto_state fresh(void)
{
	struct proto_state s;

	proto_init(&s);
	return s;
}

static struct proto_state in_dump(void)
{
	struct proto_state s = fresh();

	EXPECT(&s, c(HT_C_BEGIN), HT_V_NONE, BEGIN);
	return s;
}

static struct proto_state in_thread(void)
{
	struct proto_state s = in_dump();

	CLEAN(&s, container(HT_C_RT_THREAD, 7));
	return s;
}

static struct proto_state in_heap(void)
{
	struct proto_state s = in_thread();

	CLEAN(&s, c(HT_C_HEAP));
	return s;
}

static struct proto_state in_gc(void)
{
	struct proto_state s = fresh();

	EXPECT(&s, gc_started(), HT_V_NONE, GC_BEGIN);
	return s;
}

/* In a GC that has had references: its dump is open. */
static struct proto_state in_gc_dump(void)
{
	struct proto_state s = in_gc();

	EXPECT(&s, object(), HT_V_NONE, BEGIN);
	return s;
}

static struct proto_state aborted_dump(void)
{
	struct proto_state s = in_thread();

	CLEAN(&s, roots_with(HT_RESULT_ABORT, NULL));
	return s;
}

static void assert_same_state(const struct proto_state *a,
			      const struct proto_state *b)
{
	cr_assert(memcmp(a, b, sizeof(*a)) == 0, "the state changed");
}

static const enum ht_container_type frames[] = {
	HT_C_RT_JIT, HT_C_RT_NATIVE, HT_C_RT_NATIVEGC, HT_C_RT_COM,
	HT_C_RT_INTERPRETED, HT_C_RT_FASTINTERPRETED, HT_C_RT_INTERNALFRAME,
};
#define N_FRAMES (ARRAY_SIZE(frames))

/* ---- A heap dump is C_BEGIN ... C_END ----------------------------------- */

Test(dump, opens_with_c_begin_and_closes_with_c_end)
{
	struct proto_state s = fresh(), start = fresh();

	EXPECT(&s, c(HT_C_BEGIN), HT_V_NONE, BEGIN);
	cr_assert(s.in_dump);
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	assert_same_state(&s, &start);
	cr_assert_eq(proto_finish(&s), HT_V_NONE);
}

Test(dump, may_follow_another)
{
	struct proto_state s = in_dump();

	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	EXPECT(&s, c(HT_C_BEGIN), HT_V_NONE, BEGIN);
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
}

Test(dump, c_begin_inside_a_dump_is_nested_and_starts_a_new_dump)
{
	struct proto_state s = in_heap();

	EXPECT(&s, c(HT_C_BEGIN), HT_V_DUMP_NESTED, END | BEGIN);
	/* The new dump is fresh: no C_HEAP begun, no thread. */
	EXPECT(&s, c(HT_C_RT_JIT), HT_V_FRAME_NO_THREAD, NONE);
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
}

Test(dump, c_end_outside_a_dump_is_not_open_and_ignored)
{
	struct proto_state s = fresh(), before = fresh();

	EXPECT(&s, c(HT_C_END), HT_V_DUMP_NOT_OPEN, NONE);
	assert_same_state(&s, &before);
}

Test(dump, a_container_outside_a_dump_is_not_open_and_ignored)
{
	for (unsigned t = HT_C_RT_THREAD; t <= HT_C_HEAP; t++) {
		struct proto_state s = fresh(), before = fresh();

		EXPECT(&s, container(t, 1), HT_V_DUMP_NOT_OPEN, NONE);
		assert_same_state(&s, &before);
	}
}

Test(dump, a_container_after_c_end_is_not_open)
{
	struct proto_state s = in_dump();

	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	EXPECT(&s, container(HT_C_RT_CLASS, 5), HT_V_DUMP_NOT_OPEN, NONE);
}

Test(dump, unfinished_at_the_end_of_the_trace)
{
	struct proto_state s = in_thread();

	cr_assert_eq(proto_finish(&s), HT_V_DUMP_UNFINISHED);
}

/* ---- Containers --------------------------------------------------------- */

Test(containers, a_frame_after_its_thread_is_fine)
{
	for (size_t i = 0; i < N_FRAMES; i++) {
		struct proto_state s = in_thread();

		CLEAN(&s, container(frames[i], 0x10));
		CLEAN(&s, roots());
	}
}

Test(containers, a_frame_with_no_thread_container_in_the_dump)
{
	for (size_t i = 0; i < N_FRAMES; i++) {
		struct proto_state s = in_dump();

		CLEAN(&s, container(HT_C_RT_CLASS, 3));
		EXPECT(&s, container(frames[i], 0x10), HT_V_FRAME_NO_THREAD,
		       NONE);
		/* Taken as the current container all the same. */
		cr_assert_eq(s.container, frames[i]);
		CLEAN(&s, roots());
	}
}

Test(containers, a_thread_of_an_earlier_dump_does_not_count)
{
	struct proto_state s = in_thread();

	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	EXPECT(&s, c(HT_C_BEGIN), HT_V_NONE, BEGIN);
	EXPECT(&s, container(HT_C_RT_JIT, 0x10), HT_V_FRAME_NO_THREAD, NONE);
}

Test(containers, other_root_containers_need_no_thread)
{
	for (unsigned t = HT_C_RT_INTERNALVM; t <= HT_C_RT_FINALIZED; t++) {
		struct proto_state s = in_dump();

		CLEAN(&s, container(t, 1));
		CLEAN(&s, roots());
	}
}

Test(containers, the_same_container_may_be_begun_again)
{
	struct proto_state s = in_thread();

	CLEAN(&s, container(HT_C_RT_CLASS, 5));
	CLEAN(&s, roots());
	CLEAN(&s, container(HT_C_RT_CLASS, 6));
	CLEAN(&s, container(HT_C_RT_CLASS, 5));
	CLEAN(&s, roots());
	CLEAN(&s, container(HT_C_RT_THREAD, 7));
	CLEAN(&s, container(HT_C_RT_JIT, 0x10));
}

Test(containers, c_heap_last_then_c_end_is_fine)
{
	struct proto_state s = in_heap();

	CLEAN(&s, object());
	CLEAN(&s, object());
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
}

Test(containers, c_heap_may_be_begun_again)
{
	struct proto_state s = in_heap();

	CLEAN(&s, object());
	CLEAN(&s, c(HT_C_HEAP));
	CLEAN(&s, object());
}

Test(containers, any_other_container_after_c_heap)
{
	for (unsigned t = HT_C_RT_THREAD; t < HT_C_HEAP; t++) {
		struct proto_state s = in_heap();

		EXPECT(&s, container(t, 1), HT_V_AFTER_HEAP, NONE);
		cr_assert_eq(s.container, t);
		/* C_HEAP is still behind us: the next one is reported too. */
		EXPECT(&s, container(HT_C_RT_CLASS, 2), HT_V_AFTER_HEAP, NONE);
		EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	}
}

/* ---- Root references ------------------------------------------------------ */

Test(roots, in_a_container_are_fine)
{
	struct proto_state s = in_thread();

	CLEAN(&s, roots());
	CLEAN(&s, container(HT_C_RT_JIT, 0x10));
	CLEAN(&s, roots());
	CLEAN(&s, object());
}

Test(roots, before_any_container)
{
	struct proto_state s = in_dump();

	EXPECT(&s, roots(), HT_V_ROOTS_NO_CONTAINER, NONE);
	/* Objects need no container. */
	CLEAN(&s, object());
}

Test(roots, in_c_heap)
{
	struct proto_state s = in_heap();

	EXPECT(&s, roots(), HT_V_ROOTS_IN_HEAP, NONE);
	CLEAN(&s, object());
}

Test(roots, in_a_container_begun_after_c_heap_are_not_in_c_heap)
{
	struct proto_state s = in_heap();

	EXPECT(&s, container(HT_C_RT_CLASS, 2), HT_V_AFTER_HEAP, NONE);
	CLEAN(&s, roots());
}

Test(roots, kinds_in_range_are_fine)
{
	static const uint8_t kinds[] = {HT_ROOT_OTHER, HT_ROOT_HANDLE};
	struct proto_state s = in_thread();

	CLEAN(&s, roots_with(HT_RESULT_OK, kinds));
}

/* ---- References outside dumps and GCs ----------------------------------- */

Test(refs, outside_any_dump_or_gc)
{
	struct proto_state s = fresh(), before = fresh();

	EXPECT(&s, roots(), HT_V_REFS_OUTSIDE, NONE);
	EXPECT(&s, object(), HT_V_REFS_OUTSIDE, NONE);
	/* Not even an abort is taken from them. */
	EXPECT(&s, object_with(HT_RESULT_ABORT), HT_V_REFS_OUTSIDE, NONE);
	assert_same_state(&s, &before);
}

Test(refs, after_the_dump_ended)
{
	struct proto_state s = in_heap();

	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	EXPECT(&s, object(), HT_V_REFS_OUTSIDE, NONE);
}

Test(refs, after_the_gc_finished)
{
	struct proto_state s = in_gc_dump();

	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END | END);
	EXPECT(&s, roots(), HT_V_REFS_OUTSIDE, NONE);
}

/* ---- Abort ---------------------------------------------------------------- */

Test(abort, only_c_end_follows_and_the_next_dump_is_clean)
{
	struct proto_state s = aborted_dump();

	cr_assert(s.aborted);
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	EXPECT(&s, c(HT_C_BEGIN), HT_V_NONE, BEGIN);
	CLEAN(&s, container(HT_C_RT_THREAD, 7));
	CLEAN(&s, roots());
}

Test(abort, from_object_references_too)
{
	struct proto_state s = in_heap();

	CLEAN(&s, object_with(HT_RESULT_ABORT));
	EXPECT(&s, object(), HT_V_AFTER_ABORT, NONE);
}

Test(abort, then_a_container)
{
	struct proto_state s = aborted_dump();

	EXPECT(&s, container(HT_C_RT_CLASS, 5), HT_V_AFTER_ABORT, NONE);
	EXPECT(&s, c(HT_C_HEAP), HT_V_AFTER_ABORT, NONE);
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
}

Test(abort, then_references)
{
	struct proto_state s = aborted_dump();

	EXPECT(&s, roots(), HT_V_AFTER_ABORT, NONE);
	EXPECT(&s, object(), HT_V_AFTER_ABORT, NONE);
}

Test(abort, metadata_events_are_not_part_of_the_dump)
{
	struct proto_state s = aborted_dump();

	CLEAN(&s, plain(HT_EV_CLASS));
	CLEAN(&s, plain(HT_EV_THREAD));
	CLEAN(&s, plain(HT_EV_METHOD));
	CLEAN(&s, plain(HT_EV_OBJECT_ALLOCATED));
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
}

Test(abort, postpone_is_not_an_abort)
{
	struct proto_state s = in_thread();

	CLEAN(&s, roots_with(HT_RESULT_POSTPONE, NULL));
	CLEAN(&s, c(HT_C_HEAP));
	CLEAN(&s, object_with(HT_RESULT_POSTPONE));
	CLEAN(&s, object());
}

Test(abort, in_a_gc_dump)
{
	struct proto_state s = in_gc_dump(), start = fresh();

	CLEAN(&s, object_with(HT_RESULT_ABORT));
	EXPECT(&s, roots(), HT_V_AFTER_ABORT, NONE);
	CLEAN(&s, moved());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END | END);
	assert_same_state(&s, &start);
	/* The next GC's dump starts clean. */
	EXPECT(&s, gc_started(), HT_V_NONE, GC_BEGIN);
	EXPECT(&s, object(), HT_V_NONE, BEGIN);
	CLEAN(&s, object());
}

/* ---- GCs ------------------------------------------------------------------ */

Test(gc, started_then_finished)
{
	struct proto_state s = fresh(), start = fresh();

	EXPECT(&s, gc_started(), HT_V_NONE, GC_BEGIN);
	CLEAN(&s, moved());
	CLEAN(&s, surviving());
	CLEAN(&s, plain(HT_EV_OBJECT_ALLOCATED));
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
	assert_same_state(&s, &start);
}

Test(gc, started_inside_a_gc_is_nested_and_starts_a_new_gc)
{
	struct proto_state s = in_gc();

	EXPECT(&s, gc_started(), HT_V_GC_NESTED, GC_END | GC_BEGIN);
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
}

Test(gc, nested_start_ends_the_gc_dump_of_the_open_gc)
{
	struct proto_state s = in_gc_dump();

	EXPECT(&s, gc_started(), HT_V_GC_NESTED, END | GC_END | GC_BEGIN);
	/* The new GC's first references begin its own dump. */
	EXPECT(&s, object(), HT_V_NONE, BEGIN);
}

Test(gc, finished_outside_a_gc_does_nothing)
{
	struct proto_state s = fresh(), before = fresh();

	EXPECT(&s, gc_finished(), HT_V_GC_NOT_OPEN, NONE);
	assert_same_state(&s, &before);
}

Test(gc, moves_and_survivals_outside_a_gc)
{
	struct proto_state s = fresh(), before = fresh();

	EXPECT(&s, moved(), HT_V_GC_NOT_OPEN, NONE);
	EXPECT(&s, surviving(), HT_V_GC_NOT_OPEN, NONE);
	assert_same_state(&s, &before);
}

Test(gc, moves_after_the_gc_finished)
{
	struct proto_state s = in_gc();

	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
	EXPECT(&s, moved(), HT_V_GC_NOT_OPEN, NONE);
}

Test(gc, started_inside_a_heap_dump)
{
	struct proto_state s = in_thread();

	EXPECT(&s, gc_started(), HT_V_GC_IN_DUMP, GC_BEGIN);
	/* Both go on: the dump's references stay the dump's, the GC's
	 * blocks the GC's, and each closes cleanly. */
	CLEAN(&s, roots());
	CLEAN(&s, moved());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
	CLEAN(&s, c(HT_C_HEAP));
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
}

Test(gc, unfinished_at_the_end_of_the_trace)
{
	struct proto_state s = in_gc();

	cr_assert_eq(proto_finish(&s), HT_V_GC_UNFINISHED);
}

Test(gc, an_unfinished_dump_is_named_before_an_unfinished_gc)
{
	struct proto_state s = in_gc();

	EXPECT(&s, c(HT_C_BEGIN), HT_V_DUMP_IN_GC, BEGIN);
	cr_assert_eq(proto_finish(&s), HT_V_DUMP_UNFINISHED);
}

/* ---- No heap dump inside a GC ------------------------------------------- */

Test(dump_in_gc, c_begin_inside_a_gc)
{
	struct proto_state s = in_gc();

	EXPECT(&s, c(HT_C_BEGIN), HT_V_DUMP_IN_GC, BEGIN);
	/* The dump runs its course; the GC stays open around it. */
	CLEAN(&s, container(HT_C_RT_THREAD, 7));
	CLEAN(&s, roots());
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	CLEAN(&s, moved());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
}

Test(dump_in_gc, c_begin_ends_the_gc_dump_first)
{
	struct proto_state s = in_gc_dump();

	EXPECT(&s, c(HT_C_BEGIN), HT_V_DUMP_IN_GC, END | BEGIN);
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	/* That GC dump was closed already: gc_finished ends only the GC. */
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
}

/* ---- GC dumps: references inside a GC ------------------------------------ */

Test(gc_dump, first_references_begin_it_and_gc_finished_ends_it)
{
	struct proto_state s = in_gc();

	CLEAN(&s, moved());
	EXPECT(&s, roots_with(HT_RESULT_OK, NULL), HT_V_NONE, BEGIN);
	CLEAN(&s, object());
	CLEAN(&s, roots());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END | END);
}

Test(gc_dump, needs_no_container)
{
	struct proto_state s = in_gc();

	/* What would be roots before any container in a heap dump. */
	EXPECT(&s, roots(), HT_V_NONE, BEGIN);
}

Test(gc_dump, a_gc_without_references_has_no_dump)
{
	struct proto_state s = in_gc();

	CLEAN(&s, moved());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
}

Test(gc_dump, containers_outside_c_begin_are_not_open)
{
	struct proto_state s = in_gc_dump();

	EXPECT(&s, container(HT_C_RT_CLASS, 7), HT_V_DUMP_NOT_OPEN, NONE);
	EXPECT(&s, c(HT_C_HEAP), HT_V_DUMP_NOT_OPEN, NONE);
	EXPECT(&s, c(HT_C_END), HT_V_DUMP_NOT_OPEN, NONE);
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END | END);
}

/* The CLR recorder's stack roots: a thread's frames inside the GC dump. */
Test(gc_dump, thread_and_frame_containers_hold_its_stack_roots)
{
	struct proto_state s = in_gc();

	EXPECT(&s, container(HT_C_RT_THREAD, 7), HT_V_NONE, BEGIN);
	CLEAN(&s, container(HT_C_RT_JIT, 1));
	CLEAN(&s, roots());
	CLEAN(&s, container(HT_C_RT_THREAD, 8));
	CLEAN(&s, container(HT_C_RT_JIT, 2));
	CLEAN(&s, object());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END | END);
}

Test(gc_dump, a_frame_needs_a_thread_there_too)
{
	struct proto_state s = in_gc_dump();

	EXPECT(&s, container(HT_C_RT_JIT, 1), HT_V_FRAME_NO_THREAD, NONE);
	CLEAN(&s, container(HT_C_RT_THREAD, 7));
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END | END);
	/* the next GC dump starts with no thread */
	s = in_gc_dump();
	EXPECT(&s, container(HT_C_RT_JIT, 1), HT_V_FRAME_NO_THREAD, NONE);
}

/* ---- generation_bounds ---------------------------------------------------- */

Test(bounds, outside_a_gc_are_fine)
{
	struct proto_state s = fresh();

	CLEAN(&s, bounds());
	CLEAN(&s, bounds());
}

Test(bounds, at_the_start_and_at_the_finish_of_a_gc_are_fine)
{
	struct proto_state s = fresh();

	EXPECT(&s, gc_started(), HT_V_NONE, GC_BEGIN);
	CLEAN(&s, bounds());
	CLEAN(&s, bounds());
	CLEAN(&s, moved());
	CLEAN(&s, surviving());
	EXPECT(&s, object(), HT_V_NONE, BEGIN);
	CLEAN(&s, bounds());
	CLEAN(&s, bounds());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END | END);
	CLEAN(&s, bounds());
}

Test(bounds, alone_in_a_gc_are_fine)
{
	struct proto_state s = in_gc();

	CLEAN(&s, bounds());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
}

Test(bounds, between_body_events_are_reported_on_the_next_body_event)
{
	struct ht_event body[] = {moved(), surviving(), roots(), object()};

	for (size_t i = 0; i < ARRAY_SIZE(body); i++) {
		struct proto_state s = in_gc_dump();

		CLEAN(&s, moved());
		CLEAN(&s, bounds()); /* may yet be finishing bounds */
		EXPECT(&s, body[i], HT_V_BOUNDS_IN_GC, NONE);
		/* Back in the body: the next body event is fine. */
		CLEAN(&s, moved());
		EXPECT(&s, gc_finished(), HT_V_NONE, GC_END | END);
	}
}

Test(bounds, in_the_middle_before_the_first_references)
{
	struct proto_state s = in_gc();

	CLEAN(&s, moved());
	CLEAN(&s, bounds());
	/* The references still begin the GC's dump. */
	EXPECT(&s, object(), HT_V_BOUNDS_IN_GC, BEGIN);
}

Test(bounds, in_a_heap_dump_nested_in_a_gc_do_not_count)
{
	struct proto_state s = in_gc();

	CLEAN(&s, moved());
	EXPECT(&s, c(HT_C_BEGIN), HT_V_DUMP_IN_GC, BEGIN);
	CLEAN(&s, container(HT_C_RT_CLASS, 1));
	CLEAN(&s, roots());
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	CLEAN(&s, bounds());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
}

/* ---- Values out of range ------------------------------------------------- */

Test(values, container_types_out_of_range_leave_the_state_alone)
{
	static const unsigned bad[] = {0, HT_C_LAST + 1, 255, 1000};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct proto_state s = in_thread(), before = in_thread();
		struct proto_state out = fresh(), out_before = fresh();

		EXPECT(&s, c(bad[i]), HT_V_BAD_VALUE, NONE);
		assert_same_state(&s, &before);
		EXPECT(&out, c(bad[i]), HT_V_BAD_VALUE, NONE);
		assert_same_state(&out, &out_before);
	}
}

Test(values, root_kinds_past_handle)
{
	static const uint8_t kinds[] = {HT_ROOT_STACK, HT_ROOT_HANDLE + 1};
	struct proto_state s = in_gc();

	/* Still stepped: they open the GC's dump. */
	EXPECT(&s, roots_with(HT_RESULT_OK, kinds), HT_V_BAD_VALUE, BEGIN);
}

Test(values, results_past_abort)
{
	struct proto_state s = in_heap();

	EXPECT(&s, roots_with(3, NULL), HT_V_BAD_VALUE, NONE);
	EXPECT(&s, object_with(3), HT_V_BAD_VALUE, NONE);
	/* An unknown result is no abort. */
	CLEAN(&s, object());
}

Test(values, are_reported_before_the_order)
{
	struct proto_state s = fresh();

	EXPECT(&s, object_with(7), HT_V_BAD_VALUE, NONE);
}

Test(values, gc_reason_out_of_range_still_starts_the_gc)
{
	struct proto_state s = fresh();
	struct ht_event ev = gc_started();

	ev.u.gc_started.reason = 2;
	EXPECT(&s, ev, HT_V_BAD_VALUE, GC_BEGIN);
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
}

Test(values, generations_past_the_gc_bit_set)
{
	static const struct ht_generation_range ranges[] = {
		{.generation = HT_GEN_POH}, {.generation = HT_GEN_MAX + 1},
	};
	struct proto_state s = in_gc();
	struct ht_event b = bounds(), o = object();

	b.u.generation_bounds.ranges = ranges;
	b.u.generation_bounds.count = 1;
	CLEAN(&s, b);
	b.u.generation_bounds.count = 2;
	EXPECT(&s, b, HT_V_BAD_VALUE, NONE);
	o.u.object_references.has_generation = true;
	o.u.object_references.generation = HT_GEN_MAX + 1;
	EXPECT(&s, o, HT_V_BAD_VALUE, BEGIN);
	o.u.object_references.generation = HT_GEN_MAX;
	CLEAN(&s, o);
}

Test(values, unknown_event_types)
{
	struct proto_state s = in_thread(), before = in_thread();

	EXPECT(&s, plain(0), HT_V_BAD_VALUE, NONE);
	EXPECT(&s, plain(HT_EV_LAST + 1), HT_V_BAD_VALUE, NONE);
	assert_same_state(&s, &before);
}

Test(values, are_described_for_messages)
{
	static const uint8_t kinds[] = {HT_ROOT_STACK, 9};
	struct ht_event bad_container = c(17);
	struct ht_event bad_kind = roots_with(HT_RESULT_OK, kinds);
	struct ht_event bad_result = object_with(5);
	struct ht_event fine = roots();
	char buf[64];

	cr_assert(proto_describe_bad_value(&bad_container, buf, sizeof(buf)));
	cr_assert_str_eq(buf, "container type 17");
	cr_assert(proto_describe_bad_value(&bad_kind, buf, sizeof(buf)));
	cr_assert_str_eq(buf, "root kind 9 at index 1");
	cr_assert(proto_describe_bad_value(&bad_result, buf, sizeof(buf)));
	cr_assert_str_eq(buf, "result 5");
	cr_assert_not(proto_describe_bad_value(&fine, buf, sizeof(buf)));
}

/* ---- Whole traces ---------------------------------------------------------- */

/* doc/design.md section 5: the seed's relocation example, then a dump. */
Test(trace, the_design_example_is_clean)
{
	static const ht_id obj_refs[] = {0x08, 0};
	struct ht_event obj = object();
	struct proto_state s = fresh(), start = fresh();

	obj.u.object_references.id = 0x07;
	obj.u.object_references.refs = obj_refs;
	EXPECT(&s, gc_started(), HT_V_NONE, GC_BEGIN);
	CLEAN(&s, moved());
	EXPECT(&s, gc_finished(), HT_V_NONE, GC_END);
	EXPECT(&s, c(HT_C_BEGIN), HT_V_NONE, BEGIN);
	CLEAN(&s, container(HT_C_RT_THREAD, 7));
	CLEAN(&s, roots());
	CLEAN(&s, c(HT_C_HEAP));
	CLEAN(&s, obj);
	EXPECT(&s, c(HT_C_END), HT_V_NONE, END);
	cr_assert_eq(proto_finish(&s), HT_V_NONE);
	assert_same_state(&s, &start);
}

/* The shim steps copies under a CAS and may retry: the same state and
 * event must give the same result every time. */
Test(trace, a_step_is_a_function_of_state_and_event)
{
	struct ht_event evs[] = {
		c(HT_C_BEGIN), container(HT_C_RT_JIT, 1), roots(), c(HT_C_HEAP),
		gc_started(), object_with(HT_RESULT_ABORT), c(HT_C_BEGIN),
		c(HT_C_END), moved(), bounds(), object(), gc_finished(),
	};
	struct proto_state s = fresh();

	for (size_t i = 0; i < ARRAY_SIZE(evs); i++) {
		struct proto_state a = s, b = s;
		unsigned fa, fb;

		cr_assert_eq(proto_step(&a, &evs[i], &fa),
			     proto_step(&b, &evs[i], &fb));
		cr_assert_eq(fa, fb);
		assert_same_state(&a, &b);
		s = a;
	}
}

Test(trace, effects_may_be_null)
{
	struct proto_state s = fresh();
	struct ht_event ev = c(HT_C_BEGIN);

	cr_assert_eq(proto_step(&s, &ev, NULL), HT_V_NONE);
	cr_assert(s.in_dump);
}
