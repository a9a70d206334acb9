/*
 * sites.c - allocation sites in the Mono profiler (sites, sites=BYTES,
 * sites=all): which allocations carry their stack, and the stack itself.
 *
 * Mono has no sampler of its own for allocations, so the recorder keeps
 * one per thread: the bytes left to the next sample, drawn from an
 * exponential distribution of mean INTERVAL and decremented by each
 * object's size; the object that uses them up is sampled and a new draw
 * begins after it. Sampled points then form a Poisson process over the
 * thread's allocated bytes, which is memoryless: whatever came before, an
 * object of s bytes holds a point with probability 1 - exp(-s/INTERVAL),
 * independently of every other object, as the analysis weights it.
 *
 * The stack of a sampled allocation is walked on the allocating thread
 * (mono_stack_walk_no_il, as Mono's log profiler walks its allocation
 * backtraces), the innermost SITES_FRAMES managed frames. Each frame is a
 * place, a method and the line Mono's debug information gives for its
 * native offset (the JIT keeps line tables only once mono_debug_init ran,
 * which sites_start does), declared once with ht_method_at; the list of
 * places is a stack, declared once with ht_stack. Both are interned in
 * tables behind one mutex: the allocation callback runs on every
 * allocating thread, outside GC pauses, where Mono's own log profiler
 * takes locks and allocates too. A new place or stack is handed to the
 * writer before the tables show it to another thread, so that no thread's
 * allocation names a stack the file has not declared yet.
 */
#include "recorders/mono/mono.h"
#include "util/alloc.h"

#include <mono/metadata/appdomain.h>
#include <mono/metadata/loader.h>
#include <mono/metadata/mono-debug.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The innermost frames kept of a stack (the format allows more; the
 * innermost are the ones that tell a site). */
#define SITES_FRAMES 64
/* The mean sampling interval when sites= gives none: the JVM's default
 * for JVMTI's sampled allocations. */
#define SITES_DEFAULT_INTERVAL (512u * 1024u)
#define METHOD_NAME_MAX 1024

/* ---- the sampler ---------------------------------------------------------- */

/* Each thread's sampler. */
struct sampler {
	bool started;
	bool walking;  /* in a stack walk: an allocation it causes is not sampled */
	double left;   /* bytes to the next sample */
	uint64_t rng;  /* splitmix64 state */
};

static __thread struct sampler sampler;
static double interval;       /* bytes; 0: every allocation */
static _Atomic uint64_t seeds;

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* An exponential draw of mean interval: -interval * log(u), u uniform in
 * (0, 1] with 53 bits. */
static double next_gap(struct sampler *t)
{
	double u = (double)((splitmix64(&t->rng) >> 11) + 1) * 0x1p-53;

	return -interval * log(u);
}

static void sampler_start(struct sampler *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t->rng = (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 32) ^
		 (uint64_t)(uintptr_t)t ^
		 (atomic_fetch_add(&seeds, 1) * 0x2545f4914f6cdd1dull);
	t->left = next_gap(t);
	t->started = true;
}

/* Whether an object of size bytes is sampled. */
static bool sampled(struct sampler *t, uint64_t size)
{
	if (interval == 0)
		return true;
	if (!t->started)
		sampler_start(t);
	if ((double)size < t->left) {
		t->left -= (double)size;
		return false;
	}
	/* memoryless: the gap after this object is a fresh draw */
	t->left = next_gap(t);
	return true;
}

/* ---- the tables of places and stacks ------------------------------------- */

/* A frame as the walk gives it, and the place it became. */
struct frame_key {
	uintptr_t method;
	uint32_t offset;  /* native offset, or the line in the lines table */
	ht_id place;      /* 0: a free entry */
};

struct frame_table {
	struct frame_key *e;
	size_t mask, used;
};

/* A stack: its places in the pool, and its id. */
struct stack_entry {
	uint64_t hash;
	uint32_t first, n;
	ht_id id;         /* 0: a free entry */
};

static struct {
	pthread_mutex_t lock;
	struct frame_table offsets;  /* (method, native offset) -> place */
	struct frame_table lines;    /* (method, line) -> place */
	struct stack_entry *stacks;
	size_t stacks_mask, stacks_used;
	ht_id *pool;
	size_t pool_used, pool_cap;
	ht_id last_place, last_stack;
	ht_id no_frame;              /* the place of a stack with no managed frame */
	bool declared;               /* something new for the writer */
	uint64_t walks, unresolved;
} tables = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static int frame_table_init(struct frame_table *t, size_t n)
{
	t->e = calloc(n, sizeof(*t->e));
	t->mask = n - 1;
	t->used = 0;
	return t->e ? 0 : -1;
}

