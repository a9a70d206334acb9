/*
 * mono.h - the parts of the Mono profiler module
 * (libmono-profiler-heaptrace.so) and the state they share; private to
 * src/recorders/mono.
 *
 * mono-profiler.c  what the module does (the overview), loading it, the
 *                  runtime's shutdown and closing the trace;
 * names.c          class and thread names;
 * fields.c         classes' reference fields, built in pauses;
 * generations.c    the nursery, generations' bounds, survivors in place;
 * events.c         allocations, moves and roots as Mono reports them;
 * sites.c          allocation sites: the sampler, stacks and places;
 * walk.c           the heap walk of a dump, strings' contents;
 * pauses.c         GC pauses: which GC is open, when to walk, requests;
 * signals.c        SIGUSR1 (--dump-on signal), SIGTERM and SIGINT;
 * rootmap.c        the registered root ranges (rootmap.h, built without
 *                  Mono for the tests).
 * What every recorder shares is in recorders/core.
 */
#ifndef HT_RECORDERS_MONO_H
#define HT_RECORDERS_MONO_H

#include "recorders/core/guard.h"
#include "recorders/core/idset.h"
#include "recorders/core/options.h"
#include "recorders/core/trace.h"
#include "recorders/mono/rootmap.h"

#include <heaptrace/record.h>

#include <mono/metadata/class.h>
#include <mono/metadata/object.h>
#include <mono/metadata/profiler.h>

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define DUMP_SIGNAL SIGUSR1
/* Mono hands at most 128 references per call of the walk callback; a
 * longer piece is passed on in parts of this size. */
#define PIECE_REFS 256
/* Roots and moves are passed to the shim in batches from the stack. */
#define BATCH 128
#define CLASS_NAME_MAX 1024
/* Field tables room at first: classes, and reference fields in all. */
#define FIRST_FIELD_CLASSES 4096
#define FIRST_FIELD_SLOTS 32768
/* Moves a walked GC can have before the first grows the room (1 MiB) */
#define FIRST_DESTINATIONS (1u << 17)
/* FieldAttributes (ECMA-335 II.23.1.5) */
#define FIELD_STATIC 0x10
#define FIELD_LITERAL 0x40

void mono_profiler_init_heaptrace(const char *desc);

struct _MonoProfiler {
	int unused;
};

/* The structs below are the profiler's own, not an API; they may change
 * from one release to the next. */

/* One reference field of a class: where it is, and its id in the trace. */
struct field_slot {
	uint32_t offset;
	ht_id id;
};

/* The reference fields of one class, slices of the pool sorted by offset:
 * the instance ones, its own and inherited, and its own static ones
 * (offsets into the class's statics). */
struct class_fields {
	uintptr_t klass; /* 0: a free entry */
	uint32_t first, n;
	uint32_t first_static, n_static;
	bool complete;   /* false: the pool had no room, built again later */
};

/* Every class's table, built in the pause that first meets the class
 * (Mono's getters only, on a class whose fields an object or a statics
 * root shows are laid out), in memory allocated before; grown between
 * pauses. */
struct field_tables {
	struct class_fields *classes;
	size_t mask, used;
	struct field_slot *pool;
	size_t pool_cap, pool_used;
	size_t pool_short;  /* the most room a class lacked */
	bool incomplete;    /* some class waits for room */
};

/* The object of the walk whose references may continue in the next call:
 * it is recorded once the next call tells whether it does. */
struct piece {
	bool valid;
	ht_id id, class_id;
	uint64_t size;
	int generation;
	const struct class_fields *fields;
	size_t n;
	ht_id refs[PIECE_REFS];
	ht_id ref_fields[PIECE_REFS];
	/* a string's contents (--values), with its last part */
	bool has_text;
	struct ht_array_values text;
};

/* The profiler's state: one for the process, since Mono calls the
 * callbacks with a MonoProfiler of ours that carries nothing. This struct
 * is not an API; it may change from one release to the next. */
struct mono_state {
	struct _MonoProfiler prof;
	MonoProfilerHandle handle;
	struct rec_options opt;
	struct rec_trace trace;  /* the trace, and the guard around it */
	struct rootmap roots;
	struct idset classes;

	_Atomic bool runtime_ready;  /* runtime initialized: names, requests */
	_Atomic bool requested;      /* a walk is due at the next major */
	_Atomic bool stopping;       /* the exit dump is taken: no more walks */
	_Atomic bool in_pause;       /* the world is stopped */
	_Atomic bool concurrent;     /* a concurrent major runs between pauses */

