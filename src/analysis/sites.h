/*
 * sites.h - allocation sites (doc/design.md section 3, "Allocation
 * sites"): which code allocated what a dump holds, what survived and what
 * died old. A version 4 trace carries the stack of some allocations (all
 * of them, or a sample: the header's `sites`); each such allocation is an
 * object the relocation tracker follows to every dump and to its death
 * (relocation.h, reloc_watch_sampled), and the dump's dominator tree says
 * what the site's objects retain.
 *
 * A sampled allocation of s bytes was drawn with probability
 * p = 1 - exp(-s / interval) (a Poisson process over the bytes
 * allocated), so it stands for 1/p allocations of its kind: the figures
 * are Horvitz-Thompson estimates, each with its variance, from which the
 * error bound is said. With `sites: all` every allocation has its stack
 * and the figures are exact.
 */
#ifndef HT_SITES_H
#define HT_SITES_H

#include "analysis/dominators.h"
#include "analysis/flame.h"
#include "analysis/heap.h"
#include "analysis/session.h"

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A figure of a site: objects and bytes, estimated with their variance
 * (both 0 when exact). This struct is not an API; it may change from one
 * release to the next. */
struct site_figure {
	double objects, bytes;
	double var_objects, var_bytes;
	uint64_t samples;         /* allocations with a stack behind it */
};

/* Objects of a site that survived `gcs` GCs before they died, or before
 * the trace's end. */
struct site_age {
	uint64_t gcs;
	struct site_figure figure;
};

/* One frame of a site: a method (the allocating one first), where the
 * trace says its file and line (NULL, 0 when not). */
struct site_frame {
	const char *method;       /* NULL: a method id the trace never named */
	ht_id id;                 /* the trace's method id, when unnamed */
	const char *file;
	uint32_t line;
};

/* This struct is not an API; it may change from one release to the next. */
struct site {
	size_t first_frame, n_frames; /* into sites.frames */
	bool unknown_stack;       /* the allocations named an undeclared stack */
	struct site_figure allocated;
	struct site_figure live;      /* in the dump */
	/* what the site's objects in the dump retain together, each object
	 * counted once: exact with every stack recorded; with a sample,
	 * what the sampled objects retain, a lower bound */
	uint64_t retained;
	struct site_figure promoted;  /* to the oldest generation */
	struct site_figure died_old;  /* died in it */
	struct site_age *ages;        /* by ascending gcs */
	size_t n_ages;
};

/* This struct is not an API; it may change from one release to the next. */
struct sites {
	/* asked */
	unsigned depth;           /* frames that make a site; 0: the whole
				     stack; 1: the allocating method alone */

	/* found */
	bool recorded;            /* the header says `sites` */
	bool sampled;             /* with an interval: figures estimated */
	uint64_t interval;        /* bytes, when sampled */
	bool generations_known;   /* the trace gives objects' generations */
	bool ages_known;          /* GCs prove survivors (the header's
				     reports_survivors): else ages say
				     nothing (the JVM's) */
	unsigned oldest;          /* the oldest generation GCs collect (2 on
				     the CLR, 1 on Mono) */
	uint64_t samples;         /* allocations with a stack */
	uint64_t unknown_stacks;  /* of them, naming an undeclared stack */
	uint64_t dump;            /* the dump of live and retained */
	bool damaged;
	struct site *site;
	size_t n_sites;
	struct site_frame *frames;
	size_t n_frames;

	/* private: the tables the replay fills */
	void *work;
};

/* What sites_find did. */
enum sites_result {
	SITES_FOUND,
	SITES_FAILED,             /* said why */
	SITES_NONE,               /* not said: the trace has no stacks */
};

/*
 * The sites of the input `in` (prepared, read again here) and of its
 * dump h (loaded from it, with its dominators d at their level). s->depth
 * is set by the caller; the rest is set here. sites_free frees s
 * whatever the result.
 */
enum sites_result sites_find(struct sites *s, struct input *in,
			     const struct heap *h,
			     const struct heap_dominators *d);
void sites_free(struct sites *s);

/*
 * The stack that allocated the object at `id` in dump `dump` of the
 * input `in`, when the trace recorded it: SITES_FOUND with its frames
 * in s->frames[0 .. s->n_frames), the allocating method first;
 * SITES_NONE (not said) when the trace has no stacks (its header says
 * so, and it is not read again) or the object was allocated without
 * one. sites_free frees s whatever the result.
 */
enum sites_result sites_allocation_of(struct sites *s, struct input *in,
				      uint64_t dump, ht_id id);

/*
 * The allocating frame of each of the objects at ids[0 .. n) in dump
 * `dump` of the input `in`: by[i] is the innermost frame of the stack
 * that allocated ids[i], with method NULL and id 0 when it has none.
 * SITES_NONE (not said) when the trace has no stacks at all. The frames
 * point into s, which sites_free frees whatever the result.
 */
enum sites_result sites_allocating_frames(struct sites *s, struct input *in,
					  uint64_t dump, const ht_id *ids,
					  size_t n, struct site_frame *by);

/* A site in two dumps (of one trace or two runs), matched by its frames
 * as sites_find grouped them: its figures before and after, rounded
 * (estimates when sampled). This struct is not an API; it may change
 * from one release to the next. */
struct site_change {
	const struct site_frame *frames; /* the after site's, or before's */
	size_t n_frames;
	bool unknown_stack;
	uint64_t live_before, live_after;
	uint64_t live_objects_before, live_objects_after;
	uint64_t retained_before, retained_after;
	uint64_t allocated_before, allocated_after;
};

/*
 * The sites of a and b (found at one depth) matched by their frames'
 * names, files and lines, biggest growth of live bytes first (ties by
 * retained growth, then by name); *out malloc'ed. 0, or -1 when out of
 * memory.
 */
int sites_compare(const struct sites *a, const struct sites *b,
		  struct site_change **out, size_t *n);

/* A figure of a site in bytes: what orders sites and sizes their frames
 * in a flame graph. */
enum site_measure {
	SITE_ALLOCATED,
	SITE_LIVE,
	SITE_RETAINED,
	SITE_DIED_OLD,
};

/* The site's bytes by that measure (an estimate when sampled). */
double site_measure_of(const struct site *x, enum site_measure by);

/* An estimate as the reports give it: rounded, 0 below 0, and at most
 * UINT64_MAX. */
uint64_t site_round(double x);

/*
 * The sites as a flame graph (flame.h): each stack from its outermost
 * frame down to the allocating one, stacks with the same first frames
 * merged, each site's frame as wide as its bytes allocated, live or
 * retained (rounded estimates when sampled), with its objects. Retained
 * sizes of sites overlap where one site's objects hold another's. A
 * frame is named as a stack trace names it, "Demo.Keep(Demo.cs:10)".
 * Returns 0, or -1 when out of memory (f freed).
 */
int sites_flame(const struct sites *s, enum site_measure by,
		struct flame *f);

/* The error bound said with an estimate: 1.96 standard deviations, 95%
 * of estimates within it. */
double site_error(double variance);

/* Adds what one allocation of `size` bytes with a stack stands for to f:
 * itself when every stack was recorded (interval 0), else 1/p objects
 * and size/p bytes, p = 1 - exp(-size/interval) the chance that it was
 * drawn, with their variances. */
void site_figure_add(struct site_figure *f, uint64_t interval,
		     uint64_t size);

#endif
