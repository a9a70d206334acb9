/*
 * control.c - a recorder's side of the control socket of `heaptrace
 * record --pid`: connecting, its lines, and the loop that serves
 * heaptrace's requests (control.h says the protocol).
 */
#include "recorders/core/control.h"
#include "recorders/core/say.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int control_channel_connect(const char *path)
{
	struct sockaddr_un addr;
	int fd;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
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

/* MSG_NOSIGNAL: a heaptrace gone must not kill the process with
 * SIGPIPE. */
void control_channel_say(int fd, const char *message)
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

void control_channel_serve(int fd, void (*dump)(void *arg), void *arg)
{
	char buf[256];
	size_t len = 0;

	for (;;) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			if (strcmp(buf, "dump") == 0)
				dump(arg);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
		}
		/* a line longer than any request: not heaptrace's */
		if (len == sizeof(buf) - 1)
			len = 0;
	}
}

void control_channel_refuse(const char *path, const char *message)
{
	int fd = control_channel_connect(path);

	say_here(message);
	if (fd < 0)
		return;
	control_channel_say(fd, message);
	close(fd);
}
