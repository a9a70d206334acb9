/*
 * record.h - `heaptrace record` and the runtimes it can record: what the
 * command (builtin-record.c) shares with each runtime's part (record-*.c).
 *
 * A runtime part recognizes its command line and arranges for its recorder
 * to be loaded into the program: by editing the argument vector (an agent
 * option), the environment (options the runtime reads from it), or both.
 * The command then runs the program, waits for it, passes its exit status
 * on, and checks that a trace was written.
 */
#ifndef HT_RECORD_H
#define HT_RECORD_H

#include <heaptrace/trace.h>

#include "recorders/core/options.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* This struct is not an API; it may change from one release to the next. */
struct record_options {
	const char *output;   /* absolute path of the trace to write */
	enum dump_on dump_on;
	unsigned every;       /* dump at every Nth collection that qualifies */
	bool allocations;     /* record allocations too */
	bool values;          /* dumps carry values: Java's fields and arrays,
				 strings' text on Mono and the CLR */
	bool sites;           /* allocation stacks (--sites) */
	uint64_t sites_interval; /* as struct rec_options has it */
	/* the recorder's end of the channel on which it says that the trace
	 * could not be written (recorders/report.h); -1: none */
	int report_fd;
};


/* This struct is not an API; it may change from one release to the next. */
/*
 * Changes to the program's environment: each variable set to a value, or
 * unset (value NULL). A variable changed with env_override is also saved
 * for the recorder to put back once it is loaded: HEAPTRACE_RESTORE lists
 * such variables, HEAPTRACE_SAVED_<NAME> holds each one's old value
 * (absent when it was unset) and HEAPTRACE_SET_<NAME> the value set here,
 * so that programs the recorded one starts are not recorded into the same
 * trace, and what a wrapper script between added is kept
 * (recorders/restore.h).
 */
struct env_var {
	char *name;
	char *value;
};

/* This struct is not an API; it may change from one release to the next. */
struct env_edit {
	size_t n, cap;
	struct env_var *vars;
};

/* 0, or -1 when out of memory. */
int env_set(struct env_edit *e, const char *name, const char *value);
int env_override(struct env_edit *e, const char *name, const char *value);
/* The value the program will see: as edited so far, else as inherited. */
const char *env_value(const struct env_edit *e, const char *name);
void env_free(struct env_edit *e);
/* WORD added to the variable's value as the program would see it, after
 * it (or before, with PREPEND) with SEP between; the value is WORD when
 * there is none. Changed with env_override: the recorder puts the old
 * value back. 0, or -1 when out of memory. */
int env_append(struct env_edit *env, const char *name, const char *word,
	       const char *sep, bool prepend);
/* HEAPTRACE_REPORT_FD set to FD (with env_override), nothing when FD is
 * -1. 0, or -1 when out of memory. */
int env_report_fd(struct env_edit *e, int fd);

/* Inserts a copy of ARG at position AT of the NULL-terminated vector
 * *argv (malloc'ed, owned by the command). 0, or -1 when out of memory. */
int argv_insert(char ***argv, size_t at, const char *arg);

/*
 * Finds FILE, a recorder's shared object, into path[len]. Looks, in order:
 * in $HEAPTRACE_RECORDER_DIR (and nowhere else when it is set); in the
 * build tree, src/recorders/SUBDIR next to the src/cli holding this
 * heaptrace; in the library directory of the installation this heaptrace
 * belongs to (BINDIR/../LIBDIR); in the library directory it was
 * configured for. 0 when found; -1 with a message naming every place
 * looked at otherwise.
 */
int find_recorder(const char *subdir, const char *file, char *path,
		  size_t len, struct ht_error *err);

/* This struct is not an API; it may change from one release to the next. */
struct runtime_recorder {
	const char *name;  /* "mono", "java", "dotnet": for messages */
	/* How the runtime takes a recorder it cannot load: the second line
	 * of the message that says no trace came out. */
	const char *not_loaded;
	bool records_allocations;  /* honours --allocations */
	/* Is argv (the program's command line) one of this runtime's? */
	bool (*recognizes)(char **argv);
	/* Refuses, before anything runs, a command line that cannot record
	 * what its user means (a missing program, a command of the runtime's
	 * tools rather than a program, an environment that keeps the recorder
	 * out): says why, and returns the exit status; 0 to go on. NAMED:
	 * --runtime named the runtime. NULL: nothing refused. */
	int (*refuses)(char **argv, bool named);
	/* Arranges the loading of the recorder with the options: may replace
	 * *argv (see argv_insert) and add to env. 0, or -1 with err filled
	 * (the recorder cannot be found, no memory). */
	int (*prepare)(const struct record_options *o, char ***argv,
		       struct env_edit *env, struct ht_error *err);
};

extern const struct runtime_recorder mono_recorder;
extern const struct runtime_recorder java_recorder;
extern const struct runtime_recorder clr_recorder;

/* What the runtime parts ask of a command line. */
const char *command_base_name(const char *path);
bool has_suffix(const char *s, const char *suffix);
bool regular_file(const char *path);
/* The executable that running NAME runs, into out[len]: NAME itself when
 * it has a slash, else the first one of that name on PATH. */
bool resolve_command(const char *name, char *out, size_t len);

/* After the recording: says what the trace at output holds (unless quiet)
 * and returns 0, or says why there is none to speak of (missing,
 * unreadable, empty; end tells how the program ended, "exited with status
 * 1") and returns -1. */
int record_check_trace(const char *output, const struct runtime_recorder *rt,
		       const char *end, bool quiet);

/* This struct is not an API; it may change from one release to the next. */
/* The line on a terminal that shows what the trace at path holds so far
 * ("heaptrace record: 3 GCs, 1 dump, 2.0 MB written"): tick it as often
 * as you like, it looks at the trace when it has grown, and not more often
 * than reading it allows. */
struct progress_line {
	struct progress *line;  /* NULL when stderr is not a terminal */
	double next;            /* when to look again */
	uint64_t last_bytes;
};
void record_progress_tick(struct progress_line *p, const char *path);

/* heaptrace record --pid (record-attach.c): records the running JVM pid
 * into o->output until SIGINT or SIGTERM, duration seconds (unless 0) or
 * the JVM's exit. The exit status. */
int record_attach(const struct record_options *o, pid_t pid, double duration,
		  bool quiet);

/* Fills err with code HT_E_INVALID and a formatted message; returns -1. */
int record_error(struct ht_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
