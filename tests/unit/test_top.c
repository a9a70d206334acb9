/*
 * test_top.c - the k biggest objects (src/analysis/top.c): by self size
 * and by retained size, ties broken by lower id, k smaller than, equal
 * to and zero, and the instances of one class name that several class
 * slots share.
 */
#include <criterion/criterion.h>

#include "analysis/top.h"
#include "smallheap.h"

#include <stdlib.h>

/* Six objects without references, of sizes 8, 40, 16, 40, 24, 8. */
static struct heap *six(void)
{
	static const uint32_t sizes[] = {8, 40, 16, 40, 24, 8};
	struct heap *h = smallheap(6, NULL, 0);

	for (uint32_t i = 0; i < 6; i++)
		h->size[i] = sizes[i];
	return h;
}

static void expect(const uint32_t *got, const uint32_t *want, size_t k)
{
	for (size_t i = 0; i < k; i++)
		cr_expect_eq(got[i], want[i], "rank %zu: object %u, not %u",
			     i, got[i], want[i]);
}

Test(top, by_self_size_larger_first_then_lower_id)
{
	struct heap *h = six();
	uint32_t best[3];

	top_objects(h, NULL, NULL, best, 3);
	expect(best, (const uint32_t[]){1, 3, 4}, 3);
	heap_free(h);
}

Test(top, all_of_them_in_listing_order)
{
	struct heap *h = six();
	uint32_t best[6];

	top_objects(h, NULL, NULL, best, 6);
	expect(best, (const uint32_t[]){1, 3, 4, 2, 0, 5}, 6);
	heap_free(h);
}

Test(top, by_retained_size_as_given)
{
	static const uint64_t retained[] = {100, 5, 100, 7, 0, 50};
	struct heap *h = six();
	uint32_t best[4];

	top_objects(h, retained, NULL, best, 4);
	expect(best, (const uint32_t[]){0, 2, 5, 3}, 4);
	heap_free(h);
}

Test(top, none_asked_none_written)
{
	struct heap *h = six();
	uint32_t best[1] = {99};

	top_objects(h, NULL, NULL, best, 0);
	cr_expect_eq(best[0], 99);
	heap_free(h);
}

Test(top, one_class_name_over_several_slots)
{
	static const char *const names[] = {"A", "B", "A"};
	static const uint32_t cls[] = {0, 1, 2, HEAP_NO_CLASS, 0, 1};
	struct heap *h = six();
	bool *in_class = NULL;
	uint64_t n = 0;
	uint32_t best[3];

	smallheap_classes(h, names, 3);
	for (uint32_t i = 0; i < 6; i++)
		h->cls[i] = cls[i];
	cr_assert_eq(top_class_slots(h, "A", &in_class, &n), 0);
	cr_expect_eq(n, 3, "objects 0, 2 and 4 are A's: %llu",
		     (unsigned long long)n);
	cr_expect(in_class[0] && !in_class[1] && in_class[2]);
	cr_expect(!in_class[3], "the slot of no class is never one");
	top_objects(h, NULL, in_class, best, (size_t)n);
	expect(best, (const uint32_t[]){4, 2, 0}, 3);
	free(in_class);
	heap_free(h);
}

Test(top, a_name_no_class_has)
{
	static const char *const names[] = {"A", NULL};
	struct heap *h = six();
	bool *in_class = NULL;
	uint64_t n = 99;

	smallheap_classes(h, names, 2);
	h->cls[0] = 1;
	cr_assert_eq(top_class_slots(h, "C", &in_class, &n), 0);
	cr_expect_eq(n, 0);
	for (size_t i = 0; i <= h->n_classes; i++)
		cr_expect(!in_class[i]);
	free(in_class);
	heap_free(h);
}
