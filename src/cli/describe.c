/*
 * describe.c - names for people and programs shared by the analysis
 * commands (describe.h): sizes, roots, generations, values.
 */
#include "cli/describe.h"

#include "cli/escape.h"
#include "util/alloc.h"
#include "util/text.h"
#include "util/utf8.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *exact_size(uint64_t bytes, char *buf)
{
	char human[SIZE_TEXT];

	if (bytes < 1024)
		return human_size(bytes, buf);
	/* At most 20 digits, " B (", the human text, ")" and the NUL: the
	 * precision bounds the human text (at most "1024.0 KiB", 10 bytes)
	 * to what is left, so that the compiler sees it fits too: it cannot
	 * see human_size's length, and -Wformat-truncation would have to
	 * guess it. */
	snprintf(buf, SIZE_TEXT, "%llu B (%.*s)", (unsigned long long)bytes,
		 SIZE_TEXT - 26, human_size(bytes, human));
	return buf;
}

const char *hex_id(ht_id id, char *buf)
{
	snprintf(buf, 24, "0x%llx", (unsigned long long)id);
	return buf;
}

void widen(int *w, int x)
{
	if (x > *w)
		*w = x;
}

void widen_number(int *w, uint64_t n)
{
	char buf[24];

	widen(w, snprintf(buf, sizeof(buf), "%llu", (unsigned long long)n));
}

void widen_size(int *w, uint64_t bytes)
{
	char buf[SIZE_TEXT];

	widen(w, (int)strlen(human_size(bytes, buf)));
}

void widen_id(int *w, ht_id id)
{
	char buf[24];

	widen(w, (int)strlen(hex_id(id, buf)));
}

const char *generation_name(unsigned generation, char *buf)
{
	if (generation == HT_GEN_LOH)
		return "LOH";
	if (generation == HT_GEN_POH)
		return "POH";
	if (generation > HT_GEN_MAX)
		return "unknown";
	snprintf(buf, 16, "%u", generation);
	return buf;
}

/* ---- roots --------------------------------------------------------------- */


/* The order describe has always listed a root's flags in, weak first
 * (JSON's root_flags, the text's " [weak, pinning]"); their names are
 * analysis/names.h's. */
static const unsigned root_flag_order[] = {
	HT_ROOT_WEAK, HT_ROOT_PINNING, HT_ROOT_INTERIOR, HT_ROOT_REFCOUNTED,
};

static const char *container_name(unsigned container)
{
	const char *name = ht_container_name((enum ht_container_type)container);

	return name ? name : "container";
}

static void add_thread(struct text *t, const struct heap *h, ht_id thread)
{
	const char *name = heap_thread_name(h, thread);

	if (name)
		text_add(t, "thread %s", esc_text(name));
	else
		text_add(t, "thread 0x%llx", (unsigned long long)thread);
}

/* What a container's ids name, in parentheses: the frame's method, the
 * class whose statics these are, the thread's name. */
static void add_container_detail(struct text *t, const struct heap *h,
				 const struct heap_root *r)
{
	const char *name = NULL;

	if (ht_container_is_frame(r->container) && r->id2) {
		name = heap_method_name(h, r->id2);
		if (!name) {
			text_add(t, " (method 0x%llx)", (unsigned long long)r->id2);
			return;
		}
	} else if (r->container == HT_C_RT_CLASS) {
		name = heap_class_name_by_id(h, r->id1);
	} else if (r->container == HT_C_RT_THREAD) {
		name = heap_thread_name(h, r->id1);
	}
	if (name)
		text_add(t, " (%s)", esc_name(name));
}

static void add_root_flags(struct text *t, unsigned flags)
{
	const char *sep = " [";

	for (size_t i = 0; i < ARRAY_SIZE(root_flag_order); i++) {
		if (flags & root_flag_order[i]) {
			text_add(t, "%s%s", sep,
				 root_flag_named(root_flag_order[i])->token);
			sep = ", ";
		}
	}
	if (flags)
		text_add(t, "]");
}

/* A CLR stack root's id is the FunctionID of its frame's method: its
 * name, when a method event gives one. */
static const char *stack_root_method(const struct heap *h,
				     const struct heap_root *r)
{
	if (r->container || r->kind != HT_ROOT_STACK || !r->root_id)
		return NULL;
	return heap_method_name(h, r->root_id);
}

