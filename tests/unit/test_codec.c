/*
 * test_codec.c - event coding (codec.h): every event type survives
 * encoding and decoding with its optional fields present and absent, ids
 * at the limits of the delta coding, the shim's parallel-array forms, the
 * worst-case bound, the file header payload, and malformed payloads, which
 * must be refused without crashing or allocating beyond their size.
 */
#include <criterion/criterion.h>

#include <heaptrace/record.h>

#include "lib/common/codec.h"
#include "htbuild.h"
#include "lib/common/varint.h"
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>


/* ---- helpers ------------------------------------------------------------ */

struct payload {
	uint8_t *data;
	size_t len;
	size_t *ends; /* where each event ends */
};

static struct payload encode(const struct ht_event *evs, size_t n)
{
	struct payload p = { 0 };
	struct codec_enc e;
	size_t bound = 0;

	for (size_t i = 0; i < n; i++)
		bound += codec_event_bound(&evs[i]);
	p.data = malloc(bound ? bound : 1);
	p.ends = malloc((n ? n : 1) * sizeof(*p.ends));
	cr_assert(p.data && p.ends);
	codec_enc_init(&e, p.data, bound);
	for (size_t i = 0; i < n; i++) {
		codec_put_event(&e, &evs[i]);
		p.ends[i] = codec_enc_used(&e);
	}
	cr_assert_leq(codec_enc_used(&e), bound);
	p.len = codec_enc_used(&e);
	return p;
}

static void payload_free(struct payload *p)
{
	free(p->data);
	free(p->ends);
}

/* Decodes evs back from their encoding, one by one, and checks the end. */
static void assert_round_trip(const struct ht_event *evs, size_t n)
{
	struct payload p = encode(evs, n);
	struct codec_dec d;
	struct ht_event ev;
	const char *why = NULL;

	codec_dec_init(&d);
	codec_dec_reset(&d, p.data, p.len);
	for (size_t i = 0; i < n; i++) {
		int rc = codec_get_event(&d, &ev, &why);

		cr_assert_eq(rc, 1, "event %zu (%s): rc %d, %s", i,
			     ht_event_name(evs[i].type), rc, why ? why : "");
		cr_assert(htb_event_equal(&ev, &evs[i]), "event %zu: %s", i,
			  htb_event_diff(&ev, &evs[i]));
		cr_assert_eq((size_t)(d.p - d.start), p.ends[i]);
	}
	cr_assert_eq(codec_get_event(&d, &ev, &why), 0, "end of payload");
	codec_dec_free(&d);
	payload_free(&p);
}

static void assert_one_round_trips(const struct ht_event *ev)
{
	assert_round_trip(ev, 1);
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Values that stress the coding: extremes more often than chance. */
static uint64_t rnd_value(void)
{
	switch (rnd_below(6)) {
	case 0:
		return 0;
	case 1:
		return UINT64_MAX - rnd_below(3);
	case 2:
		return ((uint64_t)1 << 63) + rnd_below(3) - 1;
	case 3:
		return rnd_below(300);
	default:
		return rnd();
	}
}

static uint32_t rnd_u32(void)
{
	return rnd_below(2) ? (uint32_t)rnd() : (uint32_t)rnd_below(4) * 0x10000u;
}

/* ---- every event type ------------------------------------------------- */

Test(codec, class_round_trips_with_and_without_size_and_name)
{
	const struct ht_event evs[] = {
		{ .type = HT_EV_CLASS, .u.class_ = { 0x100, "System.Object",
						     true, 24 } },
		{ .type = HT_EV_CLASS, .u.class_ = { 0x50, "Foo", false, 0 } },
		{ .type = HT_EV_CLASS, .u.class_ = { UINT64_MAX, NULL, true,
						     UINT64_MAX } },
		{ .type = HT_EV_CLASS, .u.class_ = { 0, "", false, 0 } },
	};

	assert_round_trip(evs, ARRAY_SIZE(evs));
}

Test(codec, thread_and_method_round_trip)
{
	const struct ht_event evs[] = {
		{ .type = HT_EV_THREAD, .u.thread = { 7, "main" } },
		{ .type = HT_EV_THREAD, .u.thread = { UINT64_MAX, NULL } },
		{ .type = HT_EV_METHOD, .u.method = { 0x5000, "Main(string[])" } },
		{ .type = HT_EV_METHOD, .u.method = { 0, "" } },
	};

	assert_round_trip(evs, ARRAY_SIZE(evs));
}

Test(codec, object_allocated_round_trips)
{
	const struct ht_event evs[] = {
		{ .type = HT_EV_OBJECT_ALLOCATED,
		  .u.object_allocated = { 0x10000, 0x100, 24 } },
		{ .type = HT_EV_OBJECT_ALLOCATED,
		  .u.object_allocated = { 0, UINT64_MAX, UINT64_MAX } },
		{ .type = HT_EV_OBJECT_ALLOCATED,
		  .u.object_allocated = { UINT64_MAX, 0, 0 } },
	};

	assert_round_trip(evs, ARRAY_SIZE(evs));
}

Test(codec, gc_started_round_trips_with_and_without_number)
{
	const struct ht_event evs[] = {
		{ .type = HT_EV_GC_STARTED,
		  .u.gc_started = { true, 12, 0x7, HT_GC_INDUCED } },
		{ .type = HT_EV_GC_STARTED,
		  .u.gc_started = { false, 0, 0x1, HT_GC_OTHER } },
		{ .type = HT_EV_GC_STARTED,
		  .u.gc_started = { true, UINT64_MAX, UINT32_MAX, HT_GC_OTHER } },
		{ .type = HT_EV_GC_STARTED,
		  .u.gc_started = { false, 0, 0, HT_GC_INDUCED } },
	};

	assert_round_trip(evs, ARRAY_SIZE(evs));
}

Test(codec, generation_bounds_round_trip)
{
	const struct ht_generation_range r[] = {
		{ 0, 0x10000, 0x40, 0x10000 },
		{ 2, 0x8000, 0, 0 }, /* start below the previous one */
		{ HT_GEN_POH, UINT64_MAX, UINT64_MAX, UINT64_MAX },
		{ UINT32_MAX, 0, 1, 2 },
	};
	const struct ht_event evs[] = {
		{ .type = HT_EV_GENERATION_BOUNDS,
		  .u.generation_bounds = { ARRAY_SIZE(r), r } },
		{ .type = HT_EV_GENERATION_BOUNDS,
		  .u.generation_bounds = { 0, NULL } },
	};

	assert_round_trip(evs, ARRAY_SIZE(evs));
}

Test(codec, moved_and_surviving_references_round_trip)
{
	const struct ht_moved_block m[] = {
		{ 0x1000, 0x800, 0x10 },
		{ 0x2000, 0x1810, 0x20 },
		{ 0, UINT64_MAX, 1 },
		{ UINT64_MAX, 0, UINT64_MAX },
		{ 0x10, 0x8000000000000010ull, 8 },
	};
	const struct ht_surviving_block s[] = {
		{ 0x1000, 0x10 }, { 0x10, 0 }, { UINT64_MAX, UINT64_MAX },
	};
	const struct ht_event evs[] = {
		{ .type = HT_EV_MOVED_REFERENCES,
		  .u.moved_references = { ARRAY_SIZE(m), m } },
		{ .type = HT_EV_SURVIVING_REFERENCES,
		  .u.surviving_references = { ARRAY_SIZE(s), s } },
		{ .type = HT_EV_MOVED_REFERENCES,
		  .u.moved_references = { 0, NULL } },
		{ .type = HT_EV_SURVIVING_REFERENCES,
		  .u.surviving_references = { 0, NULL } },
	};

	assert_round_trip(evs, ARRAY_SIZE(evs));
}

Test(codec, gc_finished_round_trips)
{
	const struct ht_event ev = { .type = HT_EV_GC_FINISHED };

	assert_one_round_trips(&ev);
}

/* Version 3: the timed events keep their times, forward and backward
 * (a hand-written trace may go back), and untimed ones stay untimed. */
Test(codec, times_round_trip_as_deltas)
{
	struct ht_event evs[] = {
		{ .type = HT_EV_GC_STARTED, .u.gc_started = { .generations = 1 },
		  .has_time = true, .time = 1000000 },
		{ .type = HT_EV_GC_FINISHED, .has_time = true,
		  .time = 1250000 },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_BEGIN, 0, 0 } },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { HT_C_END, 0, 0 }, .has_time = true,
		  .time = 900 },
		{ .type = HT_EV_GC_FINISHED, .has_time = true,
		  .time = UINT64_MAX },
		{ .type = HT_EV_GC_FINISHED, .has_time = true, .time = 0 },
	};

	assert_round_trip(evs, ARRAY_SIZE(evs));
}

