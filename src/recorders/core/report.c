/*
 * report.c - the channel from a recorder to `heaptrace record` (report.h).
 */
#include "recorders/core/report.h"

#include <heaptrace/record.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int channel = -1;
static atomic_bool sent;

void report_channel_open(const char *text)
{
	struct stat st;
	char *end;
	long fd;

	if (!text || !*text)
		return;
	errno = 0;
	fd = strtol(text, &end, 10);
	if (errno || *end || fd < 0 || fd > INT_MAX)
		return;
	/* only the socket `record` made: a number inherited by some other
	 * way may name any file by now */
	if (fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return;
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	channel = (int)fd;
}

void report_failure(const char *message)
{
	char line[1024];
	size_t n;

	if (channel < 0 || atomic_exchange(&sent, true))
		return;
	/* one send, a short line: no other cuts into it. Never SIGPIPE
	 * (a `record` that is gone must not kill the program) and never
	 * wait (one that does not read must not stop it). */
	n = (size_t)snprintf(line, sizeof(line), "%s\n", message);
	if (n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	while (send(channel, line, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
	       errno == EINTR)
		;
}

void report_if_failed(const struct ht_recorder *rec)
{
	struct ht_error err;

	if (channel < 0 || atomic_load(&sent) || !rec)
		return;
	if (ht_recorder_error(rec, &err) != HT_OK)
		report_failure(err.message);
}
