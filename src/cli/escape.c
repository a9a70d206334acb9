/*
 * escape.c - the escaping rule of each output form (escape.h,
 * heaptrace(1), OUTPUT). All of them walk the string by characters with
 * utf8_next, so that a rule never splits a character and bytes that are
 * not UTF-8 are found wherever they come from.
 */
#include "cli/escape.h"

#include "util/alloc.h"
#include "util/fold.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- text ---------------------------------------------------------------- */

static bool is_bidi_control(uint32_t cp)
{
	return cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape of the character at p (len bytes, code point cp) in text, or
 * NULL when it stands for itself; buf holds 8 bytes. */
static const char *text_escape(const unsigned char *p, uint32_t cp,
			       char buf[8])
{
	if (cp == UTF8_BAD) {
		snprintf(buf, 8, "\\x%02x", p[0]);
		return buf;
	}
	switch (cp) {
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	case 0x1b:
		return "\\e";
	default:
		break;
	}
	if (cp < 0x20 || cp == 0x7f) {
		snprintf(buf, 8, "\\x%02x", (unsigned)cp);
		return buf;
	}
	if ((cp >= 0x80 && cp <= 0x9f) || is_bidi_control(cp)) {
		snprintf(buf, 8, "\\u%04x", (unsigned)(cp & 0xffff));
		return buf;
	}
	return NULL;
}

static bool text_is_plain(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char buf[8];

	while (*p) {
		uint32_t cp;
		size_t len;

		if (*p >= 0x20 && *p < 0x7f) {
			p++;
			continue;
		}
		len = utf8_next(p, SIZE_MAX, &cp);
		if (text_escape(p, cp, buf))
			return false;
		p += len;
	}
	return true;
}

const char *esc_text(const char *s)
{
	static char *slot[ESC_TEXT_SLOTS];
	static size_t cap[ESC_TEXT_SLOTS];
	static unsigned next;
	const unsigned char *p = (const unsigned char *)s;
	unsigned k;
	size_t o = 0;

	if (!s || text_is_plain(s))
		return s;
	k = next++ % ESC_TEXT_SLOTS;
	/* the longest escape, \u00HH, is 6 bytes for a character of 2 */
	if (ALLOC_GROW(slot[k], 6 * strlen(s) + 1, cap[k]) < 0)
		return "?";
	while (*p) {
		char buf[8];
		uint32_t cp;
		size_t len = utf8_next(p, SIZE_MAX, &cp);
		const char *e = text_escape(p, cp, buf);

		if (e) {
			len = cp == UTF8_BAD ? 1 : len;
			memcpy(slot[k] + o, e, strlen(e));
			o += strlen(e);
		} else {
			memcpy(slot[k] + o, p, len);
			o += len;
		}
		p += len;
	}
	slot[k][o] = '\0';
	return slot[k];
}

/* --full-names: a process runs one command, so its option is the
 * process's, as --max-memory's limit is */
static bool names_whole;

void fold_names_off(void)
{
	names_whole = true;
}

const char *fold_name(const char *s)
{
	static char *slot[ESC_TEXT_SLOTS];
	static size_t cap[ESC_TEXT_SLOTS];
	static unsigned next;
	unsigned k;

	if (!s || names_whole || !strchr(s, '<'))
		return s;
	k = next++ % ESC_TEXT_SLOTS;
	if (ALLOC_GROW(slot[k], strlen(s) + 1, cap[k]) < 0)
		return "?";
	return type_name_fold(s, slot[k]);
}

const char *esc_name(const char *s)
{
	return esc_text(fold_name(s));
}

/* ---- JSON ---------------------------------------------------------------- */

void esc_json(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		uint32_t cp;
		size_t len;

		switch (*p) {
		case '"':
			fputs("\\\"", f);
			p++;
			continue;
		case '\\':
			fputs("\\\\", f);
			p++;
			continue;
		case '\n':
			fputs("\\n", f);
			p++;
			continue;
		case '\t':
			fputs("\\t", f);
			p++;
			continue;
		case '\r':
			fputs("\\r", f);
			p++;
			continue;
		default:
			break;
		}
		len = utf8_next(p, SIZE_MAX, &cp);
		if (cp == UTF8_BAD)
			fputs(UTF8_REPLACEMENT, f);
		else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
			 cp == 0x2028 || cp == 0x2029)
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(p, 1, len, f);
		p += len;
	}
	fputc('"', f);
}

/* ---- markdown ------------------------------------------------------------ */

void esc_markdown_code(FILE *f, const char *s, bool table_cell)
{
	const char *t = esc_text(s);
	size_t run = 0, longest = 0, n = strlen(t);
	bool pad;

	for (const char *p = t; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	pad = longest > 0 ||
	      (n > 1 && t[0] == ' ' && t[n - 1] == ' ' &&
	       strspn(t, " ") != n);
	for (size_t i = 0; i <= longest; i++)
		fputc('`', f);
	if (pad)
		fputc(' ', f);
	for (const char *p = t; *p; p++) {
		if (*p == '|' && table_cell)
			fputc('\\', f);
		fputc(*p, f);
	}
	if (pad)
		fputc(' ', f);
	for (size_t i = 0; i <= longest; i++)
		fputc('`', f);
}

/* ---- folded stacks ----------------------------------------------------- */

void esc_folded(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		char buf[8];
		uint32_t cp;
		size_t len = utf8_next(p, SIZE_MAX, &cp);

		if (*p == ';')
			fputc(':', f);
		else if (text_escape(p, cp, buf))
			fputc('?', f);
		else
			fwrite(p, 1, len, f);
		p += len;
	}
}

/* ---- SVG ----------------------------------------------------------------- */

void esc_xml(FILE *f, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t n = 0; *p && n < max; n++) {
		uint32_t cp;
		size_t len = utf8_next(p, SIZE_MAX, &cp);

		if (cp == UTF8_BAD || cp < 0x20 || cp == 0x7f ||
		    cp == 0xfffe || cp == 0xffff) {
			fputc('?', f);
			p += len;
			continue;
		}
		switch (cp) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fwrite(p, 1, len, f);
		}
		p += len;
	}
}

size_t esc_xml_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p) {
		uint32_t cp;

		p += utf8_next(p, SIZE_MAX, &cp);
		n++;
	}
	return n;
}