/* A time costs its delta: close times take a byte or two, not eight. */
Test(codec, a_time_is_a_delta_from_the_chunks_previous_one)
{
	struct ht_event evs[] = {
		{ .type = HT_EV_GC_STARTED, .u.gc_started = { .generations = 1 },
		  .has_time = true, .time = 5000000000u },
		{ .type = HT_EV_GC_FINISHED, .has_time = true,
		  .time = 5000000050u },
	};
	struct payload p = encode(evs, ARRAY_SIZE(evs));

	/* type byte with the time bit, then zigzag(50) = 100: one byte */
	cr_assert_eq(p.ends[1] - p.ends[0], 2);
	cr_assert_eq(p.data[p.ends[0]], HT_EV_GC_FINISHED | CODEC_TIMED);
	payload_free(&p);
}

static int decode_bytes(const uint8_t *buf, size_t len, const char **why);

/* The time bit on an event that has no time is refused, not ignored. */
Test(codec, a_time_on_an_untimed_event_is_refused)
{
	const uint8_t buf[] = { HT_EV_OBJECT_ALLOCATED | CODEC_TIMED, 2, 1, 1,
				1 };
	const char *why = NULL;

	cr_assert_eq(decode_bytes(buf, sizeof(buf), &why), -1);
	cr_assert_str_eq(why, "a time on an event that has none");
}

Test(codec, begin_container_round_trips_every_type)
{
	struct ht_event evs[HT_C_LAST + 1];

	for (int t = HT_C_FIRST; t <= HT_C_LAST; t++)
		evs[t - HT_C_FIRST] = (struct ht_event){
			.type = HT_EV_BEGIN_CONTAINER,
			.u.begin_container = { (enum ht_container_type)t,
					       (ht_id)t * 0x1000, UINT64_MAX } };
	/* an out-of-range type is kept for the state machine to report */
	evs[HT_C_LAST] = (struct ht_event){
		.type = HT_EV_BEGIN_CONTAINER,
		.u.begin_container = { (enum ht_container_type)99, 0, 0 } };
	assert_round_trip(evs, ARRAY_SIZE(evs));
}

Test(codec, root_references_round_trip_with_each_optional_array)
{
	const ht_id refs[] = { 0x1000, 0, 0x900, UINT64_MAX, 0x1000 };
	const uint32_t flags[] = { 0, HT_OBJ_ALREADY_REPORTED, UINT32_MAX, 2, 0 };
	const uint8_t kinds[] = { HT_ROOT_STACK, HT_ROOT_OTHER, HT_ROOT_HANDLE,
				  HT_ROOT_FINALIZER, 200 };
	const uint8_t root_flags[] = { 0, HT_ROOT_PINNING, HT_ROOT_WEAK,
				       HT_ROOT_FLAGS_ALL, 0xff };
	const ht_id root_ids[] = { 0, UINT64_MAX, 5, 1ull << 63, 7 };

	for (unsigned mask = 0; mask < 8; mask++) {
		for (int result = HT_RESULT_OK; result <= HT_RESULT_ABORT;
		     result++) {
			const struct ht_event ev = {
				.type = HT_EV_ROOT_REFERENCES,
				.u.root_references = {
					.count = ARRAY_SIZE(refs),
					.refs = refs,
					.flags = flags,
					.kinds = mask & 1 ? kinds : NULL,
					.root_flags = mask & 2 ? root_flags
							       : NULL,
					.root_ids = mask & 4 ? root_ids : NULL,
					.result = (enum ht_result)result,
				} };

			assert_one_round_trips(&ev);
		}
	}
}

Test(codec, root_references_may_be_empty)
{
	const struct ht_event ev = {
		.type = HT_EV_ROOT_REFERENCES,
		.u.root_references = { .count = 0, .result = HT_RESULT_ABORT } };

	assert_one_round_trips(&ev);
}

Test(codec, object_references_round_trip_with_each_optional_field)
{
	const ht_id refs[] = { 0x1010, 0, 0x1000, 0x1000, UINT64_MAX, 8 };
	const uint32_t ref_flags[] = { 0, 1, 2, UINT32_MAX, 0, 7 };

	for (unsigned mask = 0; mask < 4; mask++) {
		for (int result = HT_RESULT_OK; result <= HT_RESULT_ABORT;
		     result++) {
			const struct ht_event ev = {
				.type = HT_EV_OBJECT_REFERENCES,
				.u.object_references = {
					.id = 0x1000,
					.class_id = 0x100,
					.size = 48,
					.flags = HT_OBJ_MORE_REFERENCES,
					.count = ARRAY_SIZE(refs),
					.refs = refs,
					.ref_flags = mask & 1 ? ref_flags
							      : NULL,
					.has_generation = mask & 2,
					.generation = mask & 2 ? HT_GEN_LOH : 0,
					.result = (enum ht_result)result,
				} };

			assert_one_round_trips(&ev);
		}
	}
}

Test(codec, object_with_no_references_round_trips)
{
	const struct ht_event ev = {
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = { .id = UINT64_MAX, .class_id = 0,
					 .size = UINT64_MAX,
					 .flags = UINT32_MAX } };

	assert_one_round_trips(&ev);
}

/* Version 3 (the writer sets class_refs): an object's first reference
 * that is its class, its <class> link, is said by an option bit and not
 * written, and the references after it keep their deltas from the
 * object's id, so that the event is as long as without the link; without
 * the option (versions 1 and 2) the link is written like any reference. */
