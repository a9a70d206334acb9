/*
 * test_damage.c - what a damaged or cut .ht yields (doc/design.md section 4):
 * every event of every intact chunk before the damage, exactly, and never a
 * wrong one; then one error naming the offset where the damage starts, with
 * the loss filled in. Cuts at every byte and thousands of seeded bit flips
 * over a trace of a few dumps and GCs in several chunks. Each is read on
 * one thread, and again reading ahead on a second (suite damage_ahead):
 * the outcomes must not differ.
 */
#include <criterion/criterion.h>

#include "htbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct outcome {
	bool opened;
	int rc;        /* the last ht_reader_next */
	size_t events; /* delivered, each checked against the original */
	struct ht_error err;
	struct ht_loss loss;
	struct ht_index_info index;
	bool cut_off;  /* ht_reader_cut_off once read */
};

/* Reads the damaged bytes, checking every delivered event against the
 * original trace's event at the same index: a prefix, nothing else. */
static struct outcome read_damaged(struct ht_reader *r, const struct htb *orig,
				   const char *what)
{
	struct outcome o = { .opened = true };
	struct ht_event ev;

	while ((o.rc = ht_reader_next(r, &ev, &o.err)) == 1) {
		cr_assert_lt(o.events, orig->n_events, "%s: an extra event",
			     what);
		cr_assert(htb_event_equal(&ev, &orig->events[o.events]),
			  "%s: event %zu is wrong (%s)", what, o.events,
			  htb_event_diff(&ev, &orig->events[o.events]));
		o.events++;
	}
	o.loss = *ht_reader_loss(r);
	o.index = *ht_reader_index(r);
	o.cut_off = ht_reader_cut_off(r);
	ht_reader_close(r);
	return o;
}

static struct outcome read_memory(const uint8_t *data, size_t len,
				  const struct htb *orig, const char *what)
{
	struct ht_error err;
	struct ht_reader *r = htb_open_memory(data, len, &err);

	if (!r)
		return (struct outcome){ .opened = false, .rc = -1, .err = err };
	return read_damaged(r, orig, what);
}

static struct outcome read_pipe(const uint8_t *data, size_t len,
				const struct htb *orig, const char *what)
{
	struct ht_error err;
	pid_t child;
	struct ht_reader *r = htb_open_pipe(data, len, &child, &err);
	struct outcome o;

	if (!r)
		o = (struct outcome){ .opened = false, .rc = -1, .err = err };
	else
		o = read_damaged(r, orig, what);
	waitpid(child, NULL, 0);
	return o;
}

/* Regions of the file: the event chunks, the index chunk, the trailer. */
struct region {
	uint64_t start;
	uint64_t end;
	uint64_t events_before; /* delivered when the damage starts here */
	size_t chunks_before;
};

static size_t regions_of(const struct htb *b, struct region *out)
{
	size_t n = 0;

	for (size_t i = 0; i < b->n_chunks; i++)
		out[n++] = (struct region){ b->chunks[i].offset,
					    b->chunks[i].end,
					    b->chunks[i].first_event, i };
	if (b->index_end) {
		out[n++] = (struct region){ b->index_offset, b->index_end,
					    b->n_events, b->n_chunks };
		out[n++] = (struct region){ b->index_end,
					    b->index_end + 16,
					    b->n_events, b->n_chunks };
	}
	return n;
}

static const struct region *region_at(const struct region *rs, size_t n,
				      uint64_t offset)
{
	for (size_t i = 0; i < n; i++)
		if (offset >= rs[i].start && offset < rs[i].end)
			return &rs[i];
	return NULL;
}

static bool at_boundary(const struct htb *b, uint64_t cut)
{
	if (cut == b->header_end || cut == b->len ||
	    (b->index_end && cut == b->index_end))
		return true;
	for (size_t i = 0; i < b->n_chunks; i++)
		if (cut == b->chunks[i].end)
			return true;
	return false;
}

