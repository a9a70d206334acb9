/*
 * session.h - a dump session: what an analysis of one dump does with its
 * input before it answers. It opens an input that may be read twice
 * (standard input and pipes included), picks the dump (a number, or the
 * last, or the one before it when the trace ends inside the last), loads
 * its graph with or without values, and reads it again for the values
 * the labels of a few objects need. The HTML report and the commands
 * ask the same of it; what they print around it is theirs.
 *
 * The session speaks through its caller (struct session_voice): its
 * messages are said by the caller's error and warning, and a trace is
 * opened by the caller's open, which says why it could not be. Exit
 * statuses and the options that name these choices are the caller's.
 */
#ifndef HT_SESSION_H
#define HT_SESSION_H

#include "analysis/heap.h"
#include "lib/read/pass_log.h"

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

/*
 * How a session speaks and opens. This struct is not an API; it may
 * change from one release to the next.
 */
struct session_voice {
	void (*error)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
	void (*warning)(const char *fmt, ...)
		__attribute__((format(printf, 1, 2)));
	/* opens path with opts, or says why not and returns NULL */
	struct ht_reader *(*open)(const char *path,
				  const struct ht_reader_options *opts);
	/* the most memory an input may cost, 0 for the default of its size
	 * (session_budget); read when an input is prepared */
	const uint64_t *max_memory;
	/* progress on a long pass: begun with what reads and the input's
	 * name (NULL back when none is shown), told the events read and the
	 * offset reached, ended; each takes NULL and does nothing. The
	 * passes of history.h call them; NULL hooks show nothing. */
	void *(*progress_start)(const char *what, const char *path);
	void (*progress_update)(void *p, uint64_t events, uint64_t offset);
	void (*progress_end)(void *p);
};

/* Sets the memory budget (util/membudget.h) of an input of `bytes`:
 * max_memory when not 0, else the default for its size. */
void session_budget(uint64_t max_memory, uint64_t bytes);

/* ---- inputs read more than once ----------------------------------------- */

/*
 * An input that can be read more than once. A stream (a pipe on standard
 * input, or a named one such as the shell's <(...)) is first copied to a
 * temporary file that becomes standard input; the reader's messages then
 * call it "-". A file is the same file each time it is opened, or it is
 * refused ("the file changed while it was read"), as the HPROF reader
 * refuses a dump that changes under it: a trace replaced between two
 * passes would otherwise give an answer made of two traces. This struct
 * is not an API; it may change from one release to the next.
 */
struct input {
	const char *name;       /* FILE as given: for messages and reports */
	const char *open_path;  /* what the reader opens: name, or "-" */
	const struct ht_reader_options *options; /* the command's */
	const struct session_voice *voice;
	bool known;             /* the file was there when prepared: */
	dev_t dev;              /* which file it was, */
	ino_t ino;
	off_t size;             /* and what it held */
	struct timespec mtime;
	struct pass_log log;    /* the chunks each pass read (pass_log.h) */
};

/* 0, or -1 once said why the copy failed. opts and voice must outlive
 * in, which input_release frees. Sets the memory budget for the input's
 * size (session_budget). */
int session_input_prepare(struct input *in, const char *path,
			  const struct ht_reader_options *opts,
			  const struct session_voice *voice);
void input_release(struct input *in);
/* The voice's open, from the start of the input each time; NULL (once
 * said why) when it cannot be opened or is no longer the file
 * input_prepare saw. */
struct ht_reader *input_open(struct input *in);
/*
 * After a pass: whether the input changed while it was read (its size or
 * time, or, for a .ht file, a chunk other than the first pass read at the
 * same offset: pass_log.h); input_end_pass says so ("the file changed
 * while it was read") and returns -1, the pass's answer to be thrown
 * away.
 */
bool input_changed(const struct input *in);
int input_end_pass(const struct input *in);

/* ---- the dump ------------------------------------------------------------ */

/* This struct is not an API; it may change from one release to the
 * next. */
