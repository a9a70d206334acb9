/*
 * say.h - a recorder's messages to the user of `heaptrace record`, on
 * the program's standard error: "heaptrace: WHO recorder: message", the
 * words of record's own (heaptrace-record(1), DIAGNOSTICS). A recorder
 * that has another listener (the JVMTI agent attached by record --pid,
 * whose standard error is the JVM's) gets each message handed to it too. That
 * the trace could not be written goes to `record` by report.h besides.
 */
#ifndef HT_RECORDERS_SAY_H
#define HT_RECORDERS_SAY_H

/* Names the recorder in its messages ("mono", "clr", "java"), and a
 * function that gets each message as well (NULL: none). At load, before
 * the first message. */
void say_as(const char *who, void (*also)(const char *message));

/* One line on standard error, and to the other listener. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line on standard error alone. */
void say_here(const char *message);

#endif