Test(codec, a_first_reference_to_the_class_is_an_option_bit)
{
	const ht_id linked[] = { 0x7000, 0x1018, 0 };
	const ht_id plain[] = { 0x1018, 0 };
	struct ht_event with = {
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = { .id = 0x1000, .class_id = 0x7000,
					 .size = 24, .count = 3,
					 .refs = linked } };
	struct ht_event without = with;
	uint8_t a[64], b[64], c[64];
	size_t la, lb, lc;
	struct codec_enc e;
	struct codec_dec d;
	struct ht_event ev;
	const char *why = NULL;

	without.u.object_references.count = 2;
	without.u.object_references.refs = plain;
	codec_enc_init(&e, a, sizeof(a));
	e.class_refs = true;
	codec_put_event(&e, &with);
	la = codec_enc_used(&e);
	codec_enc_init(&e, b, sizeof(b));
	e.class_refs = true;
	codec_put_event(&e, &without);
	lb = codec_enc_used(&e);
	codec_enc_init(&e, c, sizeof(c));
	codec_put_event(&e, &with);
	lc = codec_enc_used(&e);
	cr_assert_eq(la, lb, "the link costs no byte: %zu, not %zu", la, lb);
	cr_assert_gt(lc, la, "without the option it is written");

	codec_dec_init(&d);
	codec_dec_reset(&d, a, la);
	cr_assert_eq(codec_get_event(&d, &ev, &why), 1, "%s", why);
	cr_assert(htb_event_equal(&ev, &with), "%s", htb_event_diff(&ev, &with));
	codec_dec_reset(&d, c, lc);
	cr_assert_eq(codec_get_event(&d, &ev, &why), 1, "%s", why);
	cr_assert(htb_event_equal(&ev, &with), "%s", htb_event_diff(&ev, &with));
	/* the bit on an object without references is damage */
	codec_enc_init(&e, b, sizeof(b));
	without.u.object_references.count = 0;
	codec_put_event(&e, &without);
	b[1] |= 0x20;
	codec_dec_reset(&d, b, codec_enc_used(&e));
	cr_assert_lt(codec_get_event(&d, &ev, &why), 0);
	cr_assert(why && strstr(why, "fewer than the 1 its options say"),
		  "%s", why);
	codec_dec_free(&d);
}

/* ---- the reference escapes ------------------------------------------- */

static void assert_refs_round_trip(ht_id id, const ht_id *refs, size_t n)
{
	const struct ht_event ev = {
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = { .id = id, .class_id = 1, .size = 8,
					 .count = n, .refs = refs } };

	assert_one_round_trips(&ev);
}

Test(codec, null_refs_are_kept_and_do_not_move_the_delta_base)
{
	const ht_id refs[] = { 0, 0x1008, 0, 0, 0x1010, 0 };

	assert_refs_round_trip(0x1000, refs, ARRAY_SIZE(refs));
}

Test(codec, refs_equal_to_the_previous_one_round_trip)
{
	const ht_id refs[] = { 0x1000, 0x1000, 0x1000, 0x2000, 0x2000 };

	assert_refs_round_trip(0x1000, refs, ARRAY_SIZE(refs));
}

Test(codec, refs_whose_delta_hits_the_int64_limits_escape_to_absolute)
{
	const ht_id refs[] = {
		0x8000000000000000ull, /* from 1: delta INT64_MAX, escaped */
		1,                     /* delta INT64_MIN + 1: the last delta */
		0x8000000000000001ull, /* delta INT64_MIN, escaped */
		0x8000000000000000ull, /* delta -1 */
		UINT64_MAX,            /* delta INT64_MAX, escaped */
		1, UINT64_MAX,
	};
	const struct ht_event ev = {
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = { .id = 1, .class_id = 1,
					 .count = 1, .refs = refs } };
	struct payload p;

	assert_refs_round_trip(1, refs, ARRAY_SIZE(refs));
	/* type, options, id, class, size, flags, count: one byte each; then
	 * the escape marker and the 10-byte absolute id */
	p = encode(&ev, 1);
	cr_assert_eq(p.len, 7 + 1 + VARINT_MAX);
	cr_assert_eq(p.data[7], 1, "the escape marker");
	payload_free(&p);
}

Test(codec, refs_far_from_the_object_round_trip)
{
	const ht_id refs[] = { 1, UINT64_MAX, 2, UINT64_MAX - 1,
			       0x7fffffffffffffffull, 0x8000000000000000ull };

	assert_refs_round_trip(0x8000000000000000ull, refs, ARRAY_SIZE(refs));
	assert_refs_round_trip(UINT64_MAX, refs, ARRAY_SIZE(refs));
	assert_refs_round_trip(1, refs, ARRAY_SIZE(refs));
}

Test(codec, field_refs_whose_delta_leaves_no_room_escape_to_absolute)
{
	/* from 0, a delta of INT64_MAX codes as 2^64 - 2, which the bias of
	 * two would have wrapped to 0, a null field; INT64_MIN as 2^64 - 1 */
	const ht_id refs[] = { 1, 2, 3, 4 };
	const ht_id fields[] = { 0x7fffffffffffffffull, 0, 0xffffffffffffffffull,
				 0x7fffffffffffffffull };
	const struct ht_event ev = {
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = { .id = 1, .class_id = 1, .size = 8,
					 .count = 4, .refs = refs,
					 .ref_fields = fields } };

	assert_one_round_trips(&ev);
}

/* ---- the shim's parallel forms ---------------------------------------- */

Test(codec, parallel_moved_form_encodes_like_the_event)
{
	const ht_id olds[] = { 0x1000, 0x2000, UINT64_MAX, 0 };
	const ht_id news[] = { 0x800, 0x1800, 0, UINT64_MAX };
	const uint64_t lengths[] = { 0x10, 0x20, 1, UINT64_MAX };
	struct ht_moved_block blocks[ARRAY_SIZE(olds)];
	uint8_t a[64 + ARRAY_SIZE(olds) * CODEC_MOVED_BOUND];
	uint8_t b[sizeof(a)];
	struct codec_enc ea, eb;
	struct ht_event ev = { .type = HT_EV_MOVED_REFERENCES };

	for (size_t i = 0; i < ARRAY_SIZE(olds); i++)
		blocks[i] = (struct ht_moved_block){ olds[i], news[i],
						     lengths[i] };
	ev.u.moved_references.count = ARRAY_SIZE(blocks);
	ev.u.moved_references.blocks = blocks;
	codec_enc_init(&ea, a, sizeof(a));
	codec_enc_init(&eb, b, sizeof(b));
	codec_put_moved(&ea, ARRAY_SIZE(olds), olds, news, lengths);
	codec_put_event(&eb, &ev);
	cr_assert_eq(codec_enc_used(&ea), codec_enc_used(&eb));
	cr_assert_arr_eq(a, b, codec_enc_used(&ea));
	assert_one_round_trips(&ev);
}

Test(codec, parallel_surviving_form_encodes_like_the_event)
{
	const ht_id starts[] = { 0x1000, 0x10, UINT64_MAX, 0 };
	const uint64_t lengths[] = { 0x10, 0, UINT64_MAX, 3 };
	struct ht_surviving_block blocks[ARRAY_SIZE(starts)];
	uint8_t a[64 + ARRAY_SIZE(starts) * CODEC_SURVIVING_BOUND];
	uint8_t b[sizeof(a)];
	struct codec_enc ea, eb;
	struct ht_event ev = { .type = HT_EV_SURVIVING_REFERENCES };

	for (size_t i = 0; i < ARRAY_SIZE(starts); i++)
		blocks[i] = (struct ht_surviving_block){ starts[i], lengths[i] };
	ev.u.surviving_references.count = ARRAY_SIZE(blocks);
	ev.u.surviving_references.blocks = blocks;
	codec_enc_init(&ea, a, sizeof(a));
	codec_enc_init(&eb, b, sizeof(b));
	codec_put_surviving(&ea, ARRAY_SIZE(starts), starts, lengths);
	codec_put_event(&eb, &ev);
	cr_assert_eq(codec_enc_used(&ea), codec_enc_used(&eb));
	cr_assert_arr_eq(a, b, codec_enc_used(&ea));
}

