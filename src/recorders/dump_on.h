/*
 * dump_on.h - when a recorder dumps the heap: the one list of modes that
 * `heaptrace record --dump-on` takes and the Mono and Java recorders read
 * back from their option strings (heaptrace(1), record).
 */
#ifndef HT_DUMP_ON_H
#define HT_DUMP_ON_H

#include <stddef.h>

enum dump_on {
	DUMP_ON_MAJOR,     /* at major (full) collections */
	DUMP_ON_EVERY_GC,  /* after every collection */
	DUMP_ON_EXIT,      /* when the program exits */
	DUMP_ON_SIGNAL,    /* when the program gets SIGUSR1 */
};

/* "major", "every-gc", "exit", "signal"; "?" for another value. */
const char *dump_on_name(enum dump_on d);

/* The mode spelled by the n bytes at s (not NUL-terminated): 0 and *out
 * set, or -1 when they spell none. */
int dump_on_parse(const char *s, size_t n, enum dump_on *out);

#endif
