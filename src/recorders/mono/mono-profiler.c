/*
 * mono-profiler.c - libmono-profiler-heaptrace: a Mono profiler module that
 * records the runtime's GCs and heap walks through the heaptrace shim.
 *
 *   mono --profile=heaptrace:dump-on=major,every=1,alloc,output=FILE prog.exe
 *
 * What Mono tells, and what it becomes in the trace:
 *   - GC start and end with the generation: gc_started / gc_finished. One
 *     recorded GC runs from a START event (or, for the end of a concurrent
 *     major begun in an earlier pause, its END) to the next START or the end
 *     of the stop-the-world pause, whichever comes first, so that GCs never
 *     nest and never stay open while the program runs.
 *   - generations: the nursery's bounds at each GC's start, both
 *     generations' at its finish, and the nursery objects that survived
 *     in place (pinned) as surviving blocks, from the roots Mono reports
 *     after every collection and from the walk.
 *   - object moves (old/new pairs): moved_references blocks of length 1.
 *   - root slots, with the source Mono registered their range with:
 *     root_references with kinds (stack, finalizer, handle, other) and ids
 *     (the thread of a stack, the class of a static field).
 *   - the heap walk: CLR-style object_references inside the GC, with class,
 *     size and the object's non-null references; Mono hands an object with
 *     many references over in several calls, which become one event each,
 *     all but the last flagged MORE_REFERENCES.
 *   - class names (at class load), thread names, optionally allocations.
 *   - field identity: each reference of the walk comes with the offset
 *     it was read from; the class's reference field at that offset (its
 *     own or inherited; 0 for array elements and for references inside
 *     an embedded struct) goes with it as ref_fields, each field declared
 *     once by a `fields` event. A root in a class's statics gets the
 *     static field at its address as root_fields.
 *
 * Mono walks the heap only from the PRE_START_WORLD event, and only a walk
 * after a serial major collection sees live objects alone (after a minor
 * one, the old generation still holds the dead). So a dump is taken at a
 * serial major collection; when one is wanted at another moment (after a
 * minor or concurrent collection, on a signal) it is requested: the
 * finalizer thread is woken and forces a serial major collection. At
 * shutdown the recorder forces one itself.
 *
 * Everything between stop-world and start-world runs with the program's
 * threads suspended, possibly inside malloc or stdio: that path uses only
 * the shim's ht_* calls, Mono's plain getters, atomics and data allocated
 * beforehand (rootmap.h, idset.h).
 */
#include "recorders/core/dump_policy.h"
#include "recorders/core/guard.h"
#include "recorders/core/idset.h"
#include "recorders/core/options.h"
#include "recorders/core/report.h"
#include "recorders/core/restore.h"
#include "recorders/core/say.h"
#include "recorders/core/trace.h"
#include "recorders/mono/rootmap.h"
#include "util/alloc.h"

#include <heaptrace/record.h>

#include <mono/jit/jit.h>
#include <mono/metadata/appdomain.h>
#include <mono/metadata/class.h>
#include <mono/metadata/mono-gc.h>
#include <mono/metadata/object.h>
#include <mono/metadata/profiler.h>
#include <mono/metadata/threads.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
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

static struct {
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
} state;

/* ---- the recording guard (recorders/core/guard.h) ----------------------- */

static bool enter(void)
{
	return guard_enter(&state.trace.guard);
}

static void leave(void)
{
	guard_leave(&state.trace.guard);
}

/* ---- class names --------------------------------------------------------- */

static void append(char *buf, size_t len, size_t *at, const char *s)
{
	while (*s && *at + 1 < len)
		buf[(*at)++] = *s++;
	buf[*at] = '\0';
}

/* Namespace.Outer.Inner, Element[] or Element[,], from Mono's getters
 * only: they read the class and allocate nothing, so this may run inside
 * a pause, and before the runtime can format type names itself. Generic
 * arguments are left out (List`1). */
static void append_class_name(MonoClass *k, char *buf, size_t len, size_t *at,
			      int depth)
{
	int rank = mono_class_get_rank(k);
	MonoClass *outer;
	const char *ns;

	if (rank > 0 && depth < 16) {
		append_class_name(mono_class_get_element_class(k), buf, len, at,
				  depth + 1);
		append(buf, len, at, "[");
		for (int i = 1; i < rank; i++)
			append(buf, len, at, ",");
		append(buf, len, at, "]");
		return;
	}
	outer = mono_class_get_nesting_type(k);
	if (outer && depth < 16) {
		append_class_name(outer, buf, len, at, depth + 1);
		append(buf, len, at, ".");
	} else if ((ns = mono_class_get_namespace(k)) && *ns) {
		append(buf, len, at, ns);
		append(buf, len, at, ".");
	}
	append(buf, len, at, mono_class_get_name(k));
}

static const char *plain_class_name(MonoClass *k, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	append_class_name(k, buf, len, &at, 0);
	return buf;
}

static void remember_early(MonoClass *k)
{
	pthread_mutex_lock(&state.early_lock);
	if (ALLOC_GROW(state.early, state.n_early + 1, state.cap_early) == 0)
		state.early[state.n_early++] = k;
	pthread_mutex_unlock(&state.early_lock);
}

/* In a pause, for a class whose load went unseen. */
static void name_class_in_pause(MonoClass *k)
{
	ht_id id = (ht_id)(uintptr_t)k;

	if (idset_contains(&state.classes, id))
		return;
	plain_class_name(k, state.class_name, sizeof(state.class_name));
	ht_class(state.trace.rec, id, state.class_name, false, 0);
	idset_add(&state.classes, id, true);
}

/* Outside pauses: the runtime's own name once it can give one (it cannot
 * for every class while the core library is still loading). */
static void on_class_loaded(MonoProfiler *prof, MonoClass *k)
{
	char buf[CLASS_NAME_MAX];

	(void)prof;
	if (!enter())
		return;
	if (flag(&state.in_pause)) {
		/* not seen to happen; if it does, nothing that allocates */
		name_class_in_pause(k);
	} else if (flag(&state.runtime_ready)) {
		char *name = mono_type_get_name(mono_class_get_type(k));

		ht_class(state.trace.rec, (ht_id)(uintptr_t)k,
			 name ? name : plain_class_name(k, buf, sizeof(buf)),
			 false, 0);
		mono_free(name);
	} else {
		plain_class_name(k, buf, sizeof(buf));
		ht_class(state.trace.rec, (ht_id)(uintptr_t)k, buf, false, 0);
		if (strchr(buf, '`'))
			remember_early(k);
	}
	if (!flag(&state.in_pause))
		idset_add(&state.classes, (ht_id)(uintptr_t)k, false);
	leave();
}

