/*
 * trace.h - opening and closing a recorder's trace: the header every
 * recorder writes (its command line, start time, pointer size), the
 * messages when the trace cannot be opened or closed (said, and reported
 * to `heaptrace record`: report.h), and the close that waits for the
 * callbacks in flight (guard.h).
 */
#ifndef HT_RECORDERS_TRACE_H
#define HT_RECORDERS_TRACE_H

#include "recorders/core/guard.h"
#include "recorders/core/options.h"

#include <heaptrace/record.h>

#include <stddef.h>

/* A recorder's trace, as the Mono and CLR recorders hold it. This struct
 * is not an API; it may change from one release to the next. */
struct rec_trace {
	struct ht_recorder *rec;
	char *output;           /* its path, for messages */
	struct rec_guard guard;
};

/* Opens path with header h, whose runtime, runtime_version,
 * reports_survivors and metadata the caller gives: the rest (format
 * version, pointer size, command line, start time) is filled here. NULL
 * when it cannot be opened: then said and reported. */
struct ht_recorder *trace_open(const char *path, struct ht_header *h,
			       const struct ht_record_options *ro);

/* The metadata of the Mono and CLR recorders: recorder, dump_on, every,
 * allocations, pid and, when values is not NULL, values (what the dumps'
 * values are), last. This struct is not an API; it may change from one
 * release to the next. */
struct trace_metadata {
	char every[24], pid[24];
	struct ht_metadata m[7]; /* and attached, which the CLR adds */
	size_t n;
};
void trace_metadata_of(struct trace_metadata *tm, const char *recorder,
		       const struct rec_options *o, const char *values);

/* Closes rec: false when that failed (said, and reported). */
bool trace_close_recorder(struct ht_recorder *rec);

/* For the one that closed t's guard (guard_close): waits a little for the
 * callbacks still recording, then calls stats (NULL: none) and closes the
 * trace. A thread stuck in a callback keeps the recorder: what was
 * written stays readable without the index. */
void trace_finish(struct rec_trace *t, void (*stats)(void));

/* "s" unless n is 1: the plural of the recorders' statistics. */
const char *plural_s(unsigned long long n);

#endif