	/* Pause state. Pauses are serialized by Mono's GC lock, and each one
	 * runs on the single thread that collects, so plain fields do. */
	int max_gen;
	bool walk_pause;      /* this pause ends with a heap walk */
	bool induced_pause;   /* forced by us (request, exit) */
	bool gc_open;         /* gc_started recorded, gc_finished not yet */
	bool gc_major;        /* the open GC collects the old generation */
	bool major_running;   /* a concurrent major began in an earlier pause */
	bool gc_started_here; /* the open GC began with a START in this pause */
	bool gc_roots_seen;   /* Mono reported the open GC's roots */
	bool notify_after;    /* wake the finalizer thread after the pause */
	int64_t gc_number;
	uint64_t qualifying;  /* collections that count for --every */
	struct piece piece;
	/* --values: System.String's class in this walk (NULL: none is
	 * recorded), and the strings recorded with their contents */
	MonoClass *string_class;
	_Atomic uint64_t strings_valued;
	/* nursery objects the walk met, for surviving blocks */
	ht_id walked_survivors[BATCH];
	size_t n_walked_survivors;
	/* A walked major GC proves the old generation's dead too: the
	 * destinations of its moves (allocated beforehand, grown between
	 * pauses), and the run of walked objects that survived in place */
	bool gc_proves_old;
	bool gc_walked;
	_Atomic bool dests_busy;  /* held by a walked GC, or growing them */
	ht_id *dests;
	size_t n_dests, cap_dests, most_dests;
	bool dests_overflow;
	char class_name[CLASS_NAME_MAX];

	/* field tables: used by one thread at a time, the one that holds
	 * tables_busy (a walked pause, or growing them after one) */
	struct field_tables ft;
	_Atomic bool tables_busy;
	bool tables_held;     /* this pause holds them */
	ht_id last_field;     /* the last field id given */
	_Atomic uint64_t classes_unmapped; /* no room for their table */

	/* the nursery, generation 0: [start, end), fixed once the runtime
	 * runs; nursery_known publishes the two */
	uintptr_t nursery_start, nursery_end;
	_Atomic bool nursery_known;

	/* classes named before the runtime could name generics fully */
	MonoClass **early;
	size_t n_early, cap_early;
	pthread_mutex_t early_lock;

	/* --dump-on signal, SIGTERM and SIGINT: the handler posts, a helper
	 * thread requests the dump (or takes the last one, for the two that
	 * end the program) */
	sem_t signal_sem;
	pthread_t signal_thread;
	bool signal_thread_started;
	_Atomic bool signal_quit;
	_Atomic int ending_signal;   /* SIGTERM or SIGINT received, or 0 */
};

extern struct mono_state state;

/* The recording guard (recorders/core/guard.h) around every callback. */
static inline bool enter(void)
{
	return guard_enter(&state.trace.guard);
}

static inline void leave(void)
{
	guard_leave(&state.trace.guard);
}

/* ---- names.c: class names, thread names ---- */
const char *plain_class_name(MonoClass *k, char *buf, size_t len);
void name_class_in_pause(MonoClass *k);
void on_class_loaded(MonoProfiler *prof, MonoClass *k);
void on_thread_name(MonoProfiler *prof, uintptr_t tid, const char *name);
void on_runtime_initialized(MonoProfiler *prof);

/* ---- fields.c: reference fields ---- */
const struct class_fields *class_fields_of(MonoClass *k, int depth);
ht_id instance_field_at(const struct class_fields *c, uintptr_t off);
ht_id static_field_at(MonoClass *k, uintptr_t offset);
bool tables_claim(void);
void tables_release(void);
int field_tables_alloc(struct field_tables *t, size_t classes,
		       size_t slots);
void field_tables_make_room(void);

/* ---- generations.c: the nursery, generations' bounds ---- */
void find_nursery(void);
bool in_nursery(uintptr_t a);
void record_start_bounds(bool with_old);
void record_finish_bounds(void);
void record_old_kept(void);
void record_nursery_kept(void);
void record_nursery_survivors(uint64_t count,
			      MonoObject *const *objects);

/* ---- events.c: allocations, moves, roots ---- */
uint64_t size_in_heap(uint64_t size);
void on_allocation(MonoProfiler *prof, MonoObject *obj);
void on_moves(MonoProfiler *prof, MonoObject *const *objects,
	      uint64_t count);
void on_root_register(MonoProfiler *prof, const mono_byte *start,
		      uintptr_t size, MonoGCRootSource source,
		      const void *key, const char *name);
void on_root_unregister(MonoProfiler *prof, const mono_byte *start);
void on_gc_roots(MonoProfiler *prof, uint64_t count,
		 const mono_byte *const *addresses,
		 MonoObject *const *objects);

/* ---- sites.c: allocation sites ---- */
/* The stack to record with an allocation of size bytes on this thread:
 * 0 when it is not sampled (or no stack can be had). */
ht_id sites_stack_of(uint64_t size);
/* The header's metadata sites: "all", the interval in buf, or NULL. */
const char *sites_metadata(char *buf, size_t len);
int sites_start(void);
void sites_stats(uint64_t *walks, uint64_t *stacks, uint64_t *unresolved);

/* ---- walk.c: the heap walk ---- */
bool little_endian(void);
void walk_heap(void);

/* ---- pauses.c: GC pauses ---- */
void gc_close(void);
void gc_open(int gen);
void on_gc_phase(MonoProfiler *prof, MonoProfilerGCEvent ev,
		 uint32_t gen, mono_bool serial);
void on_finalized(MonoProfiler *prof);

/* ---- signals.c: signals ---- */
int start_signal_helper(bool dump_signal);
void stop_signal_helper(void);

/* ---- mono-profiler.c: loading, shutdown ---- */
void on_shutdown_begin(MonoProfiler *prof);
void close_recorder(void);

#endif
