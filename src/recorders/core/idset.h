/*
 * idset.h - a set of non-zero ids (the classes already named in the
 * trace, those a dump has used), asked from inside GC pauses without a
 * lock or malloc: the Mono and CLR recorders' tables (recorders/core,
 * for any recorder whose GC callbacks meet ids).
 *
 * Open addressing with linear probing; an id goes in with one
 * compare-and-swap. Outside a pause, adds serialize on a mutex and the
 * table is replaced by one twice as big when half full, so an add made
 * there is never lost. Inside a pause, adds only try their CAS and never
 * grow the table; one that races a replacement half done by a suspended
 * thread may be lost, which costs a repeated name, nothing worse.
 */
#ifndef HT_REC_IDSET_H
#define HT_REC_IDSET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* These structs are not an API; they may change from one release to the
 * next. */
struct idset_table {
	size_t mask;           /* capacity - 1, capacity a power of two */
	_Atomic uint64_t *keys;
	_Atomic size_t count;
	struct idset_table *retired_next;
};

struct idset {
	pthread_mutex_t lock;  /* adds outside pauses */
	_Atomic(struct idset_table *) table;
	struct idset_table *retired;
};

int idset_init(struct idset *s, size_t initial_cap);
void idset_destroy(struct idset *s);

bool idset_contains(const struct idset *s, uint64_t id);
/* 1 added, 0 already there, -1 not added (no room, or no memory). */
int idset_add(struct idset *s, uint64_t id, bool in_pause);

/* Outside pauses: grows the table until `more` ids fit without it
 * growing (so that adds inside the next pause find room). 0, or -1 when
 * memory ran out. */
int idset_make_room(struct idset *s, size_t more);

/* Calls fn for every id of the table in use (an id added meanwhile may
 * or may not be seen). Outside pauses. */
void idset_for_each(struct idset *s, void (*fn)(uint64_t id, void *ctx),
		    void *ctx);

#endif
