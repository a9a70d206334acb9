/*
 * smallheap.c - graphs built by hand for the unit tests (smallheap.h).
 */
#include <criterion/criterion.h>

#include "smallheap.h"

#include <stdlib.h>

struct heap *smallheap(uint32_t n, const uint32_t *refs, size_t n_refs)
{
	struct heap *h = calloc(1, sizeof(*h));
	uint64_t e = 0;
	uint32_t obj = 0;

	cr_assert_not_null(h);
	h->n = n;
	h->complete = true;
	h->gc = -1;
	h->id = malloc((n ? n : 1) * sizeof(*h->id));
	h->cls = malloc((n ? n : 1) * sizeof(*h->cls));
	h->size = malloc((n ? n : 1) * sizeof(*h->size));
	h->ref_start = malloc((n + 1) * sizeof(*h->ref_start));
	h->ref = malloc((n_refs + 1) * sizeof(*h->ref));
	h->roots = calloc(16, sizeof(*h->roots));
	cr_assert(h->id && h->cls && h->size && h->ref_start && h->ref &&
		  h->roots);
	for (uint32_t i = 0; i < n; i++) {
		h->id[i] = 0x1000 + 16 * (ht_id)i;
		h->cls[i] = HEAP_NO_CLASS;
		h->size[i] = 8;
	}
	h->ref_start[0] = 0;
	for (size_t i = 0; i < n_refs && obj < n; i++) {
		if (refs[i] == SMALLHEAP_END)
			h->ref_start[++obj] = e;
		else
			h->ref[e++] = refs[i];
	}
	while (obj < n)
		h->ref_start[++obj] = e;
	return h;
}

void smallheap_classes(struct heap *h, const char *const *names, size_t n)
{
	h->classes = calloc(n ? n : 1, sizeof(*h->classes));
	cr_assert_not_null(h->classes);
	for (size_t i = 0; i < n; i++) {
		h->classes[i].id = 0x100 + 8 * (ht_id)i;
		h->classes[i].name = names[i];
	}
	h->n_classes = n;
}

void smallheap_root(struct heap *h, uint32_t object)
{
	struct heap_root *r = &h->roots[h->n_roots++];

	cr_assert_leq(h->n_roots, 16);
	r->object = object;
	r->ref = heap_id(h, object);
	r->kind = HEAP_NO_KIND;
}
