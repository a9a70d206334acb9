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
 *
 * This file is the source: its header, its operations and its input;
 * the parser events, numbers and fields it reads are yaml_fields.c, the
 * events yaml_events.c, what they share yaml_read_internal.h.
 */
#include "lib/read/yaml_read_internal.h"

/* ---- Errors --------------------------------------------------------------- */

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

/* ---- Buffers -------------------------------------------------------------- */

static char *copy_scalar(struct yaml_src *s)
{
	char *p = malloc(scalar_length(&s->ev) + 1);

	if (!p) {
		yaml_fail_nomem(s);
		return NULL;
	}
	memcpy(p, scalar_text(&s->ev), scalar_length(&s->ev) + 1);
	return p;
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

	if (yaml_read_number(s, "header", "heaptrace", UINT64_MAX, &v) < 0)
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

	if (yaml_read_number(s, "header", "pointer_size", UINT64_MAX, &v) < 0)
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
		if (yaml_read_number(s, "header", "start_time", INT64_MAX,
				     &v) < 0)
			return -1;
		s->header.start_time = (int64_t)v;
		return 0;
	}
	st = yaml_parse_number(scalar_text(e) + 1, scalar_length(e) - 1, &v);
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

	if (yaml_read_key(s, "metadata") < 0)
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
	if (yaml_pull(s) < 0)
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
		return yaml_fail_nomem(s);
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
		if (yaml_pull(s) < 0)
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
		return yaml_fail_nomem(s);
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
	if (yaml_pull(s) < 0)
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

	if (yaml_pull(s) < 0 ||
	    yaml_pull(s) < 0) /* the stream start, then ... */
		return -1;
	if (s->ev.type != YAML_DOCUMENT_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "empty input: not a heaptrace YAML trace");
	if (yaml_pull(s) < 0)
		return -1;
	if (s->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(s, s->ev.start_mark,
			       "a trace must be a mapping (heaptrace: 1 ... events: [...]), not %s",
			       node_kind(&s->ev));
	for (;;) {
		yaml_mark_t mark;
		int k;

		if (yaml_pull(s) < 0)
			return -1;
		if (s->ev.type == YAML_MAPPING_END_EVENT)
			return fail_at(s, s->ev.start_mark,
				       "the trace has no 'events' list");
		if (yaml_read_key(s, "header") < 0)
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
		if (yaml_pull(s) < 0 ||
		    read_header_value(s, (enum header_key)k) < 0)
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
		if (yaml_read_end(s) < 0)
			goto fail;
		if (s->bad)
			goto bad_byte;
		s->state = ST_DONE;
		return 0;
	case ST_EVENTS:
		break;
	}
	if (yaml_pull(s) < 0)
		goto fail;
	if (s->ev.type == YAML_SEQUENCE_END_EVENT) {
		if (yaml_read_end(s) < 0)
			goto fail;
		if (s->bad)
			goto bad_byte;
		s->state = ST_DONE;
		return 0;
	}
	if (yaml_read_event(s, ev) < 0)
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
	free(s->file.data);
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
