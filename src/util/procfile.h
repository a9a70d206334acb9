/*
 * procfile.h - reading a whole file of /proc, whose size stat does not
 * tell (cmdline, environ): the recorders' command line for the header and
 * `record --pid`'s look at the process it attaches to.
 */
#ifndef HT_UTIL_PROCFILE_H
#define HT_UTIL_PROCFILE_H

#include <stddef.h>

/* The file's bytes with a NUL after them, *len (when not NULL) their
 * count without it; malloc'ed. NULL when the file cannot be opened or
 * memory runs out. A read error ends the file where it happened. */
char *proc_file_read(const char *path, size_t *len);

#endif
