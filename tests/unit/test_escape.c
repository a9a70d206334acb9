/*
 * test_escape.c - the escaping rule of each output form (cli/escape.h):
 * ordinary names come out byte for byte; names made to break a form (ESC
 * sequences, a newline, backticks and a link, markup, bytes that are not
 * UTF-8) come out as the rule says. The command-level cases names-* check
 * the same through every command.
 */
#include <criterion/criterion.h>

#include "cli/escape.h"
#include "util/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What fn writes of s, as a string the caller frees. */
static char *written(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	fn(f, s);
	cr_assert(fclose(f) == 0);
	return buf;
}

static void expect(void (*fn)(FILE *, const char *), const char *s,
		   const char *want)
{
	char *got = written(fn, s);

	cr_assert_str_eq(got, want);
	free(got);
}

static void md_cell(FILE *f, const char *s)
{
	esc_markdown_code(f, s, true);
}

static void md_inline(FILE *f, const char *s)
{
	esc_markdown_code(f, s, false);
}

static void xml_all(FILE *f, const char *s)
{
	esc_xml(f, s, SIZE_MAX);
}

Test(text, ordinary_names_are_the_same_pointer)
{
	const char *names[] = {
		"java.lang.String", "System.Collections.Generic.List`1",
		"Foo$$Lambda$14/0x0000000800c02a00", "caf\xc3\xa9 \xf0\x9f\x98\x80",
		"C:\\app\\x.exe", "",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		cr_assert_eq(esc_text(names[i]), names[i]);
	cr_assert_null(esc_text(NULL));
}

Test(text, controls_become_visible_escapes)
{
	cr_assert_str_eq(esc_text("a\x1b[2Jb"), "a\\e[2Jb");
	cr_assert_str_eq(esc_text("x\n  1 forged\r\t"), "x\\n  1 forged\\r\\t");
	cr_assert_str_eq(esc_text("\x01\x7f"), "\\x01\\x7f");
	/* C1 CSI and NEL, a right-to-left override */
	cr_assert_str_eq(esc_text("\xc2\x9b" "31m\xc2\x85"), "\\u009b31m\\u0085");
	cr_assert_str_eq(esc_text("a\xe2\x80\xae" "b"), "a\\u202eb");
	/* bytes that are not UTF-8 (a file name), one escape each */
	cr_assert_str_eq(esc_text("f\xff\xe2\x82.ht"), "f\\xff\\xe2\\x82.ht");
}

Test(text, results_stay_valid_for_the_slots)
{
	const char *r[ESC_TEXT_SLOTS];
	char in[ESC_TEXT_SLOTS][8];

	for (int i = 0; i < ESC_TEXT_SLOTS; i++) {
		snprintf(in[i], sizeof(in[i]), "%d\n", i);
		r[i] = esc_text(in[i]);
	}
	for (int i = 0; i < ESC_TEXT_SLOTS; i++) {
		char want[8];

		snprintf(want, sizeof(want), "%d\\n", i);
		cr_assert_str_eq(r[i], want);
	}
}

Test(json, strict_escapes)
{
	expect(esc_json, "java.lang.String", "\"java.lang.String\"");
	expect(esc_json, "q\"b\\", "\"q\\\"b\\\\\"");
	expect(esc_json, "\x1b[1m\n\t\r\x01\x7f", "\"\\u001b[1m\\n\\t\\r\\u0001\\u007f\"");
	expect(esc_json, "\xc2\x85\xe2\x80\xa8\xe2\x80\xa9", "\"\\u0085\\u2028\\u2029\"");
	expect(esc_json, "caf\xc3\xa9", "\"caf\xc3\xa9\"");
	/* bytes that are not UTF-8: U+FFFD for each ill-formed part */
	expect(esc_json, "a\xff" "b\xe2\x82", "\"a\xef\xbf\xbd" "b\xef\xbf\xbd\"");
}

Test(markdown, fence_outgrows_every_backtick_run)
{
	expect(md_cell, "java.lang.String", "`java.lang.String`");
	expect(md_cell, "List`1", "`` List`1 ``");
	expect(md_cell, "T``[click](https://x/)``", "``` T``[click](https://x/)`` ```");
	expect(md_cell, "`a`", "`` `a` ``");
	expect(md_cell, "```", "```` ``` ````");
	/* spaces at both ends would be stripped: padded so they stay */
	expect(md_cell, " a ", "`  a  `");
}

Test(markdown, pipe_escaped_only_in_a_table_cell)
{
	expect(md_cell, "a|b", "`a\\|b`");
	expect(md_inline, "a|b", "`a|b`");
}

Test(markdown, controls_as_in_text)
{
	expect(md_cell, "a\nb\x1b", "`a\\nb\\e`");
}

Test(svg, markup_and_what_xml_cannot_hold)
{
	expect(xml_all, "java.lang.String", "java.lang.String");
	expect(xml_all, "<a href=\"x\">&'", "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
	expect(xml_all, "a\x01\t\n\x7f" "b", "a????b");
	expect(xml_all, "\xef\xbf\xbe\xef\xbf\xbf\xff", "???");
	expect(xml_all, "caf\xc3\xa9", "caf\xc3\xa9");
}

Test(svg, cut_by_characters)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	esc_xml(f, "\xc3\xa9\xc3\xa9<x", 3);
	fclose(f);
	cr_assert_str_eq(buf, "\xc3\xa9\xc3\xa9&lt;");
	free(buf);
	cr_assert_eq(esc_xml_chars("\xc3\xa9\xf0\x9f\x98\x80x"), 3);
}

Test(folded, one_stack_a_line)
{
	expect(esc_folded, "a;b", "a:b");
	expect(esc_folded, "x\ny\x1b", "x?y?");
	expect(esc_folded, "caf\xc3\xa9", "caf\xc3\xa9");
}

/* --full-names (fold_names_off): the same names whole, escaped still.
 * Criterion runs each test in a process of its own, so the switch, which
 * is the process's, stays in this one. */
Test(names, folded_then_whole_with_full_names)
{
	const char *name = "System.Collections.Generic.Dictionary<"
			   "System.String, System.Object>";
	const char *odd = "System.Collections.Generic.List<System.\x1b[2J>";

	cr_assert_str_eq(fold_name(name),
			 "System.Collections.Generic.Dictionary<String, Object>");
	cr_assert_str_eq(esc_name(odd), "System.Collections.Generic.List<\\e[2J>");
	fold_names_off();
	cr_assert_eq(fold_name(name), name);
	cr_assert_eq(esc_name(name), name);
	cr_assert_str_eq(esc_name(odd),
			 "System.Collections.Generic.List<System.\\e[2J>");
}
