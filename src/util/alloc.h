/*
 * alloc.h - growing arrays without dying: the one overflow-checked growth
 * helper of heaptrace (after git's ALLOC_GROW, which dies instead), and
 * ARRAY_SIZE.
 *
 * heaptrace reports running out of memory as an error value ("out of
 * memory", exit 3), never by aborting, so every growth here returns 0 or
 * -1 and leaves the array as it was on failure. Header-only: the
 * recording shim (lib/record, lib/common) uses it and links nothing more.
 */
#ifndef HT_UTIL_ALLOC_H
#define HT_UTIL_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Elements of an array (not of a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Capacity of a growing array when it first allocates. */
#define ALLOC_GROW_FIRST 16

/*
 * Resizes *p to n elements of elem bytes: 0, or -1 with *p untouched when
 * n * elem overflows or memory runs out. n == 0 keeps one byte, so that
 * success never hands back NULL.
 */
static inline int resize_array(void **p, size_t n, size_t elem)
{
	size_t bytes;
	void *q;

	if (__builtin_mul_overflow(n, elem, &bytes))
		return -1;
	q = realloc(*p, bytes ? bytes : 1);
	if (!q)
		return -1;
	*p = q;
	return 0;
}

/* A new array of n elements of elem bytes; NULL when n * elem overflows or
 * memory runs out. */
static inline void *alloc_array(size_t n, size_t elem)
{
	void *p = NULL;

	return resize_array(&p, n, elem) < 0 ? NULL : p;
}

/*
 * Capacity for at least `need` elements of elem bytes, doubling from cap
 * (ALLOC_GROW_FIRST at first) so that n appends cost O(n) copying;
 * exactly `need` when doubling would pass SIZE_MAX. 0 when even `need`
 * elements do not fit in a size_t of bytes.
 */
static inline size_t grown_capacity(size_t cap, size_t need, size_t elem)
{
	size_t c = cap ? cap : ALLOC_GROW_FIRST;

	if (need > SIZE_MAX / elem)
		return 0;
	while (c < need)
		c = c > SIZE_MAX / 2 ? need : c * 2;
	if (c > SIZE_MAX / elem)
		c = need;
	return c;
}

/*
 * Makes room for `need` elements in the array *p of *cap elements of elem
 * bytes: 0, or -1 when need * elem overflows or memory runs out, and then
 * *p and *cap are untouched.
 */
static inline int grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c;

	if (need <= *cap)
		return 0;
	c = grown_capacity(*cap, need, elem);
	if (!c || resize_array(p, c, elem) < 0)
		return -1;
	*cap = c;
	return 0;
}

/*
 * ALLOC_GROW(ptr, need, cap): room for `need` elements in the array ptr
 * whose capacity (a size_t) is cap; 0, or -1 with both untouched. ptr is
 * assigned, not cast to void **, so any pointer type is safe.
 */
#define ALLOC_GROW(ptr, need, cap)                                        \
	__extension__({                                                   \
		void *grown_ = (ptr);                                     \
		int rc_ = grow_array(&grown_, &(cap), (need),             \
				     sizeof(*(ptr)));                     \
		if (rc_ == 0)                                             \
			(ptr) = grown_;                                   \
		rc_;                                                      \
	})

/* RESIZE_ARRAY(ptr, n): ptr resized to exactly n elements; 0, or -1 with
 * ptr untouched (a shrink that fails keeps the larger block). */
#define RESIZE_ARRAY(ptr, n)                                              \
	__extension__({                                                   \
		void *resized_ = (ptr);                                   \
		int rc_ = resize_array(&resized_, (n), sizeof(*(ptr)));   \
		if (rc_ == 0)                                             \
			(ptr) = resized_;                                 \
		rc_;                                                      \
	})

/* SHRINK_ARRAY(ptr, n): gives back what ptr holds past n elements; keeps
 * the larger block if that fails, which still holds the n. */
#define SHRINK_ARRAY(ptr, n) ((void)RESIZE_ARRAY(ptr, n))

#endif
