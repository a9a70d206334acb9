/*
 * test_flame.c - frames of the dominator tree (src/analysis/flame.c) and
 * their folded stacks and SVG (src/cli/flame-render.c): hand-checked
 * folded output of the traces of testdata/, siblings of one class
 * merged, the depth limit, names that folded stacks or XML cannot hold as
 * they are, a list a hundred thousand long (no recursion), and seeded
 * random heaps against what must hold of any frames.
 */
#include <criterion/criterion.h>

#include "analysis/dominators.h"
#include "analysis/flame.h"
#include "cli/flame-render.h"
#include "testheap.h"
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loaded {
	struct heap *h;
	struct heap_dominators d;
	struct flame f;
};

static void load(struct loaded *l, const char *path, int64_t dump,
		 unsigned depth)
{
	struct ht_error err;

	memset(l, 0, sizeof(*l));
	l->h = testheap_load(path, dump, NULL);
	cr_assert_eq(heap_dominators(l->h, &l->d, &err), 0);
	cr_assert_eq(flame_build(l->h, &l->d, depth, &l->f, &err), 0, "%s",
		     err.message);
}

static void unload(struct loaded *l)
{
	flame_free(&l->f);
	heap_dominators_free(&l->d);
	heap_free(l->h);
}

static char *folded(const struct flame *f)
{
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);

	cr_assert_not_null(out);
	cr_assert_eq(flame_write_folded(f, out), 0);
	fclose(out);
	return text;
}

static char *svg(const struct flame *f, const char *title)
{
	struct flame_svg_options o = {.width = 800, .title = title};
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);

	cr_assert_not_null(out);
	cr_assert_eq(flame_write_svg(f, &o, out), 0);
	fclose(out);
	return text;
}

static void assert_folded(const char *path, int64_t dump, unsigned depth,
			  const char *want)
{
	struct loaded l;
	char *text;

	load(&l, path, dump, depth);
	text = folded(&l.f);
	cr_assert_str_eq(text, want);
	free(text);
	unload(&l);
}

/* ---- folded stacks, checked by hand ------------------------------------- */

/* one.yaml's dump 1 (its header has the dominators): frames in name
 * order, each line its frame's self bytes. */
Test(folded, one_yaml)
{
	assert_folded(testdata("diff/one.yaml"), 1, FLAME_DEFAULT_DEPTH,
		      "C_RT_CLASS;Cache 32\n"
		      "C_RT_CLASS;Cache;Entry 24\n"
		      "C_RT_CLASS;Cache;Entry;Entry 24\n"
		      "C_RT_CLASS;Cache;Entry;Entry;Entry 24\n"
		      "C_RT_CLASS;Cache;Entry;Entry;Entry;byte[] 300\n"
		      "C_RT_CLASS;Cache;Entry;Entry;byte[] 100\n"
		      "C_RT_CLASS;Cache;Entry;byte[] 100\n"
		      "C_RT_THREAD;App 16\n"
		      "C_RT_THREAD;App;Session 40\n"
		      "C_RT_THREAD;App;Session;byte[] 200\n");
}

/* The two Requests of two frames of Worker.run merge into one frame, as
 * do their buffers. */
Test(folded, siblings_of_one_class_merge)
{
	struct loaded l;
	char *text;

	load(&l, testdata("diff/run2.yaml"), HEAP_LAST_DUMP, 64);
	text = folded(&l.f);
	cr_assert_not_null(strstr(text, "\nC_RT_JIT;Request 96\n"
				  "C_RT_JIT;Request;byte[] 204\n"));
	for (uint32_t x = l.f.first_top; x != FLAME_NONE; x = flame_next(&l.f, x))
		if (strcmp(l.f.frames[x].name, "Request") == 0)
			cr_assert_eq(l.f.frames[x].objects, 2);
	free(text);
	unload(&l);
}

/* cli-shop.yaml's dump 1: 0x1200 (Cache) and 0x1220 (byte[]) are reached
 * from several roots, and only the virtual root dominates them; the list
 * under the JIT frame is three Nodes deep; ?0x50 is never named. */
