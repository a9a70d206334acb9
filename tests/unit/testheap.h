/*
 * testheap.h - the graph of one dump of a trace file, for the unit tests
 * of the analyses that check hand-solved examples.
 */
#ifndef HT_TESTHEAP_H
#define HT_TESTHEAP_H

#include "analysis/heap.h"

/* The graph of dump `select` (a number, or HEAP_LAST_DUMP) of the trace
 * at path (testdata("...") for the bundled ones), read with heap_scan;
 * the test fails when it cannot be read or holds no such dump. report,
 * when not NULL, is filled. Free with heap_free. */
struct heap *testheap_load(const char *path, int64_t select,
			   struct heap_scan_report *report);

#endif
