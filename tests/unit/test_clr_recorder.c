/*
 * test_clr_recorder.c - the CLR recorder's parts that need no runtime:
 * class names as a .NET developer writes them, from what the profiling
 * interface answers (a table of classes stands for the runtime), and the
 * UTF-16 conversions, and where a dump's stack roots sit among the frames
 * of a snapshot of the stacks (chain.c). Its options are the Mono
 * recorder's (options.h, tested in test_mono_recorder.c).
 */
#include "recorders/clr/chain.h"
#include "recorders/clr/names.h"
#include "util/alloc.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

/* ---- a table of classes ---------------------------------------------------- */

struct fake_class {
	uint64_t id;
	/* an array: rank, element class or element type */
	unsigned rank;
	uint64_t elem;
	uint32_t elem_type;
	/* a type: its nesting, innermost first, and its generic arguments */
	const char *nest[4];
	uint64_t args[4];
	bool unknown; /* the runtime cannot say */
};

enum {
	STRING = 1, INT32, OUTER, INNER, GINNER, INT_ARR, INT_MD, STR_JAGGED,
	LIST_STRING, DICT_STR_INT, GOUTER_INNER, LIST_ARR, UNKNOWN,
	LIST_OF_ARR, SELF_LIST,
};

static const struct fake_class table[] = {
	{.id = STRING, .nest = {"System.String"}},
	{.id = INT32, .nest = {"System.Int32"}},
	{.id = OUTER, .nest = {"Outer"}},
	{.id = INNER, .nest = {"Inner", "Outer"}},
	{.id = INT_ARR, .rank = 1, .elem_type = 0x08},
	{.id = INT_MD, .rank = 2, .elem = INT32},
	{.id = STR_JAGGED, .rank = 1, .elem = 100},
	{.id = 100, .rank = 1, .elem = STRING},
	{.id = LIST_STRING, .nest = {"System.Collections.Generic.List`1"},
	 .args = {STRING}},
	{.id = DICT_STR_INT,
	 .nest = {"System.Collections.Generic.Dictionary`2"},
	 .args = {STRING, INT32}},
	/* Outer<T>.Inner: the nested class declares no parameter of its own
	 * and has its outer class's */
	{.id = GOUTER_INNER, .nest = {"Entry", "Shop`1"}, .args = {INT32}},
	/* Outer<T>.Inner<U> */
	{.id = GINNER, .nest = {"Inner`1", "Outer`1"}, .args = {STRING, INT32}},
	{.id = LIST_ARR, .rank = 1, .elem = LIST_STRING},
	{.id = LIST_OF_ARR, .nest = {"System.Collections.Generic.List`1"},
	 .args = {INT_MD}},
	{.id = UNKNOWN, .unknown = true},
	/* a class whose argument is itself, as no runtime has: the depth
	 * limit ends it */
	{.id = SELF_LIST, .nest = {"Loop`1"}, .args = {SELF_LIST}},
};

static const struct fake_class *find(uint64_t id)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (table[i].id == id)
			return &table[i];
	return NULL;
}

static int fake_array(void *ctx, uint64_t cls, unsigned *rank, uint64_t *elem,
		      uint32_t *elem_type)
{
	const struct fake_class *c = find(cls);

	(void)ctx;
	if (!c || c->unknown)
		return -1;
	if (!c->rank)
		return 0;
	*rank = c->rank;
	*elem = c->elem;
	*elem_type = c->elem_type;
	return 1;
}

static int fake_type(void *ctx, uint64_t cls, struct clrn_type *t)
{
	const struct fake_class *c = find(cls);

	(void)ctx;
	if (!c || c->unknown)
		return -1;
	t->n_nest = 0;
	for (size_t i = 0; i < 4 && c->nest[i]; i++)
		snprintf(t->nest[t->n_nest++], CLRN_SEGMENT_MAX, "%s",
			 c->nest[i]);
	t->n_args = 0;
	for (size_t i = 0; i < 4 && c->args[i]; i++)
		t->args[t->n_args++] = c->args[i];
	return 0;
}

static const struct clrn_source fake = {
	.array = fake_array,
	.type = fake_type,
};

static void named(uint64_t id, const char *expected)
{
	char out[512];
	struct clrn_buf b;

	clrn_init(&b, out, sizeof(out));
	clrn_class_name(&fake, id, &b);
	cr_assert_str_eq(out, expected, "class %llu", (unsigned long long)id);
	cr_assert(!b.cut);
}

/* ---- names ----------------------------------------------------------------- */

Test(names, plain_and_nested)
{
	named(STRING, "System.String");
	named(OUTER, "Outer");
	named(INNER, "Outer+Inner");
}