static struct frame_key *frame_slot(struct frame_table *t, uintptr_t method,
				    uint32_t offset)
{
	size_t i = mix(method, offset) & t->mask;

	while (t->e[i].place &&
	       (t->e[i].method != method || t->e[i].offset != offset))
		i = (i + 1) & t->mask;
	return &t->e[i];
}

/* Doubles the table when it is half full; false when out of memory. */
static bool frame_room(struct frame_table *t)
{
	struct frame_table bigger;

	if (2 * (t->used + 1) <= t->mask + 1)
		return true;
	if (frame_table_init(&bigger, 2 * (t->mask + 1)) < 0)
		return false;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->e[i].place)
			*frame_slot(&bigger, t->e[i].method, t->e[i].offset) =
				t->e[i];
	bigger.used = t->used;
	free(t->e);
	*t = bigger;
	return true;
}

static void frame_put(struct frame_table *t, uintptr_t method,
		      uint32_t offset, ht_id place)
{
	struct frame_key *k;

	if (!frame_room(t))
		return; /* looked up again next time */
	k = frame_slot(t, method, offset);
	if (!k->place)
		t->used++;
	*k = (struct frame_key){method, offset, place};
}

/* Namespace.Class.Method, as classes are named in a pause (names.c). */
static void method_name(MonoMethod *m, char *buf, size_t len)
{
	size_t at;

	plain_class_name(mono_method_get_class(m), buf, len);
	at = strlen(buf);
	snprintf(buf + at, len - at, ".%s", mono_method_get_name(m));
}

static ht_id new_place(const char *name, const char *file, uint32_t line)
{
	ht_id id = ++tables.last_place;

	ht_method_at(state.trace.rec, id, name, file, line);
	tables.declared = true;
	return id;
}

/* The place of a frame: its method and line, declared when first met. */
static ht_id place_of(MonoMethod *m, int32_t native_offset)
{
	uintptr_t key = (uintptr_t)m;
	uint32_t off = (uint32_t)native_offset;
	struct frame_key *k = frame_slot(&tables.offsets, key, off);
	MonoDebugSourceLocation *loc;
	char name[METHOD_NAME_MAX];
	uint32_t line = 0;
	ht_id place;

	if (k->place)
		return k->place;
	loc = native_offset >= 0 && mono_debug_enabled()
		      ? mono_debug_lookup_source_location(m, off,
							  mono_domain_get())
		      : NULL;
	if (loc)
		line = loc->row;
	else
		tables.unresolved++;
	place = frame_slot(&tables.lines, key, line)->place;
	if (!place) {
		method_name(m, name, sizeof(name));
		place = new_place(name, loc ? loc->source_file : NULL, line);
		frame_put(&tables.lines, key, line, place);
	}
	if (loc)
		mono_debug_free_source_location(loc);
	frame_put(&tables.offsets, key, off, place);
	return place;
}

static uint64_t stack_hash(const ht_id *places, size_t n)
{
	uint64_t h = n;

	for (size_t i = 0; i < n; i++)
		h = mix(h, places[i]);
	return h;
}

/* The entry of the stack of these places, or the free one where it
 * goes. */
static struct stack_entry *stack_slot(struct stack_entry *t, size_t mask,
				      uint64_t hash, const ht_id *places,
				      size_t n)
{
	size_t i = hash & mask;

	while (t[i].id &&
	       (t[i].hash != hash || t[i].n != n ||
		memcmp(tables.pool + t[i].first, places,
		       n * sizeof(*places)) != 0))
		i = (i + 1) & mask;
	return &t[i];
}

/* The free entry where a stack of this hash goes, in a table being
 * filled with stacks that are all different. */
static struct stack_entry *free_stack_slot(struct stack_entry *t,
					   size_t mask, uint64_t hash)
{
	size_t i = hash & mask;

	while (t[i].id)
		i = (i + 1) & mask;
	return &t[i];
}

static bool stacks_room(void)
{
	size_t cap = tables.stacks_mask + 1;
	struct stack_entry *bigger;

	if (tables.stacks && 2 * (tables.stacks_used + 1) <= cap)
		return true;
	cap = tables.stacks ? 2 * cap : 1024;
	bigger = calloc(cap, sizeof(*bigger));
	if (!bigger)
		return false;
	for (size_t i = 0; tables.stacks && i <= tables.stacks_mask; i++) {
		struct stack_entry *e = &tables.stacks[i];

		if (e->id)
			*free_stack_slot(bigger, cap - 1, e->hash) = *e;
	}
	free(tables.stacks);
	tables.stacks = bigger;
	tables.stacks_mask = cap - 1;
	return true;
}

