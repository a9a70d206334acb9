/*
 * test_mono_recorder.c - the Mono recorder's parts that need no Mono: its
 * argument parser, the registered root ranges and the set of named
 * classes, including what they do when a pause finds a writer's lock held.
 */
#include "recorders/core/idset.h"
#include "recorders/core/options.h"
#include "recorders/mono/rootmap.h"

#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

/* ---- options ------------------------------------------------------------- */

Test(options, defaults)
{
	struct rec_options o;
	char err[256];

	cr_assert_eq(rec_parse_options("", &o, err, sizeof(err)), 0);
	cr_assert_eq(o.dump_on, DUMP_ON_MAJOR);
	cr_assert_eq(o.every, 1);
	cr_assert(!o.allocations);
	cr_assert(!o.values);
	cr_assert_null(o.output);
	cr_assert_eq(rec_parse_options(NULL, &o, err, sizeof(err)), 0);
}

Test(options, all_of_them)
{
	struct rec_options o;
	char err[256];

	cr_assert_eq(rec_parse_options("dump=every-gc,every=3,alloc,"
					"output=/tmp/a,b c.ht", &o, err,
					sizeof(err)), 0, "%s", err);
	cr_assert_eq(o.dump_on, DUMP_ON_EVERY_GC);
	cr_assert_eq(o.every, 3);
	cr_assert(o.allocations);
	cr_assert(!o.values);
	/* output= takes the rest, commas and spaces included */
	cr_assert_str_eq(o.output, "/tmp/a,b c.ht");
	rec_free_options(&o);
	cr_assert_eq(rec_parse_options("dump=signal,,allocations", &o, err,
					sizeof(err)), 0, "%s", err);
	cr_assert_eq(o.dump_on, DUMP_ON_SIGNAL);
	cr_assert(o.allocations);
	cr_assert_eq(rec_parse_options("values,dump=exit", &o, err,
					sizeof(err)), 0, "%s", err);
	cr_assert(o.values);
	cr_assert(!o.allocations);
	cr_assert_str_eq(dump_on_name(DUMP_ON_EXIT), "exit");
}

/* dump-on= is the spelling `heaptrace record` writes for every recorder;
 * dump=, the old one of the Mono and CLR recorders, is still read, and a
 * refusal names the key as it was written. */
