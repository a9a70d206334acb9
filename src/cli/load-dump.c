/*
 * load-dump.c - the input side of the analysis commands (load-dump.h):
 * the FILE operand, --max-memory, and the dump session of
 * analysis/session.c given heaptrace(1)'s words and exit statuses.
 */
#include "cli/load-dump.h"

#include "cli/budget.h"
#include "cli/escape.h"

#include "util/membudget.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --max-memory's value; 0 until given */
static uint64_t max_memory;

int parse_max_memory_option(const char *cmd, const char *arg, void *unused)
{
	(void)unused;
	if (parse_size(arg, &max_memory) < 0)
		return usage_error(cmd, "--max-memory takes a size in bytes "
				   "(512MiB, 2GB)");
	return EXIT_DONE;
}

void set_input_budget(const char *path)
{
	struct stat st;
	int rc = strcmp(path, "-") == 0 ? fstat(STDIN_FILENO, &st)
					: stat(path, &st);

	session_budget(max_memory, rc == 0 && S_ISREG(st.st_mode)
					   ? (uint64_t)st.st_size : 0);
}

int trace_operand(const char *cmd, int argc, char **argv, const char **path)
{
	if (argc - optind > 1)
		return usage_error(cmd, "one FILE at most");
	*path = optind < argc ? argv[optind] : DEFAULT_TRACE;
	return EXIT_DONE;
}

/* ---- the session, in heaptrace(1)'s words ------------------------------- */

/* The terminal's progress line (cli.h) as the voice's hooks. */
static void *voice_progress_start(const char *what, const char *path)
{
	return progress_start(what, path);
}

static void voice_progress_update(void *p, uint64_t events, uint64_t offset)
{
	progress_update(p, events, offset);
}

static void voice_progress_end(void *p)
{
	progress_end(p);
}

const struct session_voice cli_voice = {
	.error = error_msg,
	.warning = warning_msg,
	.open = open_trace,
	.max_memory = &max_memory,
	.progress_start = voice_progress_start,
	.progress_update = voice_progress_update,
	.progress_end = voice_progress_end,
};

int input_prepare(struct input *in, const char *path,
		  const struct ht_reader_options *opts)
{
	return session_input_prepare(in, path, opts, &cli_voice);
}

/* ---- the dump ------------------------------------------------------------ */

void analysis_failed(const char *path, const struct ht_error *err)
{
	if (err->code == HT_E_NOMEM && mem_budget_exceeded())
		error_msg("%s: %s", path, err->message);
	else
		error_msg("%s", err->message);
}

void warn_damage(const struct ht_error *err)
{
	session_warn_damage(&cli_voice, err);
}

void warn_dump_quality(const char *path, const struct heap *h)
{
	session_warn_dump_quality(&cli_voice, path, h);
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

static int load(const char *path, const struct ht_reader_options *opts,
		int64_t select, struct loaded_dump *ld, bool keep_input)
{
	switch (dump_load(path, opts, select, keep_input, &cli_voice, ld)) {
	case DUMP_LOADED:
		return EXIT_DONE;
	case DUMP_NOT_FOUND:
		return no_such_dump(path, select, ld->dumps, ld->damaged);
	case DUMP_FAILED:
		break;
	}
	return EXIT_UNREADABLE;
}

int load_dump(const char *path, const struct ht_reader_options *opts,
	      int64_t select, struct loaded_dump *ld)
{
	return load(path, opts, select, ld, false);
}

int load_dump_to_label(const char *path, const struct ht_reader_options *opts,
		       int64_t select, struct loaded_dump *ld)
{
	return load(path, opts, select, ld, true);
}

void unload_dump(struct loaded_dump *ld)
{
	dump_unload(ld);
}

int reload_for_labels(struct loaded_dump *ld, const uint32_t *objects,
		      size_t n)
{
	return dump_reload_values(ld, objects, n, false) < 0 ? EXIT_UNREADABLE
							    : EXIT_DONE;
}

int reload_for_values(struct loaded_dump *ld, uint32_t object)
{
	return dump_reload_values(ld, &object, 1, true) < 0 ? EXIT_UNREADABLE
							   : EXIT_DONE;
}

int no_allocation_stacks(const char *path, bool damaged)
{
	error_msg("%s: no allocation has its stack in this trace (heaptrace "
		  "record --sites records them)", esc_text(path));
	return damaged ? EXIT_UNREADABLE : EXIT_FINDING;
}

int read_allocating_frames(struct loaded_dump *ld, const char *path,
			   const uint32_t *objects, size_t n, struct sites *s,
			   struct site_frame **by)
{
	ht_id *ids = malloc((n ? n : 1) * sizeof(*ids));
	enum sites_result r;

	*by = calloc(n ? n : 1, sizeof(**by));
	if (!ids || !*by) {
		free(ids);
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = heap_id(ld->heap, objects[i]);
	r = sites_allocating_frames(s, &ld->in, ld->heap->dump, ids, n, *by);
	free(ids);
	if (r == SITES_FAILED)
		return EXIT_UNREADABLE;
	if (r == SITES_NONE)
		return no_allocation_stacks(path, ld->damaged);
	return EXIT_DONE;
}
