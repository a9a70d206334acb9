/*
 * record-attach.h - what the two halves of `heaptrace record --pid`
 * share: record-attach.c (the checks, the control socket, the relay, the
 * JVM) and record-attach-clr.c (the .NET process, through the runtime's
 * diagnostics IPC).
 */
#ifndef HT_CLI_RECORD_ATTACH_H
#define HT_CLI_RECORD_ATTACH_H

#include "cli/record.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum attach_runtime { RUNS_NEITHER, RUNS_JVM, RUNS_CLR };

/* heaptrace's side of the control socket (recorders/core/control.h). This
 * struct is not an API; it may change from one release to the next. */
struct control {
	struct progress_line *progress; /* NULL until recording */
	const char *who;  /* the recorder, in its messages: "java", "clr" */
	char dir[PATH_MAX];
	char path[PATH_MAX];
	int listen_fd;
	int fd;           /* the recorder's connection, -1 before */
	char line[1024];  /* a message of the recorder's, as far as it came */
	size_t len;
};

/* The recorder's connection, waiting up to timeout_ms for it; 0 or -1. */
int control_accept(struct control *ctl, int timeout_ms);
/* Removes the socket's file and directory. */
void control_unlink(struct control *ctl);
/* Reads and shows what the recorder sent; false at the end of the
 * stream. */
bool control_read(struct control *ctl);

/* The first line of /proc/PID/FILE that starts with key, after the key,
 * into out[len]; false when there is none. */
bool proc_field(pid_t pid, const char *file, const char *key, char *out,
		size_t len);

/* record-attach-clr.c: 0 when the .NET process pid (name, for messages)
 * takes a profiler through its diagnostics IPC; -1 after saying why not. */
int clr_check_target(pid_t pid, const char *name);
/* Loads the CoreCLR profiler into pid and takes its connection on ctl; 0,
 * or -1 after saying why. */
int clr_load_profiler(pid_t pid, const struct record_options *o,
		      struct control *ctl);

#endif
