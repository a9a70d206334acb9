/*
 * test_jvm_agent.c - the parts of the JVMTI agent that need no JVM: its
 * option string (a path with commas, bad values refused), Java's names for
 * JNI type signatures (as jcmd GC.class_histogram prints them for
 * classes), and the id map the heap walk looks every reference up in.
 */
#include <criterion/criterion.h>

#include "util/idmap.h"
#include "recorders/jvm/jnames.h"
#include "recorders/core/options.h"

#include <heaptrace/trace.h>

#include <stdlib.h>
#include <string.h>

/* ---- options ------------------------------------------------------------- */

static struct rec_options parsed(const char *text)
{
	struct rec_options o;
	char err[256] = "";

	cr_assert_eq(rec_parse_agent_options(text, &o, err, sizeof(err)), 0,
		     "'%s': %s", text, err);
	return o;
}

/* Refused with this message, word for word (DIAGNOSTICS in
 * heaptrace-record(1)). */
static void refused(const char *text, const char *message)
{
	struct rec_options o;
	char err[256] = "";

	cr_assert_eq(rec_parse_agent_options(text, &o, err, sizeof(err)), -1,
		     "'%s'", text);
	cr_assert_str_eq(err, message, "'%s'", text);
	cr_assert_null(o.output);
}

Test(jvm_options, defaults)
{
	struct rec_options o = parsed(NULL);

	cr_assert_str_eq(o.output, REC_DEFAULT_OUTPUT);
	cr_assert_eq(o.dump_on, DUMP_ON_MAJOR);
	cr_assert_eq(o.every, 1);
	cr_assert(!o.verbose);
	cr_assert(!o.values);
	rec_free_options(&o);
	o = parsed("");
	cr_assert_str_eq(o.output, REC_DEFAULT_OUTPUT);
	rec_free_options(&o);
}

/* report=FD: the descriptor `heaptrace record` gives, digits only; none
 * when not given. */
Test(jvm_options, report_channel)
{
	struct rec_options o =
		parsed("dump-on=major,every=1,report=7,output=/tmp/a,b.ht");

	cr_assert_str_eq(o.report, "7");
	cr_assert_str_eq(o.output, "/tmp/a,b.ht");
	rec_free_options(&o);
	o = parsed("output=t.ht");
	cr_assert_str_eq(o.report, "");
	rec_free_options(&o);
	refused("report=x", "unknown option 'report=x' (options: dump-on=WHEN, "
		"every=N, verbose, values, sites[=BYTES|all], "
		"control=SOCKET, report=FD, "
		"output=FILE last)");
	refused("report=", "unknown option 'report=' (options: dump-on=WHEN, "
		"every=N, verbose, values, sites[=BYTES|all], "
		"control=SOCKET, report=FD, "
		"output=FILE last)");
}

Test(jvm_options, every_option)
{
	struct rec_options o =
		parsed("dump-on=every-gc,every=3,verbose,output=/tmp/t.ht");

	cr_assert_eq(o.dump_on, DUMP_ON_EVERY_GC);
	cr_assert_eq(o.every, 3);
	cr_assert(o.verbose);
	cr_assert_str_eq(o.output, "/tmp/t.ht");
	cr_assert_str_eq(dump_on_name(o.dump_on), "every-gc");
	rec_free_options(&o);
}

/* values: each dump carries values (heaptrace record --values), a word
 * without "=" as verbose is */
Test(jvm_options, values_option)
{
	struct rec_options o = parsed("dump-on=exit,values,output=/tmp/t.ht");

	cr_assert(o.values);
	cr_assert_eq(o.dump_on, DUMP_ON_EXIT);
	cr_assert_str_eq(o.output, "/tmp/t.ht");
	rec_free_options(&o);
	refused("values=yes", "unknown option 'values=yes' (options: "
		"dump-on=WHEN, every=N, verbose, values, sites[=BYTES|all], "
		"control=SOCKET, "
		"report=FD, output=FILE last)");
}

