/*
 * cli.h - what every command shares: exit statuses, messages, opening
 * the input with a message that says why it failed, and progress on a
 * terminal. Its options: parse-options.h.
 */
#ifndef HT_CLI_H
#define HT_CLI_H

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses (heaptrace(1), EXIT STATUS). */
enum {
	EXIT_DONE = 0,
	EXIT_FINDING = 1,  /* check found problems, diff passed a threshold */
	EXIT_USAGE = 2,
	EXIT_UNREADABLE = 3,
	EXIT_CUT_OFF = 4,  /* check: sound, but its process ended inside a GC */
};

/* The trace read when no FILE is given, as perf reads perf.data. */
#define DEFAULT_TRACE "heaptrace.ht"

enum output_format {
	FORMAT_TEXT,
	FORMAT_YAML,
	FORMAT_JSON,
};

extern const char *program_name;

/* Prints "heaptrace CMD: message" and the usage hint to stderr; returns
 * EXIT_USAGE so callers can `return usage_error(...)`. */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "heaptrace: message" to stderr. */
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses --format's argument; -1 if unknown. */
int parse_format(const char *arg);

/* Parses an id or count: decimal or 0x hex. 0 on success. */
int parse_u64(const char *arg, uint64_t *out);

/* Whether writing output would overwrite the trace read from input, by
 * the same name or through another path to the same file (a hard or
 * symbolic link, /dev/stdin, /proc/self/fd/N). For "-" (standard input),
 * the file standard input is open on. Call it before the output is opened,
 * which truncates it. */
bool same_file(const char *input, const char *output);

/* Opens the trace (DEFAULT_TRACE when path is NULL) with the reader
 * options the command was given, or prints why not; NULL then means: exit
 * with EXIT_UNREADABLE. */
struct ht_reader *open_trace(const char *path,
			     const struct ht_reader_options *opts);

/* "1 dump", "3 dumps": formats into buf (at least 48 bytes), returns it. */
const char *count_of(uint64_t n, const char *one, const char *many, char *buf);

/* Progress on standard error, only when it is a terminal: a line
 * rewritten at most a few times a second, "WHAT: ...". progress_start
 * returns NULL when stderr is not a terminal, and every call takes NULL
 * and does nothing. */
struct progress;
struct progress *progress_start(const char *what, const char *path);
/* Events read so far, and how far into the file (a percentage when
 * path was a regular file); shown at most four times a second. */
void progress_update(struct progress *p, uint64_t events, uint64_t offset);
/* Rewrites the line with WHAT: and the text of fmt, now. */
void progress_show(struct progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Clears the line if one was shown, and frees p. */
void progress_end(struct progress *p);

#endif
