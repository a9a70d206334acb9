/*
 * testheap.c - one dump of a testdata file as a graph (testheap.h).
 */
#include "testheap.h"

#include <criterion/criterion.h>

/* Keeps the last dump heap_scan hands over; with HEAP_LAST_DUMP or a
 * number there is only one, but a later one must not leak the first. */
static int keep_last(void *ctx, struct heap *h, bool *keep)
{
	struct heap **got = ctx;

	if (*got)
		heap_free(*got);
	*got = h;
	*keep = true;
	return 0;
}

struct heap *testheap_load(const char *path, int64_t select,
			   struct heap_scan_report *report)
{
	struct ht_error err;
	struct ht_reader *r = ht_reader_open(path, &err);
	struct heap *h = NULL;

	cr_assert_not_null(r, "%s: %s", path, err.message);
	cr_assert_eq(heap_scan(r, select, keep_last, &h, report, &err), 0,
		     "%s: %s", path, err.message);
	ht_reader_close(r);
	cr_assert_not_null(h, "%s: no such dump", path);
	return h;
}
