/*
 * labels.c - an object's label (labels.h): a string's text or a
 * collection's size, in the one wording every report uses.
 */
#include "analysis/labels.h"

#include "analysis/collections.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

/* Cuts UTF-8 text after max characters: whether there were more. */
static bool cut_chars(char *text, size_t max)
{
	size_t n = 0;

	for (char *p = text; *p; p++)
		if (((unsigned char)*p & 0xc0) != 0x80 && n++ == max) {
			*p = 0;
			return true;
		}
	return false;
}

static const char *string_label(const struct heap *h, uint32_t object,
				char *buf)
{
	/* one character more than shown: whether there is more to say */
	char text[VALUES_TEXT_BOUND(LABEL_TEXT_CHARS + 1)];
	uint64_t shown, length;
	bool cut;

	if (!values_string_text(h, object, text, LABEL_TEXT_CHARS + 1, &shown,
				&length))
		return NULL;
	/* cut when there was more than shown, or the trace kept a prefix */
	cut = cut_chars(text, LABEL_TEXT_CHARS) | (shown < length);
	/* as `object` shows a cut text: the quotes close what is shown */
	snprintf(buf, LABEL_BOUND, "\"%s\"%s", text, cut ? "..." : "");
	return buf;
}

static const char *collection_label(const struct collection *c, char *buf)
{
	if (c->has_size && c->has_capacity)
		snprintf(buf, LABEL_BOUND, "size %" PRIu64 " of %" PRIu64,
			 c->size, c->capacity);
	else if (c->has_size)
		snprintf(buf, LABEL_BOUND, "size %" PRIu64 ", capacity unknown",
			 c->size);
	else if (c->has_capacity)
		snprintf(buf, LABEL_BOUND, "size unknown, capacity %" PRIu64,
			 c->capacity);
	else
		snprintf(buf, LABEL_BOUND, "size unknown");
	return buf;
}

const char *object_label(const struct heap *h, uint32_t object, char *buf)
{
	struct collection c;

	if (object >= h->n)
		return NULL;
	if (collection_of(h, object, &c))
		return collection_label(&c, buf);
	return string_label(h, object, buf);
}

void object_label_sources(const struct heap *h, uint32_t object,
			  object_fn add, void *ctx)
{
	uint32_t chars[2];
	size_t n;
	uint32_t cls;

	if (object >= h->n)
		return;
	/* as object_label: a collection is never read as a string */
	cls = h->cls[object];
	if (cls < h->n_classes &&
	    collection_kind_of_class(h->classes[cls].name)) {
		collection_sources(h, object, add, ctx);
		return;
	}
	n = values_string_sources(h, object, chars);
	for (size_t i = 0; i < n; i++)
		add(ctx, chars[i]);
}