Test(codec, parallel_forms_stay_within_their_per_block_bound)
{
	const ht_id olds[] = { 0, UINT64_MAX };
	const ht_id news[] = { UINT64_MAX, 0 };
	const uint64_t lengths[] = { UINT64_MAX, UINT64_MAX };
	/* one type byte and a count varint besides the blocks */
	uint8_t buf[1 + VARINT_MAX + 2 * CODEC_MOVED_BOUND];
	struct codec_enc e;

	codec_enc_init(&e, buf, sizeof(buf));
	codec_put_moved(&e, 2, olds, news, lengths);
	cr_assert_leq(codec_enc_used(&e), sizeof(buf));
	codec_enc_init(&e, buf, sizeof(buf));
	codec_put_surviving(&e, 2, olds, lengths);
	cr_assert_leq(codec_enc_used(&e), 1 + VARINT_MAX +
						 2 * CODEC_SURVIVING_BOUND);
}

/* ---- the worst-case bound ----------------------------------------------- */

struct random_event {
	struct ht_event ev;
	void *arrays[8];
	char name[64];
};

static void *rnd_array(struct random_event *r, int slot, size_t n,
		       size_t elem)
{
	r->arrays[slot] = calloc(n ? n : 1, elem);
	cr_assert_not_null(r->arrays[slot]);
	return r->arrays[slot];
}

static const char *rnd_name(struct random_event *r)
{
	size_t n = rnd_below(sizeof(r->name));

	if (rnd_below(8) == 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		r->name[i] = (char)(1 + rnd_below(255));
	r->name[n] = '\0';
	return r->name;
}

/* Field references as recorders give them: mostly small, some 0 (no
 * field), now and then any value at all. */
static ht_id *rnd_field_refs(struct random_event *r, int slot, size_t n)
{
	ht_id *ids = rnd_array(r, slot, n, sizeof(ht_id));

	for (size_t i = 0; i < n; i++)
		ids[i] = rnd_below(4) == 0 ? 0 :
			 rnd_below(8) == 0 ? rnd_value() : rnd_below(300);
	return ids;
}

static void fill_fields(struct random_event *r, size_t n)
{
	struct ht_field *f = rnd_array(r, 0, n, sizeof(*f));
	char *names = rnd_array(r, 1, n, 8);

	for (size_t i = 0; i < n; i++) {
		char *name = names + 8 * i;
		size_t len = rnd_below(8);

		for (size_t k = 0; k < len; k++)
			name[k] = (char)(1 + rnd_below(255));
		name[len] = '\0';
		f[i].id = rnd_below(8) == 0 ? rnd_value() : 1 + rnd_below(500);
		f[i].class_id = rnd_value();
		f[i].name = rnd_below(8) == 0 ? NULL : name;
		f[i].kind = (uint8_t)rnd();
		f[i].has_offset = rnd_below(2);
		f[i].offset = f[i].has_offset ? rnd_value() : 0;
	}
	r->ev.u.fields.count = n;
	r->ev.u.fields.fields = f;
}

static void fill_root_references(struct random_event *r, size_t n)
{
	struct ht_ev_root_references *x = &r->ev.u.root_references;
	ht_id *refs = rnd_array(r, 0, n, sizeof(ht_id));
	uint32_t *flags = rnd_array(r, 1, n, sizeof(uint32_t));

	for (size_t i = 0; i < n; i++) {
		refs[i] = rnd_value();
		flags[i] = rnd_u32();
	}
	x->count = n;
	x->refs = refs;
	x->flags = flags;
	x->result = (enum ht_result)rnd_below(3);
	if (rnd_below(2)) {
		uint8_t *k = rnd_array(r, 2, n, 1);

		for (size_t i = 0; i < n; i++)
			k[i] = (uint8_t)rnd();
		x->kinds = k;
	}
	if (rnd_below(2)) {
		uint8_t *k = rnd_array(r, 3, n, 1);

		for (size_t i = 0; i < n; i++)
			k[i] = (uint8_t)rnd();
		x->root_flags = k;
	}
	if (rnd_below(2)) {
		ht_id *ids = rnd_array(r, 4, n, sizeof(ht_id));

		for (size_t i = 0; i < n; i++)
			ids[i] = rnd_value();
		x->root_ids = ids;
	}
	if (rnd_below(2))
		x->root_fields = rnd_field_refs(r, 5, n);
}

static void fill_object_references(struct random_event *r, size_t n)
{
	struct ht_ev_object_references *x = &r->ev.u.object_references;
	ht_id *refs = rnd_array(r, 0, n, sizeof(ht_id));

	x->id = rnd_value();
	x->class_id = rnd_value();
	x->size = rnd_value();
	x->flags = rnd_u32();
	x->has_generation = rnd_below(2);
	x->generation = x->has_generation ? rnd_u32() : 0;
	x->result = (enum ht_result)rnd_below(3);
	for (size_t i = 0; i < n; i++)
		refs[i] = rnd_value();
	x->count = n;
	x->refs = refs;
	if (rnd_below(2)) {
		uint32_t *f = rnd_array(r, 1, n, sizeof(uint32_t));

		for (size_t i = 0; i < n; i++)
			f[i] = rnd_u32();
		x->ref_flags = f;
	}
	if (rnd_below(2))
		x->ref_fields = rnd_field_refs(r, 2, n);
}

static void fill_blocks(struct random_event *r, size_t n)
{
	switch (r->ev.type) {
	case HT_EV_GENERATION_BOUNDS: {
		struct ht_generation_range *g =
			rnd_array(r, 0, n, sizeof(*g));

		for (size_t i = 0; i < n; i++)
			g[i] = (struct ht_generation_range){
				rnd_u32(), rnd_value(), rnd_value(),
				rnd_value() };
		r->ev.u.generation_bounds.count = n;
		r->ev.u.generation_bounds.ranges = g;
		break;
	}
	case HT_EV_MOVED_REFERENCES: {
		struct ht_moved_block *m = rnd_array(r, 0, n, sizeof(*m));

		for (size_t i = 0; i < n; i++)
			m[i] = (struct ht_moved_block){ rnd_value(),
							rnd_value(),
							rnd_value() };
		r->ev.u.moved_references.count = n;
		r->ev.u.moved_references.blocks = m;
		break;
	}
	default: {
		struct ht_surviving_block *s = rnd_array(r, 0, n, sizeof(*s));

		for (size_t i = 0; i < n; i++)
			s[i] = (struct ht_surviving_block){ rnd_value(),
							    rnd_value() };
		r->ev.u.surviving_references.count = n;
		r->ev.u.surviving_references.blocks = s;
		break;
	}
	}
}

static void random_event(struct random_event *r)
{
	size_t n = rnd_below(4) ? rnd_below(8) : rnd_below(200);

	memset(r, 0, sizeof(*r));
	r->ev.type = (enum ht_event_type)(HT_EV_FIRST +
					  rnd_below(HT_EV_LAST - HT_EV_FIRST + 1));
	switch (r->ev.type) {
	case HT_EV_CLASS:
		r->ev.u.class_.id = rnd_value();
		r->ev.u.class_.name = rnd_name(r);
		r->ev.u.class_.has_size = rnd_below(2);
		r->ev.u.class_.size = r->ev.u.class_.has_size ? rnd_value() : 0;
		break;
	case HT_EV_THREAD:
		r->ev.u.thread.id = rnd_value();
		r->ev.u.thread.name = rnd_name(r);
		break;
	case HT_EV_METHOD:
		r->ev.u.method.id = rnd_value();
		r->ev.u.method.name = rnd_name(r);
		/* a file, when there is one, in a buffer of its own */
		if (rnd_below(2)) {
			char *file = rnd_array(r, 0, 16, 1);

			for (size_t i = 0, len = rnd_below(15); i < len; i++)
				file[i] = (char)(1 + rnd_below(255));
			r->ev.u.method.file = file;
		}
		r->ev.u.method.line = rnd_below(2) ? rnd_u32() : 0;
		break;
	case HT_EV_OBJECT_ALLOCATED:
		r->ev.u.object_allocated.id = rnd_value();
		r->ev.u.object_allocated.class_id = rnd_value();
		r->ev.u.object_allocated.size = rnd_value();
		r->ev.u.object_allocated.stack = rnd_below(2) ? rnd_value() : 0;
		break;
	case HT_EV_STACK: {
		ht_id *frames = rnd_array(r, 0, n, sizeof(ht_id));

		for (size_t i = 0; i < n; i++)
			frames[i] = rnd_value();
		r->ev.u.stack.id = rnd_value() | 1;
		r->ev.u.stack.count = n;
		r->ev.u.stack.frames = frames;
		break;
	}
	case HT_EV_GC_STARTED:
		r->ev.u.gc_started.has_gc = rnd_below(2);
		r->ev.u.gc_started.gc = r->ev.u.gc_started.has_gc ? rnd_value() : 0;
		r->ev.u.gc_started.generations = rnd_u32();
		r->ev.u.gc_started.reason = (enum ht_gc_reason)rnd_below(2);
		break;
	case HT_EV_GENERATION_BOUNDS:
	case HT_EV_MOVED_REFERENCES:
	case HT_EV_SURVIVING_REFERENCES:
		fill_blocks(r, n);
		break;
	case HT_EV_GC_FINISHED:
		break;
	case HT_EV_BEGIN_CONTAINER:
		r->ev.u.begin_container.type =
			(enum ht_container_type)(1 + rnd_below(40));
		r->ev.u.begin_container.id1 = rnd_value();
		r->ev.u.begin_container.id2 = rnd_value();
		break;
	case HT_EV_ROOT_REFERENCES:
		fill_root_references(r, n);
		break;
	case HT_EV_OBJECT_REFERENCES:
		fill_object_references(r, n);
		break;
	case HT_EV_FIELDS:
		fill_fields(r, n);
		break;
	}
}

static void random_event_free(struct random_event *r)
{
	for (size_t i = 0; i < ARRAY_SIZE(r->arrays); i++)
		free(r->arrays[i]);
}

Test(codec, event_bound_is_never_exceeded)
{
	struct codec_dec d;

	codec_dec_init(&d);
	for (int trial = 0; trial < 5000; trial++) {
		struct random_event r;
		struct codec_enc e;
		struct ht_event out;
		const char *why = NULL;
		size_t bound;
		uint8_t *buf;

		random_event(&r);
		bound = codec_event_bound(&r.ev);
		/* exactly the bound: the sanitizers catch a byte past it */
		buf = malloc(bound);
		cr_assert_not_null(buf);
		codec_enc_init(&e, buf, bound);
		codec_put_event(&e, &r.ev);
		cr_assert_leq(codec_enc_used(&e), bound, "trial %d (%s)", trial,
			      ht_event_name(r.ev.type));
		codec_dec_reset(&d, buf, codec_enc_used(&e));
		cr_assert_eq(codec_get_event(&d, &out, &why), 1, "trial %d: %s",
			     trial, why ? why : "");
		cr_assert(htb_event_equal(&out, &r.ev), "trial %d: %s", trial,
			  htb_event_diff(&out, &r.ev));
		free(buf);
		random_event_free(&r);
	}
	codec_dec_free(&d);
}

static size_t element_count(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_GENERATION_BOUNDS:
		return ev->u.generation_bounds.count;
	case HT_EV_MOVED_REFERENCES:
		return ev->u.moved_references.count;
	case HT_EV_SURVIVING_REFERENCES:
		return ev->u.surviving_references.count;
	case HT_EV_ROOT_REFERENCES:
		return ev->u.root_references.count;
	case HT_EV_OBJECT_REFERENCES:
		return ev->u.object_references.count;
	case HT_EV_FIELDS:
		return ev->u.fields.count;
	default:
		return 0;
	}
}

