/*
 * clr.h - the parts of the CoreCLR profiler (libheaptrace-clr.so) and the
 * state they share; private to src/recorders/clr.
 *
 * clr-profiler.c  what the profiler does (the overview), loading it and
 *                 closing the trace;
 * com.c           the COM glue: the callback object and its vtable, the
 *                 class factory, DllGetClassObject;
 * callbacks.c     the runtime's callbacks: GCs, the heap walk, the
 *                 objects of a dump, allocations, threads;
 * fields.c        classes' reference fields (the lock-free field map) and
 *                 strings' contents;
 * statics.c       classes' static fields, their slots, and the roots
 *                 they are in a dump;
 * tables.c        the other tables a GC reads without a lock: the non-GC
 *                 heap, dependent handles, generation bounds;
 * stacks.c        which thread and frame each stack root of a forced
 *                 dump belongs to (a snapshot of the stacks before it;
 *                 chain.c the proof, chain.h);
 * places.c        a frame's file and line, from its native code's IL
 *                 offset and the assembly's portable PDB (pdb.c, pdb.h);
 * sites.c         allocation sites (--sites): each sampled allocation
 *                 with its stack;
 * naming.c        names from metadata, and the recorder thread that reads
 *                 them while a GC waits, and forces GCs to dump;
 * ending.c        SIGUSR1 (--dump-on signal), SIGTERM and SIGINT;
 * attach.c        attached to a running process (record --pid): the
 *                 control socket to heaptrace, the detach;
 * mask.c          the event mask, and what it costs every GC;
 * names.c         names formatted from what the runtime gives (names.h,
 *                 built without the runtime for the tests).
 * What every recorder shares is in recorders/core.
 */
#ifndef HT_RECORDERS_CLR_H
#define HT_RECORDERS_CLR_H

#include "recorders/clr/corprof.h"
#include "recorders/clr/names.h"
#include "recorders/core/guard.h"
#include "recorders/core/idset.h"
#include "recorders/core/options.h"
#include "recorders/core/trace.h"

#include <heaptrace/record.h>

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define DUMP_SIGNAL SIGUSR1
/* Roots are passed to the shim in batches from the stack. */
#define BATCH 256
/* How long a GC waits for the recorder thread to name its classes, and
 * the exit for its dump. */
#define NAMING_WAIT_MS 10000
/* attach.c's first collection, which no dump waits on but heaptrace's */
#define PRIMING_WAIT_MS 60000
#define PRIMING_TRIES 3
#define EXIT_DUMP_WAIT_MS 60000
/* Generation ranges room at first (regions: many per generation). */
#define FIRST_BOUNDS 1024
/* Dependent handles room at first. */
#define FIRST_DEPENDENTS 4096
/* Classes with a field table room at first; reference fields of one
 * object that the walk matches at most. */
#define FIRST_FIELD_CLASSES 16384
#define MATCH_FIELDS_MAX 256
/* Objects a walk keeps to look up in the non-GC heap's list at its end. */
#define WALK_FIRST_MAX 64

__attribute__((visibility("default")))
clr_hresult DllGetClassObject(const struct clr_guid *clsid,
			      const struct clr_guid *iid, void **out);

enum { TABLES_IDLE, TABLES_IN_GC, TABLES_SWAPPING };

/* Requests to the recorder thread: bits of state.requests. */
enum {
	REQ_NAME = 1,      /* name the new classes and methods, then say so */
	REQ_AFTER_GC = 2,  /* make room for the next GC, refresh the lists */
	REQ_DUMP = 4,      /* force a GC to dump (signal, exit) */
	REQ_QUIT = 8,
	REQ_NAME_SOON = 16, /* name the ids met since (name_soon) */
	REQ_SITES = 32,    /* place the frames of allocations waiting */
};

/* The structs below are the profiler's own, not an API; they may change
 * from one release to the next. */

/* A dependent handle of the current walk: key keeps value alive. */
struct dependent {
	_Atomic uint64_t key;
	_Atomic uint64_t value;
};

