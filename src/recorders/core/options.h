/*
 * options.h - the one option grammar of the recorders, and the dump modes
 * it names: what `heaptrace record` writes (rec_options_format) and each
 * recorder reads back (rec_parse_options, rec_parse_agent_options):
 *
 *   mono --profile=heaptrace:ARGS           (the Mono module)
 *   HEAPTRACE_CLR_OPTIONS=ARGS              (the CoreCLR profiler)
 *   -agentpath:libheaptrace-jvmti.so=ARGS   (the JVMTI agent; jcmd PID
 *                                            JVMTI.agent_load ... ARGS)
 *
 * ARGS is a comma-separated list of KEY=VALUE and bare words:
 * dump-on=WHEN (major, every-gc, exit, signal: heaptrace record
 * --dump-on), every=N, alloc, values, sites[=BYTES|all], verbose,
 * control=SOCKET, report=FD,
 * output=FILE. output= takes everything after it to the end of the
 * string, commas included, so that any path can be given: it goes last.
 * Each recorder takes the keys it has a use for (struct rec_grammar);
 * the others are unknown to it.
 *
 * One place knows the keys, so that `record` and the recorders cannot
 * come to spell them differently. The one header of src/recorders that
 * src/cli includes (tools/check-layers.py): it needs only libc. Parsing
 * runs once, at load, before the runtime starts: it may allocate.
 */
#ifndef HT_RECORDERS_OPTIONS_H
#define HT_RECORDERS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When a recorder dumps the heap, besides at exit (heaptrace-record(1),
 * record). */
enum dump_on {
	DUMP_ON_MAJOR,     /* at major (full) collections */
	DUMP_ON_EVERY_GC,  /* after every collection */
	DUMP_ON_EXIT,      /* when the program exits */
	DUMP_ON_SIGNAL,    /* when the program gets SIGUSR1 */
};

/* "major", "every-gc", "exit", "signal"; "?" for another value. */
const char *dump_on_name(enum dump_on d);

/* The mode spelled by the n bytes at s (not NUL-terminated): 0 and *out
 * set, or -1 when they spell none. */
int dump_on_parse(const char *s, size_t n, enum dump_on *out);

/* sites= values besides a number of bytes. */
#define REC_SITES_ALL 0
#define REC_SITES_DEFAULT UINT64_MAX
/* The most a sampling interval may be: 1 TiB. */
#define REC_SITES_INTERVAL_MAX (1ull << 40)

/* The trace's name when neither output= nor `record` gives one. */
#define REC_DEFAULT_OUTPUT "heaptrace.ht"

/* A recorder's options, parsed. This struct is not an API; it may change
 * from one release to the next. */
struct rec_options {
	enum dump_on dump_on;
	unsigned every;       /* walk at every Nth qualifying collection */
	bool allocations;     /* alloc: record object_allocated */
	bool values;          /* strings' contents, Java's fields and arrays
				 (heaptrace-record(1), --values) */
	/* sites[=INTERVAL|all]: allocation stacks, sampled on average once
	 * per sites_interval bytes allocated; REC_SITES_ALL every
	 * allocation's, REC_SITES_DEFAULT the runtime's own interval */
	bool sites;
	uint64_t sites_interval;
	bool verbose;         /* a line on stderr per dump */
	char *output;         /* malloc'ed; NULL: the caller picks a default */
	/* Attached (heaptrace record --pid): the Unix socket heaptrace
	 * listens on, which says when to dump and when to stop; malloc'ed,
	 * NULL when not given. */
	char *control;
	/* report=FD: the descriptor of `heaptrace record`'s channel
	 * (recorders/core/report.h), digits; "" when not given */
	char report[16];
};

/* Parses ARGS (NULL or "" for the defaults) as the Mono and CLR recorders
 * take them: dump-on=, every=, alloc, values, output=. 0 on success; -1
 * with a message in err otherwise. */
int rec_parse_options(const char *args, struct rec_options *o, char *err,
		      size_t errlen);
/* As the JVMTI agent takes them: dump-on=, every=, verbose, values,
 * control=, report=, output=; output defaults to REC_DEFAULT_OUTPUT. */
int rec_parse_agent_options(const char *args, struct rec_options *o,
			    char *err, size_t errlen);
void rec_free_options(struct rec_options *o);

/* What `heaptrace record` asks of a recorder, to be written as ARGS. This
 * struct is not an API; it may change from one release to the next. */
struct rec_request {
	enum dump_on dump_on;
	unsigned every;       /* 0 taken as 1 */
	bool allocations;
	bool values;
	bool sites;
	uint64_t sites_interval; /* as struct rec_options has it */
	const char *control;  /* NULL: none */
	int report_fd;        /* -1: none */
	const char *output;   /* NULL: none (the recorder's default) */
};

/* ARGS for r: "dump-on=WHEN,every=N[,alloc][,values][,sites[=INTERVAL|all]]
 * [,control=SOCKET]
 * [,report=FD][,output=FILE]"; malloc'ed, NULL when out of memory. */
char *rec_options_format(const struct rec_request *r);

#endif
