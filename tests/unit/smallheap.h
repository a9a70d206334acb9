/*
 * smallheap.h - a dump's graph built by hand in a few lines, for unit
 * tests whose answer is read off a drawing: objects, their classes,
 * sizes and references, and roots. (testheap.h loads one from a trace
 * instead, for answers a trace written down holds.)
 */
#ifndef HT_SMALLHEAP_H
#define HT_SMALLHEAP_H

#include "analysis/heap.h"

#include <stddef.h>
#include <stdint.h>

/* Ends an object's references in smallheap's list. */
#define SMALLHEAP_END (UINT32_MAX - 7)

/*
 * n objects, ids 0x1000 + 16 i, of no class, size 8; refs lists the
 * references of object 0, SMALLHEAP_END, those of object 1, ... (objects
 * past the list's end have none). Room for 16 roots (smallheap_root)
 * and the classes smallheap_classes gives. Free with heap_free.
 */
struct heap *smallheap(uint32_t n, const uint32_t *refs, size_t n_refs);
#define SMALLHEAP(n, ...)                                                 \
	smallheap(n, (const uint32_t[]){__VA_ARGS__},                      \
		  sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

/* Classes named names[0..n) (NULL: unnamed), ids 0x100 + 8 i. */
void smallheap_classes(struct heap *h, const char *const *names, size_t n);
/* A strong root holding object. */
void smallheap_root(struct heap *h, uint32_t object);

#endif
