/*
 * test_budget.c - budget expressions (src/cli/budget.c): every subject,
 * metric, operator and form of value the grammar has, units decimal and
 * binary, what each parse error says, each operator on each side of its
 * boundary, changes in percent from zero, the one-line description of a
 * broken budget, figures read from a real diff (testdata/diff/one.yaml),
 * and the waste: figures, from the totals of `waste`.
 */
#include <criterion/criterion.h>

#include "analysis/dominators.h"
#include "cli/budget.h"
#include "testutil.h"
#include "util/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct budget parse_ok(const char *text)
{
	struct budget b;
	char why[512] = "";

	cr_assert_eq(budget_parse(text, &b, why, sizeof(why)), 0, "%s: %s",
		     text, why);
	return b;
}

/* The parse fails and the message holds `part`. */
static void parse_fails(const char *text, const char *part)
{
	struct budget b;
	char why[512] = "";

	cr_assert_eq(budget_parse(text, &b, why, sizeof(why)), -1,
		     "'%s' parsed", text);
	cr_assert_not_null(strstr(why, part), "'%s': '%s' lacks '%s'", text,
			   why, part);
	cr_assert_null(b.name);
}

static bool near(long double x, long double y)
{
	return fabsl(x - y) <= 1e-9L * (fabsl(y) + 1.0L);
}

/* ---- subjects and metrics ----------------------------------------------- */

Test(parse, total_defaults_to_bytes)
{
	struct budget b = parse_ok("total>100");

	cr_assert_eq(b.subject, BUDGET_TOTAL);
	cr_assert_eq(b.metric, DIFF_BYTES);
	cr_assert_eq(b.kind, BUDGET_AFTER);
	cr_assert(near(b.value, 100));
	budget_free(&b);
}

Test(parse, total_metrics)
{
	static const struct {
		const char *text;
		enum diff_metric m;
	} cases[] = {
		{"total.count>1", DIFF_COUNT},
		{"total.bytes>1", DIFF_BYTES},
		{"total.retained>1", DIFF_RETAINED},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct budget b = parse_ok(cases[i].text);

		cr_assert_eq(b.subject, BUDGET_TOTAL);
		cr_assert_eq(b.metric, cases[i].m, "%s", cases[i].text);
		budget_free(&b);
	}
}

Test(parse, class_defaults_to_count)
{
	struct budget b = parse_ok("class:Foo>+10%");

	cr_assert_eq(b.subject, BUDGET_CLASS);
	cr_assert_str_eq(b.name, "Foo");
	cr_assert_eq(b.metric, DIFF_COUNT);
	cr_assert_eq(b.kind, BUDGET_PERCENT);
	cr_assert(near(b.value, 10));
	budget_free(&b);
}

Test(parse, class_names_with_dots_and_angles)
{
	struct budget b = parse_ok("class:java.util.HashMap$Node.bytes>=1KiB");

	cr_assert_str_eq(b.name, "java.util.HashMap$Node");
	cr_assert_eq(b.metric, DIFF_BYTES);
	cr_assert_eq(b.op, BUDGET_GE);
	cr_assert(near(b.value, 1024));
	budget_free(&b);
	/* a name ending in a word that is not a metric keeps it */
	b = parse_ok("class:a.b.counter>1");
	cr_assert_str_eq(b.name, "a.b.counter");
	cr_assert_eq(b.metric, DIFF_COUNT);
	budget_free(&b);
	/* < and > in names: the operator is the last one */
	b = parse_ok("class:List<String>.count<=3");
	cr_assert_str_eq(b.name, "List<String>");
	cr_assert_eq(b.op, BUDGET_LE);
	budget_free(&b);
	b = parse_ok("class:Foo<T>>5");
	cr_assert_str_eq(b.name, "Foo<T>");
	cr_assert_eq(b.op, BUDGET_GT);
	budget_free(&b);
	b = parse_ok("class:<>c__DisplayClass.retained<5");
	cr_assert_str_eq(b.name, "<>c__DisplayClass");
	cr_assert_eq(b.metric, DIFF_RETAINED);
	budget_free(&b);
	/* a class whose name is a metric's needs the metric spelled out */
	b = parse_ok("class:Foo.count.count>1");
	cr_assert_str_eq(b.name, "Foo.count");
	budget_free(&b);
}