Test(folded, several_roots_and_unnamed_classes)
{
	assert_folded(testdata("analysis/cli-shop.yaml"), 1, 64,
		      "(several roots);Cache 32\n"
		      "(several roots);Cache;byte[] 100\n"
		      "(several roots);byte[] 200\n"
		      "C_RT_CLASS;Cache 32\n"
		      "C_RT_JIT;Node 24\n"
		      "C_RT_JIT;Node;Node 24\n"
		      "C_RT_JIT;Node;Node;Node 24\n"
		      "C_RT_JIT;Node;Node;Node;byte[] 8\n"
		      "C_RT_NATIVE;?0x50 40\n"
		      "C_RT_THREAD;App 16\n");
}

/* CLR roots are named by their kind; weak roots retain nothing. */
Test(folded, clr_root_kinds)
{
	struct loaded l;
	char *text;

	load(&l, testdata("analysis/clr-weak.yaml"), HEAP_LAST_DUMP, 64);
	text = folded(&l.f);
	cr_assert_not_null(strstr(text, "stack;"));
	cr_assert_eq(l.f.total, l.h->total_bytes - l.d.unreachable_bytes);
	free(text);
	unload(&l);
}

Test(folded, depth_limit)
{
	assert_folded(testdata("diff/one.yaml"), 1, 2,
		      "C_RT_CLASS;Cache 32\n"
		      "C_RT_CLASS;Cache;Entry 24\n"
		      "C_RT_CLASS;Cache;Entry;... 548\n"
		      "C_RT_THREAD;App 16\n"
		      "C_RT_THREAD;App;Session 40\n"
		      "C_RT_THREAD;App;Session;... 200\n");
	assert_folded(testdata("diff/one.yaml"), 1, 1,
		      "C_RT_CLASS;Cache 32\n"
		      "C_RT_CLASS;Cache;... 572\n"
		      "C_RT_THREAD;App 16\n"
		      "C_RT_THREAD;App;... 240\n");
}

/* ---- names -------------------------------------------------------------- */