/* The id of the stack of these places, declared when first met; 0 when
 * out of memory. */
static ht_id stack_of(const ht_id *places, size_t n)
{
	uint64_t hash = stack_hash(places, n);
	struct stack_entry *e;

	if (!stacks_room() ||
	    ALLOC_GROW(tables.pool, tables.pool_used + n, tables.pool_cap) < 0)
		return 0;
	e = stack_slot(tables.stacks, tables.stacks_mask, hash, places, n);
	if (e->id)
		return e->id;
	memcpy(tables.pool + tables.pool_used, places, n * sizeof(*places));
	*e = (struct stack_entry){hash, (uint32_t)tables.pool_used,
				  (uint32_t)n, ++tables.last_stack};
	tables.pool_used += n;
	tables.stacks_used++;
	ht_stack(state.trace.rec, e->id, n, places);
	tables.declared = true;
	return e->id;
}

/* ---- the walk ------------------------------------------------------------ */

struct walked {
	size_t n;
	MonoMethod *method[SITES_FRAMES];
	int32_t offset[SITES_FRAMES];
};

/* The managed frames, innermost first; wrappers (the runtime's own
 * glue) have no line and are kept, as Mono's log profiler keeps them. */
static mono_bool on_frame(MonoMethod *method, int32_t native_offset,
			  int32_t il_offset, mono_bool managed, void *data)
{
	struct walked *w = data;

	(void)il_offset;
	if (!method || !managed)
		return 0;
	w->method[w->n] = method;
	w->offset[w->n] = native_offset;
	return ++w->n == SITES_FRAMES;
}

/* The stack of the allocation in progress on this thread. */
static ht_id current_stack(void)
{
	struct walked w = {.n = 0};
	ht_id places[SITES_FRAMES], id;

	sampler.walking = true;
	mono_stack_walk_no_il(on_frame, &w);
	sampler.walking = false;
	pthread_mutex_lock(&tables.lock);
	tables.walks++;
	if (w.n == 0) {
		/* a thread of the runtime's own, or its start */
		if (!tables.no_frame)
			tables.no_frame = new_place("(no managed frame)", NULL, 0);
		places[0] = tables.no_frame;
		w.n = 1;
	} else {
		for (size_t i = 0; i < w.n; i++)
			places[i] = place_of(w.method[i], w.offset[i]);
	}
	id = stack_of(places, w.n);
	if (tables.declared) {
		ht_recorder_hand_off(state.trace.rec);
		tables.declared = false;
	}
	pthread_mutex_unlock(&tables.lock);
	return id;
}

/* ---- what the rest of the recorder calls --------------------------------- */

ht_id sites_stack_of(uint64_t size)
{
	if (!state.opt.sites || sampler.walking || !sampled(&sampler, size))
		return 0;
	/* a stack is walked only where the runtime can walk it: never in a
	 * pause (no allocation is seen there) nor before it is initialized;
	 * the sampled object then carries the stack of no managed frame */
	if (flag(&state.in_pause))
		return 0;
	if (!flag(&state.runtime_ready)) {
		ht_id id;

		pthread_mutex_lock(&tables.lock);
		if (!tables.no_frame)
			tables.no_frame = new_place("(no managed frame)", NULL, 0);
		id = stack_of(&tables.no_frame, 1);
		if (tables.declared) {
			ht_recorder_hand_off(state.trace.rec);
			tables.declared = false;
		}
		pthread_mutex_unlock(&tables.lock);
		return id;
	}
	return current_stack();
}

const char *sites_metadata(char *buf, size_t len)
{
	if (!state.opt.sites)
		return NULL;
	if (interval == 0)
		return "all";
	snprintf(buf, len, "%llu", (unsigned long long)interval);
	return buf;
}

int sites_start(void)
{
	if (!state.opt.sites)
		return 0;
	interval = state.opt.sites_interval == REC_SITES_DEFAULT
			   ? SITES_DEFAULT_INTERVAL
			   : (double)state.opt.sites_interval;
	/* the JIT keeps the native offsets' lines only with debugging on
	 * (mono --debug does the same) */
	if (!mono_debug_enabled())
		mono_debug_init(MONO_DEBUG_FORMAT_MONO);
	if (frame_table_init(&tables.offsets, 4096) < 0 ||
	    frame_table_init(&tables.lines, 4096) < 0)
		return -1;
	return 0;
}

void sites_stats(uint64_t *walks, uint64_t *stacks, uint64_t *unresolved)
{
	pthread_mutex_lock(&tables.lock);
	*walks = tables.walks;
	*stacks = tables.last_stack;
	*unresolved = tables.unresolved;
	pthread_mutex_unlock(&tables.lock);
}