Test(names, generic_arguments_by_name_not_arity)
{
	named(LIST_STRING, "System.Collections.Generic.List<System.String>");
	named(DICT_STR_INT, "System.Collections.Generic.Dictionary"
			    "<System.String, System.Int32>");
	named(GOUTER_INNER, "Shop<System.Int32>+Entry");
	named(GINNER, "Outer<System.String>+Inner<System.Int32>");
}

Test(names, arrays)
{
	named(INT_ARR, "System.Int32[]");
	named(INT_MD, "System.Int32[,]");
	named(STR_JAGGED, "System.String[][]");
	named(LIST_ARR, "System.Collections.Generic.List<System.String>[]");
	named(LIST_OF_ARR, "System.Collections.Generic.List<System.Int32[,]>");
}

Test(names, unknown_class_by_its_id)
{
	char expected[32];

	snprintf(expected, sizeof(expected), "class 0x%x", (unsigned)UNKNOWN);
	named(UNKNOWN, expected);
	named(999, "class 0x3e7");
}

Test(names, endless_arguments_end)
{
	char out[4096];
	struct clrn_buf b;

	clrn_init(&b, out, sizeof(out));
	clrn_class_name(&fake, SELF_LIST, &b);
	cr_assert(strncmp(out, "Loop<Loop<", 10) == 0, "%s", out);
	cr_assert(strstr(out, "...") != NULL, "%s", out);
}

Test(names, cut_at_a_character)
{
	char out[8];
	struct clrn_buf b;

	clrn_init(&b, out, sizeof(out));
	clrn_put(&b, "ab\xc3\xa9\xc3\xa9\xc3\xa9"); /* ab + three é */
	cr_assert(b.cut);
	cr_assert_str_eq(out, "ab\xc3\xa9\xc3\xa9");
	clrn_put(&b, "x");
	cr_assert_str_eq(out, "ab\xc3\xa9\xc3\xa9");
}

Test(names, arity)
{
	size_t base;

	cr_assert_eq(clrn_arity("List`1", &base), 1);
	cr_assert_eq(base, 4);
	cr_assert_eq(clrn_arity("Func`17", &base), 17);
	cr_assert_eq(base, 4);
	cr_assert_eq(clrn_arity("Plain", &base), 0);
	cr_assert_eq(base, 5);
	/* not a count: the name is kept whole */
	cr_assert_eq(clrn_arity("Odd`x", &base), 0);
	cr_assert_eq(base, 5);
	cr_assert_eq(clrn_arity("Odd`", &base), 0);
	cr_assert_eq(base, 4);
}

Test(names, element_types)
{
	cr_assert_str_eq(clrn_element_type_name(0x08), "System.Int32");
	cr_assert_str_eq(clrn_element_type_name(0x0e), "System.String");
	cr_assert_str_eq(clrn_element_type_name(0x1c), "System.Object");
	cr_assert_null(clrn_element_type_name(0x11)); /* VALUETYPE */
	cr_assert_null(clrn_element_type_name(0x1000));
}

/* ---- UTF-16 ---------------------------------------------------------------- */

