/*
 * forms.h - the input forms of reader.c, asked before an input is opened:
 * heaptrace's analysis commands copy a stream (a pipe, a device) to a
 * temporary file to read it twice, and must first know that it could be
 * a trace at all, or /dev/zero fills the disk.
 */
#ifndef HT_FORMS_H
#define HT_FORMS_H

#include <stddef.h>

/* What an input that no form starts as is told (by the reader, and by
 * whoever refuses it before opening it). */
#define HT_NOT_A_TRACE                                                     \
	"not a trace: neither a .ht file, its YAML form, nor an HPROF "    \
	"heap dump (\"JAVA PROFILE 1.0.2\", gzipped or not)"

/* The first bytes worth looking at: past them, every form's sniff has
 * decided. */
#define HT_SNIFF_MAX 16

/* The name of the form ("ht", "hprof", "gzip", "yaml") whose first bytes head's n
 * (>= 1) are, or NULL when no form starts so. Only a guess: opening the
 * input checks the rest. */
const char *reader_sniff_form(const unsigned char *head, size_t n);

#endif
