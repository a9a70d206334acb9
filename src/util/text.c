/*
 * text.c - a line of text built piece by piece (text.h).
 */
#include "util/text.h"

#include <stdarg.h>
#include <stdio.h>

void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->used >= t->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used += (size_t)n;
}
