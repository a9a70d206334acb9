/*
 * names.c - names as a developer reads them (names.h).
 */
#include "analysis/names.h"
#include "util/text.h"
#include "util/alloc.h"

#include <stdio.h>
#include <string.h>


const char *object_class_text(const struct heap *h, uint32_t object,
			      char *buf)
{
	const char *of = heap_has_fields(h) ?
		heap_class_object_name(h, object) : NULL;

	if (!of)
		return heap_class_name(h, object, buf);
	snprintf(buf, NAME_TEXT, "class %s", of);
	return buf;
}

/* A class by its id: its name, else its id as heap_class_name gives an
 * unnamed one. */
static void add_class(struct text *t, const struct heap *h, ht_id class_id)
{
	const char *name = heap_class_name_by_id(h, class_id);

	if (name)
		text_add(t, "%s", name);
	else
		text_add(t, "?0x%llx", (unsigned long long)class_id);
}

static void add_field(struct text *t, const struct heap *h,
		      const struct heap_field *f)
{
	/* a link (an object to its class...) is no class's field */
	if (f->class_id == 0) {
		text_add(t, "%s", f->name);
		return;
	}
	if (f->kind == HT_FIELD_STATIC)
		text_add(t, "static ");
	add_class(t, h, f->class_id);
	text_add(t, ".%s", f->name);
}

bool class_name_is_array(const char *name)
{
	size_t n = strlen(name);

	return name[0] == '[' || (n >= 2 && strcmp(name + n - 2, "[]") == 0);
}

/* Whether reference e of `from` is a link (an object to its class...),
 * a field that no class declares. */
static bool is_link(const struct heap *h, uint32_t from, uint64_t e)
{
	const struct heap_field *f = heap_field_at(h, heap_ref_field(h, from, e));

	return f && f->class_id == 0;
}

/* The index of the element that reference e of `from` is: its position
 * after the links that lead its references (an array's link to its class
 * comes first). */
static uint64_t element_index(const struct heap *h, uint32_t from, uint64_t e)
{
	uint64_t first = heap_ref_start(h, from);

	while (first < e && is_link(h, from, first))
		first++;
	return e - first;
}

/* The index of the element whose struct field reference e of array `from`
 * was read from: a recorder that names such fields (the CLR's) gives each
 * element's reference fields, nulls too, in element order, so the fields
 * repeat every k references, k being where the first one comes again. */
static uint64_t struct_element_index(const struct heap *h, uint32_t from,
				     uint64_t e)
{
	uint64_t first = heap_ref_start(h, from), k = 1;
	uint32_t f0;

	while (first < e && is_link(h, from, first))
		first++;
	f0 = heap_ref_field(h, from, first);
	while (first + k <= e && heap_ref_field(h, from, first + k) != f0)
		k++;
	return (e - first) / k;
}

const char *step_text(const struct heap *h, uint32_t from, uint64_t e,
		      char *buf)
{
	struct text t = {buf, NAME_TEXT, 0};
	const struct heap_field *f = heap_field_at(h, heap_ref_field(h, from, e));
	uint64_t at;
	char cls[NAME_TEXT];
	const char *name = NULL;

	buf[0] = '\0';
	if (f && f->class_id != 0 && f->kind == HT_FIELD_INSTANCE &&
	    heap_has_fields(h) &&
	    class_name_is_array(name = heap_class_name(h, from, cls))) {
		/* a struct's field in an array's element */
		text_add(&t, "%s[%llu].%s", name,
			 (unsigned long long)struct_element_index(h, from, e),
			 f->name ? f->name : "?");
		return buf;
	}
	if (f) {
		add_field(&t, h, f);
		return buf;
	}
	at = element_index(h, from, e);
	if (!name)
		name = heap_class_name(h, from, cls);
	if (heap_has_fields(h) && class_name_is_array(name))
		text_add(&t, "%s", name);
	text_add(&t, "[%llu]", (unsigned long long)at);
	return buf;
}

/* " on thread \"main\"", or by id when unnamed. */
static void add_on_thread(struct text *t, const struct heap *h, ht_id thread)
{
	const char *name = heap_thread_name(h, thread);

	if (name)
		text_add(t, " on thread \"%s\"", name);
	else
		text_add(t, " on thread 0x%llx", (unsigned long long)thread);
}

/* Words for a reader, not tokens: the CLR's and Mono's kinds have their
 * tokens ("stack", "handle") in ht_root_kind_name (lib/common/names.c),
 * which the YAML form and machine output use, and their words here ("local",
 * "GC handle") beside the JVM's containers, which have no token of that
 * list to derive them from. */
const char *root_kind_words(unsigned container, unsigned kind)
{
	/* the locals of frames, grouped as a Java developer groups them */
	if (ht_container_is_frame(container))
		return container == HT_C_RT_NATIVE ? "JNI local" : "Java frame";
	switch (container) {
	case HT_C_RT_THREAD:
		return "thread object";
	case HT_C_RT_CLASS:
		return "system class";
	case HT_C_RT_STRONGPTR:
		return "JNI global";
	case HT_C_RT_INTERNALVM:
		/* both Java sources put there the objects whose monitors
		 * are held (ROOT_MONITOR_USED, JVMTI's monitor roots) */
		return "busy monitor";
	case HT_C_RT_ROOTTABLE:
		return "VM root table";
	case HT_C_RT_FINALIZED:
		return "finalizer queue";
	case 0:
		break;
	default:
		return NULL;
	}
	switch (kind) {
	case HT_ROOT_STACK:
		return "local";
	case HT_ROOT_FINALIZER:
		return "finalizer queue";
	case HT_ROOT_HANDLE:
		return "GC handle";
	case HT_ROOT_OTHER:
		return "other root";
	default:
		return NULL;
	}
}

