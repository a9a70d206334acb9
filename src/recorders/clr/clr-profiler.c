/*
 * clr-profiler.c - libheaptrace-clr: a CoreCLR profiler that records the
 * runtime's GCs and heap walks through the heaptrace shim.
 *
 *   CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={any GUID}
 *   CORECLR_PROFILER_PATH=/path/libheaptrace-clr.so
 *   HEAPTRACE_CLR_OPTIONS=dump-on=major,every=1,alloc HEAPTRACE_OUTPUT=FILE
 *   dotnet app.dll
 *
 * (`heaptrace record` sets these.) What the runtime tells, and what it
 * becomes in the trace (doc/design.md, "The CLR"):
 *   - GarbageCollectionStarted: the generation bounds, then gc_started
 *     (collected generations as a bit set, induced or not, our count of
 *     GCs); GarbageCollectionFinished: the bounds after it, then
 *     gc_finished.
 *   - MovedReferences2 and SurvivingReferences2: moved_references and
 *     surviving_references, blocks as given (the CLR reports every
 *     survivor: the header says reports_survivors).
 *   - the heap walk the runtime makes after each GC, when this GC is one
 *     to dump: RootReferences2 as root_references with kinds, flags and
 *     ids; ConditionalWeakTableElementReferences as extra references from
 *     each key to its value (flagged HT_REF_DEPENDENT); ObjectReferences as
 *     one object_references each, with its size. They land inside the GC:
 *     a GC dump. The objects of the non-GC heap (string literals, frozen
 *     RuntimeType objects), which the walk does not visit but which its
 *     objects reference, are added to each dump from a list taken with
 *     EnumerateNonGCObjects, each also a root of kind other (the runtime
 *     never frees them).
 *   - ObjectAllocated (alloc): object_allocated; ThreadCreated ("thread
 *     N", its system id) and ThreadNameChanged: thread.
 *   - field identity: ObjectReferences gives no offsets, but the object's
 *     memory may be read there. Each class's reference fields (its own
 *     and inherited, from GetClassLayout and the fields' signatures) are
 *     declared by a `fields` event when the class finishes loading, on the
 *     loading thread; in the walk, the pointer each field holds is matched
 *     with the references the runtime reports, which get that field as
 *     ref_fields (0: an array element, a reference inside an embedded
 *     struct, or a class without a table yet).
 *
 * Names. Metadata may not be read inside GC callbacks, and a dump's names
 * must be in the trace before the dump ends. The walk adds the class of
 * each object (and the function of each stack root) to a lock-free set;
 * at the end of a dump GC the collecting thread wakes the recorder thread
 * (our own, not the runtime's) and waits, bounded, while it names the new
 * ids with the metadata interfaces; then the GC is closed. Classes of
 * allocations are named by that thread as they come.
 *
 * Dumps at other times (--dump-on exit or signal, and the one at exit)
 * are collections forced with ForceGC from a thread of ours that has no
 * profiler callback on its stack.
 *
 * GC callbacks run with the program's threads suspended, possibly inside
 * malloc: that path uses the shim, atomics, and memory allocated before.
 */
#include "recorders/clr/corprof.h"
#include "recorders/clr/names.h"
#include "recorders/core/dump_policy.h"
#include "recorders/core/guard.h"
#include "recorders/core/idset.h"
#include "recorders/core/options.h"
#include "recorders/core/report.h"
#include "recorders/core/restore.h"
#include "recorders/core/say.h"
#include "recorders/core/trace.h"
#include "util/alloc.h"

#include <heaptrace/record.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ht_config.h"

#define DUMP_SIGNAL SIGUSR1
/* Roots are passed to the shim in batches from the stack. */
#define BATCH 256
/* How long a GC waits for the recorder thread to name its classes, and
 * the exit for its dump. */
#define NAMING_WAIT_MS 10000
#define EXIT_DUMP_WAIT_MS 60000
/* Generation ranges room at first (regions: many per generation). */
#define FIRST_BOUNDS 1024
/* Dependent handles room at first. */
#define FIRST_DEPENDENTS 4096
/* Classes with a field table room at first; reference fields of one
 * object that the walk matches at most. */
#define FIRST_FIELD_CLASSES 16384
#define MATCH_FIELDS_MAX 256

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
};

/* A dependent handle of the current walk: key keeps value alive. */
struct dependent {
	_Atomic uint64_t key;
	_Atomic uint64_t value;
};

/* A class's reference fields, its own and inherited, by offset from the
 * object's start: immutable once published. */
struct field_ref {
	uint32_t offset;
	ht_id id;
};
struct class_fields {
	size_t n;
	struct field_ref f[];
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
};

static struct {
	struct clr_callback callback;
	struct clr_factory factory;
	struct clr_info *info;
	int info_level;        /* the highest ICorProfilerInfo obtained */
	struct rec_options opt;
	struct rec_trace trace;  /* the trace, and the guard around it */

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
	_Atomic uint64_t naming_late;
	uint64_t naming_longest_ms;  /* the GC thread's alone */

	/* strings' contents (values): System.String's class id, found
	 * outside GCs (0 until then), and where its length and units lie */
	_Atomic uint64_t string_class;
	bool string_layout;
	uint32_t string_length_at, string_units_at;
	_Atomic uint64_t strings_valued;

	/* the non-GC heap's objects, published whole */
	_Atomic(struct frozen *) frozen;
	struct frozen *frozen_retired;
	_Atomic int frozen_readers;

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
} state;

/* ---- the recording guard (recorders/core/guard.h) ------------------------ */

static void leave(void)
{
	guard_leave(&state.trace.guard);
}

/* Not before the trace is open: the runtime may call before Initialize
 * has opened it, or when it could not. */
static bool enter(void)
{
	if (!guard_enter(&state.trace.guard))
		return false;
	if (!state.trace.rec) {
		leave();
		return false;
	}
	return true;
}

static bool same_guid(const struct clr_guid *a, const struct clr_guid *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static uint64_t ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* ---- the recorder thread's requests --------------------------------------- */

/* Async-signal-safe: an atomic or and a write to a pipe. */
static void request(unsigned bits)
{
	char c = 1;
	int saved = errno;

	atomic_fetch_or(&state.requests, bits);
	if (state.wake[1] >= 0 && write(state.wake[1], &c, 1) < 0) {
		/* full: a wake-up is pending anyway */
	}
	errno = saved;
}

/* Waits until *done reaches target, at most ms milliseconds: true when it
 * did. */
static bool wait_for(_Atomic uint64_t *done, uint64_t target, unsigned ms)
{
	uint64_t deadline = ms_now() + ms;

	while (atomic_load(done) < target) {
		struct timespec until;
		uint64_t now = ms_now();

		if (now >= deadline)
			return false;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 20 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		sem_timedwait(&state.progress, &until);
	}
	return true;
}

/* Moves a counter the waiters look at (wait_for), and wakes them. */
static void announce(_Atomic uint64_t *done, uint64_t value)
{
	atomic_store(done, value);
	sem_post(&state.progress);
}

/* ---- names ----------------------------------------------------------------- */

static struct clr_metadata *metadata_of(clr_uptr module)
{
	static const struct clr_guid iid = CLR_IID_METADATA_IMPORT;
	void *md = NULL;

	if (CLR_FAILED(state.info->vtbl->GetModuleMetaData(
		    state.info, module, CLR_OPEN_READ, &iid, &md)) || !md)
		return NULL;
	return md;
}

static void release_metadata(struct clr_metadata *md)
{
	if (md)
		md->vtbl->Release(md);
}

/* The type definition's name, and those it is nested in, innermost
 * first. */
static int nesting_of(struct clr_metadata *md, clr_token td,
		      struct clrn_type *t)
{
	t->n_nest = 0;
	while (t->n_nest < CLRN_MAX_NEST) {
		clr_wchar wname[CLRN_SEGMENT_MAX];
		clr_ulong n = 0, flags = 0;
		clr_token extends = 0, outer = 0;

		if (CLR_FAILED(md->vtbl->GetTypeDefProps(md, td, wname,
							 CLRN_SEGMENT_MAX, &n,
							 &flags, &extends)))
			break;
		clrn_from_utf16(t->nest[t->n_nest], CLRN_SEGMENT_MAX, wname,
				n < CLRN_SEGMENT_MAX ? n : CLRN_SEGMENT_MAX);
		t->n_nest++;
		if (md->vtbl->GetNestedClassProps(md, td, &outer) != CLR_S_OK ||
		    (outer & 0x00FFFFFFu) == 0)
			break;
		td = outer;
	}
	return t->n_nest ? 0 : -1;
}

static int source_array(void *ctx, uint64_t cls, unsigned *rank,
			uint64_t *elem, uint32_t *elem_type)
{
	clr_uptr base = 0;
	clr_ulong r = 0;
	uint32_t et = 0;
	clr_hresult hr;

	(void)ctx;
	hr = state.info->vtbl->IsArrayClass(state.info, (clr_uptr)cls, &et,
					    &base, &r);
	if (hr == CLR_S_FALSE)
		return 0;
	if (hr != CLR_S_OK)
		return -1;
	*rank = (unsigned)r;
	*elem = base;
	*elem_type = et;
	return 1;
}

static int source_type(void *ctx, uint64_t cls, struct clrn_type *t)
{
	clr_uptr module = 0, parent = 0, args[CLRN_MAX_ARGS];
	clr_token td = 0;
	clr_ulong n_args = 0;
	struct clr_metadata *md;
	int rc;

	(void)ctx;
	if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, (clr_uptr)cls, &module, &td, &parent,
		    CLRN_MAX_ARGS, &n_args, args)))
		return -1;
	md = metadata_of(module);
	if (!md)
		return -1;
	rc = nesting_of(md, td, t);
	release_metadata(md);
	t->n_args = n_args < CLRN_MAX_ARGS ? n_args : CLRN_MAX_ARGS;
	for (size_t i = 0; i < t->n_args; i++)
		t->args[i] = args[i];
	return rc;
}

