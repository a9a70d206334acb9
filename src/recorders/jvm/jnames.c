/*
 * jnames.c - Java's names for types (jnames.h).
 */
#include "recorders/jvm/jnames.h"
#include "util/utf8.h"

#include <heaptrace/record.h>

#include <stdlib.h>
#include <string.h>

static const char *primitive_name(char c)
{
	switch (c) {
	case 'Z': return "boolean";
	case 'B': return "byte";
	case 'C': return "char";
	case 'S': return "short";
	case 'I': return "int";
	case 'J': return "long";
	case 'F': return "float";
	case 'D': return "double";
	case 'V': return "void";
	default: return NULL;
	}
}

unsigned java_value_type(char letter)
{
	switch (letter) {
	case 'Z': return HT_TYPE_BOOLEAN;
	case 'B': return HT_TYPE_BYTE;
	case 'C': return HT_TYPE_CHAR;
	case 'S': return HT_TYPE_SHORT;
	case 'I': return HT_TYPE_INT;
	case 'J': return HT_TYPE_LONG;
	case 'F': return HT_TYPE_FLOAT;
	case 'D': return HT_TYPE_DOUBLE;
	default: return 0;
	}
}

/*
 * The name Class.getTypeName() gives, which is also what jcmd
 * GC.class_histogram prints for a non-array class: package dots, '$' of
 * nested classes kept, "[]" per array dimension. A hidden class's
 * signature has a '.' before its suffix where Class.getName() has a '/'.
 */
char *java_type_name(const char *signature)
{
	size_t dims = strspn(signature, "[");
	const char *base = signature + dims;
	const char *prim = base[0] && !base[1] ? primitive_name(base[0]) : NULL;
	size_t blen = strlen(base);
	char *out, *q;

	if (prim) {
		base = prim;
		blen = strlen(prim);
	} else if (blen >= 2 && base[0] == 'L' && base[blen - 1] == ';') {
		base++;
		blen -= 2;
	}
	out = malloc(blen + 2 * dims + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < blen; i++) {
		char c = base[i];

		out[i] = prim ? c : c == '/' ? '.' : c == '.' ? '/' : c;
	}
	q = out + blen;
	for (size_t i = 0; i < dims; i++, q += 2)
		memcpy(q, "[]", 2);
	*q = '\0';
	/* a class name outside the BMP comes as two encoded surrogates */
	q = java_utf8(out);
	free(out);
	return q;
}

char *java_utf8(const char *jname)
{
	size_t n = strlen(jname);
	char *out = malloc(UTF8_REPAIR_BOUND(n) + 1);

	if (out)
		out[utf8_from_modified(out, jname, n)] = '\0';
	return out;
}
