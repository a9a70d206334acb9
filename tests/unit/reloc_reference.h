/*
 * reloc_reference.h - the rules of relocation.h written the obvious way,
 * and a record of what a tracker said, so that the two can be compared.
 *
 * The reference keeps objects in no order and checks every object against
 * every block and range (O(N * R)), with state kept per object; it shares
 * nothing with the tracker but the replay that feeds both. test_relocation.c
 * runs it beside the tracker on thousands of random traces; the replay
 * fuzz target (tests/fuzz) on whatever a reader accepts.
 *
 * Both sides are bounded by the RREF_MAX_* below. A trace that passes a
 * bound marks the side "too big", and is not compared: the reference
 * would be wrong there, not the tracker.
 */
#ifndef HT_RELOC_REFERENCE_H
#define HT_RELOC_REFERENCE_H

#include "analysis/relocation.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RREF_MAX_OBJECTS 4096
#define RREF_MAX_GCS 512
#define RREF_MAX_DUMPS 256
#define RREF_MAX_AGES 64
#define RREF_MAX_STEPS 1024

/* How a tracked object's tracking ended. */
struct rref_fate {
	bool known;
	enum reloc_step_kind end;  /* RELOC_END, RELOC_DIED or RELOC_LOST */
	enum reloc_cause cause;
	ht_id id;                  /* at the end, or where it died */
	unsigned generation;
	uint32_t other;
	int64_t alive_gc;
};

struct rref_dump {
	bool seen;
	struct reloc_dump_summary sum;  /* sum.ages points into ages */
	struct reloc_age ages[RREF_MAX_AGES];
};

/* What a tracker said through its hooks (rref_outcome_hooks), watching
 * every object. */
struct rref_outcome {
	struct rref_fate fate[RREF_MAX_OBJECTS];
	struct reloc_gc_summary gc[RREF_MAX_GCS];
	bool gc_seen[RREF_MAX_GCS];
	unsigned gc_reports[RREF_MAX_GCS];
	struct rref_dump dump[RREF_MAX_DUMPS];
	struct reloc_totals totals;
	uint64_t violations;
	struct reloc_step steps[RREF_MAX_STEPS];  /* the first ones */
	size_t n_steps;
	bool too_big;
	char problem[160];  /* a promise of the hooks broken, "" if none */
};

/* Hooks that fill o, which must be zeroed first. */
struct reloc_hooks rref_outcome_hooks(struct rref_outcome *o);

struct rref_naive;

/* NULL when out of memory. reports: the trace header's reports_survivors. */
struct rref_naive *rref_naive_new(bool reports);
void rref_naive_free(struct rref_naive *v);

/* Fed the same replay as the tracker, in the same order. */
void rref_naive_event(struct rref_naive *v, const struct ht_event *ev,
		      const struct ht_replay_state *st);
void rref_naive_dump_begin(struct rref_naive *v,
			   const struct ht_replay_state *st);
void rref_naive_dump_end(struct rref_naive *v,
			 const struct ht_replay_state *st);
/* After the last event, as reloc_finish. */
void rref_naive_finish(struct rref_naive *v);

/* A tracker and, when a run compares, the reference beside it (else
 * NULL), fed by one replay: the ctx of the callbacks that
 * rref_pair_callbacks gives, which also count the violations. */
struct rref_pair {
	struct reloc *tracker;
	struct rref_naive *naive;
	uint64_t violations;
};

struct ht_replay_callbacks rref_pair_callbacks(void);

/* Whether either side passed a bound, so that there is nothing to
 * compare. */
bool rref_too_big(const struct rref_outcome *got,
		  const struct rref_naive *v);

/* NULL when the tracker's outcome agrees with the reference in every
 * fate, GC summary, dump summary and total; else the first difference,
 * written into buf. */
const char *rref_compare(const struct rref_outcome *got,
			 const struct rref_naive *v, char *buf, size_t len);

#endif
