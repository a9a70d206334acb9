/*
 * load-dump.c - the input side of the analysis commands (load-dump.h):
 * the FILE operand, inputs read twice, and loading the chosen dump.
 */
#include "cli/load-dump.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int trace_operand(const char *cmd, int argc, char **argv, const char **path)
{
	if (argc - optind > 1)
		return usage_error(cmd, "one FILE at most");
	*path = optind < argc ? argv[optind] : DEFAULT_TRACE;
	return EXIT_DONE;
}

/* ---- inputs read more than once ------------------------------------------ */

static bool is_stdin(const char *path)
{
	return strcmp(path, "-") == 0;
}

/* Where standard input started when first opened: rewinding to 0 would be
 * wrong for `(head -c 10 >/dev/null; heaptrace stats -) < FILE`. */
static off_t stdin_origin = -1;
static bool stdin_opened;

/* Copies f to a temporary file, unlinked, that becomes standard input. */
static int spool_to_stdin(FILE *f, const char *name)
{
	char buf[1 << 16];
	FILE *tmp = tmpfile();
	size_t n;

	if (!tmp) {
		error_msg("%s: cannot make a temporary copy: %m", name);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (fwrite(buf, 1, n, tmp) != n)
			break;
	}
	if (ferror(f) || ferror(tmp) || fflush(tmp) != 0 ||
	    dup2(fileno(tmp), STDIN_FILENO) < 0) {
		error_msg("%s: cannot make a temporary copy: %m", name);
		fclose(tmp);
		return -1;
	}
	fclose(tmp);
	clearerr(stdin);
	if (fseeko(stdin, 0, SEEK_SET) != 0) {
		error_msg("%s: cannot read the temporary copy: %m", name);
		return -1;
	}
	return 0;
}

int input_prepare(struct input *in, const char *path,
		  const struct ht_reader_options *opts)
{
	struct stat st;
	FILE *f;
	int rc;

	in->name = path;
	in->open_path = path;
	in->options = opts;
	if (is_stdin(path)) {
		if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
		return spool_to_stdin(stdin, "standard input");
	}
	/* a file that is missing or a directory is reported when opened */
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return 0;
	f = fopen(path, "rb");
	if (!f)
		return 0;
	rc = spool_to_stdin(f, path);
	fclose(f);
	in->open_path = "-";
	return rc;
}

struct ht_reader *input_open(const struct input *in)
{
	if (is_stdin(in->open_path)) {
		if (!stdin_opened) {
			stdin_origin = ftello(stdin);
			stdin_opened = true;
		} else if (stdin_origin >= 0) {
			clearerr(stdin);
			if (fseeko(stdin, stdin_origin, SEEK_SET) != 0) {
				error_msg("%s: cannot read it again: %m",
					  in->name);
				return NULL;
			}
		}
	}
	return open_trace(in->open_path, in->options);
}

/* ---- the dump ------------------------------------------------------------ */

void warn_damage(const struct ht_error *err)
{
	warning_msg("%s; the analysis covers the events before the damage",
		    err->message);
}

void warn_dump_quality(const char *path, const struct heap *h)
{
	if (!h->complete)
		warning_msg("%s: dump %llu is incomplete: the trace ends "
			    "inside it", path, (unsigned long long)h->dump);
	if (h->aborted)
		warning_msg("%s: dump %llu was aborted by the profiler: "
			    "objects may be missing", path,
			    (unsigned long long)h->dump);
}

int analysis_status(bool damaged)
{
	return damaged ? EXIT_UNREADABLE : EXIT_DONE;
}

int no_such_dump(const char *path, int64_t select, uint64_t dumps,
		 bool damaged)
{
	const char *before = damaged ? " before the damage" : "";
	char buf[48];

	if (dumps == 0) {
		error_msg("%s: no heap dump in this trace%s", path, before);
		return EXIT_UNREADABLE;
	}
	error_msg("%s has %s%s; there is no dump %lld", path,
		  count_of(dumps, "dump", "dumps", buf), before,
		  (long long)select);
	return damaged ? EXIT_UNREADABLE : EXIT_USAGE;
}

struct scan {
	struct heap *heap;
	struct heap_scan_report report;
	bool damaged;
	struct ht_error err;
};

static int keep_dump(void *ctx, struct heap *h, bool *keep)
{
	struct scan *s = ctx;

	if (s->heap)
		heap_free(s->heap);
	s->heap = h;
	*keep = true;
	return 0;
}

/* One pass for one dump. EXIT_DONE (damage is not a failure: what came
 * before it is used), or EXIT_UNREADABLE once said why. */
static int scan_for(const struct input *in, int64_t select, struct scan *s)
{
	struct ht_reader *r = input_open(in);
	int rc;

	memset(s, 0, sizeof(*s));
	if (!r)
		return EXIT_UNREADABLE;
	rc = heap_scan(r, select, keep_dump, s, &s->report, &s->err);
	ht_reader_close(r);
	if (rc == 0)
		return EXIT_DONE;
	if (rc == -1 && s->report.read_error) {
		s->damaged = true;
		return EXIT_DONE;
	}
	error_msg("%s", s->err.message);
	if (s->heap)
		heap_free(s->heap);
	s->heap = NULL;
	return EXIT_UNREADABLE;
}

/* The last dump is incomplete (the trace ends inside it): the one before
 * it, when complete, says more. Keeps s as it is otherwise. */
static void prefer_complete_dump(const struct input *in, struct scan *s)
{
	struct scan before;

	if (!s->heap || s->heap->complete || s->heap->dump == 0)
		return;
	if (scan_for(in, (int64_t)s->heap->dump - 1, &before) != EXIT_DONE)
		return;
	if (before.heap && before.heap->complete) {
		warning_msg("%s: dump %llu is incomplete (the trace ends inside "
			    "it): analyzing dump %llu, the last complete one",
			    in->name, (unsigned long long)s->heap->dump,
			    (unsigned long long)before.heap->dump);
		heap_free(s->heap);
		s->heap = before.heap;
	} else if (before.heap) {
		heap_free(before.heap);
	}
}

int load_dump(const char *path, const struct ht_reader_options *opts,
	      int64_t select, struct loaded_dump *ld)
{
	struct input in;
	struct scan s;
	int status;

	memset(ld, 0, sizeof(*ld));
	ld->path = path;
	/* a pipe too must be able to fall back on the dump before the last,
	 * or the answer would depend on how the input was given */
	if (input_prepare(&in, path, opts) < 0)
		return EXIT_UNREADABLE;
	status = scan_for(&in, select, &s);
	if (status != EXIT_DONE)
		return status;
	if (s.damaged)
		warn_damage(&s.err);
	if (select == HEAP_LAST_DUMP)
		prefer_complete_dump(&in, &s);
	if (!s.heap)
		return no_such_dump(path, select, s.report.dumps, s.damaged);
	warn_dump_quality(path, s.heap);
	ld->heap = s.heap;
	ld->damaged = s.damaged;
	return EXIT_DONE;
}

void unload_dump(struct loaded_dump *ld)
{
	if (ld->heap)
		heap_free(ld->heap);
	ld->heap = NULL;
}