const char *describe_root(const struct heap *h, const struct heap_root *r,
			  char *buf, size_t len)
{
	struct text t = {buf, len, 0};

	buf[0] = '\0';
	if (heap_has_fields(h)) {
		char name[NAME_TEXT];

		text_add(&t, "%s", esc_name(root_text(h, r, name)));
		return buf;
	}
	if (r->container) {
		text_add(&t, "%s 0x%llx", container_name(r->container),
		    (unsigned long long)r->id1);
		if (ht_container_is_frame(r->container) && r->has_thread) {
			text_add(&t, " in ");
			add_thread(&t, h, r->thread);
		}
		add_container_detail(&t, h, r);
	} else {
		const char *kind = r->kind == HEAP_NO_KIND ? NULL :
			ht_root_kind_name((enum ht_root_kind)r->kind);

		const char *method = stack_root_method(h, r);

		if (kind)
			text_add(&t, "%s ", kind);
		text_add(&t, "root");
		if (r->root_id)
			text_add(&t, " 0x%llx", (unsigned long long)r->root_id);
		if (method)
			text_add(&t, " (%s)", esc_text(method));
	}
	add_root_flags(&t, r->root_flags);
	return buf;
}

void out_field(struct out *o, const char *key, const struct heap *h,
	       const struct heap_field *f)
{
	out_begin_object(o, key);
	out_id(o, "id", f->id);
	out_id(o, "class_id", f->class_id);
	out_string(o, "class", heap_class_name_by_id(h, f->class_id));
	out_string(o, "name", f->name);
	out_bool(o, "static", f->kind == HT_FIELD_STATIC);
	out_end_object(o);
}

/* A Mono stack root's id is its thread's: named by a thread event, as
 * root_text names it when the trace carries fields. */
static bool stack_root_thread(const struct heap *h, const struct heap_root *r)
{
	return heap_has_fields(h) && !r->container &&
	       r->kind == HT_ROOT_STACK && r->root_id &&
	       !stack_root_method(h, r) && heap_thread_name(h, r->root_id);
}

static void out_thread(struct out *o, const struct heap *h,
		       const struct heap_root *r)
{
	ht_id thread = r->container == HT_C_RT_THREAD ? r->id1 : r->thread;

	if (stack_root_thread(h, r)) {
		out_id(o, "thread", r->root_id);
		out_string(o, "thread_name", heap_thread_name(h, r->root_id));
	} else if (r->has_thread || r->container == HT_C_RT_THREAD) {
		out_id(o, "thread", thread);
		out_string(o, "thread_name", heap_thread_name(h, thread));
	} else {
		out_null(o, "thread");
		out_null(o, "thread_name");
	}
}

static void out_method(struct out *o, const struct heap *h,
		       const struct heap_root *r)
{
	const char *clr = stack_root_method(h, r);

	if (ht_container_is_frame(r->container) && r->id2) {
		out_id(o, "method", r->id2);
		out_string(o, "method_name", heap_method_name(h, r->id2));
	} else if (clr) {
		out_id(o, "method", r->root_id);
		out_string(o, "method_name", clr);
	} else {
		out_null(o, "method");
		out_null(o, "method_name");
	}
}

/* What root_text says, and the static field by its parts. */
static void out_root_names(struct out *o, const struct heap *h,
			   const struct heap_root *r)
{
	const struct heap_field *f = heap_field_at(h, r->field);
	char name[NAME_TEXT];

	out_string(o, "name", root_text(h, r, name));
	if (f)
		out_field(o, "field", h, f);
	else
		out_null(o, "field");
}

void out_root(struct out *o, const char *key, const struct heap *h,
	      const struct heap_root *r)
{
	out_begin_object(o, key);
	if (r->container) {
		out_string(o, "container", container_name(r->container));
		out_id(o, "id1", r->id1);
		out_id(o, "id2", r->id2);
	} else {
		out_string(o, "kind", r->kind == HEAP_NO_KIND ? NULL :
			   ht_root_kind_name((enum ht_root_kind)r->kind));
	}
	out_thread(o, h, r);
	out_method(o, h, r);
	if (r->container == HT_C_RT_CLASS)
		out_string(o, "class", heap_class_name_by_id(h, r->id1));
	if (!r->container) {
		if (r->root_id)
			out_id(o, "root_id", r->root_id);
		else
			out_null(o, "root_id");
		out_begin_array(o, "root_flags");
		for (size_t i = 0; i < ARRAY_SIZE(root_flag_order); i++)
			if (r->root_flags & root_flag_order[i])
				out_string(o, NULL, root_flag_named(
					root_flag_order[i])->token);
		out_end_array(o);
	}
	out_bool(o, "weak", heap_root_is_weak(r));
	if (heap_has_fields(h))
		out_root_names(o, h, r);
	out_end_object(o);
}

