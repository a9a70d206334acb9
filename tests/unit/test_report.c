/*
 * test_report.c - the channel on which a recorder tells `heaptrace record`
 * that it could not write the trace (src/recorders/report.c): a line per
 * failure reaches the other end; a descriptor that is no socket is never
 * written to; a `record` that is gone does not kill the program with
 * SIGPIPE; programs the recorded one starts do not inherit it.
 */
#include <criterion/criterion.h>

#include "recorders/report.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void fd_text(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "%d", fd);
}

/* What came through, without waiting. */
static size_t drain(int fd, char *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return n > 0 ? (size_t)n : 0;
}

/* One process, one channel: each test is its own process (criterion
 * forks), so the channel of one does not leak into the next. */
Test(report, failure_reaches_record)
{
	int sv[2];
	char text[16], got[256];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fd_text(sv[1], text, sizeof(text));
	report_channel_open(text);
	report_failure("/t/x.ht: byte 8192: cannot write: No space left on "
		       "device");
	report_failure("second");
	drain(sv[0], got, sizeof(got));
	cr_assert_str_eq(got, "/t/x.ht: byte 8192: cannot write: No space "
			 "left on device\nsecond\n");
	/* close-on-exec: a program the recorded one starts holds no end */
	cr_assert(fcntl(sv[1], F_GETFD) & FD_CLOEXEC);
}

Test(report, not_a_socket_is_left_alone)
{
	int p[2];
	char text[16], got[64];

	cr_assert_eq(pipe(p), 0);
	fd_text(p[1], text, sizeof(text));
	report_channel_open(text);
	report_failure("must not be written");
	cr_assert_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	cr_assert_lt(read(p[0], got, sizeof(got)), 1);
	cr_assert_eq(fcntl(p[1], F_GETFD) & FD_CLOEXEC, 0);
}

Test(report, no_channel_or_bad_number)
{
	report_channel_open(NULL);
	report_failure("nowhere");
	report_channel_open("");
	report_channel_open("12x");
	report_channel_open("-1");
	report_channel_open("99999999999999999999");
	report_failure("nowhere either");
}

/* `record` killed: the program goes on (SIGPIPE would end it). */
Test(report, record_gone_no_sigpipe)
{
	int sv[2];
	char text[16];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	signal(SIGPIPE, SIG_DFL);
	fd_text(sv[1], text, sizeof(text));
	report_channel_open(text);
	close(sv[0]);
	report_failure("no one listens");
	cr_assert(true, "still running");
}

/* A line longer than the buffer is cut, and still ends the line. */
Test(report, long_message_is_one_line)
{
	int sv[2];
	char text[16], msg[3000], got[2048];
	size_t n;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fd_text(sv[1], text, sizeof(text));
	report_channel_open(text);
	memset(msg, 'a', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	report_failure(msg);
	n = drain(sv[0], got, sizeof(got));
	cr_assert_eq(n, 1023);
	cr_assert_eq(got[n - 1], '\n');
	cr_assert_null(memchr(got, '\n', n - 1));
}
