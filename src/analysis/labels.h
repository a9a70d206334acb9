/*
 * labels.h - what an object holds, in a few words, beside its class in
 * the reports that list objects (paths, top; doc/design.md section 6,
 * labels): a string's text, quoted, and a collection's size and capacity.
 * Both need the dump's values (heap_scan_with, values).
 */
#ifndef HT_LABELS_H
#define HT_LABELS_H

#include "analysis/collections.h"
#include "analysis/heap.h"
#include "analysis/values.h"

#include <stddef.h>

/* A string label shows at most this many characters of the text: enough
 * to tell a URL, a key or a name apart, short enough for a report's line. */
#define LABEL_TEXT_CHARS 40
/* The bytes a label takes, NUL included. */
#define LABEL_BOUND (VALUES_TEXT_BOUND(LABEL_TEXT_CHARS) + 64)

/*
 * The plain (unescaped) label of object into buf (LABEL_BOUND bytes):
 *   "GET /shop/cart"           a string's text, quoted;
 *   "http://localhost:8080/"... one longer than LABEL_TEXT_CHARS, or of
 *                              which the trace kept a prefix, cut;
 *   size 12 of 16              a collection (analysis/collections.h):
 *                              entries held, slots allocated;
 *   size 3, capacity unknown   when the dump cannot tell one of them;
 *   size unknown, capacity 16
 *   size unknown
 * NULL when the object is neither, or a string of which the dump kept no
 * value.
 */
const char *object_label(const struct heap *h, uint32_t object, char *buf);

/*
 * Calls add with each object whose values object_label reads for object
 * (its own, a string's array, a collection's array, map or cells),
 * found through references alone: a graph built without values says
 * which objects a second read must keep values for so that the label is
 * the one all values give (heap_scan_options.values_of). An object may
 * come more than once.
 */
void object_label_sources(const struct heap *h, uint32_t object,
			  object_fn add, void *ctx);

#endif
