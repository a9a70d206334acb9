/*
 * protocol.h - the protocol state machine of doc/design.md section 2, shared by
 * the recording shim and the replayer.
 *
 * The state is small and plain (it fits in 8 bytes) so that the shim can
 * update it with a compare-and-swap from any thread without a lock: the
 * shim copies it, steps the copy, and swaps it in. proto_step is a pure
 * function of (state, event): no allocation, no globals.
 *
 * What needs memory (continuations of objects announced with
 * HT_OBJ_MORE_REFERENCES, keyed by id) is not here but in replay.c.
 */
#ifndef HT_PROTOCOL_H
#define HT_PROTOCOL_H

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* This struct is not an API; it may change from one release to the next. */
struct proto_state {
	uint8_t in_dump : 1;     /* between C_BEGIN and C_END */
	uint8_t aborted : 1;     /* a result of abort was seen in this dump */
	uint8_t heap_begun : 1;  /* C_HEAP was begun in this dump */
	uint8_t has_thread : 1;  /* a C_RT_THREAD was begun in this dump */
	uint8_t in_gc : 1;       /* between gc_started and gc_finished */
	uint8_t gc_refs : 1;     /* this GC has had root/object references */
	uint8_t gc_phase;        /* enum proto_gc_phase */
	uint8_t container;       /* type of the container begun last, 0 if none */
	uint8_t reserved[5];
};

enum proto_gc_phase {
	PROTO_GC_START = 0,  /* only generation_bounds so far */
	PROTO_GC_BODY = 1,   /* moves, survivals, references */
	PROTO_GC_FINISH = 2, /* generation_bounds after the body: only more
				bounds or gc_finished may follow */
};

/* What an event did to the brackets, for the replay's callbacks. */
#define PROTO_DUMP_BEGIN 0x1u /* a dump began (C_BEGIN, or a GC's first refs) */
#define PROTO_DUMP_END 0x2u   /* a dump ended (C_END, or gc_finished of a GC with refs) */
#define PROTO_GC_BEGIN 0x4u
#define PROTO_GC_END 0x8u

void proto_init(struct proto_state *s);
bool proto_gc_container(enum ht_container_type t);

/*
 * Applies ev to *s. Returns the first rule ev breaks (HT_V_NONE if none)
 * and sets *effects to the PROTO_* bits. The state moves on in the way that
 * best keeps later checks meaningful, violation or not (a C_BEGIN inside a
 * dump still starts a new dump; a gc_finished without gc_started leaves no
 * GC open).
 */
enum ht_violation_code proto_step(struct proto_state *s,
				  const struct ht_event *ev,
				  unsigned *effects);

/* At the end of the trace: HT_V_DUMP_UNFINISHED or HT_V_GC_UNFINISHED if a
 * bracket is still open (a dump first), HT_V_NONE otherwise. */
enum ht_violation_code proto_finish(const struct proto_state *s);

/* For messages: writes the first out-of-range field of ev ("root kind 7 at
 * ref 2") into buf and returns true, or returns false if every field that
 * proto_step checks is in range. */
bool proto_describe_bad_value(const struct ht_event *ev, char *buf,
			      size_t size);

_Static_assert(sizeof(struct proto_state) == 8, "proto_state must fit a CAS");

#endif
