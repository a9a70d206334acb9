/*
 * sort.h - qsort for arrays that may be empty. An empty growing array
 * (util/alloc.h) has a NULL base, and qsort's base must not be NULL even
 * when there is nothing to sort: UBSan says so, rightly.
 */
#ifndef HT_SORT_H
#define HT_SORT_H

#include <stdlib.h>

static inline void sort_items(void *base, size_t n, size_t size,
			      int (*compare)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, compare);
}

#endif
