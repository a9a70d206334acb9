/*
 * reader.c - ht_reader: opens an input, finds its form in the table of
 * input forms from its first byte, and hands it to that form's source
 * (source.h). Everything that reads a trace goes through here, so every
 * command accepts every form.
 */
#include "lib/read/source.h"
#include "lib/read/forms.h"

#include "lib/common/error.h"
#include "lib/common/format.h"
#include "util/utf8.h"
#include "util/alloc.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * One form an input may take: its name, whether the first bytes of an
 * input look like it, and the source that reads it. The first bytes are
 * only a guess at the form; its open then checks the rest and says what
 * the input is not.
 */
struct input_form {
	const char *name; /* as ht_reader_format says it */
	/* head holds the first n bytes of the input (n >= 1) */
	bool (*sniff)(const unsigned char *head, size_t n);
	/* as in source.h */
	int (*open)(struct ht_reader *r, FILE *f, const char *path,
		    struct ht_error *err);
};

/* Whether the n bytes of head begin as the len bytes of prefix do (as
 * far as both go). */
static bool starts_as(const unsigned char *head, size_t n, const char *prefix,
		      size_t len)
{
	return memcmp(head, prefix, n < len ? n : len) == 0;
}

/* The .ht magic starts with 0x89, which no YAML document can. */
static bool sniff_binary(const unsigned char *head, size_t n)
{
	return starts_as(head, n, HT_MAGIC, HT_MAGIC_LEN);
}

/* An HPROF heap dump starts "JAVA PROFILE 1.0.x", and no YAML trace can
 * start with a 'J' (its keys are lowercase). */
static bool sniff_hprof(const unsigned char *head, size_t n)
{
	return starts_as(head, n, "JAVA PROFILE ", 13);
}

/* gzip's magic is 1f 8b (RFC 1952); 0x1f is no other form's first byte.
 * Only HPROF is read gzipped, which its open checks. */
static bool sniff_gzip(const unsigned char *head, size_t n)
{
	return starts_as(head, n, "\x1f\x8b", 2);
}

/* Whether ASCII c can be in YAML text: no control character but a tab
 * or a line break. */
static bool yaml_ascii(unsigned c)
{
	return c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c != 0x7f);
}

/* Whether c starts a sequence of more than one byte (utf8_next). */
static bool utf8_lead(unsigned c)
{
	return c >= 0xc2 && c <= 0xf4;
}

/*
 * Anything else that can start a YAML document is taken for YAML, whose
 * parser says where it is not: printable ASCII, a tab or line break, the
 * lead byte of a UTF-8 sequence (a byte order mark's 0xEF too), or the
 * first byte of a UTF-16 byte order mark (libyaml reads UTF-16). A NUL,
 * another control character or a stray continuation byte is no form's:
 * /dev/zero is refused at its first byte. Given more bytes, UTF-8 text
 * must go on as text, well-formed (utf8_next), which a random device's
 * bytes do not; a character cut off at the end of the bytes given is
 * fine, as the rest of it is still to come.
 */
static bool sniff_yaml(const unsigned char *head, size_t n)
{
	size_t i = 0;

	if (head[0] == 0xfe || head[0] == 0xff)
		return true;
	while (i < n) {
		uint32_t cp;
		size_t w = utf8_next(head + i, n - i, &cp);

		if (cp == UTF8_BAD)
			return utf8_lead(head[i]) && w == n - i;
		if (cp < 0x80 && !yaml_ascii(cp))
			return false;
		i += w;
	}
	return true;
}

/*
 * The input forms, tried in order: the first whose sniff accepts the
 * input's first bytes opens it; an input none accepts is not a trace. A
 * new form is one row, before any row that would take its first bytes
 * too.
 *
 * When opening, only the first byte is looked at (SNIFF_BYTES): it is
 * peeked and given back with ungetc, which stdio guarantees for one byte
 * only, and standard input cannot be rewound. One byte tells these forms
 * apart, gzip's first, 0x1f, among them. Whoever holds
 * more of the head (reader_sniff_form, forms.h) gets a closer guess.
 */
static const struct input_form input_forms[] = {
	{"ht", sniff_binary, binary_source_open},
	{"hprof", sniff_hprof, hprof_source_open},
	{"gzip", sniff_gzip, hprof_source_open_gzip},
	{"yaml", sniff_yaml, yaml_source_open},
};

#define SNIFF_BYTES 1
#define N_FORMS (ARRAY_SIZE(input_forms))

