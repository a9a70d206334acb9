/*
 * textform.h - the YAML text form of a trace (heaptrace(5), DESIGN.md
 * section 5): written canonically by `heaptrace cat`, read by every command
 * through yaml_source_open (source.h).
 *
 * Canonical output is a function of the events alone: the same events give
 * the same bytes, so `convert` then `cat` reproduces `cat`'s output.
 */
#ifndef HT_TEXTFORM_H
#define HT_TEXTFORM_H

#include <heaptrace/trace.h>

#include <stdio.h>

struct yaml_writer;

/* Writes the header and the "events:" key. Returns NULL on failure. */
struct yaml_writer *yaml_writer_open(FILE *out, const char *name,
				     const struct ht_header *h,
				     struct ht_error *err);
/* 0, or -1 with err filled (an I/O error on out). */
int yaml_writer_event(struct yaml_writer *w, const struct ht_event *ev,
		      struct ht_error *err);
/* Ends the document (an empty event list is written as "events: []")
 * and frees w; does not close out. */
int yaml_writer_close(struct yaml_writer *w, struct ht_error *err);

#endif