Test(parse, retained_is_a_class_retained_size)
{
	struct budget b = parse_ok("retained:Cache>50MB");

	cr_assert_eq(b.subject, BUDGET_RETAINED);
	cr_assert_str_eq(b.name, "Cache");
	cr_assert_eq(b.metric, DIFF_RETAINED);
	cr_assert(near(b.value, 50e6L));
	budget_free(&b);
	b = parse_ok("retained:Cache.retained>50MB");
	cr_assert_eq(b.metric, DIFF_RETAINED);
	budget_free(&b);
}

Test(parse, objects_by_id)
{
	struct budget b = parse_ok("object:0x7f00a0>+1MiB");

	cr_assert_eq(b.subject, BUDGET_OBJECT);
	cr_assert_eq(b.id, 0x7f00a0);
	cr_assert_eq(b.metric, DIFF_RETAINED);
	cr_assert_eq(b.kind, BUDGET_CHANGE);
	cr_assert(near(b.value, 1048576));
	budget_free(&b);
	b = parse_ok("object:4096.bytes=64");
	cr_assert_eq(b.id, 4096);
	cr_assert_eq(b.metric, DIFF_BYTES);
	cr_assert_eq(b.op, BUDGET_EQ);
	budget_free(&b);
}

/* waste:KIND names a figure of `waste`: bytes wasted by default, or the
 * copies; no retained size. */
Test(parse, waste_figures)
{
	struct budget b = parse_ok("waste:duplicate-strings>+10%");

	cr_assert_eq(b.subject, BUDGET_WASTE);
	cr_assert_eq(b.waste, BUDGET_DUPLICATE_STRINGS);
	cr_assert_eq(b.metric, DIFF_BYTES);
	cr_assert_eq(b.kind, BUDGET_PERCENT);
	cr_assert(budget_needs_waste(&b));
	budget_free(&b);
	b = parse_ok("waste:duplicate-arrays.count>100");
	cr_assert_eq(b.waste, BUDGET_DUPLICATE_ARRAYS);
	cr_assert_eq(b.metric, DIFF_COUNT);
	cr_assert_eq(b.kind, BUDGET_AFTER);
	budget_free(&b);
	b = parse_ok("waste:empty-collections.count>100");
	cr_assert_eq(b.waste, BUDGET_EMPTY_COLLECTIONS);
	cr_assert_eq(b.metric, DIFF_COUNT);
	budget_free(&b);
	b = parse_ok("waste:sparse-collections>=1MiB");
	cr_assert_eq(b.waste, BUDGET_SPARSE_COLLECTIONS);
	cr_assert_eq(b.metric, DIFF_BYTES);
	budget_free(&b);
	b = parse_ok("total>1");
	cr_assert_not(budget_needs_waste(&b));
	budget_free(&b);
}

/* Each figure from the totals of the dumps before and after. */
Test(check, waste_figures_from_totals)
{
	const struct waste_totals before = {
		.string_copies = 10, .string_bytes = 1000,
		.array_copies = 3, .array_bytes = 300,
		.empty_collections = 50, .empty_bytes = 5000,
		.sparse_collections = 7, .sparse_bytes = 700};
	const struct waste_totals after = {
		.string_copies = 12, .string_bytes = 1200,
		.array_copies = 3, .array_bytes = 250,
		.empty_collections = 150, .empty_bytes = 15000,
		.sparse_collections = 8, .sparse_bytes = 640};
	static const struct {
		const char *text;
		uint64_t before, after;
		bool broken;
	} cases[] = {
		{"waste:duplicate-strings>+10%", 1000, 1200, true},
		{"waste:duplicate-strings>+20%", 1000, 1200, false},
		{"waste:duplicate-strings.count>11", 10, 12, true},
		{"waste:duplicate-arrays.bytes<+0", 300, 250, true},
		{"waste:duplicate-arrays.count>+0", 3, 3, false},
		{"waste:empty-collections.count>100", 50, 150, true},
		{"waste:empty-collections>+200%", 5000, 15000, false},
		{"waste:sparse-collections.count>=+1", 7, 8, true},
		{"waste:sparse-collections<-10%", 700, 640, false},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct budget b = parse_ok(cases[i].text);
		struct diff_value v;

		budget_waste_figures(&b, &before, &after, &v);
		cr_assert_eq(v.before, cases[i].before, "%s", cases[i].text);
		cr_assert_eq(v.after, cases[i].after, "%s", cases[i].text);
		cr_assert_eq(budget_broken(&b, v), cases[i].broken, "%s",
			     cases[i].text);
		budget_free(&b);
	}
}

