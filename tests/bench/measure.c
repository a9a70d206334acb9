/*
 * measure.c - runs a command and writes what it cost: wall-clock seconds
 * and peak resident set size, the latter from wait4()'s rusage, so that
 * the benchmarks need no /usr/bin/time.
 *
 * Usage: measure RESULT_FILE COMMAND [ARGS...]
 *
 * The command keeps measure's stdin, stdout and stderr. RESULT_FILE gets
 * one line, "SECONDS PEAK_RSS_KIB STATUS CPU_SECONDS", where STATUS is the
 * command's exit status, or 128 + the signal that killed it, and
 * CPU_SECONDS its user and system time, which a machine busy with other
 * work inflates less than the wall time; measure exits with the same
 * STATUS, or 127 when the command could not be run at all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 127;
}

/* Waits for the child alone: its rusage is then the command's own. */
static int wait_child(pid_t pid, int *wstatus, struct rusage *ru)
{
	pid_t got;

	do
		got = wait4(pid, wstatus, 0, ru);
	while (got < 0 && errno == EINTR);
	return got == pid ? 0 : -1;
}

static double cpu_seconds(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1e-6;
}

static int write_result(const char *path, double seconds,
			const struct rusage *ru, int status)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "measure: %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* ru_maxrss is in KiB on Linux. */
	fprintf(f, "%.3f %ld %d %.3f\n", seconds, ru->ru_maxrss, status,
		cpu_seconds(ru));
	if (fclose(f) != 0) {
		fprintf(stderr, "measure: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	double started;
	int wstatus, status;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr,
			"usage: measure RESULT_FILE COMMAND [ARGS...]\n");
		return 127;
	}
	fflush(NULL);
	started = now();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "measure: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "measure: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	if (wait_child(pid, &wstatus, &ru) < 0) {
		fprintf(stderr, "measure: wait4: %s\n", strerror(errno));
		return 127;
	}
	status = exit_status(wstatus);
	if (write_result(argv[1], now() - started, &ru, status) < 0)
		return 127;
	return status;
}