/* What a cut at `cut` must give: see the file comment. */
static void assert_cut_outcome(const struct htb *b, const struct region *rs,
			       size_t n_regions, size_t cut,
			       const struct outcome *o)
{
	const struct region *broken;

	if (cut < b->header_end) {
		cr_assert_not(o->opened, "cut %zu inside the file header", cut);
		cr_assert_eq(o->err.code, HT_E_TRUNCATED, "cut %zu: %s", cut,
			     o->err.message);
		return;
	}
	cr_assert(o->opened, "cut %zu: %s", cut, o->err.message);
	if (at_boundary(b, cut)) {
		size_t whole = 0;

		cr_assert_eq(o->rc, 0, "cut %zu at a boundary: %s", cut,
			     o->err.message);
		cr_assert_not(o->loss.lost);
		/* where a killed writer may stop: cut off without its index */
		cr_assert_eq(o->cut_off, !o->index.present, "cut %zu", cut);
		for (size_t i = 0; i < b->n_chunks; i++)
			if (b->chunks[i].end <= cut)
				whole += b->chunks[i].events;
		cr_assert_eq(o->events, whole, "cut %zu", cut);
		return;
	}
	broken = region_at(rs, n_regions, cut);
	cr_assert_not_null(broken);
	cr_assert_eq(o->rc, -1, "cut %zu inside a chunk reads clean", cut);
	cr_assert_eq(o->err.code, HT_E_TRUNCATED, "cut %zu: %s", cut,
		     o->err.message);
	cr_assert_eq(o->events, broken->events_before,
		     "cut %zu: every chunk before the cut, nothing of it", cut);
	cr_assert_eq(o->err.offset, broken->start, "cut %zu: %s", cut,
		     o->err.message);
	cr_assert(o->loss.lost);
	cr_assert_eq(o->loss.offset, broken->start);
	cr_assert_eq(o->loss.bytes_lost, cut - broken->start, "cut %zu", cut);
	cr_assert_eq(o->loss.chunks_read, broken->chunks_before);
	/* a write torn by the writer's end, in a trace it never closed:
	 * cut off there, not damaged */
	cr_assert_eq(o->loss.torn_tail, !o->index.present, "cut %zu", cut);
	cr_assert_eq(o->cut_off, o->loss.torn_tail, "cut %zu", cut);
	if (b->index_end && broken->start == b->index_end) {
		/* cut in the trailer: the scan has read the index, nothing
		 * was lost */
		cr_assert(o->loss.events_known);
		cr_assert_eq(o->loss.events_lost, 0);
		cr_assert_eq(o->loss.dumps_lost + o->loss.gcs_lost, 0);
		cr_assert(strstr(o->err.message, "no events lost"), "%s",
			  o->err.message);
		return;
	}
	cr_assert_not(o->loss.events_known, "cut %zu: no trailer to find "
		      "the index by", cut);
	cr_assert(strstr(o->err.message, "index was not available"), "%s",
		  o->err.message);
}

static void cut_at_every_byte_yields_the_chunks_before_the_cut(void)
{
	struct htb b;
	struct region rs[64];
	size_t n_regions;

	htb_sample(&b, true);
	n_regions = regions_of(&b, rs);
	for (size_t cut = 0; cut <= b.len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		struct outcome o;

		/* an exact-size copy: a read past the cut is caught */
		memcpy(copy, b.data, cut);
		o = read_memory(copy, cut, &b, "cut");
		assert_cut_outcome(&b, rs, n_regions, cut, &o);
		free(copy);
	}
	htb_free(&b);
}

static void cut_pipe_yields_the_chunks_before_the_cut(void)
{
	struct htb b;
	struct region rs[64];
	size_t n_regions;

	htb_sample(&b, true);
	n_regions = regions_of(&b, rs);
	for (size_t cut = 0; cut <= b.len; cut++) {
		struct outcome o = read_pipe(b.data, cut, &b, "cut pipe");
		assert_cut_outcome(&b, rs, n_regions, cut, &o);
	}
	htb_free(&b);
}

static void cut_file_without_index_yields_the_chunks_before_the_cut(void)
{
	struct htb b;
	struct region rs[64];
	size_t n_regions;

	htb_sample(&b, false);
	n_regions = regions_of(&b, rs);
	for (size_t cut = b.header_end; cut <= b.len; cut++) {
		struct outcome o = read_memory(b.data, cut, &b, "cut");

		assert_cut_outcome(&b, rs, n_regions, cut, &o);
	}
	htb_free(&b);
}

/* ---- bit flips ---------------------------------------------------------- */

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* Flips 1 to 4 bits, sometimes up to 32, at or after `from`, sometimes
 * clustered in a few bytes. Returns the first byte that differs, or
 * `len` if the flips cancelled out. */
static size_t flip_bits(uint8_t *data, const uint8_t *orig, size_t from,
			size_t len)
{
	unsigned flips = rnd() % 8 ? 1 + rnd() % 4 : 1 + rnd() % 32;
	size_t at = from + rnd() % (len - from);

	for (unsigned i = 0; i < flips; i++) {
		size_t pos = rnd() % 2 ? from + rnd() % (len - from)
				       : at + rnd() % 4;

		if (pos >= len)
			pos = len - 1;
		data[pos] ^= (uint8_t)(1u << (rnd() % 8));
	}
	for (size_t i = 0; i < len; i++)
		if (data[i] != orig[i])
			return i;
	return len;
}

