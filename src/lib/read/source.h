/*
 * source.h - one input form behind struct ht_reader. reader.c finds the
 * form in its table of input forms from the first bytes of the input and
 * hands the open FILE to that form's open function; the source then yields
 * events through its ops.
 */
#ifndef HT_SOURCE_H
#define HT_SOURCE_H

#include <heaptrace/trace.h>

#include <stdio.h>

/* This struct is not an API; it may change from one release to the next. */
struct ht_source_ops {
	const char *format; /* "ht", "yaml", ... */
	/* As ht_reader_next. */
	int (*next)(void *self, struct ht_event *ev, struct ht_error *err);
	struct ht_position (*position)(const void *self);
	/* What was lost, or NULL if the source cannot lose anything. */
	const struct ht_loss *(*loss)(const void *self);
	/* The index, or NULL if the form has none. */
	const struct ht_index_info *(*index)(const void *self);
	void (*close)(void *self);
};

/* This struct is not an API; it may change from one release to the next. */
struct ht_reader {
	const struct ht_source_ops *ops;
	void *self;
	const struct ht_header *header; /* owned by the source */
	char *path;                     /* as given, for messages */
	struct ht_loss no_loss;
	/* the caller's, checked, for the sources they concern */
	struct ht_reader_options options;
	/* where a .ht source notes its chunks, or NULL (pass_log.h) */
	struct pass_log *pass_log;
};

/*
 * Each source's open: takes ownership of f (closes it on failure too),
 * sets r->ops, r->self and r->header, and returns 0; or fills err and
 * returns -1. `path` is for messages ("-" for standard input); r->options
 * holds the caller's options (all zero, the defaults, in a reader that
 * the caller zeroed).
 */
int binary_source_open(struct ht_reader *r, FILE *f, const char *path,
		       struct ht_error *err);
int yaml_source_open(struct ht_reader *r, FILE *f, const char *path,
		     struct ht_error *err);
/* Java heap dumps (HPROF); a pipe is first copied to a temporary file. */
int hprof_source_open(struct ht_reader *r, FILE *f, const char *path,
		      struct ht_error *err);
/* A gzipped HPROF dump (jcmd GC.heap_dump -gz=N), read through zlib
 * without an uncompressed copy; a pipe's compressed bytes are first
 * copied to a temporary file. Anything else gzipped is refused. */
int hprof_source_open_gzip(struct ht_reader *r, FILE *f, const char *path,
			   struct ht_error *err);

#endif
