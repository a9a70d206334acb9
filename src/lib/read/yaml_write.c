/*
 * yaml_write.c - the canonical YAML text form of a trace, as `heaptrace cat`
 * prints it (heaptrace(5), doc/design.md section 5). The layout is a contract
 * that CI diffs and that yaml_read.c reads back: one line per event, flow
 * style inside it, keys in a fixed order, ids in hex, and a string quoted
 * only when YAML could read it as anything but that string.
 *
 * Output goes through a buffer of the writer's own: a trace has millions of
 * events and a few refs each, and formatting numbers by hand into a buffer
 * is several times faster than one fprintf per number.
 */
#include "lib/read/textform.h"

#include "lib/common/error.h"
#include "util/utf8.h"
#include "util/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define OUT_BUFFER_SIZE 65536

struct yaml_writer {
	FILE *out;
	char *name;      /* for messages */
	uint64_t events; /* written so far */
	int io_errno;    /* first write error; later output is dropped */
	size_t used;
	char buf[OUT_BUFFER_SIZE];
};

/* ---- Output buffer -------------------------------------------------------- */

static void write_through(struct yaml_writer *w, const char *p, size_t n)
{
	if (w->io_errno || n == 0)
		return;
	errno = 0;
	if (fwrite(p, 1, n, w->out) != n)
		w->io_errno = errno ? errno : EIO;
}

static void flush_buffer(struct yaml_writer *w)
{
	write_through(w, w->buf, w->used);
	w->used = 0;
}

static void put_mem(struct yaml_writer *w, const char *p, size_t n)
{
	if (n > sizeof(w->buf) - w->used) {
		flush_buffer(w);
		if (n > sizeof(w->buf)) {
			write_through(w, p, n);
			return;
		}
	}
	memcpy(w->buf + w->used, p, n);
	w->used += n;
}

static void put(struct yaml_writer *w, const char *s)
{
	put_mem(w, s, strlen(s));
}

static void put_char(struct yaml_writer *w, char c)
{
	if (w->used == sizeof(w->buf))
		flush_buffer(w);
	w->buf[w->used++] = c;
}

/* ---- Scalars -------------------------------------------------------------- */

static const char hex_digits[] = "0123456789abcdef";

static void put_dec(struct yaml_writer *w, uint64_t v)
{
	char tmp[20];
	char *p = tmp + sizeof(tmp);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_mem(w, p, (size_t)(tmp + sizeof(tmp) - p));
}

static void put_signed(struct yaml_writer *w, int64_t v)
{
	if (v < 0) {
		put_char(w, '-');
		/* negated in unsigned arithmetic: INT64_MIN has no positive twin */
		put_dec(w, 0 - (uint64_t)v);
	} else {
		put_dec(w, (uint64_t)v);
	}
}

