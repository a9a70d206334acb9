/*
 * options.h - the arguments of the Mono and CLR recorders: for Mono,
 * everything after "heaptrace:" in --profile=heaptrace:ARGS; for the CLR,
 * the value of HEAPTRACE_CLR_OPTIONS. Kept apart from the runtimes' APIs
 * so that tests need none.
 */
#ifndef HT_REC_OPTIONS_H
#define HT_REC_OPTIONS_H

#include "recorders/dump_on.h"

#include <stdbool.h>
#include <stddef.h>

struct rec_options {
	enum dump_on dump_on;
	unsigned every;       /* walk at every Nth qualifying collection */
	bool allocations;     /* record object_allocated */
	bool values;          /* strings' contents (heaptrace(1), --values) */
	char *output;         /* malloc'ed; NULL: the caller picks a default */
};

/* Parses ARGS (a comma-separated list of key=value: dump=, every=,
 * alloc, values, output=). output= takes the rest of the string, commas
 * included, so it goes last. 0 on success; -1 with a message in err
 * otherwise. */
int rec_parse_options(const char *args, struct rec_options *o, char *err,
		       size_t errlen);
void rec_free_options(struct rec_options *o);

#endif