static const struct clrn_source runtime_source = {
	.array = source_array,
	.type = source_type,
};

static void name_class(uint64_t id, void *ctx)
{
	char name[4096];
	struct clrn_buf b;

	(void)ctx;
	if (idset_contains(&state.classes_named, id))
		return;
	clrn_init(&b, name, sizeof(name));
	clrn_class_name(&runtime_source, id, &b);
	ht_class(state.trace.rec, id, name, false, 0);
	idset_add(&state.classes_named, id, false);
}

/* Class.Method; the class from the function's own class id (exact for a
 * generic instance), else from its type definition. */
static void method_name(uint64_t fid, struct clrn_buf *b)
{
	clr_uptr cls = 0, module = 0;
	clr_token token = 0, td = 0;
	clr_wchar wname[CLRN_SEGMENT_MAX];
	char name[CLRN_SEGMENT_MAX * 3];
	clr_ulong n = 0, attr = 0, sig_size = 0, rva = 0, impl = 0;
	const uint8_t *sig = NULL;
	struct clr_metadata *md;
	struct clrn_type t;

	if (CLR_FAILED(state.info->vtbl->GetFunctionInfo(state.info,
							 (clr_uptr)fid, &cls,
							 &module, &token)) ||
	    !(md = metadata_of(module))) {
		snprintf(name, sizeof(name), "function 0x%llx",
			 (unsigned long long)fid);
		clrn_put(b, name);
		return;
	}
	if (CLR_FAILED(md->vtbl->GetMethodProps(md, token, &td, wname,
						CLRN_SEGMENT_MAX, &n, &attr,
						&sig, &sig_size, &rva,
						&impl))) {
		release_metadata(md);
		snprintf(name, sizeof(name), "function 0x%llx",
			 (unsigned long long)fid);
		clrn_put(b, name);
		return;
	}
	clrn_from_utf16(name, sizeof(name), wname,
			n < CLRN_SEGMENT_MAX ? n : CLRN_SEGMENT_MAX);
	if (cls) {
		clrn_class_name(&runtime_source, cls, b);
	} else if (nesting_of(md, td, &t) == 0) {
		for (size_t i = t.n_nest; i-- > 0;) {
			clrn_put(b, t.nest[i]);
			if (i)
				clrn_put(b, "+");
		}
	}
	release_metadata(md);
	clrn_put(b, ".");
	clrn_put(b, name);
}

static void name_method(uint64_t id, void *ctx)
{
	char name[4096];
	struct clrn_buf b;

	(void)ctx;
	if (idset_contains(&state.methods_named, id))
		return;
	clrn_init(&b, name, sizeof(name));
	method_name(id, &b);
	ht_method(state.trace.rec, id, name);
	idset_add(&state.methods_named, id, false);
}

static void name_new_ids(void)
{
	idset_for_each(&state.classes_seen, name_class, NULL);
	idset_for_each(&state.methods_seen, name_method, NULL);
}

/* Inside pauses as well: no lock, no malloc. */
static void saw_class(clr_uptr cls)
{
	if (cls && !idset_contains(&state.classes_seen, cls))
		idset_add(&state.classes_seen, cls, true);
}

static void saw_method(clr_uptr fid)
{
	if (fid && !idset_contains(&state.methods_seen, fid))
		idset_add(&state.methods_seen, fid, true);
}

/* ---- reference fields ------------------------------------------------------ */

static size_t class_slot(uint64_t id)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 32);
}

/* In a GC as well: the fields of class cls, or NULL. */
static const struct class_fields *fields_lookup(uint64_t cls)
{
	struct field_map *m = atomic_load(&state.fields);

	if (!m)
		return NULL;
	for (size_t i = class_slot(cls) & m->mask;; i = (i + 1) & m->mask) {
		uint64_t k = atomic_load_explicit(&m->keys[i],
						  memory_order_acquire);

		if (k == cls)
			return atomic_load(&m->values[i]);
		if (k == 0)
			return NULL;
	}
}

static struct field_map *field_map_new(size_t cap)
{
	struct field_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mask = cap - 1;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->values = calloc(cap, sizeof(*m->values));
	if (!m->keys || !m->values) {
		free(m->keys);
		free(m->values);
		free(m);
		return NULL;
	}
	return m;
}

static void field_map_put(struct field_map *m, uint64_t cls,
			  struct class_fields *f)
{
	size_t i = class_slot(cls) & m->mask;

	while (atomic_load(&m->keys[i]) != 0 &&
	       atomic_load(&m->keys[i]) != cls)
		i = (i + 1) & m->mask;
	atomic_store(&m->values[i], f);
	atomic_store_explicit(&m->keys[i], cls, memory_order_release);
}

/* Under fields_lock: room for one more, in a bigger copy if need be. */
static struct field_map *field_map_room(void)
{
	struct field_map *m = atomic_load(&state.fields), *n;

	if (!m || state.fields_used + 1 <= (m->mask + 1) / 2)
		return m;
	n = field_map_new(2 * (m->mask + 1));
	if (!n)
		return NULL;
	for (size_t i = 0; i <= m->mask; i++) {
		uint64_t k = atomic_load(&m->keys[i]);

		if (k)
			field_map_put(n, k, atomic_load(&m->values[i]));
	}
	n->retired_next = m;
	atomic_store(&state.fields, n);
	return n;
}

/* The typedef's name, into out. */
static void type_def_name(struct clr_metadata *md, clr_token td, char *out,
			  size_t len)
{
	clr_wchar w[CLRN_SEGMENT_MAX];
	clr_ulong n = 0, flags = 0;
	clr_token extends = 0;

	out[0] = '\0';
	if (md && !CLR_FAILED(md->vtbl->GetTypeDefProps(md, td, w,
							CLRN_SEGMENT_MAX, &n,
							&flags, &extends)))
		clrn_from_utf16(out, len, w,
				n < CLRN_SEGMENT_MAX ? n : CLRN_SEGMENT_MAX);
}

/* A value type's class derives from System.ValueType or System.Enum. */
static bool is_value_class(clr_uptr cls)
{
	clr_uptr module = 0, parent = 0, pm = 0, pp = 0, args[1];
	clr_token td = 0, ptd = 0;
	clr_ulong n_args = 0;
	struct clr_metadata *md;
	char name[CLRN_SEGMENT_MAX];

	if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, cls, &module, &td, &parent, 0, &n_args,
		    args)) || !parent ||
	    CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, parent, &pm, &ptd, &pp, 0, &n_args, args)))
		return false;
	md = metadata_of(pm);
	type_def_name(md, ptd, name, sizeof(name));
	release_metadata(md);
	return strcmp(name, "System.ValueType") == 0 ||
	       strcmp(name, "System.Enum") == 0;
}

/* Does a field of this signature hold a reference? A type parameter does
 * when the class's argument for it is no value type. */
static bool sig_is_reference(const uint8_t *sig, size_t len, clr_uptr cls)
{
	clr_uptr module = 0, parent = 0, args[CLRN_MAX_ARGS];
	clr_token td = 0;
	clr_ulong n_args = 0;
	unsigned param = 0;

	switch (clrn_field_sig(sig, len, &param)) {
	case CLRN_HOLDS_REFERENCE:
		return true;
	case CLRN_HOLDS_TYPE_PARAM:
		if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
			    state.info, cls, &module, &td, &parent,
			    CLRN_MAX_ARGS, &n_args, args)) ||
		    param >= n_args || param >= CLRN_MAX_ARGS)
			return false;
		return !is_value_class(args[param]);
	default:
		return false;
	}
}

