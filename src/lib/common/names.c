/*
 * names.c - the one place where the domain's names live: events, container
 * types (and which of them are stack frames), results, root kinds, GC
 * reasons and protocol violations. The C API, the YAML form, `heaptrace
 * cat` and the man pages all use these spellings.
 */
#include <heaptrace/trace.h>

#include "ht_config.h"
#include "util/alloc.h"

#include <string.h>


static const char *const event_names[] = {
	[HT_EV_CLASS] = "class",
	[HT_EV_THREAD] = "thread",
	[HT_EV_METHOD] = "method",
	[HT_EV_OBJECT_ALLOCATED] = "object_allocated",
	[HT_EV_STACK] = "stack",
	[HT_EV_GC_STARTED] = "gc_started",
	[HT_EV_GENERATION_BOUNDS] = "generation_bounds",
	[HT_EV_MOVED_REFERENCES] = "moved_references",
	[HT_EV_SURVIVING_REFERENCES] = "surviving_references",
	[HT_EV_GC_FINISHED] = "gc_finished",
	[HT_EV_BEGIN_CONTAINER] = "begin_container",
	[HT_EV_ROOT_REFERENCES] = "root_references",
	[HT_EV_OBJECT_REFERENCES] = "object_references",
	[HT_EV_FIELDS] = "fields",
};

static const char *const container_names[] = {
	[HT_C_BEGIN] = "C_BEGIN",
	[HT_C_RT_THREAD] = "C_RT_THREAD",
	[HT_C_RT_JIT] = "C_RT_JIT",
	[HT_C_RT_NATIVE] = "C_RT_NATIVE",
	[HT_C_RT_NATIVEGC] = "C_RT_NATIVEGC",
	[HT_C_RT_COM] = "C_RT_COM",
	[HT_C_RT_INTERPRETED] = "C_RT_INTERPRETED",
	[HT_C_RT_FASTINTERPRETED] = "C_RT_FASTINTERPRETED",
	[HT_C_RT_INTERNALFRAME] = "C_RT_INTERNALFRAME",
	[HT_C_RT_INTERNALVM] = "C_RT_INTERNALVM",
	[HT_C_RT_CLASS] = "C_RT_CLASS",
	[HT_C_RT_ROOTTABLE] = "C_RT_ROOTTABLE",
	[HT_C_RT_STRONGPTR] = "C_RT_STRONGPTR",
	[HT_C_RT_FINALIZED] = "C_RT_FINALIZED",
	[HT_C_HEAP] = "C_HEAP",
	[HT_C_END] = "C_END",
};

static const char *const result_names[] = {
	[HT_RESULT_OK] = "ok",
	[HT_RESULT_POSTPONE] = "postpone",
	[HT_RESULT_ABORT] = "abort",
};

static const char *const root_kind_names[] = {
	[HT_ROOT_OTHER] = "other",
	[HT_ROOT_STACK] = "stack",
	[HT_ROOT_FINALIZER] = "finalizer",
	[HT_ROOT_HANDLE] = "handle",
};

static const char *const gc_reason_names[] = {
	[HT_GC_OTHER] = "other",
	[HT_GC_INDUCED] = "induced",
};

static const char *const field_kind_names[] = {
	[HT_FIELD_INSTANCE] = "instance",
	[HT_FIELD_STATIC] = "static",
	[HT_FIELD_SOFT] = "soft",
	[HT_FIELD_WEAK] = "weak",
	[HT_FIELD_FINAL] = "final",
	[HT_FIELD_PHANTOM] = "phantom",
};

/* Primitive types as Java writes them; the reference type is "object". */
static const char *const value_type_names[] = {
	[HT_TYPE_OBJECT] = "object",
	[HT_TYPE_BOOLEAN] = "boolean",
	[HT_TYPE_CHAR] = "char",
	[HT_TYPE_FLOAT] = "float",
	[HT_TYPE_DOUBLE] = "double",
	[HT_TYPE_BYTE] = "byte",
	[HT_TYPE_SHORT] = "short",
	[HT_TYPE_INT] = "int",
	[HT_TYPE_LONG] = "long",
};

