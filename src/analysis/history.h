/*
 * history.h - the history of one id: the objects that have held it, by
 * their serial numbers (ids are reused after compaction, so an id names
 * no object by itself), every step of their lives by the relocation
 * rules of doc/design.md section 3 (relocation.h), the names the trace
 * gave their classes, and, when the trace has times, when each GC
 * started and each dump began.
 *
 * Two replays: the first finds the holders, the second watches them from
 * their first event. The input is therefore one that can be read twice
 * (session.h, struct input); its voice says the messages and shows the
 * progress of each replay. Exit statuses and the words of a finding
 * (no such dump, no object) are the caller's.
 */
#ifndef HT_HISTORY_H
#define HT_HISTORY_H

#include "analysis/alloc_stacks.h"
#include "analysis/class_names.h"
#include "analysis/relocation.h"
#include "analysis/session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A step's time, or a GC's or dump's, when the trace gave none. */
#define HISTORY_NO_TIME UINT64_MAX

/*
 * What was asked and what the replays found. This struct is not an API;
 * it may change from one release to the next.
 */
struct history {
	/* asked */
	ht_id target;
	int64_t select;          /* a dump number, or -1: every holder */

	/* found */
	bool damaged;            /* warned about once */
	uint64_t dumps_in_trace;
	uint32_t *holders;       /* serials of the objects, sorted, unique */
	size_t n_holders, cap_holders;
	struct reloc_step *steps; /* theirs, in the trace's order */
	size_t n_steps, cap_steps;
	struct class_names classes; /* sorted once found */
	struct alloc_stacks stacks; /* what allocation steps name */
	bool timed;              /* the trace has times */
	uint64_t *gc_times;      /* by GC number: its start */
	size_t n_gc_times, cap_gc_times;
	uint64_t *dump_times;    /* by dump number: its begin (a GC's
				    references: the GC's start) */
	size_t n_dump_times, cap_dump_times;
	/* the GC the trace is cut off inside (never closed, its process
	 * ended there), -1 if none */
	int64_t cut_off_gc;

	/* the replay under way */
	struct input *input;
	struct reloc *tracker;
	void *progress;
	struct ht_reader *reader;
	bool collect;            /* the second replay: steps and names */
	bool out_of_memory;
	struct reloc_gc_summary last_gc; /* as the tracker closed it */
	bool any_gc;
};

/* What history_find found. */
enum history_result {
	HISTORY_FOUND,           /* h->holders, steps, classes, times set */
	HISTORY_FAILED,          /* said why */
	HISTORY_NO_SUCH_DUMP,    /* not said: select >= h->dumps_in_trace */
	HISTORY_NOT_FOUND,       /* not said: no object had the id */
};

/*
 * The history of `target` (in dump `select` only, when not -1) in the
 * input `in`, prepared (session_input_prepare) and read twice. Damage is
 * warned about, once; h->damaged says a finding may lie in what was
 * lost. h is set to zero first; history_free frees it whatever the
 * result.
 */
enum history_result history_find(struct history *h, struct input *in,
				 ht_id target, int64_t select);
void history_free(struct history *h);

/* When a step happened: its dump's begin, else its GC's start;
 * HISTORY_NO_TIME when the trace did not say. */
uint64_t history_step_time(const struct history *h,
			   const struct reloc_step *s);

/*
 * One object's life: its serial, and its last step, which says what
 * became of it and the most the trace told of it (NULL when it has
 * none). This struct is not an API; it may change from one release to
 * the next.
 */
struct history_life {
	uint32_t object;
	const struct reloc_step *last;
};

/* The objects found, in serial order, with their last steps; n set.
 * NULL when out of memory. Freed with free. */
struct history_life *history_lives(const struct history *h, size_t *n);

#endif