Test(jvm_options, output_takes_the_rest_commas_and_all)
{
	struct rec_options o =
		parsed("dump-on=signal,output=/tmp/a,b=c,dump-on=exit.ht");

	cr_assert_eq(o.dump_on, DUMP_ON_SIGNAL);
	cr_assert_str_eq(o.output, "/tmp/a,b=c,dump-on=exit.ht");
	rec_free_options(&o);
}

Test(jvm_options, empty_items_are_skipped)
{
	struct rec_options o = parsed(",,dump-on=exit,,");

	cr_assert_eq(o.dump_on, DUMP_ON_EXIT);
	rec_free_options(&o);
}

Test(jvm_options, bad_values_are_refused_with_a_reason)
{
	refused("dump-on=sometimes", "dump-on= takes major, every-gc, exit "
		"or signal, not 'sometimes'");
	refused("dump-on=", "dump-on= takes major, every-gc, exit or signal, "
		"not ''");
	refused("every=0", "every= takes a number from 1 to 1000000000, "
		"not '0'");
	refused("every=-1", "every= takes a number from 1 to 1000000000, "
		"not '-1'");
	refused("every=2x", "every= takes a number from 1 to 1000000000, "
		"not '2x'");
	refused("every=1000000001", "every= takes a number from 1 to "
		"1000000000, not '1000000001'");
	refused("every=99999999999999999999999", "every= takes a number from "
		"1 to 1000000000, not '99999999999999999999999'");
	refused("output=", "output= needs a file name");
	refused("control=", "control= needs a socket's path");
	refused("verbose=yes", "unknown option 'verbose=yes' (options: "
		"dump-on=WHEN, every=N, verbose, values, sites[=BYTES|all], "
		"control=SOCKET, "
		"report=FD, output=FILE last)");
	refused("colour=blue", "unknown option 'colour=blue' (options: "
		"dump-on=WHEN, every=N, verbose, values, sites[=BYTES|all], "
		"control=SOCKET, "
		"report=FD, output=FILE last)");
}

/* heaptrace record --pid names its socket before the trace: a path that
 * ends at the next comma */
Test(jvm_options, control_names_the_socket_of_an_attached_recording)
{
	struct rec_options o =
		parsed("dump-on=exit,control=/tmp/ht-1/control,output=/t.ht");

	cr_assert_str_eq(o.control, "/tmp/ht-1/control");
	cr_assert_str_eq(o.output, "/t.ht");
	rec_free_options(&o);
	o = parsed("output=/t.ht");
	cr_assert_null(o.control, "no socket when launched");
	rec_free_options(&o);
}

Test(jvm_options, largest_every)
{
	struct rec_options o = parsed("every=1000000000");

	cr_assert_eq(o.every, 1000000000);
	rec_free_options(&o);
}

/* ---- names --------------------------------------------------------------- */

static void names(const char *signature, const char *name)
{
	char *got = java_type_name(signature);

	cr_assert_not_null(got);
	cr_assert_str_eq(got, name, "%s", signature);
	free(got);
}

Test(jvm_names, classes_as_java_names_them)
{
	names("Ljava/lang/String;", "java.lang.String");
	names("LKnownHeap$Node;", "KnownHeap$Node");
	names("LNoPackage;", "NoPackage");
}

/* The JVM's modified UTF-8 writes a character outside the BMP as two
 * encoded surrogates; the trace holds UTF-8. */
Test(jvm_names, modified_utf8_becomes_utf8)
{
	/* U+1F600 as the JVM encodes it: ED A0 BD ED B8 80 */
	names("Lapp/Smile\xed\xa0\xbd\xed\xb8\x80;", "app.Smile\xf0\x9f\x98\x80");
	names("[Lapp/\xc3\xa9t\xc3\xa9;", "app.\xc3\xa9t\xc3\xa9[]");
}

Test(jvm_names, arrays_and_primitives)
{
	names("[I", "int[]");
	names("[[J", "long[][]");
	names("[Z", "boolean[]");
	names("[Ljava/lang/Object;", "java.lang.Object[]");
	names("[[LKnownHeap$Leaf;", "KnownHeap$Leaf[][]");
	names("I", "int");
	names("V", "void");
}