Test(options, one_spelling_and_the_old_one)
{
	struct rec_options o;
	char err[256] = "";

	cr_assert_eq(rec_parse_options("dump-on=exit", &o, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(o.dump_on, DUMP_ON_EXIT);
	cr_assert_eq(rec_parse_options("dump-on=sometimes", &o, err,
				       sizeof(err)), -1);
	cr_assert_str_eq(err, "dump-on= takes major, every-gc, exit or "
			 "signal, not 'sometimes'");
	cr_assert_eq(rec_parse_agent_options("dump=signal", &o, err,
					     sizeof(err)), 0, "%s", err);
	cr_assert_eq(o.dump_on, DUMP_ON_SIGNAL);
	rec_free_options(&o);
}

/* What `heaptrace record` writes is what the recorders read back. */
Test(options, written_as_read)
{
	struct rec_request r = {
		.dump_on = DUMP_ON_EVERY_GC, .every = 4, .allocations = true,
		.values = true, .report_fd = -1, .output = "/tmp/a,b c.ht",
	};
	struct rec_options o;
	char err[256] = "", *text = rec_options_format(&r);

	cr_assert_str_eq(text, "dump-on=every-gc,every=4,alloc,values,"
			 "output=/tmp/a,b c.ht");
	cr_assert_eq(rec_parse_options(text, &o, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(o.dump_on, DUMP_ON_EVERY_GC);
	cr_assert_eq(o.every, 4);
	cr_assert(o.allocations && o.values);
	cr_assert_str_eq(o.output, "/tmp/a,b c.ht");
	rec_free_options(&o);
	free(text);
	r = (struct rec_request){.dump_on = DUMP_ON_MAJOR, .values = true,
				 .control = "/tmp/s", .report_fd = 7,
				 .output = "/t.ht"};
	text = rec_options_format(&r);
	cr_assert_str_eq(text, "dump-on=major,every=1,values,control=/tmp/s,"
			 "report=7,output=/t.ht");
	cr_assert_eq(rec_parse_agent_options(text, &o, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_str_eq(o.control, "/tmp/s");
	cr_assert_str_eq(o.report, "7");
	rec_free_options(&o);
	free(text);
}

/* Each refusal with its message, word for word (DIAGNOSTICS in
 * heaptrace-record(1); the module adds "; not recording"). */
static void refused(const char *args, const char *message)
{
	struct rec_options o;
	char err[256] = "";

	cr_assert_eq(rec_parse_options(args, &o, err, sizeof(err)), -1,
		     "%s accepted", args);
	cr_assert_str_eq(err, message, "arguments '%s'", args);
	cr_assert_null(o.output);
}

Test(options, refusals)
{
	refused("dump=minor",
		"dump= takes major, every-gc, exit or signal, not 'minor'");
	refused("dump=", "dump= takes major, every-gc, exit or signal, not ''");
	refused("every=0",
		"every= takes a number from 1 to 1000000000, not '0'");
	refused("every=x",
		"every= takes a number from 1 to 1000000000, not 'x'");
	refused("every=", "every= takes a number from 1 to 1000000000, not ''");
	refused("every=-1",
		"every= takes a number from 1 to 1000000000, not '-1'");
	refused("every=1000000001", "every= takes a number from 1 to "
		"1000000000, not '1000000001'");
	refused("every=99999999999", "every= takes a number from 1 to "
		"1000000000, not '99999999999'");
	refused("alloc=1", "unknown option 'alloc=1' (options: dump=WHEN, "
		"every=N, alloc, values, sites[=BYTES|all], "
		"output=FILE last)");
	refused("values=1", "unknown option 'values=1' (options: dump=WHEN, "
		"every=N, alloc, values, sites[=BYTES|all], "
		"output=FILE last)");
	refused("verbose", "unknown option 'verbose' (options: dump=WHEN, "
		"every=N, alloc, values, sites[=BYTES|all], "
		"output=FILE last)");
	refused("dump=major,bogus", "unknown option 'bogus' (options: "
		"dump=WHEN, every=N, alloc, values, sites[=BYTES|all], "
		"output=FILE last)");
	refused("output=", "output= needs a file name");
	refused("every=2,output=", "output= needs a file name");
}

Test(options, largest_every)
{
	struct rec_options o;
	char err[256];

	cr_assert_eq(rec_parse_options("every=1000000000", &o, err,
					sizeof(err)), 0, "%s", err);
	cr_assert_eq(o.every, 1000000000);
}

/* ---- rootmap ------------------------------------------------------------- */

Test(rootmap, finds_the_range_that_holds_an_address)
{
	struct rootmap m;
	const struct root_range *r;

	cr_assert_eq(rootmap_init(&m, 4), 0);
	rootmap_add(&m, 0x1000, 0x100, 3, 0xc1a55, false);
	rootmap_add(&m, 0x3000, 0x1000, 1, 77, false);
	rootmap_add(&m, 0x2000, 8, 6, 0, false);
	rootmap_add(&m, 0x5000, 0, 6, 0, false); /* by descriptor: ignored */
	rootmap_freeze(&m);
	r = rootmap_find(&m, 0x1000);
	cr_assert(r && r->source == 3 && r->id == 0xc1a55);
	r = rootmap_find(&m, 0x10ff);
	cr_assert(r && r->source == 3);
	cr_assert_null(rootmap_find(&m, 0x1100));
	cr_assert_null(rootmap_find(&m, 0xfff));
	cr_assert_null(rootmap_find(&m, 0x5000));
	r = rootmap_find(&m, 0x3abc);
	cr_assert(r && r->source == 1 && r->id == 77);
	r = rootmap_find(&m, 0x2007);
	cr_assert(r && r->source == 6);
	cr_assert_null(rootmap_find(&m, 0x2008));
	rootmap_destroy(&m);
}

Test(rootmap, grows_and_forgets)
{
	struct rootmap m;

	cr_assert_eq(rootmap_init(&m, 2), 0);
	for (uintptr_t i = 0; i < 1000; i++)
		rootmap_add(&m, 0x100000 + i * 0x100, 0x80, (uint8_t)(i % 16),
			    i, false);
	for (uintptr_t i = 0; i < 1000; i += 2)
		rootmap_remove(&m, 0x100000 + i * 0x100, false);
	rootmap_freeze(&m);
	for (uintptr_t i = 0; i < 1000; i++) {
		uintptr_t at = 0x100000 + i * 0x100;
		const struct root_range *r = rootmap_find(&m, at + 5);

		if (i % 2 == 0) {
			cr_assert_null(r, "range %lu was removed",
				       (unsigned long)i);
		} else {
			cr_assert_not_null(r, "range %lu", (unsigned long)i);
			cr_assert_eq(r->id, i);
		}
		cr_assert_null(rootmap_find(&m, at + 0x80));
	}
	/* a freed slot is used again */
	rootmap_add(&m, 0x100000, 0x80, 2, 4242, false);
	rootmap_freeze(&m);
	cr_assert_eq(rootmap_find(&m, 0x100010)->id, 4242);
	cr_assert_eq(atomic_load(&m.dropped), 0);
	rootmap_destroy(&m);
}

/* A thread suspended while it registers holds the writers' lock: an
 * update made during the pause is dropped and counted, not waited for. */
Test(rootmap, a_pause_does_not_wait_for_a_writer)
{
	struct rootmap m;

	cr_assert_eq(rootmap_init(&m, 8), 0);
	rootmap_add(&m, 0x1000, 0x10, 1, 1, false);
	pthread_mutex_lock(&m.lock);
	rootmap_add(&m, 0x2000, 0x10, 1, 2, true);
	rootmap_remove(&m, 0x1000, true);
	rootmap_freeze(&m);
	pthread_mutex_unlock(&m.lock);
	cr_assert_eq(atomic_load(&m.dropped), 2);
	cr_assert_not_null(rootmap_find(&m, 0x1008));
	cr_assert_null(rootmap_find(&m, 0x2008));
	rootmap_destroy(&m);
}

Test(rootmap, nothing_frozen_finds_nothing)
{
	struct rootmap m;

	cr_assert_eq(rootmap_init(&m, 0), 0);
	cr_assert_null(rootmap_find(&m, 0x1000));
	rootmap_freeze(&m);
	cr_assert_null(rootmap_find(&m, 0x1000));
	rootmap_destroy(&m);
}

/* ---- idset --------------------------------------------------------------- */

Test(idset, adds_and_finds_through_growth)
{
	struct idset s;

	cr_assert_eq(idset_init(&s, 16), 0);
	for (uint64_t i = 1; i <= 10000; i++)
		cr_assert_eq(idset_add(&s, i * 0x48, false), 1);
	for (uint64_t i = 1; i <= 10000; i++) {
		cr_assert(idset_contains(&s, i * 0x48));
		cr_assert(!idset_contains(&s, i * 0x48 + 8));
		cr_assert_eq(idset_add(&s, i * 0x48, false), 0);
	}
	cr_assert_eq(idset_add(&s, 0, false), -1);
	cr_assert(!idset_contains(&s, 0));
	idset_destroy(&s);
}

/* In a pause the table never grows: it fills up to a margin that keeps
 * every lookup finite, then refuses. */
Test(idset, a_pause_adds_without_growing)
{
	struct idset s;
	size_t added = 0;
	int rc;

	cr_assert_eq(idset_init(&s, 64), 0);
	for (uint64_t i = 1; i <= 200; i++) {
		rc = idset_add(&s, i * 0x10, true);
		cr_assert(rc == 1 || rc == -1);
		added += rc == 1;
	}
	cr_assert_lt(added, 64);
	cr_assert_gt(added, 32);
	for (uint64_t i = 1; i <= 200; i++)
		cr_assert_eq(idset_contains(&s, i * 0x10), i <= added);
	cr_assert(!idset_contains(&s, 0x12345));
	/* outside a pause it grows again */
	cr_assert_eq(idset_add(&s, 0x99990, false), 1);
	cr_assert(idset_contains(&s, 0x99990));
	idset_destroy(&s);
}
