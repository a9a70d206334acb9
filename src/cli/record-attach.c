/*
 * record-attach.c - `heaptrace record --pid PID`: records a process that
 * runs already, a JVM or a .NET (CoreCLR) process, by loading the
 * runtime's recorder into it: the JVMTI agent through JVMTI's dynamic
 * attach (here), the CoreCLR profiler through the runtime's diagnostics
 * IPC (record-attach-clr.c). What both share is here too: the checks of
 * the process, the control socket, the signals and the relay.
 *
 * The agent is loaded by the JDK's jcmd (JVMTI.agent_load), the supported
 * client of HotSpot's attach protocol, rather than by speaking that
 * protocol here: its files and handshake are HotSpot's to change from
 * release to release, and jcmd, taken next to the JVM's own java, always
 * matches the JVM. Before jcmd runs, heaptrace makes sure the process is
 * a JVM of the same user: jcmd wakes a JVM with SIGQUIT, which would kill
 * most other programs, and waits ten seconds for one that does not answer;
 * and the recorder runs as the process's user, who must be able to reach
 * heaptrace's socket and write the trace (HotSpot itself would let root
 * attach to any JVM).
 *
 * heaptrace then talks to the recorder through a Unix socket it listens
 * on, in a directory only its user can enter (the recorder's side, and
 * the protocol, are in src/recorders/core/control.h): a line "dump" asks
 * for a dump; closing heaptrace's side stops the recording; the
 * recorder's messages come back as lines, shown on heaptrace's standard
 * error; the recorder's side closes once the trace is closed, at the stop
 * or at the process's exit.
 */
#include "cli/cli.h"
#include "cli/escape.h"
#include "cli/record.h"
#include "cli/record-attach.h"
#include "util/alloc.h"
#include "util/procfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define JAVA_RECORDER "libheaptrace-jvmti.so"
/* how long the agent has to connect once jcmd says it loaded */
#define CONNECT_TIMEOUT_MS 5000

/* ---- the process to attach to -------------------------------------------- */

/* The first line of /proc/PID/FILE that starts with key, after the key,
 * into out[len]; false when there is none. */
bool proc_field(pid_t pid, const char *file, const char *key,
		       char *out, size_t len)
{
	char path[64], line[512];
	size_t k = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (strncmp(line, key, k) == 0) {
			snprintf(out, len, "%s", line + k);
			out[strcspn(out, "\n")] = '\0';
			found = true;
		}
	fclose(f);
	return found;
}

/* The runtime the process has mapped: HotSpot's libjvm.so, CoreCLR's
 * libcoreclr.so, or neither. */
static enum attach_runtime runtime_of(pid_t pid)
{
	char path[64], line[4096];
	enum attach_runtime rt = RUNS_NEITHER;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return RUNS_NEITHER;
	while (rt == RUNS_NEITHER && fgets(line, sizeof(line), f))
		rt = strstr(line, "/libjvm.so") ? RUNS_JVM :
		     strstr(line, "/libcoreclr.so") ? RUNS_CLR : RUNS_NEITHER;
	fclose(f);
	return rt;
}

/* The last word of a /proc/PID/FILE of NUL-separated words (cmdline,
 * environ) that is -XX:+DisableAttachMechanism or -XX:-..., looked for
 * also inside the value of a variable of environ: +1, -1, or 0 without. */
static int attach_flag_in(pid_t pid, const char *file)
{
	char path[64], *buf;
	size_t len;
	int flag = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	buf = proc_file_read(path, &len);
	if (!buf)
		return 0;
	for (char *p = buf; p < buf + len; p += strlen(p) + 1) {
		bool tool = strncmp(p, "JAVA_TOOL_OPTIONS=", 18) == 0;

		if (strcmp(file, "environ") == 0 && !tool)
			continue;
		for (char *q = p; (q = strstr(q, "DisableAttachMechanism"));
		     q++)
			if (q - p >= 5 && strncmp(q - 5, "-XX:", 4) == 0)
				flag = q[-1] == '+' ? 1 : q[-1] == '-' ? -1
								      : flag;
	}
	free(buf);
	return flag;
}

