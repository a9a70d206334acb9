/*
 * load-dump.h - what the analysis commands (stats, top, object, paths)
 * share about their input, on the CLI's side: the FILE operand,
 * --max-memory, and the dump session (analysis/session.h: opening an
 * input that may be read twice, picking and loading the dump, reading it
 * again for labels) said in the words and exit statuses of heaptrace(1):
 * a damaged trace is analyzed up to the damage, with a warning, and exits
 * 3; a trace without dumps exits 3; a --dump past the last exits 2.
 */
#ifndef HT_LOAD_DUMP_H
#define HT_LOAD_DUMP_H

#include "cli/cli.h"
#include "cli/parse-options.h"

#include "analysis/heap.h"
#include "analysis/session.h"
#include "analysis/sites.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * --max-memory SIZE: the most memory an input may cost (util/membudget.h),
 * for every analysis command; by default MEM_BUDGET_RATIO times the
 * input's size, at least 1 GiB, at most three quarters of the machine's
 * memory (heaptrace(1)). An option_parser; the limit is the process's.
 */
int parse_max_memory_option(const char *cmd, const char *arg, void *unused);
#define OPT_MAX_MEMORY() \
	OPT_CALLBACK(0, "max-memory", "SIZE", NULL, parse_max_memory_option, \
		     "the most memory the input may cost (default: 64\n" \
		     "times its size, at least 1 GiB, at most 3/4 of RAM)")

/* Sets the memory budget for the input at path (--max-memory, or the
 * default for its size; a stream counts as empty). For a command that
 * reads its input once, without input_prepare. */
void set_input_budget(const char *path);

/* The FILE operand: NULL (use DEFAULT_TRACE) or the one given; more than
 * one is a usage error. EXIT_DONE, or EXIT_USAGE once said. */
int trace_operand(const char *cmd, int argc, char **argv, const char **path);

/* ---- the session, in heaptrace(1)'s words ------------------------------- */

/*
 * The dump session (analysis/session.h) spoken through this CLI: its
 * messages are error_msg's and warning_msg's, a trace is opened by
 * open_trace, and --max-memory sets its budget.
 */
extern const struct session_voice cli_voice;

/* session_input_prepare with cli_voice: 0, or -1 once said why the copy
 * failed. opts must outlive in, which input_release frees. The rest of
 * an input's life is session.h's (input_open, input_end_pass, ...). */
int input_prepare(struct input *in, const char *path,
		  const struct ht_reader_options *opts);

/*
 * Loads the graph of dump `select` (a number, or HEAP_LAST_DUMP: the last
 * dump, or the one before it when the trace ends inside the last) of the
 * trace at path, read with opts (dump_load with cli_voice). Returns
 * EXIT_DONE with ld->heap set, or the exit status once said why not: 3
 * for a trace that cannot be read or has no dumps, 2 for a --dump past
 * the last of a sound trace.
 */
int load_dump(const char *path, const struct ht_reader_options *opts,
	      int64_t select, struct loaded_dump *ld);
/* load_dump, keeping the input for reload_for_labels and
 * reload_for_values until unload_dump. */
int load_dump_to_label(const char *path, const struct ht_reader_options *opts,
		       int64_t select, struct loaded_dump *ld);
/* Frees the graph and the input kept (dump_unload). */
void unload_dump(struct loaded_dump *ld);

/* dump_reload_values for the labels of objects[0..n) (top, paths), or
 * for one object's own values and what its text reads (object):
 * EXIT_DONE, or EXIT_UNREADABLE once said why not (ld->heap is then
 * NULL). */
int reload_for_labels(struct loaded_dump *ld, const uint32_t *objects,
		      size_t n);
int reload_for_values(struct loaded_dump *ld, uint32_t object);

/* Says that the trace at path has no allocation stacks (it was recorded
 * without --sites) and returns the exit status: 1, or 3 when the trace
 * is damaged (its stacks may lie past the damage). */
int no_allocation_stacks(const char *path, bool damaged);

/*
 * With --sites (top, paths): the frame that allocated each of the
 * objects[0 .. n) of ld's dump (loaded keeping its input), into *by
 * (malloc'ed, n entries; a frame with method NULL and id 0 when none),
 * pointing into s (sites_allocating_frames). EXIT_DONE, or the exit
 * status once said why not.
 */
int read_allocating_frames(struct loaded_dump *ld, const char *path,
			   const uint32_t *objects, size_t n, struct sites *s,
			   struct site_frame **by);

/* The exit status of an analysis that did its work on ld's trace. */
int analysis_status(bool damaged);

/* Says why dump `select` was not found in a trace in which a replay saw
 * `dumps` dumps; returns the exit status. */
int no_such_dump(const char *path, int64_t select, uint64_t dumps,
		 bool damaged);

/* Says why an analysis of path's dump failed: the memory budget's refusal
 * (--max-memory) names the input, as the graph's does. */
void analysis_failed(const char *path, const struct ht_error *err);

/* session_warn_damage and session_warn_dump_quality with cli_voice. */
void warn_damage(const struct ht_error *err);
void warn_dump_quality(const char *path, const struct heap *h);

#endif
