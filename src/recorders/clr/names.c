/*
 * names.c - .NET class names from the profiling interface's answers
 * (names.h).
 */
#include "recorders/clr/names.h"

#include "util/alloc.h"
#include "util/utf8.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void clrn_init(struct clrn_buf *b, char *s, size_t len)
{
	b->s = s;
	b->len = len;
	b->at = 0;
	b->cut = false;
	if (len)
		s[0] = '\0';
}

void clrn_putn(struct clrn_buf *b, const char *s, size_t n)
{
	if (b->len == 0 || b->cut)
		return;
	if (b->at + n + 1 > b->len) {
		n = b->len - 1 - b->at;
		/* not in the middle of a character */
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
		b->cut = true;
	}
	memcpy(b->s + b->at, s, n);
	b->at += n;
	b->s[b->at] = '\0';
}

void clrn_put(struct clrn_buf *b, const char *s)
{
	clrn_putn(b, s, strlen(s));
}

const char *clrn_element_type_name(uint32_t elem_type)
{
	static const char *const names[] = {
		[0x02] = "System.Boolean", [0x03] = "System.Char",
		[0x04] = "System.SByte",   [0x05] = "System.Byte",
		[0x06] = "System.Int16",   [0x07] = "System.UInt16",
		[0x08] = "System.Int32",   [0x09] = "System.UInt32",
		[0x0a] = "System.Int64",   [0x0b] = "System.UInt64",
		[0x0c] = "System.Single",  [0x0d] = "System.Double",
		[0x0e] = "System.String",  [0x18] = "System.IntPtr",
		[0x19] = "System.UIntPtr", [0x1c] = "System.Object",
	};

	return elem_type < ARRAY_SIZE(names) ? names[elem_type] : NULL;
}

unsigned clrn_arity(const char *name, size_t *base_len)
{
	const char *tick = strrchr(name, '`');
	unsigned n = 0;

	*base_len = strlen(name);
	if (!tick || !tick[1])
		return 0;
	for (const char *p = tick + 1; *p; p++) {
		if (*p < '0' || *p > '9' || n > 1000)
			return 0;
		n = n * 10 + (unsigned)(*p - '0');
	}
	*base_len = (size_t)(tick - name);
	return n;
}

static void unknown_class(uint64_t cls, struct clrn_buf *b)
{
	char id[32];

	snprintf(id, sizeof(id), "class 0x%" PRIx64, cls);
	clrn_put(b, id);
}

static void format_class(const struct clrn_source *src, uint64_t cls,
			 struct clrn_buf *b, int depth);

static void array_name(const struct clrn_source *src, unsigned rank,
		       uint64_t elem, uint32_t elem_type, struct clrn_buf *b,
		       int depth)
{
	const char *prim = clrn_element_type_name(elem_type);

	if (elem)
		format_class(src, elem, b, depth + 1);
	else if (prim)
		clrn_put(b, prim);
	else
		clrn_put(b, "?");
	clrn_put(b, "[");
	for (unsigned i = 1; i < rank; i++)
		clrn_put(b, ",");
	clrn_put(b, "]");
}

/* The k generic arguments from *next on: "<A, B>". */
static void put_args(const struct clrn_source *src, const struct clrn_type *t,
		     size_t *next, size_t k, struct clrn_buf *b, int depth)
{
	clrn_put(b, "<");
	for (size_t i = 0; i < k && *next < t->n_args; i++, (*next)++) {
		if (i)
			clrn_put(b, ", ");
		if (depth >= CLRN_MAX_DEPTH)
			clrn_put(b, "...");
		else
			format_class(src, t->args[*next], b, depth + 1);
	}
	clrn_put(b, ">");
}

/* Outermost first, joined by '+'; each level takes as many generic
 * arguments as its name declares, and the innermost whatever is left
 * (metadata that declares none). */
static void type_name(const struct clrn_source *src, const struct clrn_type *t,
		      struct clrn_buf *b, int depth)
{
	size_t next = 0;

	for (size_t i = t->n_nest; i-- > 0;) {
		size_t base;
		unsigned k = clrn_arity(t->nest[i], &base);

		clrn_putn(b, t->nest[i], base);
		if (i == 0 && next + k < t->n_args)
			k = (unsigned)(t->n_args - next);
		if (k)
			put_args(src, t, &next, k, b, depth);
		if (i)
			clrn_put(b, "+");
	}
}

static void format_class(const struct clrn_source *src, uint64_t cls,
			 struct clrn_buf *b, int depth)
{
	struct clrn_type t;
	unsigned rank = 0;
	uint64_t elem = 0;
	uint32_t elem_type = 0;
	int is_array;

	if (depth > CLRN_MAX_DEPTH * 2) {
		clrn_put(b, "...");
		return;
	}
	is_array = src->array(src->ctx, cls, &rank, &elem, &elem_type);
	if (is_array == 1) {
		array_name(src, rank ? rank : 1, elem, elem_type, b, depth);
		return;
	}
	if (is_array < 0 || src->type(src->ctx, cls, &t) < 0 || t.n_nest == 0) {
		unknown_class(cls, b);
		return;
	}
	type_name(src, &t, b, depth);
}

void clrn_class_name(const struct clrn_source *src, uint64_t cls,
		     struct clrn_buf *b)
{
	format_class(src, cls, b, 0);
}

