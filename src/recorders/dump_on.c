/*
 * dump_on.c - the names of the dump modes (dump_on.h).
 */
#include "recorders/dump_on.h"

#include <string.h>

static const char *const names[] = {
	[DUMP_ON_MAJOR] = "major",
	[DUMP_ON_EVERY_GC] = "every-gc",
	[DUMP_ON_EXIT] = "exit",
	[DUMP_ON_SIGNAL] = "signal",
};

#define N_NAMES (sizeof(names) / sizeof(names[0]))

const char *dump_on_name(enum dump_on d)
{
	return (unsigned)d < N_NAMES ? names[d] : "?";
}

int dump_on_parse(const char *s, size_t n, enum dump_on *out)
{
	for (size_t i = 0; i < N_NAMES; i++) {
		if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) {
			*out = (enum dump_on)i;
			return 0;
		}
	}
	return -1;
}