Test(jvm_names, hidden_classes_keep_their_suffix_apart)
{
	names("Lcom/x/Foo$$Lambda$14.0x0000000800c01234;",
	      "com.x.Foo$$Lambda$14/0x0000000800c01234");
}

Test(jvm_names, odd_signatures_do_not_break)
{
	names("", "");
	names("L", "L");
	names("L;", "");
	names("IJ", "IJ");
	names("[", "[]");
}

/* ---- idmap --------------------------------------------------------------- */

Test(jvm_idmap, dense_and_scattered_keys)
{
	struct idmap m;
	uint32_t v;

	idmap_init(&m);
	cr_assert(!idmap_get(&m, 1, &v));
	for (uint64_t k = 1; k <= 100000; k++)
		cr_assert_eq(idmap_put(&m, k, (uint32_t)(k * 3)), 0);
	/* pointers, and keys far apart that share their low bits */
	for (uint64_t k = 1; k <= 1000; k++) {
		cr_assert_eq(idmap_put(&m, 0x7f0000000000ull + k * 8,
				       (uint32_t)k), 0);
		cr_assert_eq(idmap_put(&m, k << 40, (uint32_t)k + 7), 0);
	}
	cr_assert_eq(m.count, 102000);
	for (uint64_t k = 1; k <= 100000; k++) {
		cr_assert(idmap_get(&m, k, &v));
		cr_assert_eq(v, k * 3);
	}
	for (uint64_t k = 1; k <= 1000; k++) {
		cr_assert(idmap_get(&m, 0x7f0000000000ull + k * 8, &v));
		cr_assert_eq(v, k);
		cr_assert(idmap_get(&m, k << 40, &v));
		cr_assert_eq(v, k + 7);
	}
	cr_assert(!idmap_get(&m, 100001, &v));
	idmap_free(&m);
}

Test(jvm_idmap, get_or_add_keeps_the_first_value)
{
	struct idmap m;
	uint32_t v = 5;

	idmap_init(&m);
	cr_assert_eq(idmap_get_or_add(&m, 42, &v), 0);
	v = 9;
	cr_assert_eq(idmap_get_or_add(&m, 42, &v), 1);
	cr_assert_eq(v, 5);
	cr_assert_eq(idmap_put(&m, 42, 11), 0);
	cr_assert(idmap_get(&m, 42, &v));
	cr_assert_eq(v, 11);
	cr_assert_eq(m.count, 1);
	idmap_clear(&m);
	cr_assert(!idmap_get(&m, 42, &v));
	cr_assert_eq(m.count, 0);
	idmap_free(&m);
}

/* A primitive field's type, from its signature letter (which JVMTI's
 * jvmtiPrimitiveType numbers alike), as the trace and HPROF number
 * them: the value a recorded field and an HPROF dump's agree on. */
Test(jvm_names, primitive_types_as_the_trace_numbers_them)
{
	cr_assert_eq(java_value_type('Z'), HT_TYPE_BOOLEAN);
	cr_assert_eq(java_value_type('C'), HT_TYPE_CHAR);
	cr_assert_eq(java_value_type('F'), HT_TYPE_FLOAT);
	cr_assert_eq(java_value_type('D'), HT_TYPE_DOUBLE);
	cr_assert_eq(java_value_type('B'), HT_TYPE_BYTE);
	cr_assert_eq(java_value_type('S'), HT_TYPE_SHORT);
	cr_assert_eq(java_value_type('I'), HT_TYPE_INT);
	cr_assert_eq(java_value_type('J'), HT_TYPE_LONG);
	/* references and void are no values */
	cr_assert_eq(java_value_type('L'), 0);
	cr_assert_eq(java_value_type('['), 0);
	cr_assert_eq(java_value_type('V'), 0);
	cr_assert_eq(java_value_type('\0'), 0);
}