/* site:METHOD names a figure of `sites` by the allocating method: the
 * bytes its objects take in the dump by default, or their count, what
 * they retain, what it allocated; .live and .allocated are a site's. */
Test(parse, site_figures)
{
	struct budget b = parse_ok("site:Demo.Keep>+10%");

	cr_assert_eq(b.subject, BUDGET_SITE);
	cr_assert_str_eq(b.name, "Demo.Keep");
	cr_assert_eq(b.metric, DIFF_LIVE);
	cr_assert(budget_needs_sites(&b));
	cr_assert_not(budget_needs_waste(&b));
	budget_free(&b);
	b = parse_ok("site:Demo.Keep.live>+10%");
	cr_assert_str_eq(b.name, "Demo.Keep");
	cr_assert_eq(b.metric, DIFF_LIVE);
	budget_free(&b);
	b = parse_ok("site:System.Collections.Generic.List`1.Grow.allocated>1MB");
	cr_assert_str_eq(b.name, "System.Collections.Generic.List`1.Grow");
	cr_assert_eq(b.metric, DIFF_ALLOCATED);
	budget_free(&b);
	b = parse_ok("site:Demo.Keep.retained>=+0");
	cr_assert_eq(b.metric, DIFF_RETAINED);
	budget_free(&b);
	b = parse_ok("site:Demo.Keep.count>100");
	cr_assert_eq(b.metric, DIFF_COUNT);
	budget_free(&b);
	b = parse_ok("class:Foo>1");
	cr_assert_not(budget_needs_sites(&b));
	budget_free(&b);
}

/* A site's figures add up over the sites the method allocates at. */
Test(check, site_figures_from_changes)
{
	const struct site_frame keep = {.method = "Demo.Keep"};
	const struct site_frame keep2 = {.method = "Demo.Keep",
					 .file = "Other.cs"};
	const struct site_frame churn = {.method = "Demo.Churn"};
	const struct site_change changes[] = {
		{.frames = &keep, .n_frames = 1, .live_before = 1000,
		 .live_after = 1200, .live_objects_before = 10,
		 .live_objects_after = 12, .retained_before = 2000,
		 .retained_after = 2600, .allocated_before = 5000,
		 .allocated_after = 5000},
		{.frames = &keep2, .n_frames = 1, .live_before = 100,
		 .live_after = 100, .live_objects_before = 1,
		 .live_objects_after = 1, .retained_before = 100,
		 .retained_after = 100, .allocated_before = 100,
		 .allocated_after = 300},
		{.frames = &churn, .n_frames = 1, .allocated_before = 9000,
		 .allocated_after = 18000},
	};
	static const struct {
		const char *text;
		uint64_t before, after;
		bool broken;
	} cases[] = {
		{"site:Demo.Keep>+10%", 1100, 1300, true},
		{"site:Demo.Keep.live>+20%", 1100, 1300, false},
		{"site:Demo.Keep.count>12", 11, 13, true},
		{"site:Demo.Keep.retained>+500", 2100, 2700, true},
		{"site:Demo.Keep.allocated>+1%", 5100, 5300, true},
		{"site:Demo.Churn.allocated>+100%", 9000, 18000, false},
		{"site:Demo.Churn.live>0", 0, 0, false},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct budget b = parse_ok(cases[i].text);
		struct diff_value v;

		cr_assert(budget_site_figures(&b, changes, ARRAY_SIZE(changes),
					      &v), "%s", cases[i].text);
		cr_assert_eq(v.before, cases[i].before, "%s", cases[i].text);
		cr_assert_eq(v.after, cases[i].after, "%s", cases[i].text);
		cr_assert_eq(budget_broken(&b, v), cases[i].broken, "%s",
			     cases[i].text);
		budget_free(&b);
	}
	{
		struct budget b = parse_ok("site:Demo.Gone>0");
		struct diff_value v;

		cr_assert_not(budget_site_figures(&b, changes,
						  ARRAY_SIZE(changes), &v));
		cr_assert_eq(v.before, 0);
		cr_assert_eq(v.after, 0);
		budget_free(&b);
	}
}

/* ---- operators and values ----------------------------------------------- */

