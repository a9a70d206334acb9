/*
 * names.h - names as a developer reads them, for every output of the
 * analyses: the field a reference goes through ("demo.Holder.cache",
 * "static demo.HeapDemo.listHead", "java.lang.Object[][12]"), a class
 * object by the class it stands for ("class demo.HeapDemo"), and a root by
 * its kind and what it is ("static field of App", "local in App.Main on
 * thread \"main\"", "GC handle (pinned)"). One place makes them; the
 * commands print them through cli/escape.h.
 *
 * They name things this way when the trace carries fields
 * (heap_has_fields): the traces of older recorders keep the names they
 * always had.
 */
#ifndef HT_NAMES_H
#define HT_NAMES_H

#include "analysis/heap.h"

#include <stdbool.h>
#include <stdint.h>

/* Each function writes the plain (unescaped) name into buf, which holds
 * NAME_TEXT bytes, and returns it; a longer name is cut short. */
#define NAME_TEXT 512

/* An object's class, or when the trace carries fields and the object is
 * a class object, the class it stands for: "demo.Holder",
 * "class demo.HeapDemo", "?0x50". */
const char *object_class_text(const struct heap *h, uint32_t object,
			      char *buf);

/* The step through reference e (an index into h->ref) of object `from`:
 * "demo.Holder.cache", "static demo.HeapDemo.listHead",
 * "java.lang.Object[][12]" (an array's element, when the trace carries
 * fields), "Entry[][3]._value" (a field of the struct that is an array's
 * element); "[3]" (its position among the object's references) when no
 * field is known. */
const char *step_text(const struct heap *h, uint32_t from, uint64_t e,
		      char *buf);

/* Whether a class name is an array's: "java.lang.Object[]",
 * "System.Object[]", or as the JVM spells arrays, "[Ljava.lang.Object;". */
bool class_name_is_array(const char *name);

/* A root by its kind and what it is: its static field
 * ("static demo.HeapDemo.listHead"), a frame's local ("local in App.Main
 * on thread \"main\"", "JNI local in ..."), "static field of App",
 * "system class App", "thread object \"main\"" (the thread's own
 * object; its other roots are "local outside Java frames on thread
 * \"main\""), "JNI global",
 * "busy monitor", "VM root table", "finalizer queue", "GC handle", a CLR
 * or Mono stack root by its method or thread, "other root 0x...", then
 * its flags in words: " (pinned, weak)". */
const char *root_text(const struct heap *h, const struct heap_root *r,
		      char *buf);

/*
 * The flags of a root (HT_ROOT_*), one row each, in the order of their
 * bits: the token that machine output and describe list ("pinning", as
 * JSON's root_flags spell it) and the word root_text writes ("pinned").
 * The one place a flag is named; the YAML form writes the bits as numbers.
 * This struct is not an API; it may change from one release to the next.
 */
struct root_flag_name {
	unsigned bit;
	const char *token;
	const char *word;
};

/* The row of one HT_ROOT_* bit; NULL for a bit no flag has. */
const struct root_flag_name *root_flag_named(unsigned bit);

/* A root's kind alone, in the words root_text starts with ("JNI global",
 * "system class", "busy monitor", "GC handle", "finalizer queue"), for
 * outputs that group roots by kind, as flame's top frames and stats' root
 * counts do; a frame's locals group as "Java frame" ("JNI local" for a
 * native method's), a CLR or Mono stack root as "local". container is the
 * JVM's container (0 for none), kind the CLR's and Mono's root kind.
 * NULL for a container that holds no roots of its own. */
const char *root_kind_words(unsigned container, unsigned kind);

#endif
