/*
 * text.h - a line of text built piece by piece into a buffer the caller
 * owns: the names and descriptions the outputs print. A piece that does
 * not fit is cut short at the end of the buffer, which always holds a
 * terminated string; nothing is allocated.
 */
#ifndef HT_UTIL_TEXT_H
#define HT_UTIL_TEXT_H

#include <stddef.h>

/* This struct is not an API; it may change from one release to the next. */
struct text {
	char *buf;
	size_t len;   /* bytes of buf, the terminating NUL included */
	size_t used;  /* bytes written so far, without the NUL */
};

/* Appends the formatted piece. */
void text_add(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