Test(parse, every_operator)
{
	static const struct {
		const char *text;
		enum budget_op op;
	} cases[] = {
		{"total>1", BUDGET_GT}, {"total>=1", BUDGET_GE},
		{"total<1", BUDGET_LT}, {"total<=1", BUDGET_LE},
		{"total=1", BUDGET_EQ}, {"total==1", BUDGET_EQ},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct budget b = parse_ok(cases[i].text);

		cr_assert_eq(b.op, cases[i].op, "%s", cases[i].text);
		cr_assert(near(b.value, 1));
		budget_free(&b);
	}
}

Test(parse, every_kind_of_value)
{
	static const struct {
		const char *text;
		enum budget_value kind;
		long double value;
	} cases[] = {
		{"total>12", BUDGET_AFTER, 12},
		{"total>1.5", BUDGET_AFTER, 1.5L},
		{"total>+12", BUDGET_CHANGE, 12},
		{"total>-12", BUDGET_CHANGE, -12},
		{"total>+0", BUDGET_CHANGE, 0},
		{"total>+5%", BUDGET_PERCENT, 5},
		{"total>-2.5%", BUDGET_PERCENT, -2.5L},
		{"total>+1.5kB", BUDGET_CHANGE, 1500},
		{"total>-1MiB", BUDGET_CHANGE, -1048576},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct budget b = parse_ok(cases[i].text);

		cr_assert_eq(b.kind, cases[i].kind, "%s", cases[i].text);
		cr_assert(near(b.value, cases[i].value), "%s: %Lg",
			  cases[i].text, b.value);
		budget_free(&b);
	}
}

Test(parse, every_unit_any_case)
{
	static const struct {
		const char *text;
		long double value;
	} cases[] = {
		{"total>2B", 2}, {"total>2b", 2},
		{"total>2kB", 2e3L}, {"total>2KB", 2e3L}, {"total>2kb", 2e3L},
		{"total>2MB", 2e6L}, {"total>2GB", 2e9L}, {"total>2TB", 2e12L},
		{"total>2KiB", 2048}, {"total>2kib", 2048},
		{"total>2MiB", 2 * 1048576.0L},
		{"total>2GiB", 2 * 1073741824.0L},
		{"total>2TiB", 2 * 1099511627776.0L},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct budget b = parse_ok(cases[i].text);

		cr_assert(near(b.value, cases[i].value), "%s: %Lg",
			  cases[i].text, b.value);
		budget_free(&b);
	}
}

/* ---- errors name what is wrong ------------------------------------------ */

Test(parse, errors)
{
	parse_fails("total", "no comparison");
	parse_fails("", "no comparison");
	parse_fails("total>", "nothing to compare with after '>'");
	parse_fails("total>=", "nothing to compare with after '>='");
	parse_fails(">5", "no subject before the comparison");
	parse_fails(".count>5", "no subject before the comparison");
	parse_fails("totl>5", "'totl' is not a subject");
	parse_fails("total.size>5", "'total.size' is not a subject");
	parse_fails("class:>5", "'class:' needs a class name");
	parse_fails("retained:.retained>5", "'retained:' needs a class name");
	parse_fails("object:0xzz>5", "'0xzz' is not an object id");
	parse_fails("object:>5", "'object:' needs an object id");
	parse_fails("total=>5", "'=>' is not a comparison");
	parse_fails("total<>5", "'<>' is not a comparison");
	parse_fails("total!=5", "'!=' is not a comparison");
	parse_fails("total===5", "'===' is not a comparison");
	parse_fails("total>abc", "'abc' is not a number");
	parse_fails("total>1.", "'1.' is not a number");
	parse_fails("total>.5", "'.5' is not a number");
	parse_fails("total>+", "'+' is not a number");
	parse_fails("total>1e6", "'e6' is not a unit");
	parse_fails("total>5XB", "'XB' is not a unit");
	parse_fails("total>5%", "a percentage is a change: write +5% or -5%");
	parse_fails("total>+5%B", "'%B' is not a unit");
	parse_fails("class:Foo>5MB", "'5MB' is in bytes, but the metric is count");
	parse_fails("total.count>+1KiB", "'+1KiB' is in bytes");
	parse_fails("retained:Foo.count>5", "retained:Foo measures retained "
		    "bytes only");
	parse_fails("retained:Foo.bytes>5", "class:Foo.bytes");
	parse_fails("total>1234567890123456789012345678901", "is not a number");
	parse_fails("waste:strings>5", "'waste:strings' is no figure of waste");
	parse_fails("waste:>5", "'waste:' is no figure of waste");
	parse_fails("waste:duplicate-arrays.retained>5", "waste:duplicate-"
		    "arrays has no retained size");
	parse_fails("waste:duplicate-strings.count>5MB", "is in bytes");
	parse_fails("site:>5", "'site:' needs the allocating method's name");
	parse_fails("site:Demo.Keep.bytes>5", "site:Demo.Keep has .live");
	parse_fails("class:Foo.live>5", ".live is a figure of an allocation "
		    "site");
	parse_fails("total.allocated>5", ".allocated is a figure of an "
		    "allocation site");
	parse_fails("site:Demo.Keep.count>5MB", "is in bytes");
}

