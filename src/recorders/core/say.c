/*
 * say.c - a recorder's messages on the program's standard error (say.h).
 * Not for GC pauses: stdio may be locked by a suspended thread.
 */
#include "recorders/core/say.h"

#include <stdarg.h>
#include <stdio.h>

static const char *recorder = "a";
static void (*listener)(const char *message);

void say_as(const char *who, void (*also)(const char *message))
{
	recorder = who;
	listener = also;
}

void say(const char *fmt, ...)
{
	char buf[8192]; /* a path of PATH_MAX and its words */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say_here(buf);
	if (listener)
		listener(buf);
}

void say_here(const char *message)
{
	fprintf(stderr, "heaptrace: %s recorder: %s\n", recorder, message);
}