static int by_offset(const void *a, const void *b)
{
	const struct field_ref *x = a, *y = b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Declares the reference fields among a class's own laid-out ones, each
 * into out[] with a new id; how many. */
static size_t own_fields(clr_uptr cls, clr_uptr module,
			 const struct clr_field_offset *lay, size_t n,
			 uint32_t extra, struct field_ref *out)
{
	struct clr_metadata *md = metadata_of(module);
	size_t k = 0;

	if (!md)
		return 0;
	for (size_t i = 0; i < n; i++) {
		clr_wchar w[CLRN_SEGMENT_MAX];
		char name[CLRN_SEGMENT_MAX * 3];
		clr_ulong len = 0, attr = 0, sig_size = 0, ctype = 0, csize = 0;
		const uint8_t *sig = NULL;
		const void *cval = NULL;
		clr_token td = 0;
		struct ht_field f;

		if (CLR_FAILED(md->vtbl->GetFieldProps(
			    md, lay[i].field, &td, w, CLRN_SEGMENT_MAX, &len,
			    &attr, &sig, &sig_size, &ctype, &cval, &csize)) ||
		    (attr & 0x10) || !sig_is_reference(sig, sig_size, cls))
			continue; /* static, or no reference */
		clrn_from_utf16(name, sizeof(name), w,
				len < CLRN_SEGMENT_MAX ? len : CLRN_SEGMENT_MAX);
		out[k] = (struct field_ref){lay[i].offset + extra,
					    ++state.last_field};
		f = (struct ht_field){
			.id = out[k].id,
			.class_id = cls,
			.name = name,
			.kind = HT_FIELD_INSTANCE,
			.has_offset = true,
			.offset = out[k].offset,
		};
		ht_fields(state.trace.rec, 1, &f);
		k++;
	}
	release_metadata(md);
	return k;
}

static const struct class_fields *class_fields_of(clr_uptr cls, int depth);

/* Under fields_lock, outside GCs: the table of a class that is no array,
 * NULL when the runtime cannot lay it out yet. */
static struct class_fields *build_fields(clr_uptr cls, int depth)
{
	clr_uptr module = 0, parent = 0, args[CLRN_MAX_ARGS];
	clr_token td = 0;
	clr_ulong n_args = 0, n_lay = 0, size = 0;
	const struct class_fields *up = NULL;
	struct clr_field_offset *lay = NULL;
	struct class_fields *f;
	size_t inherited, k = 0;
	uint32_t extra;

	if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, cls, &module, &td, &parent, CLRN_MAX_ARGS,
		    &n_args, args)))
		return NULL;
	if (parent && depth < 64 && !(up = class_fields_of(parent, depth + 1)))
		return NULL;
	if (CLR_FAILED(state.info->vtbl->GetClassLayout(state.info, cls, NULL,
							0, &n_lay, &size)))
		return NULL;
	if (n_lay && (!(lay = calloc(n_lay, sizeof(*lay))) ||
		      CLR_FAILED(state.info->vtbl->GetClassLayout(
			      state.info, cls, lay, n_lay, &n_lay, &size)))) {
		free(lay);
		return NULL;
	}
	inherited = up ? up->n : 0;
	f = malloc(sizeof(*f) + (inherited + n_lay) * sizeof(f->f[0]));
	if (f) {
		if (inherited)
			memcpy(f->f, up->f, inherited * sizeof(f->f[0]));
		/* a boxed value type's fields follow its MethodTable pointer */
		extra = n_lay && is_value_class(cls) ? sizeof(void *) : 0;
		k = own_fields(cls, module, lay, n_lay, extra,
			       f->f + inherited);
		f->n = inherited + k;
		qsort(f->f, f->n, sizeof(f->f[0]), by_offset);
		if (k)
			saw_class(cls); /* the declaring class gets named */
	}
	free(lay);
	return f;
}

static const struct class_fields *class_fields_of(clr_uptr cls, int depth)
{
	static struct class_fields none; /* arrays: elements are no fields */
	const struct class_fields *have = fields_lookup(cls);
	struct class_fields *f;
	struct field_map *m;
	uint32_t et = 0;
	clr_uptr base = 0;
	clr_ulong rank = 0;

	if (have)
		return have;
	if (state.info->vtbl->IsArrayClass(state.info, cls, &et, &base,
					   &rank) == CLR_S_OK)
		f = &none;
	else if (!(f = build_fields(cls, depth)))
		return NULL;
	m = field_map_room();
	if (!m) {
		if (f != &none)
			free(f);
		return NULL;
	}
	field_map_put(m, cls, f);
	state.fields_used++;
	return f;
}

/* Outside GCs: makes the table of class cls, if it has none yet. The
 * recorder thread does not wait for the lock, which a thread of the
 * program may hold while a GC waits for the recorder thread. */
static void prepare_fields(clr_uptr cls, bool wait)
{
	if (!cls || fields_lookup(cls))
		return;
	if (!wait) {
		if (pthread_mutex_trylock(&state.fields_lock) != 0)
			return; /* at the next dump's end */
	} else {
		pthread_mutex_lock(&state.fields_lock);
	}
	if (!class_fields_of(cls, 0))
		atomic_fetch_add(&state.fields_failed, 1);
	pthread_mutex_unlock(&state.fields_lock);
}

static void prepare_fields_of(uint64_t cls, void *ctx)
{
	(void)ctx;
	prepare_fields((clr_uptr)cls, false);
}

/* In the walk: the field each reference was read from, by matching the
 * pointers the class's fields hold with the references reported (each
 * pointer used once: two fields may hold the same object). */
static void match_fields(const struct class_fields *c, clr_uptr object,
			 uint64_t size, size_t n, const clr_uptr *refs,
			 ht_id *out)
{
	uint64_t held[MATCH_FIELDS_MAX];
	size_t m = c->n < MATCH_FIELDS_MAX ? c->n : MATCH_FIELDS_MAX;
	size_t cursor = 0;

	for (size_t j = 0; j < m; j++) {
		held[j] = 0;
		if (c->f[j].offset + sizeof(uint64_t) <= size)
			memcpy(&held[j], (const void *)(object + c->f[j].offset),
			       sizeof(uint64_t));
	}
	for (size_t i = 0; i < n; i++) {
		out[i] = 0;
		if (!refs[i])
			continue;
		/* mostly in the fields' order: look from the last match on */
		for (size_t t = 0; t < m; t++) {
			size_t j = (cursor + t) % m;

			if (held[j] == refs[i]) {
				out[i] = c->f[j].id;
				held[j] = 0;
				cursor = j + 1;
				break;
			}
		}
	}
}

/* ---- strings' contents (--values) ------------------------------------------ */

/* At the start: where a string's length and UTF-16 units lie, as offsets
 * from the object's start. The units are recorded as the object's array
 * of chars, which the trace wants little-endian: the runtime's own order
 * on the platforms CoreCLR runs on, so no copy is needed. */
static bool string_layout(void)
{
	clr_ulong length_at = 0, units_at = 0;

	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ ||
	    CLR_FAILED(state.info->vtbl->GetStringLayout2(state.info,
							  &length_at,
							  &units_at)))
		return false;
	state.string_length_at = length_at;
	state.string_units_at = units_at;
	return true;
}

/* Outside GCs (a class's load, the recorder thread), with values on:
 * System.String's class id, once, from the module of System.Object, in
 * which the chain of parents of any class ends. The walk knows a string
 * by its class id alone: it may not read metadata. */
static void find_string_class(clr_uptr cls)
{
	static const clr_wchar string_name[] = {
		'S', 'y', 's', 't', 'e', 'm', '.', 'S', 't', 'r', 'i', 'n',
		'g', 0};
	clr_uptr module = 0, parent = 0, args[1], string = 0;
	clr_token td = 0;
	clr_ulong n_args = 0;
	struct clr_metadata *md;
	char name[CLRN_SEGMENT_MAX];

	if (!state.string_layout || atomic_load(&state.string_class))
		return;
	for (int depth = 0; cls && depth < 64; depth++, cls = parent)
		if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
			    state.info, cls, &module, &td, &parent, 0, &n_args,
			    args)) || !parent)
			break;
	/* an interface's chain ends in itself */
	md = module ? metadata_of(module) : NULL;
	type_def_name(md, td, name, sizeof(name));
	if (md && strcmp(name, "System.Object") == 0 &&
	    !CLR_FAILED(md->vtbl->FindTypeDefByName(md, string_name, 0,
						    &td)) &&
	    !CLR_FAILED(state.info->vtbl->GetClassFromToken(state.info, module,
							    td, &string)))
		atomic_store(&state.string_class, string);
	release_metadata(md);
}

