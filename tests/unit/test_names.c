/*
 * test_names.c - names as a developer reads them (src/analysis/names.c):
 * steps through instance and static fields and array elements, class
 * objects, and roots of every container and CLR kind, on a small graph
 * made by hand; the names a trace without fields keeps; and the one table
 * of root flags' names.
 */
#include <criterion/criterion.h>

#include "analysis/names.h"
#include "util/alloc.h"

#include <string.h>

/* Classes sorted by id, as a dump's snapshot has them. */
static struct heap_class classes[] = {
	{.id = 0x10, .name = "java.lang.Class"},
	{.id = 0x30, .name = "demo.Holder"},
	{.id = 0x40, .name = "java.lang.Object[]"},
	{.id = 0x50, .name = "Demo.Pair[]"},
	{.id = 0x60, .name = "demo.HeapDemo"},
	{.id = 0x70, .name = NULL},
};

/* Field 3 was named by a reference and never declared. */
static struct heap_field fields[] = {
	{.id = 1, .class_id = 0x30, .name = "cache", .kind = HT_FIELD_INSTANCE},
	{.id = 2, .class_id = 0x60, .name = "listHead", .kind = HT_FIELD_STATIC},
	{.id = 9, .class_id = 0, .name = NULL},
	{.id = 4, .class_id = 0x99, .name = "x", .kind = HT_FIELD_INSTANCE},
	{.id = 5, .class_id = 0x55, .name = "Key", .kind = HT_FIELD_INSTANCE},
	{.id = 6, .class_id = 0x55, .name = "Value", .kind = HT_FIELD_INSTANCE},
};

static struct heap_name threads[] = {{.id = 0x1, .name = "main"}};
static struct heap_name methods[] = {{.id = 0x900, .name = "demo.Main.main"}};

/*
 * 0x60   java.lang.Class    (demo.HeapDemo's class object): listHead 0x2000
 * 0x2000 demo.Holder:        cache 0x3000, (field 9) null, (field 4) null
 * 0x3000 java.lang.Object[]: [0] null, [1] 0x2000
 * 0x4000 java.lang.Class     (no class has its id)
 * 0x5000 Demo.Pair[]:        three structs (Demo.Pair, 0x55) of a Key and a
 *                            Value each, nulls kept, as the CLR recorder
 *                            gives them: [1].Value 0x2000
 */
static ht_id ids[] = {0x60, 0x2000, 0x3000, 0x4000, 0x5000};
static uint32_t cls[] = {0, 1, 2, 0, 3};
static uint32_t sizes[] = {64, 24, 40, 64, 72};
static uint64_t ref_start[] = {0, 1, 4, 6, 6, 12};
static uint32_t refs[] = {1, 2, HEAP_NULL_REF, HEAP_NULL_REF, HEAP_NULL_REF, 1,
			  HEAP_NULL_REF, HEAP_NULL_REF, HEAP_NULL_REF, 1,
			  HEAP_NULL_REF, HEAP_NULL_REF};
/* No object follows a class layout: each is listed with its fields. */
static uint64_t follows_none[1];
static uint64_t no_layouts[8];
static uint32_t odd[] = {0, 1, 2, 3, 4};
static uint64_t odd_start[] = {0, 1, 4, 6, 6, 12};
static uint32_t odd_field[] = {2, 1, 3, 4, 0, 0, 5, 6, 5, 6, 5, 6};

static struct heap h;

static void with_fields(void)
{
	h = (struct heap){
		.n_classes = ARRAY_SIZE(classes),
		.classes = classes,
		.n_threads = 1,
		.threads = threads,
		.n_methods = 1,
		.methods = methods,
		.n_fields = ARRAY_SIZE(fields),
		.fields = fields,
		.n = 5,
		.id = ids,
		.cls = cls,
		.size = sizes,
		.ref_start = ref_start,
		.ref = refs,
		.field_follows = follows_none,
		.layout_start = no_layouts,
		.n_odd = 5,
		.odd = odd,
		.odd_start = odd_start,
		.odd_field = odd_field,
	};
}

/* The same graph as a trace of an older recorder gives it. */
static void without_fields(void)
{
	with_fields();
	h.n_fields = 0;
	h.fields = NULL;
	h.field_follows = NULL;
}

static const char *step(uint32_t from, uint64_t e)
{
	static char buf[NAME_TEXT];

	return step_text(&h, from, e, buf);
}

static const char *root(struct heap_root r)
{
	static char buf[NAME_TEXT];

	return root_text(&h, &r, buf);
}

static const char *class_of(uint32_t object)
{
	static char buf[NAME_TEXT];

	return object_class_text(&h, object, buf);
}

