/*
 * options.h - the arguments of the Mono recorder, as Mono hands them to
 * the module: everything after "heaptrace:" in --profile=heaptrace:ARGS.
 * Kept apart from the Mono API so that tests need no Mono.
 */
#ifndef MREC_OPTIONS_H
#define MREC_OPTIONS_H

#include "recorders/dump_on.h"

#include <stdbool.h>
#include <stddef.h>

struct mrec_options {
	enum dump_on dump_on;
	unsigned every;       /* walk at every Nth qualifying collection */
	bool allocations;     /* record object_allocated */
	char *output;         /* malloc'ed; NULL: the caller picks a default */
};

/* Parses ARGS (a comma-separated list of key=value: dump=, every=,
 * alloc, output=). output= takes the rest of the string, commas included,
 * so it goes last. 0 on success; -1 with a message in err otherwise. */
int mrec_parse_options(const char *args, struct mrec_options *o, char *err,
		       size_t errlen);
void mrec_free_options(struct mrec_options *o);

#endif
