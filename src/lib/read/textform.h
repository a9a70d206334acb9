/*
 * textform.h - the YAML text form of a trace (heaptrace(5), doc/design.md
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

/* Writes s as a YAML string scalar by the text form's one rule: plain when
 * YAML could read it as nothing else, else double-quoted with escapes.
 * For every YAML writer of the project (the CLI's yaml reports too). 0, or
 * -1 on a write error or out of memory. */
int yaml_write_string(FILE *out, const char *s);

#endif
