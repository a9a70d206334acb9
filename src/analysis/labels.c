/*
 * labels.c - an object's label (labels.h): a string's text or a
 * collection's size, in the one wording every report uses.
 */
#include "analysis/labels.h"

#include "analysis/collections.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

/*
 * The UTF-16 code units that text, as values_string_text decoded it,
 * stands for: one a character, two for one past U+FFFF (a 4-byte UTF-8
 * sequence, a surrogate pair). A Latin-1 string's characters are one
 * unit each too, so this is the string's length when it was decoded
 * whole, and a label can tell a cut text from one with surrogate pairs.
 */
static uint64_t units_of(const char *text)
{
	uint64_t units = 0;

	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if ((*p & 0xc0) != 0x80)
			units += *p >= 0xf0 ? 2 : 1;
	return units;
}

/* Cuts UTF-8 text after max characters. */
static void cut_chars(char *text, size_t max)
{
	size_t n = 0;

	for (char *p = text; *p; p++)
		if (((unsigned char)*p & 0xc0) != 0x80 && n++ == max) {
			*p = 0;
			return;
		}
}

static const char *string_label(const struct heap *h, uint32_t object,
				char *buf)
{
	/* one character more than shown: whether there is more to say */
	char text[VALUES_TEXT_BOUND(LABEL_TEXT_CHARS + 1)];
	uint64_t length;
	size_t chars;
	bool cut;

	if (!values_string_text(h, object, text, LABEL_TEXT_CHARS + 1, &chars,
				&length))
		return NULL;
	if (chars > LABEL_TEXT_CHARS) {
		cut_chars(text, LABEL_TEXT_CHARS);
		cut = true;
	} else {
		/* all that was kept is shown: cut if the trace kept a prefix */
		cut = units_of(text) < length;
	}
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
