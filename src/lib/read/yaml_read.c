/*
 * yaml_read.c - the YAML text form as a source (source.h): the header at
 * open, then one trace event per call, pulled from libyaml's streaming
 * parser. Nothing is kept from one event to the next but reusable buffers,
 * so memory is bounded by the largest single event, however long the trace.
 *
 * The schema (heaptrace(5), doc/design.md sections 1, 5) is checked strictly:
 * an unknown, duplicate, missing or ill-typed field is an error that names
 * the event, the field and the line and column, since these files are
 * written by hand for tests and a silent default would hide a typo.
 *
 * The input is checked as UTF-8 here, ahead of libyaml: libyaml decodes a
 * whole buffer (16 KiB) before its parser looks at it, so a bad byte would
 * fail the file before the events ahead of it, however many. libyaml gets
 * only the valid text before the first bad byte, then the end of its input;
 * the events that lie wholly before that byte are delivered, and the error
 * is the bad byte's, at its offset, in libyaml's own words.
 */
#include "lib/read/source.h"

#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/membudget.h"
#include "util/utf8.h"

#include <yaml.h>

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The lists of an event, in buffers reused from one event to the next. */
enum buffer_slot {
	B_REFS,       /* ht_id: refs of root and object references */
	B_FLAGS,      /* uint32_t: flags, ref_flags */
	B_KINDS,      /* uint8_t */
	B_ROOT_FLAGS, /* uint8_t */
	B_ROOT_IDS,   /* ht_id */
	B_BLOCKS,     /* ranges or blocks of the block events */
	B_FIELD_REFS, /* ht_id: ref_fields, root_fields */
	B_NAMES,      /* char: the names of a fields event, one after another */
	B_VALUE_FIELDS, /* ht_id: value_fields (version 3) */
	B_VALUES,     /* uint64_t: values, and an array's elements */
	B_ELEMENTS,   /* uint64_t: an array's elements as read */
	B_ARRAY_DATA, /* uint8_t: the elements' little-endian bytes */
	B_COUNT_
};

struct buffer {
	void *data;
	size_t count; /* elements, where the buffer holds an array */
	size_t cap;   /* bytes */
};

struct meta_entry {
	char *key;
	char *value;
	yaml_mark_t mark; /* of the key */
};

enum read_state {
	ST_EVENTS,      /* inside the events sequence */
	ST_NULL_EVENTS, /* "events:" with no value: the end comes next */
	ST_DONE,
	ST_FAILED,
};

struct yaml_src {
	yaml_parser_t parser;
	yaml_event_t ev; /* the parser event being looked at */
	bool have_ev;
	FILE *f;
	int read_errno;

	/* UTF-8 checked ahead of libyaml (read_input) */
	bool no_check;          /* UTF-16 (its byte order mark): libyaml's */
	bool started;
	unsigned char carry[4]; /* an incomplete sequence, from the last read */
	size_t n_carry;
	uint64_t offset;        /* bytes handed to libyaml so far */
	bool bad;               /* stopped at a bad byte: */
	uint64_t bad_offset;
	uint64_t chars;         /* characters handed to libyaml so far */
	uint64_t cut;           /* where libyaml's input ends (the start of
				 * the character the bad byte is in), in
				 * characters, as libyaml's marks count */
	const char *bad_problem;
	long bad_value;         /* -1: none to show */
	/* Where the text of the parser events read so far ends (a mark's
	 * index: characters), and whether that was a plain scalar (one cut
	 * short by the bad byte looks complete). */
	uint64_t text_end;
	bool text_end_plain;
	char *path;
	enum read_state state;
	struct ht_error error; /* repeated by every call after a failure */

	struct ht_header header;
	char *runtime, *runtime_version, *command_line;
	struct buffer meta; /* struct meta_entry */
	struct ht_metadata *metadata;

	struct buffer name; /* the event's name field */
	struct ht_array_values array; /* an object's, as its event */
	struct buffer buf[B_COUNT_];
	uint64_t charged;   /* the buffers' bytes, to the memory budget */

	uint64_t events; /* delivered so far */
	struct ht_position pos;
};

/* ---- Errors --------------------------------------------------------------- */

#define NAME_SHOWN 64 /* longest key quoted in a message */

HT_PRINTF(3, 4)
static int fail_at(struct yaml_src *s, yaml_mark_t m, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err_at_line(&s->error, HT_E_SYNTAX, s->path, (unsigned)m.line + 1,
		    (unsigned)m.column + 1, "%s", msg);
	s->error.offset = m.index;
	return -1;
}

static int fail_nomem(struct yaml_src *s)
{
	if (mem_budget_exceeded())
		err_plain(&s->error, HT_E_NOMEM, s->path, MEM_BUDGET_MESSAGE,
			  mem_budget_limit());
	else
		err_sys(&s->error, ENOMEM, s->path, "cannot read YAML");
	return -1;
}

static int fail_parser(struct yaml_src *s)
{
	const yaml_parser_t *p = &s->parser;
	const char *problem = p->problem ? p->problem : "unknown error";

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return fail_nomem(s);
	case YAML_READER_ERROR:
		if (s->read_errno) {
			err_sys(&s->error, s->read_errno, s->path, "cannot read");
			return -1;
		}
		/* A bad byte has an offset but, before decoding, no line. */
		if (p->problem_value >= 0)
			err_at_offset(&s->error, HT_E_SYNTAX, s->path,
				      p->problem_offset, "%s (0x%x)", problem,
				      (unsigned)p->problem_value);
		else
			err_at_offset(&s->error, HT_E_SYNTAX, s->path,
				      p->problem_offset, "%s", problem);
		return -1;
	default:
		if (p->context)
			return fail_at(s, p->problem_mark,
				       "%s (%s at line %zu, column %zu)",
				       problem, p->context,
				       p->context_mark.line + 1,
				       p->context_mark.column + 1);
		return fail_at(s, p->problem_mark, "%s", problem);
	}
}

/* The bad byte read_input stopped at, as libyaml would have said it. */
static int fail_bad_byte(struct yaml_src *s)
{
	if (s->bad_value >= 0)
		err_at_offset(&s->error, HT_E_SYNTAX, s->path, s->bad_offset,
			      "%s (0x%lx)", s->bad_problem,
			      (unsigned long)s->bad_value);
	else
		err_at_offset(&s->error, HT_E_SYNTAX, s->path, s->bad_offset,
			      "%s", s->bad_problem);
	return -1;
}

/* Whether what has been read so far reaches the end libyaml was given
 * before the bad byte: there the text was cut, and the bad byte is the
 * error. A plain scalar that ends there may have been cut short; anything
 * else (a quote, a bracket) that ends there is complete. */
static bool reaches_bad_byte(const struct yaml_src *s)
{
	return s->bad && (s->text_end > s->cut ||
			  (s->text_end == s->cut && s->text_end_plain));
}

/* After a failure: the bad byte, when libyaml's input was cut there and
 * the failure is at that cut (the end of input it met, or a value cut
 * short), rather than an error of the text before it. The failure's
 * offset is then a mark's index (fail_at), in characters like the cut. */
static void blame_bad_byte(struct yaml_src *s)
{
	if (s->bad && s->error.code == HT_E_SYNTAX &&
	    (s->error.offset >= s->cut || reaches_bad_byte(s)))
		fail_bad_byte(s);
}

/* ---- Pulling parser events ------------------------------------------------ */

static const char *node_kind(const yaml_event_t *e)
{
	switch (e->type) {
	case YAML_SCALAR_EVENT:
		return "a scalar";
	case YAML_SEQUENCE_START_EVENT:
		return "a sequence";
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return "the end of a collection";
	case YAML_DOCUMENT_START_EVENT:
		return "another document";
	default:
		return "the end of the document";
	}
}

static int pull(struct yaml_src *s)
{
	if (s->have_ev) {
		yaml_event_delete(&s->ev);
		s->have_ev = false;
	}
	if (!yaml_parser_parse(&s->parser, &s->ev))
		return fail_parser(s);
	s->have_ev = true;
	/* Zero-width events (the end of a block, an empty scalar) are where
	 * the next text starts, not text read. */
	if (s->ev.end_mark.index > s->ev.start_mark.index) {
		s->text_end = s->ev.end_mark.index;
		s->text_end_plain =
			s->ev.type == YAML_SCALAR_EVENT &&
			s->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	}
	/* An alias would make one node count for many: a small input could
	 * stand for an unbounded trace. The canonical form never has one. */
	if (s->ev.type == YAML_ALIAS_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "aliases (*%.*s) are not supported", NAME_SHOWN,
			       (const char *)s->ev.data.alias.anchor);
	return 0;
}

static const char *scalar_text(const yaml_event_t *e)
{
	return (const char *)e->data.scalar.value;
}

static size_t scalar_length(const yaml_event_t *e)
{
	return e->data.scalar.length;
}