struct loaded_dump {
	const char *path;     /* for messages */
	struct heap *heap;
	bool damaged;         /* the trace is damaged */
	/* the input holds values the graph did not keep: an HPROF dump
	 * read without them, or a trace whose objects carried some */
	bool values_unread;
	uint64_t dumps;       /* dumps seen, when the one asked for was not */
	bool has_input;       /* kept for dump_reload: */
	struct input in;
	struct ht_reader_options reading; /* the command's, reading ahead */
};

/* What dump_load did. */
enum dump_load_result {
	DUMP_LOADED,          /* ld->heap set */
	DUMP_FAILED,          /* said why */
	DUMP_NOT_FOUND,       /* not said: ld->dumps, ld->damaged say why */
};

/*
 * Loads the graph of dump `select` (a number, or HEAP_LAST_DUMP: the last
 * dump, or the one before it when the trace ends inside the last) of the
 * trace at path, read with opts; with opts->values the graph keeps the
 * objects' values too (heap_scan_options). The next chunks inflate on a
 * second thread while the graph is built. Warns about damage and about a
 * dump that is incomplete or aborted. With keep_input, the input is kept
 * for dump_reload until dump_unload.
 */
enum dump_load_result dump_load(const char *path,
				const struct ht_reader_options *opts,
				int64_t select, bool keep_input,
				const struct session_voice *voice,
				struct loaded_dump *ld);
/* Frees the graph and the input kept. */
void dump_unload(struct loaded_dump *ld);

/*
 * Reads ld's dump (loaded with keep_input) again, with the reader's
 * values on and the graph built with scan (heap_scan_options: values,
 * values_of), in place of ld->heap, which is freed first so that the two
 * graphs never take memory at once. The same dump of the same input (a
 * stream was copied by dump_load), so its objects have the same indices:
 * a dump gone or with another count of objects is a file that changed,
 * said so. Nothing is warned about again. 0, or -1 once said why not
 * (ld->heap is then NULL).
 */
int dump_reload(struct loaded_dump *ld, const struct heap_scan_options *scan);

/*
 * For the answers that label a few objects (top, paths): reads ld's dump
 * again (dump_reload) keeping values only for the objects whose values
 * the labels of objects[0..n) read (labels.h, object_label_sources), and
 * with `own` the objects' own, when there are any; ld->heap, loaded
 * without values, is kept otherwise. The objects keep their indices. An
 * input without values is not read again (values_unread). Values for
 * every object would cost a third more memory on a dump where each has
 * its own, and more time than the second read (doc/design.md, labels).
 * 0, or -1 once said why not (ld->heap is then NULL).
 */
int dump_reload_values(struct loaded_dump *ld, const uint32_t *objects,
		       size_t n, bool own);

/* What an input's reader says before it is read: a Java heap dump
 * (HPROF: values only when asked for, and no GC), or a trace whose index
 * counts no GC. */
bool reads_heap_dump(struct ht_reader *r);
bool index_counts_no_gc(struct ht_reader *r);

struct reloc;

/*
 * After a replay of in through a relocation tracker t (rc and summary as
 * ht_replay gave them, err its error; out_of_memory: the caller's own
 * tables could not grow): ends the pass (input_end_pass), says why the
 * replay failed and returns -1, or returns 0, warning once (when
 * *damaged is still false, then set) that the input stops at damage.
 */
int session_tracked_replay_end(struct input *in, int rc,
			       const struct ht_replay_summary *summary,
			       const struct ht_error *err,
			       const struct reloc *t, bool out_of_memory,
			       bool *damaged);

/* Warns about what was lost, once per damaged trace. */
void session_warn_damage(const struct session_voice *voice,
			 const struct ht_error *err);
/* Warns about a dump that is incomplete or aborted, or whose roots were
 * not read. */
void session_warn_dump_quality(const struct session_voice *voice,
			       const char *path, const struct heap *h);

#endif