/* A frame's local: "local in App.main on thread \"main\"", a native
 * frame's "JNI local in ...". */
static void add_frame_local(struct text *t, const struct heap *h,
			    const struct heap_root *r)
{
	const char *method = r->id2 ? heap_method_name(h, r->id2) : NULL;

	text_add(t, "%slocal", r->container == HT_C_RT_NATIVE ? "JNI " : "");
	if (method)
		text_add(t, " in %s", method);
	else if (r->id2)
		text_add(t, " in method 0x%llx", (unsigned long long)r->id2);
	if (r->has_thread)
		add_on_thread(t, h, r->thread);
}

/* What the JVM's and the Microsoft VM's containers hold, in plain words. */
static void add_container_root(struct text *t, const struct heap *h,
			       const struct heap_root *r)
{
	const char *thread, *name;

	if (ht_container_is_frame(r->container)) {
		add_frame_local(t, h, r);
		return;
	}
	switch (r->container) {
	case HT_C_RT_THREAD:
		/* the thread's other roots: JNI locals outside any frame,
		 * HPROF's ROOT_NATIVE_STACK and ROOT_THREAD_BLOCK */
		if (r->ref != r->id1) {
			text_add(t, "local outside Java frames");
			add_on_thread(t, h, r->id1);
			return;
		}
		thread = heap_thread_name(h, r->id1);
		if (thread)
			text_add(t, "thread object \"%s\"", thread);
		else
			text_add(t, "thread object 0x%llx",
			    (unsigned long long)r->id1);
		return;
	case HT_C_RT_CLASS:
		/* a sticky class is its own root: the class object */
		text_add(t, r->ref == r->id1 ? "system class " :
			"static field of ");
		add_class(t, h, r->id1);
		return;
	case HT_C_RT_STRONGPTR:
	case HT_C_RT_INTERNALVM:
	case HT_C_RT_ROOTTABLE:
	case HT_C_RT_FINALIZED:
		text_add(t, "%s", root_kind_words(r->container, HEAP_NO_KIND));
		return;
	default:
		name = ht_container_name((enum ht_container_type)r->container);
		text_add(t, "%s 0x%llx", name ? name : "container",
		    (unsigned long long)r->id1);
	}
}

/* The CLR's and Mono's root kinds: a stack root's id names its frame's
 * method (the CLR) or its thread (Mono); an other root's may name the
 * class whose statics it is (Mono). */
static void add_kind_root(struct text *t, const struct heap *h,
			  const struct heap_root *r)
{
	const char *method = r->root_id ? heap_method_name(h, r->root_id)
					: NULL;
	const char *name;

	switch (r->kind) {
	case HT_ROOT_STACK:
		if (method) {
			text_add(t, "local in %s", method);
		} else if (r->root_id &&
			   (name = heap_thread_name(h, r->root_id))) {
			text_add(t, "local on thread \"%s\"", name);
		} else {
			text_add(t, "stack root");
			if (r->root_id)
				text_add(t, " 0x%llx", (unsigned long long)r->root_id);
		}
		return;
	case HT_ROOT_FINALIZER:
	case HT_ROOT_HANDLE:
		text_add(t, "%s", root_kind_words(0, r->kind));
		return;
	default:
		break;
	}
	if (r->root_id && (name = heap_class_name_by_id(h, r->root_id))) {
		text_add(t, "static field of %s", name);
		return;
	}
	text_add(t, "%s root", r->kind == HEAP_NO_KIND ? "unknown" : "other");
	if (r->root_id)
		text_add(t, " 0x%llx", (unsigned long long)r->root_id);
}

static const struct root_flag_name root_flags[] = {
	{HT_ROOT_PINNING, "pinning", "pinned"},
	{HT_ROOT_WEAK, "weak", "weak"},
	{HT_ROOT_INTERIOR, "interior", "interior"},
	{HT_ROOT_REFCOUNTED, "refcounted", "refcounted"},
};

const struct root_flag_name *root_flag_named(unsigned bit)
{
	for (size_t i = 0; i < ARRAY_SIZE(root_flags); i++)
		if (root_flags[i].bit == bit)
			return &root_flags[i];
	return NULL;
}

/* " (pinned, weak)" */
static void add_root_flag_words(struct text *t, unsigned flags)
{
	const char *sep = " (";

	for (size_t i = 0; i < ARRAY_SIZE(root_flags); i++) {
		if (flags & root_flags[i].bit) {
			text_add(t, "%s%s", sep, root_flags[i].word);
			sep = ", ";
		}
	}
	if (flags)
		text_add(t, ")");
}

const char *root_text(const struct heap *h, const struct heap_root *r,
		      char *buf)
{
	struct text t = {buf, NAME_TEXT, 0};
	const struct heap_field *f = heap_field_at(h, r->field);

	buf[0] = '\0';
	if (f)
		add_field(&t, h, f);
	else if (r->container)
		add_container_root(&t, h, r);
	else
		add_kind_root(&t, h, r);
	add_root_flag_words(&t, r->root_flags);
	return buf;
}