Test(codec, event_bound_is_the_overhead_plus_an_element_bound_per_element)
{
	for (int trial = 0; trial < 2000; trial++) {
		struct random_event r;
		size_t count, with;

		random_event(&r);
		switch (r.ev.type) {
		case HT_EV_GENERATION_BOUNDS:
		case HT_EV_MOVED_REFERENCES:
		case HT_EV_SURVIVING_REFERENCES:
		case HT_EV_ROOT_REFERENCES:
		case HT_EV_OBJECT_REFERENCES:
			break;
		default:
			random_event_free(&r);
			continue;
		}
		/* the bound grows by the element bound per element */
		count = element_count(&r.ev);
		with = codec_event_bound(&r.ev);
		cr_assert_eq(with, CODEC_EVENT_OVERHEAD +
					   count * codec_element_bound(&r.ev));
		random_event_free(&r);
	}
}

Test(codec, names_longer_than_the_limit_are_cut_there)
{
	size_t len = CODEC_MAX_STRING + 100;
	char *name = malloc(len + 1);
	struct ht_event ev = { .type = HT_EV_CLASS };
	struct payload p;
	struct codec_dec d;
	struct ht_event out;
	const char *why;

	cr_assert_not_null(name);
	memset(name, 'x', len);
	name[len] = '\0';
	ev.u.class_.id = 1;
	ev.u.class_.name = name;
	p = encode(&ev, 1);
	codec_dec_init(&d);
	codec_dec_reset(&d, p.data, p.len);
	cr_assert_eq(codec_get_event(&d, &out, &why), 1);
	cr_assert_eq(strlen(out.u.class_.name), CODEC_MAX_STRING);
	cr_assert_eq(strncmp(out.u.class_.name, name, CODEC_MAX_STRING), 0);
	codec_dec_free(&d);
	payload_free(&p);
	free(name);
}

/* ---- the file header ---------------------------------------------------- */

static void assert_header_equal(const struct ht_header *a,
				const struct ht_header *b)
{
	cr_assert_eq(a->version, HT_FORMAT_VERSION);
	cr_assert_str_eq(a->runtime ? a->runtime : "(null)",
			 b->runtime ? b->runtime : "(null)");
	cr_assert_str_eq(a->runtime_version ? a->runtime_version : "(null)",
			 b->runtime_version ? b->runtime_version : "(null)");
	cr_assert_eq(a->pointer_size, b->pointer_size);
	cr_assert_eq(a->reports_survivors, b->reports_survivors);
	cr_assert_str_eq(a->command_line ? a->command_line : "(null)",
			 b->command_line ? b->command_line : "(null)");
	cr_assert_eq(a->has_start_time, b->has_start_time);
	if (a->has_start_time)
		cr_assert_eq(a->start_time, b->start_time);
	cr_assert_eq(a->n_metadata, b->n_metadata);
	for (size_t i = 0; i < a->n_metadata; i++) {
		cr_assert_str_eq(a->metadata[i].key, b->metadata[i].key);
		cr_assert_str_eq(a->metadata[i].value, b->metadata[i].value);
	}
}

