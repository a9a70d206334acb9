/*
 * describe.h - how the analysis commands name things for people and for
 * programs: sizes ("1.2 MiB"), roots ("C_RT_JIT 0x7ff0 in thread main
 * (Shop.main)") and generations. The per-class table that stats and top
 * share is computed in analysis/stats.h.
 */
#ifndef HT_DESCRIBE_H
#define HT_DESCRIBE_H

#include "cli/output.h"

#include "analysis/heap.h"
#include "analysis/names.h"
#include "analysis/sites.h"
#include "analysis/values.h"
#include "util/humanize.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* human_size, signed_size and SIZE_TEXT: util/humanize.h */
/* "512 B", "1258291 B (1.2 MiB)": always exact. */
const char *exact_size(uint64_t bytes, char *buf);

/* "0x1f00" into buf (at least 24 bytes). */
const char *hex_id(ht_id id, char *buf);

/* Column widths: grows *w to fit a number, a human_size, a hex_id. */
void widen(int *w, int x);
void widen_number(int *w, uint64_t n);
void widen_size(int *w, uint64_t bytes);
void widen_id(int *w, ht_id id);

/* A frame of an allocation's stack as a stack trace names it:
 * "Demo.Keep(Demo.cs:10)", "Demo.Keep(Demo.cs)", "Demo.Keep", or
 * "method 0x41" for one the trace never named; escaped for the text. */
#define FRAME_TEXT 512
const char *frame_text(const char *method, ht_id id, const char *file,
		       uint32_t line, char buf[FRAME_TEXT]);
/* The same for programs, as an object: method (or id), file, line. */
void out_stack_frame(struct out *o, const char *method, ht_id id,
		     const char *file, uint32_t line);

/* With --sites (top, paths): the frame that allocated an object (NULL
 * when not known) as "  by Demo.Keep(Demo.cs:10)" ("" when not known),
 * and for programs as "allocated_by": {method, file, line} or null. */
#define ALLOCATED_BY_TEXT (FRAME_TEXT + 8)
const char *allocated_by_text(const struct site_frame *f,
			      char buf[ALLOCATED_BY_TEXT]);
void out_allocated_by(struct out *o, const struct site_frame *f);

/* "0", "1", "2", "LOH", "POH", "unknown"; buf holds 16 bytes. */
const char *generation_name(unsigned generation, char *buf);

/* One line for people: "C_RT_JIT 0x7ff0 in thread main (Shop.main)",
 * "C_RT_CLASS 0x500 (Shop)", "stack root 0x7ffe1000 [weak]"; root_text
 * (escaped) when the trace carries fields. */
const char *describe_root(const struct heap *h, const struct heap_root *r,
			  char *buf, size_t len);

/* The same for programs, as an object under key: container or kind, ids,
 * thread, method, class, CLR root id and flags, weak; when the trace
 * carries fields, also its root_text as "name" and its static field as
 * "field". */
void out_root(struct out *o, const char *key, const struct heap *h,
	      const struct heap_root *r);

/* A declared field for programs: id, class_id, class, name, static. */
void out_field(struct out *o, const char *key, const struct heap *h,
	       const struct heap_field *f);

/* A primitive value (enum ht_value_type, its bits) as Java and C# write
 * it, into buf of VALUE_TEXT bytes: what object and waste show. */
#define VALUE_TEXT 64
const char *value_text(unsigned type, uint64_t bits, char *buf);

/* A string's text for people, at most max_chars characters of it (up to
 * STRING_TEXT_MAX), quoted and escaped, and when it is cut how much there
 * is: "\"GET /cart\"... (9 of 120 characters)", counted in code units as
 * Java's and .NET's lengths are. Into line (STRING_LINE bytes); NULL when
 * s is no string or the dump kept no values for it. What object and
 * waste show. */
#define STRING_TEXT_MAX 200
#define STRING_LINE (4 * VALUES_TEXT_BOUND(STRING_TEXT_MAX) + 96)
const char *string_line(const struct heap *h, uint32_t s, size_t max_chars,
			char *line);

#endif
