/*
 * attach.c - the agent attached to a running JVM (heaptrace record --pid):
 * the control socket between it and heaptrace.
 *
 * heaptrace listens on a Unix socket in a directory of its own and loads
 * the agent with control=SOCKET among its options; the agent connects
 * while it is being loaded (Agent_OnAttach), before anything else can go
 * wrong, so that heaptrace hears of every problem: the JVM's standard error
 * is the program's, not heaptrace's. Then, on the socket:
 *
 *   heaptrace -> agent   "dump\n" asks for a dump now; the end of the
 *                        stream (heaptrace closed its end, or died) ends
 *                        the recording: a last dump, "at detach", and the
 *                        trace is closed;
 *   agent -> heaptrace   each message of the agent, a line; the end of
 *                        the stream once the trace is closed, at detach or
 *                        at VM death (or when the JVM is gone).
 *
 * The agent's thread blocks reading the socket. The socket is shut down,
 * not closed, so that no other thread can find its descriptor reused: it
 * is closed when the agent is attached again (its reader gone by then),
 * or when the JVM exits.
 */
#include "recorders/jvm/agent.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path)
{
	struct sockaddr_un addr;
	int fd;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int control_connect(struct agent *ag)
{
	int fd = connect_to(ag->opt.control);

	if (fd < 0) {
		say("cannot reach heaptrace at %s: %s", ag->opt.control,
			   strerror(errno));
		return -1;
	}
	atomic_store(&ag->control, fd);
	return 0;
}

/* One line; a message too long for a line is cut. MSG_NOSIGNAL: a
 * heaptrace gone must not kill the JVM with SIGPIPE. */
static void send_line(int fd, const char *message)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "%s\n", message);

	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	while (send(fd, line, (size_t)n, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

void control_report(struct agent *ag, const char *message)
{
	int fd = atomic_load(&ag->control);

	if (ag->attached && fd >= 0)
		send_line(fd, message);
}

void control_refuse(const char *path, const char *message)
{
	int fd = connect_to(path);

	say_here(message);
	if (fd < 0)
		return;
	send_line(fd, message);
	close(fd);
}

void control_close(struct agent *ag)
{
	int fd = atomic_load(&ag->control);

	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
}

/* What heaptrace asks, a line at a time, until the end of the stream. */
static void JNICALL control_main(jvmtiEnv *jv, JNIEnv *jni, void *arg)
{
	struct agent *ag = arg;
	int fd = atomic_load(&ag->control);
	char buf[256];
	size_t len = 0;

	(void)jv;
	for (;;) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			if (strcmp(buf, "dump") == 0)
				agent_take_dump(ag, jni, "requested");
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
		}
		/* a line longer than any request: not heaptrace's */
		if (len == sizeof(buf) - 1)
			len = 0;
	}
	agent_finish(ag, jni, "at detach");
	atomic_store(&ag->control_running, false);
}

int control_start(struct agent *ag, JNIEnv *jni)
{
	if (atomic_load(&ag->control) < 0)
		return 0;
	atomic_store(&ag->control_running, true);
	if (agent_thread(ag, jni, "heaptrace control", control_main, ag) < 0) {
		atomic_store(&ag->control_running, false);
		say("cannot start the agent's control thread");
		return -1;
	}
	return 0;
}