static void assert_header_round_trips(const struct ht_header *h)
{
	size_t len;
	uint8_t *buf = codec_put_header(h, &len);
	struct ht_header out;
	void *store;
	const char *why = NULL;

	cr_assert_not_null(buf);
	cr_assert_eq(codec_get_header(buf, len, &out, &store, &why), 0, "%s",
		     why);
	assert_header_equal(&out, h);
	free(store);
	free(buf);
}

Test(codec, header_round_trips_with_metadata)
{
	assert_header_round_trips(htb_sample_header());
}

Test(codec, header_round_trips_with_absent_fields)
{
	const struct ht_header h = { .version = HT_FORMAT_VERSION,
				     .pointer_size = 4 };

	assert_header_round_trips(&h);
}

Test(codec, header_start_time_may_be_negative_or_extreme)
{
	const int64_t times[] = { -1, INT64_MIN, INT64_MAX, 0 };

	for (size_t i = 0; i < ARRAY_SIZE(times); i++) {
		const struct ht_header h = {
			.version = HT_FORMAT_VERSION, .runtime = "mono",
			.pointer_size = 8, .has_start_time = true,
			.start_time = times[i] };

		assert_header_round_trips(&h);
	}
}

Test(codec, header_payload_truncated_anywhere_is_refused)
{
	size_t len;
	uint8_t *buf = codec_put_header(htb_sample_header(), &len);

	for (size_t cut = 0; cut < len; cut++) {
		struct ht_header out;
		void *store = (void *)1;
		const char *why = NULL;
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, buf, cut);
		cr_assert_eq(codec_get_header(copy, cut, &out, &store, &why),
			     -1, "cut at %zu", cut);
		cr_assert_null(store);
		cr_assert_not_null(why);
		free(copy);
	}
	free(buf);
}

Test(codec, header_with_bytes_after_its_fields_is_refused)
{
	size_t len;
	uint8_t *buf = codec_put_header(htb_sample_header(), &len);
	uint8_t *longer = malloc(len + 1);
	struct ht_header out;
	void *store;
	const char *why = NULL;

	memcpy(longer, buf, len);
	longer[len] = 0;
	cr_assert_eq(codec_get_header(longer, len + 1, &out, &store, &why), -1);
	cr_assert(strstr(why, "after"), "%s", why);
	free(longer);
	free(buf);
}

Test(codec, header_with_an_odd_pointer_size_is_refused)
{
	const struct ht_header h = { .version = HT_FORMAT_VERSION,
				     .pointer_size = 3 };
	size_t len;
	uint8_t *buf = codec_put_header(&h, &len);
	struct ht_header out;
	void *store;
	const char *why = NULL;

	cr_assert_eq(codec_get_header(buf, len, &out, &store, &why), -1);
	cr_assert(strstr(why, "pointer size"), "%s", why);
	free(buf);
}

/* ---- malformed payloads ------------------------------------------------- */

static int decode_bytes(const uint8_t *buf, size_t len, const char **why)
{
	struct codec_dec d;
	struct ht_event ev;
	uint8_t *copy = malloc(len ? len : 1);
	int rc;

	/* a copy of exactly len bytes: a read past it is caught */
	memcpy(copy, buf, len);
	codec_dec_init(&d);
	codec_dec_reset(&d, copy, len);
	while ((rc = codec_get_event(&d, &ev, why)) == 1)
		;
	codec_dec_free(&d);
	free(copy);
	return rc;
}

Test(codec, unknown_event_types_are_refused)
{
	const uint8_t types[] = { 0, HT_EV_LAST + 1, 0x7f, 0x80, 0xff };

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		const char *why = NULL;

		cr_assert_eq(decode_bytes(&types[i], 1, &why), -1, "type %u",
			     types[i]);
		cr_assert(strstr(why, "unknown event type"), "%s", why);
	}
}

Test(codec, unknown_event_type_leaves_the_cursor_on_it)
{
	const uint8_t buf[] = { HT_EV_GC_FINISHED, 0x42 };
	struct codec_dec d;
	struct ht_event ev;
	const char *why;

	codec_dec_init(&d);
	codec_dec_reset(&d, buf, sizeof(buf));
	cr_assert_eq(codec_get_event(&d, &ev, &why), 1);
	cr_assert_eq(codec_get_event(&d, &ev, &why), -1);
	cr_assert_eq(d.p - d.start, 1, "where the bad event starts");
	codec_dec_free(&d);
}

/* Every event type with its optional fields, in one payload. */
static struct payload all_types_payload(size_t *n_events,
					const struct ht_event **evs)
{
	static struct htb b;
	static bool built;

	if (!built) {
		htb_sample(&b, false);
		built = true;
	}
	*n_events = b.n_events;
	*evs = b.events;
	return encode(b.events, b.n_events);
}

Test(codec, payload_truncated_at_every_byte_yields_whole_events_then_fails)
{
	size_t n;
	const struct ht_event *evs;
	struct payload p = all_types_payload(&n, &evs);
	struct codec_dec d;

	codec_dec_init(&d);
	for (size_t cut = 0; cut <= p.len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		struct ht_event ev;
		const char *why = NULL;
		size_t whole = 0;
		int rc;

		memcpy(copy, p.data, cut);
		while (whole < n && p.ends[whole] <= cut)
			whole++;
		codec_dec_reset(&d, copy, cut);
		for (size_t i = 0; i < whole; i++) {
			cr_assert_eq(codec_get_event(&d, &ev, &why), 1,
				     "cut %zu, event %zu", cut, i);
			cr_assert(htb_event_equal(&ev, &evs[i]));
		}
		rc = codec_get_event(&d, &ev, &why);
		if (whole > 0 && p.ends[whole - 1] == cut)
			cr_assert_eq(rc, 0, "cut %zu is between events", cut);
		else if (cut == 0)
			cr_assert_eq(rc, 0);
		else
			cr_assert_eq(rc, -1, "cut %zu inside event %zu", cut,
				     whole);
		free(copy);
	}
	codec_dec_free(&d);
	payload_free(&p);
}

/* A header of an array event whose count claims 2^40 elements. */
static size_t huge_count_payload(enum ht_event_type type, uint8_t *buf)
{
	uint8_t *p = buf;

	*p++ = (uint8_t)type;
	switch (type) {
	case HT_EV_ROOT_REFERENCES:
		p = varint_put(p, 0); /* options */
		break;
	case HT_EV_OBJECT_REFERENCES:
		p = varint_put(p, 0); /* options */
		p = varint_put(p, 2); /* id */
		p = varint_put(p, 2); /* class */
		p = varint_put(p, 8); /* size */
		p = varint_put(p, 0); /* flags */
		break;
	default:
		break;
	}
	p = varint_put(p, (uint64_t)1 << 40);
	/* a few bytes of elements, far fewer than claimed */
	for (int i = 0; i < 6; i++)
		*p++ = 2;
	return (size_t)(p - buf);
}

Test(codec, counts_larger_than_the_payload_are_refused_before_allocating)
{
	const enum ht_event_type types[] = {
		HT_EV_GENERATION_BOUNDS, HT_EV_MOVED_REFERENCES,
		HT_EV_SURVIVING_REFERENCES, HT_EV_ROOT_REFERENCES,
		HT_EV_OBJECT_REFERENCES,
	};

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		uint8_t buf[64];
		size_t len = huge_count_payload(types[i], buf);
		const char *why = NULL;

		cr_assert_eq(decode_bytes(buf, len, &why), -1, "%s",
			     ht_event_name(types[i]));
		cr_assert(strstr(why, "count"), "%s", why);
	}
}

