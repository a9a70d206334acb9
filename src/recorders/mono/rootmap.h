/*
 * rootmap.h - the address ranges Mono registered as GC roots, with their
 * source, so that a root slot reported during a collection can be told
 * apart: a thread's stack, a class's statics, a GC handle table, ...
 *
 * Mono registers and unregisters ranges while the program runs, from any
 * thread; it reports root slots only with the world stopped, from the
 * thread that collects. So the two sides never run at once, but a
 * registering thread may be suspended anywhere, even half way through an
 * update. Writers therefore serialize on a mutex and publish each slot
 * with a release store of its `live` flag; the reader takes no lock,
 * allocates nothing, and trusts only live slots. Tables are replaced, not
 * grown, and replaced ones are kept until rootmap_destroy.
 */
#ifndef MREC_ROOTMAP_H
#define MREC_ROOTMAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* This struct is not an API; it may change from one release to the next. */
struct root_range {
	uintptr_t start, end;  /* [start, end) */
	uint64_t id;           /* what the root is of: thread, class, ... */
	uint8_t source;        /* MonoGCRootSource */
};

struct rootmap_slot {
	_Atomic uint32_t live;
	struct root_range r;
};

struct rootmap_table {
	size_t cap;
	struct rootmap_slot *slots;
	/* the reader's sorted copy of the live slots, room for cap */
	struct root_range *sorted;
	size_t n_sorted;
	struct rootmap_table *retired_next;
};

struct rootmap {
	pthread_mutex_t lock;  /* writers only */
	_Atomic(struct rootmap_table *) table;
	struct rootmap_table *retired;
	struct rootmap_table *frozen; /* the reader's, set by rootmap_freeze */
	size_t n_live;         /* under lock */
	_Atomic uint64_t dropped; /* updates that could not be applied */
};

int rootmap_init(struct rootmap *m, size_t initial_cap);
void rootmap_destroy(struct rootmap *m);

/* Writers. in_pause says the world is stopped: then the mutex is only
 * tried (a suspended thread may hold it) and the update is dropped, and
 * counted, if it is taken. */
void rootmap_add(struct rootmap *m, uintptr_t start, size_t size,
		 uint8_t source, uint64_t id, bool in_pause);
void rootmap_remove(struct rootmap *m, uintptr_t start, bool in_pause);

/* Reader, with the world stopped: sorts the live ranges once (call it at
 * the start of each pause that looks roots up), then finds the range that
 * holds an address, or NULL. */
void rootmap_freeze(struct rootmap *m);
const struct root_range *rootmap_find(const struct rootmap *m, uintptr_t addr);

#endif