static const char *names_trace(void)
{
	static const char text[] =
		"heaptrace: 1\nruntime: msjvm\npointer_size: 4\n"
		"reports_survivors: false\nevents:\n"
		"  - class: {id: 0x10, name: \"a;b c\"}\n"
		"  - class: {id: 0x20, name: \"List<T> & \\\"q\\\"\"}\n"
		"  - class: {id: 0x30, name: \"tab\\there\"}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		"  - root_references: {refs: [0x100], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n"
		"  - object_references: {id: 0x100, class: 0x10, size: 8, refs: [0x110, 0x120], flags: 0}\n"
		"  - object_references: {id: 0x110, class: 0x20, size: 4, refs: [], flags: 0}\n"
		"  - object_references: {id: 0x120, class: 0x30, size: 2, refs: [], flags: 0}\n"
		"  - begin_container: {type: C_END}\n";

	return tmp_file_with("names.yaml", text, sizeof(text) - 1);
}

Test(names, folded_keeps_its_separators_out)
{
	assert_folded(names_trace(), 0, 64,
		      "C_RT_STRONGPTR;a:b c 8\n"
		      "C_RT_STRONGPTR;a:b c;List<T> & \"q\" 4\n"
		      "C_RT_STRONGPTR;a:b c;tab?here 2\n");
}

Test(names, svg_escapes_markup)
{
	struct loaded l;
	char *text;

	load(&l, names_trace(), 0, 64);
	text = svg(&l.f, "<title & more>");
	cr_assert_not_null(strstr(text, "List&lt;T&gt; &amp; &quot;q&quot;"));
	cr_assert_not_null(strstr(text, "&lt;title &amp; more&gt;"));
	cr_assert_not_null(strstr(text, "tab?here"));
	cr_assert_null(strstr(text, "List<T>"));
	free(text);
	unload(&l);
}

/* Bytes that are not UTF-8 would make the document unreadable. */
Test(names, svg_replaces_what_is_not_utf8)
{
	struct flame_frame fr[2] = {
		{.parent = FLAME_NONE, .first_child = 1,
		 .next_sibling = FLAME_NONE, .name = "C_RT_CLASS", .total = 10},
		{.parent = 0, .first_child = FLAME_NONE,
		 .next_sibling = FLAME_NONE, .depth = 1,
		 .name = "ok\xc3\xa9 bad\xff\xc3 \xe2\x82\xac end",
		 .objects = 1, .self = 10, .total = 10},
	};
	struct flame f = {.n = 2, .frames = fr, .first_top = 0, .total = 10,
			  .objects = 1, .max_depth = 1};
	char *text = svg(&f, NULL);

	cr_assert_not_null(strstr(text, "ok\xc3\xa9 bad?? \xe2\x82\xac end"));
	free(text);
}

/* ---- the SVG ------------------------------------------------------------ */

Test(svg, a_document_with_every_frame)
{
	struct loaded l;
	char *text, *again;

	load(&l, testdata("diff/one.yaml"), 1, 64);
	text = svg(&l.f, "one.yaml");
	cr_assert_eq(strncmp(text, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			     "<svg xmlns=\"http://www.w3.org/2000/svg\" "
			     "width=\"800\"", 85), 0);
	cr_assert_not_null(strstr(text, "</svg>\n"));
	cr_assert_null(strstr(text, "<script"));
	cr_assert_not_null(strstr(text, ">all</text>"));
	cr_assert_not_null(strstr(text, ">Session</text>"));
	cr_assert_not_null(strstr(text, "<title>C_RT_CLASS: 604 B retained "
				  "(70.23%), 0 B self, 0 objects</title>"));
	cr_assert_not_null(strstr(text, "<title>Entry: 572 B retained (66.51%), "
				  "24 B self, 1 object</title>"));
	/* 1 all, 2 tops, 10 class frames */
	{
		size_t boxes = 0;

		for (const char *p = text; (p = strstr(p, "<rect x=")); p++)
			boxes++;
		cr_assert_eq(boxes, 13);
	}
	again = svg(&l.f, "one.yaml");
	cr_assert_str_eq(text, again);
	free(again);
	free(text);
	unload(&l);
}

Test(svg, an_empty_heap)
{
	struct flame f = {.first_top = FLAME_NONE};
	char *text = svg(&f, "empty");

	cr_assert_not_null(strstr(text, ">all</text>"));
	cr_assert_not_null(strstr(text, "0 B retained (0.00%)"));
	free(text);
}

/* ---- deep and random heaps ---------------------------------------------- */

/* A list of n Nodes under one root. */
static const char *list_trace(unsigned n)
{
	size_t cap = (size_t)n * 110 + 1024, len = 0;
	char *t = malloc(cap);
	const char *path;

	cr_assert_not_null(t);
	len += (size_t)snprintf(t, cap, "heaptrace: 1\nruntime: msjvm\n"
		"pointer_size: 4\nreports_survivors: false\nevents:\n"
		"  - class: {id: 0x10, name: Node}\n"
		"  - begin_container: {type: C_BEGIN}\n"
		"  - begin_container: {type: C_RT_STRONGPTR, id1: 0x1}\n"
		"  - root_references: {refs: [0x100000], flags: [0]}\n"
		"  - begin_container: {type: C_HEAP}\n");
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len,
			"  - object_references: {id: 0x%x, class: 0x10, size: 8, "
			"refs: [0x%x], flags: 0}\n", 0x100000 + 8 * i,
			i + 1 < n ? 0x100000 + 8 * (i + 1) : 0);
	len += (size_t)snprintf(t + len, cap - len,
				"  - begin_container: {type: C_END}\n");
	path = tmp_file_with("list.yaml", t, len);
	free(t);
	return path;
}

Test(deep, a_list_of_a_hundred_thousand, .timeout = 120)
{
	struct loaded l;
	struct dom_tree t;
	uint64_t walked = 0;
	char *text;

	load(&l, list_trace(100000), 0, 64);
	cr_assert_eq(l.f.total, 800000);
	cr_assert_eq(l.f.max_depth, 65);
	cr_assert_eq(l.f.n, 66);
	text = folded(&l.f);
	cr_assert_not_null(strstr(text, ";... 799488\n"));
	free(text);
	text = svg(&l.f, NULL);
	free(text);
	cr_assert_eq(dom_tree_build(l.h, &l.d, &t), 0);
	for (uint32_t x = t.top; x != HEAP_NONE; x = dom_tree_next(&t, &l.d, x))
		walked++;
	cr_assert_eq(walked, 100000);
	dom_tree_free(&t);
	unload(&l);
}