/* A class's reference fields, its own and inherited, by offset from the
 * object's start: immutable once published. */
struct field_ref {
	uint32_t offset;
	uint32_t length;   /* an embedded struct's bytes (UINT32_MAX: to the
			      object's end) */
	ht_id id;
	uint8_t type;      /* a primitive's HT_TYPE_*; 0 a reference */
};
/* An array's elements: none of them a reference, each one, or each a
 * struct whose reference fields f[] holds (offsets from the element's
 * start, ids the struct's own fields). */
enum { ELEMENTS_NONE, ELEMENTS_REFS, ELEMENTS_STRUCTS };
struct class_fields {
	uint8_t elements;  /* an array's: ELEMENTS_* */
	uint8_t element_type; /* a primitive array's HT_TYPE_* (values) */
	uint32_t rank;     /* an array's */
	size_t n;          /* reference fields: f[0..n) */
	size_t n_values;   /* primitive fields (values): f[n..n + n_values) */
	size_t n_structs;  /* embedded structs, after the values */
	/* a struct's: its reference fields' names, as f[0..n) (an object
	 * that embeds it names them after its own field), and how many
	 * structs deep the deepest one lies (0: in the struct itself) */
	char **names;
	uint8_t nest;
	struct field_ref f[];
};
/* What the walk records of an object's values (--values): its primitive
 * fields', at most VALUES_MAX, and a string's text or a primitive array's
 * contents. */
#define VALUES_MAX 64
struct object_values {
	size_t n;
	ht_id fields[VALUES_MAX];
	uint64_t values[VALUES_MAX];
	bool has_array;
	struct ht_array_values array;
};
/* An array's table made in the walk, on the stack, before the recorder
 * has made it (arrays raise no ClassLoadFinished): its element struct's
 * reference fields, up to ELEMENT_FIELDS_MAX. */
#define ELEMENT_FIELDS_MAX 32
union array_table {
	struct class_fields c;
	unsigned char room[sizeof(struct class_fields) +
			   ELEMENT_FIELDS_MAX * sizeof(struct field_ref)];
};
/* The last part of an array's references, which the walk records as the
 * object's (array_elements recorded the parts before it). */
struct array_part {
	size_t n;
	const ht_id *refs, *fields;
	ht_id refs_buf[BATCH], fields_buf[BATCH];
};

/* Class id -> its fields, read inside GCs without a lock: open addressing,
 * an entry's key is set once and its value published after the table is
 * built. Writers (outside GCs) serialize on fields_lock; a full table is
 * replaced by a bigger copy and kept (a GC may still read it). */
struct field_map {
	size_t mask;
	_Atomic uint64_t *keys;
	_Atomic(struct class_fields *) *values;
	struct field_map *retired_next;
};

/* The objects of the non-GC heap, as last listed; refs flattened. */
struct frozen {
	size_t n, n_refs;
	uint64_t *ids, *classes, *sizes;
	size_t *ref_start; /* n + 1 entries into refs */
	uint64_t *refs;
	uint64_t *sorted;  /* the ids in order, for lookups in the walk */
};

/* The profiler's state: one for the process, since the runtime calls the
 * callbacks without a context of ours. This struct is not an API; it may
 * change from one release to the next. */
struct clr_state {
	struct clr_callback callback;
	struct clr_factory factory;
	struct clr_info *info;
	int info_level;        /* the highest ICorProfilerInfo obtained */
	struct rec_options opt;
	struct rec_trace trace;  /* the trace, and the guard around it */
	/* attached by heaptrace record --pid (attach.c), and its control
	 * socket, -1 without */
	bool attached;
	_Atomic int control;
	_Atomic bool priming;        /* attach.c's first GC: classes, no dump */
	_Atomic uint64_t primed_objects; /* the objects its walk met */
	/* moves and survivors from the runtime's movement events (gc_events.c)
	 * rather than MovedReferences2: COR_PRF_MONITOR_GC only around a
	 * forced dump */
	bool moves_by_events;
	clr_ulong mask;              /* the event mask asked for, GC part aside */
	_Atomic bool monitoring_gc;  /* COR_PRF_MONITOR_GC is on, for a dump */
	/* this GC's blocks come from MovedReferences2 (from the events when
	 * false); chosen at its start, so that one GC has one source */
	_Atomic bool gc_by_callbacks;
	_Atomic uint64_t events_malformed; /* movement events cut short */
	_Atomic uint64_t background_gcs;   /* seen by the events: no proof */
	sem_t attach_complete;       /* posted by ProfilerAttachComplete */

