/*
 * test_referrers.c - what holds an object (src/analysis/referrers.c):
 * its referrers in id order, one per reference (an object that refers
 * twice is there twice) with the field it refers through, null
 * references left out, the first N kept and all counted; the roots that
 * hold it; and no reach level where the dump has no referents.
 */
#include <criterion/criterion.h>

#include "analysis/referrers.h"
#include "smallheap.h"

#include <stdlib.h>

#define END SMALLHEAP_END
#define NUL HEAP_NULL_REF

/* 0 -> 1, 2; 1 -> null, 2, 2; 2 -> 3; 3 -> none; 4 -> 2 */
static struct heap *five(void)
{
	return SMALLHEAP(5, 1, 2, END, NUL, 2, 2, END, 3, END, END, 2, END);
}

Test(referrers, every_reference_in_id_order)
{
	static const struct referrer want[] = {
		{0, 1}, {1, 1}, {1, 2}, {4, 0},
	};
	struct heap *h = five();
	struct referrer *r = NULL;
	size_t n = 0;

	cr_assert_eq(referrers_find(h, 2, 0, &r, &n), 0);
	cr_assert_eq(n, 4, "four references to object 2: %zu", n);
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(r[i].object, want[i].object, "referrer %zu", i);
		cr_expect_eq(r[i].field, want[i].field, "field of %zu", i);
	}
	free(r);
	heap_free(h);
}

Test(referrers, the_first_n_kept_all_counted)
{
	struct heap *h = five();
	struct referrer *r = NULL;
	size_t n = 0;

	cr_assert_eq(referrers_find(h, 2, 2, &r, &n), 0);
	cr_expect_eq(n, 4);
	cr_expect_eq(r[0].object, 0);
	cr_expect_eq(r[1].object, 1);
	cr_expect_eq(r[1].field, 1);
	free(r);
	heap_free(h);
}

Test(referrers, none)
{
	struct heap *h = five();
	struct referrer *r = (struct referrer *)1;
	size_t n = 99;

	cr_assert_eq(referrers_find(h, 4, 0, &r, &n), 0);
	cr_expect_eq(n, 0);
	cr_expect_null(r);
	heap_free(h);
}

Test(referrers, roots_that_hold_it)
{
	struct heap *h = five();

	smallheap_root(h, 2);
	smallheap_root(h, 0);
	smallheap_root(h, 2);
	cr_expect_eq(referrers_roots(h, 2), 2);
	cr_expect_eq(referrers_roots(h, 0), 1);
	cr_expect_eq(referrers_roots(h, 3), 0);
	heap_free(h);
}

Test(referrers, no_reach_level_without_referents)
{
	struct heap *h = five();
	struct ht_error err;
	int level = 0;

	smallheap_root(h, 0);
	cr_assert_eq(referrers_reach_level(h, 3, &level, &err), 0);
	cr_expect_eq(level, HEAP_LEVEL_UNREACHABLE + 1);
	heap_free(h);
}
