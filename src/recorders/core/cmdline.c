/*
 * cmdline.c - the recorded process's command line (cmdline.h).
 */
#include "recorders/core/cmdline.h"

#include "util/procfile.h"

#include <stddef.h>

/* A header string need not hold a whole classpath. */
#define COMMAND_LINE_MAX 8191

char *process_command_line(void)
{
	size_t n;
	char *buf = proc_file_read("/proc/self/cmdline", &n);

	if (!buf)
		return NULL;
	if (n > COMMAND_LINE_MAX)
		n = COMMAND_LINE_MAX;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return buf;
}
