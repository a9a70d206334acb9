/*
 * test_sites.c - the figures of allocation sites (analysis/sites.h): what
 * a sample stands for. A recorder draws its samples as a Poisson process
 * over the bytes allocated (an exponential gap to the next sampled byte);
 * these tests draw them so, and hold the estimates to the truth.
 */
#include "analysis/sites.h"

#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>

/* A uniform number in (0, 1]. */
static double uniform(void)
{
	return ((double)(test_random() >> 11) + 1) / 9007199254740992.0;
}

/* Bytes to the next sampled byte: exponential, of mean interval. */
static double gap(uint64_t interval)
{
	return -log(uniform()) * (double)interval;
}

/* A population of allocations: n of each size, interleaved. */
struct population {
	size_t kinds;
	uint64_t size[3];
	uint64_t n[3];
};

static uint64_t population_objects(const struct population *p)
{
	uint64_t n = 0;

	for (size_t k = 0; k < p->kinds; k++)
		n += p->n[k];
	return n;
}

static double population_bytes(const struct population *p)
{
	double b = 0;

	for (size_t k = 0; k < p->kinds; k++)
		b += (double)p->n[k] * (double)p->size[k];
	return b;
}

/* One recording of the population, sampled as a recorder does: the
 * allocation in which the countdown to the next sampled byte runs out
 * is sampled, and the countdown drawn again (several draws may fall in
 * one large object; it is sampled once). */
static struct site_figure record_once(const struct population *p,
				      uint64_t interval)
{
	struct site_figure f = {0};
	double left = gap(interval);
	uint64_t done[3] = {0};

	for (;;) {
		bool any = false;

		for (size_t k = 0; k < p->kinds; k++) {
			double s = (double)p->size[k];
			bool drawn = false;

			if (done[k] == p->n[k])
				continue;
			done[k]++;
			any = true;
			while (left <= s) {
				drawn = true;
				s -= left;
				left = gap(interval);
			}
			left -= s;
			if (drawn)
				site_figure_add(&f, interval, p->size[k]);
		}
		if (!any)
			return f;
	}
}

Test(sites, every_allocation_recorded_counts_exactly)
{
	struct site_figure f = {0};

	for (int i = 0; i < 1000; i++)
		site_figure_add(&f, 0, 24);
	site_figure_add(&f, 0, 100000);
	cr_assert_eq(f.objects, 1001);
	cr_assert_eq(f.bytes, 124000);
	cr_assert_eq(f.var_objects, 0);
	cr_assert_eq(f.var_bytes, 0);
	cr_assert_eq(f.samples, 1001);
	cr_assert_eq(site_error(f.var_bytes), 0);
}

Test(sites, a_sample_stands_for_one_over_its_chance)
{
	struct site_figure f = {0};
	double p = 1 - exp(-24.0 / 1024);

	site_figure_add(&f, 1024, 24);
	cr_assert_float_eq(f.objects, 1 / p, 1e-9);
	cr_assert_float_eq(f.bytes, 24 / p, 1e-9);
	cr_assert_float_eq(f.var_objects, (1 - p) / (p * p), 1e-9);
	/* an object far larger than the interval is all but certain */
	f = (struct site_figure){0};
	site_figure_add(&f, 1024, 1 << 20);
	cr_assert_float_eq(f.objects, 1, 1e-9);
}

/*
 * Small and large objects mixed, sampled at an interval between their
 * sizes: over many recordings the estimates average to the truth (they
 * are unbiased), and the 95% bound each states holds the truth in about
 * 95% of them.
 */
Test(sites, sampled_estimates_are_unbiased_and_their_bound_holds)
{
	const struct population pop = {
		.kinds = 3, .size = {24, 1000, 300000}, .n = {20000, 2000, 20},
	};
	const uint64_t interval = 100 * 1024;
	const int trials = 2000;
	double truth_objects = (double)population_objects(&pop);
	double truth_bytes = population_bytes(&pop);
	double sum_objects = 0, sum_bytes = 0, sd_bytes = 0;
	int held = 0;

	test_random_seed(29);
	for (int t = 0; t < trials; t++) {
		struct site_figure f = record_once(&pop, interval);

		sum_objects += f.objects;
		sum_bytes += f.bytes;
		sd_bytes += sqrt(f.var_bytes);
		if (fabs(f.bytes - truth_bytes) <= site_error(f.var_bytes))
			held++;
	}
	sd_bytes /= trials;
	/* the mean of 2000 estimates is within 4 of its standard errors */
	cr_assert_lt(fabs(sum_bytes / trials - truth_bytes),
		     4 * sd_bytes / sqrt(trials),
		     "mean bytes %.0f, truth %.0f", sum_bytes / trials,
		     truth_bytes);
	cr_assert_lt(fabs(sum_objects / trials - truth_objects),
		     0.05 * truth_objects, "mean objects %.0f, truth %.0f",
		     sum_objects / trials, truth_objects);
	cr_assert(held >= trials * 90 / 100 && held <= trials * 99 / 100,
		  "the 95%% bound held in %d of %d recordings", held, trials);
}