Test(utf16, to_utf8)
{
	const uint16_t thread[] = {'M', 'a', 'i', 'n', 0xE9, 0x20AC,
				   0xD83D, 0xDE00, 0};
	const uint16_t lone[] = {'a', 0xD800, 'b', 0xDC00, 0};
	char out[64];

	cr_assert_eq(clrn_from_utf16(out, sizeof(out), thread, 8), 13);
	cr_assert_str_eq(out, "Main\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	clrn_from_utf16(out, sizeof(out), lone, 4);
	cr_assert_str_eq(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	/* a NUL ends it; so does the count */
	clrn_from_utf16(out, sizeof(out), thread, 2);
	cr_assert_str_eq(out, "Ma");
	clrn_from_utf16(out, sizeof(out), thread, 100);
	cr_assert_eq(strlen(out), 13);
	/* a character that does not fit is left out whole */
	cr_assert_eq(clrn_from_utf16(out, 6, thread, 8), 4);
	cr_assert_str_eq(out, "Main");
}

Test(utf16, from_utf8)
{
	uint16_t out[8];

	cr_assert_eq(clrn_to_utf16(out, 8, "A\xc3\xa9\xf0\x9f\x98\x80"), 0);
	cr_assert_eq(out[0], 'A');
	cr_assert_eq(out[1], 0xE9);
	cr_assert_eq(out[2], 0xD83D);
	cr_assert_eq(out[3], 0xDE00);
	cr_assert_eq(out[4], 0);
	cr_assert_eq(clrn_to_utf16(out, 4, "ABCD"), -1);
	cr_assert_eq(clrn_to_utf16(out, 5, "ABCD"), 0);
	cr_assert_eq(clrn_to_utf16(out, 1, ""), 0);
	cr_assert_eq(out[0], 0);
}

/* ---- which fields hold references: their signatures ---------------------- */

static enum clrn_field_holds holds(const uint8_t *sig, size_t len,
				   unsigned *param)
{
	return clrn_field_sig(sig, len, param);
}

Test(field_sig, references)
{
	/* FIELD then: string, object, szarray of int, class token, int[,] */
	static const uint8_t string[] = {0x06, 0x0e}, object[] = {0x06, 0x1c},
			     szarray[] = {0x06, 0x1d, 0x08},
			     cls[] = {0x06, 0x12, 0x49},
			     array[] = {0x06, 0x14, 0x08, 0x02, 0x00, 0x00};
	unsigned p = 99;

	cr_assert_eq(holds(string, sizeof(string), &p), CLRN_HOLDS_REFERENCE);
	cr_assert_eq(holds(object, sizeof(object), &p), CLRN_HOLDS_REFERENCE);
	cr_assert_eq(holds(szarray, sizeof(szarray), &p), CLRN_HOLDS_REFERENCE);
	cr_assert_eq(holds(cls, sizeof(cls), &p), CLRN_HOLDS_REFERENCE);
	cr_assert_eq(holds(array, sizeof(array), &p), CLRN_HOLDS_REFERENCE);
	cr_assert_eq(p, 99, "no type parameter said");
}

Test(field_sig, values)
{
	/* int64, a struct, a pointer, an IntPtr, List<int>'s struct twin */
	static const uint8_t i8[] = {0x06, 0x0a}, vt[] = {0x06, 0x11, 0x49},
			     ptr[] = {0x06, 0x0f, 0x08}, ip[] = {0x06, 0x18},
			     gvt[] = {0x06, 0x15, 0x11, 0x49, 0x01, 0x08};
	unsigned p = 0;

	cr_assert_eq(holds(i8, sizeof(i8), &p), CLRN_HOLDS_VALUE);
	cr_assert_eq(holds(vt, sizeof(vt), &p), CLRN_HOLDS_VALUE);
	cr_assert_eq(holds(ptr, sizeof(ptr), &p), CLRN_HOLDS_VALUE);
	cr_assert_eq(holds(ip, sizeof(ip), &p), CLRN_HOLDS_VALUE);
	cr_assert_eq(holds(gvt, sizeof(gvt), &p), CLRN_HOLDS_VALUE);
}

Test(field_sig, the_type_past_custom_modifiers)
{
	/* int32, a volatile (modreq) uint16, a struct; no field's */
	static const uint8_t i4[] = {0x06, 0x08},
			     vol[] = {0x06, 0x1f, 0x49, 0x07},
			     vt[] = {0x06, 0x11, 0x49}, method[] = {0x00, 0x08},
			     cut[] = {0x06, 0x1f};

	cr_assert_eq(clrn_field_type(i4, sizeof(i4)), 0x08);
	cr_assert_eq(clrn_field_type(vol, sizeof(vol)), 0x07);
	cr_assert_eq(clrn_field_type(vt, sizeof(vt)), 0x11);
	cr_assert_eq(clrn_field_type(method, sizeof(method)), 0);
	cr_assert_eq(clrn_field_type(cut, sizeof(cut)), 0);
	cr_assert_eq(clrn_field_type(NULL, 0), 0);
}

Test(field_sig, generic_instance_of_a_class)
{
	static const uint8_t gc[] = {0x06, 0x15, 0x12, 0x49, 0x01, 0x0e};
	unsigned p = 0;

	cr_assert_eq(holds(gc, sizeof(gc), &p), CLRN_HOLDS_REFERENCE);
}

Test(field_sig, type_parameter_by_index)
{
	static const uint8_t var[] = {0x06, 0x13, 0x01};
	unsigned p = 99;

	cr_assert_eq(holds(var, sizeof(var), &p), CLRN_HOLDS_TYPE_PARAM);
	cr_assert_eq(p, 1);
}

Test(field_sig, custom_modifiers_skipped)
{
	/* volatile (modreq with a 2-byte token) before a class; a modopt with
	 * a 4-byte token before an int */
	static const uint8_t vol[] = {0x06, 0x1f, 0x81, 0x02, 0x12, 0x49},
			     opt[] = {0x06, 0x20, 0xC0, 0, 0, 1, 0x08};
	unsigned p = 0;

	cr_assert_eq(holds(vol, sizeof(vol), &p), CLRN_HOLDS_REFERENCE);
	cr_assert_eq(holds(opt, sizeof(opt), &p), CLRN_HOLDS_VALUE);
}

Test(field_sig, not_a_field_or_cut_short)
{
	static const uint8_t method[] = {0x00, 0x00, 0x0e},
			     cut[] = {0x06, 0x1f, 0x81}, empty[] = {0x06};
	unsigned p = 0;

	cr_assert_eq(holds(method, sizeof(method), &p), CLRN_HOLDS_VALUE);
	cr_assert_eq(holds(cut, sizeof(cut), &p), CLRN_HOLDS_VALUE);
	cr_assert_eq(holds(empty, sizeof(empty), &p), CLRN_HOLDS_VALUE);
	cr_assert_eq(holds(NULL, 0, &p), CLRN_HOLDS_VALUE);
}

/* ---- the stack roots' chain (chain.c) ------------------------------------ */

/* Bounds the roots' chain through the frames; the frames each root is
 * certain of, -1 where it is not, in certain[]. */
static bool chain(const uint64_t *frames, size_t n_frames,
		  const uint64_t *roots, size_t n_roots, int64_t *certain)
{
	int64_t lo[16], hi[16];
	bool ok;

	cr_assert_leq(n_roots, 16);
	ok = chain_bound(frames, n_frames, roots, n_roots, lo, hi);
	for (size_t i = 0; i < n_roots; i++)
		certain[i] = ok && chain_certain(lo, hi, i) ? lo[i] : -1;
	return ok;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Three threads parked in Park (0xa) under Start (0xb), each holding a
 * list in Park and its closure in Start: every root is placed. */
Test(chain, parked_threads_each_holding_something)
{
	const uint64_t frames[] = {0xa, 0xb, 0xa, 0xb, 0xa, 0xb};
	const uint64_t roots[] = {0xa, 0xb, 0xa, 0xa, 0xb, 0xa, 0xb};
	const int64_t want[] = {0, 1, 2, 2, 3, 4, 5};
	int64_t got[N(roots)];

	cr_assert(chain(frames, N(frames), roots, N(roots), got));
	for (size_t i = 0; i < N(roots); i++)
		cr_assert_eq(got[i], want[i], "root %zu at %lld, not %lld", i,
			     (long long)got[i], (long long)want[i]);
}

/* Two threads alike, one holding nothing: which one holds the root is
 * not known, so neither is said. */
Test(chain, alike_threads_one_holding_nothing)
{
	const uint64_t frames[] = {0x1, 0xa, 0xb, 0xa, 0xb};
	const uint64_t roots[] = {0x1, 0xa, 0xb};
	int64_t got[N(roots)];

	cr_assert(chain(frames, N(frames), roots, N(roots), got));
	cr_assert_eq(got[0], 0, "main's root is certain");
	cr_assert_eq(got[1], -1);
	cr_assert_eq(got[2], -1);
}

/* Recursion: a root of the method that is twice on one stack. */
Test(chain, recursion_is_not_certain)
{
	const uint64_t frames[] = {0xa, 0xa, 0xb};
	const uint64_t roots[] = {0xa, 0xb};
	int64_t got[N(roots)];

	cr_assert(chain(frames, N(frames), roots, N(roots), got));
	cr_assert_eq(got[0], -1);
	cr_assert_eq(got[1], 2);
}

/* A root of a method no frame has (a thread started after the snapshot,
 * a stub with no method) constrains nothing and is not placed. */
Test(chain, a_root_of_no_frame_is_skipped)
{
	const uint64_t frames[] = {0xa, 0xb};
	const uint64_t roots[] = {0xa, 0xf, 0, 0xb};
	int64_t got[N(roots)];

	cr_assert(chain(frames, N(frames), roots, N(roots), got));
	cr_assert_eq(got[0], 0);
	cr_assert_eq(got[1], -1);
	cr_assert_eq(got[2], -1);
	cr_assert_eq(got[3], 1);
}

/* A thread that ran on: its roots come in an order no chain has, and
 * then no root is placed. */
Test(chain, no_chain_places_nothing)
{
	const uint64_t frames[] = {0xa, 0xb, 0xc};
	const uint64_t roots[] = {0xa, 0xc, 0xb};
	int64_t got[N(roots)];

	cr_assert_not(chain(frames, N(frames), roots, N(roots), got));
	for (size_t i = 0; i < N(roots); i++)
		cr_assert_eq(got[i], -1);
}
