/*
 * output.c - the YAML and JSON writers behind output.h.
 *
 * Both are streaming: nothing is buffered but a stack of open containers,
 * so a command can write millions of objects. YAML needs one look-ahead:
 * whether a container is empty ("key: []") is known only at its end, so a
 * container's key line is finished by its first child or by its end.
 */
#include "cli/output.h"

#include "cli/escape.h"

#include "lib/read/textform.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

struct frame {
	bool is_array;
	unsigned children;
	unsigned indent;      /* YAML: column of this container's children */
	bool first_inline;    /* YAML: an object in an array: its first key
				 goes on the "- " line */
	bool pending_newline; /* YAML: "key:" written, line not ended */
};

struct out {
	FILE *f;
	enum output_format format;
	unsigned depth;
	struct frame stack[MAX_DEPTH];
};

struct out *out_new(FILE *f, enum output_format format)
{
	struct out *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->f = f;
	o->format = format;
	return o;
}

static struct frame *top(struct out *o)
{
	return o->depth ? &o->stack[o->depth - 1] : NULL;
}

static void indent(struct out *o, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		fputc(' ', o->f);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_prefix(struct out *o, const char *key)
{
	struct frame *t = top(o);

	if (!t)
		return;
	fputs(t->children ? ",\n" : "\n", o->f);
	indent(o, 2 * o->depth);
	if (key && !t->is_array) {
		esc_json(o->f, key);
		fputs(": ", o->f);
	}
	t->children++;
}

/* ---- YAML ---------------------------------------------------------------- */

/* Writes what comes before a value: the parent's unfinished key line, the
 * indentation, and "key: " or "- ". */
static void yaml_prefix(struct out *o, const char *key)
{
	struct frame *t = top(o);

	if (!t)
		return;
	if (t->pending_newline) {
		fputc('\n', o->f);
		t->pending_newline = false;
	}
	if (t->is_array) {
		indent(o, t->indent);
		fputs("- ", o->f);
	} else {
		if (t->first_inline && t->children == 0)
			; /* already after "- " */
		else
			indent(o, t->indent);
		fputs(key ? key : "?", o->f);
		fputc(':', o->f);
	}
	t->children++;
}

static void yaml_scalar_start(struct out *o, const char *key)
{
	struct frame *t = top(o);

	yaml_prefix(o, key);
	if (t && !t->is_array)
		fputc(' ', o->f);
}

/* ---- both ---------------------------------------------------------------- */

static void begin(struct out *o, const char *key, bool is_array)
{
	struct frame *parent = top(o);
	struct frame *f;

	if (o->depth == MAX_DEPTH)
		abort(); /* a programming error: documents are shallow */
	if (o->format == FORMAT_JSON) {
		json_prefix(o, key);
		fputc(is_array ? '[' : '{', o->f);
	} else if (parent) {
		yaml_prefix(o, key);
	}
	f = &o->stack[o->depth++];
	memset(f, 0, sizeof(*f));
	f->is_array = is_array;
	if (!parent) {
		f->indent = 0;
	} else if (parent->is_array) {
		/* "- " then the object's keys line up after it */
		f->indent = parent->indent + 2;
		f->first_inline = !is_array;
		f->pending_newline = is_array;
	} else {
		f->indent = parent->indent + (is_array ? 0 : 2);
		f->pending_newline = true;
	}
}

static void end(struct out *o)
{
	struct frame *f = top(o);

	if (!f)
		return;
	if (o->format == FORMAT_JSON) {
		if (f->children) {
			fputc('\n', o->f);
			indent(o, 2 * (o->depth - 1));
		}
		fputc(f->is_array ? ']' : '}', o->f);
	} else if (f->children == 0 && o->depth > 1) {
		fputs(f->first_inline ? "{}\n" : (f->is_array ? " []\n" : " {}\n"),
		      o->f);
	} else if (f->children == 0) {
		fputs("{}\n", o->f);
	}
	o->depth--;
}

void out_begin_object(struct out *o, const char *key)
{
	begin(o, key, false);
}

void out_end_object(struct out *o)
{
	end(o);
}

void out_begin_array(struct out *o, const char *key)
{
	begin(o, key, true);
}

void out_end_array(struct out *o)
{
	end(o);
}

static void scalar_start(struct out *o, const char *key)
{
	if (o->format == FORMAT_JSON)
		json_prefix(o, key);
	else
		yaml_scalar_start(o, key);
}

static void scalar_end(struct out *o)
{
	if (o->format != FORMAT_JSON)
		fputc('\n', o->f);
}

void out_string(struct out *o, const char *key, const char *value)
{
	scalar_start(o, key);
	if (!value)
		fputs("null", o->f);
	else if (o->format == FORMAT_JSON)
		esc_json(o->f, value);
	else
		yaml_write_string(o->f, value);
	scalar_end(o);
}

void out_u64(struct out *o, const char *key, uint64_t value)
{
	scalar_start(o, key);
	fprintf(o->f, "%llu", (unsigned long long)value);
	scalar_end(o);
}

void out_i64(struct out *o, const char *key, int64_t value)
{
	scalar_start(o, key);
	fprintf(o->f, "%lld", (long long)value);
	scalar_end(o);
}

void out_double(struct out *o, const char *key, double value)
{
	scalar_start(o, key);
	fprintf(o->f, "%.6g", value);
	scalar_end(o);
}

void out_id(struct out *o, const char *key, ht_id value)
{
	scalar_start(o, key);
	fprintf(o->f, "\"0x%llx\"", (unsigned long long)value);
	scalar_end(o);
}

void out_bool(struct out *o, const char *key, bool value)
{
	scalar_start(o, key);
	fputs(value ? "true" : "false", o->f);
	scalar_end(o);
}

void out_null(struct out *o, const char *key)
{
	scalar_start(o, key);
	fputs("null", o->f);
	scalar_end(o);
}

int out_finish(struct out *o)
{
	int rc;

	while (o->depth)
		end(o);
	if (o->format == FORMAT_JSON)
		fputc('\n', o->f);
	rc = fflush(o->f) == 0 && !ferror(o->f) ? 0 : -1;
	free(o);
	return rc;
}
