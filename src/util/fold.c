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
		if (*p == '<' || (*p == '>' && depth > 0)) {
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
		} else if (*p == '>' && depth > 0) {
			depth--;
		}
		*out++ = *p++;
	}
	*out = '\0';
}

/* Folds one name (or step, or root) in place. */
static void fold_one(char *s)
{
	size_t depth = 0, deepest = 0;

	drop_namespaces(s, s);
	for (const char *p = s; *p; p++)
		if (*p == '<' && ++depth > deepest)
			deepest = depth;
		else if (*p == '>' && depth > 0)
			depth--;
	for (; deepest > 0 && fold_chars(s) > TYPE_FOLD_WIDTH; deepest--)
		elide_level(s, deepest);
}

/* Where the piece that starts at p ends: at the " > " that joins diff's
 * steps (outside any argument list), else at the end of the text. */
static const char *piece_end(const char *p)
{
	size_t depth = 0;

	for (; *p; p++)
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		else if (depth == 0 && strncmp(p, " > ", 3) == 0)
			break;
	return p;
}

char *type_name_fold(const char *name, char *buf)
{
	const char *p = name;
	char *out = buf;

	if (!strchr(name, '<')) {
		memmove(buf, name, strlen(name) + 1);
		return buf;
	}
	/* piece by piece, each written no later than it was read, so that
	 * buf may be name */
	for (;;) {
		const char *end = piece_end(p);
		size_t n = (size_t)(end - p);
		bool more = *end != '\0';

		memmove(out, p, n);
		out[n] = '\0';
		fold_one(out);
		out += strlen(out);
		if (!more)
			break;
		memcpy(out, " > ", 3);
		out += 3;
		p = end + 3;
	}
	*out = '\0';
	return buf;
}