static const struct input_form *form_of(const unsigned char *head, size_t n)
{
	for (size_t i = 0; i < N_FORMS; i++)
		if (input_forms[i].sniff(head, n))
			return &input_forms[i];
	return NULL;
}

const char *reader_sniff_form(const unsigned char *head, size_t n)
{
	const struct input_form *form = form_of(head, n);

	return form ? form->name : NULL;
}

/* The form of f, from its first byte, which stays unread; NULL with
 * *empty set when f is empty or cannot be read (ferror tells which), NULL
 * when no form starts with that byte. */
static const struct input_form *sniff_form(FILE *f, bool *empty)
{
	unsigned char head[SNIFF_BYTES];
	int c = getc(f);

	*empty = c == EOF || ungetc(c, f) == EOF;
	if (*empty)
		return NULL;
	head[0] = (unsigned char)c;
	return form_of(head, SNIFF_BYTES);
}

/* A caller's value out of range is refused before anything is opened. */
static int check_options(const struct ht_reader_options *o,
			 const char *path, struct ht_error *err)
{
	if ((unsigned)o->compressed_oops > HT_COMPRESSED_OOPS_NO) {
		err_plain(err, HT_E_INVALID, path,
			  "reader option compressed_oops is %u, not "
			  "HT_COMPRESSED_OOPS_AUTO, _YES or _NO",
			  (unsigned)o->compressed_oops);
		return -1;
	}
	return 0;
}

struct ht_reader *ht_reader_open(const char *path, struct ht_error *err)
{
	return ht_reader_open_with(path, NULL, err);
}

struct ht_reader *ht_reader_open_with(const char *path,
				      const struct ht_reader_options *options,
				      struct ht_error *err)
{
	static const struct ht_reader_options defaults;
	const struct input_form *form;
	struct ht_reader *r;
	bool empty;
	FILE *f;

	err_clear(err);
	if (!path)
		path = "heaptrace.ht";
	if (!options)
		options = &defaults;
	if (check_options(options, path, err) < 0)
		return NULL;
	if (strcmp(path, "-") == 0) {
		f = stdin;
	} else {
		f = fopen(path, "rb");
		if (!f) {
			err_sys(err, errno, path, "cannot open");
			return NULL;
		}
	}
	form = sniff_form(f, &empty);
	if (!form) {
		if (empty && ferror(f))
			err_sys(err, errno, path, "cannot read");
		else if (empty)
			err_plain(err, HT_E_FORMAT, path,
				  "empty file: not a trace");
		else
			err_plain(err, HT_E_FORMAT, path, HT_NOT_A_TRACE);
		if (f != stdin)
			fclose(f);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r)
		r->path = strdup(path);
	if (!r || !r->path) {
		if (r)
			free(r);
		err_plain(err, HT_E_NOMEM, path, "out of memory");
		if (f != stdin)
			fclose(f);
		return NULL;
	}
	r->options = *options;
	if (form->open(r, f, r->path, err) < 0) {
		free(r->path);
		free(r);
		return NULL;
	}
	/* a gzipped dump is read as what it holds */
	assert(strcmp(r->ops->format, form->name) == 0 ||
	       form->open == hprof_source_open_gzip);
	return r;
}

void ht_reader_close(struct ht_reader *r)
{
	if (!r)
		return;
	if (r->ops && r->ops->close)
		r->ops->close(r->self);
	free(r->path);
	free(r);
}

const struct ht_header *ht_reader_header(const struct ht_reader *r)
{
	return r->header;
}

const char *ht_reader_format(const struct ht_reader *r)
{
	return r->ops->format;
}

const char *ht_reader_path(const struct ht_reader *r)
{
	return r->path;
}

int ht_reader_next(struct ht_reader *r, struct ht_event *ev,
		   struct ht_error *err)
{
	return r->ops->next(r->self, ev, err);
}

struct ht_position ht_reader_position(const struct ht_reader *r)
{
	return r->ops->position(r->self);
}

const struct ht_loss *ht_reader_loss(const struct ht_reader *r)
{
	const struct ht_loss *loss = r->ops->loss ? r->ops->loss(r->self) : NULL;

	return loss ? loss : &r->no_loss;
}

const struct ht_index_info *ht_reader_index(const struct ht_reader *r)
{
	return r->ops->index ? r->ops->index(r->self) : NULL;
}

bool ht_reader_cut_off(const struct ht_reader *r)
{
	const struct ht_index_info *ix = ht_reader_index(r);
	const struct ht_loss *loss = ht_reader_loss(r);

	return ix && !ix->present && (!loss->lost || loss->torn_tail);
}
