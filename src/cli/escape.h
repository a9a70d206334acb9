/*
 * escape.h - the one escaping rule of each output form, for every string
 * a command prints that came from a trace (class, thread and method names,
 * the header's runtime, version, command line and metadata) or from the
 * command line (file names, titles). heaptrace(1), OUTPUT, states the
 * rules; the readers have already made names valid UTF-8 (heaptrace(5),
 * STRINGS), but these do not rely on it.
 *
 * A string with nothing to escape comes out byte for byte as it went in,
 * so ordinary names print as they always did. YAML's rule is
 * yaml_write_string (lib/read/textform.h), shared with `cat`.
 */
#ifndef HT_ESCAPE_H
#define HT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Text, for people on a terminal: what a terminal would obey or that would
 * break a report's lines is shown as a visible escape: \n, \r, \t, \e (ESC)
 * and \xHH for the other C0 controls and DEL, \u00HH for the C1 controls
 * (U+0080 to U+009F), \uHHHH for the bidirectional formatting characters
 * (U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) that reorder what
 * a terminal shows, and \xHH for each byte that is not UTF-8. A backslash
 * is left alone, so a name that holds a backslash followed by "n" reads
 * the same as one holding a newline: text is for reading, and the JSON
 * and YAML forms say which it was.
 *
 * Returns s itself when it needs no escape, else the escaped copy in one
 * of ESC_TEXT_SLOTS buffers used in turn: valid until that many more calls,
 * enough for the arguments of one printf. "?" when out of memory.
 */
#define ESC_TEXT_SLOTS 8
const char *esc_text(const char *s);

/* A name for text output: a class name, or a step or root that names
 * one, folded for reading (util/fold.h) and then escaped as esc_text does;
 * valid as long as esc_text's result. The text commands print every class
 * name through it; yaml and json write the full name. */
const char *esc_name(const char *s);
/* The same folded, not escaped, for the forms that escape their own way
 * (diff's markdown, the frames of flame's SVG): s itself when it holds no
 * '<'. flame's folded stacks and SVG tooltips keep the full name. */
const char *fold_name(const char *s);
/* From now on fold_name, and so esc_name, leaves every name whole: the
 * command's --full-names (OPT_FULL_NAMES, parse-options.h), for a reader
 * who must grep a name or tell two that fold alike apart. Set once, while
 * the options are parsed, before anything is printed. */
void fold_names_off(void);

/* JSON: a string literal, quotes included, that strict decoders accept:
 * '"' and '\' escaped, \n \r \t, \u00HH for the other C0 controls, DEL
 * and the C1 controls, \u2028 and \u2029 (which JavaScript once took for
 * line ends), and U+FFFD for each ill-formed part of bytes that are not
 * UTF-8. */
void esc_json(FILE *f, const char *s);

/* Markdown (GitHub's): s as a code span, in which nothing is markup (no
 * link, no emphasis, no HTML): fenced by one backtick more than the longest
 * run of them in s, padded by a space inside when s holds a backtick or
 * starts and ends with a space (CommonMark strips one each side then);
 * controls as esc_text shows them, so that a newline ends neither the
 * span nor a table row. In a table cell (table_cell), '|' is escaped as
 * '\|', which a cell needs even in a code span (GitHub takes the backslash
 * away); elsewhere the backslash would show, so '|' is left alone. */
void esc_markdown_code(FILE *f, const char *s, bool table_cell);

/* Folded stacks (flame's default output, "frame;frame;frame bytes" a
 * line, as flamegraph.pl and speedscope read them): ';' becomes ':', and
 * what esc_text would escape becomes '?', since the form has no escapes
 * and a newline would end the line. */
void esc_folded(FILE *f, const char *s);

/* SVG (XML 1.0 character data and attribute values): & < > " ' as
 * entities; what XML 1.0 cannot hold (C0 controls but tab, newline and
 * carriage return, which are shown as '?' too since they would not show,
 * U+FFFE, U+FFFF, bytes that are not UTF-8) and DEL as '?'. At most max
 * characters of s are written (SIZE_MAX: all). */
void esc_xml(FILE *f, const char *s, size_t max);
/* How many characters esc_xml counts in s. */
size_t esc_xml_chars(const char *s);

#endif