Test(steps, through_instance_and_static_fields, .init = with_fields)
{
	cr_assert_str_eq(step(1, 1), "demo.Holder.cache");
	cr_assert_str_eq(step(0, 0), "static demo.HeapDemo.listHead");
}

Test(steps, an_undeclared_field_is_no_field, .init = with_fields)
{
	cr_assert_str_eq(step(1, 2), "[1]");
}

Test(steps, a_field_of_an_unnamed_class, .init = with_fields)
{
	cr_assert_str_eq(step(1, 3), "?0x99.x");
}

Test(steps, array_elements_by_index, .init = with_fields)
{
	cr_assert_str_eq(step(2, 4), "java.lang.Object[][0]");
	cr_assert_str_eq(step(2, 5), "java.lang.Object[][1]");
}

Test(steps, struct_fields_inside_array_elements, .init = with_fields)
{
	cr_assert_str_eq(step(4, 6), "Demo.Pair[][0].Key");
	cr_assert_str_eq(step(4, 9), "Demo.Pair[][1].Value");
	cr_assert_str_eq(step(4, 11), "Demo.Pair[][2].Value");
}

Test(steps, array_elements_as_the_jvm_spells_arrays, .init = with_fields)
{
	static struct heap_class jvm[ARRAY_SIZE(classes)];

	memcpy(jvm, classes, sizeof(classes));
	jvm[2].name = "[Ljava.lang.Object;";
	h.classes = jvm;
	cr_assert_str_eq(step(2, 5), "[Ljava.lang.Object;[1]");
}

/* An array whose link to its class comes first: the link reads as MAT
 * names it, and the elements keep their indexes. */
Test(steps, links_by_name_and_elements_after_them, .init = with_fields)
{
	static struct heap_field with_link[ARRAY_SIZE(fields) + 1];
	static uint32_t linked_field[] = {2, 1, 3, 4, 5, 0, 0};
	static uint64_t linked_start[] = {0, 1, 4, 7, 7};
	static uint64_t linked_refs_start[] = {0, 1, 4, 7, 7};
	static uint32_t linked_refs[] = {1, 2, HEAP_NULL_REF, HEAP_NULL_REF,
					 HEAP_NULL_REF, HEAP_NULL_REF, 1};

	memcpy(with_link, fields, sizeof(fields));
	with_link[4] = (struct heap_field){.id = 5, .class_id = 0,
					   .name = HT_LINK_CLASS};
	h.fields = with_link;
	h.n_fields = 5;
	h.odd_field = linked_field;
	h.odd_start = linked_start;
	h.ref_start = linked_refs_start;
	h.ref = linked_refs;
	cr_assert_str_eq(step(2, 4), "<class>");
	cr_assert_str_eq(step(2, 5), "java.lang.Object[][0]");
	cr_assert_str_eq(step(2, 6), "java.lang.Object[][1]");
	cr_assert_str_eq(step(1, 2), "[1]", "an undeclared field is no link");
}

Test(steps, by_position_without_fields, .init = without_fields)
{
	cr_assert_str_eq(step(1, 1), "[0]");
	cr_assert_str_eq(step(2, 5), "[1]");
	cr_assert_str_eq(step(0, 0), "[0]");
}

Test(class_objects, stand_for_their_class, .init = with_fields)
{
	cr_assert_str_eq(class_of(0), "class demo.HeapDemo");
	cr_assert_str_eq(class_of(1), "demo.Holder");
	/* java.lang.Class, but no class has its id */
	cr_assert_str_eq(class_of(3), "java.lang.Class");
}

Test(class_objects, keep_their_class_without_fields, .init = without_fields)
{
	cr_assert_str_eq(class_of(0), "java.lang.Class");
}

Test(roots, of_the_jvm_containers, .init = with_fields)
{
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_JIT, .id1 = 0x7ff0, .id2 = 0x900,
		.has_thread = true, .thread = 0x1}),
		"local in demo.Main.main on thread \"main\"");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_NATIVE, .id1 = 0x7e00, .id2 = 0x999,
		.has_thread = true, .thread = 0x2}),
		"JNI local in method 0x999 on thread 0x2");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_THREAD, .id1 = 0x1, .ref = 0x1,
		.has_thread = true, .thread = 0x1}), "thread object \"main\"");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_THREAD, .id1 = 0x1, .ref = 0x2000,
		.has_thread = true, .thread = 0x1}),
		"local outside Java frames on thread \"main\"");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_CLASS, .id1 = 0x60, .ref = 0x60}),
		"system class demo.HeapDemo");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_CLASS, .id1 = 0x60, .ref = 0x2000}),
		"static field of demo.HeapDemo");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_CLASS, .id1 = 0x60, .ref = 0x2000,
		.field = 2}), "static demo.HeapDemo.listHead");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_STRONGPTR}), "JNI global");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_INTERNALVM}), "busy monitor");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_ROOTTABLE}), "VM root table");
	cr_assert_str_eq(root((struct heap_root){
		.container = HT_C_RT_FINALIZED}), "finalizer queue");
}