Test(codec, counts_just_past_the_payload_are_refused)
{
	/* object_references with 3 refs claimed and 2 present */
	uint8_t buf[32], *p = buf;
	const char *why = NULL;

	*p++ = HT_EV_OBJECT_REFERENCES;
	p = varint_put(p, 0);
	p = varint_put(p, 2);
	p = varint_put(p, 2);
	p = varint_put(p, 8);
	p = varint_put(p, 0);
	p = varint_put(p, 3);
	*p++ = 0;
	*p++ = 0;
	cr_assert_eq(decode_bytes(buf, (size_t)(p - buf), &why), -1);
}

Test(codec, unknown_option_bits_are_refused)
{
	const uint8_t cases[][3] = {
		{ HT_EV_CLASS, 0x02, 0 },
		{ HT_EV_GC_STARTED, 0x04, 0 },
		{ HT_EV_ROOT_REFERENCES, 0x40, 0 },          /* bit 6 */
		{ HT_EV_ROOT_REFERENCES, 3 << 3, 0 },        /* result 3 */
		{ HT_EV_OBJECT_REFERENCES, 0x80, 0x02 },     /* bit 8 */
		{ HT_EV_OBJECT_REFERENCES, 3 << 2, 0 },      /* result 3 */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *why = NULL;

		cr_assert_eq(decode_bytes(cases[i], 3, &why), -1, "case %zu", i);
		cr_assert(strstr(why, "options"), "case %zu: %s", i, why);
	}
}

Test(codec, values_too_wide_for_their_field_are_refused)
{
	uint8_t buf[32], *p = buf;
	const char *why = NULL;

	/* gc_started with a generation set over 32 bits */
	*p++ = HT_EV_GC_STARTED;
	p = varint_put(p, 0);
	p = varint_put(p, (uint64_t)1 << 32);
	cr_assert_eq(decode_bytes(buf, (size_t)(p - buf), &why), -1);

	/* begin_container with a type over 32 bits */
	p = buf;
	*p++ = HT_EV_BEGIN_CONTAINER;
	p = varint_put(p, (uint64_t)1 << 33);
	p = varint_put(p, 0);
	p = varint_put(p, 0);
	cr_assert_eq(decode_bytes(buf, (size_t)(p - buf), &why), -1);
}

Test(codec, strings_with_nul_or_past_the_payload_are_refused)
{
	uint8_t buf[16], *p = buf;
	const char *why = NULL;

	*p++ = HT_EV_THREAD;
	p = varint_put(p, 7);
	p = varint_put(p, 4); /* 3 bytes */
	*p++ = 'a';
	*p++ = 0;
	*p++ = 'b';
	cr_assert_eq(decode_bytes(buf, (size_t)(p - buf), &why), -1);
	cr_assert(strstr(why, "NUL"), "%s", why);

	p = buf;
	*p++ = HT_EV_THREAD;
	p = varint_put(p, 7);
	p = varint_put(p, UINT64_MAX);
	*p++ = 'a';
	cr_assert_eq(decode_bytes(buf, (size_t)(p - buf), &why), -1);
}

Test(codec, random_bytes_never_crash_the_decoder)
{
	uint8_t buf[256];

	for (int trial = 0; trial < 20000; trial++) {
		size_t len = rnd_below(sizeof(buf));
		const char *why = NULL;
		int rc;

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		/* mostly valid event types, to get past the first byte */
		if (len && rnd_below(4))
			buf[0] = (uint8_t)(HT_EV_FIRST + rnd_below(HT_EV_LAST));
		rc = decode_bytes(buf, len, &why);
		cr_assert(rc == 0 || rc == -1, "rc %d", rc);
		if (rc < 0)
			cr_assert_not_null(why);
	}
}

Test(codec, random_bytes_never_crash_the_header_decoder)
{
	uint8_t buf[128];

	for (int trial = 0; trial < 20000; trial++) {
		size_t len = rnd_below(sizeof(buf));
		struct ht_header h;
		void *store = NULL;
		const char *why = NULL;
		uint8_t *copy;

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)(rnd_below(3) ? rnd_below(8) : rnd());
		copy = malloc(len ? len : 1);
		memcpy(copy, buf, len);
		if (codec_get_header(copy, len, &h, &store, &why) == 0)
			free(store);
		else
			cr_assert_not_null(why);
		free(copy);
	}
}

/* ---- values (version 3) -------------------------------------------------- */

/* Values of every width and sign, named by fields in both directions of
 * the field stream, and an object's reference fields next to them. */
Test(codec, values_round_trip_with_their_fields)
{
	const ht_id refs[] = { 0x2000 };
	const ht_id ref_fields[] = { 6 };
	const ht_id value_fields[] = { 1, 2, 3, 4, 5, 700, 2 };
	const uint64_t values[] = {
		(uint64_t)INT64_MIN, (uint64_t)-1, 0, 65535,
		0x3ff8000000000000u, UINT64_MAX, (uint64_t)INT64_MAX,
	};
	const struct ht_event ev = {
		.type = HT_EV_OBJECT_REFERENCES,
		.u.object_references = {
			.id = 0x1000, .class_id = 0x100, .size = 64,
			.count = 1, .refs = refs, .ref_fields = ref_fields,
			.n_values = ARRAY_SIZE(values), .value_fields = value_fields,
			.values = values } };

	assert_one_round_trips(&ev);
}

/* An array whole, an array's prefix with the hash of all of it, an
 * empty array, and values with an array (a System.String's length and
 * characters). */
Test(codec, array_contents_round_trip_whole_or_as_a_prefix)
{
	const uint8_t chars[] = { 'h', 0, 'i', 0, 0xe9, 0 };
	const uint8_t longs[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 0xff };
	const ht_id length_field[] = { 9 };
	const uint64_t length[] = { 3 };
	const struct ht_array_values whole = {
		.type = HT_TYPE_CHAR, .length = 3, .stored = 3, .data = chars };
	const struct ht_array_values prefix = {
		.type = HT_TYPE_LONG, .length = 1000, .stored = 2,
		.data = longs, .hash = 0x8000000000000001u };
	const struct ht_array_values empty = { .type = HT_TYPE_BOOLEAN };
	struct ht_event evs[4];

	for (size_t i = 0; i < ARRAY_SIZE(evs); i++)
		evs[i] = (struct ht_event){
			.type = HT_EV_OBJECT_REFERENCES,
			.u.object_references = { .id = 0x1000 + 0x40 * i,
						 .class_id = 0x300,
						 .size = 40 } };
	evs[0].u.object_references.array = &whole;
	evs[1].u.object_references.array = &prefix;
	evs[2].u.object_references.array = &empty;
	evs[3].u.object_references.array = &whole;
	evs[3].u.object_references.n_values = 1;
	evs[3].u.object_references.value_fields = length_field;
	evs[3].u.object_references.values = length;
	assert_round_trip(evs, ARRAY_SIZE(evs));
}

/* A primitive field's type, with and without an offset; a field with no
 * type is a reference and is coded as before values existed. */