/* Whether the JVM was started with its attach listener turned off: the
 * command line comes after JAVA_TOOL_OPTIONS, and wins. */
static bool attach_disabled(pid_t pid)
{
	int on_command_line = attach_flag_in(pid, "cmdline");

	return on_command_line ? on_command_line > 0
			       : attach_flag_in(pid, "environ") > 0;
}

/* The runtime of pid when heaptrace's user may attach to it; RUNS_NEITHER
 * after saying why not. */
static enum attach_runtime check_target(pid_t pid)
{
	enum attach_runtime rt;
	char uids[128], name[64] = "?";
	unsigned real, effective;

	if (!proc_field(pid, "status", "Uid:", uids, sizeof(uids)) ||
	    sscanf(uids, "%u %u", &real, &effective) != 2) {
		error_msg("cannot attach to process %d: there is no such "
			  "process", (int)pid);
		return RUNS_NEITHER;
	}
	proc_field(pid, "status", "Name:\t", name, sizeof(name));
	if (effective != (unsigned)geteuid()) {
		error_msg("cannot attach to process %d (%s): it runs as uid %u, "
			  "heaptrace as uid %u; run heaptrace as the "
			  "process's user, as whom the recorder writes the "
			  "trace", (int)pid, esc_text(name), effective,
			  (unsigned)geteuid());
		return RUNS_NEITHER;
	}
	rt = runtime_of(pid);
	if (rt == RUNS_NEITHER) {
		error_msg("cannot attach to process %d (%s): it is neither a "
			  "JVM nor a .NET process; only a running JVM or .NET "
			  "(CoreCLR) process can be recorded with --pid",
			  (int)pid, esc_text(name));
		return RUNS_NEITHER;
	}
	if (rt == RUNS_JVM && attach_disabled(pid)) {
		error_msg("cannot attach to process %d (%s): it runs with "
			  "-XX:+DisableAttachMechanism", (int)pid,
			  esc_text(name));
		return RUNS_NEITHER;
	}
	if (rt == RUNS_CLR && clr_check_target(pid, name) < 0)
		return RUNS_NEITHER;
	return rt;
}

/* The jcmd of the JVM's own JDK (next to its java), else the first on
 * PATH. */
static int find_jcmd(pid_t pid, char *out, size_t len)
{
	char exe[PATH_MAX], link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash && (size_t)snprintf(out, len, "%.*s/jcmd",
					      (int)(slash - exe), exe) < len &&
		    regular_file(out) && access(out, X_OK) == 0)
			return 0;
	}
	if (resolve_command("jcmd", out, len))
		return 0;
	error_msg("cannot attach to process %d: no jcmd next to its java or "
		  "on PATH (attaching needs the JDK's jcmd)", (int)pid);
	return -1;
}

/* ---- the control socket --------------------------------------------------- */