static void find_string_class_of(uint64_t cls, void *ctx)
{
	(void)ctx;
	find_string_class((clr_uptr)cls);
}

/*
 * In the walk: the contents of object, of class cls and size bytes, when
 * it is a string, into *out; false otherwise. Reading the object's memory
 * here is safe: ObjectReferences comes while the runtime holds every
 * managed thread suspended for the GC, after the GC has moved what it
 * moves, so the object is where its id says and nothing writes to it
 * (nor could: a string is immutable once made); the length is checked
 * against the object's size before a unit is read. A non-GC heap object
 * (a literal) never moves and is never freed.
 */
static bool string_contents(clr_uptr object, uint64_t cls, uint64_t size,
			    struct ht_array_values *out)
{
	uint32_t units;

	if (!cls || cls != atomic_load_explicit(&state.string_class,
						memory_order_relaxed) ||
	    (uint64_t)state.string_length_at + sizeof(units) > size)
		return false;
	memcpy(&units, (const void *)(object + state.string_length_at),
	       sizeof(units));
	if (state.string_units_at + 2 * (uint64_t)units > size)
		return false;
	atomic_fetch_add_explicit(&state.strings_valued, 1,
				  memory_order_relaxed);
	return ht_array_values_of(HT_TYPE_CHAR,
				  (const uint8_t *)(object +
						    state.string_units_at),
				  units, out);
}

/* ---- the non-GC heap ------------------------------------------------------- */

static void frozen_free(struct frozen *f)
{
	if (!f)
		return;
	free(f->ids);
	free(f->classes);
	free(f->sizes);
	free(f->ref_start);
	free(f->refs);
	free(f);
}

struct ref_list {
	uint64_t *refs;
	size_t n, cap;
	bool failed;
};

static clr_bool collect_ref(clr_uptr object, clr_uptr *ref, void *data)
{
	struct ref_list *l = data;

	(void)object;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		uint64_t *r = realloc(l->refs, cap * sizeof(*r));

		if (!r) {
			l->failed = true;
			return 0;
		}
		l->refs = r;
		l->cap = cap;
	}
	l->refs[l->n++] = *ref;
	return 1;
}

/* Lists the non-GC heap (ICorProfilerInfo14): id, class, size and
 * references of each object. NULL when the runtime has none to list. */
static struct frozen *list_frozen(void)
{
	struct clr_object_enum *e = NULL;
	struct frozen *f;
	struct ref_list refs = {0};
	clr_ulong count = 0;
	size_t cap;

	if (state.info_level < 14 ||
	    CLR_FAILED(state.info->vtbl->EnumerateNonGCObjects(state.info,
							       &e)) || !e)
		return NULL;
	if (CLR_FAILED(e->vtbl->GetCount(e, &count)))
		count = 0;
	cap = (size_t)count + 64;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto fail;
	f->ids = malloc(cap * sizeof(*f->ids));
	f->classes = malloc(cap * sizeof(*f->classes));
	f->sizes = malloc(cap * sizeof(*f->sizes));
	f->ref_start = malloc((cap + 1) * sizeof(*f->ref_start));
	if (!f->ids || !f->classes || !f->sizes || !f->ref_start)
		goto fail;
	for (;;) {
		clr_uptr batch[256];
		clr_ulong got = 0;

		if (CLR_FAILED(e->vtbl->Next(e, 256, batch, &got)) || got == 0)
			break;
		for (clr_ulong i = 0; i < got && f->n < cap; i++) {
			clr_uptr cls = 0, size = 0;

			if (CLR_FAILED(state.info->vtbl->GetClassFromObject(
				    state.info, batch[i], &cls)))
				continue;
			state.info->vtbl->GetObjectSize2(state.info, batch[i],
							 &size);
			f->ids[f->n] = batch[i];
			f->classes[f->n] = cls;
			f->sizes[f->n] = size;
			f->ref_start[f->n] = refs.n;
			if (state.info_level >= 10)
				state.info->vtbl->EnumerateObjectReferences(
					state.info, batch[i], collect_ref,
					&refs);
			f->n++;
			saw_class(cls);
		}
	}
	e->vtbl->Release(e);
	e = NULL;
	if (refs.failed)
		goto fail;
	f->ref_start[f->n] = refs.n;
	f->refs = refs.refs;
	f->n_refs = refs.n;
	return f;
fail:
	if (e)
		e->vtbl->Release(e);
	free(refs.refs);
	frozen_free(f);
	return NULL;
}

/* Publishes a new list; the one it replaces is freed once no GC reads
 * it (a reader that began before the exchange holds it). */
static void refresh_frozen(void)
{
	struct frozen *f = list_frozen(), *old;

	if (!f)
		return;
	old = atomic_exchange(&state.frozen, f);
	frozen_free(state.frozen_retired);
	state.frozen_retired = NULL;
	if (atomic_load(&state.frozen_readers) == 0)
		frozen_free(old);
	else
		state.frozen_retired = old;
}

/* ---- dependent handles ----------------------------------------------------- */

static size_t hash_id(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id;
}

static void dependents_clear(void)
{
	for (size_t i = 0; i <= state.dependents_mask; i++) {
		atomic_store_explicit(&state.dependents[i].key, 0,
				      memory_order_relaxed);
		atomic_store_explicit(&state.dependents[i].value, 0,
				      memory_order_relaxed);
	}
	atomic_store(&state.dependents_used, 0);
}

/* A pair the table has no room for: the key's reference to its value is
 * recorded at once, as the first part of the key's object_references,
 * which its own report (the walk's, or the non-GC heap's) continues. */
static void dependent_now(uint64_t key, uint64_t value)
{
	clr_uptr cls = 0, size = 0;
	uint32_t flag = HT_REF_DEPENDENT;

	if (CLR_FAILED(state.info->vtbl->GetClassFromObject(state.info, key,
							    &cls)) ||
	    CLR_FAILED(state.info->vtbl->GetObjectSize2(state.info, key,
							&size))) {
		atomic_fetch_add(&state.dependents_dropped, 1);
		return;
	}
	atomic_fetch_add(&state.dependents_early, 1);
	ht_object_references(state.trace.rec, key, cls, size, HT_OBJ_MORE_REFERENCES,
			     1, &value, &flag, -1, HT_RESULT_OK);
}

/* Lock-free, inside the pause. */
static void dependent_add(uint64_t key, uint64_t value)
{
	size_t mask = state.dependents_mask;

	if (atomic_fetch_add(&state.dependents_used, 1) >= mask - mask / 8) {
		dependent_now(key, value);
		return;
	}
	for (size_t i = hash_id(key) & mask;; i = (i + 1) & mask) {
		uint64_t empty = 0;

		if (atomic_compare_exchange_strong(&state.dependents[i].key,
						   &empty, key)) {
			atomic_store(&state.dependents[i].value, value);
			return;
		}
	}
}

/* The values that key keeps alive, up to max; how many. */
static size_t dependents_of(uint64_t key, uint64_t *values, size_t max)
{
	size_t mask = state.dependents_mask, n = 0;

	if (atomic_load_explicit(&state.dependents_used,
				 memory_order_relaxed) == 0)
		return 0;
	for (size_t i = hash_id(key) & mask;; i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&state.dependents[i].key,
						  memory_order_relaxed);

		if (k == 0)
			return n;
		if (k == key && n < max)
			values[n++] = atomic_load(&state.dependents[i].value);
	}
}

/* The recorder thread, to replace tables: true when no GC runs and none
 * will start until swap_done. */
static bool swap_begin(void)
{
	int idle = TABLES_IDLE;

	return atomic_compare_exchange_strong(&state.tables, &idle,
					      TABLES_SWAPPING);
}

static void swap_done(void)
{
	atomic_store(&state.tables, TABLES_IDLE);
}

/* A GC's start: waits out a swap (pointer stores only). */
static void tables_enter_gc(void)
{
	for (;;) {
		int idle = TABLES_IDLE;

		if (atomic_compare_exchange_weak(&state.tables, &idle,
						 TABLES_IN_GC))
			return;
		if (idle == TABLES_IN_GC)
			return; /* a GC whose finish never came */
		sched_yield();
	}
}

static void tables_leave_gc(void)
{
	atomic_store(&state.tables, TABLES_IDLE);
}

