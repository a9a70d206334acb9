/*
 * test_report.c - the channel on which a recorder tells `heaptrace record`
 * that it could not write the trace (src/recorders/report.c): the first
 * failure reaches the other end, once; a descriptor that is no socket is never
 * written to; a `record` that is gone does not kill the program with
 * SIGPIPE; programs the recorded one starts do not inherit it.
 */
#include <criterion/criterion.h>

#include "recorders/core/report.h"

#include <heaptrace/record.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
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
	/* once: the first failure is the one, later ones follow from it */
	report_failure("/t/x.ht: byte 8192: cannot write: No space left on "
		       "device");
	report_failure("second");
	drain(sv[0], got, sizeof(got));
	cr_assert_str_eq(got, "/t/x.ht: byte 8192: cannot write: No space "
			 "left on device\n");
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

/* A recording that fails (its file may not grow past 1 KiB, as a full
 * disk stops it) is told as soon as it is known, before the trace is
 * closed; one that does not, never. */
Test(report, failed_recording_told_before_close)
{
	struct ht_header h = {.version = HT_FORMAT_VERSION, .runtime = "test",
			      .pointer_size = 8};
	struct rlimit small = {1024, 1024};
	struct ht_recorder *rec;
	struct ht_error err;
	int sv[2], fd;
	char text[16], got[512], path[] = "/tmp/test_report_XXXXXX";

	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fd_text(sv[1], text, sizeof(text));
	report_channel_open(text);
	/* a write past the limit fails with EFBIG (SIGXFSZ ignored) */
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	rec = ht_recorder_open(path, &h, NULL, &err);
	cr_assert_not_null(rec, "%s", err.message);
	/* GCs until the writer has met the full device */
	for (int i = 0; i < 1000 && ht_recorder_sync(rec) == HT_OK; i++) {
		ht_gc_started(rec, i, 1, HT_GC_OTHER);
		ht_gc_finished(rec);
	}
	report_if_failed(rec);
	drain(sv[0], got, sizeof(got));
	cr_assert(strstr(got, path) && strstr(got, "cannot write: File too "
						"large"), "got '%s'", got);
	ht_recorder_close(rec, NULL);
	unlink(path);
}

Test(report, sound_recording_tells_nothing)
{
	struct ht_header h = {.version = HT_FORMAT_VERSION, .runtime = "test",
			      .pointer_size = 8};
	struct ht_recorder *rec;
	struct ht_error err;
	int sv[2];
	char text[16], got[512], path[] = "/tmp/test_report_XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fd_text(sv[1], text, sizeof(text));
	report_channel_open(text);
	rec = ht_recorder_open(path, &h, NULL, &err);
	cr_assert_not_null(rec, "%s", err.message);
	ht_gc_started(rec, 1, 1, HT_GC_OTHER);
	ht_gc_finished(rec);
	ht_recorder_sync(rec);
	report_if_failed(rec);
	cr_assert_eq(ht_recorder_close(rec, NULL), HT_OK);
	cr_assert_eq(drain(sv[0], got, sizeof(got)), 0, "got '%s'", got);
	unlink(path);
}
