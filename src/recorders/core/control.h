/*
 * control.h - a recorder's side of the control socket of `heaptrace
 * record --pid` (src/cli/record-attach.c has heaptrace's side), shared by
 * the JVMTI agent and the CoreCLR profiler, which are both attached to a
 * process that runs already:
 *
 *   heaptrace -> recorder  "dump\n" asks for a dump now; the end of the
 *                          stream (heaptrace closed its end, or died) ends
 *                          the recording: a last dump, and the trace is
 *                          closed;
 *   recorder -> heaptrace  each message of the recorder, a line; the end
 *                          of the stream once the trace is closed (at the
 *                          stop, or when the process exits).
 *
 * heaptrace listens on a Unix socket in a directory of its own, and
 * passes its path as control=SOCKET among the recorder's options; the
 * recorder connects while it is being loaded, before anything else can go
 * wrong, so that heaptrace hears of every problem: the process's standard
 * error is its own, not heaptrace's. Sends never raise SIGPIPE: a
 * heaptrace gone must not kill the process.
 */
#ifndef HT_RECORDERS_CONTROL_H
#define HT_RECORDERS_CONTROL_H

/* Connects to heaptrace's socket at path: the descriptor (close-on-exec),
 * or -1 with errno set. */
int control_channel_connect(const char *path);

/* Sends message as one line; a message too long for a line is cut. */
void control_channel_say(int fd, const char *message);

/* Reads heaptrace's requests until the end of the stream, calling
 * dump(arg) for each "dump"; a line that is no request is skipped. Blocks:
 * for a thread of the recorder's own. */
void control_channel_serve(int fd, void (*dump)(void *arg), void *arg);

/* Says message on standard error and, when heaptrace can be reached at
 * path, to it, then hangs up: a recorder that will not record. */
void control_channel_refuse(const char *path, const char *message);

#endif