/* Ids, and flags when non-zero: "0x" and lowercase digits; 0 is "0". */
static void put_hex(struct yaml_writer *w, uint64_t v)
{
	char tmp[18];
	char *p = tmp + sizeof(tmp);

	if (v == 0) {
		put_char(w, '0');
		return;
	}
	do {
		*--p = hex_digits[v & 0xf];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	put_mem(w, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* An enumeration by its name; a value with no name (a damaged trace) as
 * its number, so that `cat` still shows what the trace holds. */
static void put_enum(struct yaml_writer *w, const char *name, int value)
{
	if (name)
		put(w, name);
	else
		put_dec(w, (uint64_t)(unsigned)value);
}

/* ---- Strings -------------------------------------------------------------- */

static bool is_ascii_letter(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_plain_char(unsigned char c)
{
	return is_ascii_letter(c) || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '$' || c == '/' || c == '-';
}

/* Words that a YAML 1.1 reader takes for a boolean or a null. */
static bool is_yaml_special(const char *s)
{
	static const char *const specials[] = {
		"true", "false", "yes", "no", "on", "off", "null", "y", "n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(specials); i++)
		if (strcasecmp(s, specials[i]) == 0)
			return true;
	return false;
}

static bool can_be_plain(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!is_ascii_letter(p[0]) && p[0] != '_' && p[0] != '$')
		return false;
	for (; *p; p++)
		if (!is_plain_char(*p))
			return false;
	return !is_yaml_special(s);
}

static void put_escape(struct yaml_writer *w, char kind, uint32_t cp,
		       int digits)
{
	put_char(w, '\\');
	put_char(w, kind);
	for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
		put_char(w, hex_digits[(cp >> shift) & 0xf]);
}

static void put_quoted_ascii(struct yaml_writer *w, unsigned char c)
{
	switch (c) {
	case '"':
		put(w, "\\\"");
		break;
	case '\\':
		put(w, "\\\\");
		break;
	case '\n':
		put(w, "\\n");
		break;
	case '\t':
		put(w, "\\t");
		break;
	case '\r':
		put(w, "\\r");
		break;
	default:
		if (c < 0x20 || c == 0x7f)
			put_escape(w, 'x', c, 2);
		else
			put_char(w, (char)c);
	}
}

/*
 * Non-ASCII characters pass through, except those that libyaml refuses in
 * its input (C1 controls, U+FFFE, U+FFFF) or reads as line breaks and folds
 * (U+0085, U+2028, U+2029), and U+FEFF, which could pass for a byte order
 * mark: these are escaped, which YAML reads back as the same character.
 * Bytes that are not UTF-8 cannot be represented in YAML at all; each
 * ill-formed part becomes U+FFFD as the readers make it (util/utf8.h), so
 * that the output stays readable.
 */
static size_t put_quoted_utf8(struct yaml_writer *w, const unsigned char *p)
{
	uint32_t cp;
	size_t n = utf8_next(p, SIZE_MAX, &cp);

	if (cp == UTF8_BAD) {
		put(w, UTF8_REPLACEMENT);
		return n;
	}
	if (cp <= 0x9f)
		put_escape(w, 'x', cp, 2);
	else if (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff ||
		 cp == 0xfffe || cp == 0xffff)
		put_escape(w, 'u', cp, 4);
	else
		put_mem(w, (const char *)p, n);
	return n;
}

static void put_quoted(struct yaml_writer *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	put_char(w, '"');
	while (*p) {
		if (*p < 0x80)
			put_quoted_ascii(w, *p++);
		else
			p += put_quoted_utf8(w, p);
	}
	put_char(w, '"');
}

/* A missing string (NULL) is written as the empty one. */
static void put_string(struct yaml_writer *w, const char *s)
{
	if (s && can_be_plain(s))
		put(w, s);
	else
		put_quoted(w, s ? s : "");
}

int yaml_write_string(FILE *out, const char *s)
{
	struct yaml_writer *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return -1;
	w->out = out;
	put_string(w, s);
	flush_buffer(w);
	rc = w->io_errno ? -1 : 0;
	free(w);
	return rc;
}

/* ---- Lists ---------------------------------------------------------------- */

static void put_id_list(struct yaml_writer *w, const ht_id *v, size_t n)
{
	put_char(w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(w, ", ");
		put_hex(w, v[i]);
	}
	put_char(w, ']');
}

/* Field ids are the trace's own small numbers: decimal. */
static void put_field_list(struct yaml_writer *w, const ht_id *v, size_t n)
{
	put_char(w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(w, ", ");
		put_dec(w, v[i]);
	}
	put_char(w, ']');
}

static void put_flags32_list(struct yaml_writer *w, const uint32_t *v,
			     size_t n)
{
	put_char(w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(w, ", ");
		put_hex(w, v[i]);
	}
	put_char(w, ']');
}

static void put_flags8_list(struct yaml_writer *w, const uint8_t *v, size_t n)
{
	put_char(w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(w, ", ");
		put_hex(w, v[i]);
	}
	put_char(w, ']');
}

static void put_kind_list(struct yaml_writer *w, const uint8_t *v, size_t n)
{
	put_char(w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(w, ", ");
		put_enum(w, ht_root_kind_name(v[i]), v[i]);
	}
	put_char(w, ']');
}

static void put_generations(struct yaml_writer *w, uint32_t set)
{
	bool first = true;

	put_char(w, '[');
	for (unsigned g = 0; g <= HT_GEN_MAX; g++) {
		if (!(set & (UINT32_C(1) << g)))
			continue;
		if (!first)
			put(w, ", ");
		put_dec(w, g);
		first = false;
	}
	put_char(w, ']');
}

/* ---- Events --------------------------------------------------------------- */

static void put_class(struct yaml_writer *w, const struct ht_ev_class *e)
{
	put(w, "{id: ");
	put_hex(w, e->id);
	put(w, ", name: ");
	put_string(w, e->name);
	if (e->has_size) {
		put(w, ", size: ");
		put_dec(w, e->size);
	}
	put_char(w, '}');
}

static void put_named(struct yaml_writer *w, const struct ht_ev_named *e)
{
	put(w, "{id: ");
	put_hex(w, e->id);
	put(w, ", name: ");
	put_string(w, e->name);
	put_char(w, '}');
}

static void put_object_allocated(struct yaml_writer *w,
				 const struct ht_ev_object_allocated *e)
{
	put(w, "{id: ");
	put_hex(w, e->id);
	put(w, ", class: ");
	put_hex(w, e->class_id);
	put(w, ", size: ");
	put_dec(w, e->size);
	if (e->stack) {
		put(w, ", stack: ");
		put_dec(w, e->stack);
	}
	put_char(w, '}');
}

static void put_method(struct yaml_writer *w, const struct ht_ev_method *e)
{
	put(w, "{id: ");
	put_hex(w, e->id);
	put(w, ", name: ");
	put_string(w, e->name);
	if (e->file) {
		put(w, ", file: ");
		put_string(w, e->file);
	}
	if (e->line) {
		put(w, ", line: ");
		put_dec(w, e->line);
	}
	put_char(w, '}');
}

/* A stack's id is the trace's own number: decimal; its frames are
 * method ids, as the runtime gave them. */
static void put_stack(struct yaml_writer *w, const struct ht_ev_stack *e)
{
	put(w, "{id: ");
	put_dec(w, e->id);
	put(w, ", frames: ");
	put_id_list(w, e->frames, e->count);
	put_char(w, '}');
}

/* A timed event's time (version 3), last in its mapping: first is
 * whether it is the mapping's only field. */
static void put_time(struct yaml_writer *w, const struct ht_event *ev,
		     bool first)
{
	if (!ev->has_time)
		return;
	put(w, first ? "time: " : ", time: ");
	put_dec(w, ev->time);
}

static void put_gc_started(struct yaml_writer *w, const struct ht_event *ev)
{
	const struct ht_ev_gc_started *e = &ev->u.gc_started;

	put_char(w, '{');
	if (e->has_gc) {
		put(w, "gc: ");
		put_dec(w, e->gc);
		put(w, ", ");
	}
	put(w, "generations: ");
	put_generations(w, e->generations);
	put(w, ", reason: ");
	put_enum(w, ht_gc_reason_name(e->reason), (int)e->reason);
	put_time(w, ev, false);
	put_char(w, '}');
}

/* The block events: one flow mapping per line under the event's key. */
static void put_block_item_start(struct yaml_writer *w)
{
	put(w, "\n      - {");
}

static void put_generation_bounds(struct yaml_writer *w,
				  const struct ht_ev_generation_bounds *e)
{
	if (e->count == 0) {
		put(w, "[]");
		return;
	}
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_generation_range *r = &e->ranges[i];

		put_block_item_start(w);
		put(w, "generation: ");
		put_dec(w, r->generation);
		put(w, ", start: ");
		put_hex(w, r->start);
		put(w, ", length: ");
		put_dec(w, r->length);
		put(w, ", reserved: ");
		put_dec(w, r->reserved);
		put_char(w, '}');
	}
}

static void put_moved_references(struct yaml_writer *w,
				 const struct ht_ev_moved_references *e)
{
	if (e->count == 0) {
		put(w, "[]");
		return;
	}
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_moved_block *b = &e->blocks[i];

		put_block_item_start(w);
		put(w, "old: ");
		put_hex(w, b->old_id);
		put(w, ", new: ");
		put_hex(w, b->new_id);
		put(w, ", length: ");
		put_dec(w, b->length);
		put_char(w, '}');
	}
}

static void put_surviving_references(struct yaml_writer *w,
				     const struct ht_ev_surviving_references *e)
{
	if (e->count == 0) {
		put(w, "[]");
		return;
	}
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_surviving_block *b = &e->blocks[i];

		put_block_item_start(w);
		put(w, "start: ");
		put_hex(w, b->start);
		put(w, ", length: ");
		put_dec(w, b->length);
		put_char(w, '}');
	}
}

static void put_begin_container(struct yaml_writer *w,
				const struct ht_event *ev)
{
	const struct ht_ev_begin_container *e = &ev->u.begin_container;

	put(w, "{type: ");
	put_enum(w, ht_container_name(e->type), (int)e->type);
	if (e->id1) {
		put(w, ", id1: ");
		put_hex(w, e->id1);
	}
	if (e->id2) {
		put(w, ", id2: ");
		put_hex(w, e->id2);
	}
	put_time(w, ev, false);
	put_char(w, '}');
}

static void put_result(struct yaml_writer *w, enum ht_result result)
{
	if (result == HT_RESULT_OK)
		return;
	put(w, ", result: ");
	put_enum(w, ht_result_name(result), (int)result);
}

static void put_root_references(struct yaml_writer *w,
				const struct ht_ev_root_references *e)
{
	put(w, "{refs: ");
	put_id_list(w, e->refs, e->count);
	put(w, ", flags: ");
	put_flags32_list(w, e->flags, e->count);
	if (e->kinds) {
		put(w, ", kinds: ");
		put_kind_list(w, e->kinds, e->count);
	}
	if (e->root_flags) {
		put(w, ", root_flags: ");
		put_flags8_list(w, e->root_flags, e->count);
	}
	if (e->root_ids) {
		put(w, ", root_ids: ");
		put_id_list(w, e->root_ids, e->count);
	}
	if (e->root_fields) {
		put(w, ", root_fields: ");
		put_field_list(w, e->root_fields, e->count);
	}
	put_result(w, e->result);
	put_char(w, '}');
}

/* Values, and array elements, as signed numbers: their bits (heaptrace(5)). */
static void put_value_list(struct yaml_writer *w, const uint64_t *v, size_t n)
{
	put_char(w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(w, ", ");
		put_signed(w, (int64_t)v[i]);
	}
	put_char(w, ']');
}

/* An array's stored elements each as a value; the hash when they are a
 * prefix. */
static void put_array(struct yaml_writer *w, const struct ht_array_values *a)
{
	unsigned width = ht_value_type_width(a->type);

	put(w, "{type: ");
	put_enum(w, ht_value_type_name(a->type), a->type);
	put(w, ", length: ");
	put_dec(w, a->length);
	put(w, ", elements: [");
	for (uint64_t i = 0; width && i < a->stored; i++) {
		if (i)
			put(w, ", ");
		put_signed(w, (int64_t)ht_value_load(a->type,
						     a->data + i * width));
	}
	put_char(w, ']');
	if (a->stored < a->length) {
		put(w, ", hash: ");
		put_hex(w, a->hash);
	}
	put_char(w, '}');
}

static void put_object_references(struct yaml_writer *w,
				  const struct ht_ev_object_references *e)
{
	put(w, "{id: ");
	put_hex(w, e->id);
	put(w, ", class: ");
	put_hex(w, e->class_id);
	put(w, ", size: ");
	put_dec(w, e->size);
	put(w, ", refs: ");
	put_id_list(w, e->refs, e->count);
	put(w, ", flags: ");
	put_hex(w, e->flags);
	if (e->ref_flags) {
		put(w, ", ref_flags: ");
		put_flags32_list(w, e->ref_flags, e->count);
	}
	if (e->ref_fields) {
		put(w, ", ref_fields: ");
		put_field_list(w, e->ref_fields, e->count);
	}
	if (e->has_generation) {
		put(w, ", generation: ");
		put_dec(w, e->generation);
	}
	if (e->n_values) {
		put(w, ", value_fields: ");
		put_field_list(w, e->value_fields, e->n_values);
		put(w, ", values: ");
		put_value_list(w, e->values, e->n_values);
	}
	if (e->array) {
		put(w, ", array: ");
		put_array(w, e->array);
	}
	put_result(w, e->result);
	put_char(w, '}');
}

static void put_fields(struct yaml_writer *w, const struct ht_ev_fields *e)
{
	if (e->count == 0) {
		put(w, "[]");
		return;
	}
	for (size_t i = 0; i < e->count; i++) {
		const struct ht_field *f = &e->fields[i];

		put_block_item_start(w);
		put(w, "id: ");
		put_dec(w, f->id);
		put(w, ", class: ");
		put_hex(w, f->class_id);
		put(w, ", name: ");
		put_string(w, f->name);
		put(w, ", kind: ");
		put_enum(w, ht_field_kind_name(f->kind), f->kind);
		if (f->has_offset) {
			put(w, ", offset: ");
			put_dec(w, f->offset);
		}
		if (f->type) {
			put(w, ", type: ");
			put_enum(w, ht_value_type_name(f->type), f->type);
		}
		put_char(w, '}');
	}
}

/* The arrays an event must have for its count; NULL ones are a caller's
 * bug, refused rather than dereferenced. */
static const char *missing_array(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_GENERATION_BOUNDS:
		return ev->u.generation_bounds.count &&
		       !ev->u.generation_bounds.ranges ? "ranges" : NULL;
	case HT_EV_MOVED_REFERENCES:
		return ev->u.moved_references.count &&
		       !ev->u.moved_references.blocks ? "blocks" : NULL;
	case HT_EV_SURVIVING_REFERENCES:
		return ev->u.surviving_references.count &&
		       !ev->u.surviving_references.blocks ? "blocks" : NULL;
	case HT_EV_ROOT_REFERENCES:
		if (ev->u.root_references.count == 0)
			return NULL;
		if (!ev->u.root_references.refs)
			return "refs";
		return ev->u.root_references.flags ? NULL : "flags";
	case HT_EV_OBJECT_REFERENCES: {
		const struct ht_ev_object_references *o =
			&ev->u.object_references;

		if (o->count && !o->refs)
			return "refs";
		if (o->n_values && !o->value_fields)
			return "value_fields";
		if (o->n_values && !o->values)
			return "values";
		return o->array && o->array->stored && !o->array->data ?
		       "array" : NULL;
	}
	case HT_EV_FIELDS:
		return ev->u.fields.count && !ev->u.fields.fields ?
		       "fields" : NULL;
	case HT_EV_STACK:
		return ev->u.stack.count && !ev->u.stack.frames ?
		       "frames" : NULL;
	default:
		return NULL;
	}
}