static const char *random_trace(unsigned n, unsigned seed)
{
	size_t cap = (size_t)n * 160 + 4096, len = 0;
	char *t = malloc(cap);
	const char *path;
	char name[32];

	cr_assert_not_null(t);
	test_random_seed(seed);
	len += (size_t)snprintf(t, cap, "heaptrace: 1\nruntime: clr\n"
		"pointer_size: 8\nreports_survivors: true\nevents:\n");
	for (int c = 0; c < 6; c++)
		len += (size_t)snprintf(t + len, cap - len,
			"  - class: {id: 0x%x, name: K%d}\n", 0x10 + c, c % 5);
	len += (size_t)snprintf(t + len, cap - len,
		"  - gc_started: {generations: [0, 1, 2], reason: induced}\n");
	for (int r = 0; r < 4; r++)
		len += (size_t)snprintf(t + len, cap - len,
			"  - root_references: {refs: [0x%llx], flags: [0], "
			"kinds: [%s], root_flags: [%d], root_ids: [0]}\n",
			0x1000ull + 16 * (test_random() % n),
			r % 2 ? "handle" : "stack", r == 3 ? 2 : 0);
	for (unsigned i = 0; i < n; i++) {
		unsigned a = (unsigned)(test_random() % n), b = (unsigned)(test_random() % n);

		len += (size_t)snprintf(t + len, cap - len,
			"  - object_references: {id: 0x%x, class: 0x%x, size: %u, "
			"refs: [0x%x, 0x%x], flags: 0}\n", 0x1000 + 16 * i,
			0x10 + (unsigned)(test_random() % 6), 1 + (unsigned)(test_random() % 50),
			test_random() % 4 ? 0x1000 + 16 * a : 0,
			test_random() % 3 ? 0x1000 + 16 * b : 0);
	}
	len += (size_t)snprintf(t + len, cap - len, "  - gc_finished: {}\n");
	snprintf(name, sizeof(name), "random-%u.yaml", seed);
	path = tmp_file_with(name, t, len);
	free(t);
	return path;
}

static void check_frames(const struct loaded *l, unsigned depth)
{
	const struct flame *f = &l->f;
	uint64_t self = 0, tops = 0, objects = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct flame_frame *fr = &f->frames[i];
		uint64_t below = 0;
		const char *prev = NULL;

		self += fr->self;
		objects += fr->objects;
		cr_assert_leq(fr->depth, depth + 1);
		for (uint32_t c = fr->first_child; c != FLAME_NONE;
		     c = f->frames[c].next_sibling) {
			cr_assert_eq(f->frames[c].parent, i);
			cr_assert_eq(f->frames[c].depth, fr->depth + 1);
			if (prev)
				cr_assert_lt(strcmp(prev, f->frames[c].name), 0);
			prev = f->frames[c].name;
			below += f->frames[c].total;
		}
		cr_assert_eq(fr->total, fr->self + below);
		if (fr->parent == FLAME_NONE)
			tops += fr->total;
	}
	cr_assert_eq(self, f->total);
	cr_assert_eq(tops, f->total);
	cr_assert_eq(objects, f->objects);
	cr_assert_eq(f->total, l->h->total_bytes - l->d.unreachable_bytes);
	cr_assert_eq(f->objects, l->d.reachable);
}

Test(random, frames_add_up)
{
	for (unsigned seed = 1; seed <= 60; seed++) {
		struct loaded l;
		unsigned depth = 1 + seed % 7;
		char *text;
		uint64_t sum = 0;

		load(&l, random_trace(40 + 7 * seed, seed), HEAP_LAST_DUMP, depth);
		check_frames(&l, depth);
		/* the folded lines add up to what the roots retain */
		text = folded(&l.f);
		for (char *line = text; *line;) {
			char *nl = strchr(line, '\n');

			*nl = '\0';
			sum += strtoull(strrchr(line, ' ') + 1, NULL, 10);
			line = nl + 1;
		}
		cr_assert_eq(sum, l.f.total, "seed %u", seed);
		free(text);
		unload(&l);
	}
}