/* Between GCs: room for twice as many pairs as the last walk had. */
static void dependents_make_room(void)
{
	size_t want = 2 * atomic_load(&state.dependents_peak), cap;
	struct dependent *d, *old;

	if (want < (state.dependents_mask + 1) / 2)
		return;
	cap = state.dependents_mask + 1;
	while (cap < 2 * want)
		cap *= 2;
	d = calloc(cap, sizeof(*d));
	if (!d)
		return;
	if (!swap_begin()) {
		free(d); /* a GC runs: after the next one */
		return;
	}
	old = state.dependents;
	state.dependents = d;
	state.dependents_mask = cap - 1;
	atomic_store(&state.dependents_used, 0);
	swap_done();
	free(old);
}

/* ---- the objects of a dump ------------------------------------------------- */

/* An object (with its contents when it is a string whose text is
 * recorded), then the values its dependent handles keep alive, as a
 * continuation with each reference flagged HT_REF_DEPENDENT. */
static void record_object(uint64_t id, uint64_t cls, uint64_t size,
			  size_t n, const ht_id *refs, const ht_id *fields)
{
	uint64_t values[64];
	uint32_t flags[64];
	size_t k = dependents_of(id, values, 64);
	struct ht_array_values text;

	if (string_contents((clr_uptr)id, cls, size, &text)) {
		struct ht_event ev = {
			.type = HT_EV_OBJECT_REFERENCES,
			.u.object_references = {
				.id = id, .class_id = cls, .size = size,
				.flags = k ? HT_OBJ_MORE_REFERENCES : 0,
				.count = n, .refs = refs, .ref_fields = fields,
				.result = HT_RESULT_OK, .array = &text,
			},
		};

		ht_record_event(state.trace.rec, &ev);
	} else {
		ht_object_references_fields(state.trace.rec, id, cls, size,
					    k ? HT_OBJ_MORE_REFERENCES : 0, n,
					    refs, NULL, fields, -1,
					    HT_RESULT_OK);
	}
	if (!k)
		return;
	for (size_t i = 0; i < k; i++)
		flags[i] = HT_REF_DEPENDENT;
	ht_object_references(state.trace.rec, id, cls, size, 0, k, values, flags, -1,
			     HT_RESULT_OK);
}

/* The runtime never frees them: each is also a root, of kind other. */
static void record_frozen_roots(const struct frozen *f)
{
	uint32_t obj_flags[BATCH] = {0};
	uint8_t kinds[BATCH], root_flags[BATCH] = {0};
	ht_id ids[BATCH] = {0};

	memset(kinds, HT_ROOT_OTHER, sizeof(kinds));
	for (size_t done = 0; done < f->n;) {
		size_t m = f->n - done < BATCH ? f->n - done : BATCH;

		ht_root_references(state.trace.rec, m, f->ids + done, obj_flags,
				   kinds, root_flags, ids, HT_RESULT_OK);
		done += m;
	}
}

static void record_frozen_objects(void)
{
	struct frozen *f;

	atomic_fetch_add(&state.frozen_readers, 1);
	f = atomic_load(&state.frozen);
	for (size_t i = 0; f && i < f->n; i++) {
		size_t n = f->ref_start[i + 1] - f->ref_start[i];
		static const ht_id none[1];

		record_object(f->ids[i], f->classes[i], f->sizes[i], n,
			      n ? f->refs + f->ref_start[i] : none, NULL);
	}
	if (f)
		record_frozen_roots(f);
	atomic_fetch_sub(&state.frozen_readers, 1);
}

/* ---- GCs ------------------------------------------------------------------- */

static void record_bounds(void)
{
	clr_ulong n = 0;
	size_t m;

	if (CLR_FAILED(state.info->vtbl->GetGenerationBounds(
		    state.info, (clr_ulong)state.bounds_cap, &n,
		    state.clr_bounds)))
		return;
	if (n > state.bounds_needed)
		atomic_store(&state.bounds_needed, n);
	m = n < state.bounds_cap ? n : state.bounds_cap;
	if (m < n)
		atomic_fetch_add(&state.bounds_cut, 1);
	for (size_t i = 0; i < m; i++)
		state.bounds[i] = (struct ht_generation_range){
			.generation = state.clr_bounds[i].generation,
			.start = state.clr_bounds[i].start,
			.length = state.clr_bounds[i].length,
			.reserved = state.clr_bounds[i].reserved,
		};
	ht_generation_bounds(state.trace.rec, m, state.bounds);
}

static void swap(struct clr_generation_range **c,
		 struct clr_generation_range **clr_bounds,
		 struct ht_generation_range **h,
		 struct ht_generation_range **bounds)
{
	struct clr_generation_range *tc = *clr_bounds;
	struct ht_generation_range *th = *bounds;

	*clr_bounds = *c;
	*bounds = *h;
	*c = tc;
	*h = th;
}

/* Between GCs: room for the most ranges seen, and more. */
static void bounds_make_room(void)
{
	size_t need = atomic_load(&state.bounds_needed), cap;
	struct clr_generation_range *c;
	struct ht_generation_range *h;

	if (need + need / 2 < state.bounds_cap)
		return;
	cap = 2 * need;
	c = calloc(cap, sizeof(*c));
	h = calloc(cap, sizeof(*h));
	if (!c || !h || !swap_begin()) {
		free(c); /* or a GC runs: after the next one */
		free(h);
		return;
	}
	swap(&c, &state.clr_bounds, &h, &state.bounds);
	state.bounds_cap = cap;
	swap_done();
	free(c);
	free(h);
}

/* A forced dump's GC, or one that qualifies (a major one collects
 * generation 2) and is due (dump_policy.h). */
static bool dump_this_gc(uint32_t generations)
{
	if (flag(&state.forced_pending))
		return true;
	if (flag(&state.exiting) ||
	    !dump_qualifies(&state.opt, (generations & (1u << 2)) != 0))
		return false;
	return dump_due(&state.opt, ++state.qualifying);
}

static clr_hresult on_gc_started(CLR_THIS, int n, clr_bool collected[],
				 int32_t reason)
{
	uint32_t gens = 0;
	bool dump;

	(void)self;
	if (!enter())
		return CLR_S_OK;
	tables_enter_gc();
	for (int i = 0; i < n && i <= HT_GEN_MAX; i++)
		if (collected[i])
			gens |= 1u << i;
	dump = dump_this_gc(gens);
	if (dump)
		dependents_clear();
	set_flag(&state.dump_gc, dump);
	/* The bounds at the start go just before gc_started, which the
	 * shim writes after every other thread's events: recorded after
	 * it, they could be written after the moves of a server GC's other
	 * threads, which the shim orders only at a GC's start and end. */
	record_bounds();
	ht_gc_started(state.trace.rec, atomic_fetch_add(&state.gc_number, 1), gens,
		      reason == 1 ? HT_GC_INDUCED : HT_GC_OTHER);
	leave();
	return CLR_S_OK;
}

/* Blocks as given; failing makes the runtime skip the older callback
 * with 32-bit lengths. */
static clr_hresult on_moved(CLR_THIS, clr_ulong n, clr_uptr old_starts[],
			    clr_uptr new_starts[], clr_uptr lengths[])
{
	(void)self;
	if (!enter())
		return CLR_E_FAIL;
	ht_moved_references(state.trace.rec, n, old_starts, new_starts, lengths);
	leave();
	return CLR_E_FAIL;
}

static clr_hresult on_surviving(CLR_THIS, clr_ulong n, clr_uptr starts[],
				clr_uptr lengths[])
{
	(void)self;
	if (!enter())
		return CLR_E_FAIL;
	ht_surviving_references(state.trace.rec, n, starts, lengths);
	leave();
	return CLR_E_FAIL;
}

static clr_hresult on_roots(CLR_THIS, clr_ulong n, clr_uptr refs[],
			    int32_t kinds[], int32_t flags[], clr_uptr ids[])
{
	uint32_t obj_flags[BATCH] = {0};
	uint8_t k8[BATCH], f8[BATCH];

	(void)self;
	if (!flag(&state.dump_gc) || !enter())
		return CLR_S_OK;
	for (clr_ulong done = 0; done < n;) {
		size_t m = n - done < BATCH ? n - done : BATCH;

		for (size_t i = 0; i < m; i++) {
			k8[i] = (uint8_t)kinds[done + i];
			f8[i] = (uint8_t)flags[done + i];
			if (kinds[done + i] == CLR_ROOT_STACK)
				saw_method(ids[done + i]);
		}
		ht_root_references(state.trace.rec, m, refs + done, obj_flags, k8,
				   f8, ids + done, HT_RESULT_OK);
		done += m;
	}
	leave();
	return CLR_S_OK;
}

