/*
 * report.h - how a recorder tells `heaptrace record` that the trace could
 * not be written. The recorder runs inside the program, whose standard
 * error is the program's; `record` hands it one end of a socket pair
 * instead (its descriptor number in HEAPTRACE_REPORT_FD for Mono and the
 * CLR, in the agent's report= option for Java), reads what came through
 * once the program has ended, and exits 3 with it. A socket rather than a
 * pipe: a send can refuse to raise SIGPIPE. Shared by the three recorders.
 */
#ifndef HT_RECORDERS_REPORT_H
#define HT_RECORDERS_REPORT_H

/* Takes the socket whose descriptor number TEXT spells. NULL, or a number
 * that names no socket (a recorder loaded by hand): no channel, and
 * report_failure only returns. The descriptor is made close-on-exec, so
 * that programs the recorded one starts do not hold it. */
void report_channel_open(const char *text);

struct ht_recorder;

/* Sends MESSAGE (one line: the file, the offset and the cause) to
 * `heaptrace record`, if it listens. Once: the first failure is the one
 * that counts (the shim keeps it, and every later one follows from it),
 * and it may be found more than once. */
void report_failure(const char *message);

/* Sends the recording's first error, if it has met one: called after each
 * GC, outside any pause, so that record hears of it as soon as it is
 * known, even when the program is killed before it closes the trace. */
void report_if_failed(const struct ht_recorder *rec);

#endif