/* ---- checking ----------------------------------------------------------- */

static bool broken(const char *text, uint64_t before, uint64_t after)
{
	struct budget b = parse_ok(text);
	bool r = budget_broken(&b, (struct diff_value){before, after});

	budget_free(&b);
	return r;
}

Test(check, absolute_each_operator_at_its_boundary)
{
	cr_assert(broken("total>100", 0, 101));
	cr_assert_not(broken("total>100", 0, 100));
	cr_assert(broken("total>=100", 0, 100));
	cr_assert_not(broken("total>=100", 0, 99));
	cr_assert(broken("total<100", 500, 99));
	cr_assert_not(broken("total<100", 500, 100));
	cr_assert(broken("total<=100", 500, 100));
	cr_assert_not(broken("total<=100", 500, 101));
	cr_assert(broken("total=100", 7, 100));
	cr_assert_not(broken("total=100", 100, 101));
	cr_assert(broken("total==100", 7, 100));
	/* the figure after, whatever it was before */
	cr_assert(broken("total>50MB", 60000000, 50000001));
	cr_assert_not(broken("total>50MiB", 0, 50000001));
	cr_assert(broken("total.count>1.5", 0, 2));
}

Test(check, change_each_operator_at_its_boundary)
{
	cr_assert(broken("total>+10", 100, 111));
	cr_assert_not(broken("total>+10", 100, 110));
	cr_assert(broken("total>=+10", 100, 110));
	cr_assert_not(broken("total>=+10", 100, 109));
	cr_assert(broken("total<-10", 100, 89));
	cr_assert_not(broken("total<-10", 100, 90));
	cr_assert(broken("total<=-10", 100, 90));
	cr_assert_not(broken("total<=-10", 100, 91));
	cr_assert(broken("total=+0", 100, 100));
	cr_assert_not(broken("total=+0", 100, 101));
	cr_assert(broken("total>-5", 100, 96));   /* shrank by less than 5 */
	cr_assert_not(broken("total>-5", 100, 95));
	cr_assert(broken("total<+5", 100, 104));
	cr_assert(broken("total>+1KiB", 0, 1025));
	cr_assert_not(broken("total>+1KiB", 0, 1024));
}

Test(check, percent_each_operator_at_its_boundary)
{
	cr_assert(broken("total>+10%", 1000, 1101));
	cr_assert_not(broken("total>+10%", 1000, 1100));
	cr_assert(broken("total>=+10%", 1000, 1100));
	cr_assert_not(broken("total>=+10%", 1000, 1099));
	cr_assert(broken("total<-10%", 1000, 899));
	cr_assert_not(broken("total<-10%", 1000, 900));
	cr_assert(broken("total<=-10%", 1000, 900));
	cr_assert_not(broken("total<=-10%", 1000, 901));
	cr_assert(broken("total=+50%", 200, 300));
	cr_assert_not(broken("total=+50%", 200, 301));
	cr_assert(broken("class:Foo.count>+10%", 1200, 1400)); /* +16.7% */
	cr_assert(broken("total>+16.6%", 1200, 1400));
	cr_assert_not(broken("total>+16.7%", 1200, 1400));
	cr_assert(broken("total<+0%", 10, 9));
}

Test(check, percent_from_zero)
{
	/* from nothing to something: more than any percentage */
	cr_assert(broken("total>+1000000%", 0, 1));
	cr_assert(broken("total>=+5%", 0, 1));
	cr_assert_not(broken("total<+5%", 0, 1));
	cr_assert_not(broken("total<=+5%", 0, 1));
	cr_assert_not(broken("total=+5%", 0, 1));
	/* from nothing to nothing: no change */
	cr_assert_not(broken("total>+0%", 0, 0));
	cr_assert(broken("total>=+0%", 0, 0));
	cr_assert(broken("total=+0%", 0, 0));
	cr_assert(broken("total>-5%", 0, 0));
}