/* Blocks go on lines of their own, after the event's key. */
static bool has_block_lines(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_GENERATION_BOUNDS:
		return ev->u.generation_bounds.count > 0;
	case HT_EV_MOVED_REFERENCES:
		return ev->u.moved_references.count > 0;
	case HT_EV_SURVIVING_REFERENCES:
		return ev->u.surviving_references.count > 0;
	case HT_EV_FIELDS:
		return ev->u.fields.count > 0;
	default:
		return false;
	}
}

static void put_body(struct yaml_writer *w, const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_CLASS:
		put_class(w, &ev->u.class_);
		break;
	case HT_EV_THREAD:
		put_named(w, &ev->u.thread);
		break;
	case HT_EV_METHOD:
		put_method(w, &ev->u.method);
		break;
	case HT_EV_STACK:
		put_stack(w, &ev->u.stack);
		break;
	case HT_EV_OBJECT_ALLOCATED:
		put_object_allocated(w, &ev->u.object_allocated);
		break;
	case HT_EV_GC_STARTED:
		put_gc_started(w, ev);
		break;
	case HT_EV_GENERATION_BOUNDS:
		put_generation_bounds(w, &ev->u.generation_bounds);
		break;
	case HT_EV_MOVED_REFERENCES:
		put_moved_references(w, &ev->u.moved_references);
		break;
	case HT_EV_SURVIVING_REFERENCES:
		put_surviving_references(w, &ev->u.surviving_references);
		break;
	case HT_EV_GC_FINISHED:
		put_char(w, '{');
		put_time(w, ev, true);
		put_char(w, '}');
		break;
	case HT_EV_BEGIN_CONTAINER:
		put_begin_container(w, ev);
		break;
	case HT_EV_ROOT_REFERENCES:
		put_root_references(w, &ev->u.root_references);
		break;
	case HT_EV_OBJECT_REFERENCES:
		put_object_references(w, &ev->u.object_references);
		break;
	case HT_EV_FIELDS:
		put_fields(w, &ev->u.fields);
		break;
	}
}