static clr_hresult on_dependents(CLR_THIS, clr_ulong n, clr_uptr keys[],
				 clr_uptr values[], clr_uptr handles[])
{
	(void)self;
	(void)handles;
	if (!flag(&state.dump_gc) || !enter())
		return CLR_S_OK;
	for (clr_ulong i = 0; i < n; i++)
		if (keys[i] && values[i])
			dependent_add(keys[i], values[i]);
	leave();
	return CLR_S_OK;
}

/* Failing stops the walk until the next GC: what a GC not dumped does
 * at its first object. */
static clr_hresult on_object(CLR_THIS, clr_uptr object, clr_uptr cls,
			     clr_ulong n, clr_uptr refs[])
{
	clr_uptr size = 0;
	const struct class_fields *c;
	ht_id fields[BATCH];

	(void)self;
	if (!flag(&state.dump_gc) || !enter())
		return CLR_E_FAIL;
	state.info->vtbl->GetObjectSize2(state.info, object, &size);
	saw_class(cls);
	c = fields_lookup(cls);
	if (c && c->n && n <= BATCH) {
		match_fields(c, object, size, n, refs, fields);
		record_object(object, cls, size, n, refs, fields);
	} else {
		record_object(object, cls, size, n, refs, NULL);
	}
	leave();
	return CLR_S_OK;
}

/* Names the dump's new classes and methods through the recorder thread,
 * which reads metadata while this thread holds the GC. */
static void name_dump(void)
{
	uint64_t ticket, start = ms_now(), took;

	if (!state.thread_started)
		return;
	ticket = atomic_fetch_add(&state.name_asked, 1) + 1;
	request(REQ_NAME);
	if (!wait_for(&state.name_done, ticket, NAMING_WAIT_MS))
		atomic_fetch_add(&state.naming_late, 1);
	took = ms_now() - start;
	if (took > state.naming_longest_ms)
		state.naming_longest_ms = took;
}

static clr_hresult on_gc_finished(CLR_THIS)
{
	bool dump;

	(void)self;
	if (!enter())
		return CLR_S_OK;
	dump = flag(&state.dump_gc);
	if (dump) {
		size_t used = atomic_load(&state.dependents_used);

		if (used > atomic_load(&state.dependents_peak))
			atomic_store(&state.dependents_peak, used);
		/* the recorder thread lists the non-GC heap, then names */
		name_dump();
		record_frozen_objects();
	}
	record_bounds();
	ht_gc_finished(state.trace.rec);
	set_flag(&state.dump_gc, false);
	if (dump && flag(&state.forced_pending)) {
		set_flag(&state.forced_pending, false);
		announce(&state.dumps_done, atomic_load(&state.dumps_asked));
	}
	tables_leave_gc();
	request(REQ_AFTER_GC);
	leave();
	return CLR_S_OK;
}

/* ---- allocations, threads -------------------------------------------------- */

/* On the loading thread, outside any GC: the class's field table, ready
 * before any object of it is walked. */
static clr_hresult on_class_loaded(CLR_THIS, clr_uptr cls, clr_hresult status)
{
	(void)self;
	if (CLR_FAILED(status) || !enter())
		return CLR_S_OK;
	find_string_class(cls);
	prepare_fields(cls, true);
	leave();
	return CLR_S_OK;
}

static clr_hresult on_allocated(CLR_THIS, clr_uptr object, clr_uptr cls)
{
	clr_uptr size = 0;

	(void)self;
	if (!enter())
		return CLR_S_OK;
	state.info->vtbl->GetObjectSize2(state.info, object, &size);
	ht_object_allocated(state.trace.rec, object, cls, size);
	saw_class(cls);
	leave();
	return CLR_S_OK;
}

static clr_hresult on_thread_name(CLR_THIS, clr_uptr thread, clr_ulong n,
				  clr_wchar name[])
{
	char utf8[1024];

	(void)self;
	if (!enter())
		return CLR_S_OK;
	clrn_from_utf16(utf8, sizeof(utf8), name ? name : (clr_wchar *)"\0",
			name ? n : 0);
	ht_thread(state.trace.rec, thread, utf8);
	leave();
	return CLR_S_OK;
}

/* A thread is known by its system id until the program names it. */
static void name_by_os_id(clr_uptr thread, clr_ulong os_id)
{
	char name[48];

	snprintf(name, sizeof(name), "thread %lu", (unsigned long)os_id);
	ht_thread(state.trace.rec, thread, name);
}

static clr_hresult on_thread_created(CLR_THIS, clr_uptr thread)
{
	clr_ulong os_id = 0;

	(void)self;
	if (!enter())
		return CLR_S_OK;
	if (state.info->vtbl->GetThreadInfo(state.info, thread, &os_id) ==
		    CLR_S_OK && os_id)
		name_by_os_id(thread, os_id);
	leave();
	return CLR_S_OK;
}


/* ---- forced GCs ------------------------------------------------------------ */

/* A thread of ours with no profiler callback on its stack, as ForceGC
 * requires; one at a time. */
static void *forcer_main(void *arg)
{
	clr_hresult hr;

	(void)arg;
	hr = state.info->vtbl->ForceGC(state.info);
	if (CLR_FAILED(hr)) {
		say("ForceGC failed (0x%08x): no dump now",
		    (unsigned)hr);
		set_flag(&state.forced_pending, false);
		announce(&state.dumps_done, atomic_load(&state.dumps_asked));
	}
	set_flag(&state.forcing, false);
	return NULL;
}

static void force_dump(void)
{
	sigset_t all, old;
	int rc;

	if (flag(&state.forcing))
		return; /* the collection on its way will do */
	refresh_frozen();
	/* the last forcer has returned: reap it */
	if (state.forcer_joinable)
		pthread_join(state.forcer, NULL);
	state.forcer_joinable = false;
	set_flag(&state.forced_pending, true);
	set_flag(&state.forcing, true);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&state.forcer, NULL, forcer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	state.forcer_joinable = rc == 0;
	if (rc != 0) {
		set_flag(&state.forcing, false);
		set_flag(&state.forced_pending, false);
		announce(&state.dumps_done, atomic_load(&state.dumps_asked));
	}
}

/* ---- the recorder thread --------------------------------------------------- */

static void after_gc(void)
{
	report_if_failed(state.trace.rec);
	bounds_make_room();
	dependents_make_room();
	/* a walk adds without growing: room for this many new ids */
	idset_make_room(&state.classes_seen, 16384);
	idset_make_room(&state.methods_seen, 4096);
	refresh_frozen();
}

static void *recorder_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p = {.fd = state.wake[0], .events = POLLIN};
		char drain[64];
		unsigned bits;

		poll(&p, 1, 200);
		while (read(state.wake[0], drain, sizeof(drain)) > 0)
			;
		bits = atomic_exchange(&state.requests, 0);
		if (bits & REQ_NAME) {
			uint64_t asked = atomic_load(&state.name_asked);

			refresh_frozen();
			name_new_ids();
			/* for the next dumps: classes whose load went unseen */
			idset_for_each(&state.classes_seen, prepare_fields_of,
				       NULL);
			idset_for_each(&state.classes_seen,
				       find_string_class_of, NULL);
			name_new_ids();
			announce(&state.name_done, asked);
		}
		if (bits & REQ_QUIT)
			break;
		if (bits & REQ_AFTER_GC)
			after_gc();
		if (bits & REQ_DUMP)
			force_dump();
		if (state.opt.allocations)
			name_new_ids();
	}
	/* a forcer still inside ForceGC (the runtime would not collect) is
	 * left to the process's end */
	if (state.forcer_joinable) {
		if (flag(&state.forcing))
			pthread_detach(state.forcer);
		else
			pthread_join(state.forcer, NULL);
	}
	state.forcer_joinable = false;
	return NULL;
}

static int start_recorder_thread(void)
{
	sigset_t all, old;
	int rc;

	if (pipe(state.wake) != 0)
		return -1;
	fcntl(state.wake[0], F_SETFL, O_NONBLOCK);
	fcntl(state.wake[1], F_SETFL, O_NONBLOCK);
	fcntl(state.wake[0], F_SETFD, FD_CLOEXEC);
	fcntl(state.wake[1], F_SETFD, FD_CLOEXEC);
	if (sem_init(&state.progress, 0, 0) != 0)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&state.thread, NULL, recorder_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	state.thread_started = true;
	return 0;
}

static void stop_recorder_thread(void)
{
	if (!state.thread_started)
		return;
	request(REQ_QUIT);
	pthread_join(state.thread, NULL);
	state.thread_started = false;
}

/* Asks for a dump and waits for it: ms at most. */
static bool dump_now(unsigned ms)
{
	uint64_t ticket = atomic_fetch_add(&state.dumps_asked, 1) + 1;

	request(REQ_DUMP);
	return wait_for(&state.dumps_done, ticket, ms);
}

