/*
 * hprof_model.c - which object layout the dumped JVM had (hprof_layout.h:
 * compressed oops or not), when the caller does not say: HPROF gives no
 * sizes, but the objects' ids are their addresses, and each pair of
 * neighbours bounds the first one's size. The index pass observes the
 * pairs; the layout the addresses fit best is then chosen, or the one
 * given checked against them.
 */
#include "lib/read/hprof_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- Evidence ---------------------------------------------------------- */

void hprof_observe(struct evidence *e, uint64_t id, const uint64_t *size)
{
	if (e->have_prev && id > e->prev_id && e->pairs < MAX_EVIDENCE_PAIRS) {
		uint64_t gap = id - e->prev_id;

		e->pairs++;
		for (int m = 0; m < 3; m++) {
			if (gap < e->prev_size[m])
				e->overlaps[m]++;
			else if (gap == e->prev_size[m])
				e->exact[m]++;
		}
	}
	e->have_prev = size != NULL;
	if (size) {
		e->prev_id = id;
		memcpy(e->prev_size, size, sizeof(e->prev_size));
	}
}

void hprof_observe_instance(struct hprof_source *s, uint64_t id,
			     struct hclass *c)
{
	uint64_t size[3];

	for (int m = 0; m < 3; m++) {
		if (!c || !hprof_class_layout(s, c, (enum jvm_model)m)) {
			hprof_observe(&s->evidence, id, NULL);
			return;
		}
		size[m] = c->size[m];
	}
	hprof_observe(&s->evidence, id, size);
}

void hprof_observe_array(struct hprof_source *s, uint64_t id, unsigned type,
			  uint64_t n)
{
	uint64_t size[3];

	for (int m = 0; m < 3; m++)
		size[m] = layout_array_size(&jvm_layouts[m], type, n);
	hprof_observe(&s->evidence, id, size);
}

/* ---- The decision ------------------------------------------------------ */

/* The layout the addresses fit best: the fewest objects reaching past
 * their neighbour, then the most that end exactly where it begins, then
 * the smallest (compressed oops, which every heap under 32 GB has unless
 * told otherwise). */
static enum jvm_model best_model(const struct evidence *e)
{
	int best = 0;

	for (int m = 1; m < 3; m++)
		if (e->overlaps[m] < e->overlaps[best] ||
		    (e->overlaps[m] == e->overlaps[best] &&
		     e->exact[m] > e->exact[best]))
			best = m;
	return (enum jvm_model)best;
}

/* When the layout given contradicts the addresses (they fit a layout of
 * the other kind of references better, and say so by objects that end
 * where the next begins), what they show, into s->contradiction. */
static void check_given(struct hprof_source *s, bool yes)
{
	const struct evidence *e = &s->evidence;
	enum jvm_model best = best_model(e);
	enum jvm_model given = yes ? JVM_COMPRESSED : JVM_WIDE_OOPS;

	if (e->exact[best] == 0 || (best == JVM_COMPRESSED) == yes)
		return;
	snprintf(s->contradiction, sizeof(s->contradiction),
		 "they fit %s: %llu of %llu adjacent objects end where the "
		 "next begins (as %s: %llu, and %llu reach past it)",
		 jvm_layouts[best].name, (unsigned long long)e->exact[best],
		 (unsigned long long)e->pairs, jvm_layouts[given].name,
		 (unsigned long long)e->exact[given],
		 (unsigned long long)e->overlaps[given]);
}

/* The layout the option asks for, or the one the addresses fit best. */
void hprof_decide_model(struct hprof_source *s, char *why, size_t size)
{
	const struct evidence *e = &s->evidence;
	enum jvm_model best;

	if (s->id_size == 4) {
		s->model = JVM_32BIT;
		snprintf(why, size, "4-byte ids");
		return;
	}
	if (s->choice != HT_COMPRESSED_OOPS_AUTO) {
		bool yes = s->choice == HT_COMPRESSED_OOPS_YES;

		s->model = yes ? JVM_COMPRESSED : JVM_WIDE_OOPS;
		snprintf(why, size, "given: compressed oops %s",
			 yes ? "yes" : "no");
		check_given(s, yes);
		return;
	}
	best = best_model(e);
	s->model = best;
	if (e->exact[best] == 0)
		snprintf(why, size, "auto: no adjacent objects to tell by, "
			 "assumed");
	else
		snprintf(why, size, "auto: %llu of %llu adjacent objects end "
			 "where the next begins",
			 (unsigned long long)e->exact[best],
			 (unsigned long long)e->pairs);
}
