/*
 * replay.h - the replayer behind ht_replay. It runs each event through the
 * protocol state machine, numbers dumps and GCs, tracks the current
 * container and thread, joins objects continued with
 * HT_OBJ_MORE_REFERENCES, and calls the replay callbacks. It is fed one
 * event at a time, so tests and in-process users need no reader.
 *
 * For each event, in this order: its violations (on_violation, every one
 * of them); on_dump_end of the dump it closes implicitly (a C_BEGIN inside
 * a dump, a gc_started inside a GC that had references); on_dump_begin if
 * it begins a dump; on_event[type]; on_dump_end if it is the event that
 * closes the dump (C_END, gc_finished). The state passed with a closing
 * event and its on_dump_end still shows the dump (and the GC) open.
 *
 * At the end (replayer_finish), the trace's own violations (an unfinished
 * dump or GC, continuations still pending) and then on_dump_end for a dump
 * left open, so that every on_dump_begin has its on_dump_end.
 */
#ifndef HT_REPLAY_H
#define HT_REPLAY_H

#include <heaptrace/trace.h>

#include <stdbool.h>

struct replayer;

/* cb may be NULL (count and validate only); it is copied. NULL when out of
 * memory. */
struct replayer *replayer_new(const struct ht_replay_callbacks *cb,
			      void *ctx);

/*
 * One event. pos is where the reader found it (NULL if nowhere); the
 * replayer numbers events itself and puts that number in event_index.
 * Returns 0, or the non-zero value of the callback that asked to stop, or
 * -1 when out of memory (then replayer_out_of_memory is true).
 */
int replayer_feed(struct replayer *r, const struct ht_event *ev,
		  const struct ht_position *pos);

/* The end of the trace: call once, after the last event. end_pos may be
 * NULL. Returns as replayer_feed. */
int replayer_finish(struct replayer *r, const struct ht_position *end_pos);

/* Counts so far; read_error is left false (the replayer reads nothing). */
void replayer_summary(const struct replayer *r,
		      struct ht_replay_summary *summary);

bool replayer_out_of_memory(const struct replayer *r);

void replayer_free(struct replayer *r);

#endif