static int control_listen(struct control *ctl)
{
	const char *tmp = getenv("TMPDIR");
	struct sockaddr_un addr;

	ctl->listen_fd = ctl->fd = -1;
	/* a comma would end the path in the agent's options */
	if (!tmp || !*tmp || strchr(tmp, ',') || strchr(tmp, '"') ||
	    strlen(tmp) > 64)
		tmp = "/tmp";
	snprintf(ctl->dir, sizeof(ctl->dir), "%s/heaptrace-XXXXXX", tmp);
	if (!mkdtemp(ctl->dir)) {
		error_msg("cannot make a directory for the control socket in "
			  "%s: %s", tmp, strerror(errno));
		ctl->dir[0] = '\0';
		return -1;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	/* tmp is short: the path fits */
	if ((size_t)snprintf(ctl->path, sizeof(addr.sun_path), "%s/control",
			     ctl->dir) >= sizeof(addr.sun_path)) {
		error_msg("cannot make the control socket %s/control: %s",
			  ctl->dir, strerror(ENAMETOOLONG));
		return -1;
	}
	memcpy(addr.sun_path, ctl->path, strlen(ctl->path) + 1);
	ctl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->listen_fd < 0 ||
	    bind(ctl->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(ctl->listen_fd, 1) < 0) {
		error_msg("cannot make the control socket %s: %s", ctl->path,
			  strerror(errno));
		return -1;
	}
	return 0;
}

/* Removes the socket's file and directory, once the recorder has
 * connected or at the end. */
void control_unlink(struct control *ctl)
{
	if (ctl->path[0])
		unlink(ctl->path);
	if (ctl->dir[0])
		rmdir(ctl->dir);
	ctl->path[0] = ctl->dir[0] = '\0';
}

static void control_free(struct control *ctl)
{
	control_unlink(ctl);
	if (ctl->listen_fd >= 0)
		close(ctl->listen_fd);
	if (ctl->fd >= 0)
		close(ctl->fd);
	ctl->listen_fd = ctl->fd = -1;
}

/* The recorder's connection, waiting up to timeout_ms for it; 0 or -1. */
int control_accept(struct control *ctl, int timeout_ms)
{
	struct pollfd p = {.fd = ctl->listen_fd, .events = POLLIN};

	if (poll(&p, 1, timeout_ms) <= 0)
		return -1;
	ctl->fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	return ctl->fd < 0 ? -1 : 0;
}

/* Shows the recorder's messages that came whole; at the end of the stream,
 * the rest too. */
static void show_messages(struct control *ctl, bool at_end)
{
	char *nl;

	while ((nl = memchr(ctl->line, '\n', ctl->len)) ||
	       ((at_end || ctl->len == sizeof(ctl->line) - 1) && ctl->len)) {
		size_t n = nl ? (size_t)(nl - ctl->line) : ctl->len;

		ctl->line[n] = '\0';
		/* the message on a line of its own, the progress after it */
		if (ctl->progress && ctl->progress->line) {
			progress_end(ctl->progress->line);
			ctl->progress->line = NULL;
		}
		fprintf(stderr, "heaptrace: %s recorder: %s\n", ctl->who,
			esc_text(ctl->line));
		if (ctl->progress)
			ctl->progress->line =
				progress_start("heaptrace record", NULL);
		n += nl != NULL;
		ctl->len -= n;
		memmove(ctl->line, ctl->line + n, ctl->len);
	}
}

/* Reads what the recorder sent; false at the end of the stream. */
bool control_read(struct control *ctl)
{
	ssize_t n = recv(ctl->fd, ctl->line + ctl->len,
			 sizeof(ctl->line) - 1 - ctl->len, 0);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		show_messages(ctl, true);
		return false;
	}
	ctl->len += (size_t)n;
	show_messages(ctl, false);
	return true;
}

static void control_send(struct control *ctl, const char *line)
{
	if (send(ctl->fd, line, strlen(line), MSG_NOSIGNAL) < 0 &&
	    errno != EPIPE && errno != ECONNRESET)
		error_msg("cannot ask the recorder for a dump: %s",
			  strerror(errno));
}

/* ---- loading the agent ----------------------------------------------------- */

/* The option string. jcmd joins its arguments into one command line,
 * which the JVM splits at spaces, keeping together what is between double
 * quotes: so the options go between double quotes (the agent's path too),
 * and a path with a double quote cannot be passed. */
static int agent_options(const struct record_options *o,
			 const struct control *ctl, char *out, size_t len)
{
	struct rec_request r = {
		.dump_on = o->dump_on, .every = o->every, .values = o->values,
		.control = ctl->path, .report_fd = -1, .output = o->output,
	};
	char *args;
	bool fits;

	if (strchr(o->output, '"')) {
		error_msg("cannot attach: the trace's path %s has a '\"', which "
			  "jcmd cannot pass to the JVM", esc_text(o->output));
		return -1;
	}
	args = rec_options_format(&r);
	if (!args) {
		error_msg("out of memory");
		return -1;
	}
	fits = (size_t)snprintf(out, len, "\"%s\"", args) < len;
	free(args);
	if (!fits) {
		error_msg("cannot attach: the trace's path is too long");
		return -1;
	}
	return 0;
}