static const struct {
	const char *name;
	const char *text;
} violations[] = {
	[HT_V_NONE] = {"none", "no violation"},
	[HT_V_DUMP_NESTED] = {"dump-nested",
			      "C_BEGIN while a heap dump is already open"},
	[HT_V_DUMP_NOT_OPEN] = {"dump-not-open",
				"container begun outside a heap dump"},
	[HT_V_DUMP_IN_GC] = {"dump-in-gc",
			     "heap dump begun inside a GC"},
	[HT_V_DUMP_UNFINISHED] = {"dump-unfinished",
				  "trace ends inside a heap dump (no C_END)"},
	[HT_V_REFS_OUTSIDE] = {"refs-outside",
			       "references outside any heap dump or GC"},
	[HT_V_ROOTS_NO_CONTAINER] = {"roots-no-container",
				     "root references before any container"},
	[HT_V_ROOTS_IN_HEAP] = {"roots-in-heap",
				"root references in the C_HEAP container"},
	[HT_V_FRAME_NO_THREAD] = {"frame-no-thread",
				  "stack frame container before any thread container"},
	[HT_V_AFTER_HEAP] = {"after-heap",
			     "container begun after C_HEAP, which comes last"},
	[HT_V_AFTER_ABORT] = {"after-abort",
			      "dump event after an abort, other than C_END"},
	[HT_V_CONTINUATION_MISSING] = {"continuation-missing",
				       "object announced more references that never came"},
	[HT_V_CONTINUATION_MISMATCH] = {"continuation-mismatch",
					"continued object reported with another class or size"},
	[HT_V_GC_NESTED] = {"gc-nested", "gc_started inside a GC"},
	[HT_V_GC_NOT_OPEN] = {"gc-not-open",
			      "GC event outside gc_started ... gc_finished"},
	[HT_V_GC_IN_DUMP] = {"gc-in-dump", "GC started inside a heap dump"},
	[HT_V_GC_UNFINISHED] = {"gc-unfinished",
				"trace ends inside a GC (no gc_finished)"},
	[HT_V_BOUNDS_IN_GC] = {"bounds-in-gc",
			       "generation_bounds between a GC's start and finish"},
	[HT_V_BAD_VALUE] = {"bad-value", "field value out of range"},
	[HT_V_FIELD_UNDECLARED] = {"field-undeclared",
				   "reference names a field not declared by the end of its dump"},
	[HT_V_FIELD_REDECLARED] = {"field-redeclared",
				   "field id declared again with another class, name, kind, offset or type"},
};

_Static_assert(ARRAY_SIZE(violations) == HT_V_COUNT_,
	       "a violation lacks a name");

static const char *lookup(const char *const *names, size_t n, int v)
{
	if (v < 0 || (size_t)v >= n)
		return NULL;
	return names[v];
}

static int parse(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

const char *ht_event_name(enum ht_event_type t)
{
	return lookup(event_names, ARRAY_SIZE(event_names), (int)t);
}

const char *ht_container_name(enum ht_container_type t)
{
	return lookup(container_names, ARRAY_SIZE(container_names), (int)t);
}

const char *ht_result_name(enum ht_result r)
{
	return lookup(result_names, ARRAY_SIZE(result_names), (int)r);
}

const char *ht_root_kind_name(enum ht_root_kind k)
{
	return lookup(root_kind_names, ARRAY_SIZE(root_kind_names), (int)k);
}

const char *ht_gc_reason_name(enum ht_gc_reason r)
{
	return lookup(gc_reason_names, ARRAY_SIZE(gc_reason_names), (int)r);
}

const char *ht_field_kind_name(enum ht_field_kind k)
{
	return lookup(field_kind_names, ARRAY_SIZE(field_kind_names), (int)k);
}

const char *ht_value_type_name(unsigned type)
{
	return type > INT32_MAX ? NULL :
		lookup(value_type_names, ARRAY_SIZE(value_type_names), (int)type);
}

/* The frame types are consecutive in CONTAINER_TYPE; compared unsigned so
 * that a value out of the enum's range (a damaged trace) is no frame. */
bool ht_container_is_frame(enum ht_container_type t)
{
	return (unsigned)t >= HT_C_RT_JIT &&
	       (unsigned)t <= HT_C_RT_INTERNALFRAME;
}

bool ht_event_timed_type(enum ht_event_type type)
{
	return type == HT_EV_GC_STARTED || type == HT_EV_GC_FINISHED ||
	       type == HT_EV_BEGIN_CONTAINER;
}

int ht_event_parse(const char *name)
{
	return parse(event_names, ARRAY_SIZE(event_names), name);
}

int ht_container_parse(const char *name)
{
	return parse(container_names, ARRAY_SIZE(container_names), name);
}

int ht_result_parse(const char *name)
{
	return parse(result_names, ARRAY_SIZE(result_names), name);
}

int ht_root_kind_parse(const char *name)
{
	return parse(root_kind_names, ARRAY_SIZE(root_kind_names), name);
}

int ht_gc_reason_parse(const char *name)
{
	return parse(gc_reason_names, ARRAY_SIZE(gc_reason_names), name);
}

int ht_field_kind_parse(const char *name)
{
	return parse(field_kind_names, ARRAY_SIZE(field_kind_names), name);
}

int ht_value_type_parse(const char *name)
{
	return parse(value_type_names, ARRAY_SIZE(value_type_names), name);
}

const char *ht_violation_name(enum ht_violation_code c)
{
	if ((unsigned)c >= HT_V_COUNT_)
		return NULL;
	return violations[c].name;
}

const char *ht_violation_text(enum ht_violation_code c)
{
	if ((unsigned)c >= HT_V_COUNT_)
		return NULL;
	return violations[c].text;
}

const char *ht_version(void)
{
	return HT_VERSION;
}
