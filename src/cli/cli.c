/*
 * cli.c - exit statuses, messages, value parsers and progress shared by
 * the commands.
 */
#include "cli/cli.h"

#include "cli/escape.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *program_name = "heaptrace";

/* Writes head, the message, tail to standard error, the message's text as
 * text output shows it (escape.h): messages quote names, file names,
 * arguments and what a damaged file holds, and none of them may move the
 * cursor or start a line of its own. */
static void put_message(const char *head, const char *tail, const char *fmt,
			va_list ap)
	__attribute__((format(printf, 3, 0)));
static void put_message(const char *head, const char *tail, const char *fmt,
			va_list ap)
{
	char *line = NULL, cut[4096];
	va_list again;

	va_copy(again, ap);
	if (vasprintf(&line, fmt, ap) < 0) {
		/* out of memory: what fits */
		line = NULL;
		vsnprintf(cut, sizeof(cut), fmt, again);
	}
	va_end(again);
	fprintf(stderr, "%s%s%s", head, esc_text(line ? line : cut), tail);
	free(line);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	char head[64];
	va_list ap;

	snprintf(head, sizeof(head), "%s %s: ", program_name, cmd);
	va_start(ap, fmt);
	put_message(head, "\n", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s %s --help'.\n", program_name, cmd);
	return EXIT_USAGE;
}

void error_msg(const char *fmt, ...)
{
	char head[64];
	va_list ap;

	snprintf(head, sizeof(head), "%s: ", program_name);
	va_start(ap, fmt);
	put_message(head, "\n", fmt, ap);
	va_end(ap);
}

void warning_msg(const char *fmt, ...)
{
	char head[64];
	va_list ap;

	snprintf(head, sizeof(head), "%s: warning: ", program_name);
	va_start(ap, fmt);
	put_message(head, "\n", fmt, ap);
	va_end(ap);
}

int parse_format(const char *arg)
{
	if (strcmp(arg, "text") == 0)
		return FORMAT_TEXT;
	if (strcmp(arg, "yaml") == 0)
		return FORMAT_YAML;
	if (strcmp(arg, "json") == 0)
		return FORMAT_JSON;
	return -1;
}

int parse_u64(const char *arg, uint64_t *out)
{
	char *end;
	int base = 10;

	if (arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X')) {
		base = 16;
		arg += 2;
	}
	if (!*arg || *arg == '-' || *arg == '+' || *arg == ' ')
		return -1;
	errno = 0;
	*out = strtoull(arg, &end, base);
	if (errno || *end)
		return -1;
	return 0;
}

const char *count_of(uint64_t n, const char *one, const char *many, char *buf)
{
	snprintf(buf, 48, "%llu %s", (unsigned long long)n, n == 1 ? one : many);
	return buf;
}

bool same_file(const char *input, const char *output)
{
	struct stat in, out;
	bool from_stdin = strcmp(input, "-") == 0;

	if (!from_stdin && strcmp(input, output) == 0)
		return true;
	/* stat follows every symbolic link, /dev/stdin and /proc/self/fd/N
	 * included, to the file itself; a hard link is the same inode. An
	 * output that does not exist yet cannot be the input. */
	if (stat(output, &out) != 0)
		return false;
	if (from_stdin ? fstat(STDIN_FILENO, &in) != 0 : stat(input, &in) != 0)
		return false;
	/* Only a regular file is harmed by being truncated: standard input
	 * and output both /dev/null, or one terminal, lose nothing. */
	return S_ISREG(out.st_mode) && in.st_dev == out.st_dev &&
	       in.st_ino == out.st_ino;
}

/* The HPROF reader's metadata when the layout given contradicts the
 * dump's addresses (heaptrace(1), INPUT FORMATS). */
#define LAYOUT_CONTRADICTED "object_layout_contradicted"

/* Says once per input, though a command may open it more than once, that
 * --hprof-compressed-oops contradicts what the dump's addresses show:
 * every size would be wrong without a word. */
static void warn_layout_given(struct ht_reader *r,
			      const struct ht_reader_options *opts)
{
	static char warned[2][PATH_MAX];
	const struct ht_header *hd = ht_reader_header(r);
	const char *path = ht_reader_path(r);

	for (size_t i = 0; i < hd->n_metadata; i++) {
		if (strcmp(hd->metadata[i].key, LAYOUT_CONTRADICTED) != 0)
			continue;
		for (size_t k = 0; k < 2; k++) {
			if (strcmp(warned[k], path) == 0)
				return;
			if (!warned[k][0]) {
				snprintf(warned[k], sizeof(warned[k]), "%s",
					 path);
				break;
			}
		}
		warning_msg("%s: --hprof-compressed-oops %s contradicts the "
			    "dump's addresses: %s; sizes follow the layout "
			    "given", path,
			    opts && opts->compressed_oops ==
					    HT_COMPRESSED_OOPS_YES ? "yes"
								   : "no",
			    hd->metadata[i].value);
		return;
	}
}

struct ht_reader *open_trace(const char *path,
			     const struct ht_reader_options *opts)
{
	struct ht_error err;
	struct ht_reader *r = ht_reader_open_with(path ? path : DEFAULT_TRACE,
						  opts, &err);

	if (!r)
		error_msg("%s", err.message);
	else
		warn_layout_given(r, opts);
	return r;
}

struct progress {
	const char *what;
	const char *path;
	uint64_t size;
	struct timespec last;
	bool shown;
};

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) +
	       (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

struct progress *progress_start(const char *what, const char *path)
{
	struct progress *p;
	struct stat st;

	if (!isatty(STDERR_FILENO))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->what = what;
	p->path = path;
	if (path && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		p->size = (uint64_t)st.st_size;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
	return p;
}

void progress_show(struct progress *p, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!p)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one write, so that the terminal never shows half a line */
	fprintf(stderr, "\r%s: %s\033[K", p->what, line);
	p->shown = true;
}

void progress_update(struct progress *p, uint64_t events, uint64_t offset)
{
	if (!p || (events & 0xfff) || seconds_since(&p->last) < 0.25)
		return;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
	if (p->size)
		progress_show(p, "%llu events, %.0f%%",
			      (unsigned long long)events,
			      100.0 * (double)offset / (double)p->size);
	else
		progress_show(p, "%llu events", (unsigned long long)events);
}

void progress_end(struct progress *p)
{
	if (!p)
		return;
	if (p->shown)
		fputs("\r\033[K", stderr);
	free(p);
}
