/*
 * procfile.c - a whole file of /proc in memory (procfile.h).
 */
#include "util/procfile.h"

#include "util/alloc.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

char *proc_file_read(const char *path, size_t *len)
{
	char *buf = NULL;
	size_t used = 0, cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	for (;;) {
		/* room for a read and the final NUL */
		if (ALLOC_GROW(buf, used + 4096, cap) < 0) {
			free(buf);
			close(fd);
			return NULL;
		}
		n = read(fd, buf + used, cap - used - 1);
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = '\0';
	if (len)
		*len = used;
	return buf;
}