/* A value as Java and C# write it: integers in decimal, a boolean as
 * true or false, a char as itself, a float or double from its bits with
 * the digits that give them back. */
const char *value_text(unsigned type, uint64_t bits, char *buf)
{
	float f;
	double d;
	uint32_t u32 = (uint32_t)bits;

	switch (type) {
	case HT_TYPE_BOOLEAN:
		return bits ? "true" : "false";
	case HT_TYPE_CHAR:
		/* a lone surrogate is no character: its number */
		if ((bits >= 0xd800 && bits <= 0xdfff) || bits == 0)
			snprintf(buf, VALUE_TEXT, "\\u%04x", (unsigned)bits);
		else
			buf[utf8_put(buf, (uint32_t)bits)] = 0;
		return buf;
	case HT_TYPE_FLOAT:
		memcpy(&f, &u32, sizeof(f));
		snprintf(buf, VALUE_TEXT, "%.9g", (double)f);
		return buf;
	case HT_TYPE_DOUBLE:
		memcpy(&d, &bits, sizeof(d));
		snprintf(buf, VALUE_TEXT, "%.17g", d);
		return buf;
	default:
		snprintf(buf, VALUE_TEXT, "%" PRId64, (int64_t)bits);
		return buf;
	}
}

const char *string_line(const struct heap *h, uint32_t s, size_t max_chars,
			char *line)
{
	char text[VALUES_TEXT_BOUND(STRING_TEXT_MAX)];
	uint64_t shown, length;

	if (max_chars > STRING_TEXT_MAX)
		max_chars = STRING_TEXT_MAX;
	if (!values_string_text(h, s, text, max_chars, &shown, &length))
		return NULL;
	if (shown < length)
		snprintf(line, STRING_LINE, "\"%s\"... (%" PRIu64 " of %" PRIu64
			 " characters)", esc_text(text), shown, length);
	else
		snprintf(line, STRING_LINE, "\"%s\"", esc_text(text));
	return line;
}

const char *frame_text(const char *method, ht_id id, const char *file,
		       uint32_t line, char buf[FRAME_TEXT])
{
	if (!method)
		snprintf(buf, FRAME_TEXT, "method 0x%llx",
			 (unsigned long long)id);
	else if (file && line)
		snprintf(buf, FRAME_TEXT, "%s(%s:%u)", esc_name(method),
			 esc_text(file), line);
	else if (file)
		snprintf(buf, FRAME_TEXT, "%s(%s)", esc_name(method),
			 esc_text(file));
	else
		snprintf(buf, FRAME_TEXT, "%s", esc_name(method));
	return buf;
}

void out_stack_frame(struct out *o, const char *method, ht_id id,
		     const char *file, uint32_t line)
{
	out_begin_object(o, NULL);
	out_string(o, "method", method);
	if (!method)
		out_id(o, "id", id);
	out_string(o, "file", file);
	if (line)
		out_u64(o, "line", line);
	else
		out_null(o, "line");
	out_end_object(o);
}

const char *allocated_by_text(const struct site_frame *f,
			      char buf[ALLOCATED_BY_TEXT])
{
	char text[FRAME_TEXT];

	if (!f)
		return "";
	snprintf(buf, ALLOCATED_BY_TEXT, "  by %s",
		 frame_text(f->method, f->id, f->file, f->line, text));
	return buf;
}

void out_allocated_by(struct out *o, const struct site_frame *f)
{
	if (!f) {
		out_null(o, "allocated_by");
		return;
	}
	out_begin_object(o, "allocated_by");
	out_string(o, "method", f->method);
	out_string(o, "file", f->file);
	if (f->line)
		out_u64(o, "line", f->line);
	else
		out_null(o, "line");
	out_end_object(o);
}