size_t clrn_from_utf16(char *out, size_t len, const uint16_t *in, size_t n)
{
	size_t at = 0;

	if (len == 0)
		return 0;
	for (size_t i = 0; i < n && in[i]; i++) {
		uint32_t cp = in[i];
		char utf8[4];
		size_t k;

		if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < n &&
		    in[i + 1] >= 0xDC00 && in[i + 1] <= 0xDFFF) {
			cp = 0x10000 + ((cp - 0xD800) << 10) +
			     (in[i + 1] - 0xDC00);
			i++;
		} else if (cp >= 0xD800 && cp <= 0xDFFF) {
			cp = 0xFFFD;
		}
		k = utf8_put(utf8, cp);
		if (at + k + 1 > len)
			break;
		memcpy(out + at, utf8, k);
		at += k;
	}
	out[at] = '\0';
	return at;
}

int clrn_to_utf16(uint16_t *out, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s), at = 0;

	while (left) {
		uint32_t cp;
		size_t k = utf8_next(p, left, &cp);

		if (cp == UTF8_BAD)
			cp = 0xFFFD;
		if (cp >= 0x10000) {
			if (at + 3 > len)
				return -1;
			cp -= 0x10000;
			out[at++] = (uint16_t)(0xD800 + (cp >> 10));
			out[at++] = (uint16_t)(0xDC00 + (cp & 0x3FF));
		} else {
			if (at + 2 > len)
				return -1;
			out[at++] = (uint16_t)cp;
		}
		p += k;
		left -= k;
	}
	if (at + 1 > len)
		return -1;
	out[at] = 0;
	return 0;
}

int64_t clrn_compressed(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *s = *p;
	size_t k;
	int64_t v;

	if (s >= end)
		return -1;
	k = (*s & 0x80) == 0 ? 1 : (*s & 0xC0) == 0x80 ? 2 : 4;
	if ((size_t)(end - s) < k)
		return -1;
	v = k == 1 ? s[0] : k == 2 ? s[0] & 0x3F : s[0] & 0x1F;
	for (size_t i = 1; i < k; i++)
		v = v << 8 | s[i];
	*p = s + k;
	return v;
}

int64_t clrn_compressed_signed(const uint8_t **p, const uint8_t *end,
			       bool *ok)
{
	const uint8_t *start = *p;
	int64_t u = clrn_compressed(p, end);
	size_t k = (size_t)(*p - start);

	*ok = u >= 0;
	if (u < 0)
		return 0;
	/* the sign is the lowest bit, rotated there from the top of the
	 * 6, 13 or 28 bits the width holds */
	if (!(u & 1))
		return u >> 1;
	return (u >> 1) - (k == 1 ? 0x40 : k == 2 ? 0x2000 : 0x10000000);
}

/* Skips a compressed unsigned integer; NULL past the end. */
static const uint8_t *skip_compressed(const uint8_t *p, const uint8_t *end)
{
	return clrn_compressed(&p, end) < 0 ? NULL : p;
}

/* CorElementType values a field's type may start with. */
enum {
	ET_STRING = 0x0e, ET_VALUETYPE = 0x11, ET_CLASS = 0x12, ET_VAR = 0x13,
	ET_ARRAY = 0x14, ET_GENERICINST = 0x15, ET_OBJECT = 0x1c,
	ET_SZARRAY = 0x1d, ET_CMOD_REQD = 0x1f, ET_CMOD_OPT = 0x20,
	SIG_FIELD = 0x06,
};

/* Where a field's signature gives its type, past its custom modifiers;
 * NULL when it is no field's. */
static const uint8_t *field_type_at(const uint8_t *sig, size_t len)
{
	const uint8_t *p, *end;

	if (!sig || len < 2 || sig[0] != SIG_FIELD)
		return NULL;
	p = sig + 1;
	end = sig + len;
	while (p < end && (*p == ET_CMOD_REQD || *p == ET_CMOD_OPT)) {
		if (++p >= end || !(p = skip_compressed(p, end)))
			return NULL;
	}
	return p < end ? p : NULL;
}

uint64_t clrn_field_struct(const uint8_t *sig, size_t len)
{
	const uint8_t *p = field_type_at(sig, len);
	int64_t coded;

	if (!p || *p != ET_VALUETYPE)
		return 0;
	p++;
	coded = clrn_compressed(&p, sig + len);
	return coded < 0 ? 0 : (uint64_t)coded;
}

unsigned clrn_field_type(const uint8_t *sig, size_t len)
{
	const uint8_t *p = field_type_at(sig, len);

	return p ? *p : 0;
}

enum clrn_field_holds clrn_field_sig(const uint8_t *sig, size_t len,
				     unsigned *param)
{
	const uint8_t *p = field_type_at(sig, len), *end;

	if (!p)
		return CLRN_HOLDS_VALUE;
	end = sig + len;
	switch (*p) {
	case ET_STRING:
	case ET_CLASS:
	case ET_ARRAY:
	case ET_OBJECT:
	case ET_SZARRAY:
		return CLRN_HOLDS_REFERENCE;
	case ET_GENERICINST:
		return p + 1 < end && p[1] == ET_CLASS ? CLRN_HOLDS_REFERENCE
						       : CLRN_HOLDS_VALUE;
	case ET_VAR:
		if (p + 1 >= end || (p[1] & 0x80))
			return CLRN_HOLDS_VALUE; /* past 127: not ours */
		*param = p[1];
		return CLRN_HOLDS_TYPE_PARAM;
	default:
		return CLRN_HOLDS_VALUE;
	}
}