static uint64_t groups_from(const struct htb *b, unsigned kind, uint64_t event)
{
	uint64_t n = 0;

	for (size_t i = 0; i < b->n_entries; i++)
		n += b->entries[i].kind == kind && b->entries[i].event >= event;
	return n;
}

static void assert_flip_outcome(const struct htb *b, const struct region *r,
				const struct outcome *o, int trial)
{
	cr_assert(o->opened, "trial %d: the file header is intact: %s", trial,
		  o->err.message);
	cr_assert_eq(o->rc, -1, "trial %d: damage at byte %llu not detected",
		     trial, (unsigned long long)r->start);
	cr_assert_eq(o->err.code, HT_E_CORRUPT, "trial %d: %s", trial,
		     o->err.message);
	cr_assert_eq(o->events, r->events_before,
		     "trial %d: every chunk before the damage: %s", trial,
		     o->err.message);
	cr_assert_eq(o->err.offset, r->start, "trial %d: %s", trial,
		     o->err.message);
	cr_assert(o->loss.lost);
	cr_assert_eq(o->loss.offset, r->start);
	cr_assert_eq(o->loss.bytes_lost, b->len - r->start);
	cr_assert_eq(o->loss.chunks_read, r->chunks_before);
	/* damage is never taken for a writer's end */
	cr_assert_not(o->loss.torn_tail, "trial %d", trial);
	cr_assert_not(o->cut_off, "trial %d", trial);
	if (!o->loss.events_known)
		return;
	cr_assert_eq(o->loss.events_lost, b->n_events - o->events);
	cr_assert_eq(o->loss.dumps_lost,
		     groups_from(b, 1 /* HT_INDEX_DUMP */, o->events));
	cr_assert_eq(o->loss.gcs_lost,
		     groups_from(b, 2 /* HT_INDEX_GC */, o->events));
}

static void bit_flips_after_the_header_are_caught_and_cost_only_their_chunk(void)
{
	struct htb b;
	struct region rs[64];
	size_t n_regions;
	uint8_t *copy;
	int tried = 0;

	htb_sample(&b, true);
	n_regions = regions_of(&b, rs);
	copy = malloc(b.len);
	for (int trial = 0; trial < 4000; trial++) {
		const struct region *r;
		struct outcome o;
		size_t first;

		memcpy(copy, b.data, b.len);
		first = flip_bits(copy, b.data, b.header_end, b.len);
		if (first == b.len)
			continue; /* the flips cancelled out */
		r = region_at(rs, n_regions, first);
		cr_assert_not_null(r);
		o = trial % 100 ? read_memory(copy, b.len, &b, "flip")
				: read_pipe(copy, b.len, &b, "flip pipe");
		assert_flip_outcome(&b, r, &o, trial);
		tried++;
	}
	cr_assert_gt(tried, 3900);
	free(copy);
	htb_free(&b);
}

static void bit_flips_in_the_file_header_refuse_the_file(void)
{
	struct htb b;
	uint8_t *copy;

	htb_sample(&b, true);
	copy = malloc(b.len);
	for (int trial = 0; trial < 1000; trial++) {
		struct outcome o;
		size_t first;
		unsigned bit = (unsigned)(rnd() % (8 * b.header_end));

		memcpy(copy, b.data, b.len);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (rnd() % 2)
			flip_bits(copy, b.data, 0, b.header_end);
		for (first = 0; first < b.len && copy[first] == b.data[first];
		     first++)
			;
		if (first == b.len)
			continue;
		o = read_memory(copy, b.len, &b, "header flip");
		cr_assert_not(o.opened, "trial %d: byte %zu flipped", trial,
			      first);
		cr_assert(o.err.code == HT_E_FORMAT ||
				  o.err.code == HT_E_CORRUPT ||
				  o.err.code == HT_E_TRUNCATED,
			  "trial %d: %s", trial, o.err.message);
	}
	free(copy);
	htb_free(&b);
}

/* ---- what the index says was lost ------------------------------------- */