/* The last line of jcmd's output that is not empty, for messages. */
static const char *last_line(char *text)
{
	char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	start = strrchr(text, '\n');
	return start ? start + 1 : text;
}

/* Runs jcmd PID JVMTI.agent_load AGENT OPTIONS, its output collected in
 * out[len]; its exit status, or -1 when it cannot be run. */
static int run_jcmd(const char *jcmd, pid_t pid, const char *agent,
		    const char *options, char *out, size_t len)
{
	char pid_text[16], quoted[PATH_MAX + 2];
	char *argv[] = {(char *)jcmd, pid_text, (char *)"JVMTI.agent_load",
			quoted, (char *)options, NULL};
	posix_spawn_file_actions_t fa;
	int pipefd[2], rc, status;
	size_t got = 0;
	ssize_t n;
	pid_t child;

	snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
	snprintf(quoted, sizeof(quoted), "\"%s\"", agent);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	rc = posix_spawn(&child, jcmd, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		errno = rc;
		return -1;
	}
	while ((n = read(pipefd[0], out + got, len - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
		/* full: the first half is kept, the rest overwritten by
		 * what comes next, so that the last line is still there */
		if (got == len - 1)
			got = len / 2;
	}
	out[got] = '\0';
	close(pipefd[0]);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Loads the agent into pid and takes its connection; 0, or -1 after
 * saying why. */
static int load_agent(pid_t pid, const struct record_options *o,
		      struct control *ctl)
{
	char jcmd[PATH_MAX], agent[PATH_MAX], options[2 * PATH_MAX + 128];
	char out[4096];
	struct ht_error err;
	int rc;

	if (find_jcmd(pid, jcmd, sizeof(jcmd)) < 0)
		return -1;
	if (find_recorder("jvm", JAVA_RECORDER, agent, sizeof(agent),
			  &err) < 0) {
		error_msg("cannot record java: %s", err.message);
		return -1;
	}
	if (strchr(agent, '"')) {
		error_msg("cannot attach: the agent's path %s has a '\"', "
			  "which jcmd cannot pass to the JVM", esc_text(agent));
		return -1;
	}
	if (agent_options(o, ctl, options, sizeof(options)) < 0)
		return -1;
	rc = run_jcmd(jcmd, pid, agent, options, out, sizeof(out));
	if (rc < 0) {
		error_msg("cannot run %s: %s", jcmd, strerror(errno));
		return -1;
	}
	/* what the agent said, if it got as far as connecting */
	if (control_accept(ctl, rc == 0 && strstr(out, "return code: 0") ?
			   CONNECT_TIMEOUT_MS : 0) == 0) {
		control_unlink(ctl);
		if (rc == 0 && strstr(out, "return code: 0"))
			return 0;
		while (control_read(ctl))
			;
	}
	if (rc == 0 && strstr(out, "return code: 0"))
		error_msg("the agent loaded into process %d but did not "
			  "connect", (int)pid);
	else
		error_msg("jcmd could not load the agent into process %d: %s",
			  (int)pid, esc_text(last_line(out)));
	return -1;
}

/* ---- recording ------------------------------------------------------------- */

static volatile sig_atomic_t stops_asked, dumps_asked;

static void on_stop(int sig)
{
	(void)sig;
	stops_asked++;
}

static void on_dump(int sig)
{
	(void)sig;
	dumps_asked++;
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP ARRAY_SIZE(stop_signals)

struct attach_signals {
	struct sigaction stop[N_STOP], dump;
};

/* No SA_RESTART: a signal ends the wait at once. */
static void take_signals(struct attach_signals *saved)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	for (size_t i = 0; i < N_STOP; i++)
		sigaction(stop_signals[i], &sa, &saved->stop[i]);
	sa.sa_handler = on_dump;
	sigaction(SIGUSR1, &sa, &saved->dump);
}

static void give_back_signals(const struct attach_signals *saved)
{
	for (size_t i = 0; i < N_STOP; i++)
		sigaction(stop_signals[i], &saved->stop[i], NULL);
	sigaction(SIGUSR1, &saved->dump, NULL);
}

static double now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

enum attach_end {
	END_STOPPED,    /* heaptrace stopped it, the trace is closed */
	END_EXITED,     /* the recorder's side closed first: the process
			   exited */
	END_ABANDONED,  /* asked twice to stop, heaptrace did not wait */
};

/* The requests to the recorder, and what it says, until its side
 * closes. */
static enum attach_end relay(struct control *ctl, const char *output,
			     double duration)
{
	double deadline = duration > 0 ? now_seconds() + duration : 0;
	sig_atomic_t dumps_sent = dumps_asked;
	bool stop_sent = false;

	for (;;) {
		struct pollfd p = {.fd = ctl->fd, .events = POLLIN};

		if (deadline && now_seconds() >= deadline && !stops_asked)
			stops_asked = 1;
		/* a dump asked before the stop comes before it */
		if (!stop_sent && dumps_asked != dumps_sent) {
			dumps_sent = dumps_asked;
			control_send(ctl, "dump\n");
		}
		if (stops_asked && !stop_sent) {
			shutdown(ctl->fd, SHUT_WR);
			stop_sent = true;
		} else if (stops_asked > 1) {
			return END_ABANDONED;
		}
		record_progress_tick(ctl->progress, output);
		if (poll(&p, 1, 100) > 0 && !control_read(ctl))
			return stop_sent ? END_STOPPED : END_EXITED;
	}
}

/* Until the recorder's side closes: passes the requests on, shows the
 * messages and the progress. */
static enum attach_end record_until_the_end(struct control *ctl,
					    const char *output,
					    double duration)
{
	struct progress_line progress = {
		.line = progress_start("heaptrace record", NULL)};
	enum attach_end end;

	ctl->progress = &progress;
	end = relay(ctl, output, duration);
	ctl->progress = NULL;
	progress_end(progress.line);
	return end;
}

int record_attach(const struct record_options *o, pid_t pid, double duration,
		  bool quiet)
{
	struct control ctl = {.listen_fd = -1, .fd = -1};
	struct attach_signals saved;
	enum attach_runtime rt;
	enum attach_end end;
	int code = EXIT_UNREADABLE;

	rt = check_target(pid);
	if (rt == RUNS_NEITHER)
		return EXIT_UNREADABLE;
	ctl.who = rt == RUNS_JVM ? "java" : "clr";
	/* a trace left from an earlier run must not pass for this one's */
	if (unlink(o->output) != 0 && errno != ENOENT) {
		error_msg("%s: cannot remove the old trace: %s", o->output,
			  strerror(errno));
		return EXIT_UNREADABLE;
	}
	stops_asked = dumps_asked = 0;
	take_signals(&saved);
	if (control_listen(&ctl) < 0 ||
	    (rt == RUNS_JVM ? load_agent(pid, o, &ctl)
			    : clr_load_profiler(pid, o, &ctl)) < 0)
		goto out;
	if (!quiet)
		fprintf(stderr, "heaptrace record: attached to process %d, "
			"recording into %s until SIGINT or SIGTERM%s\n",
			(int)pid, esc_text(o->output),
			duration > 0 ? " or the duration's end" : "");
	end = record_until_the_end(&ctl, o->output, duration);
	if (end == END_ABANDONED) {
		error_msg("stopped waiting for the recorder in process %d: "
			  "the trace %s may lack its end", (int)pid, o->output);
		goto out;
	}
	if (end == END_EXITED && !quiet)
		fprintf(stderr, "heaptrace record: process %d ended the "
			"recording: the %s exited\n", (int)pid,
			rt == RUNS_JVM ? "JVM" : "process");
	if (record_check_trace(o->output, rt == RUNS_JVM ? &java_recorder :
			       &clr_recorder,
			       end == END_STOPPED ? "stopped being recorded" :
			       "exited", quiet) == 0)
		code = EXIT_DONE;
out:
	give_back_signals(&saved);
	control_free(&ctl);
	return code;
}
