/*
 * dump_policy.h - which collections a recorder dumps at, by the options
 * (options.h): under --dump-on major the major ones, under every-gc all
 * of them, and of those every Nth (--every N). How a runtime tells a
 * major collection, and when it may walk the heap, are its own.
 */
#ifndef HT_RECORDERS_DUMP_POLICY_H
#define HT_RECORDERS_DUMP_POLICY_H

#include "recorders/core/options.h"

#include <stdbool.h>
#include <stdint.h>

/* Does a collection count for --every, major or not? Under exit and
 * signal none does. */
static inline bool dump_qualifies(const struct rec_options *o, bool major)
{
	switch (o->dump_on) {
	case DUMP_ON_MAJOR:
		return major;
	case DUMP_ON_EVERY_GC:
		return true;
	default:
		return false;
	}
}

/* Is the ordinal-th qualifying collection (from 1) one to dump at? */
static inline bool dump_due(const struct rec_options *o, uint64_t ordinal)
{
	return ordinal % o->every == 0;
}

/* Do the collections themselves ask for dumps (major, every-gc)? */
static inline bool dump_after_gcs(const struct rec_options *o)
{
	return o->dump_on == DUMP_ON_MAJOR || o->dump_on == DUMP_ON_EVERY_GC;
}

#endif