static bool is_plain(const yaml_event_t *e)
{
	return e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static bool scalar_is(const yaml_event_t *e, const char *word)
{
	return scalar_length(e) == strlen(word) &&
	       memcmp(scalar_text(e), word, scalar_length(e)) == 0;
}

/* "", "~" and "null" unquoted: YAML's null. */
static bool is_null(const yaml_event_t *e)
{
	return e->type == YAML_SCALAR_EVENT && is_plain(e) &&
	       (scalar_length(e) == 0 || scalar_is(e, "~") ||
		scalar_is(e, "null") || scalar_is(e, "Null") ||
		scalar_is(e, "NULL"));
}

/* A scalar with a NUL inside ("\0" in a quoted string) would be cut short
 * by every C string function: refused wherever a name is read. Scalars
 * need no UTF-8 repair (heaptrace(5), STRINGS): libyaml refuses input that
 * is not UTF-8, and its escapes (\x, \u, \U) make only valid characters. */
static bool has_nul(const yaml_event_t *e)
{
	return strlen(scalar_text(e)) != scalar_length(e);
}

/* ---- Buffers -------------------------------------------------------------- */

/* Buffers grow by doubling (util/alloc.h) and never shrink: after the
 * largest event, reading allocates nothing but what libyaml does. */
static int reserve(struct yaml_src *s, struct buffer *b, size_t need)
{
	size_t cap, more;

	if (need <= b->cap)
		return 0;
	/* charged to the memory budget before it grows: an event's lists
	 * cost some 4 bytes of memory per byte of text */
	cap = grown_capacity(b->cap, need, 1);
	more = cap - b->cap;
	if (cap == 0 || mem_budget_charge(more) < 0)
		return fail_nomem(s);
	if (grow_array(&b->data, &b->cap, need, 1) < 0) {
		mem_budget_release(more);
		return fail_nomem(s);
	}
	s->charged += more;
	return 0;
}

/* Appends one element of elem bytes to b and returns it. */
static void *push(struct yaml_src *s, struct buffer *b, size_t elem)
{
	char *p;

	if (b->count >= SIZE_MAX / elem - 1) {
		fail_nomem(s);
		return NULL;
	}
	if (reserve(s, b, (b->count + 1) * elem) < 0)
		return NULL;
	p = (char *)b->data + b->count * elem;
	b->count++;
	return p;
}

static char *copy_scalar(struct yaml_src *s)
{
	char *p = malloc(scalar_length(&s->ev) + 1);

	if (!p) {
		fail_nomem(s);
		return NULL;
	}
	memcpy(p, scalar_text(&s->ev), scalar_length(&s->ev) + 1);
	return p;
}

/* ---- Numbers -------------------------------------------------------------- */

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

enum number_status { NUM_OK, NUM_INVALID, NUM_TOO_BIG };

/*
 * Decimal, or hex after 0x or 0X. No sign, no underscores, and no leading
 * zero in decimal: YAML 1.1 reads 010 as octal, so it is refused rather
 * than read in a way that some other tool would not.
 */
static enum number_status parse_number(const char *p, size_t n, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (n >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		n -= 2;
	} else if (n > 1 && p[0] == '0') {
		return NUM_INVALID;
	}
	if (n == 0)
		return NUM_INVALID;
	for (size_t i = 0; i < n; i++) {
		int d = digit_value(p[i]);

		if (d < 0 || (unsigned)d >= base)
			return NUM_INVALID;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			return NUM_TOO_BIG;
		v = v * base + (unsigned)d;
	}
	*out = v;
	return NUM_OK;
}

/* The current scalar as a number of at most max, for field `what` of
 * `ctx`; checks that it is a number at all, unquoted. */
static int read_number(struct yaml_src *s, const char *ctx, const char *what,
		       uint64_t max, uint64_t *out)
{
	const yaml_event_t *e = &s->ev;
	enum number_status st;

	if (e->type != YAML_SCALAR_EVENT)
		return fail_at(s, e->start_mark, "%s: '%s' must be a number, not %s",
			       ctx, what, node_kind(e));
	if (is_null(e))
		return fail_at(s, e->start_mark, "%s: '%s' must be a number, not null",
			       ctx, what);
	if (!is_plain(e))
		return fail_at(s, e->start_mark,
			       "%s: '%s' must be a number, not a string",
			       ctx, what);
	st = parse_number(scalar_text(e), scalar_length(e), out);
	if (st == NUM_INVALID)
		return fail_at(s, e->start_mark,
			       "%s: '%s': invalid number '%.*s' (decimal or 0x hex)",
			       ctx, what, NAME_SHOWN, scalar_text(e));
	if (st == NUM_TOO_BIG || *out > max)
		return fail_at(s, e->start_mark,
			       "%s: '%s': %.*s is out of range (at most %llu)", ctx,
			       what, NAME_SHOWN, scalar_text(e),
			       (unsigned long long)max);
	return 0;
}

/* A value (heaptrace(5)): a negative decimal is a signed number, kept as
 * its two's complement bits; any other number is the bits themselves. */
static int read_value(struct yaml_src *s, const char *ctx, const char *what,
		      uint64_t *out)
{
	const yaml_event_t *e = &s->ev;
	uint64_t magnitude;
	enum number_status st;

	if (e->type != YAML_SCALAR_EVENT || !is_plain(e) ||
	    scalar_length(e) < 2 || scalar_text(e)[0] != '-')
		return read_number(s, ctx, what, UINT64_MAX, out);
	st = parse_number(scalar_text(e) + 1, scalar_length(e) - 1, &magnitude);
	if (st == NUM_INVALID || scalar_text(e)[1] < '0' ||
	    scalar_text(e)[1] > '9')
		return fail_at(s, e->start_mark,
			       "%s: '%s': invalid number '%.*s' (decimal or 0x hex)",
			       ctx, what, NAME_SHOWN, scalar_text(e));
	if (st == NUM_TOO_BIG || magnitude > (uint64_t)INT64_MAX + 1)
		return fail_at(s, e->start_mark,
			       "%s: '%s': %.*s is out of range (at least %lld)",
			       ctx, what, NAME_SHOWN, scalar_text(e),
			       (long long)INT64_MIN);
	*out = 0 - magnitude;
	return 0;
}

/* ---- Fields of events and blocks ------------------------------------------ */

enum field_kind {
	K_U64,         /* ids, sizes, lengths */
	K_U32,         /* flags, generation */
	K_NAME,        /* the event's string */
	K_CONTAINER,   /* container type */
	K_RESULT,
	K_REASON,
	K_GENERATIONS, /* list of 0..31, stored as a bit set */
	K_U64_LIST,
	K_U32_LIST,
	K_U8_LIST,     /* root_flags */
	K_KIND_LIST,   /* root kinds by name */
	K_FIELD_KIND,  /* instance or static, stored as a uint8_t */
	K_VALUE_TYPE,  /* a field's or an array's type, stored as a uint8_t */
	K_VALUE_LIST,  /* values: signed numbers, or bits */
	K_ARRAY,       /* an object's array: a mapping of its own */
};

struct field {
	const char *name;
	enum field_kind kind;
	bool required;
	size_t at;  /* offset of the value in its struct; lists: a buffer_slot */
	size_t has; /* numbers: offset of the value's has_ flag; 0 for none
		     * (a has_ flag never comes first in its struct) */
};

#define MAX_FIELDS 12

/* What a mapping of fields held, for the checks made after it. */
struct fields_read {
	uint32_t given;   /* the key was there, null value or not */
	uint32_t present; /* ... with a non-null value */
	yaml_mark_t start;
	yaml_mark_t mark[MAX_FIELDS]; /* of each value */
};

static void store(void *base, size_t at, const void *value, size_t size)
{
	memcpy((char *)base + at, value, size);
}

static void store_u64(void *base, size_t at, uint64_t v)
{
	store(base, at, &v, sizeof(v));
}

static void store_u32(void *base, size_t at, uint32_t v)
{
	store(base, at, &v, sizeof(v));
}

static int read_name(struct yaml_src *s, const char *ctx,
		     const struct field *f, void *base)
{
	const yaml_event_t *e = &s->ev;
	const char *name;

	if (e->type != YAML_SCALAR_EVENT)
		return fail_at(s, e->start_mark, "%s: '%s' must be a string, not %s",
			       ctx, f->name, node_kind(e));
	if (has_nul(e))
		return fail_at(s, e->start_mark,
			       "%s: '%s' contains a NUL character", ctx, f->name);
	if (reserve(s, &s->name, scalar_length(e) + 1) < 0)
		return -1;
	memcpy(s->name.data, scalar_text(e), scalar_length(e) + 1);
	name = s->name.data;
	store(base, f->at, &name, sizeof(name));
	return 0;
}

/*
 * An enumeration: its name, or any number that fits where it is stored.
 * Numbers out of the enumeration's range are let through on purpose: the
 * writer prints a value without a name as its number, so `cat` of a
 * damaged trace reads back, and the protocol check reports such values as
 * bad-value, which only works if they can be read.
 */
struct enum_type {
	const char *what;
	int (*parse)(const char *name);
	uint64_t max_number;
	const char *names; /* for the message when a name is unknown */
};

static const struct enum_type container_enum = {
	"container type", ht_container_parse, INT32_MAX, "C_BEGIN ... C_END",
};
static const struct enum_type result_enum = {
	"result", ht_result_parse, INT32_MAX, "ok, postpone or abort",
};
static const struct enum_type reason_enum = {
	"reason", ht_gc_reason_parse, INT32_MAX, "induced or other",
};
static const struct enum_type root_kind_enum = {
	"root kind", ht_root_kind_parse, UINT8_MAX,
	"stack, finalizer, handle or other",
};

static const struct enum_type value_type_enum = {
	"type", ht_value_type_parse, UINT8_MAX,
	"boolean, char, float, double, byte, short, int, long or object",
};

static const struct enum_type field_kind_enum = {
	"field kind", ht_field_kind_parse, UINT8_MAX,
	"instance, static, soft, weak, final or phantom",
};

/* A plain scalar that starts with a digit: read_enum takes it as a
 * number. */
static bool is_plain_number(const yaml_event_t *e)
{
	return is_plain(e) && scalar_text(e)[0] >= '0' &&
	       scalar_text(e)[0] <= '9';
}

static int read_enum(struct yaml_src *s, const char *ctx, const char *field,
		     const struct enum_type *t, int *out)
{
	const yaml_event_t *e = &s->ev;
	uint64_t n;

	if (e->type != YAML_SCALAR_EVENT || is_null(e))
		return fail_at(s, e->start_mark, "%s: '%s' must be a name, not %s",
			       ctx, field, is_null(e) ? "null" : node_kind(e));
	if (is_plain_number(e)) {
		if (read_number(s, ctx, field, t->max_number, &n) < 0)
			return -1;
		*out = (int)n;
		return 0;
	}
	/* names.c compares C strings, which would take "ok\0x" for "ok" */
	*out = has_nul(e) ? -1 : t->parse(scalar_text(e));
	if (*out < 0)
		return fail_at(s, e->start_mark,
			       "%s: '%s': unknown %s '%.*s' (%s)", ctx, field,
			       t->what, NAME_SHOWN, scalar_text(e), t->names);
	return 0;
}

static int read_enum_field(struct yaml_src *s, const char *ctx,
			   const struct field *f, void *base)
{
	enum ht_container_type type;
	enum ht_result result;
	enum ht_gc_reason reason;
	uint8_t byte;
	int v;

	switch (f->kind) {
	case K_VALUE_TYPE:
		if (read_enum(s, ctx, f->name, &value_type_enum, &v) < 0)
			return -1;
		if (s->header.version < 3)
			return fail_at(s, s->ev.start_mark, "%s: '%s' needs "
				       "format version 3 (heaptrace: 3)", ctx,
				       f->name);
		byte = (uint8_t)v;
		store(base, f->at, &byte, sizeof(byte));
		return 0;
	case K_FIELD_KIND:
		if (read_enum(s, ctx, f->name, &field_kind_enum, &v) < 0)
			return -1;
		/* a referent's strength is version 3's (out of range, the
		 * state machine judges it, as in any version) */
		if (v > HT_FIELD_STATIC && v <= HT_FIELD_KIND_LAST &&
		    s->header.version < 3)
			return fail_at(s, s->ev.start_mark, "%s: '%s': kind "
				       "'%s' needs format version 3 "
				       "(heaptrace: 3)", ctx, f->name,
				       ht_field_kind_name((enum ht_field_kind)v));
		byte = (uint8_t)v;
		store(base, f->at, &byte, sizeof(byte));
		return 0;
	case K_CONTAINER:
		if (read_enum(s, ctx, f->name, &container_enum, &v) < 0)
			return -1;
		type = (enum ht_container_type)v;
		store(base, f->at, &type, sizeof(type));
		return 0;
	case K_RESULT:
		if (read_enum(s, ctx, f->name, &result_enum, &v) < 0)
			return -1;
		result = (enum ht_result)v;
		store(base, f->at, &result, sizeof(result));
		return 0;
	default: /* K_REASON */
		if (read_enum(s, ctx, f->name, &reason_enum, &v) < 0)
			return -1;
		reason = (enum ht_gc_reason)v;
		store(base, f->at, &reason, sizeof(reason));
		return 0;
	}
}

static int read_root_kind(struct yaml_src *s, const char *ctx,
			  const char *field, uint8_t *out)
{
	int v;

	if (read_enum(s, ctx, field, &root_kind_enum, &v) < 0)
		return -1;
	*out = (uint8_t)v;
	return 0;
}

static int expect_sequence(struct yaml_src *s, const char *ctx,
			   const char *what)
{
	if (s->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: '%s' must be a list, not %s", ctx, what,
			       node_kind(&s->ev));
	return 0;
}

static int read_generations(struct yaml_src *s, const char *ctx,
			    const struct field *f, void *base)
{
	uint32_t set = 0;
	uint64_t g;

	if (expect_sequence(s, ctx, f->name) < 0)
		return -1;
	for (;;) {
		if (pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (read_number(s, ctx, f->name, HT_GEN_MAX, &g) < 0)
			return -1;
		if (set & (UINT32_C(1) << g))
			return fail_at(s, s->ev.start_mark,
				       "%s: '%s': generation %u listed twice",
				       ctx, f->name, (unsigned)g);
		set |= UINT32_C(1) << g;
	}
	store_u32(base, f->at, set);
	return 0;
}

/* A list into its buffer, which the event's finish points to. */
static int read_list(struct yaml_src *s, const char *ctx,
		     const struct field *f)
{
	enum buffer_slot slot = (enum buffer_slot)f->at;
	uint64_t v;
	void *p;

	if (expect_sequence(s, ctx, f->name) < 0)
		return -1;
	s->buf[slot].count = 0;
	for (;;) {
		if (pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		switch (f->kind) {
		case K_U64_LIST:
			if (read_number(s, ctx, f->name, UINT64_MAX, &v) < 0 ||
			    !(p = push(s, &s->buf[slot], sizeof(uint64_t))))
				return -1;
			memcpy(p, &v, sizeof(uint64_t));
			break;
		case K_U32_LIST:
			if (read_number(s, ctx, f->name, UINT32_MAX, &v) < 0 ||
			    !(p = push(s, &s->buf[slot], sizeof(uint32_t))))
				return -1;
			store_u32(p, 0, (uint32_t)v);
			break;
		case K_U8_LIST:
			if (read_number(s, ctx, f->name, UINT8_MAX, &v) < 0 ||
			    !(p = push(s, &s->buf[slot], 1)))
				return -1;
			*(uint8_t *)p = (uint8_t)v;
			break;
		case K_VALUE_LIST:
			if (read_value(s, ctx, f->name, &v) < 0 ||
			    !(p = push(s, &s->buf[slot], sizeof(uint64_t))))
				return -1;
			memcpy(p, &v, sizeof(uint64_t));
			break;
		default: /* K_KIND_LIST */
			if (!(p = push(s, &s->buf[slot], 1)) ||
			    read_root_kind(s, ctx, f->name, p) < 0)
				return -1;
			break;
		}
	}
}

static int read_fields(struct yaml_src *s, const char *ctx,
		       const struct field *fields, size_t n, void *base,
		       struct fields_read *got);

#define REQUIRED true
#define OPTIONAL false

/* An array's contents as YAML gives them, before they are bytes. */
struct yaml_array {
	uint8_t type;
	uint64_t length;
	bool has_hash;
	uint64_t hash;
};

enum { AR_TYPE, AR_LENGTH, AR_ELEMENTS, AR_HASH };
static const struct field array_fields[] = {
	[AR_TYPE] = {"type", K_VALUE_TYPE, REQUIRED,
		     offsetof(struct yaml_array, type), 0},
	[AR_LENGTH] = {"length", K_U64, REQUIRED,
		       offsetof(struct yaml_array, length), 0},
	[AR_ELEMENTS] = {"elements", K_VALUE_LIST, REQUIRED, B_ELEMENTS, 0},
	[AR_HASH] = {"hash", K_U64, OPTIONAL, offsetof(struct yaml_array, hash),
		     offsetof(struct yaml_array, has_hash)},
};

/* An object's array (version 3): its elements become the little-endian
 * bytes the .ht form carries, each checked against its type's range;
 * a hash comes exactly with a prefix (heaptrace(5)). */
static int read_array(struct yaml_src *s, const char *ctx,
		      const struct field *f)
{
	struct yaml_array a = {0};
	struct fields_read got;
	yaml_mark_t at = s->ev.start_mark;
	const uint64_t *elements;
	size_t n, width;
	uint8_t *data;
	char inner[64];

	snprintf(inner, sizeof(inner), "%s: %s", ctx, f->name);
	if (read_fields(s, inner, array_fields, ARRAY_SIZE(array_fields), &a,
			&got) < 0)
		return -1;
	width = ht_value_type_width(a.type);
	n = s->buf[B_ELEMENTS].count;
	if (width == 0)
		return fail_at(s, got.mark[AR_TYPE], "%s: '%s': type %s is no "
			       "primitive type", ctx, f->name,
			       ht_value_type_name(a.type) ?
			       ht_value_type_name(a.type) : "number");
	if (n > a.length)
		return fail_at(s, at, "%s: '%s' has %zu elements, more than its "
			       "length %llu", ctx, f->name, n,
			       (unsigned long long)a.length);
	if (a.has_hash != (n < a.length))
		return fail_at(s, at, "%s: '%s' %s", ctx, f->name, a.has_hash ?
			       "has a hash but all its elements" :
			       "has a prefix of its elements but no hash");
	s->buf[B_ARRAY_DATA].count = 0;
	elements = s->buf[B_ELEMENTS].data;
	for (size_t i = 0; i < n; i++) {
		if (!(data = push(s, &s->buf[B_ARRAY_DATA], width)))
			return -1;
		if (!ht_value_store(a.type, elements[i], data))
			return fail_at(s, got.mark[AR_ELEMENTS], "%s: '%s': "
				       "element %zu (%lld) is out of range "
				       "for %s", ctx, f->name, i,
				       (long long)elements[i],
				       ht_value_type_name(a.type));
	}
	s->array = (struct ht_array_values){
		.type = a.type,
		.length = a.length,
		.stored = n,
		.hash = a.has_hash ? a.hash : 0,
	};
	return 0;
}

static int read_field(struct yaml_src *s, const char *ctx,
		      const struct field *f, void *base)
{
	uint64_t v;

	switch (f->kind) {
	case K_U64:
	case K_U32:
		if (read_number(s, ctx, f->name,
				f->kind == K_U64 ? UINT64_MAX : UINT32_MAX,
				&v) < 0)
			return -1;
		if (f->kind == K_U64)
			store_u64(base, f->at, v);
		else
			store_u32(base, f->at, (uint32_t)v);
		break;
	case K_NAME:
		return read_name(s, ctx, f, base);
	case K_CONTAINER:
	case K_RESULT:
	case K_REASON:
	case K_FIELD_KIND:
	case K_VALUE_TYPE:
		return read_enum_field(s, ctx, f, base);
	case K_GENERATIONS:
		return read_generations(s, ctx, f, base);
	case K_ARRAY:
		return read_array(s, ctx, f);
	default:
		return read_list(s, ctx, f);
	}
	if (f->has) {
		bool yes = true;

		store(base, f->has, &yes, sizeof(yes));
	}
	return 0;
}

static int find_field(const struct field *fields, size_t n,
		      const yaml_event_t *key)
{
	for (size_t i = 0; i < n; i++)
		if (scalar_is(key, fields[i].name))
			return (int)i;
	return -1;
}

static int read_key(struct yaml_src *s, const char *ctx)
{
	if (s->ev.type != YAML_SCALAR_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: a key must be a name, not %s", ctx,
			       node_kind(&s->ev));
	return 0;
}

/*
 * Reads the mapping of fields that starts at the current parser event into
 * base, as fields describe it. A null instead of the mapping counts as an
 * empty one, so that "- gc_finished:" reads.
 */
static int read_fields(struct yaml_src *s, const char *ctx,
		       const struct field *fields, size_t n, void *base,
		       struct fields_read *got)
{
	memset(got, 0, sizeof(*got));
	got->start = s->ev.start_mark;
	if (is_null(&s->ev))
		goto check_required;
	if (s->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: expected a mapping of fields, not %s", ctx,
			       node_kind(&s->ev));
	for (;;) {
		int i;

		if (pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (read_key(s, ctx) < 0)
			return -1;
		i = find_field(fields, n, &s->ev);
		if (i < 0)
			return fail_at(s, s->ev.start_mark,
				       "%s: unknown field '%.*s'", ctx,
				       NAME_SHOWN, scalar_text(&s->ev));
		if (got->given & (UINT32_C(1) << i))
			return fail_at(s, s->ev.start_mark,
				       "%s: duplicate field '%s'", ctx,
				       fields[i].name);
		got->given |= UINT32_C(1) << i;
		if (pull(s) < 0)
			return -1;
		got->mark[i] = s->ev.start_mark;
		if (is_null(&s->ev)) {
			if (fields[i].required)
				return fail_at(s, s->ev.start_mark,
					       "%s: '%s' must not be null",
					       ctx, fields[i].name);
			continue;
		}
		if (read_field(s, ctx, &fields[i], base) < 0)
			return -1;
		got->present |= UINT32_C(1) << i;
	}
check_required:
	for (size_t i = 0; i < n; i++)
		if (fields[i].required && !(got->present & (UINT32_C(1) << i)))
			return fail_at(s, got->start,
				       "%s: missing field '%s'", ctx,
				       fields[i].name);
	return 0;
}

/* ---- Event tables --------------------------------------------------------- */

#define EV(member) offsetof(struct ht_event, u.member)

static const struct field class_fields[] = {
	{"id", K_U64, REQUIRED, EV(class_.id), 0},
	{"name", K_NAME, REQUIRED, EV(class_.name), 0},
	{"size", K_U64, OPTIONAL, EV(class_.size), EV(class_.has_size)},
};

static const struct field thread_fields[] = {
	{"id", K_U64, REQUIRED, EV(thread.id), 0},
	{"name", K_NAME, REQUIRED, EV(thread.name), 0},
};

static const struct field method_fields[] = {
	{"id", K_U64, REQUIRED, EV(method.id), 0},
	{"name", K_NAME, REQUIRED, EV(method.name), 0},
};

static const struct field object_allocated_fields[] = {
	{"id", K_U64, REQUIRED, EV(object_allocated.id), 0},
	{"class", K_U64, REQUIRED, EV(object_allocated.class_id), 0},
	{"size", K_U64, REQUIRED, EV(object_allocated.size), 0},
};

/* The time of the events that have one (version 3), the last field. */
#define TIME_FIELD                                                      \
	{"time", K_U64, OPTIONAL, offsetof(struct ht_event, time),      \
	 offsetof(struct ht_event, has_time)}

enum { GS_GC, GS_GENERATIONS, GS_REASON, GS_TIME };
static const struct field gc_started_fields[] = {
	{"gc", K_U64, OPTIONAL, EV(gc_started.gc), EV(gc_started.has_gc)},
	{"generations", K_GENERATIONS, REQUIRED, EV(gc_started.generations), 0},
	{"reason", K_REASON, OPTIONAL, EV(gc_started.reason), 0},
	TIME_FIELD,
};

enum { GF_TIME };
static const struct field gc_finished_fields[] = {
	TIME_FIELD,
};

enum { BC_TYPE, BC_ID1, BC_ID2, BC_TIME };
static const struct field begin_container_fields[] = {
	{"type", K_CONTAINER, REQUIRED, EV(begin_container.type), 0},
	{"id1", K_U64, OPTIONAL, EV(begin_container.id1), 0},
	{"id2", K_U64, OPTIONAL, EV(begin_container.id2), 0},
	TIME_FIELD,
};

enum { RR_REFS, RR_FLAGS, RR_KINDS, RR_ROOT_FLAGS, RR_ROOT_IDS, RR_RESULT,
       RR_ROOT_FIELDS };
static const struct field root_references_fields[] = {
	[RR_REFS] = {"refs", K_U64_LIST, REQUIRED, B_REFS, 0},
	[RR_FLAGS] = {"flags", K_U32_LIST, REQUIRED, B_FLAGS, 0},
	[RR_KINDS] = {"kinds", K_KIND_LIST, OPTIONAL, B_KINDS, 0},
	[RR_ROOT_FLAGS] = {"root_flags", K_U8_LIST, OPTIONAL, B_ROOT_FLAGS, 0},
	[RR_ROOT_IDS] = {"root_ids", K_U64_LIST, OPTIONAL, B_ROOT_IDS, 0},
	[RR_RESULT] = {"result", K_RESULT, OPTIONAL, EV(root_references.result), 0},
	[RR_ROOT_FIELDS] = {"root_fields", K_U64_LIST, OPTIONAL, B_FIELD_REFS, 0},
};

enum { OR_ID, OR_CLASS, OR_SIZE, OR_REFS, OR_FLAGS, OR_REF_FLAGS,
       OR_GENERATION, OR_RESULT, OR_REF_FIELDS, OR_VALUE_FIELDS, OR_VALUES,
       OR_ARRAY };
static const struct field object_references_fields[] = {
	[OR_ID] = {"id", K_U64, REQUIRED, EV(object_references.id), 0},
	[OR_CLASS] = {"class", K_U64, REQUIRED, EV(object_references.class_id), 0},
	[OR_SIZE] = {"size", K_U64, REQUIRED, EV(object_references.size), 0},
	[OR_REFS] = {"refs", K_U64_LIST, REQUIRED, B_REFS, 0},
	[OR_FLAGS] = {"flags", K_U32, OPTIONAL, EV(object_references.flags), 0},
	[OR_REF_FLAGS] = {"ref_flags", K_U32_LIST, OPTIONAL, B_FLAGS, 0},
	[OR_GENERATION] = {"generation", K_U32, OPTIONAL,
			   EV(object_references.generation),
			   EV(object_references.has_generation)},
	[OR_RESULT] = {"result", K_RESULT, OPTIONAL,
		       EV(object_references.result), 0},
	[OR_REF_FIELDS] = {"ref_fields", K_U64_LIST, OPTIONAL, B_FIELD_REFS, 0},
	[OR_VALUE_FIELDS] = {"value_fields", K_U64_LIST, OPTIONAL,
			     B_VALUE_FIELDS, 0},
	[OR_VALUES] = {"values", K_VALUE_LIST, OPTIONAL, B_VALUES, 0},
	[OR_ARRAY] = {"array", K_ARRAY, OPTIONAL, 0, 0},
};

enum { FD_ID, FD_CLASS, FD_NAME, FD_KIND, FD_OFFSET, FD_TYPE };
static const struct field field_fields[] = {
	[FD_ID] = {"id", K_U64, REQUIRED, offsetof(struct ht_field, id), 0},
	[FD_CLASS] = {"class", K_U64, REQUIRED,
		      offsetof(struct ht_field, class_id), 0},
	[FD_NAME] = {"name", K_NAME, REQUIRED, offsetof(struct ht_field, name), 0},
	[FD_KIND] = {"kind", K_FIELD_KIND, OPTIONAL,
		     offsetof(struct ht_field, kind), 0},
	[FD_OFFSET] = {"offset", K_U64, OPTIONAL,
		       offsetof(struct ht_field, offset),
		       offsetof(struct ht_field, has_offset)},
	[FD_TYPE] = {"type", K_VALUE_TYPE, OPTIONAL,
		     offsetof(struct ht_field, type), 0},
};

enum { GB_GENERATION, GB_START, GB_LENGTH, GB_RESERVED };
static const struct field range_fields[] = {
	[GB_GENERATION] = {"generation", K_U32, REQUIRED,
			   offsetof(struct ht_generation_range, generation), 0},
	[GB_START] = {"start", K_U64, REQUIRED,
		      offsetof(struct ht_generation_range, start), 0},
	[GB_LENGTH] = {"length", K_U64, REQUIRED,
		       offsetof(struct ht_generation_range, length), 0},
	[GB_RESERVED] = {"reserved", K_U64, OPTIONAL,
			 offsetof(struct ht_generation_range, reserved), 0},
};

static const struct field moved_fields[] = {
	{"old", K_U64, REQUIRED, offsetof(struct ht_moved_block, old_id), 0},
	{"new", K_U64, REQUIRED, offsetof(struct ht_moved_block, new_id), 0},
	{"length", K_U64, REQUIRED, offsetof(struct ht_moved_block, length), 0},
};

static const struct field surviving_fields[] = {
	{"start", K_U64, REQUIRED, offsetof(struct ht_surviving_block, start), 0},
	{"length", K_U64, REQUIRED,
	 offsetof(struct ht_surviving_block, length), 0},
};


_Static_assert(ARRAY_SIZE(object_references_fields) <= MAX_FIELDS &&
	       ARRAY_SIZE(root_references_fields) <= MAX_FIELDS,
	       "struct fields_read has a mark per field");

/* How an event's body reads: a mapping of fields, or a list of blocks
 * each of which is one. */
struct event_spec {
	const struct field *fields;
	size_t n_fields;
	size_t block_size; /* 0: the body is a mapping of fields */
	int (*finish)(struct yaml_src *s, struct ht_event *ev,
		      const struct fields_read *got);
};

/* What a version 1 trace cannot hold: it has no fields. */
static int check_version_2(struct yaml_src *s, const char *ctx,
			   const struct fields_read *got, int field,
			   const char *name)
{
	if (!(got->present & (UINT32_C(1) << field)) || s->header.version >= 2)
		return 0;
	return fail_at(s, got->mark[field], "%s: '%s' needs format version 2 "
		       "(heaptrace: 2)", ctx, name);
}

/* What a version 1 or 2 trace cannot hold: it has no times. */
static int check_version_3(struct yaml_src *s, const struct ht_event *ev,
			   const struct fields_read *got, int field)
{
	if (!(got->present & (UINT32_C(1) << field)) || s->header.version >= 3)
		return 0;
	return fail_at(s, got->mark[field], "%s: 'time' needs format version "
		       "3 (heaptrace: 3)", ht_event_name(ev->type));
}

static int finish_gc_started(struct yaml_src *s, struct ht_event *ev,
			     const struct fields_read *got)
{
	return check_version_3(s, ev, got, GS_TIME);
}

static int finish_gc_finished(struct yaml_src *s, struct ht_event *ev,
			      const struct fields_read *got)
{
	return check_version_3(s, ev, got, GF_TIME);
}

static int finish_begin_container(struct yaml_src *s, struct ht_event *ev,
				  const struct fields_read *got)
{
	return check_version_3(s, ev, got, BC_TIME);
}

static int check_parallel(struct yaml_src *s, const char *ctx,
			  const struct fields_read *got, int field,
			  const char *name, enum buffer_slot slot,
			  size_t count)
{
	if (!(got->present & (UINT32_C(1) << field)))
		return 0;
	if (s->buf[slot].count != count)
		return fail_at(s, got->mark[field],
			       "%s: '%s' has %zu items but 'refs' has %zu", ctx,
			       name, s->buf[slot].count, count);
	return 0;
}

/* A list that was read; never NULL, even when empty and never grown, since
 * for an optional list NULL means absent. */
static const void *list(const struct yaml_src *s, enum buffer_slot slot)
{
	static const uint64_t no_elements[1];

	return s->buf[slot].data ? s->buf[slot].data : no_elements;
}

static const void *list_if(const struct yaml_src *s,
			   const struct fields_read *got, int field,
			   enum buffer_slot slot)
{
	return got->present & (UINT32_C(1) << field) ? list(s, slot) : NULL;
}

static int finish_root_references(struct yaml_src *s, struct ht_event *ev,
				  const struct fields_read *got)
{
	struct ht_ev_root_references *e = &ev->u.root_references;
	const char *ctx = "root_references";

	e->count = s->buf[B_REFS].count;
	if (check_parallel(s, ctx, got, RR_FLAGS, "flags", B_FLAGS, e->count) ||
	    check_parallel(s, ctx, got, RR_KINDS, "kinds", B_KINDS, e->count) ||
	    check_parallel(s, ctx, got, RR_ROOT_FLAGS, "root_flags",
			   B_ROOT_FLAGS, e->count) ||
	    check_parallel(s, ctx, got, RR_ROOT_IDS, "root_ids", B_ROOT_IDS,
			   e->count) ||
	    check_parallel(s, ctx, got, RR_ROOT_FIELDS, "root_fields",
			   B_FIELD_REFS, e->count) ||
	    check_version_2(s, ctx, got, RR_ROOT_FIELDS, "root_fields"))
		return -1;
	e->refs = list(s, B_REFS);
	e->flags = list(s, B_FLAGS);
	e->root_fields = list_if(s, got, RR_ROOT_FIELDS, B_FIELD_REFS);
	e->kinds = list_if(s, got, RR_KINDS, B_KINDS);
	e->root_flags = list_if(s, got, RR_ROOT_FLAGS, B_ROOT_FLAGS);
	e->root_ids = list_if(s, got, RR_ROOT_IDS, B_ROOT_IDS);
	return 0;
}

static bool given(const struct fields_read *got, int field)
{
	return got->present & (UINT32_C(1) << field);
}

/* Values and array (version 3): value_fields and values come together,
 * as long as each other, and not empty (the .ht form has no empty
 * values). */
static int finish_values(struct yaml_src *s,
			 struct ht_ev_object_references *e,
			 const struct fields_read *got)
{
	const char *ctx = "object_references";
	size_t n = s->buf[B_VALUES].count;

	e->n_values = 0;
	e->value_fields = NULL;
	e->values = NULL;
	e->array = NULL;
	for (int f = OR_VALUE_FIELDS; f <= OR_ARRAY; f++)
		if (given(got, f) && s->header.version < 3)
			return fail_at(s, got->mark[f], "%s: '%s' needs format "
				       "version 3 (heaptrace: 3)", ctx,
				       object_references_fields[f].name);
	if (given(got, OR_VALUE_FIELDS) != given(got, OR_VALUES))
		return fail_at(s, got->mark[given(got, OR_VALUES) ? OR_VALUES :
					    OR_VALUE_FIELDS],
			       "%s: 'value_fields' and 'values' come together",
			       ctx);
	if (given(got, OR_VALUES)) {
		if (s->buf[B_VALUE_FIELDS].count != n)
			return fail_at(s, got->mark[OR_VALUES], "%s: 'values' "
				       "has %zu items but 'value_fields' has "
				       "%zu", ctx, n,
				       s->buf[B_VALUE_FIELDS].count);
		if (n == 0)
			return fail_at(s, got->mark[OR_VALUES],
				       "%s: 'values' is empty", ctx);
		e->n_values = n;
		e->value_fields = list(s, B_VALUE_FIELDS);
		e->values = list(s, B_VALUES);
	}
	if (given(got, OR_ARRAY)) {
		s->array.data = list(s, B_ARRAY_DATA);
		e->array = &s->array;
	}
	return 0;
}

static int finish_object_references(struct yaml_src *s, struct ht_event *ev,
				    const struct fields_read *got)
{
	struct ht_ev_object_references *e = &ev->u.object_references;

	e->count = s->buf[B_REFS].count;
	if (check_parallel(s, "object_references", got, OR_REF_FLAGS,
			   "ref_flags", B_FLAGS, e->count) ||
	    check_parallel(s, "object_references", got, OR_REF_FIELDS,
			   "ref_fields", B_FIELD_REFS, e->count) ||
	    check_version_2(s, "object_references", got, OR_REF_FIELDS,
			    "ref_fields"))
		return -1;
	e->refs = list(s, B_REFS);
	e->ref_flags = list_if(s, got, OR_REF_FLAGS, B_FLAGS);
	e->ref_fields = list_if(s, got, OR_REF_FIELDS, B_FIELD_REFS);
	return finish_values(s, e, got);
}

static int finish_generation_bounds(struct yaml_src *s, struct ht_event *ev,
				    const struct fields_read *got)
{
	(void)got;
	ev->u.generation_bounds.count = s->buf[B_BLOCKS].count;
	ev->u.generation_bounds.ranges = list(s, B_BLOCKS);
	return 0;
}

static int finish_moved_references(struct yaml_src *s, struct ht_event *ev,
				   const struct fields_read *got)
{
	(void)got;
	ev->u.moved_references.count = s->buf[B_BLOCKS].count;
	ev->u.moved_references.blocks = list(s, B_BLOCKS);
	return 0;
}

static int finish_surviving_references(struct yaml_src *s,
				       struct ht_event *ev,
				       const struct fields_read *got)
{
	(void)got;
	ev->u.surviving_references.count = s->buf[B_BLOCKS].count;
	ev->u.surviving_references.blocks = list(s, B_BLOCKS);
	return 0;
}

/* read_block left each field's name as its offset in B_NAMES plus one,
 * as that buffer may have moved since: now that it is whole, they point. */
static int finish_fields(struct yaml_src *s, struct ht_event *ev,
			 const struct fields_read *got)
{
	struct ht_field *f = s->buf[B_BLOCKS].data;
	size_t n = s->buf[B_BLOCKS].count;

	(void)got;
	for (size_t i = 0; i < n; i++)
		f[i].name = (const char *)s->buf[B_NAMES].data +
			    ((uintptr_t)f[i].name - 1);
	ev->u.fields.count = n;
	ev->u.fields.fields = list(s, B_BLOCKS);
	return 0;
}

#define FIELDS(t) t, ARRAY_SIZE(t)

static const struct event_spec event_specs[HT_EV_LAST + 1] = {
	[HT_EV_CLASS] = {FIELDS(class_fields), 0, NULL},
	[HT_EV_THREAD] = {FIELDS(thread_fields), 0, NULL},
	[HT_EV_METHOD] = {FIELDS(method_fields), 0, NULL},
	[HT_EV_OBJECT_ALLOCATED] = {FIELDS(object_allocated_fields), 0, NULL},
	[HT_EV_GC_STARTED] = {FIELDS(gc_started_fields), 0, finish_gc_started},
	[HT_EV_GENERATION_BOUNDS] = {FIELDS(range_fields),
				     sizeof(struct ht_generation_range),
				     finish_generation_bounds},
	[HT_EV_MOVED_REFERENCES] = {FIELDS(moved_fields),
				    sizeof(struct ht_moved_block),
				    finish_moved_references},
	[HT_EV_SURVIVING_REFERENCES] = {FIELDS(surviving_fields),
					sizeof(struct ht_surviving_block),
					finish_surviving_references},
	[HT_EV_GC_FINISHED] = {FIELDS(gc_finished_fields), 0,
			       finish_gc_finished},
	[HT_EV_BEGIN_CONTAINER] = {FIELDS(begin_container_fields), 0,
				   finish_begin_container},
	[HT_EV_ROOT_REFERENCES] = {FIELDS(root_references_fields), 0,
				   finish_root_references},
	[HT_EV_OBJECT_REFERENCES] = {FIELDS(object_references_fields), 0,
				     finish_object_references},
	[HT_EV_FIELDS] = {FIELDS(field_fields), sizeof(struct ht_field),
			  finish_fields},
};

/* ---- Events --------------------------------------------------------------- */

/* The name of a field, which read_name left in the buffer every name
 * shares, goes after the others of its event; the field keeps its offset
 * there plus one until finish_fields. */
static int keep_field_name(struct yaml_src *s, struct ht_field *f)
{
	struct buffer *names = &s->buf[B_NAMES];
	size_t at = names->count, len = strlen(f->name) + 1;

	if (reserve(s, names, at + len) < 0)
		return -1;
	memcpy((char *)names->data + at, f->name, len);
	names->count = at + len;
	f->name = (const char *)(uintptr_t)(at + 1);
	return 0;
}

/* One block of a block event: read into a zeroed element on its own, then
 * appended, so that a failure leaves no half-read element behind. */
static int read_block(struct yaml_src *s, const char *ctx,
		      const struct event_spec *spec, enum ht_event_type type)
{
	union {
		struct ht_generation_range range;
		struct ht_moved_block moved;
		struct ht_surviving_block surviving;
		struct ht_field field;
	} block;
	struct fields_read got;
	void *p;

	memset(&block, 0, sizeof(block));
	if (s->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: each block must be a mapping, not %s", ctx,
			       node_kind(&s->ev));
	if (read_fields(s, ctx, spec->fields, spec->n_fields, &block, &got) < 0)
		return -1;
	if (type == HT_EV_GENERATION_BOUNDS &&
	    !(got.present & (UINT32_C(1) << GB_RESERVED)))
		block.range.reserved = block.range.length;
	if (type == HT_EV_FIELDS && keep_field_name(s, &block.field) < 0)
		return -1;
	p = push(s, &s->buf[B_BLOCKS], spec->block_size);
	if (!p)
		return -1;
	memcpy(p, &block, spec->block_size);
	return 0;
}

/* The body of a block event: a list of blocks, or null for none. */
static int read_blocks(struct yaml_src *s, const char *ctx,
		       const struct event_spec *spec, enum ht_event_type type)
{
	if (is_null(&s->ev))
		return 0;
	if (s->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: expected a list of blocks, not %s", ctx,
			       node_kind(&s->ev));
	for (;;) {
		if (pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		if (read_block(s, ctx, spec, type) < 0)
			return -1;
	}
}

static int read_body(struct yaml_src *s, enum ht_event_type type,
		     struct ht_event *ev)
{
	const struct event_spec *spec = &event_specs[type];
	const char *ctx = ht_event_name(type);
	struct fields_read got;

	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	for (int i = 0; i < B_COUNT_; i++)
		s->buf[i].count = 0;
	if (spec->block_size) {
		if (read_blocks(s, ctx, spec, type) < 0)
			return -1;
		memset(&got, 0, sizeof(got));
	} else if (read_fields(s, ctx, spec->fields, spec->n_fields, ev,
			       &got) < 0) {
		return -1;
	}
	return spec->finish ? spec->finish(s, ev, &got) : 0;
}

static int find_event_type(const yaml_event_t *key)
{
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		if (scalar_is(key, ht_event_name((enum ht_event_type)t)))
			return t;
	return -1;
}

/* One item of the events list: a mapping of one key, the event's name, to
 * its body. The current parser event is the item's start. */
static int read_event(struct yaml_src *s, struct ht_event *ev)
{
	yaml_mark_t item = s->ev.start_mark;
	int type;

	if (s->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(s, item,
			       "an event must be a mapping {name: fields}, not %s",
			       node_kind(&s->ev));
	if (pull(s) < 0)
		return -1;
	if (s->ev.type == YAML_MAPPING_END_EVENT)
		return fail_at(s, item, "an event must name its type, as in "
			       "{gc_finished: {}}");
	if (read_key(s, "event") < 0)
		return -1;
	type = find_event_type(&s->ev);
	if (type < 0)
		return fail_at(s, s->ev.start_mark, "unknown event '%.*s'",
			       NAME_SHOWN, scalar_text(&s->ev));
	if (type == HT_EV_FIELDS && s->header.version < 2)
		return fail_at(s, s->ev.start_mark, "fields: needs format "
			       "version 2 (heaptrace: 2)");
	if (pull(s) < 0 || read_body(s, (enum ht_event_type)type, ev) < 0 ||
	    pull(s) < 0)
		return -1;
	if (s->ev.type != YAML_MAPPING_END_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "%s: one event per list item; indent its fields "
			       "under the event's name",
			       ht_event_name((enum ht_event_type)type));
	s->pos.event_index = s->events;
	s->pos.offset = item.index;
	s->pos.chunk_offset = 0;
	s->pos.line = (unsigned)item.line + 1;
	s->pos.column = (unsigned)item.column + 1;
	return 0;
}

/* After the events list: the end of the top mapping, of the document and
 * of the stream, and nothing else. */
static int read_end(struct yaml_src *s)
{
	if (pull(s) < 0)
		return -1;
	if (s->ev.type == YAML_SCALAR_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "'%.*s' after 'events': 'events' must be the last key",
			       NAME_SHOWN, scalar_text(&s->ev));
	if (s->ev.type != YAML_MAPPING_END_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "expected the end of the trace after 'events', not %s",
			       node_kind(&s->ev));
	if (pull(s) < 0)
		return -1;
	/* DOCUMENT_END always follows a document's top node. */
	if (pull(s) < 0)
		return -1;
	if (s->ev.type != YAML_STREAM_END_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "a trace is one YAML document; a second one begins here");
	return 0;
}

/* ---- Header --------------------------------------------------------------- */

enum header_key {
	H_HEAPTRACE,
	H_RUNTIME,
	H_RUNTIME_VERSION,
	H_POINTER_SIZE,
	H_REPORTS_SURVIVORS,
	H_COMMAND_LINE,
	H_START_TIME,
	H_METADATA,
	H_EVENTS,
	H_COUNT_
};

static const char *const header_keys[H_COUNT_] = {
	[H_HEAPTRACE] = "heaptrace",
	[H_RUNTIME] = "runtime",
	[H_RUNTIME_VERSION] = "runtime_version",
	[H_POINTER_SIZE] = "pointer_size",
	[H_REPORTS_SURVIVORS] = "reports_survivors",
	[H_COMMAND_LINE] = "command_line",
	[H_START_TIME] = "start_time",
	[H_METADATA] = "metadata",
	[H_EVENTS] = "events",
};

/* A header string; null leaves it absent. */
static int read_header_string(struct yaml_src *s, const char *key,
			      char **out)
{
	const yaml_event_t *e = &s->ev;

	if (is_null(e))
		return 0;
	if (e->type != YAML_SCALAR_EVENT)
		return fail_at(s, e->start_mark,
			       "header: '%s' must be a string, not %s", key,
			       node_kind(e));
	if (has_nul(e))
		return fail_at(s, e->start_mark,
			       "header: '%s' contains a NUL character", key);
	*out = copy_scalar(s);
	return *out ? 0 : -1;
}

static int read_version(struct yaml_src *s)
{
	uint64_t v;

	if (read_number(s, "header", "heaptrace", UINT64_MAX, &v) < 0)
		return -1;
	if (v < 1 || v > HT_FORMAT_VERSION) {
		fail_at(s, s->ev.start_mark,
			"unsupported heaptrace version %llu (this reader knows 1 to %d)",
			(unsigned long long)v, HT_FORMAT_VERSION);
		s->error.code = HT_E_FORMAT;
		return -1;
	}
	s->header.version = (uint32_t)v;
	return 0;
}

static int read_pointer_size(struct yaml_src *s)
{
	uint64_t v;

	if (read_number(s, "header", "pointer_size", UINT64_MAX, &v) < 0)
		return -1;
	if (v != 4 && v != 8)
		return fail_at(s, s->ev.start_mark,
			       "header: 'pointer_size' must be 4 or 8, not %llu",
			       (unsigned long long)v);
	s->header.pointer_size = (uint32_t)v;
	return 0;
}

static int read_bool(struct yaml_src *s, const char *key, bool *out)
{
	const yaml_event_t *e = &s->ev;

	if (e->type == YAML_SCALAR_EVENT && is_plain(e)) {
		if (scalar_is(e, "true") || scalar_is(e, "True") ||
		    scalar_is(e, "TRUE")) {
			*out = true;
			return 0;
		}
		if (scalar_is(e, "false") || scalar_is(e, "False") ||
		    scalar_is(e, "FALSE")) {
			*out = false;
			return 0;
		}
	}
	return fail_at(s, e->start_mark, "header: '%s' must be true or false",
		       key);
}

/* Seconds since the epoch: the one number that may be negative. */
static int read_start_time(struct yaml_src *s)
{
	const yaml_event_t *e = &s->ev;
	enum number_status st;
	uint64_t v;

	s->header.has_start_time = true;
	if (e->type != YAML_SCALAR_EVENT || !is_plain(e) ||
	    scalar_length(e) < 2 || scalar_text(e)[0] != '-') {
		if (read_number(s, "header", "start_time", INT64_MAX, &v) < 0)
			return -1;
		s->header.start_time = (int64_t)v;
		return 0;
	}
	st = parse_number(scalar_text(e) + 1, scalar_length(e) - 1, &v);
	if (st == NUM_INVALID)
		return fail_at(s, e->start_mark,
			       "header: 'start_time': invalid number '%.*s'",
			       NAME_SHOWN, scalar_text(e));
	if (st == NUM_TOO_BIG || v > (uint64_t)INT64_MAX + 1)
		return fail_at(s, e->start_mark,
			       "header: 'start_time': %.*s is out of range",
			       NAME_SHOWN, scalar_text(e));
	/* -2^63 has no positive twin to negate */
	s->header.start_time = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN
							    : -(int64_t)v;
	return 0;
}

static int read_metadata_entry(struct yaml_src *s)
{
	struct meta_entry *m;

	if (read_key(s, "metadata") < 0)
		return -1;
	if (has_nul(&s->ev))
		return fail_at(s, s->ev.start_mark,
			       "metadata: key contains a NUL character");
	m = push(s, &s->meta, sizeof(*m));
	if (!m)
		return -1;
	m->mark = s->ev.start_mark;
	m->value = NULL;
	m->key = copy_scalar(s);
	if (!m->key)
		return -1;
	if (pull(s) < 0)
		return -1;
	if (s->ev.type != YAML_SCALAR_EVENT || is_null(&s->ev))
		return fail_at(s, s->ev.start_mark,
			       "metadata: the value of '%.*s' must be a string, not %s",
			       NAME_SHOWN, m->key,
			       is_null(&s->ev) ? "null" : node_kind(&s->ev));
	if (has_nul(&s->ev))
		return fail_at(s, s->ev.start_mark,
			       "metadata: the value of '%.*s' contains a NUL character",
			       NAME_SHOWN, m->key);
	m->value = copy_scalar(s);
	return m->value ? 0 : -1;
}

static int compare_meta(const void *a, const void *b)
{
	const struct meta_entry *x = *(const struct meta_entry *const *)a;
	const struct meta_entry *y = *(const struct meta_entry *const *)b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x < y ? -1 : x > y;
}

/* Sorted rather than compared pairwise, so that a header with very many
 * keys costs n log n; the duplicate reported is the first one in the
 * file that repeats an earlier key. */
static int check_metadata_duplicates(struct yaml_src *s)
{
	const struct meta_entry *entries = s->meta.data, **sorted, *dup = NULL;
	size_t n = s->meta.count;

	if (n < 2)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return fail_nomem(s);
	for (size_t i = 0; i < n; i++)
		sorted[i] = &entries[i];
	qsort(sorted, n, sizeof(*sorted), compare_meta);
	for (size_t i = 1; i < n; i++)
		if (strcmp(sorted[i - 1]->key, sorted[i]->key) == 0 &&
		    (!dup || sorted[i] < dup))
			dup = sorted[i];
	free(sorted);
	if (dup)
		return fail_at(s, dup->mark,
			       "metadata: duplicate key '%.*s'", NAME_SHOWN,
			       dup->key);
	return 0;
}

static int read_metadata(struct yaml_src *s)
{
	const struct meta_entry *entries;
	size_t n;

	if (is_null(&s->ev))
		return 0;
	if (s->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "header: 'metadata' must be a mapping, not %s",
			       node_kind(&s->ev));
	for (;;) {
		if (pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (read_metadata_entry(s) < 0)
			return -1;
	}
	if (check_metadata_duplicates(s) < 0)
		return -1;
	entries = s->meta.data;
	n = s->meta.count;
	if (n == 0)
		return 0;
	s->metadata = malloc(n * sizeof(*s->metadata));
	if (!s->metadata)
		return fail_nomem(s);
	for (size_t i = 0; i < n; i++) {
		s->metadata[i].key = entries[i].key;
		s->metadata[i].value = entries[i].value;
	}
	s->header.n_metadata = n;
	s->header.metadata = s->metadata;
	return 0;
}

static int read_events_start(struct yaml_src *s, uint32_t given,
			     yaml_mark_t key)
{
	if (!(given & (1u << H_HEAPTRACE)))
		return fail_at(s, key,
			       "the header lacks 'heaptrace: 1' before 'events'");
	if (pull(s) < 0)
		return -1;
	if (is_null(&s->ev)) {
		s->state = ST_NULL_EVENTS;
		return 0;
	}
	if (s->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "'events' must be a list, not %s",
			       node_kind(&s->ev));
	s->state = ST_EVENTS;
	return 0;
}

static int read_header_value(struct yaml_src *s, enum header_key k)
{
	const char *key = header_keys[k];

	switch (k) {
	case H_HEAPTRACE:
		return read_version(s);
	case H_RUNTIME:
		return read_header_string(s, key, &s->runtime);
	case H_RUNTIME_VERSION:
		return read_header_string(s, key, &s->runtime_version);
	case H_POINTER_SIZE:
		return read_pointer_size(s);
	case H_REPORTS_SURVIVORS:
		return read_bool(s, key, &s->header.reports_survivors);
	case H_COMMAND_LINE:
		return read_header_string(s, key, &s->command_line);
	case H_START_TIME:
		return read_start_time(s);
	case H_METADATA:
		return read_metadata(s);
	default:
		return 0;
	}
}

static int find_header_key(const yaml_event_t *key)
{
	for (int k = 0; k < H_COUNT_; k++)
		if (scalar_is(key, header_keys[k]))
			return k;
	return -1;
}

/* The document up to and including the start of the events list. */
static int read_header(struct yaml_src *s)
{
	uint32_t given = 0;

	if (pull(s) < 0 || pull(s) < 0) /* the stream start, then ... */
		return -1;
	if (s->ev.type != YAML_DOCUMENT_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "empty input: not a heaptrace YAML trace");
	if (pull(s) < 0)
		return -1;
	if (s->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "a trace must be a mapping (heaptrace: 1 ... events: [...]), not %s",
			       node_kind(&s->ev));
	for (;;) {
		yaml_mark_t mark;
		int k;

		if (pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_MAPPING_END_EVENT)
			return fail_at(s, s->ev.start_mark,
				       "the trace has no 'events' list");
		if (read_key(s, "header") < 0)
			return -1;
		mark = s->ev.start_mark;
		k = find_header_key(&s->ev);
		if (k < 0)
			return fail_at(s, mark, "unknown header key '%.*s'",
				       NAME_SHOWN, scalar_text(&s->ev));
		if (given & (1u << k))
			return fail_at(s, mark, "duplicate header key '%s'",
				       header_keys[k]);
		given |= 1u << k;
		if (k == H_EVENTS)
			return read_events_start(s, given, mark);
		if (pull(s) < 0 || read_header_value(s, (enum header_key)k) < 0)
			return -1;
	}
}

/* ---- Source operations ---------------------------------------------------- */

static int yaml_next(void *self, struct ht_event *ev, struct ht_error *err)
{
	struct yaml_src *s = self;

	switch (s->state) {
	case ST_DONE:
		return 0;
	case ST_FAILED:
		goto failed;
	case ST_NULL_EVENTS:
		if (read_end(s) < 0)
			goto fail;
		if (s->bad)
			goto bad_byte;
		s->state = ST_DONE;
		return 0;
	case ST_EVENTS:
		break;
	}
	if (pull(s) < 0)
		goto fail;
	if (s->ev.type == YAML_SEQUENCE_END_EVENT) {
		if (read_end(s) < 0)
			goto fail;
		if (s->bad)
			goto bad_byte;
		s->state = ST_DONE;
		return 0;
	}
	if (read_event(s, ev) < 0)
		goto fail;
	/* An event whose text runs to the bad byte is not all there. */
	if (reaches_bad_byte(s))
		goto bad_byte;
	s->events++;
	return 1;
bad_byte:
	fail_bad_byte(s);
	goto failed_now;
fail:
	blame_bad_byte(s);
failed_now:
	s->state = ST_FAILED;
failed:
	if (err)
		*err = s->error;
	return -1;
}

static struct ht_position yaml_position(const void *self)
{
	const struct yaml_src *s = self;

	return s->pos;
}

static void free_src(struct yaml_src *s)
{
	if (s->have_ev)
		yaml_event_delete(&s->ev);
	yaml_parser_delete(&s->parser);
	for (int i = 0; i < B_COUNT_; i++)
		free(s->buf[i].data);
	mem_budget_release(s->charged);
	for (size_t i = 0; i < s->meta.count; i++) {
		struct meta_entry *m = (struct meta_entry *)s->meta.data + i;

		free(m->key);
		free(m->value);
	}
	free(s->meta.data);
	free(s->metadata);
	free(s->runtime);
	free(s->runtime_version);
	free(s->command_line);
	free(s->name.data);
	free(s->path);
	/* The reader's caller owns standard input. */
	if (s->f && s->f != stdin)
		fclose(s->f);
	free(s);
}

static void yaml_close(void *self)
{
	if (self)
		free_src(self);
}

static const struct ht_source_ops yaml_ops = {
	.format = "yaml",
	.next = yaml_next,
	.position = yaml_position,
	.loss = NULL,
	.index = NULL,
	.close = yaml_close,
};

/* Whether YAML allows code point v in a document: its printable set (YAML
 * 1.1, 5.1), which libyaml checks. */
static bool yaml_printable(uint32_t v)
{
	return v == 0x09 || v == 0x0A || v == 0x0D ||
	       (v >= 0x20 && v <= 0x7E) || v == 0x85 ||
	       (v >= 0xA0 && v <= 0xD7FF) || (v >= 0xE000 && v <= 0xFFFD) ||
	       (v >= 0x10000 && v <= 0x10FFFF);
}

/*
 * Why libyaml refuses the bytes at p that utf8_next found ill-formed, in
 * its words (reader.c), and where (*at: bytes into p) and the value it
 * shows (-1: none); or 0 when the sequence goes on past avail and more
 * bytes are to come. libyaml sizes a sequence by its first byte alone,
 * then checks, in this order, that it is whole, its trailing bytes, its
 * length, and its code point.
 */
static int libyaml_problem(const unsigned char *p, size_t avail, bool at_end,
			   const char **problem, size_t *at, long *value)
{
	unsigned char c = p[0];
	size_t width = c < 0x80 ? 1 : c < 0xC0 ? 0 : c < 0xE0 ? 2
		       : c < 0xF0 ? 3 : c < 0xF8 ? 4 : 0;
	uint32_t v = c & (0x7Fu >> width);

	if (!width) {
		*problem = "invalid leading UTF-8 octet";
		*value = c;
		return -1;
	}
	if (width > avail) {
		if (!at_end)
			return 0;
		*problem = "incomplete UTF-8 octet sequence";
		return -1;
	}
	for (size_t k = 1; k < width; k++) {
		if ((p[k] & 0xC0) != 0x80) {
			*problem = "invalid trailing UTF-8 octet";
			*at = k;
			*value = p[k];
			return -1;
		}
		v = v << 6 | (p[k] & 0x3Fu);
	}
	if ((width == 2 && v < 0x80) || (width == 3 && v < 0x800) ||
	    (width == 4 && v < 0x10000)) {
		*problem = "invalid length of a UTF-8 sequence";
		return -1;
	}
	/* what is left: a surrogate, or past U+10FFFF */
	*problem = "invalid Unicode character";
	*value = v;
	return -1;
}

/* One character of UTF-8 at p (avail bytes there, more to come unless
 * at_end), read by utf8_next: its length, 0 when more bytes are needed,
 * or -1 with the problem in libyaml's words, where (*at: bytes into p)
 * and its value (-1: none). libyaml would refuse the same bytes; it only
 * says so too early (the file's comment). */
static int utf8_char(const unsigned char *p, size_t avail, bool at_end,
		     const char **problem, size_t *at, long *value)
{
	uint32_t cp;
	size_t w = utf8_next(p, avail, &cp);

	*problem = NULL;
	*at = 0;
	*value = -1;
	if (cp == UTF8_BAD)
		return libyaml_problem(p, avail, at_end, problem, at, value);
	if (!yaml_printable(cp)) {
		*problem = "control characters are not allowed";
		*value = cp;
		return -1;
	}
	return (int)w;
}

/* The bytes of buf[0, n) that libyaml may have: whole valid characters.
 * An incomplete one at the end is carried to the next read; at a bad byte
 * the rest is dropped, and libyaml meets the end of its input there. */
static size_t check_utf8(struct yaml_src *s, unsigned char *buf, size_t n,
			 bool at_end)
{
	size_t i = 0, at;
	const char *problem;
	long value;
	int w;

	while (i < n) {
		w = utf8_char(buf + i, n - i, at_end, &problem, &at, &value);
		if (w == 0) {
			s->n_carry = n - i;
			memcpy(s->carry, buf + i, s->n_carry);
			break;
		}
		if (w < 0) {
			s->bad = true;
			s->bad_offset = s->offset + i + at;
			s->cut = s->chars;
			s->bad_problem = problem;
			s->bad_value = value;
			break;
		}
		/* libyaml skips a byte order mark before its first mark */
		if (!(s->offset + i == 0 && w == 3 &&
		      memcmp(buf, "\xef\xbb\xbf", 3) == 0))
			s->chars++;
		i += (size_t)w;
	}
	s->offset += i;
	return i;
}

/* fread rather than yaml_parser_set_input_file: keeps errno, so that a
 * read error is reported as one and not as a YAML problem. The text is
 * checked as UTF-8 on its way (check_utf8). */
static int read_input(void *data, unsigned char *buffer, size_t size,
		      size_t *size_read)
{
	struct yaml_src *s = data;
	size_t n, have;

	*size_read = 0;
	if (s->bad)
		return 1;
	/* libyaml asks for the free part of its 16 KiB buffer, never less
	 * than what a carried sequence needs. */
	if (size <= s->n_carry)
		return 1;
	have = s->n_carry;
	memcpy(buffer, s->carry, have);
	s->n_carry = 0;
	errno = 0;
	n = fread(buffer + have, 1, size - have, s->f);
	if (n == 0 && ferror(s->f)) {
		s->read_errno = errno ? errno : EIO;
		return 0;
	}
	if (!s->started) {
		s->started = true;
		/* UTF-16, which libyaml reads by its byte order mark */
		s->no_check = n >= 2 && ((buffer[0] == 0xFE && buffer[1] == 0xFF) ||
					 (buffer[0] == 0xFF && buffer[1] == 0xFE));
	}
	if (s->no_check) {
		*size_read = n;
		return 1;
	}
	*size_read = check_utf8(s, buffer, have + n, n == 0 || feof(s->f));
	/* Nothing whole yet, but more to come: libyaml takes 0 bytes for the
	 * end of its input, so read on. */
	if (*size_read == 0 && !s->bad && s->n_carry && !feof(s->f))
		return read_input(data, buffer, size, size_read);
	return 1;
}

int yaml_source_open(struct ht_reader *r, FILE *f, const char *path,
		     struct ht_error *err)
{
	struct yaml_src *s;

	if (!path)
		path = "-";
	if (!f) {
		err_plain(err, HT_E_INVALID, path, "no input");
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->path = strdup(path);
	if (!s || !s->path || !yaml_parser_initialize(&s->parser)) {
		err_sys(err, ENOMEM, path, "cannot read YAML");
		if (s)
			free(s->path);
		free(s);
		if (f != stdin)
			fclose(f);
		return -1;
	}
	s->f = f;
	yaml_parser_set_input(&s->parser, read_input, s);
	s->header.pointer_size = 8;
	if (read_header(s) < 0) {
		blame_bad_byte(s);
		if (err)
			*err = s->error;
		free_src(s);
		return -1;
	}
	s->header.runtime = s->runtime;
	s->header.runtime_version = s->runtime_version;
	s->header.command_line = s->command_line;
	r->ops = &yaml_ops;
	r->self = s;
	r->header = &s->header;
	return 0;
}
