/*
 * yaml_fields.c - what the YAML source (yaml_read.c) reads its events
 * from: libyaml's parser events pulled one at a time, the errors they
 * make, numbers, and the mapping of fields of an event or a block read
 * into its struct as a table of fields describes it, strictly: an
 * unknown, duplicate, missing or ill-typed field names the event, the
 * field and the line and column.
 */
#include "lib/read/yaml_read_internal.h"

/* ---- Errors --------------------------------------------------------------- */

int yaml_fail_nomem(struct yaml_src *s)
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
		return yaml_fail_nomem(s);
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

/* ---- Pulling parser events ------------------------------------------------ */

int yaml_pull(struct yaml_src *s)
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

/*
 * Decimal, or hex after 0x or 0X. No sign, no underscores, and no leading
 * zero in decimal: YAML 1.1 reads 010 as octal, so it is refused rather
 * than read in a way that some other tool would not.
 */
enum number_status yaml_parse_number(const char *p, size_t n, uint64_t *out)
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
int yaml_read_number(struct yaml_src *s, const char *ctx, const char *what,
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
	st = yaml_parse_number(scalar_text(e), scalar_length(e), out);
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
		return yaml_read_number(s, ctx, what, UINT64_MAX, out);
	st = yaml_parse_number(scalar_text(e) + 1, scalar_length(e) - 1,
			       &magnitude);
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
	struct buffer *b = f->kind == K_FILE ? &s->file : &s->name;

	if (reserve(s, b, scalar_length(e) + 1) < 0)
		return -1;
	memcpy(b->data, scalar_text(e), scalar_length(e) + 1);
	name = b->data;
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
		if (yaml_read_number(s, ctx, field, t->max_number, &n) < 0)
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
		if (yaml_pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (yaml_read_number(s, ctx, f->name, HT_GEN_MAX, &g) < 0)
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
		if (yaml_pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		switch (f->kind) {
		case K_U64_LIST:
			if (yaml_read_number(s, ctx, f->name, UINT64_MAX,
					     &v) < 0 ||
			    !(p = push(s, &s->buf[slot], sizeof(uint64_t))))
				return -1;
			memcpy(p, &v, sizeof(uint64_t));
			break;
		case K_U32_LIST:
			if (yaml_read_number(s, ctx, f->name, UINT32_MAX,
					     &v) < 0 ||
			    !(p = push(s, &s->buf[slot], sizeof(uint32_t))))
				return -1;
			store_u32(p, 0, (uint32_t)v);
			break;
		case K_U8_LIST:
			if (yaml_read_number(s, ctx, f->name, UINT8_MAX,
					     &v) < 0 ||
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
	if (yaml_read_fields(s, inner, array_fields,
			     ARRAY_SIZE(array_fields), &a, &got) < 0)
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
		if (yaml_read_number(s, ctx, f->name,
				     f->kind == K_U64 ? UINT64_MAX : UINT32_MAX,
				     &v) < 0)
			return -1;
		if (f->kind == K_U64)
			store_u64(base, f->at, v);
		else
			store_u32(base, f->at, (uint32_t)v);
		break;
	case K_NAME:
	case K_FILE:
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

int yaml_read_key(struct yaml_src *s, const char *ctx)
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
int yaml_read_fields(struct yaml_src *s, const char *ctx,
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

		if (yaml_pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (yaml_read_key(s, ctx) < 0)
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
		if (yaml_pull(s) < 0)
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
