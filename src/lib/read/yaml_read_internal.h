/*
 * yaml_read_internal.h - what the pieces of the YAML source share: the
 * source's state, the fields an event is read by, and the helpers every
 * piece calls on each parser event or scalar (static inline: they are
 * the reader's inner loop). yaml_read.c is the source itself (the header,
 * the operations, the input checked as UTF-8), yaml_fields.c the parser
 * events, numbers and fields it reads them from, yaml_events.c the table
 * of events and one event read; yaml_read.c says how the reader works.
 *
 * This header is not an API; it may change from one release to the next.
 */
#ifndef HT_YAML_READ_INTERNAL_H
#define HT_YAML_READ_INTERNAL_H

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

/* This struct is not an API; it may change from one release to the next. */
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
	struct buffer file; /* a method's file (version 4) */
	struct ht_array_values array; /* an object's, as its event */
	struct buffer buf[B_COUNT_];
	uint64_t charged;   /* the buffers' bytes, to the memory budget */

	uint64_t events; /* delivered so far */
	struct ht_position pos;
};

/* ---- Errors --------------------------------------------------------------- */

#define NAME_SHOWN 64 /* longest key quoted in a message */

HT_PRINTF(3, 4)
static inline int fail_at(struct yaml_src *s, yaml_mark_t m,
			  const char *fmt, ...)
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

/* Out of memory, or of the memory budget (yaml_fields.c). */
int yaml_fail_nomem(struct yaml_src *s);

/* ---- Pulling parser events ------------------------------------------------ */

static inline const char *node_kind(const yaml_event_t *e)
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

static inline const char *scalar_text(const yaml_event_t *e)
{
	return (const char *)e->data.scalar.value;
}

static inline size_t scalar_length(const yaml_event_t *e)
{
	return e->data.scalar.length;
}

static inline bool is_plain(const yaml_event_t *e)
{
	return e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static inline bool scalar_is(const yaml_event_t *e, const char *word)
{
	return scalar_length(e) == strlen(word) &&
	       memcmp(scalar_text(e), word, scalar_length(e)) == 0;
}

/* "", "~" and "null" unquoted: YAML's null. */
static inline bool is_null(const yaml_event_t *e)
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
static inline bool has_nul(const yaml_event_t *e)
{
	return strlen(scalar_text(e)) != scalar_length(e);
}

/* ---- Buffers -------------------------------------------------------------- */

/* Buffers grow by doubling (util/alloc.h) and never shrink: after the
 * largest event, reading allocates nothing but what libyaml does. */
static inline int reserve(struct yaml_src *s, struct buffer *b, size_t need)
{
	size_t cap, more;

	if (need <= b->cap)
		return 0;
	/* charged to the memory budget before it grows: an event's lists
	 * cost some 4 bytes of memory per byte of text */
	cap = grown_capacity(b->cap, need, 1);
	more = cap - b->cap;
	if (cap == 0 || mem_budget_charge(more) < 0)
		return yaml_fail_nomem(s);
	if (grow_array(&b->data, &b->cap, need, 1) < 0) {
		mem_budget_release(more);
		return yaml_fail_nomem(s);
	}
	s->charged += more;
	return 0;
}

/* Appends one element of elem bytes to b and returns it. */
static inline void *push(struct yaml_src *s, struct buffer *b, size_t elem)
{
	char *p;

	if (b->count >= SIZE_MAX / elem - 1) {
		yaml_fail_nomem(s);
		return NULL;
	}
	if (reserve(s, b, (b->count + 1) * elem) < 0)
		return NULL;
	p = (char *)b->data + b->count * elem;
	b->count++;
	return p;
}

/* ---- Numbers and fields -------------------------------------------------- */

enum number_status { NUM_OK, NUM_INVALID, NUM_TOO_BIG };

enum field_kind {
	K_U64,         /* ids, sizes, lengths */
	K_U32,         /* flags, generation */
	K_NAME,        /* the event's string */
	K_FILE,        /* a method's file, the one other string (version 4) */
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

#define REQUIRED true
#define OPTIONAL false

/* ---- Given by one piece to the others ----------------------------------- */

/* yaml_fields.c */
int yaml_pull(struct yaml_src *s);
enum number_status yaml_parse_number(const char *p, size_t n, uint64_t *out);
int yaml_read_number(struct yaml_src *s, const char *ctx, const char *what,
		     uint64_t max, uint64_t *out);
int yaml_read_key(struct yaml_src *s, const char *ctx);
int yaml_read_fields(struct yaml_src *s, const char *ctx,
		     const struct field *fields, size_t n, void *base,
		     struct fields_read *got);

/* yaml_events.c */
int yaml_read_event(struct yaml_src *s, struct ht_event *ev);
int yaml_read_end(struct yaml_src *s);

#endif