/* Generic classes loaded early get their arguments now. */
static void rename_early_classes(void)
{
	pthread_mutex_lock(&state.early_lock);
	for (size_t i = 0; i < state.n_early; i++) {
		MonoClass *k = state.early[i];
		char *name = mono_type_get_name(mono_class_get_type(k));

		if (name)
			ht_class(state.trace.rec, (ht_id)(uintptr_t)k, name,
				 false, 0);
		mono_free(name);
	}
	free(state.early);
	state.early = NULL;
	state.n_early = state.cap_early = 0;
	pthread_mutex_unlock(&state.early_lock);
}

static void on_thread_name(MonoProfiler *prof, uintptr_t tid, const char *name)
{
	(void)prof;
	if (!name || !enter())
		return;
	ht_thread(state.trace.rec, (ht_id)tid, name);
	leave();
}

static void find_nursery(void);

static void on_runtime_initialized(MonoProfiler *prof)
{
	(void)prof;
	set_flag(&state.runtime_ready, true);
	if (!enter())
		return;
	rename_early_classes();
	find_nursery();
	leave();
}

/* ---- reference fields ---------------------------------------------------- */

static size_t class_hash(uintptr_t k)
{
	uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 32);
}

static struct class_fields *class_entry(struct field_tables *t, uintptr_t k)
{
	for (size_t i = class_hash(k) & t->mask;; i = (i + 1) & t->mask)
		if (t->classes[i].klass == k || t->classes[i].klass == 0)
			return &t->classes[i];
}

static bool is_reference_field(MonoClassField *f, uint32_t flags)
{
	if (flags & FIELD_LITERAL)
		return false; /* a constant: no storage */
	return mono_type_is_reference(mono_field_get_type(f));
}

/* Pool slots from at to at + n by offset: insertion sort, as the slices
 * are short and this runs in a pause (qsort may allocate). */
static void sort_slots(struct field_slot *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct field_slot x = s[i];
		size_t j = i;

		for (; j > 0 && s[j - 1].offset > x.offset; j--)
			s[j] = s[j - 1];
		s[j] = x;
	}
}

/* Declares a class's own reference fields, batched. */
struct field_batch {
	size_t n;
	struct ht_field f[64];
};

static void batch_flush(struct field_batch *b)
{
	if (b->n)
		ht_fields(state.trace.rec, b->n, b->f);
	b->n = 0;
}

static void batch_add(struct field_batch *b, struct ht_field f)
{
	if (b->n == ARRAY_SIZE(b->f))
		batch_flush(b);
	b->f[b->n++] = f;
}

/* Room in the pool for the class's reference fields: the parent's
 * instance ones, then its own instance and static ones. */
static size_t own_reference_fields(MonoClass *k)
{
	void *iter = NULL;
	MonoClassField *f;
	size_t n = 0;

	while ((f = mono_class_get_fields(k, &iter)))
		if (is_reference_field(f, mono_field_get_flags(f)))
			n++;
	return n;
}

static const struct class_fields *class_fields_of(MonoClass *k, int depth);

/* Fills entry e of class k: its parent's instance fields, then its own
 * reference fields, each given the next id and declared. */
static void build_class_fields(struct class_fields *e, MonoClass *k,
			       const struct class_fields *parent)
{
	struct field_tables *t = &state.ft;
	struct field_slot *pool = t->pool;
	struct field_batch b = {0};
	size_t inherited = parent ? parent->n : 0, n_inst = 0, n_stat = 0;
	size_t own = own_reference_fields(k), at = t->pool_used;
	void *iter = NULL;
	MonoClassField *f;

	if (at + inherited + 2 * own > t->pool_cap ||
	    (parent && !parent->complete)) {
		/* no room (for it or its parent): its references go without
		 * fields until the pool has grown */
		atomic_fetch_add(&state.classes_unmapped, 1);
		if (inherited + 2 * own > t->pool_short)
			t->pool_short = inherited + 2 * own;
		t->incomplete = true;
		return;
	}
	for (size_t i = 0; i < inherited; i++)
		pool[at + n_inst++] = pool[parent->first + i];
	name_class_in_pause(k);
	while ((f = mono_class_get_fields(k, &iter))) {
		uint32_t flags = mono_field_get_flags(f);
		uint32_t offset = mono_field_get_offset(f);
		bool is_static = (flags & FIELD_STATIC) != 0;
		struct field_slot slot;

		if (!is_reference_field(f, flags) || (int32_t)offset < 0)
			continue; /* a thread or context static has none */
		slot = (struct field_slot){offset, ++state.last_field};
		if (is_static)
			pool[at + inherited + own + n_stat++] = slot;
		else
			pool[at + n_inst++] = slot;
		batch_add(&b, (struct ht_field){
			.id = slot.id,
			.class_id = (ht_id)(uintptr_t)k,
			.name = mono_field_get_name(f),
			.kind = is_static ? HT_FIELD_STATIC : HT_FIELD_INSTANCE,
			.has_offset = true,
			.offset = offset,
		});
	}
	batch_flush(&b);
	/* the statics next to the instance fields */
	memmove(pool + at + n_inst, pool + at + inherited + own,
		n_stat * sizeof(*pool));
	sort_slots(pool + at, n_inst);
	sort_slots(pool + at + n_inst, n_stat);
	e->first = (uint32_t)at;
	e->n = (uint32_t)n_inst;
	e->first_static = (uint32_t)(at + n_inst);
	e->n_static = (uint32_t)n_stat;
	e->complete = true;
	t->pool_used = at + n_inst + n_stat;
}

/* The table of class k, built the first time: NULL when there is no room
 * for it. Only in a pause that holds the tables. An array's is empty:
 * its elements are no fields. */
static const struct class_fields *class_fields_of(MonoClass *k, int depth)
{
	struct field_tables *t = &state.ft;
	const struct class_fields *parent = NULL;
	struct class_fields *e;
	MonoClass *up;

	if (!k || !t->classes)
		return NULL;
	e = class_entry(t, (uintptr_t)k);
	if (e->klass)
		return e;
	if (mono_class_get_rank(k) == 0 && depth < 64 &&
	    (up = mono_class_get_parent(k)) &&
	    !(parent = class_fields_of(up, depth + 1)))
		return NULL; /* no room for the parent, nor for it */
	/* the parent's table may have taken the entry's place */
	e = class_entry(t, (uintptr_t)k);
	if (e->klass)
		return e;
	if (t->used + 1 > (t->mask + 1) / 4 * 3) {
		atomic_fetch_add(&state.classes_unmapped, 1);
		return NULL;
	}
	*e = (struct class_fields){.klass = (uintptr_t)k};
	t->used++;
	if (mono_class_get_rank(k) == 0)
		build_class_fields(e, k, parent);
	else
		e->complete = true;
	return e;
}