	/* GCs: one at a time (the runtime serializes them). The tables a GC
	 * uses (bounds, dependent handles) are replaced by the recorder
	 * thread between GCs only: tables holds TABLES_IDLE, TABLES_IN_GC
	 * from a GC's start to its finish, TABLES_SWAPPING while the recorder
	 * swaps pointers (a GC that starts then waits for it, briefly). */
	_Atomic int tables;
	_Atomic int64_t gc_number;
	uint64_t qualifying;         /* collections that count for --every */
	_Atomic bool dump_gc;        /* this GC's walk is recorded */
	_Atomic bool forced_pending; /* a forced dump is on its way */
	_Atomic bool exiting;        /* the exit dump is taken: no more */
	struct clr_generation_range *clr_bounds;
	struct ht_generation_range *bounds;
	size_t bounds_cap;
	_Atomic size_t bounds_needed;
	_Atomic uint64_t bounds_cut;

	/* dependent handles of the walk: open addressing by key */
	struct dependent *dependents;
	size_t dependents_mask;
	_Atomic size_t dependents_used;
	_Atomic size_t dependents_peak;     /* most pairs a walk had */
	_Atomic uint64_t dependents_dropped;
	_Atomic uint64_t dependents_early;  /* recorded before the key's fields */

	/* reference fields of classes */
	_Atomic(struct field_map *) fields;
	pthread_mutex_t fields_lock;
	size_t fields_used;          /* under fields_lock, as below */
	ht_id last_field;
	_Atomic uint64_t fields_failed; /* classes whose layout was refused */

	/* names */
	struct idset classes_seen, classes_named;
	struct idset methods_seen, methods_named;
	struct idset threads_named;  /* named by the program before created */
	_Atomic uint64_t naming_late;
	uint64_t naming_longest_ms;  /* the GC thread's alone */

	/* System.String's class id, found outside GCs (0 until then), and
	 * where its length and units lie: for an empty string's size, and
	 * strings' contents (values) */
	_Atomic uint64_t string_class;
	bool string_layout;
	uint32_t string_length_at, string_units_at;
	_Atomic uint64_t strings_valued;

	/* the non-GC heap's objects, published whole */
	_Atomic(struct frozen *) frozen;
	struct frozen *frozen_retired;
	_Atomic int frozen_readers;
	/* does a dumped GC's walk report the non-GC heap itself? */
	_Atomic(const struct frozen *) walk_frozen;
	_Atomic bool walk_saw_frozen;
	_Atomic size_t walk_first_n;
	_Atomic uint64_t walk_first[WALK_FIRST_MAX];

	/* SIGTERM and SIGINT: the handler posts, the ender thread takes the
	 * exit dump and hands the signal on */
	sem_t ending;
	_Atomic int ending_signal;
	struct sigaction before_ours[2];  /* as ending_signals[] */

	/* the recorder thread */
	pthread_t thread;
	bool thread_started;
	int wake[2];
	_Atomic unsigned requests;
	_Atomic uint64_t name_asked, name_done;
	_Atomic uint64_t dumps_asked, dumps_done;
	sem_t progress;              /* posted when name_done or dumps_done move */
	pthread_t forcer;
	bool forcer_joinable;        /* the recorder thread's alone */
	_Atomic bool forcing;
};

extern struct clr_state state;

/* The recording guard (recorders/core/guard.h) around every callback. */
static inline void leave(void)
{
	guard_leave(&state.trace.guard);
}