Test(check, large_figures)
{
	uint64_t big = UINT64_C(1) << 62;

	cr_assert(broken("total>+1TiB", big, big + (UINT64_C(1) << 41)));
	cr_assert_not(broken("total>+1TiB", big, big + (UINT64_C(1) << 40)));
	cr_assert(broken("total<-50%", big, big / 2 - 1));
}

/* ---- saying it ---------------------------------------------------------- */

static void described(const char *text, uint64_t before, uint64_t after,
		      const char *want)
{
	struct budget b = parse_ok(text);
	char buf[512];

	cr_assert_str_eq(budget_describe(&b, (struct diff_value){before, after},
					 buf, sizeof(buf)), want);
	budget_free(&b);
}

Test(describe, one_line)
{
	described("class:Foo.count>+10%", 1200, 1400,
		  "class:Foo.count>+10%: 1,200 \xe2\x86\x92 1,400 "
		  "(+200, +16.7%)");
	described("total.bytes>+5%", 1000000, 1100000,
		  "total.bytes>+5%: 1,000,000 B \xe2\x86\x92 1,100,000 B "
		  "(+100,000 B, +10.0%)");
	described("retained:Cache<1GB", 2048, 512,
		  "retained:Cache<1GB: 2,048 B \xe2\x86\x92 512 B "
		  "(-1,536 B, -75.0%)");
	described("class:New.count>0", 0, 3,
		  "class:New.count>0: 0 \xe2\x86\x92 3 (+3)");
	described("total.count=5", 5, 5, "total.count=5: 5 \xe2\x86\x92 5 "
		  "(0, 0.0%)");
}

/* ---- figures from a diff ------------------------------------------------ */

static int keep(void *ctx, struct heap *h, bool *k)
{
	struct heap **got = ctx;

	got[h->dump] = h;
	*k = true;
	return 0;
}

Test(figures, from_one_yaml)
{
	static const struct {
		const char *text;
		uint64_t before, after;
		bool broken, found;
	} cases[] = {
		{"total.count>+100%", 5, 10, false, true},
		{"total>=+624", 236, 860, true, true},
		{"total.retained<1KB", 236, 860, true, true},
		{"class:Entry.count>+100%", 1, 3, true, true},
		{"class:Entry.retained=572", 124, 572, true, true},
		{"class:byte[].bytes<=+536", 164, 700, true, true},
		{"class:App.retained<+176", 80, 256, false, true},
		{"retained:Cache>500B", 156, 604, true, true},
		{"retained:Cache>1KiB", 156, 604, false, true},
		{"class:Session>=1", 0, 1, true, true},
		{"class:Nope.count>0", 0, 0, false, false},
		{"object:0x2000>600", 156, 604, true, true},
		{"object:0x2000.bytes=32", 32, 32, true, true},
		{"object:0x1100.bytes<-50%", 64, 0, true, true},
	};
	struct heap *got[2] = {0};
	struct heap_dominators da, db;
	struct ht_error err;
	struct ht_reader *r = ht_reader_open(testdata("diff/one.yaml"), &err);
	uint32_t *match = NULL;
	struct diff d;

	cr_assert_not_null(r);
	cr_assert_eq(heap_scan(r, HEAP_ALL_DUMPS, keep, got, NULL, &err), 0);
	ht_reader_close(r);
	r = ht_reader_open(testdata("diff/one.yaml"), &err);
	cr_assert_eq(diff_match_by_relocation(r, got[0], got[1], 1000, &match,
					      &err), 0);
	ht_reader_close(r);
	cr_assert_eq(heap_dominators(got[0], &da, &err), 0);
	cr_assert_eq(heap_dominators(got[1], &db, &err), 0);
	cr_assert_eq(diff_compute(&d, got[0], &da, got[1], &db, match, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct budget b = parse_ok(cases[i].text);
		struct diff_value v;
		bool found = budget_figures(&b, &d, &v);

		cr_assert_eq(found, cases[i].found, "%s", cases[i].text);
		cr_assert(v.before == cases[i].before &&
			  v.after == cases[i].after, "%s: %llu -> %llu",
			  cases[i].text, (unsigned long long)v.before,
			  (unsigned long long)v.after);
		cr_assert_eq(budget_broken(&b, v), cases[i].broken, "%s",
			     cases[i].text);
		budget_free(&b);
	}
	diff_free(&d);
	free(match);
	heap_dominators_free(&da);
	heap_dominators_free(&db);
	heap_free(got[0]);
	heap_free(got[1]);
}
