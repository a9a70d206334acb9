/*
 * reader.c - ht_reader: opens an input, sniffs its form from the first
 * byte, and hands it to the matching source (source.h). Everything that
 * reads a trace goes through here, so every command accepts every form.
 * An HPROF heap dump starts "JAVA PROFILE 1.0.x", and no YAML trace can
 * start with a 'J' (its keys are lowercase): the HPROF source checks the
 * rest and says what the input is not.
 */
#include "lib/read/source.h"

#include "lib/common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum sniffed {
	SNIFF_YAML,
	SNIFF_BINARY,
	SNIFF_HPROF,
};

/* The .ht magic starts with 0x89, which no YAML document can; an HPROF
 * dump with the 'J' no YAML trace starts with. */
static int sniff_binary(FILE *f)
{
	int c = getc(f);

	if (c == EOF)
		return -1;
	if (ungetc(c, f) == EOF)
		return -1;
	if (c == 'J')
		return SNIFF_HPROF;
	return c == 0x89 ? SNIFF_BINARY : SNIFF_YAML;
}

struct ht_reader *ht_reader_open(const char *path, struct ht_error *err)
{
	struct ht_reader *r;
	FILE *f;
	int binary, rc;

	err_clear(err);
	if (!path)
		path = "heaptrace.ht";
	if (strcmp(path, "-") == 0) {
		f = stdin;
	} else {
		f = fopen(path, "rb");
		if (!f) {
			err_sys(err, errno, path, "cannot open");
			return NULL;
		}
	}
	binary = sniff_binary(f);
	if (binary < 0) {
		if (ferror(f))
			err_sys(err, errno, path, "cannot read");
		else
			err_plain(err, HT_E_FORMAT, path,
				  "empty file: not a trace");
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
	if (binary == SNIFF_BINARY)
		rc = binary_source_open(r, f, r->path, err);
	else if (binary == SNIFF_HPROF)
		rc = hprof_source_open(r, f, r->path, err);
	else
		rc = yaml_source_open(r, f, r->path, err);
	if (rc < 0) {
		free(r->path);
		free(r);
		return NULL;
	}
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