/* Not before the trace is open: the runtime may call before Initialize
 * has opened it, or when it could not. */
static inline bool enter(void)
{
	if (!guard_enter(&state.trace.guard))
		return false;
	if (!state.trace.rec) {
		leave();
		return false;
	}
	return true;
}

static inline bool same_guid(const struct clr_guid *a, const struct clr_guid *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static inline uint64_t ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}


/* ---- naming.c: names from metadata, the recorder thread ---- */
void request(unsigned bits);
bool wait_counter(_Atomic uint64_t *done, uint64_t target, unsigned ms);
void announce(_Atomic uint64_t *done, uint64_t value);
struct clr_metadata *metadata_of(clr_uptr module);
void release_metadata(struct clr_metadata *md);
void saw_class(clr_uptr cls);
void name_soon(clr_uptr cls);
void saw_method(clr_uptr fid);
/* "Class.Method" of a FunctionID, from metadata: outside GCs. */
void method_name(uint64_t fid, struct clrn_buf *b);
int start_recorder_thread(void);
void stop_recorder_thread(void);
bool dump_now(unsigned ms);

/* ---- fields.c: reference fields, strings' contents ---- */
const struct class_fields *fields_lookup(uint64_t cls);
struct field_map *field_map_new(size_t cap);
void prepare_fields(clr_uptr cls, bool wait);
void prepare_fields_of(uint64_t cls, void *ctx);
void prepare_fields_waiting(uint64_t cls, void *ctx);
void match_fields(const struct class_fields *c, clr_uptr object,
		  uint64_t size, size_t n, const clr_uptr *refs,
		  ht_id *out);
bool string_layout(void);
void find_string_class(clr_uptr cls);
void find_string_class_of(uint64_t cls, void *ctx);
const struct class_fields *array_fields_now(clr_uptr cls,
					    union array_table *t);
bool array_elements(clr_uptr object, clr_uptr cls, uint64_t size,
		    const struct class_fields *c, size_t n,
		    const clr_uptr *refs, struct array_part *last);
uint64_t object_size(clr_uptr object, clr_uptr cls);
bool read_values(clr_uptr object, uint64_t cls, uint64_t size,
		 const struct class_fields *c, struct object_values *out);

/* ---- statics.c: static fields by name, as roots ---- */
void statics_class_loaded(clr_uptr cls);
void statics_locate(uint64_t ticket);
/* Empties the table for a new recording of an attach. */
void statics_forget(void);
void record_static_roots(uint64_t ticket);

/* ---- tables.c: the non-GC heap, dependent handles, bounds ---- */
void refresh_frozen(void);
void frozen_walk_begin(void);
void frozen_walk_saw(uint64_t id);
void frozen_walk_end(void);
bool frozen_walked(const struct frozen *f);
void dependents_clear(void);
void dependent_add(uint64_t key, uint64_t value);
size_t dependents_of(uint64_t key, uint64_t *values, size_t max);
void tables_enter_gc(void);
void tables_leave_gc(void);
void dependents_make_room(void);
void record_bounds(void);
void bounds_make_room(void);

/* ---- callbacks.c: what the runtime tells ---- */
clr_hresult on_collection_started(CLR_THIS, int n, clr_bool collected[],
				  int32_t reason);
clr_hresult on_moved(CLR_THIS, clr_ulong n, clr_uptr old_starts[],
		     clr_uptr new_starts[], clr_uptr lengths[]);
clr_hresult on_surviving(CLR_THIS, clr_ulong n, clr_uptr starts[],
			 clr_uptr lengths[]);
clr_hresult on_root_references(CLR_THIS, clr_ulong n, clr_uptr refs[],
			       int32_t kinds[], int32_t flags[], clr_uptr ids[]);
clr_hresult on_dependents(CLR_THIS, clr_ulong n, clr_uptr keys[],
			  clr_uptr values[], clr_uptr handles[]);