Test(roots, of_the_clr_kinds, .init = with_fields)
{
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_STACK, .root_id = 0x900}),
		"local in demo.Main.main");
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_STACK, .root_id = 0x1}),
		"local on thread \"main\"");
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_STACK, .root_id = 0x7ffe}), "stack root 0x7ffe");
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_HANDLE, .root_flags = HT_ROOT_PINNING}),
		"GC handle (pinned)");
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_HANDLE,
		.root_flags = HT_ROOT_WEAK | HT_ROOT_INTERIOR}),
		"GC handle (weak, interior)");
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_FINALIZER}), "finalizer queue");
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_OTHER, .root_id = 0x60}),
		"static field of demo.HeapDemo");
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_OTHER, .field = 2}),
		"static demo.HeapDemo.listHead");
	cr_assert_str_eq(root((struct heap_root){
		.kind = HT_ROOT_OTHER, .root_id = 0xdead}), "other root 0xdead");
	cr_assert_str_eq(root((struct heap_root){.kind = HEAP_NO_KIND}),
			 "unknown root");
}

Test(roots, a_long_name_is_cut_short, .init = with_fields)
{
	static char name[2 * NAME_TEXT];
	static struct heap_name long_method[1];
	const char *text;

	memset(name, 'm', sizeof(name) - 1);
	long_method[0] = (struct heap_name){.id = 0x900, .name = name};
	h.methods = long_method;
	text = root((struct heap_root){.kind = HT_ROOT_STACK,
				       .root_id = 0x900});
	cr_assert_eq(strlen(text), NAME_TEXT - 1);
	cr_assert_eq(strncmp(text, "local in mmm", 12), 0);
}

/* Stats and flame group roots by these words: a Java developer's groups
 * for the JVM's containers, whichever way a frame ran. */
Test(roots, group_in_the_runtime_words)
{
	cr_assert_str_eq(root_kind_words(HT_C_RT_INTERPRETED, HEAP_NO_KIND),
			 "Java frame");
	cr_assert_str_eq(root_kind_words(HT_C_RT_JIT, HEAP_NO_KIND),
			 "Java frame");
	cr_assert_str_eq(root_kind_words(HT_C_RT_NATIVE, HEAP_NO_KIND),
			 "JNI local");
	cr_assert_str_eq(root_kind_words(HT_C_RT_THREAD, HEAP_NO_KIND),
			 "thread object");
	cr_assert_str_eq(root_kind_words(HT_C_RT_CLASS, HEAP_NO_KIND),
			 "system class");
	cr_assert_str_eq(root_kind_words(HT_C_RT_STRONGPTR, HEAP_NO_KIND),
			 "JNI global");
	cr_assert_str_eq(root_kind_words(HT_C_RT_INTERNALVM, HEAP_NO_KIND),
			 "busy monitor");
	cr_assert_str_eq(root_kind_words(0, HT_ROOT_STACK), "local");
	cr_assert_str_eq(root_kind_words(0, HT_ROOT_HANDLE), "GC handle");
	cr_assert_null(root_kind_words(HT_C_HEAP, HEAP_NO_KIND));
}

/* Every root flag has its token (JSON's root_flags, describe's text) and
 * its word (root_text), the ones they always had; no other bit has. */
Test(names, root_flags_have_one_token_and_one_word_each)
{
	static const struct {
		unsigned bit;
		const char *token, *word;
	} want[] = {
		{HT_ROOT_PINNING, "pinning", "pinned"},
		{HT_ROOT_WEAK, "weak", "weak"},
		{HT_ROOT_INTERIOR, "interior", "interior"},
		{HT_ROOT_REFCOUNTED, "refcounted", "refcounted"},
	};
	unsigned all = 0;

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct root_flag_name *f = root_flag_named(want[i].bit);

		cr_assert_not_null(f, "bit 0x%x", want[i].bit);
		cr_assert_str_eq(f->token, want[i].token);
		cr_assert_str_eq(f->word, want[i].word);
		all |= want[i].bit;
	}
	for (unsigned bit = 1; bit; bit <<= 1)
		if (!(all & bit))
			cr_assert_null(root_flag_named(bit), "bit 0x%x", bit);
}