Test(codec, a_field_type_round_trips_and_costs_nothing_when_absent)
{
	const struct ht_field typed[] = {
		{ .id = 1, .class_id = 0x10, .name = "count",
		  .has_offset = true, .offset = 12, .type = HT_TYPE_INT },
		{ .id = 2, .class_id = 0x10, .name = "LIMIT",
		  .kind = HT_FIELD_STATIC, .type = HT_TYPE_LONG },
		{ .id = 3, .class_id = 0x10, .name = "next",
		  .type = HT_TYPE_OBJECT },
	};
	const struct ht_field plain[] = {
		{ .id = 3, .class_id = 0x10, .name = "next" },
	};
	const struct ht_event ev = {
		.type = HT_EV_FIELDS,
		.u.fields = { ARRAY_SIZE(typed), typed } };
	struct ht_event one = {
		.type = HT_EV_FIELDS, .u.fields = { 1, &typed[2] } };
	struct ht_event untyped = {
		.type = HT_EV_FIELDS, .u.fields = { 1, plain } };
	struct payload a, b;

	assert_one_round_trips(&ev);
	a = encode(&one, 1);
	b = encode(&untyped, 1);
	/* the options' second byte (bit 9) and the type's */
	cr_assert_eq(a.len, b.len + 2);
	payload_free(&a);
	payload_free(&b);
}

/* Malformed values and contents are refused with their cause. The
 * object: options (a varint: bit 7 takes two bytes), id, class, size,
 * flags, 0 references, then values. */
Test(codec, malformed_values_are_refused)
{
	static const struct {
		uint8_t bytes[16];
		size_t len;
		const char *why;
	} cases[] = {
		{ { 0x40, 2, 2, 8, 0, 0, 0 }, 7,
		  "values option with no values" },
		{ { 0x80, 1, 2, 2, 8, 0, 0, 2, 1, 0 }, 10,
		  "array of no primitive type" },
		{ { 0x80, 1, 2, 2, 8, 0, 0, 99, 1, 0 }, 10,
		  "array of no primitive type" },
		{ { 0x80, 1, 2, 2, 8, 0, 0, 8, 1, 2, 7, 7 }, 12,
		  "array prefix longer than the array" },
		{ { 0x80, 1, 2, 2, 8, 0, 0, 10, 9, 2, 1, 2, 3, 4 }, 14,
		  "array prefix longer than the chunk" },
		{ { 0x80, 1, 2, 2, 8, 0, 0, 8, 9, 1, 7, 1, 2, 3 }, 14,
		  "array hash cut off" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint8_t buf[32];
		const char *why = NULL;

		buf[0] = HT_EV_OBJECT_REFERENCES;
		memcpy(buf + 1, cases[i].bytes, cases[i].len);
		cr_assert_eq(decode_bytes(buf, cases[i].len + 1, &why), -1,
			     "case %zu", i);
		cr_assert_str_eq(why, cases[i].why, "case %zu", i);
	}
}

/* The primitive types and their values (values.c). */

/* The JVM's basic types: HPROF's and JVMTI's numbers, Java's names and
 * widths; a reference has no width, and other numbers are no type. */
Test(codec, value_types_have_the_jvm_numbers_names_and_widths)
{
	static const struct {
		unsigned type;
		const char *name;
		unsigned width;
	} types[] = {
		{ 2, "object", 0 }, { 4, "boolean", 1 }, { 5, "char", 2 },
		{ 6, "float", 4 },  { 7, "double", 8 },  { 8, "byte", 1 },
		{ 9, "short", 2 },  { 10, "int", 4 },    { 11, "long", 8 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		cr_assert_str_eq(ht_value_type_name(types[i].type),
				 types[i].name);
		cr_assert_eq(ht_value_type_parse(types[i].name),
			     (int)types[i].type);
		cr_assert_eq(ht_value_type_width(types[i].type),
			     types[i].width, "%s", types[i].name);
	}
	cr_assert_null(ht_value_type_name(0));
	cr_assert_null(ht_value_type_name(3));
	cr_assert_null(ht_value_type_name(12));
	cr_assert_eq(ht_value_type_width(12), 0);
	cr_assert_eq(ht_value_type_parse("integer"), -1);
}

/* Values load from little-endian bytes, signed types sign-extended, and
 * store back only when they fit their type. */
Test(codec, values_load_and_store_by_their_type)
{
	const uint8_t minus_two[] = { 0xfe, 0xff, 0xff, 0xff };
	const uint8_t e_acute[] = { 0xe9, 0x00 };
	uint8_t out[8] = { 0 };

	cr_assert_eq(ht_value_load(HT_TYPE_INT, minus_two), (uint64_t)-2);
	cr_assert_eq(ht_value_load(HT_TYPE_FLOAT, minus_two), 0xfffffffeu);
	cr_assert_eq(ht_value_load(HT_TYPE_BYTE, minus_two), (uint64_t)-2);
	cr_assert_eq(ht_value_load(HT_TYPE_BOOLEAN, minus_two), 0xfe);
	cr_assert_eq(ht_value_load(HT_TYPE_CHAR, e_acute), 0xe9);
	cr_assert_eq(ht_value_load(HT_TYPE_SHORT, minus_two), (uint64_t)-2);
	cr_assert(ht_value_store(HT_TYPE_SHORT, (uint64_t)-2, out));
	cr_assert_eq(out[0], 0xfe);
	cr_assert_eq(out[1], 0xff);
	cr_assert_not(ht_value_store(HT_TYPE_SHORT, 0x8000, out));
	cr_assert_not(ht_value_store(HT_TYPE_CHAR, (uint64_t)-1, out));
	cr_assert_not(ht_value_store(HT_TYPE_BYTE, 128, out));
	cr_assert(ht_value_store(HT_TYPE_BYTE, (uint64_t)-128, out));
	cr_assert(ht_value_store(HT_TYPE_LONG, UINT64_MAX, out));
	cr_assert_not(ht_value_store(HT_TYPE_OBJECT, 0, out));
}

/* The hash of a long array is 64-bit FNV-1a: its published test vectors. */
Test(codec, the_values_hash_is_fnv1a_64)
{
	cr_assert_eq(ht_values_hash((const uint8_t *)"", 0),
		     0xcbf29ce484222325u);
	cr_assert_eq(ht_values_hash((const uint8_t *)"a", 1),
		     0xaf63dc4c8601ec8cu);
	cr_assert_eq(ht_values_hash((const uint8_t *)"foobar", 6),
		     0x85944171f73967e8u);
}

/* What a producer keeps of an array in memory: whole up to 256 bytes of
 * elements, else a 64-byte prefix and the hash of every byte. */
Test(codec, an_array_is_kept_whole_up_to_the_threshold_else_a_prefix)
{
	uint8_t units[8 * 33];
	struct ht_array_values a;

	for (size_t i = 0; i < sizeof(units); i++)
		units[i] = (uint8_t)(i * 7 + 1);
	cr_assert(ht_array_values_of(HT_TYPE_CHAR, units, 128, &a));
	cr_assert_eq(a.type, HT_TYPE_CHAR);
	cr_assert_eq(a.length, 128);
	cr_assert_eq(a.stored, 128);
	cr_assert_eq(a.data, units);
	cr_assert_eq(a.hash, 0);
	cr_assert(ht_array_values_of(HT_TYPE_CHAR, units, 129, &a));
	cr_assert_eq(a.length, 129);
	cr_assert_eq(a.stored, 32);
	cr_assert_eq(a.hash, ht_values_hash(units, 2 * 129));
	cr_assert(ht_array_values_of(HT_TYPE_LONG, units, 32, &a));
	cr_assert_eq(a.stored, 32);
	cr_assert(ht_array_values_of(HT_TYPE_LONG, units, 33, &a));
	cr_assert_eq(a.stored, 8);
	cr_assert(ht_array_values_of(HT_TYPE_BYTE, units, 0, &a));
	cr_assert_eq(a.stored, 0);
	cr_assert_not(ht_array_values_of(HT_TYPE_OBJECT, units, 4, &a));
}
