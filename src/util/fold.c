/*
 * fold.c - long type names folded for reading (fold.h): namespaces
 * dropped inside generic argument lists, then the deepest lists elided.
 */
#include "util/fold.h"

#include <stdbool.h>
#include <string.h>

/* What ends one type's name inside an argument list: the lists' own
 * brackets and commas, array and pointer marks, the '+' of a nested type
 * (whose name has no namespace of its own). */
static bool ends_type(char c)
{
	return strchr("<>,[]+*& ()", c) != NULL;
}

/* Whether every '>' of name closes a '<': one that closes nothing (an
 * operator's name, "Foo->Bar") makes folding unsafe. A '<' left open is
 * a name cut short by a caller's buffer, folded all the same. */
static bool brackets_pair(const char *name)
{
	size_t depth = 0;

	for (const char *p = name; *p; p++)
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth-- == 0)
			return false;
	return true;
}

/* Characters (UTF-8 code points) of s. */
static size_t fold_chars(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p & 0xc0) != 0x80;
	return n;
}

/* Drops, inside argument lists, each type's namespace: what comes before
 * the last '.' of a run of characters that ends_type does not end (a dot
 * that ends the run is kept, so that no name is left empty). */
static void drop_namespaces(const char *name, char *out)
{
	size_t depth = 0;
	const char *p = name;

	while (*p) {
		if (*p == '<' || *p == '>') {
			depth += *p == '<' ? 1 : (size_t)-1;
			*out++ = *p++;
			continue;
		}
		if (depth == 0 || ends_type(*p)) {
			*out++ = *p++;
			continue;
		}
		const char *end = p, *start = p;
		while (*end && !ends_type(*end))
			end++;
		for (const char *q = p; q + 1 < end; q++)
			if (*q == '.')
				start = q + 1;
		while (start < end)
			*out++ = *start++;
		p = end;
	}
	*out = '\0';
}

/* Writes each argument list that opens at depth `level` (1: the
 * outermost) as "<...>", in place; a list already that short is kept,
 * one left open (a name cut short) is written "<...". */
static void elide_level(char *s, size_t level)
{
	size_t depth = 0;
	char *out = s, *p = s;

	while (*p) {
		if (*p == '<' && ++depth == level) {
			char *close = p + 1;
			size_t inner = 1;
			while (inner && *close) {
				inner += *close == '<';
				inner -= *close == '>';
				close++;
			}
			if (close - p > 5) {
				memcpy(out, "<...>", inner ? 4 : 5);
				out += inner ? 4 : 5;
				p = close;
				depth--;
				continue;
			}
		} else if (*p == '>') {
			depth--;
		}
		*out++ = *p++;
	}
	*out = '\0';
}

char *type_name_fold(const char *name, char *buf)
{
	size_t depth = 0, deepest = 0;

	if (!strchr(name, '<') || !brackets_pair(name)) {
		memmove(buf, name, strlen(name) + 1);
		return buf;
	}
	drop_namespaces(name, buf);
	for (const char *p = buf; *p; p++)
		if (*p == '<' && ++depth > deepest)
			deepest = depth;
		else if (*p == '>')
			depth--;
	for (; deepest > 0 && fold_chars(buf) > TYPE_FOLD_WIDTH; deepest--)
		elide_level(buf, deepest);
	return buf;
}