static int report_io_error(struct yaml_writer *w, struct ht_error *err)
{
	err_sys(err, w->io_errno, w->name, "cannot write YAML");
	return -1;
}

int yaml_writer_event(struct yaml_writer *w, const struct ht_event *ev,
		      struct ht_error *err)
{
	const char *name = ht_event_name(ev->type);
	const char *missing;

	if (!name) {
		err_plain(err, HT_E_INVALID, w->name,
			  "event %llu: unknown event type %d",
			  (unsigned long long)w->events, (int)ev->type);
		return -1;
	}
	missing = missing_array(ev);
	if (missing) {
		err_plain(err, HT_E_INVALID, w->name,
			  "event %llu: %s: %s is NULL",
			  (unsigned long long)w->events, name, missing);
		return -1;
	}
	if (w->events == 0)
		put_char(w, '\n');
	put(w, "  - ");
	put(w, name);
	put(w, has_block_lines(ev) ? ":" : ": ");
	put_body(w, ev);
	put_char(w, '\n');
	w->events++;
	if (w->io_errno)
		return report_io_error(w, err);
	return 0;
}

/* ---- Header --------------------------------------------------------------- */

static void put_header(struct yaml_writer *w, const struct ht_header *h)
{
	/* the trace's own version: a version 1 trace stays one */
	put(w, "heaptrace: ");
	put_dec(w, h->version >= 1 && h->version <= HT_FORMAT_VERSION ?
		       h->version : HT_FORMAT_VERSION);
	if (h->runtime) {
		put(w, "\nruntime: ");
		put_string(w, h->runtime);
	}
	if (h->runtime_version) {
		put(w, "\nruntime_version: ");
		put_string(w, h->runtime_version);
	}
	put(w, "\npointer_size: ");
	put_dec(w, h->pointer_size);
	put(w, "\nreports_survivors: ");
	put(w, h->reports_survivors ? "true" : "false");
	if (h->command_line) {
		put(w, "\ncommand_line: ");
		put_string(w, h->command_line);
	}
	if (h->has_start_time) {
		put(w, "\nstart_time: ");
		put_signed(w, h->start_time);
	}
	if (h->n_metadata) {
		put(w, "\nmetadata:");
		for (size_t i = 0; i < h->n_metadata; i++) {
			put(w, "\n  ");
			put_string(w, h->metadata[i].key);
			put(w, ": ");
			put_string(w, h->metadata[i].value);
		}
	}
	/* The list's first item, or " []" at close, completes this line. */
	put(w, "\nevents:");
}