static void on_dump_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&state.dumps_asked, 1);
	request(REQ_DUMP);
}

static void catch_dump_signal(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_dump_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(DUMP_SIGNAL, &sa, NULL) != 0)
		say("cannot catch SIGUSR1 for dump=signal: dumping at exit "
		    "only");
}

/* ---- closing --------------------------------------------------------------- */

/* HEAPTRACE_VERBOSE: what the shim saw, and what this recorder dropped. */
static void report_stats(void)
{
	struct ht_record_stats st;

	if (!getenv("HEAPTRACE_VERBOSE"))
		return;
	ht_recorder_stats(state.trace.rec, &st);
	say("%s: %llu event%s, %llu GC%s, %llu bytes (%llu before "
	    "compression), %llu wait%s for a buffer, %llu event%s dropped, "
	    "%llu dependent handle%s before the key's fields, %llu dropped, "
	    "%llu GC%s with generation bounds cut, %llu dump%s named late "
	    "(the longest wait for names %llu ms), %llu class%s without a "
	    "field table, %llu string%s with their text", state.trace.output,
	    (unsigned long long)st.events, plural_s(st.events),
	    (unsigned long long)st.gcs, plural_s(st.gcs),
	    (unsigned long long)st.bytes_written,
	    (unsigned long long)st.bytes_uncompressed,
	    (unsigned long long)st.waits, plural_s(st.waits),
	    (unsigned long long)st.dropped_events, plural_s(st.dropped_events),
	    (unsigned long long)state.dependents_early,
	    plural_s(state.dependents_early),
	    (unsigned long long)state.dependents_dropped,
	    (unsigned long long)state.bounds_cut, plural_s(state.bounds_cut),
	    (unsigned long long)state.naming_late,
	    plural_s(state.naming_late),
	    (unsigned long long)state.naming_longest_ms,
	    (unsigned long long)state.fields_failed,
	    state.fields_failed == 1 ? "" : "es",
	    (unsigned long long)state.strings_valued,
	    plural_s(state.strings_valued));
}

/* Closes the trace once no callback is recording (waiting a little for
 * one that is); a callback that comes later records nothing. */
static void close_recorder(void)
{
	if (!state.trace.rec || !guard_close(&state.trace.guard))
		return;
	stop_recorder_thread();
	trace_finish(&state.trace, report_stats);
}

/* The exit dump, forced from our thread while the runtime still runs
 * (Shutdown is the last callback where it may be asked anything). */
static clr_hresult on_shutdown(CLR_THIS)
{
	(void)self;
	if (!state.trace.rec || flag(&state.trace.guard.closed))
		return CLR_S_OK;
	if (!dump_now(EXIT_DUMP_WAIT_MS))
		say("%s: no dump at exit: the runtime did not collect within "
		    "%d seconds", state.trace.output, EXIT_DUMP_WAIT_MS / 1000);
	set_flag(&state.exiting, true);
	close_recorder();
	return CLR_S_OK;
}

/* For an exit that skips the runtime's shutdown (exit() from native code,
 * Environment.Exit is not one). */
static void at_exit(void)
{
	close_recorder();
}

/*
 * SIGTERM and SIGINT: the runtime's own handling ends the program without
 * the profiler's Shutdown, so without the exit dump, and leaves the trace
 * unclosed. Caught here at load (where the runtime left the default
 * action or a handler of its own), they wake the ender thread, which takes
 * the exit dump while the runtime still runs, closes the trace, puts back
 * what was there before and sends the signal again: the program then ends
 * as it would have. A handler the program installs later (through the
 * runtime: PosixSignalRegistration, Console.CancelKeyPress) comes first;
 * the runtime hands the signal to the one it found, ours, when the program
 * does not cancel it.
 */
static const int ending_signals[] = {SIGTERM, SIGINT};
#define N_ENDING ARRAY_SIZE(ending_signals)

static void on_ending_signal(int sig)
{
	int saved = errno;

	atomic_store(&state.ending_signal, sig);
	sem_post(&state.ending); /* async-signal-safe */
	errno = saved;
}

static void *ender_main(void *arg)
{
	int sig;

	(void)arg;
	while (sem_wait(&state.ending) != 0 && errno == EINTR)
		;
	sig = atomic_load(&state.ending_signal);
	if (state.trace.rec && !flag(&state.trace.guard.closed) && !flag(&state.exiting)) {
		if (!dump_now(EXIT_DUMP_WAIT_MS))
			say("%s: no dump at exit: the runtime did not collect "
			    "within %d seconds", state.trace.output,
			    EXIT_DUMP_WAIT_MS / 1000);
		set_flag(&state.exiting, true);
		close_recorder();
	}
	for (size_t i = 0; i < N_ENDING; i++)
		if (ending_signals[i] == sig)
			sigaction(sig, &state.before_ours[i], NULL);
	kill(getpid(), sig);
	return NULL;
}

/* The ender thread, and the signals where nothing ignores them. */
static void catch_ending_signals(void)
{
	struct sigaction sa;
	sigset_t all, old;
	pthread_t ender;
	int rc;

	if (sem_init(&state.ending, 0, 0) != 0)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ender, NULL, ender_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		say("cannot start a thread for SIGTERM and SIGINT: no dump "
		    "when they come");
		return;
	}
	pthread_detach(ender);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_ending_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < N_ENDING; i++) {
		struct sigaction *before = &state.before_ours[i];

		if (sigaction(ending_signals[i], NULL, before) == 0 &&
		    before->sa_handler != SIG_IGN)
			sigaction(ending_signals[i], &sa, NULL);
	}
}

/* ---- loading --------------------------------------------------------------- */

/* Sets or (value NULL) removes a variable in the C library's environment
 * and in the runtime's own copy, which is what processes the program
 * starts inherit (ICorProfilerInfo11). */
static void put_env(const char *name, const char *value)
{
	uint16_t wname[256], wvalue[4096];

	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
	if (state.info_level < 11 || clrn_to_utf16(wname, 256, name) < 0 ||
	    (value && clrn_to_utf16(wvalue, 4096, value) < 0))
		return;
	state.info->vtbl->SetEnvironmentVariable(state.info, wname,
						 value ? wvalue : NULL);
}

/* `heaptrace record` changes CORECLR_* and others for the program and
 * saves their old values (HEAPTRACE_RESTORE): put them back, so that
 * processes the program starts are not recorded into the same file.
 * Loaded by hand, profiling is turned off for them. */
static void restore_clr_environment(void)
{
	/* loaded by hand: the program's children would record into the
	 * same trace */
	if (!restore_environment(put_env))
		put_env("CORECLR_ENABLE_PROFILING", NULL);
}

static void runtime_version(char *out, size_t len)
{
	clr_wchar w[128];
	clr_ulong n = 0;
	uint16_t major = 0, minor = 0, build = 0, qfe = 0, instance = 0;
	int32_t type = 0;

	snprintf(out, len, "?");
	if (CLR_FAILED(state.info->vtbl->GetRuntimeInformation(
		    state.info, &instance, &type, &major, &minor, &build, &qfe,
		    128, &n, w)))
		return;
	if (n > 0)
		clrn_from_utf16(out, len, w, n < 128 ? n : 128);
	else
		snprintf(out, len, "%u.%u.%u", major, minor, build);
}

/* The shim's buffers are resident from the start: 8 MiB rather than its
 * default 32. A GC may record from several threads (server GC). */
static const struct ht_record_options record_options = {
	.buffer_size = 512 << 10,
	.buffers = 16,
	.compression_level = -1,
	.times = true, /* GC starts and finishes, dumps: for pauses */
};

static bool open_clr_trace(void)
{
	char version[128];
	struct trace_metadata meta;
	struct ht_header h = {
		.runtime = "clr",
		.runtime_version = version,
		.reports_survivors = true,
	};

	runtime_version(version, sizeof(version));
	trace_metadata_of(&meta, "libheaptrace-clr " HT_VERSION, &state.opt,
			  state.string_layout ? "strings" : NULL);
	h.metadata = meta.m;
	h.n_metadata = meta.n;
	state.trace.rec = trace_open(state.trace.output, &h, &record_options);
	return state.trace.rec != NULL;
}

/* The highest ICorProfilerInfo the runtime gives, 4 at least. */
static bool get_info(void *unknown)
{
	static const struct {
		int level;
		struct clr_guid iid;
	} levels[] = {
		{14, CLR_IID_INFO14}, {11, CLR_IID_INFO11},
		{10, CLR_IID_INFO10}, {5, CLR_IID_INFO5}, {4, CLR_IID_INFO4},
	};
	struct clr_info *u = unknown;

	for (size_t i = 0; i < ARRAY_SIZE(levels); i++) {
		void *p = NULL;

		if (u->vtbl->QueryInterface(u, &levels[i].iid, &p) ==
			    CLR_S_OK && p) {
			state.info = p;
			state.info_level = levels[i].level;
			return true;
		}
	}
	return false;
}

