/*
 * output.h - machine-readable output, YAML or JSON from the same calls, so
 * that every command's yaml and json carry the same keys (doc/design.md
 * section 6). Ids are written as "0x..." strings in both.
 *
 * A document is one root object; containers nest with begin/end calls;
 * `key` is NULL for the elements of an array.
 */
#ifndef HT_OUTPUT_H
#define HT_OUTPUT_H

#include "cli/cli.h"

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct out;

struct out *out_new(FILE *f, enum output_format format);
void out_begin_object(struct out *o, const char *key);
void out_end_object(struct out *o);
void out_begin_array(struct out *o, const char *key);
void out_end_array(struct out *o);
void out_string(struct out *o, const char *key, const char *value); /* NULL: null */
void out_u64(struct out *o, const char *key, uint64_t value);
void out_i64(struct out *o, const char *key, int64_t value);
void out_double(struct out *o, const char *key, double value);
void out_id(struct out *o, const char *key, ht_id value);
void out_bool(struct out *o, const char *key, bool value);
void out_null(struct out *o, const char *key);
/* Ends the document, flushes, frees o. -1 if writing failed. */
int out_finish(struct out *o);

#endif