static void loss_is_counted_in_dumps_gcs_and_events_per_the_index(void)
{
	struct htb b;
	struct outcome o;
	uint64_t events_lost;
	char expect[128];

	htb_sample(&b, true);
	/* chunk 3 holds the second dump: it, the second GC and the third
	 * dump are lost */
	b.data[b.chunks[3].end - 5] ^= 0x40;
	o = read_memory(b.data, b.len, &b, "chunk 3");
	events_lost = b.n_events - b.chunks[3].first_event;
	cr_assert(o.loss.events_known);
	cr_assert_eq(o.loss.dumps_lost, 2);
	cr_assert_eq(o.loss.gcs_lost, 1);
	cr_assert_eq(o.loss.events_lost, events_lost);
	snprintf(expect, sizeof(expect),
		 "%llu bytes from here to the end not read (2 dumps, 1 GC and "
		 "%llu events lost, per the index)",
		 (unsigned long long)(b.len - b.chunks[3].offset),
		 (unsigned long long)events_lost);
	cr_assert(strstr(o.err.message, expect), "%s\nwanted: %s",
		  o.err.message, expect);
	cr_assert(strstr(o.err.message, "chunk payload CRC mismatch"), "%s",
		  o.err.message);
	htb_free(&b);
}

static void dump_cut_short_by_the_damage_counts_as_lost(void)
{
	const ht_id roots[] = { 0x1000 };
	const uint32_t flags[] = { 0 };
	const struct ht_event opening[] = {
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { .type = HT_C_BEGIN } },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { .type = HT_C_RT_THREAD, .id1 = 3 } },
	};
	const struct ht_event closing[] = {
		{ .type = HT_EV_ROOT_REFERENCES,
		  .u.root_references = { .count = 1, .refs = roots,
					 .flags = flags } },
		{ .type = HT_EV_BEGIN_CONTAINER,
		  .u.begin_container = { .type = HT_C_END } },
	};
	const struct ht_event gc[] = {
		{ .type = HT_EV_GC_STARTED,
		  .u.gc_started = { .generations = 1 } },
		{ .type = HT_EV_GC_FINISHED },
	};
	struct htb b;
	struct outcome o;

	htb_start(&b, htb_sample_header());
	htb_chunk(&b, opening, 2);
	htb_chunk(&b, closing, 2);
	htb_chunk(&b, gc, 2);
	htb_finish(&b);
	b.data[b.chunks[1].offset + HT_CHUNK_HEADER_SIZE] ^= 0x01;
	o = read_memory(b.data, b.len, &b, "split dump");
	cr_assert_eq(o.events, 2);
	cr_assert(o.loss.events_known);
	cr_assert_eq(o.loss.dumps_lost, 1, "the dump opened before the damage");
	cr_assert_eq(o.loss.gcs_lost, 1);
	cr_assert_eq(o.loss.events_lost, 4);
	cr_assert(strstr(o.err.message, "(1 dump, 1 GC and 4 events lost"),
		  "%s", o.err.message);
	htb_free(&b);
}

static void damaged_index_chunk_loses_no_events(void)
{
	struct htb b;
	struct outcome o;

	htb_sample(&b, true);
	b.data[b.index_offset + HT_CHUNK_HEADER_SIZE + 1] ^= 0x80;
	o = read_memory(b.data, b.len, &b, "index");
	cr_assert_eq(o.events, b.n_events);
	cr_assert_eq(o.rc, -1);
	cr_assert_eq(o.err.offset, b.index_offset);
	cr_assert_not(o.index.present, "the index did not survive");
	cr_assert_not(o.loss.events_known);
	htb_free(&b);
}

/* ---- both ways of reading ------------------------------------------------ */

static void read_ahead_on(void)
{
	htb_read_ahead = true;
}

/* Each specification holds read on one thread (suite damage) and with the
 * chunks inflated ahead on a second (suite damage_ahead). */
#define ON_BOTH_READERS(spec)                                        \
	Test(damage, spec) { spec(); }                               \
	Test(damage_ahead, spec, .init = read_ahead_on) { spec(); }

ON_BOTH_READERS(cut_at_every_byte_yields_the_chunks_before_the_cut)
ON_BOTH_READERS(cut_pipe_yields_the_chunks_before_the_cut)
ON_BOTH_READERS(cut_file_without_index_yields_the_chunks_before_the_cut)
ON_BOTH_READERS(bit_flips_after_the_header_are_caught_and_cost_only_their_chunk)
ON_BOTH_READERS(bit_flips_in_the_file_header_refuse_the_file)
ON_BOTH_READERS(loss_is_counted_in_dumps_gcs_and_events_per_the_index)
ON_BOTH_READERS(dump_cut_short_by_the_damage_counts_as_lost)
ON_BOTH_READERS(damaged_index_chunk_loses_no_events)