struct yaml_writer *yaml_writer_open(FILE *out, const char *name,
				     const struct ht_header *h,
				     struct ht_error *err)
{
	struct yaml_writer *w = malloc(sizeof(*w));

	if (!w) {
		err_sys(err, ENOMEM, name, "cannot start YAML output");
		return NULL;
	}
	w->out = out;
	w->name = strdup(name ? name : "-");
	w->events = 0;
	w->io_errno = 0;
	w->used = 0;
	if (!w->name) {
		free(w);
		err_sys(err, ENOMEM, name, "cannot start YAML output");
		return NULL;
	}
	if (h->n_metadata && !h->metadata) {
		err_plain(err, HT_E_INVALID, w->name,
			  "header: metadata is NULL");
		free(w->name);
		free(w);
		return NULL;
	}
	put_header(w, h);
	if (w->io_errno) {
		report_io_error(w, err);
		free(w->name);
		free(w);
		return NULL;
	}
	return w;
}

int yaml_writer_close(struct yaml_writer *w, struct ht_error *err)
{
	int rc = 0;

	if (!w)
		return 0;
	if (w->events == 0)
		put(w, " []\n");
	flush_buffer(w);
	errno = 0;
	if (!w->io_errno && (fflush(w->out) != 0 || ferror(w->out)))
		w->io_errno = errno ? errno : EIO;
	if (w->io_errno)
		rc = report_io_error(w, err);
	free(w->name);
	free(w);
	return rc;
}