clr_hresult on_object_references(CLR_THIS, clr_uptr object, clr_uptr cls,
				 clr_ulong n, clr_uptr refs[]);
clr_hresult on_collection_finished(CLR_THIS);
clr_hresult on_class_loaded(CLR_THIS, clr_uptr cls, clr_hresult status);
clr_hresult on_allocated(CLR_THIS, clr_uptr object, clr_uptr cls);
clr_hresult on_thread_name(CLR_THIS, clr_uptr thread, clr_ulong n,
			   clr_wchar name[]);
clr_hresult on_thread_created(CLR_THIS, clr_uptr thread);

/* ---- stacks.c: the threads and frames of stack roots ---- */
void stacks_snapshot(void);
void stacks_enter_gc(bool forced);
bool stacks_hold(uint64_t ref, uint8_t flags, uint64_t fid);
void stacks_record_dump(void);
void stacks_report(void);

/* ---- places.c: where a frame is, by the PDB's lines ---- */
/* The method id of a frame of fid stopped at ip: its place, named the
 * first time in the trace, or fid where no line is known. */
ht_id frame_place(clr_uptr fid, clr_uptr ip);
/* The id frame_place gave (fid, ip), without asking the runtime and
 * without waiting: false when not placed yet or the tables are busy. */
bool frame_place_known(clr_uptr fid, clr_uptr ip, ht_id *id);
/* Frees the places and PDBs at the trace's close. */
void places_forget(void);
void places_report(uint64_t longest_us);

/* ---- sites.c: allocation sites (--sites) ---- */
/* Chooses how sites are sampled, before the event mask is asked for:
 * adds to *mask what that needs. false: not recording (said). */
bool sites_start(clr_ulong *mask);
/* The EventPipe keywords of the runtime's sampling, 0 without it. */
uint64_t sites_keywords(void);
/* The trace header's value of `sites`, NULL without sites. */
const char *sites_metadata(void);
/* ObjectAllocated: true when the allocation was recorded, with its
 * stack. */
bool sites_allocated(clr_uptr object, clr_uptr cls, uint64_t size);
/* AllocationSampled, from the profiler's EventPipe session. */
void sites_sampled(const uint8_t *data, size_t size, clr_ulong n_frames,
		   const clr_uptr frames[]);
/* At a GC's start, before gc_started: the allocations still waiting. */
void sites_enter_gc(void);
/* The recorder thread: places the waiting allocations' frames. */
void sites_resolve(void);
void sites_report(void);

/* ---- ending.c: signals ---- */
void catch_dump_signal(void);
void catch_ending_signals(void);

/* ---- mask.c: the event mask, the benchmarks' floor ---- */
clr_hresult set_event_mask(clr_ulong mask);
bool moves_by_events_wanted(void);
/* The runtime's major version (0: not known), asked once. */
unsigned runtime_major(void);
bool gc_events_start(void);
void gc_events_report(bool verbose);
void gc_monitoring(bool on);
clr_hresult on_event_pipe_event(CLR_THIS, clr_uptr provider, clr_ulong id,
				clr_ulong version, clr_ulong metadata_size,
				const uint8_t *metadata, clr_ulong size,
				const uint8_t *data,
				const struct clr_guid *activity,
				const struct clr_guid *related,
				clr_uptr thread, clr_ulong n_frames,
				clr_uptr frames[]);
bool recording_floor(void);

/* ---- clr-profiler.c: loading and closing ---- */
void close_recorder(void);
clr_hresult on_shutdown(CLR_THIS);
clr_hresult on_initialize(CLR_THIS, void *info_unknown);
clr_hresult start_recording(void *info_unknown, const char *attach_options);

/* ---- attach.c: attached to a running process ---- */
clr_hresult on_initialize_for_attach(CLR_THIS, void *info_unknown,
				     void *data, unsigned size);
clr_hresult on_detached(CLR_THIS);
clr_hresult on_attach_complete(CLR_THIS);
int attach_connect(void);
int attach_serve(void);
void attach_tell(const char *message);
void attach_hang_up(void);

#endif