static bool allocate_tables(void)
{
	state.bounds_cap = FIRST_BOUNDS;
	state.clr_bounds = calloc(FIRST_BOUNDS, sizeof(*state.clr_bounds));
	state.bounds = calloc(FIRST_BOUNDS, sizeof(*state.bounds));
	state.dependents_mask = FIRST_DEPENDENTS - 1;
	state.dependents = calloc(FIRST_DEPENDENTS, sizeof(*state.dependents));
	state.fields = field_map_new(FIRST_FIELD_CLASSES);
	return state.clr_bounds && state.bounds && state.dependents &&
	       state.fields &&
	       pthread_mutex_init(&state.fields_lock, NULL) == 0 &&
	       idset_init(&state.classes_seen, 65536) == 0 &&
	       idset_init(&state.classes_named, 16384) == 0 &&
	       idset_init(&state.methods_seen, 4096) == 0 &&
	       idset_init(&state.methods_named, 4096) == 0;
}

static clr_hresult on_initialize(CLR_THIS, void *info_unknown)
{
	char err[256], *options, *env_output;
	clr_ulong mask = CLR_MONITOR_GC | CLR_MONITOR_THREADS |
			 CLR_MONITOR_CLASS_LOADS;

	(void)self;
	say_as("clr", NULL);
	state.wake[0] = state.wake[1] = -1;
	if (!get_info(info_unknown)) {
		say("the runtime offers no ICorProfilerInfo4; not recording");
		return CLR_E_FAIL;
	}
	/* read before the environment is put back, which unsets them */
	options = getenv("HEAPTRACE_CLR_OPTIONS");
	options = strdup(options ? options : "");
	env_output = getenv("HEAPTRACE_OUTPUT");
	env_output = strdup(env_output ? env_output : REC_DEFAULT_OUTPUT);
	report_channel_open(getenv("HEAPTRACE_REPORT_FD"));
	restore_clr_environment();
	if (!options || !env_output) {
		say("out of memory; not recording");
		goto fail;
	}
	if (rec_parse_options(options, &state.opt, err, sizeof(err)) < 0) {
		say("HEAPTRACE_CLR_OPTIONS: %s; not recording", err);
		goto fail;
	}
	state.trace.output = state.opt.output ? strdup(state.opt.output)
					 : strdup(env_output);
	if (!state.trace.output || !allocate_tables()) {
		say("out of memory; not recording");
		goto fail;
	}
	if (state.opt.values && !(state.string_layout = string_layout()))
		say("the runtime gives no string layout: strings are recorded "
		    "without their text");
	if (!open_clr_trace())
		goto fail;
	if (state.opt.allocations)
		mask |= CLR_ENABLE_OBJECT_ALLOCATED |
			CLR_MONITOR_OBJECT_ALLOCATED;
	if (CLR_FAILED(state.info->vtbl->SetEventMask(state.info, mask))) {
		say("the runtime refused the event mask 0x%x; not recording",
		    (unsigned)mask);
		goto fail_open;
	}
	if (start_recorder_thread() < 0) {
		say("cannot start the recorder thread; not recording");
		goto fail_open;
	}
	if (state.opt.dump_on == DUMP_ON_SIGNAL)
		catch_dump_signal();
	catch_ending_signals();
	atexit(at_exit);
	free(options);
	free(env_output);
	return CLR_S_OK;
fail_open:
	ht_recorder_close(state.trace.rec, NULL);
	state.trace.rec = NULL;
fail:
	free(options);
	free(env_output);
	return CLR_E_FAIL;
}

/* ---- COM: the callback object and its factory ------------------------------ */

static clr_hresult callback_query(CLR_THIS, const struct clr_guid *iid,
				  void **out)
{
	static const struct clr_guid ours[] = {
		CLR_IID_IUNKNOWN,   CLR_IID_CALLBACK,   CLR_IID_CALLBACK2,
		CLR_IID_CALLBACK3,  CLR_IID_CALLBACK4,  CLR_IID_CALLBACK5,
		CLR_IID_CALLBACK6,  CLR_IID_CALLBACK7,  CLR_IID_CALLBACK8,
		CLR_IID_CALLBACK9,  CLR_IID_CALLBACK10, CLR_IID_CALLBACK11,
	};

	for (size_t i = 0; i < ARRAY_SIZE(ours); i++) {
		if (same_guid(iid, &ours[i])) {
			*out = self;
			return CLR_S_OK;
		}
	}
	*out = NULL;
	return CLR_E_NOINTERFACE;
}

/* One static object for the process's life: counting does not matter. */
static clr_ulong callback_addref(CLR_THIS)
{
	(void)self;
	return 1;
}

static clr_ulong callback_release(CLR_THIS)
{
	(void)self;
	return 1;
}

static clr_hresult on_notification_only(CLR_THIS, clr_bool *only)
{
	(void)self;
	*only = 0;
	return CLR_S_OK;
}

/* Every other slot: a stub of its exact type, doing nothing. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define CLR_STUB(ret, name, params) \
	static ret stub_##name params { return 0; }
CLR_CALLBACK_METHODS(CLR_STUB)
#undef CLR_STUB
#pragma GCC diagnostic pop

static struct clr_callback_vtbl callback_vtbl;

static void build_callback_vtbl(void)
{
	struct clr_callback_vtbl *v = &callback_vtbl;

#define CLR_STUB_SLOT(ret, name, params) v->name = stub_##name;
	CLR_CALLBACK_METHODS(CLR_STUB_SLOT)
#undef CLR_STUB_SLOT
	v->QueryInterface = callback_query;
	v->AddRef = callback_addref;
	v->Release = callback_release;
	v->Initialize = on_initialize;
	v->Shutdown = on_shutdown;
	v->ThreadCreated = on_thread_created;
	v->ThreadNameChanged = on_thread_name;
	v->ObjectAllocated = on_allocated;
	v->ClassLoadFinished = on_class_loaded;
	v->GarbageCollectionStarted = on_gc_started;
	v->GarbageCollectionFinished = on_gc_finished;
	v->MovedReferences2 = on_moved;
	v->SurvivingReferences2 = on_surviving;
	v->RootReferences2 = on_roots;
	v->ObjectReferences = on_object;
	v->ConditionalWeakTableElementReferences = on_dependents;
	v->LoadAsNotificationOnly = on_notification_only;
}

static clr_hresult factory_query(struct clr_factory *self,
				 const struct clr_guid *iid, void **out)
{
	static const struct clr_guid unknown = CLR_IID_IUNKNOWN;
	static const struct clr_guid factory = CLR_IID_ICLASSFACTORY;

	if (same_guid(iid, &unknown) || same_guid(iid, &factory)) {
		*out = self;
		return CLR_S_OK;
	}
	*out = NULL;
	return CLR_E_NOINTERFACE;
}

static clr_ulong factory_addref(struct clr_factory *self)
{
	(void)self;
	return 1;
}

static clr_ulong factory_release(struct clr_factory *self)
{
	(void)self;
	return 1;
}

static clr_hresult factory_create(struct clr_factory *self, void *outer,
				  const struct clr_guid *iid, void **out)
{
	(void)self;
	*out = NULL;
	if (outer)
		return CLR_CLASS_E_NOAGGREGATION;
	return callback_query(&state.callback, iid, out);
}

static clr_hresult factory_lock(struct clr_factory *self, clr_bool lock)
{
	(void)self;
	(void)lock;
	return CLR_S_OK;
}

static const struct clr_factory_vtbl factory_vtbl = {
	.QueryInterface = factory_query,
	.AddRef = factory_addref,
	.Release = factory_release,
	.CreateInstance = factory_create,
	.LockServer = factory_lock,
};

static pthread_once_t built = PTHREAD_ONCE_INIT;

static void build_objects(void)
{
	build_callback_vtbl();
	state.callback.vtbl = &callback_vtbl;
	state.factory.vtbl = &factory_vtbl;
}

/* The one export. The runtime loads the library named by
 * CORECLR_PROFILER_PATH for the CLSID in CORECLR_PROFILER: this library
 * is only loaded that way, so it answers to any CLSID. */
clr_hresult DllGetClassObject(const struct clr_guid *clsid,
			      const struct clr_guid *iid, void **out)
{
	(void)clsid;
	if (!out)
		return CLR_E_FAIL;
	pthread_once(&built, build_objects);
	return factory_query(&state.factory, iid, out);
}
