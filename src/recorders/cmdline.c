/*
 * cmdline.c - the recorded process's command line (cmdline.h).
 */
#include "recorders/cmdline.h"

#include <fcntl.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

char *process_command_line(void)
{
	char buf[8192];
	ssize_t n = 0, r;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	while (n < (ssize_t)sizeof(buf) - 1 &&
	       (r = read(fd, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return strdup(buf);
}
