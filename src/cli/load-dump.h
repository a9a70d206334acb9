/*
 * load-dump.h - what the analysis commands (stats, top, object, paths)
 * share about their input: the FILE operand, opening an input that may be
 * read twice (standard input included), loading the graph of the chosen dump,
 * and saying what is wrong in the words and exit statuses of heaptrace(1):
 * a damaged trace is analyzed up to the damage, with a warning, and exits
 * 3; a trace without dumps exits 3; a --dump past the last exits 2.
 */
#ifndef HT_LOAD_DUMP_H
#define HT_LOAD_DUMP_H

#include "cli/cli.h"
#include "cli/parse-options.h"

#include "analysis/heap.h"
#include "lib/read/pass_log.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

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

/* ---- inputs read more than once ----------------------------------------- */

/*
 * An input that can be read more than once. A stream (a pipe on standard
 * input, or a named one such as the shell's <(...)) is first copied to a
 * temporary file that becomes standard input; the reader's messages then
 * call it "-". A file is the same file each time it is opened, or it is
 * refused ("the file changed while it was read"), as the HPROF reader
 * refuses a dump that changes under it: a trace replaced between two
 * passes would otherwise give an answer made of two traces.
 */
struct input {
	const char *name;       /* FILE as given: for messages and reports */
	const char *open_path;  /* what the reader opens: name, or "-" */
	const struct ht_reader_options *options; /* the command's */
	bool known;             /* the file was there when prepared: */
	dev_t dev;              /* which file it was, */
	ino_t ino;
	off_t size;             /* and what it held */
	struct timespec mtime;
	struct pass_log log;    /* the chunks each pass read (pass_log.h) */
};

/* 0, or -1 once said why the copy failed. opts must outlive in, which
 * input_release frees. */
int input_prepare(struct input *in, const char *path,
		  const struct ht_reader_options *opts);
void input_release(struct input *in);
/* open_trace, from the start of the input each time; NULL (once said why)
 * when it cannot be opened or is no longer the file input_prepare saw. */
struct ht_reader *input_open(struct input *in);
/*
 * After a pass: whether the input changed while it was read (its size or
 * time, or, for a .ht file, a chunk other than the first pass read at the
 * same offset: pass_log.h); input_end_pass says so ("the file changed
 * while it was read") and returns -1, which the caller makes exit 3, the
 * pass's answer thrown away.
 */
bool input_changed(const struct input *in);
int input_end_pass(const struct input *in);

/* ---- the dump ------------------------------------------------------------ */

struct loaded_dump {
	const char *path;     /* for messages */
	struct heap *heap;
	bool damaged;         /* the trace is damaged: exit 3 when done */
	/* the input holds values the graph did not keep: an HPROF dump
	 * read without them, or a trace whose objects carried some */
	bool values_unread;
	bool has_input;       /* load_dump_to_label's: */
	struct input in;      /* kept for reload_dump */
	struct ht_reader_options reading; /* the command's, reading ahead */
};

/*
 * Loads the graph of dump `select` (a number, or HEAP_LAST_DUMP: the last
 * dump, or the one before it when the trace ends inside the last) of the
 * trace at path, read with opts; with opts->values the graph keeps the
 * objects' values too (heap_scan_options). Warns on standard error about damage and
 * about a dump that is incomplete or aborted. Returns EXIT_DONE with
 * ld->heap set, or the exit status once said why not.
 */
int load_dump(const char *path, const struct ht_reader_options *opts,
	      int64_t select, struct loaded_dump *ld);
/* load_dump, keeping the input for reload_dump and reload_for_labels
 * until unload_dump. */
int load_dump_to_label(const char *path, const struct ht_reader_options *opts,
		       int64_t select, struct loaded_dump *ld);
/* Frees the graph and the input kept. */
void unload_dump(struct loaded_dump *ld);

/*
 * Reads ld's dump (load_dump_to_label's) again, with the reader's values
 * on and the graph built with scan (heap_scan_options: values,
 * values_of), in place of ld->heap, which is freed first so that the two
 * graphs never take memory at once. The same dump of the same input (a
 * stream was copied by load_dump), so its objects have the same indices:
 * a dump gone or with another count of objects is a file that changed,
 * said so. Nothing is warned about again. EXIT_DONE, or the exit status
 * once said why not (ld->heap is then NULL).
 */
int reload_dump(struct loaded_dump *ld,
		const struct heap_scan_options *scan);

/*
 * For the commands that label a few objects (top, paths): reads ld's dump
 * again (reload_dump) keeping values only for the objects whose values
 * the labels of objects[0..n) read (labels.h, object_label_sources), when
 * there are any; ld->heap, loaded without values, is kept otherwise. The
 * objects keep their indices. An input without values is not read again
 * (values_unread). Values for every object would cost a third
 * more memory on a dump where each has its own, and more time than the
 * second read (doc/design.md, labels). EXIT_DONE, or the exit status once
 * said why not (ld->heap is then NULL).
 */
int reload_for_labels(struct loaded_dump *ld, const uint32_t *objects,
		      size_t n);
/* The same for a command that shows one object's values (object): the
 * object's own and what its text reads. */
int reload_for_values(struct loaded_dump *ld, uint32_t object);

/* The exit status of an analysis that did its work on ld's trace. */
int analysis_status(bool damaged);

/* What an input's reader says before it is read: a Java heap dump
 * (HPROF: values only when asked for, and no GC), or a trace whose index
 * counts no GC. */
bool reads_heap_dump(struct ht_reader *r);
bool index_counts_no_gc(struct ht_reader *r);

/* Says why dump `select` was not found in a trace in which a replay saw
 * `dumps` dumps; returns the exit status. */
int no_such_dump(const char *path, int64_t select, uint64_t dumps,
		 bool damaged);

/* Says why an analysis of path's dump failed: the memory budget's refusal
 * (--max-memory) names the input, as the graph's does. */
void analysis_failed(const char *path, const struct ht_error *err);

/* Warns about what was lost, once per damaged trace. */
void warn_damage(const struct ht_error *err);
/* Warns about a dump that is incomplete or aborted. */
void warn_dump_quality(const char *path, const struct heap *h);

#endif