/* The field of a slice at offset, or 0. */
static ht_id field_at(const struct field_slot *s, size_t n, uint64_t offset)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].offset == offset)
			return s[mid].id;
		if (s[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static ht_id instance_field_at(const struct class_fields *c, uintptr_t off)
{
	return c ? field_at(state.ft.pool + c->first, c->n, off) : 0;
}

static ht_id static_field_at(MonoClass *k, uintptr_t offset)
{
	const struct class_fields *c;

	if (!state.tables_held || !(c = class_fields_of(k, 0)))
		return 0;
	return field_at(state.ft.pool + c->first_static, c->n_static, offset);
}

static bool tables_claim(void)
{
	bool was = false;

	return atomic_compare_exchange_strong(&state.tables_busy, &was, true);
}

static void tables_release(void)
{
	atomic_store(&state.tables_busy, false);
}

static int field_tables_alloc(struct field_tables *t, size_t classes,
			      size_t slots)
{
	t->classes = calloc(classes, sizeof(*t->classes));
	t->pool = calloc(slots, sizeof(*t->pool));
	if (!t->classes || !t->pool) {
		free(t->classes);
		free(t->pool);
		return -1;
	}
	t->mask = classes - 1;
	t->pool_cap = slots;
	t->used = t->pool_used = t->pool_short = 0;
	t->incomplete = false;
	return 0;
}

/* Between pauses: twice the room when half of it is used, so that the
 * next pause's new classes fit; the classes that found no room are left
 * out of the copy, to be built again. */
static void field_tables_make_room(void)
{
	struct field_tables *t = &state.ft, n;
	size_t classes = t->mask + 1, slots = t->pool_cap;

	if (!t->classes || !tables_claim())
		return;
	while (t->used * 4 > classes)
		classes *= 2;
	while ((t->pool_used + t->pool_short) * 2 > slots)
		slots *= 2;
	if ((classes != t->mask + 1 || slots != t->pool_cap ||
	     t->incomplete) &&
	    field_tables_alloc(&n, classes, slots) == 0) {
		memcpy(n.pool, t->pool, t->pool_used * sizeof(*t->pool));
		n.pool_used = t->pool_used;
		for (size_t i = 0; i <= t->mask; i++) {
			if (t->classes[i].klass && t->classes[i].complete) {
				*class_entry(&n, t->classes[i].klass) =
					t->classes[i];
				n.used++;
			}
		}
		free(t->classes);
		free(t->pool);
		*t = n;
	}
	tables_release();
}

/* ---- the nursery --------------------------------------------------------- */

/*
 * sgen's nursery is one range of addresses, and mono_gc_get_generation
 * tells whether an address lies in it by arithmetic alone (it reads
 * nothing there), so the range's edges can be searched for from any
 * address inside it. They do not change once the runtime runs (a nursery
 * that resizes itself does so inside the range reserved at startup).
 */
static bool in_nursery_by_mono(uintptr_t a)
{
	return mono_gc_get_generation((MonoObject *)a) == 0;
}

/* The range of addresses around inside, an address in the nursery. */
static void nursery_around(uintptr_t inside, uintptr_t *start, uintptr_t *end)
{
	uintptr_t lo = 0, hi = inside;

	/* the lowest address of the nursery: in it from hi to inside */
	while (lo < hi) {
		uintptr_t mid = lo + (hi - lo) / 2;

		if (in_nursery_by_mono(mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	*start = hi;
	/* the first address above it: lo in it, hi not */
	lo = inside;
	hi = UINTPTR_MAX;
	while (hi - lo > 1) {
		uintptr_t mid = lo + (hi - lo) / 2;

		if (in_nursery_by_mono(mid))
			lo = mid;
		else
			hi = mid;
	}
	*end = hi;
}

/* A fresh small object is in the nursery: its address finds the range.
 * Runs once, on the main thread, when the runtime is ready; the GCs
 * before it record no bounds and so prove no death. */
static void find_nursery(void)
{
	MonoObject *probe = mono_object_new(mono_domain_get(),
					    mono_get_object_class());
	uintptr_t at = (uintptr_t)probe, start, end;

	if (!probe || !in_nursery_by_mono(at))
		return; /* allocated elsewhere (degraded mode): none known */
	nursery_around(at, &start, &end);
	if (end - start < 4096 || in_nursery_by_mono(start - 1) ||
	    in_nursery_by_mono(end))
		return;
	state.nursery_start = start;
	state.nursery_end = end;
	set_flag(&state.nursery_known, true);
}

static bool in_nursery(uintptr_t a)
{
	return a >= state.nursery_start && a < state.nursery_end;
}

/* At a GC's start: the nursery, generation 0, the only generation whose
 * survivors Mono reports all (see gc_close and on_gc_roots), so the only
 * bounds that may prove deaths (doc/design.md, rule (a)). */
/* Both generations: the nursery, and the old generation as every other
 * address (mono_gc_get_generation's answer for them). */
static void both_generations(struct ht_generation_range g[3])
{
	uint64_t size = state.nursery_end - state.nursery_start;
	uint64_t above = (uint64_t)0 - state.nursery_end; /* to the top */

	g[0] = (struct ht_generation_range){
		.generation = 0, .start = state.nursery_start,
		.length = size, .reserved = size};
	g[1] = (struct ht_generation_range){
		.generation = 1, .start = 0,
		.length = state.nursery_start, .reserved = state.nursery_start};
	g[2] = (struct ht_generation_range){
		.generation = 1, .start = state.nursery_end,
		.length = above, .reserved = above};
}

/* At a GC's start: the generations whose every survivor is reported as
 * a block, since only their bounds may prove deaths (doc/design.md, rule
 * (a)): the nursery, whose survivors Mono moves or pins (see gc_close and
 * on_gc_roots), and in a walked major GC the old generation too, whose
 * survivors the walk shows (record_walked_survivor). */
static void record_start_bounds(bool with_old)
{
	struct ht_generation_range g[3];

	both_generations(g);
	ht_generation_bounds(state.trace.rec, with_old ? 3 : 1, g);
}

/* At a GC's finish: both, so that an object carried out of the nursery
 * is seen promoted. */
static void record_finish_bounds(void)
{
	struct ht_generation_range g[3];

	both_generations(g);
	ht_generation_bounds(state.trace.rec, 3, g);
}

/* A GC that proves the old generation's dead but was not walked (another
 * collection followed it in its pause): its old objects are all kept in
 * place, as no report tells which survived. */
static void record_old_kept(void)
{
	ht_id starts[2] = {0, state.nursery_end};
	uint64_t lengths[2] = {state.nursery_start,
			       (uint64_t)0 - state.nursery_end};

	ht_surviving_references(state.trace.rec, 2, starts, lengths);
}

/* A GC whose roots Mono did not report (the pause that starts a
 * concurrent major collection, which moves and frees nothing): no
 * survivor is known, so the whole nursery is reported surviving in
 * place, and none of its objects is claimed dead. */
static void record_nursery_kept(void)
{
	ht_id start = state.nursery_start;
	uint64_t length = state.nursery_end - state.nursery_start;

	ht_surviving_references(state.trace.rec, 1, &start, &length);
}

/* Roots into the nursery, reported once the collection is done: Mono
 * reports them after every object has been copied out and the roots
 * updated, so the nursery objects they hold are those pinned there, the
 * survivors that did not move. A block of 1 byte covers the object's id;
 * its header is not read (sgen keeps its pin bit there now). */
static void record_nursery_survivors(uint64_t count,
				     MonoObject *const *objects)
{
	ht_id starts[BATCH];
	uint64_t lengths[BATCH];
	size_t n = 0;

	for (uint64_t i = 0; i < count; i++) {
		uintptr_t a = (uintptr_t)objects[i];

		if (!in_nursery(a))
			continue;
		if (n == BATCH) {
			ht_surviving_references(state.trace.rec, n, starts,
						lengths);
			n = 0;
		}
		starts[n] = a;
		lengths[n++] = 1;
	}
	if (n)
		ht_surviving_references(state.trace.rec, n, starts, lengths);
}

/* ---- allocations, moves -------------------------------------------------- */

static void gc_open(int gen);

static size_t batch(uint64_t left)
{
	return left < BATCH ? (size_t)left : BATCH;
}

static uint64_t size_in_heap(uint64_t size)
{
	return (size + 7) & ~(uint64_t)7; /* objects are 8-byte aligned */
}

/* sgen's largest object outside its large object space */
#define SMALL_OBJECT_MAX 8000

/* The size an allocation records: the object's own, but for a small
 * object allocated outside the nursery, which sgen does only for a
 * pinned allocation (an interned string, say) or when the nursery is
 * full. Mono raises the event for a pinned object before its caller has
 * filled it in (an interned string still has length 0 then), so its size
 * is not known yet: 0, which the first dump that shows it fills in. */
static uint64_t allocated_size(MonoObject *obj)
{
	uint64_t size = size_in_heap(mono_object_get_size(obj));

	if (size < SMALL_OBJECT_MAX && mono_gc_get_generation(obj) != 0)
		return 0;
	return size;
}

static void on_allocation(MonoProfiler *prof, MonoObject *obj)
{
	(void)prof;
	if (!enter())
		return;
	ht_object_allocated(state.trace.rec, (ht_id)(uintptr_t)obj,
			    (ht_id)(uintptr_t)mono_object_get_class(obj),
			    allocated_size(obj));
	leave();
}

/* A destination of the walked GC's moves: the walk shows the object
 * there, moved, not survived in place. */
static void note_destination(ht_id id)
{
	if (state.n_dests < state.cap_dests)
		state.dests[state.n_dests++] = id;
	else
		state.dests_overflow = true;
}

/* objects: old, new, old, new, ...; count counts both. */
static void on_moves(MonoProfiler *prof, MonoObject *const *objects,
		     uint64_t count)
{
	ht_id old_ids[BATCH], new_ids[BATCH];
	uint64_t lengths[BATCH];
	uint64_t pairs = count / 2;

	(void)prof;
	if (!enter())
		return;
	/* the finishing pause of a concurrent major moves objects before
	 * its END event */
	if (!state.gc_open && flag(&state.in_pause))
		gc_open(state.major_running ? state.max_gen : 0);
	for (size_t i = 0; i < BATCH; i++)
		lengths[i] = 1;
	for (uint64_t done = 0; done < pairs;) {
		size_t n = batch(pairs - done);

		for (size_t i = 0; i < n; i++) {
			MonoObject *const *pair = objects + 2 * (done + i);

			old_ids[i] = (ht_id)(uintptr_t)pair[0];
			new_ids[i] = (ht_id)(uintptr_t)pair[1];
			if (state.gc_proves_old)
				note_destination(new_ids[i]);
		}
		ht_moved_references(state.trace.rec, n, old_ids, new_ids,
				    lengths);
		done += n;
	}
	leave();
}

/* ---- roots --------------------------------------------------------------- */

static void on_root_register(MonoProfiler *prof, const mono_byte *start,
			     uintptr_t size, MonoGCRootSource source,
			     const void *key, const char *name)
{
	uint64_t id = (uint64_t)(uintptr_t)key;

	(void)prof;
	(void)name;
	/* a static field's key is its vtable: the class is what tells */
	if (source == MONO_ROOT_SOURCE_STATIC && key)
		id = (uint64_t)(uintptr_t)mono_vtable_class((MonoVTable *)key);
	rootmap_add(&state.roots, (uintptr_t)start, size, (uint8_t)source, id,
		    flag(&state.in_pause));
}

static void on_root_unregister(MonoProfiler *prof, const mono_byte *start)
{
	(void)prof;
	rootmap_remove(&state.roots, (uintptr_t)start, flag(&state.in_pause));
}

/* Mono reports the finalizer queues, ephemerons and toggle-refs at these
 * made-up addresses rather than at registered ranges. */
#define SPECIAL_FIN_QUEUE 1
#define SPECIAL_CRIT_FIN_QUEUE 2

static void classify_root(uintptr_t addr, uint8_t *kind, uint8_t *flags,
			  ht_id *id, ht_id *field)
{
	const struct root_range *r;

	*kind = HT_ROOT_OTHER;
	*flags = 0;
	*id = 0;
	*field = 0;
	if (addr == SPECIAL_FIN_QUEUE || addr == SPECIAL_CRIT_FIN_QUEUE) {
		*kind = HT_ROOT_FINALIZER;
		return;
	}
	r = rootmap_find(&state.roots, addr);
	if (!r)
		return;
	*id = r->id;
	switch (r->source) {
	case MONO_ROOT_SOURCE_STACK:
		/* scanned conservatively: what it holds is pinned */
		*kind = HT_ROOT_STACK;
		*flags = HT_ROOT_PINNING;
		break;
	case MONO_ROOT_SOURCE_HANDLE:
		*kind = HT_ROOT_STACK; /* the runtime's handles on a thread */
		break;
	case MONO_ROOT_SOURCE_FINALIZER_QUEUE:
		*kind = HT_ROOT_FINALIZER;
		break;
	case MONO_ROOT_SOURCE_GC_HANDLE:
		*kind = HT_ROOT_HANDLE;
		break;
	case MONO_ROOT_SOURCE_STATIC:
		/* the range is the class's statics: the slot's offset in it
		 * is the static field's */
		*field = static_field_at((MonoClass *)(uintptr_t)r->id,
					 addr - r->start);
		break;
	default:
		break; /* statics, runtime tables, ...: other, with their id */
	}
}

static void on_gc_roots(MonoProfiler *prof, uint64_t count,
			const mono_byte *const *addresses,
			MonoObject *const *objects)
{
	ht_id refs[BATCH], ids[BATCH], fields[BATCH];
	uint32_t flags[BATCH];
	uint8_t kinds[BATCH], root_flags[BATCH];

	(void)prof;
	if (!enter())
		return;
	/* the finishing pause of a concurrent major may report its roots
	 * before its END event */
	if (!state.gc_open && flag(&state.in_pause))
		gc_open(state.major_running ? state.max_gen : 0);
	if (state.gc_open && flag(&state.nursery_known)) {
		state.gc_roots_seen = true;
		record_nursery_survivors(count, objects);
	}
	/* The roots themselves only in a major collection begun in a walked
	 * pause: the roots of a minor one before it, or of the end of a
	 * concurrent major that the forced collection finishes first, would
	 * make a dump of their own. */
	if (!state.walk_pause || !state.gc_open || !state.gc_major ||
	    !state.gc_started_here) {
		leave();
		return;
	}
	for (uint64_t done = 0; done < count;) {
		size_t n = batch(count - done);

		for (size_t i = 0; i < n; i++) {
			refs[i] = (ht_id)(uintptr_t)objects[done + i];
			flags[i] = 0;
			classify_root((uintptr_t)addresses[done + i], &kinds[i],
				      &root_flags[i], &ids[i], &fields[i]);
		}
		ht_root_references_fields(state.trace.rec, n, refs, flags,
					  kinds, root_flags, ids, fields,
					  HT_RESULT_OK);
		done += n;
	}
	leave();
}

/* ---- the heap walk ------------------------------------------------------- */

static void piece_record(struct piece *p, bool more)
{
	if (!more && p->has_text) {
		struct ht_event ev = {
			.type = HT_EV_OBJECT_REFERENCES,
			.u.object_references = {
				.id = p->id, .class_id = p->class_id,
				.size = p->size, .count = p->n,
				.refs = p->refs, .ref_fields = p->ref_fields,
				.has_generation = p->generation >= 0,
				.generation = (uint32_t)(p->generation >= 0
							 ? p->generation : 0),
				.result = HT_RESULT_OK, .array = &p->text,
			},
		};

		ht_record_event(state.trace.rec, &ev);
		p->has_text = false;
	} else {
		ht_object_references_fields(state.trace.rec, p->id, p->class_id,
					    p->size,
					    more ? HT_OBJ_MORE_REFERENCES : 0,
					    p->n, p->refs, NULL,
					    p->ref_fields, p->generation,
					    HT_RESULT_OK);
	}
	p->n = 0;
}

/*
 * In the walk, with --values: a string's UTF-16 units, read from the
 * object with Mono's plain getters (a length and a pointer into the
 * object), into *out. Safe here: the walk runs with the world stopped,
 * after the collection, so the object is where the walk says and nothing
 * writes to it (nor could: a string is immutable once made); the length
 * is checked against the object's size before a unit is read. The units
 * are in the machine's order, which the trace's little-endian arrays are
 * only on a little-endian machine: on others no string is recorded.
 */
static bool string_contents(MonoObject *obj, struct ht_array_values *out)
{
	MonoString *str = (MonoString *)obj;
	const uint8_t *units = (const uint8_t *)mono_string_chars(str);
	int length = mono_string_length(str);
	uintptr_t at = (uintptr_t)units - (uintptr_t)obj;

	if (length < 0 || at + 2 * (uint64_t)length >
			  (uint64_t)mono_object_get_size(obj))
		return false;
	atomic_fetch_add_explicit(&state.strings_valued, 1,
				  memory_order_relaxed);
	return ht_array_values_of(HT_TYPE_CHAR, units, (uint64_t)length, out);
}

static void piece_flush(void)
{
	if (state.piece.valid)
		piece_record(&state.piece, false);
	state.piece.valid = false;
}

static void walked_survivors_flush(void)
{
	uint64_t lengths[BATCH];

	for (size_t i = 0; i < state.n_walked_survivors; i++)
		lengths[i] = 1;
	if (state.n_walked_survivors)
		ht_surviving_references(state.trace.rec,
					state.n_walked_survivors,
					state.walked_survivors, lengths);
	state.n_walked_survivors = 0;
}

/* An object the walk finds in the nursery survived this collection in
 * place (nothing is moved into the nursery), whether or not Mono reported
 * the root that pins it: sgen pins objects it does not report as roots
 * (an object its own thread's stack holds by an interior pointer, it
 * seems). So in a walked collection the walk, not the roots, says which
 * nursery objects survived. */
static void note_walked(ht_id id)
{
	if (!flag(&state.nursery_known) || !in_nursery((uintptr_t)id))
		return;
	if (state.n_walked_survivors == BATCH)
		walked_survivors_flush();
	state.walked_survivors[state.n_walked_survivors++] = id;
}

/* Ids in place, ascending: a heap sort, which allocates nothing. */
static void ids_sift_down(ht_id *a, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		ht_id t;

		if (child >= n)
			return;
		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[root] >= a[child])
			return;
		t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

static void sort_ids(ht_id *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		ids_sift_down(a, i, n);
	for (size_t end = n; end > 1; end--) {
		ht_id t = a[0];

		a[0] = a[end - 1];
		a[end - 1] = t;
		ids_sift_down(a, 0, end - 1);
	}
}

static bool is_destination(ht_id id)
{
	size_t lo = 0, hi = state.n_dests;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (state.dests[mid] == id)
			return true;
		if (state.dests[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void walked_survivors_flush(void);

/* An object of the old generation that the walk of a GC proving its dead
 * finds where no move put it: it survived in place. Each gets a block of
 * its own, 1 byte long: the memory of a dead object may hold a live one
 * now (a large object over freed ones), so a block over a live object's
 * extent could cover the id of a dead one. */
static void note_walked_old(ht_id id, uintptr_t size)
{
	if (!state.gc_proves_old || state.dests_overflow || size == 0 ||
	    in_nursery((uintptr_t)id) || is_destination(id))
		return;
	if (state.n_walked_survivors == BATCH)
		walked_survivors_flush();
	state.walked_survivors[state.n_walked_survivors++] = id;
}

/* Mono gives a size with the first call for an object (0 in the calls
 * that continue it): the size of sgen's slot for it, which in the old
 * generation is that of its block's size class (80 bytes for a 72-byte
 * object). The object's own size, rounded to 8, is what its allocation
 * gave, and what the walk records. The walk runs once the collection is
 * over, when the object's header holds its vtable alone again. */
static int on_walk_object(MonoObject *obj, MonoClass *klass, uintptr_t size,
			  uintptr_t num, MonoObject **refs, uintptr_t *offsets,
			  void *data)
{
	struct piece *p = &state.piece;
	ht_id id = (ht_id)(uintptr_t)obj;

	(void)data;
	if (p->valid && p->id == id && size == 0) {
		piece_record(p, true);
	} else {
		piece_flush();
		name_class_in_pause(klass);
		note_walked(id);
		note_walked_old(id, size);
		p->valid = true;
		p->id = id;
		p->class_id = (ht_id)(uintptr_t)klass;
		p->size = size_in_heap(mono_object_get_size(obj));
		p->generation = mono_gc_get_generation(obj);
		p->fields = state.tables_held ? class_fields_of(klass, 0)
					      : NULL;
		p->n = 0;
		p->has_text = klass && klass == state.string_class &&
			      string_contents(obj, &p->text);
	}
	for (uintptr_t i = 0; i < num; i++) {
		if (p->n == PIECE_REFS)
			piece_record(p, true);
		p->ref_fields[p->n] = instance_field_at(p->fields, offsets[i]);
		p->refs[p->n++] = (ht_id)(uintptr_t)refs[i];
	}
	return 0;
}

static bool little_endian(void)
{
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

static void walk_heap(void)
{
	state.piece.valid = false;
	state.n_walked_survivors = 0;
	/* a plain getter of a class the runtime made at its start */
	state.string_class = state.opt.values && little_endian()
				     ? mono_get_string_class()
				     : NULL;
	if (state.gc_proves_old)
		sort_ids(state.dests, state.n_dests);
	mono_gc_walk_heap(0, on_walk_object, NULL);
	piece_flush();
	walked_survivors_flush();
	/* with destinations left out, the old survivors are not known */
	state.gc_walked = !state.dests_overflow;
}

/* ---- GC pauses ----------------------------------------------------------- */

static uint32_t collected_generations(int gen)
{
	if (gen >= state.max_gen)
		gen = state.max_gen;
	return gen >= 31 ? UINT32_MAX : (1u << (gen + 1)) - 1;
}

/* Does a collection of gen count for --every (dump_policy.h)? */
static bool qualifies(int gen)
{
	return dump_qualifies(&state.opt, gen >= state.max_gen);
}

static void pause_begin(uint32_t gen, bool serial)
{
	bool walkable = (int)gen >= state.max_gen && serial;
	bool stopping = flag(&state.stopping);
	bool requested = flag(&state.requested);
	bool due = dump_due(&state.opt, state.qualifying + 1);

	set_flag(&state.in_pause, true);
	state.gc_open = false;
	state.notify_after = false;
	state.induced_pause = walkable && requested && !stopping;
	state.walk_pause = walkable && !stopping &&
			   (requested || (qualifies((int)gen) && due));
	if (state.walk_pause) {
		/* held only by a thread growing them after its pause */
		state.tables_held = tables_claim();
	}
}

/* Every thread is suspended now: no range can change until the world
 * starts again. */
static void world_stopped(void)
{
	if (state.walk_pause)
		rootmap_freeze(&state.roots);
}

static bool dests_claim(void)
{
	bool was = false;

	return atomic_compare_exchange_strong(&state.dests_busy, &was, true);
}

static void dests_release(void)
{
	atomic_store(&state.dests_busy, false);
}

static void gc_close(void)
{
	if (!state.gc_open)
		return;
	if (flag(&state.nursery_known)) {
		if (!state.gc_roots_seen)
			record_nursery_kept();
		if (state.gc_proves_old && !state.gc_walked)
			record_old_kept();
		record_finish_bounds();
	}
	ht_gc_finished(state.trace.rec);
	state.gc_open = false;
	if (state.gc_proves_old) {
		if (state.n_dests > state.most_dests || state.dests_overflow)
			state.most_dests = state.dests_overflow
						   ? 2 * state.cap_dests
						   : state.n_dests;
		dests_release();
	}
	state.gc_proves_old = false;
}

/* Opens a GC; proving_old: a major GC this pause walks, which can prove
 * the old generation's dead. */
static void gc_open_as(int gen, bool proving_old)
{
	gc_close();
	ht_gc_started(state.trace.rec, state.gc_number++,
		      collected_generations(gen),
		      state.induced_pause ? HT_GC_INDUCED : HT_GC_OTHER);
	state.gc_proves_old = proving_old && flag(&state.nursery_known) &&
			      state.dests && dests_claim();
	state.gc_walked = false;
	state.n_dests = 0;
	state.dests_overflow = false;
	if (flag(&state.nursery_known))
		record_start_bounds(state.gc_proves_old);
	state.gc_open = true;
	state.gc_roots_seen = false;
	state.gc_major = gen >= state.max_gen;
	state.gc_started_here = false;
}

static void gc_open(int gen)
{
	gc_open_as(gen, false);
}

/* A collection starts: it counts for --every unless we forced it, and
 * one that is due but cannot be walked here asks for a forced one. */
static void gc_start(int gen)
{
	gc_open_as(gen, state.walk_pause && gen >= state.max_gen);
	state.gc_started_here = true;
	if (gen >= state.max_gen)
		state.major_running = true;
	if (state.induced_pause || !qualifies(gen))
		return;
	state.qualifying++;
	if (dump_due(&state.opt, state.qualifying) && !state.walk_pause &&
	    !flag(&state.stopping)) {
		set_flag(&state.requested, true);
		state.notify_after = true;
	}
}

/* The end of a collection begun in an earlier pause (a concurrent major)
 * is a GC of its own here. */
static void gc_end(int gen)
{
	if (!state.gc_open)
		gc_open(gen);
	if (gen >= state.max_gen) {
		state.major_running = false;
		/* a dump waits for it (on_finalized) */
		if (flag(&state.concurrent) && flag(&state.requested))
			state.notify_after = true;
		set_flag(&state.concurrent, false);
	}
}

static void pause_end(void)
{
	if (state.major_running)
		set_flag(&state.concurrent, true);
	if (state.walk_pause) {
		if (!state.gc_open)
			gc_open(state.max_gen);
		walk_heap();
		set_flag(&state.requested, false);
	}
	gc_close();
	if (state.tables_held)
		tables_release();
	state.tables_held = false;
	state.walk_pause = false;
	set_flag(&state.in_pause, false);
}

/* Between pauses: room for twice the most moves a walked GC has had. */
static void dests_make_room(void)
{
	size_t cap = state.cap_dests;
	ht_id *more;

	if (state.most_dests * 2 <= cap || !dests_claim())
		return;
	while (state.most_dests * 2 > cap)
		cap *= 2;
	more = realloc(state.dests, cap * sizeof(*more));
	if (more) {
		state.dests = more;
		state.cap_dests = cap;
	}
	dests_release();
}

/* The finalizer thread serves requests (on_finalized): waking it is all
 * that may be done from here, and only once the world runs again. */
static void after_pause(void)
{
	report_if_failed(state.trace.rec);
	field_tables_make_room();
	dests_make_room();
	if (state.notify_after && flag(&state.runtime_ready))
		mono_gc_finalize_notify();
	state.notify_after = false;
}

static void on_gc_phase(MonoProfiler *prof, MonoProfilerGCEvent ev,
			uint32_t gen, mono_bool serial)
{
	(void)prof;
	if (!enter())
		return;
	switch (ev) {
	case MONO_GC_EVENT_PRE_STOP_WORLD_LOCKED:
		pause_begin(gen, serial);
		break;
	case MONO_GC_EVENT_POST_STOP_WORLD:
		world_stopped();
		break;
	case MONO_GC_EVENT_START:
		gc_start((int)gen);
		break;
	case MONO_GC_EVENT_END:
		gc_end((int)gen);
		break;
	case MONO_GC_EVENT_PRE_START_WORLD:
		pause_end();
		break;
	case MONO_GC_EVENT_POST_START_WORLD_UNLOCKED:
		after_pause();
		break;
	default:
		break;
	}
	leave();
}

/* Runs on the finalizer thread each time it wakes: a thread the runtime
 * knows, outside any pause, where a collection may be forced. Not while a
 * concurrent major collection runs: the forced one would finish it first,
 * in the same pause, and Mono reports a pause's last moves only when it
 * ends, so the first collection's would be recorded in the second, which
 * may free what they carry. The end of the concurrent one wakes it
 * again (gc_end). */
static void on_finalized(MonoProfiler *prof)
{
	(void)prof;
	if (flag(&state.requested) &&
	    !flag(&state.concurrent) &&
	    !flag(&state.stopping) &&
	    !flag(&state.trace.guard.closed))
		mono_gc_collect(mono_gc_max_generation());
}

/* ---- signals: --dump-on signal, SIGTERM, SIGINT --------------------------- */

/*
 * SIGTERM and SIGINT end a Mono program at once, without the runtime's
 * shutdown and so without its exit dump. Left at their default action
 * when the module loads, they are caught here: the helper thread takes
 * the exit dump, closes the trace, and then lets the signal end the
 * program as it would have (status 128 + N). A program that handles them
 * itself (Mono.Unix.UnixSignal) replaces this, and ends as it chooses.
 */
static const int ending_signals[] = {SIGTERM, SIGINT};
#define N_ENDING ARRAY_SIZE(ending_signals)

static void on_dump_signal(int sig)
{
	int saved = errno;

	if (sig != DUMP_SIGNAL)
		atomic_store(&state.ending_signal, sig);
	sem_post(&state.signal_sem); /* async-signal-safe */
	errno = saved;
}

static void on_shutdown_begin(MonoProfiler *prof);
static void close_recorder(void);

/* The end the signal would have made, after the exit dump. Runs on the
 * helper thread, which every signal is blocked on: another thread takes
 * the signal, now with its default action. */
static void end_by_signal(int sig)
{
	if (flag(&state.runtime_ready) && !flag(&state.trace.guard.closed)) {
		/* the exit dump wants a thread the runtime knows */
		mono_thread_attach(mono_get_root_domain());
		on_shutdown_begin(NULL);
	}
	close_recorder();
	signal(sig, SIG_DFL);
	kill(getpid(), sig);
	for (;;)
		pause();
}

static void *signal_main(void *arg)
{
	(void)arg;
	for (;;) {
		int ending;

		while (sem_wait(&state.signal_sem) != 0 && errno == EINTR)
			;
		if (flag(&state.signal_quit))
			return NULL;
		ending = atomic_load(&state.ending_signal);
		if (ending)
			end_by_signal(ending);
		set_flag(&state.requested, true);
		if (flag(&state.runtime_ready))
			mono_gc_finalize_notify();
	}
}

static int catch_signal(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_dump_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	return sigaction(sig, &sa, NULL);
}

/* The helper thread, SIGUSR1 for --dump-on signal, and SIGTERM and SIGINT
 * where they still have their default action (an ignored one stays so). */
static int start_signal_helper(bool dump_signal)
{
	sigset_t all, old;
	int rc;

	if (sem_init(&state.signal_sem, 0, 0) != 0)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&state.signal_thread, NULL, signal_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	state.signal_thread_started = true;
	for (size_t i = 0; i < N_ENDING; i++) {
		struct sigaction now;

		if (sigaction(ending_signals[i], NULL, &now) == 0 &&
		    now.sa_handler == SIG_DFL)
			catch_signal(ending_signals[i]);
	}
	return dump_signal ? catch_signal(DUMP_SIGNAL) : 0;
}

/* The signals back to their default action where they are still ours
 * (SIGUSR1 ignored: one more would end the program). Called on the helper
 * thread itself by end_by_signal: it is not joined, it ends with the
 * process. */
static void stop_signal_helper(void)
{
	struct sigaction now;

	if (!state.signal_thread_started)
		return;
	for (size_t i = 0; i < N_ENDING; i++)
		if (sigaction(ending_signals[i], NULL, &now) == 0 &&
		    now.sa_handler == on_dump_signal)
			signal(ending_signals[i], SIG_DFL);
	if (sigaction(DUMP_SIGNAL, NULL, &now) == 0 &&
	    now.sa_handler == on_dump_signal)
		signal(DUMP_SIGNAL, SIG_IGN);
	set_flag(&state.signal_quit, true);
	sem_post(&state.signal_sem);
	if (!pthread_equal(pthread_self(), state.signal_thread))
		pthread_join(state.signal_thread, NULL);
	state.signal_thread_started = false;
}

/* ---- shutdown ------------------------------------------------------------ */

/* The exit dump: a collection forced here, on a thread of the runtime,
 * before it tears anything down. */
static void on_shutdown_begin(MonoProfiler *prof)
{
	(void)prof;
	if (flag(&state.trace.guard.closed))
		return;
	set_flag(&state.requested, true);
	mono_gc_collect(mono_gc_max_generation());
	set_flag(&state.stopping, true);
}

/* HEAPTRACE_VERBOSE: what the shim saw, waits for free buffers included
 * (a recording slower than its writer waits inside GC pauses). */
static void report_stats(void)
{
	struct ht_record_stats st;
	uint64_t roots, unmapped;

	if (!getenv("HEAPTRACE_VERBOSE"))
		return;
	ht_recorder_stats(state.trace.rec, &st);
	roots = atomic_load(&state.roots.dropped);
	unmapped = atomic_load(&state.classes_unmapped);
	say("%s: %llu event%s, %llu GC%s, %llu bytes (%llu before "
	    "compression), %llu wait%s for a buffer, %llu event%s dropped, "
	    "%llu root update%s dropped, %llu class%s without a field table, "
	    "%llu string%s with their text",
	    state.trace.output,
	    (unsigned long long)st.events, plural_s(st.events),
	    (unsigned long long)st.gcs, plural_s(st.gcs),
	    (unsigned long long)st.bytes_written,
	    (unsigned long long)st.bytes_uncompressed,
	    (unsigned long long)st.waits, plural_s(st.waits),
	    (unsigned long long)st.dropped_events, plural_s(st.dropped_events),
	    (unsigned long long)roots, plural_s(roots),
	    (unsigned long long)unmapped, unmapped == 1 ? "" : "es",
	    (unsigned long long)state.strings_valued,
	    plural_s(state.strings_valued));
}

/* Closes the trace once no callback is recording (waiting a little for
 * one that is); a callback that comes later records nothing. */
static void close_recorder(void)
{
	if (!guard_close(&state.trace.guard))
		return;
	stop_signal_helper();
	trace_finish(&state.trace, report_stats);
}

static void on_shutdown_end(MonoProfiler *prof)
{
	(void)prof;
	close_recorder();
}

/* For an exit that skips the runtime's shutdown: exit() from native code,
 * or Mono's own on an unhandled exception, which leaves the runtime whole
 * and its threads running. The exit dump comes first where the runtime can
 * still take one (outside a pause, before its shutdown began). */
static void at_exit(void)
{
	if (!state.trace.rec)
		return;
	if (flag(&state.runtime_ready) && !flag(&state.stopping) &&
	    !flag(&state.trace.guard.closed) && !flag(&state.in_pause)) {
		mono_thread_attach(mono_get_root_domain());
		on_shutdown_begin(NULL);
	}
	close_recorder();
}

/* ---- loading ------------------------------------------------------------- */

/* Mono looks for a profiler in its own installation directory before the
 * library path: say so when that is not the module `heaptrace record`
 * meant to load. */
static void check_module(const char *expected)
{
	char want[PATH_MAX], have[PATH_MAX];
	Dl_info info;

	if (!expected || !dladdr((void *)mono_profiler_init_heaptrace, &info) ||
	    !info.dli_fname || !realpath(expected, want) ||
	    !realpath(info.dli_fname, have) || strcmp(want, have) == 0)
		return;
	say("loaded %s rather than %s: Mono found that copy first", have,
	    want);
}

/* The shim's buffers are resident from the start: 8 MiB rather than its
 * default 32 keeps a small program small. A handful of threads record at
 * once here (the collecting one, and the allocating ones with alloc). */
static const struct ht_record_options record_options = {
	.buffer_size = 512 << 10,
	.buffers = 16,
	.compression_level = -1, /* 0 would be none */
	.times = true, /* GC starts and finishes, dumps: for pauses */
};

static bool open_mono_trace(void)
{
	char *version = mono_get_runtime_build_info();
	struct trace_metadata meta;
	struct ht_header h = {
		.runtime = "mono",
		.runtime_version = version,
		/* every survivor inside the bounds recorded at a GC's start
		 * (the nursery): moved, or pinned and reported as a root */
		.reports_survivors = true,
	};

	trace_metadata_of(&meta, "libmono-profiler-heaptrace " HT_VERSION,
			  &state.opt,
			  state.opt.values && little_endian() ? "strings"
							      : NULL);
	h.metadata = meta.m;
	h.n_metadata = meta.n;
	state.trace.rec = trace_open(state.trace.output, &h, &record_options);
	mono_free(version);
	return state.trace.rec != NULL;
}

static void install_callbacks(void)
{
	MonoProfilerHandle h = state.handle;

	mono_profiler_set_runtime_initialized_callback(h,
						       on_runtime_initialized);
	mono_profiler_set_runtime_shutdown_begin_callback(h, on_shutdown_begin);
	mono_profiler_set_runtime_shutdown_end_callback(h, on_shutdown_end);
	mono_profiler_set_class_loaded_callback(h, on_class_loaded);
	mono_profiler_set_thread_name_callback(h, on_thread_name);
	mono_profiler_set_gc_event_callback(h, on_gc_phase);
	mono_profiler_set_gc_moves_callback(h, on_moves);
	/* from the start: Mono notes the pinned objects it will report only
	 * while a roots callback is installed */
	mono_profiler_set_gc_roots_callback(h, on_gc_roots);
	mono_profiler_set_gc_root_register_callback(h, on_root_register);
	mono_profiler_set_gc_root_unregister_callback(h, on_root_unregister);
	mono_profiler_set_gc_finalized_callback(h, on_finalized);
	if (state.opt.allocations && mono_profiler_enable_allocations())
		mono_profiler_set_gc_allocation_callback(h, on_allocation);
}

static const char *args_of(const char *desc)
{
	const char *colon = desc ? strchr(desc, ':') : NULL;

	return colon ? colon + 1 : "";
}

/* The trace's path: output= in the arguments, else HEAPTRACE_OUTPUT
 * (which `heaptrace record` sets), else the default. */
static char *output_path(const char *env_output)
{
	if (state.opt.output)
		return strdup(state.opt.output);
	return strdup(env_output ? env_output : REC_DEFAULT_OUTPUT);
}

void mono_profiler_init_heaptrace(const char *desc)
{
	char err[256], *env_output = getenv("HEAPTRACE_OUTPUT");

	say_as("mono", NULL);
	/* read before the environment is put back, which unsets them */
	check_module(getenv("HEAPTRACE_MODULE"));
	report_channel_open(getenv("HEAPTRACE_REPORT_FD"));
	env_output = env_output ? strdup(env_output) : NULL;
	restore_environment(put_process_env);
	if (rec_parse_options(args_of(desc), &state.opt, err,
			       sizeof(err)) < 0) {
		say("%s; not recording", err);
		free(env_output);
		return;
	}
	state.trace.output = output_path(env_output);
	free(env_output);
	if (!state.trace.output || rootmap_init(&state.roots, 512) < 0 ||
	    idset_init(&state.classes, 8192) < 0 ||
	    field_tables_alloc(&state.ft, FIRST_FIELD_CLASSES,
			       FIRST_FIELD_SLOTS) < 0 ||
	    pthread_mutex_init(&state.early_lock, NULL) != 0) {
		say("out of memory; not recording");
		return;
	}
	state.cap_dests = FIRST_DESTINATIONS;
	state.dests = malloc(state.cap_dests * sizeof(*state.dests));
	if (!state.dests)
		state.cap_dests = 0; /* no walked GC proves the old's dead */
	state.max_gen = mono_gc_max_generation();
	if (state.max_gen < 0)
		state.max_gen = 1;
	if (!open_mono_trace())
		return;
	if (start_signal_helper(state.opt.dump_on == DUMP_ON_SIGNAL) < 0)
		say("cannot catch SIGUSR1 for dump=signal, SIGTERM and SIGINT: "
		    "no dump when they come");
	state.handle = mono_profiler_create(&state.prof);
	install_callbacks();
	atexit(at_exit);
}
